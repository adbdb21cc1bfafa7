"""tensorplay.hub and tensorplay.utils.model_zoo against torch.hub: the cache directory, hubconf.py
entry points from a directory and from a cached GitHub checkout, the trust prompt, and checkpoints
from file:// URLs, with PyTorch's errors. Nothing here needs a network."""

import hashlib
import os
import zipfile

import pytest
import torch

import tensorplay
from call_outcomes import outcome
from tensorplay.utils import model_zoo

HUBCONF = '''
dependencies = ["os"]
helper_value = 3


def add(a, b=1):
    """Adds b to a."""
    return a + b


def _private():
    return None
'''


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """Both libraries' hub directory set to one empty temporary directory."""
    directory = tmp_path / "hub"
    for hub in (torch.hub, tensorplay.hub):
        monkeypatch.setattr(hub, "_hub_dir", str(directory))
    return directory


@pytest.fixture
def repo(tmp_path):
    directory = tmp_path / "repo"
    directory.mkdir()
    (directory / "hubconf.py").write_text(HUBCONF)
    return directory


@pytest.mark.parametrize("env", [{}, {"TORCH_HOME": "/opt/th"}, {"XDG_CACHE_HOME": "/xdg"},
                                 {"TORCH_HOME": "~/th", "XDG_CACHE_HOME": "/xdg"}, {"TORCH_HUB": "/old"}])
def test_default_dir(env, monkeypatch):
    for name in ("TORCH_HOME", "XDG_CACHE_HOME", "TORCH_HUB"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for hub in (torch.hub, tensorplay.hub):
        monkeypatch.setattr(hub, "_hub_dir", None)
    assert outcome(tensorplay, "T.hub.get_dir()") == outcome(torch, "T.hub.get_dir()")


def test_set_dir(monkeypatch):
    monkeypatch.setattr(tensorplay.hub, "_hub_dir", None)
    tensorplay.hub.set_dir("~/models")
    assert tensorplay.hub.get_dir() == os.path.expanduser("~/models")


@pytest.mark.parametrize("expression", [
    "T.hub.load(repo, 'add', 2, source='local', b=3)",
    "T.hub.load(repo, 'add', 2, source='LOCAL')",
    "T.hub.load(repo, 'nope', source='local')",
    "T.hub.load(repo, 'helper_value', source='local')",
    "T.hub.load(repo, 3, source='local')",
    "T.hub.load(repo, 'add', source='gitlab')",
    "T.hub.load(repo, 'add', source='local')",
    "T.hub.list('owner/cached:main')",
    "T.hub.help('owner/cached:main', 'add')",
    "T.hub.load('owner/cached:main', 'add', 5)",
    "T.hub.load('owner/cached', 'add', 5, verbose=False)",
    "T.hub.list('pytorch/absent:main')",
    "T.hub.list('pytorch/absent')",
])
def test_hubconf_entry_points(expression, repo, hub_dir, capfd):
    """A cached checkout (trusted, as one downloaded before) serves list, help and load."""
    (hub_dir / "owner_cached_main").mkdir(parents=True)
    (hub_dir / "owner_cached_main" / "hubconf.py").write_text(HUBCONF)
    names = {"repo": str(repo)}
    theirs = outcome(torch, expression, names)
    their_output = capfd.readouterr()
    assert outcome(tensorplay, expression, names) == theirs
    assert capfd.readouterr() == their_output


def test_missing_dependencies(repo):
    (repo / "hubconf.py").write_text('dependencies = ["no_such_package_x", "os"]\ndef add(a):\n    return a\n')
    for root in (torch, tensorplay):
        with pytest.raises(RuntimeError, match="^Missing dependencies: no_such_package_x$"):
            root.hub.load(str(repo), "add", 1, source="local")


@pytest.mark.parametrize("answer, trust", [("n", "check"), ("", False), ("maybe", "check"), ("y", False)])
def test_untrusted_repo_asks(answer, trust, hub_dir, monkeypatch):
    """An untrusted repo (not cached, owner not PyTorch's) is asked about; "y" trusts it, recorded in
    trusted_list, before the download, which fails without a network."""
    monkeypatch.setattr("builtins.input", lambda prompt: answer)
    expression = f"T.hub.load('stranger/repo:main', 'add', trust_repo={trust!r})"
    theirs = outcome(torch, expression)
    trusted = (hub_dir / "trusted_list").read_text()
    (hub_dir / "trusted_list").unlink()
    assert outcome(tensorplay, expression) == theirs
    assert (hub_dir / "trusted_list").read_text() == trusted


def checkpoint(tmp_path, root, name="net"):
    """A checkpoint saved by `root` as name-<sha256 prefix>.pt, and its file:// URL."""
    path = tmp_path / "served" / f"{name}.pt"
    path.parent.mkdir(exist_ok=True)
    root.save({"w": root.arange(3.0)}, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    hashed = path.with_name(f"{name}-{digest[:8]}.pt")
    path.rename(hashed)
    return hashed, hashed.as_uri()


@pytest.mark.parametrize("saved_by", [torch, tensorplay], ids=["torch_file", "tensorplay_file"])
def test_load_state_dict_from_url(saved_by, tmp_path, hub_dir, capfd):
    path, url = checkpoint(tmp_path, saved_by)
    state = tensorplay.hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    assert tensorplay.equal(state["w"], tensorplay.arange(3.0))
    cached = hub_dir / "checkpoints" / path.name
    assert cached.read_bytes() == path.read_bytes()
    assert capfd.readouterr().out == f'Downloading: "{url}" to {cached}\n'
    path.unlink()  # from now on only the cache has it
    assert tensorplay.equal(model_zoo.load_url(url)["w"], tensorplay.arange(3.0))
    assert capfd.readouterr().out == ""


def test_load_state_dict_from_url_options(tmp_path, hub_dir):
    path, url = checkpoint(tmp_path, tensorplay)
    state = tensorplay.hub.load_state_dict_from_url(url, model_dir=tmp_path / "mine", file_name="renamed.pt",
                                                    progress=False, map_location="cpu")
    assert (tmp_path / "mine" / "renamed.pt").exists() and state["w"].device.type == "cpu"
    assert not (hub_dir / "checkpoints").exists()


@pytest.mark.parametrize("expression", [
    "T.hub.load_state_dict_from_url(bad_url, model_dir=cache + '/' + T.__name__, check_hash=True, progress=False)",
    "T.hub.load_state_dict_from_url(missing_url, model_dir=cache + '/' + T.__name__, progress=False)",
    "T.hub.download_url_to_file(bad_url, cache + '/' + T.__name__ + '.pt', hash_prefix='deadbeef', progress=False)",
])
def test_download_errors(expression, tmp_path, capfd):
    """A wrong hash or a missing file raises as in PyTorch, leaving no partial file behind."""
    path, _ = checkpoint(tmp_path, tensorplay)
    bad = path.with_name("net-deadbeef.pt")
    path.rename(bad)
    names = {"bad_url": bad.as_uri(), "missing_url": (tmp_path / "nothing.pt").as_uri(), "cache": str(tmp_path / "c")}
    (tmp_path / "c").mkdir()
    theirs = outcome(torch, expression, names)
    assert theirs[0][0] == "raises"
    assert outcome(tensorplay, expression, names) == theirs
    capfd.readouterr()
    assert not [f for f in os.listdir(tmp_path / "c") if f.endswith(".partial") or f.endswith(".pt")]


def test_legacy_zip_checkpoint(tmp_path):
    """A zip holding one checkpoint (PyTorch's format before 1.6) is extracted and loaded, with
    PyTorch's FutureWarning."""
    legacy = tmp_path / "w.pt"
    torch.save({"a": torch.arange(3)}, legacy, _use_new_zipfile_serialization=False)
    archive = tmp_path / "served" / "legacy.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(legacy, "w.pt")
    for root in (torch, tensorplay):
        with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
            state = root.hub.load_state_dict_from_url(archive.as_uri(), model_dir=tmp_path / root.__name__,
                                                      progress=False, weights_only=True)
        assert state["a"].tolist() == [0, 1, 2]

"""tensorplay.hub, as torch.hub: models published as a ``hubconf.py`` in a directory or a GitHub repo,
and checkpoints downloaded once into a cache.

The cache is PyTorch's (``$TORCH_HOME/hub``, by default ``~/.cache/torch/hub``), so repos and
checkpoints that torch.hub already downloaded are found without a network; tensorplay.load reads
PyTorch's checkpoint files. Downloads go through urllib, which also takes ``file://`` URLs.

>>> model = tensorplay.hub.load("path/to/repo", "resnet", source="local", pretrained=False)  # doctest: +SKIP
>>> state = tensorplay.hub.load_state_dict_from_url("file:///models/net-1a2b3c4d.pt", check_hash=True)  # doctest: +SKIP

Unlike torch.hub, without a ref a cached ``main`` or ``master`` checkout is used before asking GitHub
which of the two exists.
"""

import contextlib
import os
import re
import shutil
import sys
import warnings

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_READ_CHUNK = 128 * 1024
_hub_dir = None


# ---- The cache ----

def get_dir():
    """The directory repos and checkpoints are cached in: the one given to set_dir, else
    ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``, and that to
    ``~/.cache/torch``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch"))
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    """Makes `d` the cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- Downloads ----

def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads `url` (http(s)://, ftp:// or file://) to the file `dst`, through a temporary file
    beside it, so that `dst` is never left half-written. With `hash_prefix`, the SHA-256 of the
    contents must start with it."""
    import hashlib
    import tempfile
    import uuid
    from urllib.request import Request, urlopen

    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        partial = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(partial, "x+b")  # noqa: SIM115  (closed in finally)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(f"No usable temporary file name found for {dst}")
    try:
        with urlopen(Request(url, headers={"User-Agent": "tensorplay.hub"})) as response:
            sizes = response.info().get_all("Content-Length")
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar(int(sizes[0]) if sizes else None, progress) as update:
                while buffer := response.read(_READ_CHUNK):
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    update(len(buffer))
        f.close()
        if sha256 is not None and not sha256.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{sha256.hexdigest()}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


@contextlib.contextmanager
def _progress_bar(total, enabled):
    """A callable that advances a tqdm bar on stderr by n bytes (a no-op if disabled or without tqdm)."""
    try:
        from tqdm import tqdm
    except ImportError:
        enabled = False
    if not enabled:
        yield lambda n: None
        return
    with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024) as bar:
        yield bar.update


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """The object saved at `url`, downloaded once into `model_dir` (default: ``<get_dir()>/checkpoints``)
    and loaded with tensorplay.load; a file already there is loaded without a download. With
    `check_hash`, the file name must be ``name-<sha256 prefix>.ext`` and the contents must match."""
    from urllib.parse import urlparse

    from tensorplay.serialization import load as load_file

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    if _is_legacy_zip(cached_file):
        cached_file = _extract_legacy_zip(cached_file, model_dir)
    return load_file(cached_file, map_location=map_location, weights_only=weights_only)


def _is_legacy_zip(filename):
    """A zip holding one file: how checkpoints were published before PyTorch 1.6 (a zip with a
    directory is the current checkpoint format itself)."""
    import zipfile

    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _extract_legacy_zip(filename, model_dir):
    import zipfile

    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default zipfile "
                  "format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as zf:
        _safe_extract(zf, model_dir)
        return os.path.join(model_dir, zf.infolist()[0].filename)


def _safe_extract(zf, directory):
    """Extracts the zip into `directory`, refusing members that would land outside it."""
    root = os.path.realpath(directory)
    for member in zf.infolist():
        target = os.path.realpath(os.path.join(root, member.filename))
        if os.path.commonpath([root, target]) != root:
            raise ValueError(f"The zip file contains {member.filename}, which would be extracted outside {directory}")
    zf.extractall(directory)


# ---- Repos with a hubconf.py ----

def _parse_repo(github):
    repo, _, ref = github.partition(":")
    owner, name = repo.split("/")
    if ref:
        return owner, name, ref
    for cached in ("main", "master"):
        if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{cached}")):
            return owner, name, cached
    from urllib.error import HTTPError, URLError
    from urllib.request import urlopen

    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as error:
        if error.code == 404:
            return owner, name, "master"
        raise
    except URLError as error:
        raise RuntimeError("It looks like there is no internet connection and the repo could not be found in the "
                           f"cache ({get_dir()})") from error


def _check_trusted(owner, name, owner_name_ref, trust_repo):
    """Asks before running code from a repo that is not trusted yet: one in the trusted_list file of
    the cache, one cached before that list existed, or one of PyTorch's own organisations."""
    hub_dir = get_dir()
    trusted_list = os.path.join(hub_dir, "trusted_list")
    open(trusted_list, "a").close()
    with open(trusted_list) as f:
        trusted = {line.strip() for line in f}
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner_name_ref in next(os.walk(hub_dir))[1]
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         "list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002  (PyTorch's exception)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(trusted_list, "a") as f:
            f.write(owner_name + "\n")


def _check_not_a_fork(owner, name, ref):
    """Refuses a ref that is none of the repo's branches or tags, nor a prefix of their commits: it
    may be a commit of a fork, whose code GitHub would serve under this repo's name. Asks GitHub's
    API (with $GITHUB_TOKEN, if set)."""
    import json
    from urllib.error import HTTPError
    from urllib.request import Request, urlopen

    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get("GITHUB_TOKEN") is not None:
        headers["Authorization"] = f"token {os.environ['GITHUB_TOKEN']}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                with urlopen(Request(url, headers=headers)) as response:
                    entries = json.loads(response.read().decode(response.headers.get_content_charset("utf-8")))
            except HTTPError:  # the token may lack permissions: once more without it
                headers.pop("Authorization", None)
                with urlopen(Request(url, headers=headers)) as response:
                    entries = json.loads(response.read().decode(response.headers.get_content_charset("utf-8")))
            if not entries:
                break
            if any(e["name"] == ref or e["commit"]["sha"].startswith(ref) for e in entries):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit from a forked repo, "
                     "please call hub.load() with forked repo directly.")


def _repo_dir(github, force_reload, trust_repo, verbose, skip_validation=False):
    """The cached checkout of ``owner/name[:ref]``, downloaded from GitHub unless it is cached."""
    import zipfile

    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo(github)
    owner_name_ref = "_".join([owner, name, ref.replace("/", "_")])
    repo_dir = os.path.join(hub_dir, owner_name_ref)
    _check_trusted(owner, name, owner_name_ref, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _check_not_a_fork(owner, name, ref)
    archive = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    if os.path.exists(archive):
        os.remove(archive)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {archive}\n')
    download_url_to_file(url, archive, progress=False)
    with zipfile.ZipFile(archive) as zf:
        extracted = os.path.join(hub_dir, zf.infolist()[0].filename)
        shutil.rmtree(extracted, ignore_errors=True)
        _safe_extract(zf, hub_dir)
    os.remove(archive)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _import_hubconf(repo_dir):
    """The repo's hubconf.py as a module, imported with the repo on sys.path (for its own imports)."""
    import importlib.util

    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(repo_dir)


def _entrypoint(hubconf, model):
    import importlib.util

    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [pkg for pkg in getattr(hubconf, VAR_DEPENDENCY, None) or () if importlib.util.find_spec(pkg) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    entry = getattr(hubconf, model, None) if model in dir(hubconf) else None
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entry points (public callables of hubconf.py) of the GitHub repo ``owner/name[:ref]``."""
    hubconf = _import_hubconf(_repo_dir(github, force_reload, trust_repo, verbose, skip_validation))
    return [f for f in dir(hubconf) if callable(getattr(hubconf, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of entry point `model` of the GitHub repo ``owner/name[:ref]``."""
    return _entrypoint(_import_hubconf(_repo_dir(github, force_reload, trust_repo, True, skip_validation)),
                       model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Calls entry point `model` of a hubconf.py with `args` and `kwargs` and returns its result:
    from the directory `repo_or_dir` (source="local") or the GitHub repo ``owner/name[:ref]``
    (source="github", cached after the first download)."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _repo_dir(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)
    sys.path.insert(0, repo_or_dir)
    try:
        return _entrypoint(_import_hubconf(repo_or_dir), model)(*args, **kwargs)
    finally:
        sys.path.remove(repo_or_dir)

"""python -m tensorplay.run and tensorplay.compat: a PyTorch program runs on tensorplay unedited.

The program in torch_program/ (several files, a local package that imports torch itself, both
spellings of torch.nn.functional, torch.utils.data, DataLoader workers) must print through
tensorplay.run exactly what it prints with its imports edited to `import tensorplay as torch`.
Scripts that do not import torch must behave under tensorplay.run exactly as under python (output,
traceback, exit status, sys.argv, sys.path, __main__). Small programs written into tmp_path check lazy
placeholders and where they were touched, the error without --lazy, and the verbose table. In-process
tests check identity, the version, and that disable() leaves the process as it found it."""

import importlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import types

import pytest
import torch as pytorch  # imported first, so that enable() has PyTorch's modules to file away and put back

import tensorplay
import tensorplay.compat
from tensorplay.torch_version import TorchVersion

PROGRAM = pathlib.Path(__file__).resolve().parent / "torch_program"
TENSORPLAY_VERSION = tensorplay.version.__version__


def run(args, cwd, launcher=("-m", "tensorplay.run")):
    """Runs `python [launcher] args` in `cwd` with the tensorplay these tests import."""
    path = os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(tensorplay.__file__)),
                                         os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, *launcher, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def write(directory, files):
    for name, source in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip())
    return directory


def line_of(path, text):
    """The number of the first line of `path` that contains `text`."""
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def table_rows(stderr):
    """The verbose table's rows: torch name -> (provided by, first used at)."""
    rows = re.findall(r"^  (torch\S*) +(tensorplay|placeholder|missing) +(\S+)$", stderr, flags=re.M)
    return {name: (provider, where) for name, provider, where in rows}


def edited_to_tensorplay(source):
    """The edit users make today: every torch import spelled as tensorplay's."""
    source = re.sub(r"^import torch$", "import tensorplay as torch", source, flags=re.M)
    source = re.sub(r"^(from|import) torch\b", r"\1 tensorplay", source, flags=re.M)
    return source.replace('import_module("torch.', 'import_module("tensorplay.')


# ---------------------------------------------------------------------------------------------------
# The multi-file program

@pytest.fixture(scope="module")
def unedited_run(tmp_path_factory):
    directory = shutil.copytree(PROGRAM, tmp_path_factory.mktemp("unedited") / "program")
    return directory, run(["--verbose", "train.py", "--epochs", "2", "--workers", "2"], cwd=directory)


def test_program_prints_what_it_prints_with_import_tensorplay_as_torch(unedited_run, tmp_path):
    unedited_dir, unedited = unedited_run
    edited_dir = shutil.copytree(PROGRAM, tmp_path / "program")
    for path in edited_dir.rglob("*.py"):
        path.write_text(edited_to_tensorplay(path.read_text()))
        assert not re.search(r"^(from|import) torch\b|\"torch\.", path.read_text(), flags=re.M), path
    edited = run(["train.py", "--epochs", "2", "--workers", "2"], cwd=edited_dir, launcher=())

    assert edited.returncode == 0, edited.stderr
    assert unedited.returncode == 0, unedited.stderr
    assert unedited.stdout == edited.stdout
    printed = json.loads(unedited.stdout)
    assert printed["argv"] == ["train.py", "--epochs", "2", "--workers", "2"] and printed["name"] == "__main__"
    assert printed["types"] == [True, True, True, True]
    assert printed["cuda"] == [False, None, True]
    assert printed["accuracy"] > 0.9 and len(printed["losses"]) == 12


def test_verbose_lists_the_names_the_program_used_where_it_first_used_them(unedited_run):
    directory, result = unedited_run
    rows = table_rows(result.stderr)
    train, model, blobs = directory / "train.py", directory / "model.py", directory / "toydata" / "blobs.py"
    expected = {
        "torch": ("tensorplay", f"train.py:{line_of(train, 'import torch')}"),
        "torch.nn.functional": ("tensorplay", f"train.py:{line_of(train, 'import torch.nn.functional as F')}"),
        "torch.nn.functional.cross_entropy": ("tensorplay", f"train.py:{line_of(train, 'F.cross_entropy')}"),
        "torch.nn.functional.gelu": ("tensorplay", f"model.py:{line_of(model, 'F.gelu')}"),
        "torch.nn.Module": ("tensorplay", f"model.py:{line_of(model, 'nn.Module')}"),
        "torch.optim": ("tensorplay", f"train.py:{line_of(train, 'import_module')}"),
        "torch.optim.lr_scheduler.StepLR": ("tensorplay", f"train.py:{line_of(train, 'StepLR')}"),
        "torch.backends.cudnn.benchmark": ("tensorplay", f"train.py:{line_of(train, 'cudnn.benchmark = True')}"),
        "torch.utils.data.DataLoader": ("tensorplay", f"train.py:{line_of(train, 'import DataLoader')}"),
        "torch.utils.data.Dataset": ("tensorplay", f"toydata/blobs.py:{line_of(blobs, 'data.Dataset')}"),
        "torch.Generator": ("tensorplay", f"toydata/blobs.py:{line_of(blobs, 'torch.Generator')}"),
        "torch.version.cuda": ("tensorplay", f"train.py:{line_of(train, 'torch.version.cuda')}"),
    }
    assert {name: rows.get(name) for name in expected} == expected
    # Only the program's own uses: not tensorplay's among its modules, nor the unpickling of the workers' batches.
    assert all(re.match(r"(train|model|toydata/blobs)\.py:\d+$", where) for _, where in rows.values()), rows
    assert "tensorplay lacks 0" in result.stderr
    assert result.stderr.count("tensorplay.compat: the program used") == 1  # not again from each worker


# ---------------------------------------------------------------------------------------------------
# Scripts run as python runs them

AS_PYTHON = {
    "main_and_argv": """
        import builtins, sys
        print(sys.argv, sys.path, __name__, __file__, __package__, __spec__, __cached__, __doc__)
        print(type(__loader__).__name__, __loader__.name, __builtins__ is builtins, sys.modules["__main__"].__file__)
        """,
    "exit_status": "import sys\nprint('before')\nsys.exit(3)\n",
    "exit_message": "import sys\nsys.exit('stopped here')\n",
    "uncaught": """
        def inner():
            raise ValueError("boom")

        try:
            {}["key"]
        except KeyError:
            inner()
        """,
    "syntax_error": "x = (\n",
}


@pytest.mark.parametrize("case", sorted(AS_PYTHON))
def test_a_script_runs_as_python_runs_it(case, tmp_path):
    write(tmp_path / "sub", {"script.py": AS_PYTHON[case]})
    launched = run(["sub/script.py", "one", "--two"], cwd=tmp_path)
    plain = run(["sub/script.py", "one", "--two"], cwd=tmp_path, launcher=())
    assert (launched.returncode, launched.stdout, launched.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert plain.returncode == {"main_and_argv": 0, "exit_status": 3}.get(case, 1)


def test_a_torch_program_s_traceback_starts_at_its_own_frames(tmp_path):
    write(tmp_path, {"boom.py": """
        import torch

        def check(x):
            if x.sum() > 0:
                raise ValueError("positive")

        check(torch.ones(2))
        """})
    result = run(["boom.py"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):\n  File \"" + str(tmp_path / "boom.py"))
    assert "line 7, in <module>" in result.stderr and "line 5, in check" in result.stderr
    assert result.stderr.endswith("ValueError: positive\n")
    assert "runpy" not in result.stderr and "tensorplay" not in result.stderr


def test_dash_m_runs_a_module_as_python_dash_m_does(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/cli.py": """
        import sys
        print(sys.argv, sys.path, __name__, __spec__.name, __package__, __file__)
        if sys.argv[2] == "torch":
            import torch
            print(torch.nn.functional.relu(torch.tensor([-1.0, 2.0])).tolist())
        sys.exit(int(sys.argv[1]))
        """})
    launched = run(["-m", "pkg.cli", "4", "x"], cwd=tmp_path)
    plain = run(["-m", "pkg.cli", "4", "x"], cwd=tmp_path, launcher=())
    assert (launched.returncode, launched.stdout, launched.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert plain.returncode == 4 and plain.stdout.startswith(f"{[str(tmp_path / 'pkg' / 'cli.py'), '4', 'x']}")
    with_torch = run(["-m", "pkg.cli", "5", "torch"], cwd=tmp_path)
    assert with_torch.returncode == 5 and with_torch.stdout.endswith("\n[0.0, 2.0]\n"), with_torch.stderr


def test_launcher_errors(tmp_path):
    missing = run(["absent.py"], cwd=tmp_path)
    assert missing.returncode == 2 and "can't open file" in missing.stderr and "absent.py" in missing.stderr
    nothing = run(["--lazy"], cwd=tmp_path)
    assert nothing.returncode == 2 and "give the program" in nothing.stderr
    no_module = run(["-m", "no_such_module"], cwd=tmp_path)
    assert no_module.returncode == 1 and "No module named no_such_module" in no_module.stderr


# ---------------------------------------------------------------------------------------------------
# Names tensorplay lacks

LACKING = {
    "main.py": """
        import torch
        from torch.ao.quantization import QuantStub
        import helper

        print("ran", torch.ones(2).sum().item(), isinstance(torch.ones(1), QuantStub))
        try:
            QuantStub(torch.nn.Linear(2, 2))
        except NotImplementedError as error:
            print(error)
        helper.transform()
        """,
    "helper.py": """
        import torch


        def transform():
            return torch.vmap(lambda x: x)
        """,
}


def test_lazy_placeholders_raise_only_when_used_naming_where_they_were_reached(tmp_path):
    write(tmp_path, LACKING)
    result = run(["--lazy", "--verbose", "main.py"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ("ran 2.0 False\ntensorplay has no torch.ao.quantization.QuantStub yet "
                             "(used at main.py:2)\n")
    assert "NotImplementedError: tensorplay has no torch.vmap yet (used at helper.py:5)\n" in result.stderr
    assert 'main.py", line 10, in <module>' in result.stderr
    rows = table_rows(result.stderr)
    assert {name: rows[name] for name in ("torch.ao", "torch.ao.quantization",
                                          "torch.ao.quantization.QuantStub", "torch.vmap",
                                          "torch.nn.Linear")} == {
        "torch.ao": ("placeholder", "main.py:2"),
        "torch.ao.quantization": ("placeholder", "main.py:2"),
        "torch.ao.quantization.QuantStub": ("placeholder", "main.py:2"),
        "torch.vmap": ("placeholder", "helper.py:5"),
        "torch.nn.Linear": ("tensorplay", "main.py:7")}
    assert ("tensorplay lacks: torch.ao, torch.ao.quantization, "
            "torch.ao.quantization.QuantStub, torch.vmap") in result.stderr


def test_without_lazy_a_lacking_import_fails_at_once_naming_it(tmp_path):
    write(tmp_path, LACKING)
    result = run(["--verbose", "main.py"], cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert 'main.py", line 2, in <module>' in result.stderr
    assert ("ModuleNotFoundError: No module named 'torch.ao'\n"
            "tensorplay has no torch.ao yet: with python -m tensorplay.run --lazy, a program that only "
            "imports it runs\n") in result.stderr
    assert table_rows(result.stderr)["torch.ao"] == ("missing", "main.py:2")


def test_without_lazy_a_lacking_attribute_is_an_attribute_error(tmp_path):
    write(tmp_path, {"main.py": """
        import importlib.util
        import torch
        try:
            from torch import vmap
        except ImportError as error:
            print(error.msg.split(" (")[0], importlib.util.find_spec("torch.ao"))
        torch.nn.functional.scaled_mm
        """})
    result = run(["main.py"], cwd=tmp_path)
    assert result.stdout == "cannot import name 'vmap' from 'tensorplay' None\n"
    assert result.returncode == 1
    assert result.stderr.endswith("AttributeError: module 'tensorplay.nn.functional' has no attribute 'scaled_mm'\n"
                                  "tensorplay has no torch.nn.functional.scaled_mm yet: with python -m tensorplay.run "
                                  "--lazy, a program that only imports it runs\n")


# ---------------------------------------------------------------------------------------------------
# In process: identity, the version, placeholders, and a clean disable

def test_torch_names_are_tensorplay_s_module_objects():
    with tensorplay.compat.enable():
        import torch
        import torch.nn.functional as F
        from torch.nn import functional as F2
        from torch.utils.data import DataLoader

        class Net(torch.nn.Module):
            pass

        assert torch is tensorplay and torch.Tensor is tensorplay.Tensor
        assert F is F2 is tensorplay.nn.functional and sys.modules["torch.nn.functional"] is F
        assert DataLoader is tensorplay.utils.data.DataLoader
        assert importlib.import_module("torch.optim") is tensorplay.optim
        assert torch.backends.cudnn is tensorplay.backends.cudnn and torch.version.cuda is None
        assert isinstance(tensorplay.ones(2), torch.Tensor) and isinstance(Net(), tensorplay.nn.Module)
        assert torch.__file__ == tensorplay.__file__ and torch.__file__.startswith(os.path.dirname(tensorplay.__file__))
        assert torch.nn.__spec__.name == "tensorplay.nn" and torch.nn.__name__ == "tensorplay.nn"
    assert sys.modules["torch"] is pytorch


def test_torch_version_is_one_that_version_checks_accept():
    version = pytest.importorskip("packaging.version")
    with tensorplay.compat.enable():
        import torch

        assert torch.__version__ == f"2.13.0+tensorplay.{TENSORPLAY_VERSION}" == torch.version.__version__
        assert version.Version(torch.__version__) >= version.Version("2.0")
        assert version.Version(torch.__version__).release == (2, 13, 0)
        assert torch.__version__ >= "2.2" and torch.__version__ < "2.14" and torch.__version__ >= (2, 13)
        assert torch.__version__.split("+")[0] == pytorch.__version__.split("+")[0]
    assert tensorplay.__version__ == tensorplay.version.__version__ == TENSORPLAY_VERSION


VERSIONS = ["1.8", "1.10", "2", "2.0.0a0", "2.2", "2.13", "2.13.0", "2.13.0rc1", "2.13.0.dev20250101", "2.13.0.post1",
            "2.13.1", "2.14.0.dev0", "3.0"]


@pytest.mark.parametrize("other", VERSIONS)
def test_torch_version_compares_as_packaging_orders_versions(other):
    version = pytest.importorskip("packaging.version")
    mine = f"2.13.0+tensorplay.{TENSORPLAY_VERSION}"
    for op in ("__lt__", "__le__", "__gt__", "__ge__"):
        expected = getattr(version.Version(mine), op)(version.Version(other))
        assert getattr(TorchVersion(mine), op)(other) == expected, (op, other)
        assert getattr(TorchVersion(other), op)(mine.split("+")[0]) == getattr(
            version.Version(other), op)(version.Version(mine.split("+")[0])), (op, other)


def test_placeholders():
    with tensorplay.compat.enable(lazy=True):
        import torch
        import torch.ao.quantization as quantization

        qconfig = torch.ao.QConfig
        line = sys._getframe().f_lineno - 1
        assert quantization is torch.ao.quantization and qconfig is torch.ao.QConfig
        assert not isinstance(1, qconfig) and not issubclass(int, qconfig) and bool(qconfig)
        assert repr(qconfig) == "<placeholder for torch.ao.QConfig, which tensorplay lacks>"
        message = f"tensorplay has no torch.ao.QConfig yet (used at {os.path.relpath(__file__)}:{line})"

        def subclass():
            class Config(qconfig):
                pass

        for use in (lambda: qconfig(), lambda: qconfig[0], lambda: list(qconfig), subclass):
            with pytest.raises(NotImplementedError) as raised:
                use()
            assert str(raised.value) == message
        with pytest.raises(NotImplementedError, match="QConfig yet"):
            with qconfig:
                pass
        with pytest.raises(AttributeError):
            qconfig.__wrapped__  # noqa: B018  (dunders are never placeholders: the machinery probes them)
        assert hasattr(torch, "vmap") and isinstance(torch.jit.script, types.FunctionType)


def test_tensorplay_s_own_code_gets_attribute_errors_in_lazy_mode():
    # A check for a name made from a file of tensorplay's package answers as without torch mode.
    probe = compile("hasattr(tensorplay, 'vmap'), hasattr(tensorplay.nn, 'nothing')",
                    os.path.join(os.path.dirname(tensorplay.__file__), "probe.py"), "eval")
    with tensorplay.compat.enable(lazy=True):
        assert eval(probe) == (False, False)
        assert hasattr(tensorplay, "vmap")


def test_enable_in_enable_changes_the_settings_and_restores_them():
    with tensorplay.compat.enable():
        import torch

        with pytest.raises(AttributeError):
            torch.vmap  # noqa: B018
        with tensorplay.compat.enable(lazy=True):
            assert callable(torch.vmap)
        with pytest.raises(AttributeError):
            torch.vmap  # noqa: B018
        assert sys.modules["torch"] is tensorplay
    assert sys.modules["torch"] is pytorch


def test_disable_leaves_sys_modules_and_tensorplay_as_they_were(capsys):
    own_modules = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "tensorplay"}

    def state():
        return ({name: module for name, module in sys.modules.items() if name.split(".")[0] == "torch"},
                {name: (type(module), dict(vars(module))) for name, module in own_modules.items()},
                list(sys.meta_path))

    before = state()
    assert before[0]["torch"] is pytorch and "torch.nn" in before[0]
    tensorplay.compat.enable(lazy=True, verbose=True)
    try:
        import torch
        import torch.ao.quantization  # noqa: F401  (files a placeholder on tensorplay as `ao`)
        from torch.nn import functional
        from torch.utils.data import DataLoader  # noqa: F401

        assert torch.vmap is not None and functional.relu is tensorplay.nn.functional.relu
        assert type(torch) is not types.ModuleType and "ao" in vars(tensorplay)
    finally:
        tensorplay.compat.disable()
    assert state() == before
    assert "torch.ao.quantization" in capsys.readouterr().err

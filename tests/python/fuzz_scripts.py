"""The fuzzers of tests/fuzz/, which `make fuzz` runs as scripts, imported by the tests that run
them on short budgets."""

import importlib.util
import pathlib

FUZZ_DIR = pathlib.Path(__file__).resolve().parents[1] / "fuzz"


def load(name):
    """tests/fuzz/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(name, FUZZ_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""python -m tensorplay.run: runs a PyTorch program, unedited, on tensorplay.

    python -m tensorplay.run [--lazy] [--verbose] script.py [args ...]
    python -m tensorplay.run [--lazy] [--verbose] -m module [args ...]

The program runs in torch mode (tensorplay.compat): ``import torch`` and every ``import torch.*``, in
its files and in the libraries it imports, give tensorplay's modules. It runs as ``python script.py``
or ``python -m module`` would run it: the same ``sys.argv``, ``sys.path[0]`` and ``__main__``, its
exit status, and an uncaught exception's traceback from the program's own first frame. As with python
itself, everything after the script or module belongs to the program. See docs/run.md.
"""

import argparse
import builtins
import importlib.machinery
import io
import os
import runpy
import sys
import types

from tensorplay import compat

_PROG = "python -m tensorplay.run"
_LAUNCHER_FILES = {os.path.abspath(__file__), runpy.__file__, "<frozen runpy>"}


def _parser():
    parser = argparse.ArgumentParser(
        prog=_PROG, usage=f"{_PROG} [--lazy] [--verbose] (script.py | -m module) [args ...]",
        description="Runs a PyTorch program on tensorplay, unedited: import torch gives tensorplay.")
    parser.add_argument("--lazy", action="store_true",
                        help="a torch name tensorplay lacks is a placeholder that raises only when it is used")
    parser.add_argument("--verbose", action="store_true",
                        help="at exit, print to stderr every torch name the program used, what provided it "
                             "and where it was first used")
    parser.add_argument("-m", dest="module", metavar="module", help="run a module as a script, as python -m does")
    parser.add_argument("script", nargs="?", help="the program's file")
    return parser


def _split(argv):
    """The launcher's own arguments (up to the program) and the program's (what follows it)."""
    for i, arg in enumerate(argv):
        if arg == "-m":
            return argv[:i + 2], argv[i + 2:]
        if not arg.startswith("-") or (arg.startswith("-m") and not arg.startswith("--")):
            return argv[:i + 1], argv[i + 1:]
    return argv, []


def _run_script(path, args):
    """Runs the file `path` as python runs a script: in a fresh ``__main__``, with ``sys.argv[0]`` as
    given, ``__file__`` absolute, and the script's directory first on ``sys.path``."""
    full = os.path.abspath(path)
    try:
        with io.open_code(full) as file:
            source = file.read()
    except OSError as error:
        print(f"{_PROG}: can't open file {full!r}: [Errno {error.errno}] {error.strerror}", file=sys.stderr)
        return 2
    sys.argv = [path, *args]
    if not sys.flags.safe_path:  # `python -m` put the working directory there; a script gets its own
        sys.path[0] = os.path.dirname(os.path.realpath(full))
    main = types.ModuleType("__main__")
    vars(main).update(__file__=full, __builtins__=builtins, __cached__=None,
                      __loader__=importlib.machinery.SourceFileLoader("__main__", full))
    sys.modules["__main__"] = main
    exec(compile(source, full, "exec", dont_inherit=True), vars(main))
    return 0


def _run_module(name, args):
    """Runs module `name` as ``python -m`` runs it (``sys.argv[0]`` is its file while it runs)."""
    sys.argv = [name, *args]
    runpy.run_module(name, run_name="__main__", alter_sys=True)
    return 0


def _program_traceback(traceback):
    """`traceback` from the program's first frame on: the launcher's frames above it are not the program's."""
    while traceback is not None and traceback.tb_frame.f_code.co_filename in _LAUNCHER_FILES:
        traceback = traceback.tb_next
    return traceback


def _lacking(error):
    """The torch name that `error` says tensorplay lacks, if it says so: a torch module not found, or a
    name missing from one of tensorplay's modules."""
    if isinstance(error, ModuleNotFoundError) and (error.name == "torch" or str(error.name).startswith("torch.")):
        return error.name
    module = getattr(error, "obj", None) if isinstance(error, AttributeError) else None
    if isinstance(module, types.ModuleType) and module.__name__.split(".")[0] == "tensorplay":
        return f"torch{module.__name__[len('tensorplay'):]}.{error.name}"
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    own, program_args = _split(argv)
    parser = _parser()
    options = parser.parse_args(own)
    if (options.module is None) == (options.script is None):
        parser.error("give the program: a script, or -m and a module")
    compat.enable(lazy=options.lazy, verbose=options.verbose)
    try:
        if options.module is not None:
            return _run_module(options.module, program_args)
        return _run_script(options.script, program_args)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as error:  # noqa: B036  (reported as python reports an uncaught exception)
        traceback = _program_traceback(error.__traceback__)
        lacking = None if options.lazy else _lacking(error)
        if lacking is not None:
            error.add_note(f"tensorplay has no {lacking} yet: with {_PROG} --lazy, a program that only imports it runs")
        sys.excepthook(type(error), error.with_traceback(traceback), traceback)
        return 1


if __name__ == "__main__":
    sys.exit(main())

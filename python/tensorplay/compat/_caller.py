"""Who touched a torch name, and where.

In torch mode the torch names are tensorplay's own module objects, which tensorplay's modules also use
among themselves; only the program's touches (its files and the libraries it imports) are noted or
answered with placeholders. Between a touch and the code that made it stand the frames of this package
and of the standard library: the import system, and pickle, copy or multiprocessing, which touch
torch's modules only on behalf of their caller (unpickling a tensor looks up tensorplay's own
functions by name). They are passed over, so a touch counts as the code's that called them."""

import os
import site
import sys
import sysconfig


def _dirs(*paths):
    return tuple(os.path.join(os.path.abspath(path), "") for path in paths if path)


_COMPAT = _dirs(os.path.dirname(__file__))[0]
_TENSORPLAY = _dirs(os.path.dirname(os.path.dirname(__file__)))[0]
_STDLIB = _dirs(sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"])
_SITE = _dirs(sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],  # within the stdlib's dirs
              *getattr(site, "getsitepackages", list)(), site.getusersitepackages())


def _in_between(filename):
    return (filename.startswith(("<frozen ", _COMPAT))
            or (filename.startswith(_STDLIB) and not filename.startswith(_SITE)))


def program_frame():
    """The frame of the code that touched a torch name, or None when that code is tensorplay's own."""
    frame = sys._getframe(1)
    while frame is not None and _in_between(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename.startswith(_TENSORPLAY):
        return None
    return frame


def where(frame):
    """``file:line`` of `frame`; a file below the working directory is named relative to it."""
    filename = frame.f_code.co_filename
    if os.path.isabs(filename):
        try:
            relative = os.path.relpath(filename)
        except OSError:  # the working directory is gone
            relative = filename
        if not relative.startswith(os.pardir + os.sep):
            filename = relative
    return f"{filename}:{frame.f_lineno}"

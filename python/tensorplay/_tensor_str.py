"""Tensor.__repr__ and the print options. The layout is the C++ printer's (csrc/tensorplay/ops/print.cpp,
PyTorch's layout), which C++'s `std::cout << tensor` uses too, and the options are one setting
shared by both languages."""

import contextlib
import math

from tensorplay import _C

# The profiles set every option but sci_mode.
_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}
_NAMES = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print, as NumPy's options of the same names: digits after the point
    (precision), the element count above which a tensor is summarised (threshold) to edgeitems at
    each end of each dim, the line width, and scientific notation (sci_mode: True, False, or None to
    choose it from the values). profile ("default", "short", "full") sets the first four at once;
    the options given override it. sci_mode is reset to None when not given, as in PyTorch."""
    options = get_printoptions()
    if profile is not None:
        options.update(_PROFILES.get(profile, {}))
    for name, value in dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                            linewidth=linewidth).items():
        if value is not None:
            options[name] = value
    options["sci_mode"] = sci_mode
    _C._set_printoptions(**options)


def get_printoptions():
    """The current print options, as keyword arguments for set_printoptions()."""
    options = dict(zip(_NAMES, _C._get_printoptions()))
    if math.isfinite(options["threshold"]) and options["threshold"] == int(options["threshold"]):
        options["threshold"] = int(options["threshold"])  # as given, the way PyTorch returns it
    return options


@contextlib.contextmanager
def printoptions(**kwargs):
    """Print options set for a block (the arguments of set_printoptions), restored after it."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


def tensor_repr(self, *, tensor_contents=None):
    return _C._tensor_repr(self)

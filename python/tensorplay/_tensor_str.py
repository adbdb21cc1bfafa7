"""Tensor.__repr__, laid out exactly as PyTorch prints tensors."""

import contextlib
import dataclasses
import math

from tensorplay import _C


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None  # None: chosen from the values shown


PRINT_OPTS = _PrintOptions()

# The profiles set every option but sci_mode.
_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print, as NumPy's options of the same names: digits after the point
    (precision), the element count above which a tensor is summarised (threshold) to edgeitems at
    each end of each dim, the line width, and scientific notation (sci_mode: True, False, or None to
    choose it from the values). profile ("default", "short", "full") sets the first four at once;
    the options given override it. sci_mode is reset to None when not given, as in PyTorch."""
    if profile is not None:
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, name, value)
    for name, value in dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                            linewidth=linewidth).items():
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as keyword arguments for set_printoptions()."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Print options set for a block (the arguments of set_printoptions), restored after it."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses integer, fixed or scientific notation and a common width from the values shown."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            self.max_width = max([len(str(v)) for v in values], default=1)
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        magnitudes = [abs(v) for v in finite]
        largest, smallest = max(magnitudes), min(magnitudes)
        self.int_mode = all(math.ceil(v) == v for v in finite)
        p = PRINT_OPTS.precision
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in finite)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in finite)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in finite)

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{p}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


class _ComplexFormatter:
    """Formats complex values as PyTorch does: the real parts with one formatter, the imaginary parts
    with another, joined as 1.5000+2.0000j."""

    def __init__(self, values):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value):
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _formatter(values, dtype):
    return _ComplexFormatter(values) if dtype.is_complex else _Formatter(values, dtype.is_floating_point)


def _flat_values(t):
    values = t.reshape(-1).tolist()
    return [float(v) for v in values] if t.is_floating_point() else values


def _summarized(t):
    """The elements that a summarised print shows: edgeitems at both ends of every dim."""
    if t.dim() == 0:
        return t
    e = PRINT_OPTS.edgeitems
    if t.dim() == 1:
        return _C.cat([t[:e], t[t.size(0) - e:]]) if t.size(0) > 2 * e else t
    if e == 0:  # nothing shown but "..."
        return t.new_empty([0] * t.dim())
    if t.size(0) > 2 * e:
        parts = [_summarized(t[i]) for i in list(range(e)) + list(range(t.size(0) - e, t.size(0)))]
    else:
        parts = [_summarized(t[i]) for i in range(t.size(0))]
    return _C.stack(parts)


def _vector_str(t, indent, summarize, formatter):
    element_length = formatter.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and e == 0:
        data = ["..."]
    elif summarize and t.size(0) > 2 * e:
        data = [formatter.format(v) for v in _flat_values(t[:e])] + [" ..."] + \
               [formatter.format(v) for v in _flat_values(t[-e:])]
    else:
        data = [formatter.format(v) for v in _flat_values(t)]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(t, indent, summarize, formatter):
    if t.dim() == 0:
        return formatter.format(_flat_values(t)[0])
    if t.dim() == 1:
        return _vector_str(t, indent, summarize, formatter)
    e = PRINT_OPTS.edgeitems
    if summarize and t.size(0) > 2 * e:
        rows = [_tensor_str(t[i], indent + 1, summarize, formatter) for i in range(e)] + ["..."] + \
               [_tensor_str(t[i], indent + 1, summarize, formatter) for i in range(t.size(0) - e, t.size(0))]
    else:
        rows = [_tensor_str(t[i], indent + 1, summarize, formatter) for i in range(t.size(0))]
    return "[" + ("," + "\n" * (t.dim() - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(self, *, tensor_contents=None):
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if not self.device.type == "cpu":
        suffixes.append(f"device='{self.device}'")
    # An empty tensor has no elements to show its dtype by, so only the default one goes unsaid.
    default_complex = _C.get_default_dtype().to_complex()
    shows_dtype = self.dtype not in (_C.get_default_dtype(), default_complex, _C.int64, _C.bool)
    if self.is_meta:  # no values to show
        shows_dtype = self.dtype != _C.get_default_dtype()
        suffixes.append(f"size={tuple(self.shape)}")
        body = "..."
    elif self.numel() == 0:
        shows_dtype = self.dtype != _C.get_default_dtype()
        if self.dim() != 1:
            suffixes.append(f"size={tuple(self.shape)}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:  # the values are all "...": the shape is said instead
            suffixes.append(f"size={tuple(self.shape)}")
        data = self.detach()
        summarize = data.numel() > PRINT_OPTS.threshold
        shown = _summarized(data) if summarize else data
        formatter = _formatter(_flat_values(shown), data.dtype)
        body = _tensor_str(data, indent, summarize, formatter)
    if shows_dtype:
        suffixes.append(f"dtype={self.dtype}")
    grad_fn = self.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)

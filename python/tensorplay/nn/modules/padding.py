"""Padding layers: constant (and zero), reflection, replication and circular, over 1 to 3 dims."""

import numbers

from tensorplay.nn import functional as F
from tensorplay.nn.modules.module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _padding(padding, dims):
    """(left, right, top, bottom, ...) for `dims` padded dims; an int pads every side alike."""
    return (padding,) * (2 * dims) if isinstance(padding, numbers.Integral) else tuple(padding)


class _ConstantPadNd(Module):
    def __init__(self, padding, value, dims):
        super().__init__()
        self.padding = _padding(padding, dims)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value, 1)


class ConstantPad2d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value, 2)


class ConstantPad3d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value, 3)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _PadNd(Module):
    """Reflection, replication and circular padding: F.pad in `mode`, no fill value."""
    _mode = None

    def __init__(self, padding, dims):
        super().__init__()
        self.padding = _padding(padding, dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding, 1)


class ReflectionPad2d(_PadNd):
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding, 2)


class ReflectionPad3d(_PadNd):
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding, 3)


class ReplicationPad1d(_PadNd):
    _mode = "replicate"

    def __init__(self, padding):
        super().__init__(padding, 1)


class ReplicationPad2d(_PadNd):
    _mode = "replicate"

    def __init__(self, padding):
        super().__init__(padding, 2)


class ReplicationPad3d(_PadNd):
    _mode = "replicate"

    def __init__(self, padding):
        super().__init__(padding, 3)


class _CircularPadNd(_PadNd):
    """Circular padding checks the input's rank first, as PyTorch's modules do (F.pad alone does not)."""
    _mode = "circular"
    dims = None

    def __init__(self, padding):
        super().__init__(padding, self.dims)

    def forward(self, input):
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    dims = 1


class CircularPad2d(_CircularPadNd):
    dims = 2


class CircularPad3d(_CircularPadNd):
    dims = 3

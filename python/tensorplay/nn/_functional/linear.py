"""Linear and bilinear maps."""

from tensorplay._C import _nn

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    return _nn.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return _nn.bilinear(input1, input2, weight, bias)

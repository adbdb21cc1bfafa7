"""Activations and the softmax family."""

from tensorplay import _C
from tensorplay._C import _nn

__all__ = ["relu", "leaky_relu", "prelu", "gelu", "silu", "tanh", "sigmoid", "softplus", "softmax", "log_softmax"]


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    out = _C.where(input > 0, input, input * negative_slope)
    return input.copy_(out) if inplace else out


def prelu(input, weight):
    return _nn.prelu(input, weight)


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    if inplace:
        # silu's backward needs its input, which copy_ overwrites: run it on a clone, which the graph keeps instead.
        return input.copy_(input.clone().silu())
    return input.silu()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.softmax(_softmax_dim(input.dim()) if dim is None else dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.log_softmax(_softmax_dim(input.dim()) if dim is None else dim, dtype)

"""Normalization layers."""

import math

from tensorplay import _C
from tensorplay._C import _nn
from tensorplay._dtypes import finfo
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.nn._functional._utils import _single
from tensorplay.nn._functional.vision import pad

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "local_response_norm", "rms_norm"]


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _nn.layer_norm(input, list(_single(normalized_shape)), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def _verify_spatial_size(size):
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Batch norm over (1, N*C, *spatial), as PyTorch computes it: each (sample, channel) pair is its own
    "channel", with the running statistics and affine parameters repeated per sample; the running
    statistics are then averaged back over the batch."""
    if use_input_stats:
        _verify_spatial_size(input.shape)
    n, c = input.shape[0], input.shape[1]

    def repeated(t):
        return None if t is None else t.repeat(n)

    mean, var = repeated(running_mean), repeated(running_var)
    out = batch_norm(input.contiguous().view(1, n * c, *input.shape[2:]), mean, var, repeated(weight),
                     repeated(bias), use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(mean.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(var.view(n, c).mean(0))
    return out.view(input.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of the squares over `size` neighbouring channels) ** beta; the window
    is zero-padded at the channel ends and always averages over `size`."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    # The channels are made the last dim so that pad reaches them with a 2-element padding.
    squares = input.mul(input).movedim(1, -1)
    padded = pad(squares, [size // 2, (size - 1) // 2])
    div = padded.narrow(-1, 0, channels)
    for offset in range(1, size):
        div = div + padded.narrow(-1, offset, channels)
    div = (div / size).movedim(-1, 1)
    return input / div.mul(alpha).add(k).pow(beta)


def _opmath_dtype(dtype):
    """The dtype reduced floats compute in (float32), as PyTorch's CPU kernels do."""
    return _C.float32 if dtype in (_C.float16, _C.bfloat16) else dtype


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    normalized_shape = tuple(normalized_shape)
    count = len(normalized_shape)
    if tuple(input.shape[input.dim() - count:]) != normalized_shape or count > input.dim():
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(normalized_shape)}")
    opmath = _opmath_dtype(input.dtype)
    if eps is None:
        eps = finfo(opmath).eps
    x = input.to(opmath)
    dims = list(range(-count, 0))
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)

"""Pooling."""

from tensorplay._C import _nn
from tensorplay.nn._functional._utils import _pair

__all__ = ["max_pool2d_with_indices", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


def _pool_stride(stride):
    """The op's stride argument: [] (the kernel size) for None or an empty sequence."""
    return [] if stride is None or (not isinstance(stride, int) and len(stride) == 0) else list(_pair(stride))


def _pool_args(kernel_size, stride, padding, dilation):
    return list(_pair(kernel_size)), _pool_stride(stride), list(_pair(padding)), list(_pair(dilation))


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _nn.max_pool2d_with_indices(input, *_pool_args(kernel_size, stride, padding, dilation), ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _nn.max_pool2d(input, *_pool_args(kernel_size, stride, padding, dilation), ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _nn.avg_pool2d(input, list(_pair(kernel_size)), _pool_stride(stride), list(_pair(padding)), ceil_mode,
                          count_include_pad, divisor_override)


def adaptive_avg_pool2d(input, output_size):
    size = _pair(output_size)
    size = [input.shape[-2 + i] if s is None else s for i, s in enumerate(size)]
    return _nn.adaptive_avg_pool2d(input, size)

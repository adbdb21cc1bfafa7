"""Convolutions."""

from tensorplay._C import _nn
from tensorplay.nn._functional._utils import _pair, _single
from tensorplay.nn._functional.vision import pad

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]


def _same_padding(input, weight, stride, dilation, spatial):
    """'same' padding per spatial dim; when the total is odd the extra goes after, as in PyTorch."""
    if any(s != 1 for s in stride):
        raise ValueError("padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[-spatial:])]
    left = [t // 2 for t in total]
    extra = []
    for t, l in reversed(list(zip(total, left))):
        extra += [0, t - 2 * l]
    return left, (extra if any(extra) else None)


def _conv(op, spatial, input, weight, bias, stride, padding, dilation, groups):
    expand = _single if spatial == 1 else _pair
    stride, dilation = expand(stride), expand(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * spatial
        elif padding == "same":
            padding, extra = _same_padding(input, weight, stride, dilation, spatial)
            if extra is not None:
                input = pad(input, extra)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    return op(input, weight, bias, list(stride), list(expand(padding)), list(dilation), groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(_nn.conv1d, 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(_nn.conv2d, 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _nn.conv_transpose1d(input, weight, bias, list(_single(stride)), list(_single(padding)),
                                list(_single(output_padding)), groups, list(_single(dilation)))


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _nn.conv_transpose2d(input, weight, bias, list(_pair(stride)), list(_pair(padding)),
                                list(_pair(output_padding)), groups, list(_pair(dilation)))

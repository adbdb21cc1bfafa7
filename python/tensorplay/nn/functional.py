"""tensorplay.nn.functional: PyTorch's functional API over the C++ ops in tensorplay._C._nn."""

import math
import numbers

from tensorplay import _C
from tensorplay._C import _nn


def _pair(x):
    return (x, x) if isinstance(x, numbers.Integral) else tuple(x)


def _single(x):
    return (x,) if isinstance(x, numbers.Integral) else tuple(x)


_REDUCTIONS = ("none", "mean", "sum")


def _reduction(size_average, reduce, reduction):
    """The legacy size_average/reduce flags, mapped to reduction as PyTorch does."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


# ---- linear and convolution ----

def linear(input, weight, bias=None):
    return _nn.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return _nn.bilinear(input1, input2, weight, bias)


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


# ---- distances ----

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _C.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    # PyTorch adds eps to the difference, so identical rows are eps * d**(1/p) apart.
    dim = -1 if max(x1.dim(), x2.dim()) > 0 else 0
    return _C._linalg.vector_norm(x1 - x2 + eps, p, [dim], keepdim, None)


def pdist(input, p=2):
    return _C.pdist(input, p)


# ---- pooling ----

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


# ---- activations ----

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


# ---- normalisation, dropout, embedding ----

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _nn.layer_norm(input, list(_single(normalized_shape)), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    out = _nn.dropout(input, p, training)
    return input.copy_(out) if inplace and out is not input else out


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    return _nn.embedding(input, weight, padding_idx)


def one_hot(tensor, num_classes=-1):
    return _nn.one_hot(tensor, num_classes)


def pad(input, pad, mode="constant", value=None):
    return _nn.pad(input, list(pad), mode, 0.0 if value is None else float(value))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    if input.dim() != 4:
        raise NotImplementedError(f"interpolate: only 4-D inputs are supported, got {input.dim()}-D")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if mode not in ("nearest", "bilinear"):
        raise NotImplementedError(f"interpolate: mode '{mode}' is not supported (nearest, bilinear)")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    scales = None
    if size is None:
        scales = tuple(float(s) for s in _pair(scale_factor)) if not isinstance(scale_factor, float) else (
            scale_factor, scale_factor)
        size = [int(math.floor(input.shape[2 + i] * scales[i])) for i in range(2)]
        if recompute_scale_factor:
            scales = None
    return _nn.interpolate(input, list(_pair(size)), scales, mode, bool(align_corners))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    return _nn.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)


# ---- losses ----

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _nn.mse_loss(input, target, _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.l1_loss(input, target, _reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _nn.smooth_l1_loss(input, target, _reduction(size_average, reduce, reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    return _nn.huber_loss(input, target, reduction, delta)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nn.nll_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    return _nn.cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index,
                             label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    return _nn.binary_cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                _reduction(size_average, reduce, reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    return _nn.kl_div(input, target, _reduction(size_average, reduce, reduction), log_target)

"""Normalization layers."""

import math
import numbers

from tensorplay import _C
from tensorplay._C import _nn
from tensorplay._dtypes import finfo
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.nn._functional._checks import _aten_name, _bool_arg, _named, _tensor_arg
from tensorplay.nn._functional._utils import _single
from tensorplay.nn._functional.vision import pad

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "local_response_norm", "rms_norm"]


def _float_arg(op, name, position, value):
    """A double argument as PyTorch's binding reads it: a number, or a tensor of one element."""
    if isinstance(value, _C.Tensor) and value.dim() == 0 and not value.is_complex():
        return value.item()
    if isinstance(value, (bool, numbers.Integral, float)) and not isinstance(value, complex):
        return float(value)
    raise TypeError(f"{op}(): argument '{name}' (position {position}) must be float, not {type(value).__name__}")


def _int_list_arg(op, name, position, value):
    """An int[] argument as PyTorch's binding reads it: a sequence of ints (or of 0-dim integer tensors)."""
    if isinstance(value, (str, bytes, _C.Tensor)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    items = []
    for i, item in enumerate(value):
        if isinstance(item, _C.Tensor) and item.dim() == 0 and not item.is_floating_point() \
                and not item.is_complex() and item.dtype != _C.bool:
            item = item.item()
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type(item).__name__} at pos {i}")
        items.append(int(item))
    return tuple(items)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _nn.layer_norm(input, list(_single(normalized_shape)), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def _verify_spatial_size(size, op="instance_norm"):
    if math.prod(size[2:]) == 1:
        raise ValueError(f"[{op}] Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"instance_norm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if use_input_stats:
        _verify_spatial_size(input.shape)
    _tensor_arg("instance_norm", "weight", 2, weight, optional=True)
    _tensor_arg("instance_norm", "bias", 3, bias, optional=True)
    _tensor_arg("instance_norm", "running_mean", 4, running_mean, optional=True)
    _tensor_arg("instance_norm", "running_var", 5, running_var, optional=True)
    _bool_arg("instance_norm", "use_input_stats", 6, use_input_stats)
    momentum = _float_arg("instance_norm", "momentum", 7, momentum)
    eps = _float_arg("instance_norm", "eps", 8, eps)
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@_named("instance_norm")
def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    """Batch norm over (1, N*C, *spatial), as PyTorch computes it: each (sample, channel) pair is its own
    "channel", with the running statistics and affine parameters repeated per sample; the running
    statistics are then averaged back over the batch."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("[instance_norm] Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if input.dim() < 2:
        raise IndexError(f"[instance_norm] Dimension out of range (expected to be in range of "
                         f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 1)")
    n, c = input.shape[0], input.shape[1]

    def repeated(t):
        return None if t is None else t.repeat(n)

    mean, var = repeated(running_mean), repeated(running_var)
    weight, bias = repeated(weight), repeated(bias)
    if input.numel() == 0:
        # PyTorch's batch norm of an empty input checks nothing more: it scales by the first weight and
        # shifts by the first bias.
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
    else:
        for name, t in (("weight", weight), ("bias", bias), ("running_mean", mean), ("running_var", var)):
            if t is not None and t.numel() != n * c:
                raise RuntimeError(f"[instance_norm] {name} should contain {n * c} elements not {t.numel()}")
        if not input.is_floating_point():
            raise NotImplementedError(f"[instance_norm] \"batch_norm\" not implemented for "
                                      f"'{_aten_name(input.dtype)}'")
        out = batch_norm(input.contiguous().view(1, n * c, *input.shape[2:]), mean, var, weight, bias,
                         use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            _write_back(running_mean, mean.view(n, c).mean(0))
        if running_var is not None:
            _write_back(running_var, var.view(n, c).mean(0))
    return out.view(input.shape)


def _write_back(dst, value):
    """dst.copy_(value), also where dst repeats one element (an expanded tensor): PyTorch writes each
    element in turn there, so the last one stays."""
    if dst.dim() == 1 and dst.shape[0] > 1 and dst.stride()[0] == 0:
        dst.fill_(value[-1].item())
    else:
        dst.copy_(value)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of the squares over `size` neighbouring channels) ** beta; the window
    is zero-padded at the channel ends and always averages over `size`."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"local_response_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"[local_response_norm] Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    # The arguments reach pad, avg_pool and the arithmetic ops in PyTorch's composition: their bindings'
    # type errors.
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"local_response_norm(): argument 'size' must be int, not {type(size).__name__}")
    if size <= 0:
        raise RuntimeError(f"[local_response_norm] kernel size should be greater than zero, but got kH: {size} kW: 1")
    # PyTorch averages the squares with avg_pool2d (3-D input) or avg_pool3d, which have these dtypes.
    supported = (_C.int64, _C.float32, _C.float64) + ((_C.float16, _C.bfloat16) if dim == 3 else ())
    if input.dtype not in supported:
        kernel = "avg_pool2d" if dim == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f"[local_response_norm] \"{kernel}\" not implemented for "
                                  f"'{_aten_name(input.dtype)}'")
    for name, value in (("alpha", alpha), ("k", k), ("beta", beta)):
        if not isinstance(value, (numbers.Number, _C.Tensor)):
            raise TypeError(f"local_response_norm(): argument '{name}' must be Number, not {type(value).__name__}")
    return _local_response_norm(input, size, alpha, beta, k)


@_named("local_response_norm")
def _local_response_norm(input, size, alpha, beta, k):
    channels = input.shape[1]
    # The channels are made the last dim so that pad reaches them with a 2-element padding.
    squares = input.mul(input).movedim(1, -1)
    padded = pad(squares, [size // 2, (size - 1) // 2])
    div = padded.narrow(-1, 0, channels)
    for offset in range(1, size):
        div = div + padded.narrow(-1, offset, channels)
    # PyTorch averages with avg_pool, which divides integer sums by the window size in integers.
    div = (div / size if div.is_floating_point() else div // size).movedim(-1, 1)
    return input / div.mul(alpha).add(k).pow(beta)


def _opmath_dtype(dtype):
    """The dtype reduced floats compute in (float32), as PyTorch's CPU kernels do."""
    return _C.float32 if dtype in (_C.float16, _C.bfloat16) else dtype


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"rms_norm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    normalized_shape = _int_list_arg("rms_norm", "normalized_shape", 2, normalized_shape)
    _tensor_arg("rms_norm", "weight", 3, weight, optional=True)
    if eps is not None:
        eps = _float_arg("rms_norm", "eps", 4, eps)
    return _rms_norm(input, normalized_shape, weight, eps)


@_named("rms_norm")
def _rms_norm(input, normalized_shape, weight, eps):
    count = len(normalized_shape)
    if count == 0:
        raise RuntimeError("[rms_norm] Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                           "least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"[rms_norm] Expected weight to be of same shape as normalized_shape, but got weight of "
                           f"shape {list(weight.shape)} and normalized_shape = {list(normalized_shape)}")
    if input.dim() < count:
        raise ValueError(f"[rms_norm] Input tensor must have at least {count} dimensions, but got {input.dim()}")
    if tuple(input.shape[input.dim() - count:]) != normalized_shape:
        raise RuntimeError(f"[rms_norm] Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"[rms_norm] \"rms_norm\" not implemented for '{_aten_name(input.dtype)}'")
    opmath = _opmath_dtype(input.dtype)
    if eps is None:
        eps = finfo(opmath).eps
    x = input.to(opmath)
    dims = list(range(-count, 0))
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)



"""Convolutions."""

import numbers

import tensorplay
from tensorplay.amp.composite_casts import lower_precision_inputs
from tensorplay import _C
from tensorplay._C import _nn
from tensorplay._dtypes import cpp_type_name
from tensorplay.nn._functional._checks import _aten_name, _named, _tensor_arg
from tensorplay.nn._functional._utils import _pair, _single, _triple
from tensorplay.nn._functional.vision import pad

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc"]


def _compute_dtype(dtype):
    """The dtype the 2-D kernels (floating only) compute an op of `dtype` in: integers go through float64."""
    return dtype if dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64) else _C.float64


def _to_compute(t, dtype):
    return None if t is None else t.to(dtype)


def _from_compute(out, dtype):
    """The result of a float computation in `dtype`; integers wrap as PyTorch's integer kernels do."""
    if out.dtype == dtype:
        return out
    if dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
        return out.to(dtype)
    return out.round().to(_C.int64).to(dtype)


def _mismatch(expected, found):
    return RuntimeError(f"expected scalar type {_aten_name(expected)} but found {_aten_name(found)}")


def _same_padding(input, weight, stride, dilation, spatial):
    """'same' padding per spatial dim; when the total is odd the extra goes after, as in PyTorch."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[-spatial:])]
    left = [t // 2 for t in total]
    extra = []
    for t, l in reversed(list(zip(total, left))):
        extra += [0, t - 2 * l]
    return left, (extra if any(extra) else None)


def _resolve_padding(input, weight, stride, dilation, padding, spatial):
    """(input, padding): a padding string becomes numbers; 'same' with an odd total pads input's far side."""
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * spatial
        elif padding == "same":
            padding, extra = _same_padding(input, weight, stride, dilation, spatial)
            if extra is not None:
                input = pad(input, extra)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    return input, padding


def _conv(op, spatial, input, weight, bias, stride, padding, dilation, groups):
    expand = _single if spatial == 1 else _pair
    stride, dilation = expand(stride), expand(dilation)
    input, padding = _resolve_padding(input, weight, stride, dilation, padding, spatial)
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


# The 3-D convolutions have no kernel of their own: they run the 2-D kernels on the (height, width)
# planes, with the depth taps of the kernel stacked into the channels, so autograd differentiates
# them through conv2d / conv_transpose2d and the reshapes around them.

def _check_3d(name, input, weight, bias, groups, transposed):
    """Whether input is batched; raises PyTorch's errors for a wrong rank or channel count."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to {name}, but got input of size: "
                           f"{list(input.shape)}")
    if weight.dim() != 5:
        raise RuntimeError(f"{name}: expected weight to be 5-dimensional, got weight of size {list(weight.shape)}")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    channels = input.shape[-4]
    in_channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if channels != in_channels:
        batched = list(input.shape) if input.dim() == 5 else [1] + list(input.shape)
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {given}, weight of size {list(weight.shape)}, expected input{batched} to have "
                           f"{in_channels} channels, but got {channels} channels instead")
    if bias is not None:
        out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
        if bias.dim() != 1 or bias.shape[0] != out_channels:
            given = "transposed=1, " if transposed else ""
            raise RuntimeError(f"Given {given}weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
                               f"with {out_channels} elements, but got bias of size {list(bias.shape)} instead")
    return input.dim() == 5


def _param3(op, name, value):
    """An int-or-list convolution parameter as 3 ints, checked as PyTorch's binding and _convolution do."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * 3
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    items = []
    for i, item in enumerate(value):
        if isinstance(item, tensorplay.Tensor) and item.dim() == 0 and not item.is_floating_point():
            item = item.item()
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, but found element of type "
                            f"{type(item).__name__} at pos {i}")
        items.append(int(item))
    if len(items) == 1:
        items *= 3
    if len(items) != 3:
        raise RuntimeError(f"[{op}] expected {name} to be a single integer value or a list of 3 values to match the "
                           f"convolution dimensions, but got {name}={items}")
    return tuple(items)


def _check_params(op, stride, padding, dilation, groups, output_padding=None):
    """The 3-D parameters as tuples (padding may stay a string), with PyTorch's checks of their values."""
    stride, dilation = _param3(op, "stride", stride), _param3(op, "dilation", dilation)
    if isinstance(padding, str) and output_padding is not None:
        raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")
    if not isinstance(padding, str):
        padding = _param3(op, "padding", padding)
        if any(p < 0 for p in padding):
            raise RuntimeError(f"[{op}] negative padding is not supported")
    if output_padding is not None:
        output_padding = _param3(op, "output_padding", output_padding)
        if any(p < 0 for p in output_padding):
            raise RuntimeError(f"[{op}] negative output_padding is not supported")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(f"{op}(): argument 'groups' must be int, not {type(groups).__name__}")
    if any(st <= 0 for st in stride):
        raise RuntimeError(f"[{op}] non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"[{op}] dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError(f"[{op}] non-positive groups is not supported")
    return stride, padding, dilation, output_padding


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    _tensor_arg("conv3d", "input", 1, input)
    _tensor_arg("conv3d", "weight", 2, weight)
    _tensor_arg("conv3d", "bias", 3, bias, optional=True)
    return _conv3d_checked(input, weight, bias, stride, padding, dilation, groups)


@_named("conv3d")
def _conv3d_checked(input, weight, bias, stride, padding, dilation, groups):
    stride, padding, dilation, _ = _check_params("conv3d", stride, padding, dilation, groups)
    batched = _check_3d("conv3d", input, weight, bias, groups, False)
    input, weight, bias = lower_precision_inputs(input, weight, bias)
    # The shapes are checked by computing (in a common dtype); the dtypes then as PyTorch's kernel does.
    compute = _compute_dtype(input.dtype)
    out = _conv3d(input.to(compute), weight.to(compute), _to_compute(bias, compute), stride, padding, dilation,
                  groups, batched)
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({cpp_type_name(input.dtype)}) and bias type "
                           f"({cpp_type_name(bias.dtype)}) should be the same")
    if any(d > 1 for d in dilation):
        # A dilated convolution runs PyTorch's slow_conv_dilated kernel: int64 and the floating dtypes.
        if input.dtype not in (_C.int64, _C.float16, _C.bfloat16, _C.float32, _C.float64):
            raise NotImplementedError(f"\"slow_conv_dilated<>\" not implemented for '{_aten_name(input.dtype)}'")
    elif input.dtype == _C.bool:
        raise NotImplementedError(f"\"slow_conv3d_cpu\" not implemented for '{_aten_name(input.dtype)}'")
    if weight.dtype != input.dtype:
        raise _mismatch(input.dtype, weight.dtype)
    return _from_compute(out, input.dtype)


def _conv3d(input, weight, bias, stride, padding, dilation, groups, batched):
    if not batched:
        input = input.unsqueeze(0)
    stride, dilation = _triple(stride), _triple(dilation)
    input, padding = _resolve_padding(input, weight, stride, dilation, padding, 3)
    padding = _triple(padding)
    if padding[0]:
        input = pad(input, [0, 0, 0, 0, padding[0], padding[0]])
    n, c, depth, height, width = input.shape
    out_channels, taps = weight.shape[0], weight.shape[2]
    out_depth = (depth - dilation[0] * (taps - 1) - 1) // stride[0] + 1
    if out_depth <= 0:
        raise RuntimeError(f"Calculated padded input size per channel: ({depth} x {height} x {width}). Kernel size: "
                           f"({' x '.join(map(str, weight.shape[2:]))}). Kernel size can't be greater than actual "
                           "input size")
    span = (out_depth - 1) * stride[0] + 1
    # planes[n, d_out, g, tap, c] = input[n, g*C/g + c, d_out*stride + tap*dilation]: each output depth is
    # one 2-D convolution over its taps' planes, whose channels are (group, tap, channel) in that order.
    planes = _C.stack([input.narrow(2, k * dilation[0], span)[:, :, ::stride[0]] for k in range(taps)], 1)
    planes = planes.reshape(n, taps, groups, c // groups, out_depth, height, width)
    planes = planes.permute(0, 4, 2, 1, 3, 5, 6).reshape(n * out_depth, groups * taps * (c // groups), height, width)
    kernel = weight.transpose(1, 2).reshape(out_channels, taps * weight.shape[1], *weight.shape[3:])
    out = conv2d(planes, kernel, None, stride[1:], padding[1:], dilation[1:], groups)
    out = out.reshape(n, out_depth, out_channels, *out.shape[2:]).transpose(1, 2)
    if bias is not None:
        out = out + bias.view(-1, 1, 1, 1)
    out = out.contiguous()
    return out if batched else out.squeeze(0)


def _scatter_depth(planes, start, step, length):
    """planes (N, D, ...) placed along dim 1 at start, start+step, ..., in zeros of that dim's `length`."""
    n, depth = planes.shape[:2]
    if step > 1:
        gaps = planes.new_zeros((n, depth, step - 1) + tuple(planes.shape[2:]))
        planes = _C.cat([planes.unsqueeze(2), gaps], 2).flatten(1, 2).narrow(1, 0, (depth - 1) * step + 1)
    after = length - start - planes.shape[1]
    parts = [planes.new_zeros((n, start) + tuple(planes.shape[2:])), planes,
             planes.new_zeros((n, after) + tuple(planes.shape[2:]))]
    return _C.cat([p for p in parts if p.shape[1]], 1)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    _tensor_arg("conv_transpose3d", "input", 1, input)
    _tensor_arg("conv_transpose3d", "weight", 2, weight)
    _tensor_arg("conv_transpose3d", "bias", 3, bias, optional=True)
    return _conv_transpose3d_checked(input, weight, bias, stride, padding, output_padding, groups, dilation)


@_named("conv_transpose3d")
def _conv_transpose3d_checked(input, weight, bias, stride, padding, output_padding, groups, dilation):
    stride, padding, dilation, output_padding = _check_params("conv_transpose3d", stride, padding, dilation, groups,
                                                              output_padding)
    batched = _check_3d("conv_transpose3d", input, weight, bias, groups, True)
    input, weight, bias = lower_precision_inputs(input, weight, bias)
    # The shapes are checked by computing (in a common dtype); the dtypes then as PyTorch's kernel does
    # (its slow kernel has int64 and the floating dtypes).
    compute = _compute_dtype(input.dtype)
    out = _conv_transpose3d(input.to(compute), weight.to(compute), _to_compute(bias, compute), stride, padding,
                            output_padding, groups, dilation, batched)
    if input.dtype not in (_C.int64, _C.float16, _C.bfloat16, _C.float32, _C.float64):
        raise NotImplementedError(f"\"slow_conv_transpose3d_out_cpu\" not implemented for "
                                  f"'{_aten_name(input.dtype)}'")
    # (PyTorch's kernel reads no data of an empty batch, and so checks no other dtype then.)
    if weight.dtype != input.dtype and input.numel():
        raise _mismatch(input.dtype, weight.dtype)
    if bias is not None and bias.dtype != input.dtype and input.numel():
        raise _mismatch(input.dtype, bias.dtype)
    return _from_compute(out, input.dtype)


def _conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation, batched):
    if not batched:
        input = input.unsqueeze(0)
    stride, padding, dilation = _triple(stride), _triple(padding), _triple(dilation)
    output_padding = _triple(output_padding)
    for d in range(3):
        if output_padding[d] >= stride[d] and output_padding[d] >= dilation[d]:
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_depth: {output_padding[0]} output_padding_height: "
                               f"{output_padding[1]} output_padding_width: {output_padding[2]} stride_depth: "
                               f"{stride[0]} stride_height: {stride[1]} stride_width: {stride[2]} dilation_depth: "
                               f"{dilation[0]} dilation_height: {dilation[1]} dilation_width: {dilation[2]}")
    # Reduced floats are summed over the taps in float32 and rounded once, as PyTorch's kernels accumulate.
    dtype = input.dtype
    if dtype in (_C.float16, _C.bfloat16):
        input, weight = input.float(), weight.float()
        bias = None if bias is None else bias.float()
    n, in_channels, depth = input.shape[:3]
    taps, per_group = weight.shape[2], weight.shape[1]
    out_channels = per_group * groups
    # One 2-D transposed convolution per input depth plane, with the depth taps stacked into the output
    # channels as (group, tap, channel); each tap's planes then land at depth d*stride + tap*dilation.
    kernel = weight.transpose(1, 2).reshape(in_channels, taps * per_group, *weight.shape[3:])
    planes = input.transpose(1, 2).reshape(n * depth, in_channels, *input.shape[3:])
    out = conv_transpose2d(planes, kernel, None, stride[1:], padding[1:], output_padding[1:], groups, dilation[1:])
    out = out.reshape(n, depth, groups, taps, per_group, *out.shape[2:])
    full = (depth - 1) * stride[0] + dilation[0] * (taps - 1) + 1 + output_padding[0]
    total = None
    for k in range(taps):
        tap = out[:, :, :, k].reshape(n, depth, out_channels, *out.shape[5:])
        placed = _scatter_depth(tap, k * dilation[0], stride[0], full)
        total = placed if total is None else total + placed
    out_depth = full - 2 * padding[0]
    if out_depth <= 0:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). Calculated "
                           f"output size per channel: ({out_depth} x {' x '.join(map(str, total.shape[3:]))}). "
                           "Output size is too small")
    out = total.narrow(1, padding[0], out_depth).transpose(1, 2)
    if bias is not None:
        out = out + bias.view(-1, 1, 1, 1)
    out = out.to(dtype).contiguous()
    return out if batched else out.squeeze(0)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over (time, batch, channels) input with a (width, in, out) weight."""
    _tensor_arg("conv_tbc", "self", 1, input)
    _tensor_arg("conv_tbc", "weight", 2, weight)
    _tensor_arg("conv_tbc", "bias", 3, bias)
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not {type(pad).__name__}")
    return _conv_tbc(input, weight, bias, int(pad))


@_named("conv_tbc")
def _conv_tbc(input, weight, bias, pad):
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    input, weight, bias = lower_precision_inputs(input, weight, bias)
    length, batch, out_channels, width = input.shape[0], input.shape[1], weight.shape[2], weight.shape[0]
    out_length = length - width + 1 + 2 * pad
    if out_length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_length}: "
                           f"[{out_length}, {batch}, {out_channels}]")
    dtype = input.dtype
    # The output starts as the bias (in the input's dtype), and each tap that overlaps it adds a matmul
    # of input and weight: those need one dtype, which the matmul kernels have (not bool).
    taps_overlap = any(min(length + pad - k, out_length) - max(0, pad - k) > 0 for k in range(width))
    if taps_overlap and batch * out_channels > 0:
        if weight.dtype != dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_aten_name(dtype)} and "
                               f"{_aten_name(weight.dtype)}")
        if dtype == _C.bool:
            raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    compute = _compute_dtype(dtype)
    bias = bias.to(dtype).to(compute)
    if out_length == 0 or width == 0 or not taps_overlap:
        out = bias.expand(out_length, batch, out_channels)
        return _from_compute(out, dtype).contiguous()
    input, weight = input.to(compute), weight.to(compute)
    if pad < 0:
        # A negative pad drops -pad steps of time at each end.
        input = input.narrow(0, -pad, length + 2 * pad)
        pad = 0
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return _from_compute(out.permute(2, 0, 1), dtype).contiguous()

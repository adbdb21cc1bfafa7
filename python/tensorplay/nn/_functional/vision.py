"""Padding, resampling and the vision layers' functions.

Resampling is separable: each spatial dim is resampled on its own, the last first, by index_select
with source indices and weights computed here in NumPy with PyTorch's index arithmetic (float32
for every dtype but float64, whose kernels compute in double), so that gradients, autocast and
every dtype follow from the tensor ops. grid_sample gathers its taps from the flattened input.
"""

import contextlib
import fractions
import math
import numbers
import warnings

import numpy as np

import tensorplay
from tensorplay._C import _nn

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "fold", "unfold",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "grid_sample",
           "affine_grid"]

_REDUCED_FLOATS = (tensorplay.float16, tensorplay.bfloat16)
_DTYPE_NAMES = {tensorplay.float16: "Half", tensorplay.bfloat16: "BFloat16", tensorplay.uint8: "Byte",
                tensorplay.int8: "Char", tensorplay.int16: "Short", tensorplay.int32: "Int", tensorplay.int64: "Long",
                tensorplay.bool: "Bool"}


def _not_implemented_for(name, kernel, dtype):
    """PyTorch's error for a dtype its kernel lacks, from the function `name`."""
    return NotImplementedError(f"[{name}] \"{kernel}\" not implemented for '{_DTYPE_NAMES.get(dtype, dtype)}'")


def _tensor_arg(op, name, position, value):
    if not isinstance(value, tensorplay.Tensor):
        raise TypeError(f"[{op}] {op}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")
    return value


def _int_arg(op, name, position, value):
    """An int argument; a one-element integer tensor counts as one, as in PyTorch."""
    if isinstance(value, tensorplay.Tensor) and value.numel() == 1 and not value.is_floating_point() \
            and value.dtype != tensorplay.bool:
        return int(value.item())
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"[{op}] {op}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def _ints_arg(op, name, position, value, n=None):
    """A tuple of ints; with n, an int stands for n of itself."""
    if n is not None and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * n
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"[{op}] {op}(): argument '{name}' (position {position}) must be tuple of ints, not "
                        f"{type(value).__name__}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"[{op}] {op}(): argument '{name}' (position {position}) must be tuple of ints, but "
                            f"found element of type {type(v).__name__} at pos {i}")
    return tuple(int(v) for v in value)


def _on(array, like, dtype=None):
    """A NumPy array as a tensor on like's device (index tensors: int64; weights: dtype)."""
    t = tensorplay.from_numpy(np.ascontiguousarray(array))
    if dtype is not None:
        t = t.to(dtype)
    return t.to(like.device)


def _opmath(t):
    """t in the dtype PyTorch's kernels compute in: float32 for the 16-bit floats."""
    return t.float() if t.dtype in _REDUCED_FLOATS else t


def _autocast_off(like):
    """A region in which the ops of a composite run as called, for the pieces of an op that PyTorch
    does not autocast: under autocast, cat and stack would otherwise promote their 16-bit inputs (and
    refuse the 16-bit dtype that is not the region's), where PyTorch's kernel keeps the input's dtype."""
    device = like.device.type
    if tensorplay.is_autocast_available(device) and tensorplay.is_autocast_enabled(device):
        return tensorplay.autocast(device, enabled=False)
    return contextlib.nullcontext()


# ---------------------------------------------------------------------------------------------
# pad

def pad(input, pad, mode="constant", value=None):
    _tensor_arg("pad", "input", 1, input)
    pad = list(_ints_arg("pad", "pad", 2, pad))
    if not isinstance(mode, str):
        raise TypeError(f"[pad] pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}")
    if isinstance(value, tensorplay.Tensor) and value.numel() == 1:  # a number, to PyTorch
        value = value.item()
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise TypeError(f"[pad] pad(): argument 'value' (position 4) must be float, not {type(value).__name__}")
    if mode == "constant":
        if value is not None:
            _check_fill_value(value, input.dtype)
        return _nn.pad(input, pad, mode, 0.0 if value is None else float(value))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"[pad] Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'[pad] Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) % 2:
        raise RuntimeError("[pad] Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("[pad] Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.dim()}")
    spatial = len(pad) // 2
    if not (1 <= spatial <= 3 and input.dim() in (spatial + 1, spatial + 2)):
        raise NotImplementedError(
            f"[pad] Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        with _autocast_off(input):  # PyTorch's circular pad is a composite of copies, not autocast
            return _pad_circular(input, pad)
    # A batch dim (the one before the channels) may be empty; the others may not.
    leading = input.dim() - spatial - 1
    if any(s == 0 for s in input.shape[leading:]):
        raise RuntimeError(f"[pad] Expected {spatial + 1}D or {spatial + 2}D (batch mode) tensor with possibly 0 batch "
                           f"size and other non-zero dimensions for input, but got: {list(input.shape)}")
    for i in range(spatial):
        size = input.shape[-1 - i]
        out = size + pad[2 * i] + pad[2 * i + 1]
        if out < 0 or (spatial == 1 and out < 1):
            raise RuntimeError(f"[pad] input (W: {size}) is too small. Calculated output W: {out}")
        if mode == "reflect" and (pad[2 * i] >= size or pad[2 * i + 1] >= size):
            raise RuntimeError("[pad] Padding size should be less than the corresponding input dimension, but got: "
                               f"padding ({pad[2 * i]}, {pad[2 * i + 1]}) at dimension {input.dim() - 1 - i} of input "
                               f"{list(input.shape)}")
    if input.dtype == tensorplay.bool:
        kernel = ("reflection_pad" if mode == "reflect" else "replication_pad") + f"{spatial}d"
        raise _not_implemented_for("pad", kernel, input.dtype)
    # Positions map to the input as if it were padded on both sides: pad, then crop what is negative.
    # Autocast runs reflection_pad1d/2d and replication_pad1d/2d/3d in float32; reflection_pad3d is
    # not on its list, and keeps a 16-bit input's dtype.
    region = _autocast_off(input) if mode == "reflect" and spatial == 3 else contextlib.nullcontext()
    with region:
        padded = _nn.pad(input, [max(p, 0) for p in pad], mode, 0.0) if any(p > 0 for p in pad) else input
    return _crop(padded, pad)


# The values a fill value must lie within: integer dtypes' ranges, and the floats' largest finite
# value (infinities and NaN fill floats).
_INTEGER_RANGES = {tensorplay.uint8: (0, 2 ** 8 - 1), tensorplay.int8: (-2 ** 7, 2 ** 7 - 1),
                   tensorplay.int16: (-2 ** 15, 2 ** 15 - 1), tensorplay.int32: (-2 ** 31, 2 ** 31 - 1),
                   tensorplay.int64: (-2 ** 63, 2 ** 63 - 1)}
_FLOAT_MAX = {tensorplay.float16: 65504.0, tensorplay.bfloat16: 3.3895313892515355e38,
              tensorplay.float32: 3.4028234663852886e38}


def _check_fill_value(value, dtype):
    value = float(value)
    if dtype in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[dtype]
        fits = float(low) <= value <= float(high)  # NaN and the infinities do not
    else:
        fits = not (math.isfinite(value) and abs(value) > _FLOAT_MAX.get(dtype, math.inf))
    if not fits:
        raise RuntimeError(f"[pad] value cannot be converted to type {dtype} without overflow")


def _crop(input, pad):
    """input less what pad's negative entries take off each side."""
    out = input
    for i in range(len(pad) // 2):
        dim, before, after = input.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        start, stop = max(-before, 0), out.shape[dim] - max(-after, 0)
        if start or stop != out.shape[dim]:
            out = out.narrow(dim, min(start, out.shape[dim]), max(stop - start, 0))
    return out


def _pad_circular(input, pad):
    out = input
    for i in range(len(pad) // 2):
        dim, before, after = input.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        if before > input.shape[dim] or after > input.shape[dim]:
            raise RuntimeError("[pad] Padding value causes wrapping around more than once.")
        total = input.shape[dim] + before + after
        if total < 0:
            raise RuntimeError("[pad] Negative padding value is resulting in an empty dimension")
        out = _crop(out, [0, 0] * i + [before, after])
        if total == 0:
            out = out.narrow(dim, 0, 0)
            continue
        size = out.shape[dim]
        if before > size or after > size:  # PyTorch would copy the wrapped part onto itself
            raise RuntimeError(f"[pad] circular padding ({before}, {after}) of dim {dim} wraps past the {size} "
                               "elements left after cropping")
        parts = [out.narrow(dim, size - before, before)] if before > 0 else []
        parts.append(out)
        if after > 0:
            parts.append(out.narrow(dim, 0, after))
        out = tensorplay.cat(parts, dim) if len(parts) > 1 else out
    return out


# ---------------------------------------------------------------------------------------------
# interpolate: source indices and weights along one dim, as PyTorch's upsample kernels compute them

def _scale(n_in, n_out, scale, ftype):
    """compute_scales_value: 1/scale_factor where one was passed through, else in/out."""
    return ftype(1.0 / scale) if scale is not None and scale > 0 else ftype(n_in) / ftype(n_out)


def _nearest_taps(n_in, n_out, scale, exact):
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return [(dst, None)]
    if not exact and n_out == 2 * n_in:
        return [(dst >> 1, None)]
    ratio = _scale(n_in, n_out, scale, np.float32)
    src = dst.astype(np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return [(np.minimum(np.floor(src * ratio).astype(np.int64), n_in - 1), None)]


def _pixel_scale(n_in, n_out, scale, align_corners, ftype):
    """area_pixel_compute_scale."""
    if align_corners:
        return ftype(n_in - 1) / ftype(n_out - 1) if n_out > 1 else ftype(0)
    return _scale(n_in, n_out, scale, ftype)


def _source_coords(n_in, n_out, scale, align_corners, ftype, cubic):
    """area_pixel_compute_source_index for every output position."""
    ratio = _pixel_scale(n_in, n_out, scale, align_corners, ftype)
    dst = np.arange(n_out, dtype=ftype)
    if align_corners:
        return ratio * dst
    if ftype is np.float32:
        # PyTorch's build fuses this multiply-add (one rounding): the product is exact in float64.
        src = (np.float64(ratio) * (dst.astype(np.float64) + 0.5) - 0.5).astype(np.float32)
    else:
        src = ratio * (dst + ftype(0.5)) - ftype(0.5)
    return src if cubic else np.maximum(src, ftype(0))


def _linear_taps(n_in, n_out, scale, align_corners, ftype):
    src = _source_coords(n_in, n_out, scale, align_corners, ftype, cubic=False)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(ftype), ftype(0), ftype(1)).astype(ftype)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    return [(i0, ftype(1) - lam), (i1, lam)]


def _cubic_weights(t, a=-0.75):
    """get_cubic_upsample_coefficients: Keys' cubic kernel's four weights at offset t (an array or a
    tensor) from the tap before the point."""
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far((1 - t) + 1)]


def _cubic_taps(n_in, n_out, scale, align_corners, ftype):
    src = _source_coords(n_in, n_out, scale, align_corners, ftype, cubic=True)
    start = np.floor(src)
    coefficients = _cubic_weights((src - start).astype(ftype))
    start = start.astype(np.int64)
    return [(np.clip(start - 1 + k, 0, n_in - 1), w.astype(ftype)) for k, w in enumerate(coefficients)]


def _taps(mode, n_in, n_out, scale, align_corners, ftype):
    if mode in ("nearest", "nearest-exact"):
        return _nearest_taps(n_in, n_out, scale, exact=mode == "nearest-exact")
    if mode == "bicubic":
        return _cubic_taps(n_in, n_out, scale, align_corners, ftype)
    if n_in == n_out:  # PyTorch's linear kernels keep such a dim whatever the scale factor: x*1 + x*0
        same = np.arange(n_out)
        return [(same, np.ones(n_out, ftype)), (same, np.zeros(n_out, ftype))]
    return _linear_taps(n_in, n_out, scale, align_corners, ftype)


def _along(values, x, dim):
    """A 1-D tensor shaped to broadcast along x's dim."""
    shape = [1] * x.dim()
    shape[dim] = values.shape[0]
    return values.view(shape)


def _resample_dim(x, dim, taps, dtype):
    """sum over taps of x at the tap's indices along dim, times its weights (rounded to dtype, then
    computed with in x's)."""
    out = None
    for index, weight in taps:
        picked = x.index_select(dim, _on(index, x))
        if weight is not None:
            picked = picked * _along(_on(weight, x, dtype).to(x.dtype), x, dim)
        out = picked if out is None else out + picked
    return out


def _antialias_filter(x, cubic):
    """The filters of PyTorch's antialiased modes: a triangle, or Keys' cubic with a = -0.5."""
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0).astype(x.dtype)
    # Keys' kernel at x: the weight of the tap x after the point (x < 1), or after the one before it.
    near, far = _cubic_weights(x, a=-0.5)[1], _cubic_weights(x - 1, a=-0.5)[0]
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(x.dtype)


def _antialias_dim(x, dim, n_in, n_out, scale, align_corners, cubic, ftype):
    """Antialiased resampling along one dim, as PyTorch's separable kernel computes it: each output
    averages the inputs under the filter, stretched by the downscaling ratio, centred on it."""
    ratio = _pixel_scale(n_in, n_out, scale, align_corners, ftype)
    half_width = ftype(2 if cubic else 1)
    support = half_width * ratio if ratio >= 1 else half_width
    most = int(math.ceil(support)) * 2 + 1
    stretch = ftype(1) / ratio if ratio >= 1 else ftype(1)
    center = ratio * (np.arange(n_out, dtype=ftype) + ftype(0.5))
    first = np.maximum((center - support + ftype(0.5)).astype(np.int64), 0)
    count = np.clip(np.minimum((center + support + ftype(0.5)).astype(np.int64), n_in) - first, 0, most)
    k = np.arange(most)[:, None]
    inside = k < count
    weights = np.where(inside, _antialias_filter(((k + first).astype(ftype) - center + ftype(0.5)) * stretch, cubic),
                       ftype(0))
    total = np.zeros(n_out, ftype)
    for row in weights:  # summed in order, as PyTorch does
        total = total + row
    weights = np.where(total != 0, weights / np.where(total != 0, total, ftype(1)), weights).astype(ftype)
    out = None
    for j in range(int(count.max())):
        picked = x.index_select(dim, _on(np.minimum(first + j, n_in - 1), x))
        if not inside[j].all():
            picked = tensorplay.where(_along(_on(inside[j], x), x, dim), picked, 0)
        picked = picked * _along(_on(weights[j], x, x.dtype), x, dim)
        out = picked if out is None else out + picked
    return out


def _uint8_filter(x, cubic, antialias):
    """The filters of PyTorch's uint8 resampling, in double: a triangle, or Keys' cubic with a = -0.5
    antialiased and a = -0.75 (the float kernels' constant) not."""
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0.0)
    a = -0.5 if antialias else -0.75
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _uint8_window(n_in, n_out, scale, align_corners, antialias, cubic):
    """(first index, count, weights (taps x n_out), largest weight) of PyTorch's uint8 resampling
    along one dim, all in double. Antialiased: the filter stretched by the downscaling ratio over
    the inputs under it, normalized to sum 1. Not: the float kernels' taps around the source index,
    the weights of taps past an edge added to the edge's tap, and the largest weight the largest
    partial sum met on the way."""
    ratio = _pixel_scale(n_in, n_out, scale, align_corners, float)
    half_width = 2 if cubic else 1
    if antialias:
        support = half_width * ratio if ratio >= 1 else float(half_width)
        most = math.ceil(support) * 2 + 1
        center = ratio * (np.arange(n_out) + 0.5)
        first = np.maximum((center - support + 0.5).astype(np.int64), 0)
        count = np.clip(np.minimum((center + support + 0.5).astype(np.int64), n_in) - first, 0, most)
        k = np.arange(most)[:, None]
        offsets = (k + first - center + 0.5) * (1.0 / ratio if ratio >= 1 else 1.0)
        weights = np.where(k < count, _uint8_filter(offsets, cubic, antialias), 0.0)
        total = np.zeros(n_out)
        for row in weights:  # summed in order, as PyTorch does
            total = total + row
        weights = np.where(total != 0, weights / np.where(total != 0, total, 1), weights)
        return first, count, weights, max(float(np.where(total != 0, weights, 0).max()), 0.0)
    most = 2 * half_width
    dst = [fractions.Fraction(i) for i in range(n_out)]
    if align_corners:
        src = np.array([float(fractions.Fraction(ratio) * i) for i in dst])
    else:  # scale * (i + 0.5) - 0.5 with one rounding, as PyTorch's build fuses it
        half = fractions.Fraction(1, 2)
        src = np.array([float(fractions.Fraction(ratio) * (i + half) - half) for i in dst])
        if not cubic:
            src = np.maximum(src, 0.0)
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)  # floorf
    lam = np.clip(src - index, 0.0, 1.0)
    low = index - half_width + 1
    first = np.maximum(low, 0)
    count = np.clip(np.minimum(index + half_width + 1, n_in) - first, 0, most)
    weights, largest = np.zeros((most, n_out)), 0.0
    slot, outputs = np.zeros(n_out, np.int64), np.arange(n_out)
    for j in range(most):
        w = _uint8_filter(float(j + 1 - half_width) - lam, cubic, antialias)
        slot = np.where(low + j <= 0, 0, np.where(low + j >= n_in - 1, count - 1, slot))
        weights[slot, outputs] += w
        largest = max(largest, float(weights[slot, outputs].max()))
        slot = slot + 1
    return first, count, weights, largest


def _uint8_dim(x, dim, n_in, n_out, scale, align_corners, antialias, cubic):
    """PyTorch's uint8 bilinear or bicubic (antialiased or not) along one dim: the filter's weights in
    double, quantized to int16 with as many fraction bits as fit, summed in integers, rounded to uint8."""
    first, count, weights, largest = _uint8_window(n_in, n_out, scale, align_corners, antialias, cubic)
    bits = 0
    while bits < 22 and int(0.5 + largest * (1 << (bits + 1))) < 1 << 15:
        bits += 1
    fixed = np.trunc(weights * (1 << bits) + np.where(weights < 0, -0.5, 0.5)).astype(np.int64)
    wide, acc = x.to(tensorplay.int64), None
    for j in range(int(count.max())):
        weight = np.where(j < count, fixed[j], 0)
        term = wide.index_select(dim, _on(np.minimum(first + j, n_in - 1), x)) * _along(_on(weight, x), x, dim)
        acc = term if acc is None else acc + term
    return ((acc + (1 << (bits - 1))) // (1 << bits)).clamp(0, 255).to(tensorplay.uint8)


def _area_dim(x, dim, n_in, n_out):
    """adaptive_avg_pool along one dim: the mean of each window [floor(i*in/out), ceil((i+1)*in/out)).
    Windows differ in length: a short one repeats its last index, masked out of the sum."""
    if n_out == 0:
        return x.narrow(dim, 0, 0)
    dst = np.arange(n_out)
    start, stop = dst * n_in // n_out, -(-(dst + 1) * n_in // n_out)
    length = stop - start
    total = None
    for k in range(int(length.max())):
        picked = x.index_select(dim, _on(np.minimum(start + k, stop - 1), x))
        if (k >= length).any():
            picked = tensorplay.where(_along(_on(k < length, x), x, dim), picked, 0)
        total = picked if total is None else total + picked
    return total / _along(_on(length, x, x.dtype), x, dim)


_INTERPOLATE_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area", "nearest-exact")
_SPATIAL_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}
_UPSAMPLE_OPS = {"nearest": "upsample_nearest{}d", "nearest-exact": "_upsample_nearest_exact{}d",
                 "linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d", "bicubic": "upsample_bicubic2d",
                 "trilinear": "upsample_trilinear3d"}


def _is_integer(x):
    return isinstance(x, numbers.Integral) or (isinstance(x, tensorplay.Tensor) and not x.is_floating_point())


def _output_size_and_scales(input, dim, size, scale_factor):
    if size is not None and scale_factor is not None:
        raise ValueError("[interpolate] only one of size or scale_factor should be defined")
    if size is not None:
        if not isinstance(size, (list, tuple)):
            if not _is_integer(size):
                raise TypeError(f"[interpolate] size must be an int or a tuple of ints, but got {type(size).__name__}")
            return [int(size)] * dim, None
        if len(size) != dim:
            raise ValueError(
                "[interpolate] Input and output must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please provide "
                "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        if not all(_is_integer(s) for s in size):
            raise TypeError("[interpolate] expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
        return _int64_sizes([int(s) for s in size]), None
    if scale_factor is None:
        raise ValueError("[interpolate] either size or scale_factor should be defined")
    if not isinstance(scale_factor, (list, tuple)):
        scales = [scale_factor] * dim
    elif len(scale_factor) != dim:
        raise ValueError(
            "[interpolate] Input and scale_factor must have the same number of spatial dimensions, but got input "
            f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
            "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
    else:
        scales = list(scale_factor)
    if not all(isinstance(s, numbers.Real) for s in scales):
        raise TypeError("[interpolate] scale_factor must be a float or a tuple of floats, but got "
                        f"{[type(s).__name__ for s in scales]}")
    return None, scales


def _int64_sizes(sizes):
    if not all(-2 ** 63 <= s < 2 ** 63 for s in sizes):
        raise TypeError(f"[interpolate] the output size {sizes} does not fit in int64")
    return sizes


def _floor_to_int64(x):
    """static_cast<int64_t>(floor(x)), as the kernels size their output: out of range, INT64_MIN."""
    low, high = -2 ** 63, 2 ** 63
    return math.floor(x) if low <= x < high else low  # NaN compares false: INT64_MIN too


def _check_upsample(input, mode, sizes):
    dim = input.dim() - 2
    names = ("D: ", "H: ", "W: ")[3 - dim:]
    if any(n <= 0 for n in input.shape[2:]) or any(n <= 0 for n in sizes):
        shown = ", ".join(f"{k}{v}" for k, v in zip(names, input.shape[2:]))
        wanted = ", ".join(f"{k}{v}" for k, v in zip(names, sizes))
        raise RuntimeError(f"[interpolate] Input and output sizes should be greater than 0, but got input ({shown}) "
                           f"output ({wanted})")
    if input.shape[1] == 0:
        raise RuntimeError(f"[interpolate] Non-empty {input.dim()}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    # uint8 images resample in the nearest modes, bilinear and bicubic (in PyTorch's fixed point).
    allowed = input.is_floating_point() or (input.dtype == tensorplay.uint8 and
                                            (mode.startswith("nearest") or mode in ("bilinear", "bicubic")))
    if not allowed:
        raise _not_implemented_for("interpolate", _UPSAMPLE_OPS[mode].format(dim), input.dtype)


def _check_area(input, sizes):
    """adaptive_avg_pool{1,2,3}d's checks: sizes may be 0, the input's spatial dims may not."""
    op = f"adaptive_avg_pool{input.dim() - 2}d"
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"[interpolate] {op}: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{', '.join(str(n) for n in sizes)}}}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"[interpolate] {op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {d} being empty")
    if not input.is_floating_point():
        raise _not_implemented_for("interpolate", op, input.dtype)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    _tensor_arg("interpolate", "input", 1, input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("[interpolate] align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    elif not isinstance(align_corners, bool):
        raise TypeError(f"[interpolate] align_corners must be bool, not {type(align_corners).__name__}")
    dim = input.dim() - 2
    output_size, scales = _output_size_and_scales(input, dim, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("[interpolate] recompute_scale_factor is not meaningful with an explicit size.")
    # area always takes an output size: scale factors become one, as with recompute_scale_factor.
    if recompute_scale_factor or (mode == "area" and output_size is None):
        output_size = _int64_sizes([math.floor(input.shape[2 + i] * scales[i]) for i in range(dim)])
        scales = None
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
            raise ValueError("[interpolate] Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                             "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4:
        if align_corners or not antialias:
            raise ValueError("[interpolate] Lanczos mode does not support align_corners=True" if align_corners else
                             "[interpolate] Lanczos mode requires antialias=True")
        raise NotImplementedError("[interpolate] interpolate: mode 'lanczos' is not supported by tensorplay")
    if not 3 <= input.dim() <= 5 or mode not in _INTERPOLATE_MODES:
        raise NotImplementedError(
            f"[interpolate] Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")
    if _SPATIAL_DIMS.get(mode, dim) != dim:
        raise NotImplementedError(f"[interpolate] Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_SPATIAL_DIMS[mode] + 2}D input")
    if output_size is None:
        output_size = [_floor_to_int64(input.shape[2 + i] * scales[i]) for i in range(dim)]
    if mode == "area":
        _check_area(input, output_size)
    else:
        _check_upsample(input, mode, output_size)
    if antialias and input.dtype not in (tensorplay.float32, tensorplay.float64, tensorplay.uint8):
        raise _not_implemented_for("interpolate", "compute_index_ranges_weights", input.dtype)
    if input.dim() == 4 and mode == "nearest":
        return _nearest_kernel(input, output_size, scales)
    x = input if mode.startswith("nearest") else _opmath(input)
    ftype = np.float64 if input.dtype == tensorplay.float64 else np.float32
    # The last dim first: PyTorch's kernels sum the taps of the last dim innermost.
    for i in reversed(range(dim)):
        dim_i, n_in, n_out = 2 + i, input.shape[2 + i], output_size[i]
        if mode == "area":
            x = _area_dim(x, dim_i, n_in, n_out)
        elif input.dtype == tensorplay.uint8 and mode in ("bilinear", "bicubic"):
            if n_in != n_out:
                x = _uint8_dim(x, dim_i, n_in, n_out, scales[i] if scales else None, align_corners, antialias,
                               mode == "bicubic")
        elif antialias:
            if n_in != n_out:  # PyTorch's separable kernels skip a dim that keeps its size
                x = _antialias_dim(x, dim_i, n_in, n_out, scales[i] if scales else None, align_corners,
                                   mode == "bicubic", ftype)
        else:
            taps = _taps(mode, n_in, n_out, scales[i] if scales else None, align_corners, ftype)
            # PyTorch's bicubic kernel stores its weights in the input's dtype, the linear ones in float.
            x = _resample_dim(x, dim_i, taps, input.dtype if mode == "bicubic" else x.dtype)
    return x.to(input.dtype)


def _nearest_kernel(input, output_size, scales):
    """The C++ kernel's 4-D nearest. (Its bilinear mode computes a + (b - a) * w, which is NaN where
    an input is infinite and PyTorch's w0 * a + w1 * b is not: bilinear is composed here.) Where a
    dim keeps its size PyTorch copies it whatever the scale factor; a scale factor of 1 makes the
    kernel do the same."""
    if scales is not None:
        scales = [1.0 if n == input.shape[2 + i] else float(s) for i, (n, s) in enumerate(zip(output_size, scales))]
    return _nn.interpolate(input, list(output_size), scales, "nearest", False)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------------------------------
# Sliding blocks: unfold (im2col) and fold (col2im)

def _blocks(spatial, kernel_size, dilation, padding, stride):
    return [(spatial[i] + 2 * padding[i] - dilation[i] * (kernel_size[i] - 1) - 1) // stride[i] + 1 for i in range(2)]


def _check_block_args(op, kernel_size, dilation, padding, stride):
    for name, values, least in (("kernel size", kernel_size, 1), ("dilation", dilation, 1), ("stride", stride, 1),
                                ("padding", padding, 0)):
        if len(values) != 2:
            raise RuntimeError(f"[{op}] It is expected {name} equals to 2, but got size {len(values)}")
        if any(v < least for v in values):
            relation = "greater than zero" if least else "non-negative"
            raise RuntimeError(f"[{op}] {name} should be {relation}, but got {name[:1]}_height: {values[0]} "
                               f"{name[:1]}_width: {values[1]}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    _tensor_arg("unfold", "input", 1, input)
    kernel_size, dilation, padding, stride = (_ints_arg("unfold", name, i + 2, value, 2) for i, (name, value) in
                                              enumerate((("kernel_size", kernel_size), ("dilation", dilation),
                                                         ("padding", padding), ("stride", stride))))
    _check_block_args("unfold", kernel_size, dilation, padding, stride)
    if input.dim() < 3:  # PyTorch reads the input's dim 2 before checking its rank
        raise IndexError(f"[unfold] Dimension out of range (expected to be in range of [{-input.dim()}, "
                         f"{input.dim() - 1}], but got {input.dim()})")
    if input.dim() not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError("[unfold] Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    n, c, height, width = x.shape
    rows, cols = _blocks((height, width), kernel_size, dilation, padding, stride)
    if rows < 1 or cols < 1:
        raise RuntimeError(
            f"[unfold] Given input with spatial size ({height}, {width}), kernel_size=({kernel_size[0]}, "
            f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
            f"calculated shape of the array of sliding blocks as ({rows}, {cols}), but its components must be at "
            "least one.")
    if not (input.is_floating_point() or input.dtype == tensorplay.bool):
        raise _not_implemented_for("unfold", "im2col_out_cpu", input.dtype)
    x = _nn.pad(x, [padding[1], padding[1], padding[0], padding[0]], "constant", 0.0)
    # One strided slice per kernel position: the elements that position sees in every block.
    patches = [x[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (rows - 1) + 1:stride[0],
                 j * dilation[1]:j * dilation[1] + stride[1] * (cols - 1) + 1:stride[1]]
               for i in range(kernel_size[0]) for j in range(kernel_size[1])]
    with _autocast_off(x):  # PyTorch's im2col is not autocast: a 16-bit input keeps its dtype
        out = tensorplay.stack(patches, 2).reshape(n, c * kernel_size[0] * kernel_size[1], rows * cols)
    return out if input.dim() == 4 else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    _tensor_arg("fold", "input", 1, input)
    output_size, kernel_size, dilation, padding, stride = (
        _ints_arg("fold", name, i + 2, value, 2) for i, (name, value) in enumerate(
            (("output_size", output_size), ("kernel_size", kernel_size), ("dilation", dilation),
             ("padding", padding), ("stride", stride))))
    if len(output_size) != 2:
        raise RuntimeError(f"[fold] It is expected output_size equals to 2, but got size {len(output_size)}")
    _check_block_args("fold", kernel_size, dilation, padding, stride)
    if input.dim() not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError("[fold] Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    n, channels_k, length = x.shape
    k = kernel_size[0] * kernel_size[1]
    if channels_k % k:
        raise RuntimeError("[fold] Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={channels_k} and kernel_size=({kernel_size[0]}, "
                           f"{kernel_size[1]}).")
    rows, cols = _blocks(output_size, kernel_size, dilation, padding, stride)
    if rows * cols != length:
        raise RuntimeError(
            f"[fold] Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel_size[0]}, "
            f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
            f"stride=({stride[0]}, {stride[1]}), expected size of input's dimension 2 to match the calculated number "
            f"of sliding blocks {rows} * {cols} = {rows * cols}, but got input.size(2)={length}.")
    if not (input.is_floating_point() or input.dtype == tensorplay.bool):
        raise _not_implemented_for("fold", "col2im_out_cpu", input.dtype)
    c = channels_k // k
    height, width = output_size[0] + 2 * padding[0], output_size[1] + 2 * padding[1]
    # Where each (kernel position, block) element lands in the padded output, flattened.
    i, j, r, s = np.meshgrid(np.arange(kernel_size[0]), np.arange(kernel_size[1]), np.arange(rows), np.arange(cols),
                             indexing="ij")
    target = (i * dilation[0] + r * stride[0]) * width + j * dilation[1] + s * stride[1]
    index = _on(target.reshape(1, 1, -1), x).expand(n, c, k * length)
    out = tensorplay.zeros(n, c, height * width, dtype=x.dtype, device=x.device)
    out = out.scatter_add(2, index, x.reshape(n, c, k * length)).view(n, c, height, width)
    out = out[:, :, padding[0]:padding[0] + output_size[0], padding[1]:padding[1] + output_size[1]]
    return out if input.dim() == 3 else out.squeeze(0)


# ---------------------------------------------------------------------------------------------
# Channel rearrangements

def pixel_shuffle(input, upscale_factor):
    _tensor_arg("pixel_shuffle", "input", 1, input)
    r = _int_arg("pixel_shuffle", "upscale_factor", 2, upscale_factor)
    if input.dim() < 3:
        raise RuntimeError("[pixel_shuffle] pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"[pixel_shuffle] pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("[pixel_shuffle] pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible "
                           f"by {r * r}")
    n = len(batch)
    out = input.reshape(*batch, c // (r * r), r, r, h, w)
    out = out.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return out.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    _tensor_arg("pixel_unshuffle", "input", 1, input)
    r = _int_arg("pixel_unshuffle", "downscale_factor", 2, downscale_factor)
    if input.dim() < 3:
        raise RuntimeError("[pixel_unshuffle] pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"[pixel_unshuffle] pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if h % r:
        raise RuntimeError("[pixel_unshuffle] pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("[pixel_unshuffle] pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    if input.numel() == 0:  # PyTorch returns an empty input as it is, whatever its shape
        return input.clone()
    n = len(batch)
    out = input.reshape(*batch, c, h // r, r, w // r, r)
    out = out.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return out.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    _tensor_arg("channel_shuffle", "input", 1, input)
    groups = _int_arg("channel_shuffle", "groups", 2, groups)
    if input.dim() < 3:
        raise RuntimeError("[channel_shuffle] channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError("[channel_shuffle] Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *spatial = input.shape
    if c % groups:
        raise RuntimeError(f"[channel_shuffle] Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    out = input.reshape(n, groups, c // groups, *spatial).transpose(1, 2)
    return out.reshape(n, c, *spatial)


# ---------------------------------------------------------------------------------------------
# Spatial transformers: affine_grid and grid_sample

_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")


def native_channel_shuffle(input, groups):
    """channel_shuffle under the name of PyTorch's kernel, which nn.functional exports too."""
    return channel_shuffle(input, groups)


def _linspace_from_neg_one(steps, align_corners, like):
    if steps <= 1:
        return tensorplay.zeros(steps, dtype=like.dtype, device=like.device)
    line = tensorplay.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return line if align_corners else line * (steps - 1) / steps


def affine_grid(theta, size, align_corners=None):
    _tensor_arg("affine_grid", "theta", 1, theta)
    size = list(_ints_arg("affine_grid", "size", 2, size))
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"[affine_grid] Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"[affine_grid] Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"[affine_grid] Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("[affine_grid] affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"[affine_grid] Expected non-zero, positive output size. Got {size}")
    k = len(spatial)
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"[affine_grid] Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    # The base grid holds (x, y[, z], 1) at each output position, x along the last dim, in theta's
    # dtype, as PyTorch builds it outside autocast's reach; only the product with theta, a matmul,
    # runs in the autocast dtype.
    with _autocast_off(theta):
        axes = []
        for j, steps in enumerate(reversed(spatial)):
            shape = [1] * k
            shape[k - 1 - j] = steps
            axes.append(_linspace_from_neg_one(steps, align_corners, theta).view(shape).expand(*spatial))
        axes.append(tensorplay.ones(*spatial, dtype=theta.dtype, device=theta.device))
        base = tensorplay.stack(axes, -1).reshape(1, -1, k + 1)
    grid = tensorplay.matmul(base, theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, k)


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """reflect_coordinates: coord folded back and forth into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    flips = (coord / span).floor()
    extra = coord - flips * span
    return tensorplay.where(flips.remainder(2) == 0, extra + low, span - extra + low)


def _apply_padding(coord, size, padding_mode, align_corners):
    """compute_coordinates: where a source coordinate reads under padding_mode."""
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        coord = coord.clamp(0, size - 1)
    return coord


def _gather_taps(flat, sizes, taps):
    """sum over taps of weight * input at integer coords (zero outside the input).
    flat: (N, C, prod(sizes)); taps: [(coords per spatial dim, weight)], each (N, Q)."""
    n, c = flat.shape[0], flat.shape[1]
    out = None
    for coords, weight in taps:
        index, inside = None, None
        for coord, size in zip(coords, sizes):
            within = (coord >= 0) & (coord <= size - 1)
            inside = within if inside is None else inside & within
            part = tensorplay.where(within, coord, 0).to(tensorplay.int64)  # NaN and inf too: read, then dropped
            index = part if index is None else index * size + part
        values = flat.gather(2, index.unsqueeze(1).expand(n, c, index.shape[1]))
        # A tap outside the input is skipped, as by PyTorch: a NaN or infinity read in its place
        # adds nothing (nor NaN to the gradients).
        values = tensorplay.where(inside.unsqueeze(1), values, 0)
        term = values * tensorplay.where(inside, weight, 0).unsqueeze(1)
        out = term if out is None else out + term
    return out


def _check_grid_sample(input, grid, mode):
    """PyTorch's checks, in its order: shapes first, then the dtype its kernels take, then the match."""
    if input.dim() == 0 or grid.dim() == 0:
        raise IndexError("[grid_sample] Dimension specified as 0 but tensor has no dimensions")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("[grid_sample] grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"[grid_sample] grid_sampler(): expected grid to have size {input.dim() - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError("[grid_sample] grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("[grid_sample] grid_sampler(): bicubic interpolation only supports 4D input")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError("[grid_sample] grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {d} being empty")
    if not input.is_floating_point():
        kernel = "grid_sampler_2d_cpu" if input.dim() == 4 else "grid_sampler_3d_cpu"
        raise _not_implemented_for("grid_sample", kernel, input.dtype)
    if input.dtype != grid.dtype:
        raise RuntimeError(f"[grid_sample] grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("[grid_sample] nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("[grid_sample] nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    _tensor_arg("grid_sample", "input", 1, input)
    _tensor_arg("grid_sample", "grid", 2, grid)
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not isinstance(align_corners, bool):
        raise TypeError("[grid_sample] grid_sampler(): argument 'align_corners' (position 5) must be bool, not "
                        f"{type(align_corners).__name__}")
    device = input.device.type
    if tensorplay.is_autocast_available(device) and tensorplay.is_autocast_enabled(device):
        # grid_sampler is on autocast's float32 list: 16-bit floats are sampled in float32.
        input, grid = (t.float() if t.dtype in _REDUCED_FLOATS else t for t in (input, grid))
    _check_grid_sample(input, grid, mode)
    n, c, *sizes = input.shape
    out_spatial = grid.shape[1:-1]
    g = grid.reshape(n, -1, len(sizes))
    # grid's last dim lists x (the last spatial dim) first.
    coords = [_unnormalize(g[..., len(sizes) - 1 - d], size, align_corners) for d, size in enumerate(sizes)]
    flat = input.reshape(n, c, -1)
    if mode == "bicubic":
        out = _bicubic_grid_sample(flat, coords, sizes, padding_mode, align_corners)
    else:
        coords = [_apply_padding(coord, size, padding_mode, align_corners) for coord, size in zip(coords, sizes)]
        out = _gather_taps(flat, sizes, _nearest_grid_taps(coords) if mode == "nearest" else _linear_grid_taps(coords))
    return out.reshape(n, c, *out_spatial)


def _nearest_grid_taps(coords):
    nearest = [coord.round() for coord in coords]  # rounds half to even, as nearbyint
    # A weight of 1 that depends on the grid: PyTorch gives the grid a zero gradient, not none.
    one = nearest[0] - nearest[0] + 1
    return [(nearest, one)]


def _linear_grid_taps(coords):
    """The 2**k corners around each point, weighted by the opposite sub-volume."""
    lows = [coord.floor() for coord in coords]
    # PyTorch's order of operations, which 16-bit floats round along: (low + 1 - coord) and
    # (coord - low), multiplied from the last dim (x) to the first.
    spans = [((low + 1) - coord, coord - low) for coord, low in zip(coords, lows)]
    taps = []
    for corner in range(2 ** len(coords)):
        upper = [(corner >> (len(coords) - 1 - d)) & 1 for d in range(len(coords))]
        weight = None
        for up, span in zip(reversed(upper), reversed(spans)):
            weight = span[up] if weight is None else weight * span[up]
        taps.append(([low + up for low, up in zip(lows, upper)], weight))
    return taps


def _bicubic_grid_sample(flat, coords, sizes, padding_mode, align_corners):
    """Keys' cubic over the 4x4 neighbours of each point, each read where padding_mode puts it: along
    x within each of the four rows, then across the rows, as PyTorch sums (16-bit floats round alike)."""
    (y, x), (height, width) = coords, sizes
    y0, x0 = y.floor(), x.floor()
    wy, wx = _cubic_weights(y - y0), _cubic_weights(x - x0)
    columns = [_apply_padding(x0 + (j - 1), width, padding_mode, align_corners) for j in range(4)]
    out = None
    for i in range(4):
        row_y = _apply_padding(y0 + (i - 1), height, padding_mode, align_corners)
        row = _gather_taps(flat, sizes, [([row_y, column], wx[j]) for j, column in enumerate(columns)])
        term = row * wy[i].unsqueeze(1)
        out = term if out is None else out + term
    return out

"""Pooling.

The 2-D max/avg pools and adaptive_avg_pool2d are C++ kernels; the 1-D forms run them on an
unsqueezed dim. The 3-D, adaptive-max and fractional pools are composites that pool one spatial dim
at a time, last dim first: each step gathers every window's elements along that dim, so the
gradient reaches exactly the elements that were picked or summed. A max pool carries each element's
flat index (PyTorch's convention: d * H * W + h * W + w) through the same steps; taking the first
maximum of each step, last dim first, gives the first maximum of the whole window in row-major
order, which is the one torch's kernels return.
"""

import functools
import inspect
import math
import numbers
import re

import tensorplay
from tensorplay.amp.composite_casts import float32_inputs
from tensorplay._C import _nn
from tensorplay._dtypes import aten_name
from tensorplay.nn._functional._checks import _names
from tensorplay.nn._functional._utils import _pair, _single, _triple
from tensorplay.nn._functional.activation import relu

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
    "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]

_FLOATS = ("float32", "float64", "float16", "bfloat16")
_INTEGERS = ("int8", "int16", "int32", "int64", "uint8")


# ---------------------------------------------------------------------------------------------
# Arguments as torch's binding reads them, and errors that name the op.


def _int_like(v):
    """An int as torch's binding reads one: a Python int (not a bool) or an integral tensor of one
    element; None for anything else."""
    if isinstance(v, bool):
        return None
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, tensorplay.Tensor) and v.numel() == 1 and _dtype_name(v.dtype) in _INTEGERS + ("bool",):
        return int(v.item())
    return None


def _int_list_arg(op, name, value):
    """An int[] argument: an int (returned as an int) or a sequence of ints (as a tuple)."""
    single = _int_like(value)
    if single is not None:
        return single
    if isinstance(value, (tuple, list)):
        items = []
        for i, item in enumerate(value):
            as_int = _int_like(item)
            if as_int is None:
                raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, but found element of type "
                                f"{type(item).__name__} at pos {i}")
            items.append(as_int)
        return tuple(items)
    raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")


def _sized(op, name, value, n, optional):
    """An int[n] argument of a pool: n ints (a single one repeated); None for an omitted stride."""
    if optional and value is None:
        return None
    value = _int_list_arg(op, name, value)
    if isinstance(value, int):
        value = (value,)
    if optional and len(value) == 0:
        return None
    if len(value) not in (1, n):
        raise RuntimeError(f"{op}: {name} must either be a single int, or a tuple of {n} ints, "
                           f"but got size {len(value)}")
    for v in value:
        if not -2 ** 31 <= v < 2 ** 31:
            raise RuntimeError(f"{op}: value cannot be converted to type int without overflow")
    return value * n if len(value) == 1 else value


def _convert(op, name, kind, value):
    if kind in ("T", "T?"):
        if value is None and kind == "T?":
            return value
        if not isinstance(value, tensorplay.Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be {'Tensor' if kind == 'T' else 'Tensor?'}, "
                            f"not {type(value).__name__}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{op}(): argument '{name}' must be bool, not {type(value).__name__}")
        return value
    if kind == "int?":
        if value is None:
            return value
        as_int = _int_like(value)
        if as_int is None:
            raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
        return as_int
    if kind == "ints":
        return _int_list_arg(op, name, value)
    if kind == "ints?":
        return None if value is None else _int_list_arg(op, name, value)
    if kind.startswith("ints"):  # ints<n>, ints<n>? (a stride: None when omitted or empty)
        return _sized(op, name, value, int(kind[4]), kind.endswith("?"))
    raise AssertionError(kind)


def _op(op, **kinds):
    """The function checks its arguments as torch's binding does (kinds: argument -> "T", "T?",
    "bool", "int?", "ints", "ints<n>", "ints<n>?"), and its errors name the op, as torch's do."""
    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                for name, kind in kinds.items():
                    bound.arguments[name] = _convert(op, name, kind, bound.arguments[name])
                return fn(*bound.args, **bound.kwargs)
            except (RuntimeError, ValueError, TypeError, IndexError) as e:
                message = str(e)
                if _names(message, op):
                    raise
                message = re.sub(r"^\[[\w.]+\] ", "", message)
                try:
                    renamed = type(e)(f"[{op}] {message}")
                except Exception:
                    raise e from None
                raise renamed.with_traceback(e.__traceback__) from None
        return wrapper
    return decorate


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def _require_dtype(input, kernel, dtypes):
    """torch's kernels are compiled for some dtypes only; the others raise as torch does."""
    name = _dtype_name(input.dtype)
    if name not in dtypes:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{aten_name(input.dtype)}\'')


def _ntuple(x, n):
    """x as an n-tuple: a number repeated (a ratio may be a float, which _pair refuses), or x as given."""
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _pool_stride(stride):
    """The op's stride argument: [] (the kernel size) for None or an empty sequence."""
    return [] if stride is None or (not isinstance(stride, int) and len(stride) == 0) else list(_pair(stride))


def _pool_args(kernel_size, stride, padding, dilation):
    return list(_pair(kernel_size)), _pool_stride(stride), list(_pair(padding)), list(_pair(dilation))


def _expand_args(n, kernel_size, stride, padding, dilation=1):
    """kernel_size, stride (the kernel size when None or empty), padding and dilation as n-tuples."""
    expand = (_single, _pair, _triple)[n - 1]
    kernel = expand(kernel_size)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else expand(stride)
    return kernel, stride, expand(padding), expand(dilation)


def _pooling_output_size(size, kernel, stride, pad, dilation, ceil_mode):
    """PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the input or
    its left padding."""
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _spatial(input, n):
    return list(input.shape[-n:])


def _batched(input, n):
    """input with a batch dim of one added when it is unbatched (C, *spatial)."""
    return input if input.dim() == n + 2 else input.unsqueeze(0)


def _unbatched_like(output, input, n):
    return output if input.dim() == n + 2 else output.squeeze(0)


# ---------------------------------------------------------------------------------------------
# Windows along one dim: a (out, k) table of input positions (the same for every plane), or an
# (N, C, out, k) one (a plane's own, for fractional pooling).

def _gather_windows(x, dim, positions):
    """x's elements at `positions` along dim, as x with dim moved last and replaced by (out, k)."""
    moved = x.movedim(dim, -1)
    out, k = positions.shape[-2:]
    if positions.dim() == 2:
        gathered = moved.index_select(-1, positions.reshape(-1))
    else:
        plane = positions.reshape(*positions.shape[:2], *[1] * (moved.dim() - 3), out * k)
        gathered = moved.gather(-1, plane.expand(*moved.shape[:-1], out * k))
    return gathered.reshape(*moved.shape[:-1], out, k)


def _max_step(values, indices, dim, positions):
    """Each window's first maximum along dim, and the flat index that it carries. torch's kernels
    take each NaN they meet (`val > max || isnan(val)`): a window with NaNs gives its last one."""
    candidates = _gather_windows(values, dim, positions)
    best = candidates.argmax(-1, keepdim=True)
    if candidates.is_floating_point():
        nan = candidates.isnan()
        order = tensorplay.arange(1, candidates.shape[-1] + 1, device=candidates.device)
        last_nan = (nan * order).argmax(-1, keepdim=True)
        best = tensorplay.where(nan.any(-1, keepdim=True), last_nan, best)
    values = candidates.gather(-1, best).squeeze(-1).movedim(-1, dim)
    indices = _gather_windows(indices, dim, positions).gather(-1, best).squeeze(-1).movedim(-1, dim)
    return values, indices


def _max_over_windows(input, positions):
    """(values, indices) of the max of each window; positions[i] is the table of spatial dim i of
    the batched input (N, C, *spatial)."""
    n = len(positions)
    spatial = _spatial(input, n)
    flat = tensorplay.arange(math.prod(spatial), dtype=tensorplay.int64, device=input.device)
    indices = flat.reshape(spatial).expand(*input.shape)
    values = input
    for i in reversed(range(n)):
        values, indices = _max_step(values, indices, i - n, positions[i])
    return values, indices


def _sum_over_windows(input, positions, weights):
    """Each window's sum: weights[i] ((out, k), 0 or 1) says which entries of positions[i] count."""
    n = len(positions)
    out = input
    for i in reversed(range(n)):
        windows = _gather_windows(out, i - n, positions[i])
        out = (windows * weights[i].to(windows.dtype)).sum(-1).movedim(-1, i - n)
    return out


def _positions(rows, device):
    """An int64 (out, k) table from rows of positions (a window shorter than k repeats its first
    position; its weights are 0 there)."""
    k = max(len(row) for row in rows)
    table = [row + [row[0]] * (k - len(row)) for row in rows]
    return tensorplay.tensor(table, dtype=tensorplay.int64, device=device).reshape(len(rows), k)


def _window_table(size, kernel, stride, pad, dilation, out, device):
    """The positions of each window of a strided pool along one dim, and which of them are inside
    the input. A position in the padding repeats the window's first position inside the input: it
    is never the first maximum unless that one is, and its weight for a sum is 0."""
    rows, inside = [], []
    for o in range(out):
        window = [o * stride - pad + j * dilation for j in range(kernel)]
        valid = [0 <= p < size for p in window]
        first = next((p for p, v in zip(window, valid) if v), 0)
        rows.append([p if v else first for p, v in zip(window, valid)])
        inside.append([float(v) for v in valid])
    return _positions(rows, device), tensorplay.tensor(inside, device=device).reshape(out, kernel)


def _adaptive_table(size, out, device):
    """Adaptive pooling's windows: output o covers [floor(o * size / out), ceil((o + 1) * size / out))."""
    rows = [list(range(o * size // out, -(-(o + 1) * size // out))) for o in range(out)]
    k = max((len(row) for row in rows), default=1)
    weights = [[1.0] * len(row) + [0.0] * (k - len(row)) for row in rows]
    counts = [len(row) for row in rows]
    return _positions(rows, device), tensorplay.tensor(weights, device=device), counts


def _no_windows(input, out):
    """The empty result of an adaptive pool to a size with a 0 in it (the kernels gather nothing)."""
    return input.new_zeros([*input.shape[:-len(out)], *out])


# ---------------------------------------------------------------------------------------------
# Max pooling.

def _check_pool_args(name, kernel, stride, pad, dilation):
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got {tuple(kernel)}")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{name}: stride must be greater than zero, but got {tuple(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{name}: dilation must be greater than zero, but got {tuple(dilation)}")
    for k, p, d in zip(kernel, pad, dilation):
        if p < 0 or p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")


def _check_output_size(input, n, out):
    if any(o <= 0 for o in out):
        given = "x".join(str(s) for s in input.shape[-n - 1:])
        calculated = "x".join(str(s) for s in [input.shape[-n - 1], *out])
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calculated}). "
                           "Output size is too small")


def _check_batch_mode(input, n, name):
    """An unbatched (C, *spatial) or batched (N, C, *spatial) input, with a zero batch size allowed
    and every other dim non-empty."""
    if input.dim() not in (n + 1, n + 2) or any(s == 0 for s in input.shape[-n - 1:]):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")


def _max_pool_geometry(input, n, kernel, stride, padding, dilation, ceil_mode, name):
    """Checks a max pool's arguments as torch does; its output's spatial size."""
    _check_pool_args(name, kernel, stride, padding, dilation)
    sizes = _spatial(input, n)
    out = [_pooling_output_size(*args, ceil_mode) for args in zip(sizes, kernel, stride, padding, dilation)]
    _check_output_size(input, n, out)
    return out


def _max_pool_composite(input, n, kernel, stride, padding, dilation, out):
    tables = [_window_table(*args, input.device)[0]
              for args in zip(_spatial(input, n), kernel, stride, padding, dilation, out)]
    values, indices = _max_over_windows(_batched(input, n), tables)
    return _unbatched_like(values, input, n), _unbatched_like(indices, input, n)


def _check_max_pool2d_input(input):
    if input.dim() not in (3, 4):
        raise RuntimeError(f"max_pool2d: non-empty 3D or 4D (batch mode) tensor expected for input, "
                           f"but got {list(input.shape)}")
    _check_batch_mode(input, 2, "max_pool2d")


def _max_pool(input, n, kernel_size, stride, padding, dilation, ceil_mode, name, kernel_name):
    """(values, indices): the C++ 2-D kernel for floating inputs (1-D on an unsqueezed dim), the
    composite for 3-D and for integers, which the kernel does not take."""
    kernel, stride, padding, dilation = _expand_args(n, kernel_size, stride, padding, dilation)
    out = _max_pool_geometry(input, n, kernel, stride, padding, dilation, ceil_mode, name)
    _require_dtype(input, kernel_name, _FLOATS + _INTEGERS)
    if n == 3 or not input.is_floating_point():
        return _max_pool_composite(input, n, kernel, stride, padding, dilation, out)
    if n == 2:
        return _nn.max_pool2d_with_indices(input, list(kernel), list(stride), list(padding), list(dilation), ceil_mode)
    values, indices = _nn.max_pool2d_with_indices(input.unsqueeze(-2), [1, *kernel], [1, *stride], [0, *padding],
                                                  [1, *dilation], ceil_mode)
    # The row's flat index h * W + w is w: h is always 0.
    return values.squeeze(-2), indices.squeeze(-2)


@_op('max_pool1d_with_indices', input="T", kernel_size="ints1", stride="ints1?", padding="ints1", dilation="ints1", ceil_mode="bool")
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    _check_batch_mode(input, 1, "max_pool1d")
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, "max_pool1d", "max_pool2d")


@_op('max_pool1d', input="T", kernel_size="ints1", stride="ints1?", padding="ints1", dilation="ints1", ceil_mode="bool")
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    _check_batch_mode(input, 1, "max_pool1d")
    kernel, stride, padding, dilation = _expand_args(1, kernel_size, stride, padding, dilation)
    _max_pool_geometry(input, 1, kernel, stride, padding, dilation, ceil_mode, "max_pool1d")
    # torch's 1-D pool without indices has a kernel of its own, for floating inputs only.
    _require_dtype(input, "max_pool1d_impl", _FLOATS)
    return _nn.max_pool2d(input.unsqueeze(-2), [1, *kernel], [1, *stride], [0, *padding], [1, *dilation],
                          ceil_mode).squeeze(-2)


@_op('max_pool2d_with_indices', input="T", kernel_size="ints2", stride="ints2?", padding="ints2", dilation="ints2", ceil_mode="bool")
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    _check_max_pool2d_input(input)
    if input.is_floating_point():
        return _nn.max_pool2d_with_indices(input, *_pool_args(kernel_size, stride, padding, dilation), ceil_mode)
    if input.dim() not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got {list(input.shape)}")
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d", "max_pool2d")


@_op('max_pool2d', input="T", kernel_size="ints2", stride="ints2?", padding="ints2", dilation="ints2", ceil_mode="bool")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    _check_max_pool2d_input(input)
    if return_indices or not input.is_floating_point():
        values, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
        return (values, indices) if return_indices else values
    return _nn.max_pool2d(input, *_pool_args(kernel_size, stride, padding, dilation), ceil_mode)


@_op('max_pool3d_with_indices', input="T", kernel_size="ints3", stride="ints3?", padding="ints3", dilation="ints3", ceil_mode="bool")
def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if any(s == 0 for s in input.shape[-4:]):
        raise RuntimeError("max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions to "
                           f"have positive length, but input has a shape of {list(input.shape)}")
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d", "max_pool3d")


@_op('max_pool3d', input="T", kernel_size="ints3", stride="ints3?", padding="ints3", dilation="ints3", ceil_mode="bool")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if not return_indices:  # on autocast's float32 list, which max_pool3d_with_indices is not on
        input, = float32_inputs(input)
    values, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, indices) if return_indices else values


# ---------------------------------------------------------------------------------------------
# Average pooling. torch's kernels take floats and int64 (which divides truncating); tensorplay's
# C++ kernel takes floats, so int64 goes through the composite.

@_op('avg_pool1d', input="T", kernel_size="ints1", stride="ints1?", padding="ints1", ceil_mode="bool", count_include_pad="bool")
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    kernel, stride, padding, _ = _expand_args(1, kernel_size, stride, padding)
    if not input.is_floating_point():
        return _avg_pool_composite(input, 1, kernel, stride, padding, ceil_mode, count_include_pad, None,
                                   "avg_pool1d", "avg_pool2d")
    return _nn.avg_pool2d(input.unsqueeze(-2), [1, *kernel], [1, *stride], [0, *padding], ceil_mode,
                          count_include_pad, None).squeeze(-2)


@_op('avg_pool2d', input="T", kernel_size="ints2", stride="ints2?", padding="ints2", ceil_mode="bool", count_include_pad="bool", divisor_override="int?")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if input.dim() < 3:  # torch's kernel reads input.size(-3) first
        if input.dim() == 0:
            raise IndexError("avg_pool2d: Dimension specified as -3 but tensor has no dimensions")
        raise IndexError(f"avg_pool2d: Dimension out of range (expected to be in range of [{-input.dim()}, "
                         f"{input.dim() - 1}], but got -3)")
    if not input.is_floating_point():
        if input.dim() not in (3, 4):
            raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, "
                               f"but got {list(input.shape)}")
        kernel, stride, padding, _ = _expand_args(2, kernel_size, stride, padding)
        return _avg_pool_composite(input, 2, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                   "avg_pool2d", "avg_pool2d")
    return _nn.avg_pool2d(input, list(_pair(kernel_size)), _pool_stride(stride), list(_pair(padding)), ceil_mode,
                          count_include_pad, divisor_override)


@_op('avg_pool3d', input="T", kernel_size="ints3", stride="ints3?", padding="ints3", ceil_mode="bool", count_include_pad="bool", divisor_override="int?")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    input, = float32_inputs(input)
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel, stride, padding, _ = _expand_args(3, kernel_size, stride, padding)
    return _avg_pool_composite(input, 3, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override,
                               "avg_pool3d", "avg_pool3d_out_frame")


def _avg_pool_composite(input, n, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, name,
                        kernel_name):
    _check_pool_args(name, kernel, stride, padding, (1,) * n)
    if n == 3 and any(size < k for size, k in zip(_spatial(input, 3), kernel)):
        t, h, w = _spatial(input, 3)
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sizes = _spatial(input, n)
    out = [_pooling_output_size(*args, 1, ceil_mode) for args in zip(sizes, kernel, stride, padding)]
    _check_output_size(input, n, out)
    # torch's 3-D kernel has no 16-bit form; none of them has one for integers other than int64.
    _require_dtype(input, kernel_name, ("float32", "float64", "int64") if n == 3 else _FLOATS + ("int64",))
    tables, weights, divisors = [], [], []
    for size, k, s, p, o in zip(sizes, kernel, stride, padding, out):
        table, inside = _window_table(size, k, s, p, 1, o, input.device)
        tables.append(table)
        weights.append(inside)
        # The divisor counts the padding but not what a ceil_mode window has past it.
        starts = [i * s - p for i in range(o)]
        if count_include_pad:
            divisors.append([min(start + k, size + p) - start for start in starts])
        else:
            divisors.append([min(start + k, size) - max(start, 0) for start in starts])
    sums = _sum_over_windows(_batched(input, n), tables, weights)
    if divisor_override is not None:
        divisor = divisor_override
    else:
        divisor = tensorplay.ones([], dtype=tensorplay.float64, device=input.device)
        for i, counts in enumerate(divisors):
            shape = [1] * n
            shape[i] = len(counts)
            divisor = divisor * tensorplay.tensor(counts, dtype=tensorplay.float64, device=input.device).reshape(shape)
        divisor = divisor.to(sums.dtype)
    if input.is_floating_point():
        result = sums / divisor
    else:  # torch's integer kernels divide in integers, truncating
        result = sums.div(divisor, rounding_mode="trunc")
    return _unbatched_like(result, input, n)


# ---------------------------------------------------------------------------------------------
# Adaptive pooling.

def _adaptive_output_size(output_size, input, n, name):
    """output_size as n ints, as torch reads it: in 2-D and 3-D, torch.nn.functional's
    _list_with_default (None keeps the input's size) and then the binding's int[n]."""
    if n > 1 and not isinstance(output_size, (numbers.Integral, tensorplay.Tensor)):
        if not hasattr(output_size, "__len__"):
            raise TypeError(f"{name}(): object of type '{type(output_size).__name__}' has no len()")
        if input.dim() <= len(output_size):
            raise ValueError(f"{name}(): Input dimension should be at least {len(output_size) + 1}")
        output_size = [input.shape[i - len(output_size)] if s is None else s for i, s in enumerate(output_size)]
    sizes = _int_list_arg(name, "output_size", output_size)
    if isinstance(sizes, int):
        return [sizes] * n
    if len(sizes) != n:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")
    return list(sizes)


@_op('adaptive_avg_pool1d', input="T")
def adaptive_avg_pool1d(input, output_size):
    (size,) = _adaptive_output_size(output_size, input, 1, "adaptive_avg_pool1d")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' must be 2D or 3D, but got {list(input.shape)}")
    if input.shape[-1] == 0:
        raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                           f"but input has sizes {list(input.unsqueeze(-2).shape)} with dimension "
                           f"{input.dim()} being empty")
    if size < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{1, {size}}}")
    if size == 0:  # torch's kernel returns before it looks at the dtype
        return _no_windows(input, [0])
    _require_dtype(input, "adaptive_avg_pool2d", _FLOATS)
    return _nn.adaptive_avg_pool2d(input.unsqueeze(-2), [1, size]).squeeze(-2)


@_op('adaptive_avg_pool2d', input="T")
def adaptive_avg_pool2d(input, output_size):
    size = _adaptive_output_size(output_size, input, 2, "adaptive_avg_pool2d")
    if input.dim() in (3, 4):
        _check_adaptive(input, 2, size, "adaptive_avg_pool2d", spatial_only=True)
        if 0 in size:  # torch's kernel returns before it looks at the dtype
            return _no_windows(input, size)
        _require_dtype(input, "adaptive_avg_pool2d", _FLOATS)
    return _nn.adaptive_avg_pool2d(input, size)


@_op('adaptive_avg_pool3d', input="T")
def adaptive_avg_pool3d(input, output_size):
    input, = float32_inputs(input)
    out = _adaptive_output_size(output_size, input, 3, "adaptive_avg_pool3d")
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    _require_dtype(input, "adaptive_avg_pool3d_cpu", _FLOATS)
    _check_adaptive(input, 3, out, "adaptive_avg_pool3d")
    if 0 in out:
        return _no_windows(input, out)
    tables, weights, divisor = [], [], 1
    for i, (size, o) in enumerate(zip(_spatial(input, 3), out)):
        table, weight, counts = _adaptive_table(size, o, input.device)
        tables.append(table)
        weights.append(weight)
        shape = [1, 1, 1]
        shape[i] = o
        divisor = divisor * tensorplay.tensor(counts, dtype=tensorplay.float32, device=input.device).reshape(shape)
    # 16-bit inputs are summed and divided in float32 and rounded once (torch's kernel adds up in
    # the 16-bit type: the two differ by a few units in the last place).
    acc = input.float() if _dtype_name(input.dtype) in ("float16", "bfloat16") else input
    result = _sum_over_windows(_batched(acc, 3), tables, weights) / divisor.to(acc.dtype)
    return _unbatched_like(result, input, 3).to(input.dtype)


def _check_adaptive(input, n, out, name, spatial_only=False):
    """torch's checks of an adaptive pool: every dim after the first non-empty (the 2-D average
    pool's: the spatial ones only), and a non-negative output size."""
    dims = range(input.dim() - n, input.dim()) if spatial_only else range(1, input.dim())
    empty = [d for d in dims if input.shape[d] == 0]
    if empty:
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, "
                           f"but input has sizes {list(input.shape)} with dimension {empty[0]} being empty")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}(): output_size must be non-negative, but got {out}")


def _adaptive_max_pool(input, output_size, n, name):
    out = _adaptive_output_size(output_size, input, n, name)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    _check_adaptive(input, n, out, name)
    _require_dtype(input, f"{name}_cpu" if n == 3 else name, _FLOATS)
    if 0 in out:
        return _no_windows(input, out), _no_windows(input, out).long()
    tables = [_adaptive_table(size, o, input.device)[0] for size, o in zip(_spatial(input, n), out)]
    values, indices = _max_over_windows(_batched(input, n), tables)
    return _unbatched_like(values, input, n), _unbatched_like(indices, input, n)


@_op('adaptive_max_pool1d_with_indices', input="T")
def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' (position 1) must be 2D or 3D, "
                           f"but got {list(input.shape)}")
    return _adaptive_max_pool(input, output_size, 1, "adaptive_max_pool2d")


@_op('adaptive_max_pool1d', input="T")
def adaptive_max_pool1d(input, output_size, return_indices=False):
    values, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


@_op('adaptive_max_pool2d_with_indices', input="T")
def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, 2, "adaptive_max_pool2d")


@_op('adaptive_max_pool2d', input="T")
def adaptive_max_pool2d(input, output_size, return_indices=False):
    values, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


@_op('adaptive_max_pool3d_with_indices', input="T")
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    input, = float32_inputs(input)
    return _adaptive_max_pool(input, output_size, 3, "adaptive_max_pool3d")


@_op('adaptive_max_pool3d', input="T")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    values, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


# ---------------------------------------------------------------------------------------------
# Power-average pooling: (sum of x ** p over the window) ** (1 / p), as torch composes it.

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n):
    max_pool, avg_pool = ((max_pool1d, avg_pool1d), (max_pool2d, avg_pool2d), (max_pool3d, avg_pool3d))[n - 1]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # The mean times the window's size is the sum; a negative sum (odd p) keeps its sign.
    window = math.prod((_single, _pair, _triple)[n - 1](kernel_size))
    return (tensorplay.sign(out) * relu(tensorplay.abs(out))).mul(window).pow(1.0 / norm_type)


@_op('lp_pool1d', input="T", kernel_size="ints")
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


@_op('lp_pool2d', input="T", kernel_size="ints")
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


@_op('lp_pool3d', input="T", kernel_size="ints")
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ---------------------------------------------------------------------------------------------
# Max unpooling: each value written at its flat index in a zero output.

def _unpool_output_size(input, kernel, stride, padding, output_size):
    n = len(kernel)
    default = [(input.shape[i - n] - 1) * stride[i] + kernel[i] - 2 * padding[i] for i in range(n)]
    if output_size is None:
        size = default
    else:
        output_size = list(output_size)
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has "
                             f"a length of '{len(output_size)}'")
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
        size = output_size
    for d, s in enumerate(size):
        if s < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, "
                             f"but got output_size[{d}]={s}")
    return size


def _max_unpool(input, indices, output_size, n, name):
    input, = float32_inputs(input)
    if indices.dtype != tensorplay.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{aten_name(indices.dtype)}")
    if list(indices.shape) != list(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {name} should be a {n + 1}d or {n + 2}d Tensor, "
                           f"but got a tensor with {input.dim()} dimensions.")
    _require_dtype(input, "max_unpool3d" if n == 3 else "max_unpool2d", _FLOATS)
    batched, where = _batched(input, n), _batched(indices, n)
    planes = list(batched.shape[:2])
    flat_size = math.prod(output_size)
    # The meta device has no values to check, as in torch.
    if where.device.type != "meta" and where.numel() and (int(where.min()) < 0 or int(where.max()) >= flat_size):
        bad = int(where.min()) if int(where.min()) < 0 else int(where.max())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(s) for s in output_size)})")
    out = batched.new_zeros([*planes, flat_size]).scatter(2, where.reshape(*planes, -1), batched.reshape(*planes, -1))
    return _unbatched_like(out.reshape(*planes, *output_size), input, n)


@_op('max_unpool1d', input="T", indices="T", kernel_size="ints", padding="ints")
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel, stride, padding, _ = _expand_args(1, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return _max_unpool(input, indices, size, 1, "max_unpool1d")


@_op('max_unpool2d', input="T", indices="T", kernel_size="ints", padding="ints")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel, stride, padding, _ = _expand_args(2, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return _max_unpool(input, indices, size, 2, "max_unpool2d")


@_op('max_unpool3d', input="T", indices="T", kernel_size="ints", padding="ints")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel, stride, padding, _ = _expand_args(3, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return _max_unpool(input, indices, size, 3, "max_unpool3d")


# ---------------------------------------------------------------------------------------------
# Fractional max pooling: windows of kernel_size at pseudo-random starts, one sample per plane and
# dim in [0, 1) (_random_samples, (N, C, n), drawn when not given).

def _fractional_starts(samples, size, out, kernel):
    """torch's generate_intervals, in the samples' dtype as its kernel computes: start o is
    int((o + u) * alpha) - int(u * alpha) with alpha = (size - kernel) / (out - 1), the last one
    size - kernel. samples: (N, C); returns (N, C, out) int64."""
    last = tensorplay.full([*samples.shape, 1], size - kernel, dtype=tensorplay.int64, device=samples.device)
    if out == 1:
        return last
    alpha = (tensorplay.tensor(size - kernel, dtype=samples.dtype, device=samples.device)
             / tensorplay.tensor(out - 1, dtype=samples.dtype, device=samples.device))
    steps = tensorplay.arange(out - 1, device=samples.device).to(samples.dtype)
    u = samples.unsqueeze(-1)
    starts = ((steps + u) * alpha).trunc().long() - (u * alpha).trunc().long()
    return tensorplay.cat([starts, last.expand(*samples.shape, 1)], -1)


def _exactly(op, name, value, n):
    """An int[n] argument of a fractional pool: an int, or exactly n of them."""
    value = _int_list_arg(op, name, value)
    if isinstance(value, int):
        return (value,) * n
    if len(value) != n:
        raise RuntimeError(f"{op}: {name} must either be a single Int or tuple of {('Ints', 'three Ints')[n - 2]}")
    return value


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, n):
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # torch takes len() of a 2-D ratio, so a single number raises TypeError there, as here.
        if n == 2 and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        if input.dim() < n:  # torch reads input.size(-n) for the ratio
            if input.dim() == 0:
                raise IndexError(f"Dimension specified as {-n} but tensor has no dimensions")
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                             f"{input.dim() - 1}], but got {-n})")
        output_size = [int(s * r) for s, r in zip(input.shape[-n:], _ntuple(output_ratio, n))]
    if _random_samples is None:
        if input.dim() < n + 1:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                             f"{max(input.dim(), 1) - 1}], but got {-n - 1})")
        _random_samples = tensorplay.rand(1 if input.dim() == n + 1 else input.shape[0], input.shape[-n - 1], n,
                                          dtype=input.dtype, device=input.device)
    kernel = _exactly(name, "kernel_size", kernel_size, n)
    out = list(_exactly(name, "output_size", output_size, n))
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    sizes = _spatial(input, n)
    input, _random_samples = float32_inputs(input, _random_samples)
    batched = _batched(input, n)
    if _random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if _random_samples.dim() != 3 or _random_samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples to be of size [N, C, {n}]")
    if _random_samples.shape[0] < batched.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.shape[1] != batched.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    for dim, size, o, k in zip(("time", "height", "width")[3 - n:], sizes, out, kernel):
        # torch's 3-D check is stricter than its 2-D one: the last window must end before the last element.
        if o + k - 1 > size or (n == 3 and o + k - 1 == size):
            raise RuntimeError(f"{name}_out(): pool {dim} {k} too large relative to input {dim} {size}")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension: output_size={out}")
    if input.numel() == 0 or 0 in out:
        return _no_windows(input, out), _no_windows(input, out).long()
    _require_dtype(input, f"{name}_out_frame", _FLOATS)
    samples = _random_samples[:batched.shape[0]]
    # torch's sample 0 drives the last dim in 2-D (width, then height) and the first in 3-D.
    order = [1, 0] if n == 2 else [0, 1, 2]
    if any(k <= 0 for k in kernel):
        # torch's kernels do not check the pool size: each window is empty, its value -inf and its
        # index its start.
        flat = None
        for i, (size, o, k) in enumerate(zip(sizes, out, kernel)):
            starts = _fractional_starts(samples[:, :, order[i]], size, o, k) * math.prod(sizes[i + 1:])
            starts = starts.reshape(*starts.shape[:2], *[1] * i, o, *[1] * (n - 1 - i))
            flat = starts if flat is None else flat + starts
        indices = flat.expand(*batched.shape[:2], *out).contiguous()
        values = tensorplay.full(list(indices.shape), -math.inf, dtype=input.dtype, device=input.device)
        return _unbatched_like(values, input, n), _unbatched_like(indices, input, n)
    tables = []
    for i, (size, o, k) in enumerate(zip(sizes, out, kernel)):
        starts = _fractional_starts(samples[:, :, order[i]], size, o, k)
        tables.append(starts.unsqueeze(-1) + tensorplay.arange(k, device=input.device))
    values, indices = _max_over_windows(batched, tables)
    return _unbatched_like(values, input, n), _unbatched_like(indices, input, n)


@_op('fractional_max_pool2d_with_indices', input="T", kernel_size="ints", _random_samples="T?")
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


@_op('fractional_max_pool2d', input="T", kernel_size="ints", _random_samples="T?")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    values, indices = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (values, indices) if return_indices else values


@_op('fractional_max_pool3d_with_indices', input="T", kernel_size="ints", _random_samples="T?")
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


@_op('fractional_max_pool3d', input="T", kernel_size="ints", _random_samples="T?")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    values, indices = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (values, indices) if return_indices else values

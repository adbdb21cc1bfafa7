"""Statistics of a tensor's values: medians, modes and quantiles, unique values and counts, sorted
search and histograms, running extremes and log-sum-exps, differences, gradients and integrals,
covariances, NaN-ignoring reductions, and a few products (inner, vander, matrix_power, and mm under the
names dsmm and spmm).

They are composites of sort, gather, scatter_add, cumsum and the reductions: a value picked by
sort and gather carries its gradient back to the element it came from, as PyTorch's do."""

import functools
import inspect
import math
import numbers
import operator
import warnings

import tensorplay
from tensorplay import _C
from tensorplay._composites._forms import return_type, with_out, write_out
from tensorplay._dtypes import aten_name, cpp_type_name
from tensorplay.amp.composite_casts import float32_inputs, outside_autocast
from tensorplay.nn._functional._checks import _named, _tensor_arg

__all__ = [
    "median", "nanmedian", "mode", "quantile", "nanquantile", "unique", "unique_consecutive", "searchsorted",
    "bucketize", "histc", "histogram", "histogramdd", "bincount", "count_nonzero", "cummax", "cummin",
    "logcumsumexp", "diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "cov", "corrcoef", "aminmax",
    "nanmean", "nansum", "std_mean", "var_mean", "isin", "inner", "ger", "vander", "chain_matmul", "matrix_power",
    "frobenius_norm", "dsmm", "spmm",
]
METHODS = [
    "median", "nanmedian", "mode", "quantile", "nanquantile", "unique", "unique_consecutive", "histc", "histogram",
    "bincount", "count_nonzero", "cummax", "cummin", "logcumsumexp", "diff", "cov", "corrcoef", "aminmax", "nanmean",
    "nansum", "inner", "ger", "matrix_power", "cumsum_", "cumprod_",
]



_median = return_type("median", "values indices")
_nanmedian = return_type("nanmedian", "values indices")
_mode = return_type("mode", "values indices")
_cummax = return_type("cummax", "values indices")
_cummin = return_type("cummin", "values indices")
_aminmax = return_type("aminmax", "min max")
_histogram = return_type("histogram", "hist bin_edges")
_histogramdd = return_type("histogramdd", "hist bin_edges")

# PyTorch's C++ type names, as its dtype-mismatch messages print them.
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int",
                 "uint8": "unsigned char", "bool": "bool"}
_REDUCED_FLOATS = (_C.float16, _C.bfloat16)




def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{aten_name(dtype)}\'')


def _write_exact(op, out, result):
    if isinstance(out, _C.Tensor) and out.dtype != result.dtype:
        raise RuntimeError(f"{op}(): expected out tensor to have dtype {cpp_type_name(result.dtype)}, but got "
                           f"{cpp_type_name(out.dtype)} instead")
    return write_out(op, out, result)


def _write_outs(op, out, result):
    """result written into out, a tensor or (for a tuple result) a tuple of as many."""
    if not isinstance(result, tuple):
        return _write_exact(op, out, result)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{op}(): argument 'out' must be tuple of {len(result)} Tensors")
    return type(result)(*(_write_exact(op, o, r) for o, r in zip(out, result)))


def _with_exact_out(fn):
    """out= for ops whose PyTorch kernels write only into outputs of the result's own dtype."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _write_outs(fn.__name__, out, result)
    return op


def _typed(tensors=(), optional_tensors=(), bools=(), ints=(), strings=()):
    """Checks the named arguments' types as PyTorch's bindings do (None passes for ints and strings:
    the defaults that mean "not given")."""
    def decorate(fn):
        signature = inspect.signature(fn)
        positions = {name: i + 1 for i, name in enumerate(signature.parameters)}

        @functools.wraps(fn)
        def op(*args, **kwargs):
            try:
                given = signature.bind(*args, **kwargs).arguments
            except TypeError as e:
                raise TypeError(f"{fn.__name__}(): {e}") from None

            def wrong(name, kind):
                return TypeError(f"{fn.__name__}(): argument '{name}' (position {positions[name]}) must be {kind}, "
                                 f"not {type(given[name]).__name__}")

            for name in tensors:
                if name in given:
                    _tensor_arg(fn.__name__, name, positions[name], given[name])
            for name in optional_tensors:
                if name in given:
                    _tensor_arg(fn.__name__, name, positions[name], given[name], optional=True)
            for name in bools:
                if name in given and not isinstance(given[name], bool):
                    raise wrong(name, "bool")
            for name in ints:
                value = given.get(name)
                if value is not None and not isinstance(value, bool) and not isinstance(value, numbers.Integral):
                    try:  # a 0-dim integer tensor serves as an int, as in PyTorch
                        operator.index(value)
                    except TypeError:
                        raise wrong(name, "int") from None
                elif isinstance(value, bool):
                    raise wrong(name, "int")
            for name in strings:
                if given.get(name) is not None and not isinstance(given[name], str):
                    raise wrong(name, "str")
            return fn(*args, **kwargs)
        return op
    return decorate


def _wrap_dim(dim, ndim, scalar_ok=True):
    """dim as an index into ndim dims; a 0-dim tensor takes dims -1 and 0 unless scalar_ok is False."""
    if isinstance(dim, bool):
        raise TypeError("dim must be int, not bool")
    dim = operator.index(dim)
    if ndim == 0 and not scalar_ok:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim % bound


# ---------------------------------------------------------------------------------------------
# Medians and modes: sort, then pick. A whole-tensor median spreads its gradient evenly over the
# elements equal to it, as PyTorch's does; one along a dim sends it to the index it returns.

def _evenly_distributed(value, input):
    """value, with the gradient of a selection spread evenly over the elements of input equal to it."""
    if not (input.requires_grad and _C.is_grad_enabled()):
        return value
    value = value.detach()
    ties = (input == value) | (input.isnan() & value.isnan())
    share = tensorplay.where(ties, input.detach() - input, 0).sum() / ties.sum()
    return value - share  # x - 0 keeps a -0.0 median's sign


def _whole_median(input, ignore_nan):
    if input.dtype == _C.bool:
        raise _not_implemented("median_cpu", input.dtype)
    if input.numel() == 0:  # NaN, converted to the dtype as C++ converts it
        return tensorplay.full((), math.nan, dtype=_C.float64, device=input.device).to(input.dtype)
    values = input.detach().reshape(-1).sort().values  # NaN sorts last
    n = values.shape[0]
    if not input.is_floating_point():
        return _evenly_distributed(values[(n - 1) // 2], input)
    valid = (~values.isnan()).sum()
    if ignore_nan:
        k = ((valid - 1) // 2).clamp(min=0)
    else:  # a NaN anywhere is the median
        k = tensorplay.where(valid < n, n - 1, (n - 1) // 2)
    return _evenly_distributed(_take(values, k), input)


def _median_along(op, result_type, input, dim, keepdim, ignore_nan):
    if input.dtype == _C.bool:
        raise _not_implemented("median_out", input.dtype)
    dim = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        return result_type(input.clone(), tensorplay.zeros((), dtype=_C.int64, device=input.device))
    n = input.shape[dim]
    if n == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")
    values, indices = input.sort(dim, stable=True)  # NaN last, ties in their order
    if input.is_floating_point():
        valid = (~values.isnan()).sum(dim, keepdim=True)
        if ignore_nan:
            k = ((valid - 1) // 2).clamp(min=0)
        else:  # a row with NaN has the first of them as its median
            k = tensorplay.where(valid < n, valid, (n - 1) // 2)
        values, indices = values.gather(dim, k), indices.gather(dim, k)
    else:
        values, indices = values.narrow(dim, (n - 1) // 2, 1), indices.narrow(dim, (n - 1) // 2, 1)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return result_type(values, indices)


# median(x) reduces the whole tensor; median(x, None) is refused, as by PyTorch's bindings.
_WHOLE = object()


def _check_dim_given(op, dim):
    if dim is None:
        raise TypeError(f"{op}(): argument 'dim' (position 2) must be int, not NoneType")


@_typed(("input",), bools=("keepdim",), ints=("dim",))
def median(input, dim=_WHOLE, keepdim=False, *, out=None):
    _check_dim_given("median", dim)
    if dim is _WHOLE:  # PyTorch's median of a whole tensor has no out=
        if out is not None:
            raise TypeError('median() missing 1 required positional arguments: "dim"')
        return _whole_median(input, ignore_nan=False)
    result = _median_along("median", _median, input, dim, keepdim, ignore_nan=False)
    return result if out is None else _write_outs("median", out, result)


@_typed(("input",), bools=("keepdim",), ints=("dim",))
def nanmedian(input, dim=_WHOLE, keepdim=False, *, out=None):
    _check_dim_given("nanmedian", dim)
    if dim is _WHOLE:
        if out is not None:
            raise TypeError('nanmedian() missing 1 required positional arguments: "dim"')
        return _whole_median(input, ignore_nan=True)
    result = _median_along("nanmedian", _nanmedian, input, dim, keepdim, ignore_nan=True)
    return result if out is None else _write_outs("nanmedian", out, result)


@_with_exact_out
@_typed(("input",), bools=("keepdim",), ints=("dim",))
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest of equally frequent ones) and its last index."""
    dim = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        return _mode(input.clone(), tensorplay.zeros((), dtype=_C.int64, device=input.device))
    n = input.shape[dim]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    values, indices = input.sort(dim, stable=True)
    values, indices = values.movedim(dim, -1), indices.movedim(dim, -1)
    sorted_values = values.detach()
    # Runs of equal values (NaN equals nothing, as in PyTorch): each run's length, then the first
    # longest run, whose last element is the value's last occurrence in the stable sort.
    starts = tensorplay.cat([tensorplay.ones_like(sorted_values[..., :1], dtype=_C.bool),
                             sorted_values[..., 1:] != sorted_values[..., :-1]], -1)
    run = starts.long().cumsum(-1) - 1
    lengths = tensorplay.zeros_like(run).scatter_add(-1, run, tensorplay.ones_like(run))
    longest = lengths.argmax(-1, keepdim=True)
    last = lengths.cumsum(-1).gather(-1, longest) - 1
    values, indices = values.gather(-1, last).movedim(-1, dim), indices.gather(-1, last).movedim(-1, dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return _mode(values, indices)


# ---------------------------------------------------------------------------------------------
# Quantiles, as PyTorch computes them: sort, find each q's rank, gather below and above, lerp.

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    input, q = float32_inputs(input, q)
    if not isinstance(q, _C.Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
        q = tensorplay.tensor(q, dtype=input.dtype if input.is_floating_point() else _C.float32, device=input.device)
    if input.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if q.dtype != input.dtype:
        raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
    if not q.is_meta and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")

    if dim is None:
        rows, reduced = input.reshape(-1), [1] * input.dim() if keepdim else []
    else:
        dim = _wrap_dim(dim, input.dim())
        rows = input.movedim(dim, -1) if input.dim() > 0 else input.reshape(1)
        reduced = list(input.shape)
        if input.dim() > 0:
            if keepdim:
                reduced[dim] = 1
            else:
                del reduced[dim]
    n = rows.shape[-1]
    values = rows.sort(-1).values.reshape(reduced + [n])  # NaN last
    q_row = q.reshape(-1)

    nans = values.isnan()
    if ignore_nan:  # ranks among the values that are not NaN; an all-NaN row reads its first NaN
        ranks = q_row * ((~nans).sum(-1, keepdim=True) - 1)
        ranks = tensorplay.where(ranks < 0, 0, ranks)
    else:  # a row with NaN reads its last element, a NaN
        ranks = tensorplay.where(nans.any(-1, keepdim=True), n - 1, q_row * (n - 1))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    result = values.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = tensorplay.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        result = result.lerp(values.gather(-1, ranks.ceil().long()), weights)
    return result.squeeze(-1) if q.dim() == 0 else result.movedim(-1, 0)


@_with_exact_out
@_typed(("input",), bools=("keepdim",), ints=("dim",), strings=("interpolation",))
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@_with_exact_out
@_typed(("input",), bools=("keepdim",), ints=("dim",), strings=("interpolation",))
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=True)  # PyTorch's name for both


# ---------------------------------------------------------------------------------------------
# Unique values: sort (rows sorted lexicographically for dim=), mark where runs of equal values
# start, then number the runs. Their values and counts follow; the inverse scatters run numbers back.

def _runs(values, order, n, return_inverse, return_counts, inverse_shape):
    """(unique, inverse, counts) of `values` (n items along dim 0, equal ones adjacent), whose item i
    came from position order[i]. values[starts] are the runs' first items."""
    if values.dim() == 1:
        starts = values[1:] != values[:-1]
    else:
        starts = (values[1:] != values[:-1]).flatten(1).any(1)
    starts = tensorplay.cat([tensorplay.ones(min(n, 1), dtype=_C.bool, device=values.device), starts])
    unique = values[starts]
    run = starts.long().cumsum(0) - 1
    inverse = counts = None
    if return_inverse:
        inverse = tensorplay.empty_like(run).scatter(0, order, run).reshape(inverse_shape)
    if return_counts:
        counts = tensorplay.zeros(unique.shape[0], dtype=_C.int64, device=values.device).scatter_add(
            0, run, tensorplay.ones_like(run))
    return unique, inverse, counts


def _rows_along(input, dim):
    dim = _wrap_dim(dim, input.dim(), scalar_ok=False)
    n = input.shape[dim]
    if input.numel() == 0 and n != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return dim, n, input.movedim(dim, 0)


def _lexicographic_order(rows):
    """The permutation that sorts the rows of a 2-D tensor lexicographically (stable)."""
    order = tensorplay.arange(rows.shape[0], device=rows.device)
    for column in reversed(range(rows.shape[1])):
        order = order[rows[order, column].sort(stable=True).indices]
    return order


def _unique_result(unique, inverse, counts, return_inverse, return_counts):
    if not (return_inverse or return_counts):
        return unique
    return (unique,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


@_typed(("input",), bools=("sorted", "return_inverse", "return_counts"), ints=("dim",))
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    # Always sorted: PyTorch's CPU kernel sorts whatever `sorted` says.
    input = input.detach()
    if dim is None:
        values, order = input.reshape(-1).sort(stable=True)
        result = _runs(values, order, input.numel(), return_inverse, return_counts, input.shape)
        return _unique_result(*result, return_inverse, return_counts)
    dim, n, moved = _rows_along(input, dim)
    order = _lexicographic_order(moved.reshape(n, moved.numel() // n if n else 0))
    unique_rows, inverse, counts = _runs(moved[order], order, n, return_inverse, return_counts, (n,))
    return _unique_result(unique_rows.movedim(0, dim), inverse, counts, return_inverse, return_counts)


@_typed(("input",), bools=("return_inverse", "return_counts"), ints=("dim",))
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    input = input.detach()
    if dim is None:
        values = input.reshape(-1)
        order = tensorplay.arange(values.shape[0], device=input.device)
        result = _runs(values, order, values.shape[0], return_inverse, return_counts, input.shape)
        return _unique_result(*result, return_inverse, return_counts)
    dim, n, moved = _rows_along(input, dim)
    order = tensorplay.arange(n, device=input.device)
    unique_rows, inverse, counts = _runs(moved, order, n, return_inverse, return_counts, (n,))
    return _unique_result(unique_rows.movedim(0, dim), inverse, counts, return_inverse, return_counts)


# ---------------------------------------------------------------------------------------------
# Sorted search: a binary search run on every value at once, one halving per step.

def _as_tensor(op, name, value, like):
    """A Tensor or a Python number (as a 0-dim tensor) argument."""
    if isinstance(value, _C.Tensor):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor or Number, not {type(value).__name__}")
    return tensorplay.tensor(value, device=like.device)


def _take(sequence, index):
    """sequence[index] for a 1-D sequence and an index of any shape (on meta too)."""
    return sequence.index_select(0, index.reshape(-1)).reshape(index.shape)


def _search(boundaries, values, right):
    """For each value, how many of the sorted last-dim boundaries lie before it: PyTorch's lower
    (upper) bound, whose `!(b >= v)` steps a NaN value past every boundary."""
    n = boundaries.shape[-1]
    low = tensorplay.zeros(values.shape, dtype=_C.int64, device=values.device)
    high = tensorplay.full(values.shape, n, dtype=_C.int64, device=values.device)
    if n == 0:
        return low
    one_dim = boundaries.dim() == 1
    for _ in range(n.bit_length()):
        middle = (low + high) // 2
        at = middle.clamp(max=n - 1)
        boundary = _take(boundaries, at) if one_dim else boundaries.gather(-1, at)
        before = ~(boundary > values) if right else ~(boundary >= values)
        searching = low < high
        low = tensorplay.where(searching & before, middle + 1, low)
        high = tensorplay.where(searching & ~before, middle, high)
    return low


@_with_exact_out
@_typed(("sorted_sequence",), ("sorter",), bools=("out_int32", "right"), strings=("side",))
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    op = "torch.searchsorted()"
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{op}: side can only be 'left' or 'right' but got {side}")
        if right and side != "right":
            raise RuntimeError(f"{op}: side and right can't be set to opposites, got side of {side} while right "
                               "was True")
        right = side == "right"
    boundaries, values = sorted_sequence, _as_tensor("searchsorted", "input", input, sorted_sequence)
    if sorter is not None and tuple(sorter.shape) != tuple(boundaries.shape):
        raise RuntimeError(f"{op}: boundary and sorter must have the same size, but got boundary tensor "
                           f"{list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
    if values.dim() == 0 and boundaries.dim() > 1:
        raise RuntimeError(f"{op}: input value can be a scalar only when boundaries tensor dimension is 1, but we got "
                           f"boundaries tensor dim({boundaries.dim()}) and input value's dim(0) numel(1)")
    if boundaries.dim() == 0:
        raise RuntimeError(f"{op}: boundaries tensor should have positive dimension, but got 0 dimension")
    if boundaries.dim() > 1 and (boundaries.dim() != values.dim() or boundaries.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(f"{op}: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                           f"tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(boundaries.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        if sorter.dtype != _C.int64:
            raise RuntimeError(f"{op}: sorter must be a tensor of long dtype but got dtype {aten_name(sorter.dtype)}")
        if not sorter.is_meta and sorter.numel() and not bool(
                ((sorter >= 0) & (sorter < boundaries.shape[-1])).all()):
            raise RuntimeError(f"{op}: sorter index out of range")
        boundaries = boundaries.gather(-1, sorter)
    common = tensorplay.result_type(boundaries, values)
    if common == _C.bool:
        raise _not_implemented("searchsorted_out_cpu", common)
    found = _search(boundaries.detach().to(common), values.detach().to(common), right)
    return found.int() if out_int32 else found


@_with_exact_out
@_typed(("boundaries",), bools=("out_int32", "right"))
def bucketize(input, boundaries, *, out_int32=False, right=False):
    input = _as_tensor("bucketize", "input", input, boundaries)
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---------------------------------------------------------------------------------------------
# Histograms: each point's bin along each dim, counted (or weighted) by scatter_add. A point
# outside the edges adds nothing; one on the last edge falls in the last bin.

def _bin_of(points, edges):
    """(bin index, inside) of 1-D points against sorted edges."""
    bins = edges.shape[0] - 1
    inside = (points >= edges[0]) & (points <= edges[-1])
    index = (_search(edges, points, right=True) - 1).clamp(0, max(bins - 1, 0))
    return index, inside


def _count(index, inside, weight, size, dtype, device):
    """A histogram of `size` bins: weight (or 1) added at index where inside."""
    added = tensorplay.ones(index.shape, dtype=dtype, device=device) if weight is None else weight.to(dtype)
    added = tensorplay.where(inside, added, 0)
    return tensorplay.zeros(size, dtype=dtype, device=device).scatter_add(0, index, added)


@_with_exact_out
@_typed(("input",), ints=("bins",))
def histc(input, bins=100, min=0, max=0):
    low, high = float(min), float(max)
    if low == high and input.numel() > 0:
        # The range comes from the values, which meta lacks (the result's shape does not depend on it).
        low, high = (0.0, 1.0) if input.is_meta else (input.min().item(), input.max().item())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{_number(low)}, {_number(high)}] is not finite")
    if not low < high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _check_representable(low, high, input.dtype)
    if not input.is_floating_point():
        raise _not_implemented("histogram_cpu", input.dtype)
    # PyTorch's bin of x is (x - low) * bins / (high - low), each step rounded to the input's
    # dtype, with the edges rounded to it.
    edges = tensorplay.tensor([low, high], dtype=input.dtype, device=input.device)
    points = input.detach().reshape(-1)
    inside = (points >= edges[0]) & (points <= edges[1])
    index = ((points - edges[0]) * bins / (edges[1] - edges[0])).nan_to_num(0).long().clamp(0, bins - 1)
    return _count(index, inside, None, bins, input.dtype, input.device)


def _check_representable(low, high, dtype):
    """PyTorch builds the bin edges in the input's dtype: an integer dtype must hold the range."""
    if not dtype.is_floating_point and dtype != _C.bool:
        info = tensorplay.iinfo(dtype)
        if not (info.min <= low <= info.max and info.min <= high <= info.max):
            raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[str(dtype).split('.')[-1]]}"
                               " without overflow")


def _number(x):
    """A float as C++ streams print it (2, 2.5, inf, nan)."""
    return str(int(x)) if math.isfinite(x) and x == int(x) else str(x)


def _histogram_edges(op, points, bins, range):
    """The edges of each of the points' D dims: given tensors, or `bins` equal bins over `range`
    or the points' own range."""
    dims = points.shape[1]
    if isinstance(bins, _C.Tensor):
        bins = [bins]
    if isinstance(bins, numbers.Integral):
        bins = [bins] * dims
    bins = list(bins)

    def check_count():
        if len(bins) != dims:
            raise RuntimeError(f"{op}: expected {dims} sequences of bin edges for each of the {dims} dimensions of "
                               f"the input tensor, but got {len(bins)}")

    if all(isinstance(b, _C.Tensor) for b in bins):
        check_count()
        for d, edges in enumerate(bins):
            if edges.dtype != points.dtype:
                raise RuntimeError(f"{op}: input tensor and bins tensors should have the same dtype, but got input "
                                   f"with dtype {cpp_type_name(points.dtype)} and bins for dimension {d} with dtype "
                                   f"{cpp_type_name(edges.dtype)}")
            if edges.dim() != 1:
                raise RuntimeError(f"{op}: bins tensor should have one dimension, but got {edges.dim()} dimensions "
                                   f"in the bins tensor for dimension {d}")
            if edges.numel() == 0:
                raise RuntimeError(f"{op}: bins tensor should have at least 1 element, but got 0 elements in the "
                                   f"bins tensor for dimension {d}")
        return bins
    for d, count in enumerate(bins):
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}")
    if range is not None:
        if len(range) != 2 * dims:
            raise RuntimeError(f"{op}: for a {dims}-dimensional histogram range should have {2 * dims} elements, "
                               f"but got {len(range)}")
        lows, highs = [float(r) for r in range[0::2]], [float(r) for r in range[1::2]]
    elif points.numel() > 0:
        if points.dtype not in (_C.float32, _C.float64):
            raise _not_implemented("histogramdd", points.dtype)
        # The range comes from the values, which meta lacks (the result's shapes do not depend on it).
        lows, highs = ([0.0] * dims, [1.0] * dims) if points.is_meta else (points.amin(0).tolist(),
                                                                           points.amax(0).tolist())
    else:  # numpy's default range for no points
        lows, highs = [0.0] * dims, [1.0] * dims
    # PyTorch finds the range before it checks the number of bin counts.
    ranges = []
    for d, (low, high) in enumerate(zip(lows, highs)):
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"{op}: dimension {d}'s range [{_number(low)}, {_number(high)}] is not finite")
        if low > high:
            raise RuntimeError(f"{op}: min should not exceed max, but got min {_number(low)} max {_number(high)} "
                               f"for dimension {d}")
        ranges.append((low - 0.5, high + 0.5) if low == high else (low, high))
        _check_representable(*ranges[-1], points.dtype)
    check_count()
    return [tensorplay.linspace(low, high, count + 1, dtype=points.dtype, device=points.device)
            for (low, high), count in zip(ranges, bins)]


def _histogram_of_points(op, input, bins, range, weight, density, weight_shape=None):
    """(hist, edges) of the points input[..., :] (the last dim holds their coordinates); weight has
    weight_shape (by default input's shape without its last dim)."""
    points = input.detach().reshape(-1, input.shape[-1])
    edges = _histogram_edges(op, points, bins, range)
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError(f"{op}: if weight tensor is provided, input tensor and weight tensor should have the "
                               f"same dtype, but got input({cpp_type_name(input.dtype)}), and "
                               f"weight({cpp_type_name(weight.dtype)})")
        expected = list(input.shape[:-1]) if weight_shape is None else list(weight_shape)
        if list(weight.shape or [1]) != expected:
            raise RuntimeError(f"{op}: if weight tensor is provided it should have the same shape as the input tensor "
                               f"excluding its innermost dimension, but got input with shape {list(input.shape)} and "
                               f"weight with shape {list(weight.shape)}")
        weight = weight.detach().reshape(-1)
    if not input.is_floating_point():
        raise _not_implemented("histogram_cpu", input.dtype)
    sizes = [e.shape[0] - 1 for e in edges]
    flat = tensorplay.zeros(points.shape[0], dtype=_C.int64, device=input.device)
    inside = tensorplay.ones(points.shape[0], dtype=_C.bool, device=input.device)
    for d, e in enumerate(edges):
        index, inside_d = _bin_of(points[:, d], e)
        flat, inside = flat * sizes[d] + index, inside & inside_d
    hist = _count(flat, inside, weight, math.prod(sizes), input.dtype, input.device).reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * len(sizes)
            shape[d] = sizes[d]
            hist = hist / e.diff().reshape(shape)
    return hist, edges


@_with_exact_out
@_typed(("input",), ("weight",), bools=("density",))
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    # PyTorch's histogram is histogramdd of the values as points of one coordinate.
    hist, edges = _histogram_of_points("torch.histogramdd", input.reshape(-1, 1), bins, range, weight, density,
                               weight_shape=input.shape)
    return _histogram(hist, edges[0])


@_typed(("input",), ("weight",), bools=("density",))
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    # Bin counts go through a float-only dispatch first; given edges are checked before it.
    given_edges = isinstance(bins, (list, tuple)) and bins and all(isinstance(b, _C.Tensor) for b in bins)
    if not input.is_floating_point() and not given_edges:
        raise _not_implemented("histogramdd", input.dtype)
    hist, edges = _histogram_of_points("torch.histogramdd", input, bins, range, weight, density)
    return _histogramdd(hist, tuple(edges))


@_typed(("input",), ("weights",), ints=("minlength",))
def bincount(input, weights=None, minlength=0):
    if input.is_floating_point() or input.dtype == _C.bool:
        raise _not_implemented("bincount_cpu", input.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    dtype = _C.int64 if weights is None else _C.float32 if weights.dtype == _C.float32 else _C.float64
    if input.dim() == 1 and input.numel() == 0:
        return tensorplay.zeros(minlength, dtype=dtype, device=input.device)
    if input.dim() != 1 or input.min().item() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = max(int(input.max().item()) + 1, minlength)
    added = tensorplay.ones(input.shape, dtype=dtype, device=input.device) if weights is None else \
        weights.detach().to(dtype)
    return tensorplay.zeros(size, dtype=dtype, device=input.device).scatter_add(0, input.long(), added)



@_typed(("input",))
def count_nonzero(input, dim=None):
    return (input != 0).sum(dim)


# ---------------------------------------------------------------------------------------------
# Running extremes and log-sum-exps: a scan that doubles its reach each step (log2(n) steps of
# whole-tensor ops). cummax/cummin scan for the indices; the values are gathered from them, so the
# gradient goes to the index.

def _scan(x, combine):
    """The inclusive scan of x along its last dim: item i becomes combine(earlier, item i)."""
    n, reach = x.shape[-1], 1
    while reach < n:
        x = tensorplay.cat([x[..., :reach], combine(x[..., :-reach], x[..., reach:])], -1)
        reach *= 2
    return x


def _cumulative_extreme(result_type, input, dim, better, kernel):
    if input.is_complex():  # complex numbers have no order
        raise _not_implemented(kernel, input.dtype)
    dim = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        return result_type(input.clone(), tensorplay.zeros((), dtype=_C.int64, device=input.device))
    values = input.detach().movedim(dim, -1)
    n = values.shape[-1]
    index = tensorplay.arange(n, device=input.device).expand(values.shape)
    floating = input.is_floating_point()
    packed = tensorplay.stack([values.to(_C.float64) if floating else values.long(), index.to(
        _C.float64 if floating else _C.int64)], -1).movedim(-1, 0)

    # A later element replaces the running one when it is as good or better (so the last of equal
    # extremes wins) or NaN (which then stays, its last occurrence winning), as in PyTorch.
    def combine(earlier, later):
        take = better(later[0], earlier[0])
        if floating:
            take = take | later[0].isnan()
        return tensorplay.where(take, later, earlier)

    indices = _scan(packed, combine)[1].long().movedim(-1, dim).contiguous()
    return result_type(input.gather(dim, indices), indices)


@_with_exact_out
@_typed(("input",), ints=("dim",))
def cummax(input, dim):
    return _cumulative_extreme(_cummax, input, dim, lambda a, b: a >= b, "cummax_cpu")


@_with_exact_out
@_typed(("input",), ints=("dim",))
def cummin(input, dim):
    return _cumulative_extreme(_cummin, input, dim, lambda a, b: a <= b, "cummin_cpu")


def _logaddexp(a, b):
    high, low = tensorplay.maximum(a, b), tensorplay.minimum(a, b)
    # Equal infinities would give inf - inf: their sum is themselves.
    gap = tensorplay.where(high.isinf() & (high == low), 0, low - high)
    return high + gap.exp().log1p()


@_with_exact_out
@_typed(("input",), ints=("dim",))
def logcumsumexp(input, dim):
    dim = _wrap_dim(dim, input.dim())  # a bad dim is reported before the dtype, as in PyTorch
    if not input.is_floating_point():
        raise _not_implemented("logcumsumexp_out_cpu", input.dtype)
    if input.dim() == 0:
        return input.clone()
    # 16-bit inputs are summed in float32, as PyTorch's kernel does.
    x = input.float() if input.dtype in _REDUCED_FLOATS else input
    return _scan(x.movedim(dim, -1), _logaddexp).movedim(-1, dim).to(input.dtype)


# ---------------------------------------------------------------------------------------------
# Differences, gradients and integrals.

@with_out
@_typed(("input",), ints=("n", "dim"))
def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap_dim(dim, input.dim())
    parts = []
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        if not isinstance(extra, _C.Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(extra).__name__}")
        if extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for d in range(input.dim()):
            if d != dim and extra.shape[d] != input.shape[d]:
                raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({d}) = {input.shape[d]}, "
                                   f"but got tensor.size({d}) = {extra.shape[d]}")
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        input = tensorplay.cat(parts, dim)
    result = input
    for _ in range(min(n, input.shape[dim])):
        size = result.shape[dim]
        later, earlier = result.narrow(dim, 1, size - 1), result.narrow(dim, 0, size - 1)
        result = later.logical_xor(earlier) if result.dtype == _C.bool else later - earlier
    return result


def _uniform_gradient(input, dim, step, edge_order):
    def part(start, stop=None):
        size = input.shape[dim]
        start, stop = start % size if start < 0 else start, size if stop is None else stop % size if stop < 0 else stop
        return input.narrow(dim, start, stop - start)

    center = (part(2) - part(0, -2)) / step
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / step
        last = (part(-1) - part(-2, -1)) / step
    else:
        first = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / step
        last = (part(-3, -2) * 0.5 + part(-2, -1) * -2 + part(-1) * 1.5) / step
    return tensorplay.cat([first, center / 2, last], dim)


def _coordinate_gradient(input, dim, coordinates, edge_order):
    """Second-order accurate differences on the nonuniform grid `coordinates` (numpy's formulas)."""
    if coordinates.dim() != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coordinates.dim()} dimensions!")
    size = input.shape[dim]
    shape = [1] * input.dim()
    shape[dim] = -1
    dx = coordinates.diff(1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = (a * input.narrow(dim, 0, size - 2) + b * input.narrow(dim, 1, size - 2)
              + c * input.narrow(dim, 2, size - 2))
    f0, f1, f2 = (input.narrow(dim, i, 1) for i in range(3))
    g2, g1, g0 = (input.narrow(dim, size - 3 + i, 1) for i in range(3))  # the last three, g0 last
    if edge_order == 1:
        first, last = (f1 - f0) / dx[0], (g0 - g1) / dx[-1]
    else:
        first = (-(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1])) * f0
                 + (dx[0] + dx[1]) / (dx[0] * dx[1]) * f1
                 + (-dx[0]) / (dx[1] * (dx[0] + dx[1])) * f2)
        last = (dx[-1] / (dx[-2] * (dx[-1] + dx[-2])) * g2
                - (dx[-1] + dx[-2]) / (dx[-1] * dx[-2]) * g1
                + (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2])) * g0)
    return tensorplay.cat([first, center, last], dim)


@_typed(("input",), ints=("edge_order",))
@outside_autocast
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of samples of a function along each dim, by central differences inside and
    one-sided differences of order edge_order at the ends. spacing: one step for every dim, a step
    per dim, or the sample coordinates (1-D tensors) of each dim."""
    if isinstance(spacing, _C.Tensor):
        raise TypeError("gradient(): argument 'spacing' must be a Number or a list of Numbers or Tensors, not Tensor")
    if input.dtype == _C.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if isinstance(spacing, (list, tuple)):
        if dim is None and len(spacing) != input.dim():
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got a "
                               f"list of length {len(spacing)}")
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [_wrap_dim(d, input.dim()) for d in dims]
    if len(set(dims)) != len(dims):
        repeated = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return tuple(_coordinate_gradient(input, d, step, edge_order) if isinstance(step, _C.Tensor)
                 else _uniform_gradient(input, d, step, edge_order) for d, step in zip(dims, steps))


def _trapezoid_steps(op, y, x, dim):
    """The widths between samples of y along dim, from their coordinates x (numpy's broadcasting)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    elif x.dim() < y.dim():
        x = x.reshape([1] * (y.dim() - x.dim()) + list(x.shape))
    size = x.shape[dim]
    return x.narrow(dim, 1, size - 1) - x.narrow(dim, 0, size - 1)


def _check_dx(op, dx):
    if isinstance(dx, bool) or not isinstance(dx, numbers.Real):
        raise RuntimeError(f"{op}: Currently, we only support dx as a real number.")


@_typed(("y",), ("x",), ints=("dim",))
def trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(y, x, dx, dim, check_dx=True)


@_typed(("y",), ("x",), ints=("dim",))
def trapz(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(y, x, dx, dim, check_dx=False)  # PyTorch's trapz takes dx=True as 1


def _trapezoid(y, x, dx, dim, check_dx):
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx cannot both be given")
    if dx is not None and not isinstance(dx, numbers.Number):
        raise TypeError(f"trapezoid(): argument 'dx' must be Number, not {type(dx).__name__}")
    dim = _wrap_dim(dim, y.dim(), scalar_ok=False)
    n = y.shape[dim]
    if n == 0:  # numpy's integral over no samples
        shape = list(y.shape)
        del shape[dim]
        return tensorplay.zeros(shape, dtype=y.dtype, device=y.device)
    if x is None:
        if y.dtype == _C.bool:
            raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
        dx = 1 if dx is None else dx
        if check_dx:
            _check_dx("trapezoid", dx)
        return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx
    if y.dtype == _C.bool or x.dtype == _C.bool:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    steps = _trapezoid_steps("trapezoid", y, x, dim)
    return ((y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)) * steps).sum(dim) / 2.0


@_typed(("y",), ("x",), ints=("dim",))
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    op = "cumulative_trapezoid"
    if x is not None and dx is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: x and dx cannot both be given")
    if dx is not None and not isinstance(dx, numbers.Number):
        raise TypeError(f"{op}(): argument 'dx' must be Number, not {type(dx).__name__}")
    dim = _wrap_dim(dim, y.dim(), scalar_ok=False)
    if x is None:
        if y.dtype == _C.bool:
            raise RuntimeError(f"{op}: received a bool input for `y`, but bool is not supported")
        dx = 1 if dx is None else dx
        _check_dx(op, dx)
    elif y.dtype == _C.bool or x.dtype == _C.bool:
        raise RuntimeError(f"{op}: received a bool input for `x` or `y`, but bool is not supported")
    n = y.shape[dim]
    pairs = y.narrow(dim, 0, max(n - 1, 0)) + y.narrow(dim, min(1, n), max(n - 1, 0))
    if x is None:
        return (dx / 2.0 * pairs).cumsum(dim)
    return (pairs * _trapezoid_steps(op, y, x, dim)).cumsum(dim) / 2.0


# ---------------------------------------------------------------------------------------------
# Covariance and correlation, following PyTorch's Correlation.cpp.

def _check_weights(name, w, observations, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} "
                           "dimensions")
    if integral and (w.is_floating_point() or w.dtype == _C.bool):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{aten_name(w.dtype)} dtype")
    if not integral and not w.is_floating_point():
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{aten_name(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    if observations and not w.is_meta and w.min().item() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


@_typed(("input",), ("fweights", "aweights"), ints=("correction",))
def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype == _C.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    observations_ = input.reshape(1, -1) if input.dim() < 2 else input
    observations = observations_.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, integral=False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = tensorplay.tensor(observations, dtype=_C.int64, device=input.device)
    else:
        w_sum = w.sum()
        if not w_sum.is_meta and w_sum.item() == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    x = observations_
    average = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if not norm_factor.is_meta and norm_factor.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = tensorplay.zeros_like(norm_factor)
    x = x - average.unsqueeze(1)
    return tensorplay.mm(x, (x if w is None else x * w).t()).true_divide(norm_factor).squeeze()


@_typed(("input",))
def corrcoef(input):
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:  # one variable: 1, or NaN where its variance is 0, inf or NaN
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    return c.clip(-1, 1)


# ---------------------------------------------------------------------------------------------
# Reductions.

@_typed(("input",), bools=("keepdim",))
def aminmax(input, *, dim=None, keepdim=False, out=None):
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is not None and input.dim() > 0 and input.shape[_wrap_dim(dim, input.dim())] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {_wrap_dim(dim, input.dim())} to have non-zero size.")
    dims = tuple(range(input.dim())) if dim is None else dim
    result = _aminmax(tensorplay.amin(input, dims, keepdim), tensorplay.amax(input, dims, keepdim))
    if out is None:
        return result
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("aminmax(): argument 'out' must be tuple of 2 Tensors")
    return _aminmax(write_out("aminmax", out[0], result.min), write_out("aminmax", out[1], result.max))


@with_out
@_typed(("input",), bools=("keepdim",))
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if input.is_floating_point():
        input = tensorplay.where(input.isnan(), 0, input)
    return tensorplay.sum(input, dim, keepdim, dtype=dtype)


@with_out
@_typed(("input",), bools=("keepdim",))
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not input.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{aten_name(input.dtype)}")
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {aten_name(dtype)}")
    counts = (~input.isnan()).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / counts


def _moments(op, input, dim, unbiased, keepdim, correction):
    """(var, mean) with var's overloads: (dim, unbiased, keepdim), (unbiased) and correction=."""
    dims = dim if isinstance(dim, (tuple, list)) else [dim]
    if not all(d is None or isinstance(d, numbers.Integral) for d in dims):
        raise TypeError(f"{op}(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    if unbiased is not None and not isinstance(unbiased, bool):
        raise TypeError(f"{op}(): argument 'unbiased' must be bool, not {type(unbiased).__name__}")
    if not input.is_floating_point():
        raise RuntimeError(f"{op} only support floating point and complex dtypes")
    if isinstance(dim, bool):  # var_mean(x, unbiased)
        if unbiased is not None:
            raise TypeError(f"{op}() received an invalid combination of arguments: unbiased given twice")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: unbiased and correction both given")
    variance = tensorplay.var(input, dim, unbiased, keepdim, correction=correction)
    return variance, tensorplay.mean(input, dim, keepdim)


@_typed(("input",), bools=("keepdim",))
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("var_mean", input, dim, unbiased, keepdim, correction)


@_typed(("input",), bools=("keepdim",))
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    variance, mean = _moments("std_mean", input, dim, unbiased, keepdim, correction)
    return variance.sqrt(), mean


# ---------------------------------------------------------------------------------------------
# Membership and products.

@_with_exact_out
@_typed(bools=("assume_unique", "invert"))
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not isinstance(elements, _C.Tensor) and not isinstance(test_elements, _C.Tensor):
        raise TypeError("isin() received an invalid combination of arguments: elements or test_elements must be a "
                        "Tensor")
    like = elements if isinstance(elements, _C.Tensor) else test_elements
    elements = _as_tensor("isin", "elements", elements, like)
    test_elements = _as_tensor("isin", "test_elements", test_elements, like)
    for t in (elements, test_elements):
        if t.dtype == _C.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    common = tensorplay.result_type(elements, test_elements)
    elements = elements.detach().to(common)
    test_elements = test_elements.detach().to(common)
    # PyTorch views a small test set flat (numpy's size rule picks its path), so one that cannot be
    # viewed so (a permuted one of the elements' dtype) is refused, as there.
    small = elements.numel() and test_elements.numel() < int(10.0 * elements.numel() ** 0.145)
    candidates = (test_elements.view(-1) if small else test_elements.reshape(-1)).sort().values
    n = candidates.shape[0]
    if n == 0:
        found = tensorplay.zeros(elements.shape, dtype=_C.bool, device=elements.device)
    else:  # the first candidate not below each element is it, if any is
        found = _take(candidates, _search(candidates, elements, right=False).clamp(max=n - 1)) == elements
    return ~found if invert else found


@_with_exact_out
@_typed(("input", "other"))
def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dim() == 1 and other.dim() == 1:  # torch's vector inner product is not on autocast's lists
        return outside_autocast(tensorplay.dot)(input, other)
    return tensorplay.tensordot(input, other, ([-1], [-1]))


@with_out
@_typed(("input", "vec2"))
def ger(input, vec2):
    _warn_once("ger", "torch.ger is deprecated and will be removed in a future PyTorch release. Use torch.outer "
                      "instead.")
    return tensorplay.outer(input, vec2)


@_typed(("x",), bools=("increasing",), ints=("N",))
@outside_autocast
def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = tensorplay.promote_types(x.dtype, _C.int64)
    # Powers by repeated products, as PyTorch builds them (its cumprod).
    columns = [tensorplay.ones(x.shape[0], min(n, 1), dtype=dtype, device=x.device)]
    if n > 1:
        columns.append(x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1))
    result = tensorplay.cat(columns, 1)
    return result if increasing else result.flip((1,))


_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


# PyTorch's names of mm for a sparse first matrix times a dense one: mm itself, which takes a sparse first
# matrix (ops/sparse.cpp) and, given a dense one, is the dense product.
dsmm = spmm = _C.mm


def chain_matmul(*matrices, out=None):
    _warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
                               "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather "
                               "than multiple parameters.")
    for m in matrices:
        if not isinstance(m, _C.Tensor):
            raise TypeError(f"expected Tensor as element 0 in argument 0, but got {type(m).__name__}")
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    result = matrices[0].clone() if len(matrices) == 1 else tensorplay.linalg.multi_dot(list(matrices))
    return result if out is None else write_out("chain_matmul", out, result)


@_with_exact_out
@_typed(("input",))
def matrix_power(input, n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    if n < 0:
        return matrix_power(tensorplay.linalg.inv(input), -n)
    if n == 0:
        identity = tensorplay.eye(input.shape[-1], dtype=input.dtype, device=input.device)
        return identity.expand(input.shape).clone()
    # PyTorch's order of products: small powers directly, then square-and-multiply from the low bit.
    if n == 1:
        return input.clone()
    if n <= 3:
        return input @ input if n == 2 else (input @ input) @ input
    result = square = None
    while n > 0:
        bit, n = n % 2, n // 2
        square = input if square is None else square @ square
        if bit:
            result = square if result is None else result @ square
    return result


@_with_exact_out
@_typed(("input",), bools=("keepdim",))
def frobenius_norm(input, dim, keepdim=False):
    _warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It "
                                 "will be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., "
                                 "dim, keepdim)` instead")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return tensorplay.norm(input, 2, dims, keepdim)


# ---------------------------------------------------------------------------------------------
# In-place running sums and products: computed in the tensor's own dtype.

def _cumulative_inplace(name, fn):
    def op(input, dim, *, dtype=None):
        _wrap_dim(dim, input.dim())
        if dtype is not None and dtype != input.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {cpp_type_name(input.dtype)} and output tensor "
                               f"dtype {cpp_type_name(dtype)} should match")
        if input.dtype == _C.bool:
            raise _not_implemented(f"{name}_out_cpu", input.dtype)
        # From a copy: cumprod keeps its input for the backward pass, and the write below changes it.
        return input.copy_(fn(input.clone(), dim, dtype=input.dtype))
    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = f"In-place form of {name}()."
    return op


cumsum_ = _cumulative_inplace("cumsum", lambda *args, **kwargs: tensorplay.cumsum(*args, **kwargs))
cumprod_ = _cumulative_inplace("cumprod", lambda *args, **kwargs: tensorplay.cumprod(*args, **kwargs))


# Errors raised by the ops these are built on name the op that was called, as PyTorch's do.
for _name in __all__ + ["cumsum_", "cumprod_"]:
    globals()[_name] = _named(_name)(globals()[_name])

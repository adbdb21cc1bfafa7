"""Indexing: triangles and diagonals (tril, diag, diag_embed, fill_diagonal_), writing into a view of a
copy (the *_scatter family), reading and writing by flat or per-dim indices (take, put, index_add,
index_fill, index_reduce, scatter_reduce), masks (masked_select, masked_scatter) and the index
helpers (nonzero_static, argwhere, unravel_index, repeat_interleave, tril_indices).

They are built on the kernels of index_select, gather, scatter_add, index_put, masked_fill and where,
so that gradients, every dtype and the meta device follow from those. Checks of index values need
the data, so they are skipped on meta, as PyTorch's meta kernels skip them."""

import functools
import math
import warnings

from tensorplay import _C
from tensorplay._composites._forms import inplace, write_out
from tensorplay.autograd import Function
from tensorplay.nn._functional._checks import _aten_name, _named, _tensor_arg

__all__ = [
    "tril", "triu", "tril_indices", "triu_indices", "diag", "diagflat", "diag_embed", "diagonal_scatter",
    "select_scatter", "slice_scatter", "as_strided_scatter", "take", "take_along_dim", "put", "index_add",
    "index_fill", "index_reduce", "index_put_", "masked_scatter", "masked_select", "scatter_reduce",
    "nonzero_static", "argwhere", "unravel_index", "repeat_interleave",
]
METHODS = [
    "tril", "tril_", "triu", "triu_", "diag", "diagflat", "diag_embed", "diagonal_scatter", "select_scatter",
    "slice_scatter", "as_strided_scatter", "take", "take_along_dim", "put", "put_", "index_add", "index_add_",
    "index_fill", "index_fill_", "index_reduce", "index_reduce_", "index_put", "masked_scatter", "masked_scatter_",
    "masked_select", "scatter_reduce", "scatter_reduce_", "nonzero_static", "argwhere", "repeat_interleave",
    "fill_diagonal_",
]

_INDEX_DTYPES = (_C.int32, _C.int64)
_REDUCED_FLOATS = (_C.float16, _C.bfloat16)


# ---------------------------------------------------------------------------------------------
# Argument checks, worded as PyTorch's.

def _exact_out(fn):
    """fn with PyTorch's keyword-only out=, which these ops' kernels take only in the result's own dtype
    (they do not promote, so they do not cast either)."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        if isinstance(out, _C.Tensor) and out.dtype != result.dtype:
            raise RuntimeError(f"{fn.__name__}(): Expected out tensor to have dtype {_aten_name(result.dtype)}, "
                               f"but got {_aten_name(out.dtype)} instead")
        return write_out(fn.__name__, out, result)
    return op


def _int_arg(op, name, position, value, optional=False):
    """value as an int; a 0-dim integer tensor is one (it has __index__), as PyTorch's parser takes it."""
    if optional and value is None:
        return None
    if isinstance(value, _C.Tensor) and value.dim() == 0 and not value.is_floating_point() and value.dtype != _C.bool:
        return int(value.item())
    if not isinstance(value, int) or isinstance(value, bool):
        kind = "int" + ("?" if optional else "")
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be {kind}, not {type(value).__name__}")
    return value


def _bool_kwarg(op, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' must be bool, not {type(value).__name__}")


def _int_list_arg(op, name, position, value):
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of ints, "
                        f"not {type(value).__name__}")


def _wrap_dim(dim, ndim):
    """dim counted from 0; a 0-dim tensor has one dim for this purpose, as in PyTorch."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _on_meta(*tensors):
    return any(t.is_meta for t in tensors)


def _first(values):
    """The first element of a nonempty 1-D tensor, as a Python number."""
    return values[0].item()


def _check_in_range(index, size, message, kind=RuntimeError, negative_ok=False):
    """Raises kind(message(bad index)) for the first index outside [0, size) (or [-size, size))."""
    if _on_meta(index) or index.numel() == 0:
        return
    low = -size if negative_ok else 0
    bad = (index < low).logical_or(index >= size).reshape(-1)
    if bad.any().item():
        raise kind(message(_first(index.reshape(-1)[bad])))


def _check_same_slice(src, view):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")


def _zero(like):
    return _C.zeros((), dtype=like.dtype, device=like.device)


def _along(vector, dim, ndim):
    """A 1-D tensor viewed so that it runs along dim of an ndim-dim tensor."""
    return vector.reshape([-1 if d == dim else 1 for d in range(ndim)])


# ---------------------------------------------------------------------------------------------
# Triangles.

def _triangle(op, input, diagonal, keep):
    _tensor_arg(op, "input", 1, input)
    diagonal = _int_arg(op, "diagonal", 2, diagonal)
    if input.dim() < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    rows, cols = input.shape[-2:]
    offsets = _C.arange(cols, device=input.device) - _C.arange(rows, device=input.device).unsqueeze(1)
    # where, not a product with the mask: every dtype (bool included) and masked gradients.
    return _C.where(keep(offsets, diagonal), input, _zero(input))


@_exact_out
@_named("tril")
def tril(input, diagonal=0):
    return _triangle("tril", input, diagonal, lambda offsets, k: offsets <= k)


@_exact_out
@_named("triu")
def triu(input, diagonal=0):
    return _triangle("triu", input, diagonal, lambda offsets, k: offsets >= k)


tril_ = _named("tril_")(inplace(tril))
triu_ = _named("triu_")(inplace(triu))


def _triangle_indices(op, row, col, offset, dtype, device, keep):
    for position, (name, value) in enumerate((("row", row), ("col", col), ("offset", offset)), 1):
        _int_arg(op, name, position, value)
    for name, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{op}: {name} must be non-negative, got{value}")
    dtype = _C.int64 if dtype is None else dtype
    if dtype not in _INDEX_DTYPES:
        raise NotImplementedError(f"\"{op}\" not implemented for '{_aten_name(dtype)}'")
    # Computed on the CPU (its size depends on the values) and moved to the device asked for.
    rows = _C.arange(row).unsqueeze(1).expand(row, col)
    cols = _C.arange(col).unsqueeze(0).expand(row, col)
    kept = keep(cols - rows, offset)
    return _C.stack([rows[kept], cols[kept]]).to(dtype=dtype, device=device or "cpu")


@_named("tril_indices")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, lambda d, k: d <= k)


@_named("triu_indices")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, lambda d, k: d >= k)


# ---------------------------------------------------------------------------------------------
# Diagonals, and writing into a view of a copy (the *_scatter family). Each copies input, takes the
# view of the copy and copies src into it: autograd sees a copy_ into a view, as in PyTorch's
# decompositions, and src may have another dtype (copy_ casts it).

@_named("diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    _tensor_arg("diagonal_scatter", "input", 1, input)
    _tensor_arg("diagonal_scatter", "src", 2, src)
    for position, (name, value) in enumerate((("offset", offset), ("dim1", dim1), ("dim2", dim2)), 3):
        _int_arg("diagonal_scatter", name, position, value)
    out = input.clone()
    view = out.diagonal(offset, dim1, dim2)
    _check_same_slice(src, view)
    view.copy_(src)
    return out


@_named("select_scatter")
def select_scatter(input, src, dim, index):
    _tensor_arg("select_scatter", "input", 1, input)
    _tensor_arg("select_scatter", "src", 2, src)
    dim = _int_arg("select_scatter", "dim", 3, dim)
    index = _int_arg("select_scatter", "index", 4, index)
    out = input.clone()
    view = out.select(dim, index)
    _check_same_slice(src, view)
    view.copy_(src)
    return out


@_exact_out
@_named("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    _tensor_arg("slice_scatter", "input", 1, input)
    _tensor_arg("slice_scatter", "src", 2, src)
    dim = _int_arg("slice_scatter", "dim", 3, dim)
    start = _int_arg("slice_scatter", "start", 4, start, optional=True)
    end = _int_arg("slice_scatter", "end", 5, end, optional=True)
    step = _int_arg("slice_scatter", "step", 6, step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if input.dim() == 0:
        raise RuntimeError("slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.dim())
    out = input.clone()
    view = out[(slice(None),) * dim + (slice(start, end, step),)]
    _check_same_slice(src, view)
    view.copy_(src)
    return out


@_named("as_strided_scatter")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    _tensor_arg("as_strided_scatter", "input", 1, input)
    _tensor_arg("as_strided_scatter", "src", 2, src)
    _int_list_arg("as_strided_scatter", "size", 3, size)
    _int_list_arg("as_strided_scatter", "stride", 4, stride)
    storage_offset = _int_arg("as_strided_scatter", "storage_offset", 5, storage_offset, optional=True)
    # The copy has input's strides and storage offset (in a storage that reaches as far as input's), as
    # PyTorch's has: size, stride and storage_offset address that storage.
    extent = 0 if input.numel() == 0 else 1 + sum((n - 1) * step for n, step in zip(input.shape, input.stride()))
    storage = _C.empty(input.storage_offset() + extent, dtype=input.dtype, device=input.device)
    out = storage.as_strided(input.shape, input.stride(), input.storage_offset())
    out.copy_(input)
    # Unlike the other *_scatter ops, PyTorch's broadcasts src into the view.
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


@_named("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    _tensor_arg("diag_embed", "input", 1, input)
    for position, (name, value) in enumerate((("offset", offset), ("dim1", dim1), ("dim2", dim2)), 2):
        _int_arg("diag_embed", name, position, value)
    ndim = input.dim() + 1
    first, second = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = input.shape[-1] + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((first, second)):
        shape.insert(d, size)
    zeros = _C.zeros(shape, dtype=input.dtype, device=input.device)
    return diagonal_scatter(zeros, input, offset, first, second)


@_exact_out
@_named("diag")
def diag(input, diagonal=0):
    _tensor_arg("diag", "input", 1, input)
    diagonal = _int_arg("diag", "diagonal", 2, diagonal)
    if input.dim() == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")


@_named("diagflat")
def diagflat(input, offset=0):
    _tensor_arg("diagflat", "input", 1, input)
    offset = _int_arg("diagflat", "offset", 2, offset)
    return diag_embed(input.reshape(-1), offset, 0, 1)


@_named("fill_diagonal_")
def fill_diagonal_(input, fill_value, wrap=False):
    if isinstance(fill_value, _C.Tensor):
        fill_value = fill_value.item()
    if input.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    size = input.shape[0]
    if input.dim() > 2 and any(s != size for s in input.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    if input.dim() == 2:
        rows, cols = input.shape
        below = _C.arange(rows, device=input.device).unsqueeze(1) - _C.arange(cols, device=input.device)
        # Wrapping restarts the diagonal every cols + 1 rows (a tall matrix's "wrapped" diagonal).
        mask = (below >= 0).logical_and(below.remainder(cols + 1) == 0) if wrap and rows > cols + 1 else below == 0
    else:
        positions = _C.arange(size, device=input.device)
        mask = _C.ones([1] * input.dim(), dtype=_C.bool, device=input.device)
        for d in range(1, input.dim()):
            mask = mask.logical_and(_along(positions, 0, input.dim()) == _along(positions, d, input.dim()))
    return input.masked_fill_(mask, fill_value)


# ---------------------------------------------------------------------------------------------
# Flat indices: take and put address input as if it were 1-D; negative indices count from the end.

def _check_flat_index(op, index, numel):
    if index.dtype != _C.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {_aten_name(index.dtype)}")
    _check_in_range(index, numel, lambda i: f"out of range: tried to access index {i} on a tensor of {numel} "
                    "elements.", IndexError, negative_ok=True)
    return _C.where(index < 0, index + numel, index).reshape(-1)


@_exact_out
@_named("take")
def take(input, index):
    _tensor_arg("take", "input", 1, input)
    _tensor_arg("take", "index", 2, index)
    flat = input.reshape(-1)
    return flat.index_select(0, _check_flat_index("take", index, flat.numel())).reshape(index.shape)


@_named("put")
def put(input, index, source, accumulate=False):
    _tensor_arg("put", "input", 1, input)
    _tensor_arg("put", "index", 2, index)
    _tensor_arg("put", "source", 3, source)
    _bool_kwarg("put", "accumulate", accumulate)
    if index.dtype != _C.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_aten_name(index.dtype)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_aten_name(input.dtype)} and source.dtype = {_aten_name(source.dtype)}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    flat = input.reshape(-1)
    positions = _check_flat_index("put_", index, flat.numel())
    return _C.index_put(flat, (positions,), source.reshape(-1), accumulate).reshape(input.shape)


put_ = _named("put_")(inplace(put))


@_exact_out
@_named("take_along_dim")
def take_along_dim(input, indices, dim=None):
    _tensor_arg("take_along_dim", "input", 1, input)
    _tensor_arg("take_along_dim", "indices", 2, indices)
    dim = _int_arg("take_along_dim", "dim", 3, dim, optional=True)
    if indices.dtype != _C.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_aten_name(indices.dtype)}")
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    dim = _wrap_dim(dim, input.dim())
    # Both broadcast against each other in every dim but dim, where each keeps its own size.
    input_shape, indices_shape = list(input.shape), list(indices.shape)
    input_shape[dim] = indices.shape[dim]
    shape = list(_C.broadcast_shapes(input_shape, indices_shape))
    indices = indices.broadcast_to(shape)
    shape[dim] = input.shape[dim]
    input = input.broadcast_to(shape)
    if input.shape[dim] > 0:
        # PyTorch takes the indices along dim modulo its size: negative ones count from the end.
        indices = indices.remainder(input.shape[dim])
    return input.gather(dim, indices)


# ---------------------------------------------------------------------------------------------
# Per-dim indices: a vector of indices into one dim, and a source with that dim the vector's length.

def _check_index_func(op, input, dim, index, source):
    """PyTorch's checks of index_add_ and index_reduce_; dim, wrapped."""
    dim = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError(f"{op}_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{_aten_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}_(): Expected dtype int32/int64 for index but got: {_aten_name(index.dtype)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"{op}_(): self ({_aten_name(input.dtype)}) and source ({_aten_name(source.dtype)}) "
                           "must have the same scalar type")
    if dim != 0 and dim >= source.dim():
        raise RuntimeError(f"{op}_(): Indexing dim {dim} is out of bounds of the source tensor with dim "
                           f"{source.dim()}")
    if source.dim() == 0 and index.numel() != 1:
        # PyTorch's message asks a 0-dim source for its size along dim, which raises this instead.
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    source_length = 1 if source.dim() == 0 else source.shape[dim]
    if index.numel() != source_length:
        raise RuntimeError(f"{op}_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({source_length}), for dim: {dim}")
    input_rest, source_rest = list(input.shape), list(source.shape)
    if input.dim() > 0 and source.dim() > 0:
        del input_rest[dim], source_rest[dim]
    if input_rest != source_rest:
        raise RuntimeError(f"{op}(): source tensor shape must match self tensor shape, excluding the specified "
                           f"dimension. Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    return dim


def _at_least_1d(*tensors):
    return [t.reshape(1) if t.dim() == 0 else t for t in tensors]


def _spread(index, dim, source):
    """The vector index, expanded to source's shape along dim: the index of scatter_add and scatter_reduce."""
    return _along(index.long(), dim, source.dim()).expand(source.shape)


def _scalar_in(dtype, value):
    """value as the 0-dim tensor that PyTorch's kernels cast a Scalar argument to."""
    if dtype == _C.bool:
        value = bool(value)
    elif not dtype.is_floating_point:
        value = int(value)
    return _C.full((), value, dtype=dtype)


@_exact_out
@_named("index_add")
def index_add(input, dim, index, source, *, alpha=1):
    _tensor_arg("index_add", "input", 1, input)
    dim = _int_arg("index_add", "dim", 2, dim)
    _tensor_arg("index_add", "index", 3, index)
    _tensor_arg("index_add", "source", 4, source)
    dim = _check_index_func("index_add", input, dim, index, source)
    size = 1 if input.dim() == 0 else input.shape[dim]
    if input.dim() <= 1:  # PyTorch's kernel for vectors words it as index_select does
        _check_in_range(index, size, lambda i: "index out of range in self", IndexError)
    _check_in_range(index, size, lambda i: f"index {i} is out of bounds for dimension {dim} with size {size}")
    if alpha != 1:
        source = source * _scalar_in(source.dtype, alpha).to(source.device)
    flat_input, flat_index, flat_source = _at_least_1d(input, index, source)
    return flat_input.scatter_add(dim, _spread(flat_index, dim, flat_source), flat_source).reshape(input.shape)


index_add_ = _named("index_add_")(inplace(index_add))


@_named("index_fill")
def index_fill(input, dim, index, value):
    _tensor_arg("index_fill", "input", 1, input)
    dim = _int_arg("index_fill", "dim", 2, dim)
    _tensor_arg("index_fill", "index", 3, index)
    if index.dtype != _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, _C.Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        value = value.to(input.dtype)
    elif not isinstance(value, (bool, int, float)):
        raise TypeError(f"index_fill(): argument 'value' (position 4) must be Number, not {type(value).__name__}")
    dim = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = 1 if input.dim() == 0 else input.shape[dim]
    _check_in_range(index, size, lambda i: f"index {i} is out of bounds for dimension {dim} with size {size}",
                    IndexError, negative_ok=True)
    index = _C.where(index < 0, index + size, index).reshape(-1)
    filled = _C.index_put(_C.zeros(size, dtype=_C.bool, device=input.device), (index,),
                          _C.ones((), dtype=_C.bool, device=input.device))
    return input.masked_fill(_along(filled, dim, input.dim()).reshape(input.shape if input.dim() == 0 else
                                                                         [-1 if d == dim else 1
                                                                          for d in range(input.dim())]), value)


index_fill_ = _named("index_fill_")(inplace(index_fill))


# ---------------------------------------------------------------------------------------------
# Reductions into positions: scatter_reduce (index the shape of src) and index_reduce (a vector of
# indices into one dim). Sum and mean are differentiable compositions of index_put; prod, amax and
# amin compute their values without autograd and differentiate by PyTorch's rules (ties share the
# gradient of amax and amin evenly, zeros in prod get the product of the others).

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_LEGACY_REDUCTIONS = {"max": "amax", "min": "amin"}  # scatter_reduce's older names, which PyTorch still takes
_SCAN = {"prod": lambda a, b: a * b, "amax": _C.maximum, "amin": _C.minimum}


def _destinations(shape, dim, index):
    """The flat position (in a contiguous tensor of `shape`) that each element of index scatters to."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    positions = index.long() * strides[dim]
    for d in range(index.dim()):
        if d != dim:
            positions = positions + _along(_C.arange(index.shape[d], device=index.device), d, index.dim()) * strides[d]
    return positions.reshape(-1)


def _region(src, shape):
    """The part of src that an index of `shape` reads (src may be larger in any dim)."""
    for d, size in enumerate(shape):
        src = src.narrow(d, 0, size)
    return src


def _touched(numel, positions, device):
    return _C.index_put(_C.zeros(numel, dtype=_C.bool, device=device), (positions,),
                        _C.ones((), dtype=_C.bool, device=device))


def _segment_reduce(values, positions, numel, combine):
    """Each position's values combined (an associative combine): a stable sort groups the values by
    position, a segmented scan in log2(n) steps combines each group into its last element, and the
    last elements are written out. Positions that receive nothing hold garbage: callers mask them."""
    order = positions.sort(stable=True).indices
    positions, values = positions.index_select(0, order), values.index_select(0, order)
    n, step = positions.numel(), 1
    while step < n:
        same = positions[step:] == positions[:-step]
        values = _C.cat([values[:step], _C.where(same, combine(values[step:], values[:-step]), values[step:])])
        step *= 2
    last = _C.cat([positions[1:] != positions[:-1], _C.ones(min(n, 1), dtype=_C.bool, device=positions.device)])
    # Each group's other elements go to a spare slot past the end, which is dropped.
    slots = _C.where(last, positions, _C.full((), numel, dtype=_C.int64, device=positions.device))
    out = _C.zeros(numel + 1, dtype=values.dtype, device=values.device)
    return _C.index_put(out, (slots,), values)[:numel]


def _reduce_into(input, dim, index, src, reduce, include_self):
    """scatter_reduce on checked, at least 1-D arguments."""
    numel = input.numel()
    flat = input.reshape(-1)
    positions = _destinations(list(input.shape), dim, index)
    values = _region(src, index.shape).reshape(-1)
    touched = _touched(numel, positions, input.device)
    if reduce in ("sum", "mean"):
        base = flat if include_self else flat.masked_fill(touched, 0)
        total = _C.index_put(base, (positions,), values, True)
        if reduce == "sum":
            return total.reshape(input.shape)
        counts = _C.full((numel,), 1 if include_self else 0, dtype=input.dtype, device=input.device)
        counts = _C.index_put(counts, (positions,), _C.ones((), dtype=input.dtype, device=input.device)
                              .expand(values.shape), True)
        counts = counts.masked_fill(counts == 0, 1)
        mean = total / counts if input.is_floating_point() else total.div(counts, rounding_mode="floor")
        return mean.reshape(input.shape)
    combine = _SCAN[reduce]
    reduced = _segment_reduce(values, positions, numel, combine)
    if include_self:
        reduced = combine(flat, reduced)
    return _C.where(touched, reduced, flat).reshape(input.shape)


class _ScatterReduce(Function):
    """prod, amax and amin, differentiated as PyTorch's scatter_reduce_backward does."""

    @staticmethod
    def forward(ctx, input, src, dim, index, reduce, include_self):
        result = _reduce_into(input, dim, index, src, reduce, include_self)
        # A copy of input: the in-place forms write the result into it.
        ctx.save_for_backward(input.clone(), src, index, result)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        return result

    @staticmethod
    def backward(ctx, grad):
        input, src, index, result = ctx.saved_tensors
        dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
        part = _region(src, index.shape)
        if reduce == "prod":
            grad_input, grad_part = _prod_gradients(grad, input, part, dim, index, result, include_self)
        else:
            value = result.gather(dim, index)
            input_is_result = (input == result).to(input.dtype)
            part_is_result = (part == value).to(input.dtype)
            shared = grad / input_is_result.scatter_add(dim, index, part_is_result)
            grad_input = input_is_result * shared
            grad_part = part_is_result * shared.gather(dim, index)
        if not include_self:
            grad_input = grad_input.scatter(dim, index, 0)
        grad_src = _C.zeros(src.shape, dtype=src.dtype, device=src.device)
        _region(grad_src, index.shape).copy_(grad_part)
        return grad_input, grad_src, None, None, None, None


def _prod_gradients(grad, input, part, dim, index, result, include_self):
    """The product of the others, computed as PyTorch does: dividing the product by the element,
    except where that element is 0 and the only 0 among the values scattered to its position."""
    unit_input = input.masked_fill(input == 0, 1)
    grad_input = grad * _reduce_into(unit_input, dim, index, part, "prod", include_self) / unit_input
    zero = part == 0
    zeros_there = _C.zeros(input.shape, dtype=input.dtype, device=input.device)
    zeros_there = zeros_there.scatter_add(dim, index, zero.to(input.dtype)).gather(dim, index)
    single_zero = zero.logical_and(zeros_there == 1)
    without_it = _reduce_into(input, dim, index, part.masked_fill(single_zero, 1), "prod", include_self)
    grad_part = _C.where(single_zero, (grad * without_it).gather(dim, index),
                         (grad * result).gather(dim, index) / part.masked_fill(zero, 1))
    return grad_input, grad_part


def _scatter_reduced(op, input, dim, index, src, reduce, include_self):
    """scatter_reduce on checked arguments, 0-dim ones included."""
    if index.numel() == 0:
        return input.clone()
    flat_input, flat_index, flat_src = _at_least_1d(input, index, src)
    if input.dtype in _REDUCED_FLOATS:
        # PyTorch accumulates 16-bit floats in float32 and rounds once.
        flat_input, flat_src = flat_input.float(), flat_src.float()
    if reduce in ("sum", "mean"):
        result = _reduce_into(flat_input, dim, flat_index, flat_src, reduce, include_self)
    else:
        result = _ScatterReduce.apply(flat_input, flat_src, dim, flat_index, reduce, include_self)
    return result.reshape(input.shape).to(input.dtype)


def _check_reduce(op, reduce, choices, message):
    if not isinstance(reduce, str):
        raise TypeError(f"{op}(): argument 'reduce' (position 5) must be str, not {type(reduce).__name__}")
    if reduce not in choices:
        raise RuntimeError(message)


@_exact_out
@_named("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    _tensor_arg("scatter_reduce", "input", 1, input)
    dim = _int_arg("scatter_reduce", "dim", 2, dim)
    _tensor_arg("scatter_reduce", "index", 3, index)
    _tensor_arg("scatter_reduce", "src", 4, src)
    dim = _wrap_dim(dim, input.dim())
    _check_reduce("scatter_reduce", reduce, _SCATTER_REDUCTIONS + tuple(_LEGACY_REDUCTIONS),
                  f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    reduce = _LEGACY_REDUCTIONS.get(reduce, reduce)
    _bool_kwarg("scatter_reduce", "include_self", include_self)
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if input.dtype != src.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.numel() > 0:
        if src.dim() > 0:  # PyTorch's kernel takes dim of src too (a 0-dim src fails the rank check below)
            _wrap_dim(dim, src.dim())
        if max(index.dim(), 1) != max(input.dim(), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
        if max(index.dim(), 1) != max(src.dim(), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        index_shape, input_shape, src_shape = ([max(t.shape[d], 1) if t.dim() else 1 for d in range(max(t.dim(), 1))]
                                               for t in (index, input, src))
        if (any(index_shape[d] > input_shape[d] for d in range(len(index_shape)) if d != dim)
                or any(i > s for i, s in zip(index_shape, src_shape))):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} "
                               f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}")
    if reduce == "mean" and input.dtype == _C.bool:
        raise NotImplementedError("scatter_reduce(): \"scatter_gather_tensor_cpu_reduce_mean\" not implemented for "
                                  "'Bool'")
    if index.numel() > 0:
        size = 1 if input.dim() == 0 else input.shape[dim]
        _check_in_range(index, size, lambda i: f"index {i} is out of bounds for dimension {dim} with size {size}")
    return _scatter_reduced("scatter_reduce", input, dim, index, src, reduce, include_self)


scatter_reduce_ = _named("scatter_reduce_")(inplace(scatter_reduce))

_index_reduce_warned = False


@_exact_out
@_named("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    global _index_reduce_warned
    _tensor_arg("index_reduce", "input", 1, input)
    dim = _int_arg("index_reduce", "dim", 2, dim)
    _tensor_arg("index_reduce", "index", 3, index)
    _tensor_arg("index_reduce", "source", 4, source)
    _check_reduce("index_reduce", reduce, ("prod", "mean", "amax", "amin"),
                  f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    _bool_kwarg("index_reduce", "include_self", include_self)
    if not _index_reduce_warned:
        _index_reduce_warned = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    dim = _check_index_func("index_reduce", input, dim, index, source)
    if input.dtype == _C.bool and not include_self:
        raise NotImplementedError("index_reduce(): \"index_reduce_func_exclude_input_init\" not implemented for 'Bool'")
    size = 1 if input.dim() == 0 else input.shape[dim]
    _check_in_range(index, size, lambda i: "index out of range in self", IndexError)
    # PyTorch's kernels take bool for prod, amax and amin including self, except its 1-D one; mean divides,
    # which bool cannot.
    if input.dtype == _C.bool and reduce == "mean":
        raise NotImplementedError("index_reduce(): \"div_floor_cpu\" not implemented for 'Bool'")
    if input.dtype == _C.bool and input.dim() <= 1:
        raise NotImplementedError("index_reduce(): \"index_func_\" not implemented for 'Bool'")
    flat_input, flat_index, flat_source = _at_least_1d(input, index, source)
    spread = _spread(flat_index, dim, flat_source)
    return _scatter_reduced("index_reduce", flat_input, dim, spread, flat_source, reduce,
                            include_self).reshape(input.shape)


index_reduce_ = _named("index_reduce_")(inplace(index_reduce))


# ---------------------------------------------------------------------------------------------
# Masks.

@_named("masked_scatter")
def masked_scatter(input, mask, source):
    _tensor_arg("masked_scatter", "input", 1, input)
    _tensor_arg("masked_scatter", "mask", 2, mask)
    _tensor_arg("masked_scatter", "source", 3, source)
    if mask.dtype != _C.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_aten_name(mask.dtype)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_aten_name(input.dtype)} and {_aten_name(source.dtype)}")
    input, mask = _C.broadcast_tensors(input, mask)
    flat_mask = mask.reshape(-1)
    # The k-th True of the mask takes source's k-th element: a running count of the Trues.
    taken = flat_mask.long().cumsum(0) - 1
    if not _on_meta(mask) and flat_mask.numel() > 0 and _first(taken[-1:]) >= source.numel():
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in mask")
    if source.numel() == 0:  # then the mask has no True (checked above, where the values are there)
        return _C.where(mask, input, input)
    # Positions before the first True count -1: clamped into range, their values are masked out below.
    values = source.reshape(-1).index_select(0, taken.clamp(0, source.numel() - 1))
    return _C.where(mask, values.reshape(mask.shape), input)


masked_scatter_ = _named("masked_scatter_")(inplace(masked_scatter))


@_exact_out
@_named("masked_select")
def masked_select(input, mask):
    _tensor_arg("masked_select", "input", 1, input)
    _tensor_arg("masked_select", "mask", 2, mask)
    if mask.dtype != _C.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    input, mask = _C.broadcast_tensors(input, mask)
    return input.reshape(-1).index_select(0, mask.reshape(-1).nonzero().reshape(-1))


# ---------------------------------------------------------------------------------------------
# Index helpers.

@_exact_out
@_named("nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    _tensor_arg("nonzero_static", "input", 1, input)
    size = _int_arg("nonzero_static", "size", 2, size)
    fill_value = _int_arg("nonzero_static", "fill_value", 3, fill_value)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if _on_meta(input):
        return _C.empty((size, input.dim()), dtype=_C.int64, device=input.device)
    found = input.nonzero()[:size]
    padding = _C.full((size - found.shape[0], input.dim()), fill_value, dtype=_C.int64, device=input.device)
    return _C.cat([found, padding])


@_named("argwhere")
def argwhere(input):
    _tensor_arg("argwhere", "input", 1, input)
    return input.nonzero()


@_named("unravel_index")
def unravel_index(indices, shape):
    _tensor_arg("unravel_index", "indices", 1, indices)
    if indices.is_floating_point() or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for size in shape:
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    return tuple(indices.long().floor_divide(stride).remainder(size) for stride, size in zip(strides, shape))


def _repeated_positions(repeats, output_size):
    """i repeated repeats[i] times, for every i: torch.repeat_interleave(repeats)."""
    if repeats.dtype not in _INDEX_DTYPES:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_aten_name(repeats.dtype)}'")
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if _on_meta(repeats):
        # The values are not there: only output_size can give the result's size.
        if output_size is None:
            raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
        return _C.empty(output_size, dtype=repeats.dtype, device=repeats.device)
    if repeats.numel() and (repeats < 0).any().item():
        raise RuntimeError("repeats can not be negative")
    ends = repeats.long().cumsum(0)
    total = _first(ends[-1:]) if repeats.numel() else 0
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    # Each repeat after the first starts where the ones before it end: a step of 1 there (of more
    # where some repeat 0 times), and the running sum of the steps numbers the outputs.
    steps = _C.index_put(_C.zeros(total + 1, dtype=_C.int64, device=repeats.device), (ends[:-1],),
                         _C.ones((), dtype=_C.int64, device=repeats.device).expand(ends[:-1].shape), True)
    return steps[:total].cumsum(0).to(repeats.dtype)


@_named("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    _tensor_arg("repeat_interleave", "input", 1, input)
    dim = _int_arg("repeat_interleave", "dim", 3, dim, optional=True)
    output_size = _int_arg("repeat_interleave", "output_size", 4, output_size, optional=True)
    if repeats is None:
        return _repeated_positions(input, output_size)
    if isinstance(repeats, _C.Tensor) and repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if dim is None:
        input, dim = input.reshape(-1), 0
    elif input.dim() == 0:
        # PyTorch inserts the repeats' dim after dim, which a 0-dim tensor does not have.
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim + 1})")
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if isinstance(repeats, _C.Tensor):
        if repeats.numel() == 1:
            repeats = repeats.reshape(1).expand(size)
        if repeats.shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {size}")
        return input.index_select(dim, _repeated_positions(repeats, output_size).long())
    if not isinstance(repeats, int) or isinstance(repeats, bool):
        raise TypeError(f"repeat_interleave(): argument 'repeats' (position 2) must be Tensor or int, "
                        f"not {type(repeats).__name__}")
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and output_size != size * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {size * repeats} but got {output_size}")
    if repeats == 0:
        # Not an expand to size 0: tensorplay's sum over an empty dim (that expand's backward) crashes.
        return input.index_select(dim, _C.zeros(0, dtype=_C.int64, device=input.device))
    shape = list(input.shape)
    shape.insert(dim + 1, repeats)
    return input.unsqueeze(dim + 1).expand(shape).flatten(dim, dim + 1)


# ---------------------------------------------------------------------------------------------
# index_put in the forms tensorplay's kernel binding lacks.

def index_put(input, indices, values, accumulate=False):
    """Tensor.index_put: the out-of-place form, as a method."""
    return _C.index_put(input, indices, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    """torch.index_put_: the in-place form, as a function."""
    return input.index_put_(indices, values, accumulate)

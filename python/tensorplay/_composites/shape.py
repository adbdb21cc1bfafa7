"""The shape family of the torch namespace: ops that move, repeat, split and stack elements without
computing new values (kron multiplies, sum_to_size sums: both as broadcasting undoes or does).

Each is written over the view and copy ops that have kernels (narrow, select, as_strided, cat,
flip, ...), as PyTorch's own composites are, so gradients and every dtype follow from those.
The `*_copy` forms are the view op followed by a contiguous copy. The in-place view ops
(x.t_(), x.squeeze_(), x.as_strided_(...)) give the tensor the geometry of the view in place,
through the `data` setter, and carry the view's history as PyTorch's do."""

import functools
import itertools
import numbers
import warnings

from tensorplay import _C, _tensor
from tensorplay._C import Tensor
from tensorplay._composites._forms import can_cast, with_out, write_out
from tensorplay._dtypes import aten_name
from tensorplay.amp.composite_casts import outside_autocast
from tensorplay.autograd.function import Function
from tensorplay.nn._functional._checks import _named

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack", "row_stack", "column_stack", "hsplit",
    "vsplit", "dsplit", "tensor_split", "split_with_sizes", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",
    "tile", "roll", "rot90", "fliplr", "flipud", "meshgrid", "cartesian_prod", "combinations", "block_diag",
    "moveaxis", "ravel", "kron", "as_strided_",
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "narrow_copy", "permute_copy",
    "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy",
    "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_as_complex_copy", "view_as_real_copy", "view_copy",
]
METHODS = [
    "hsplit", "vsplit", "dsplit", "tensor_split", "split_with_sizes", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "tile", "roll", "rot90", "fliplr", "flipud", "moveaxis", "ravel", "kron",
    "narrow_copy", "unfold", "sum_to_size",
    "as_strided_", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_",
]


def _named_after(fn):
    """fn's tensor arguments checked as PyTorch's bindings check them (a TypeError), and errors raised
    inside fn by the ops it is built on renamed to name fn, as PyTorch's do."""
    op = fn.__name__
    tensor_params = [name for name in fn.__code__.co_varnames[:fn.__code__.co_argcount] if name in ("input", "other")]
    named = _named(op)(fn)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        for position, name in enumerate(tensor_params):
            value = args[position] if position < len(args) else kwargs.get(name)
            if not isinstance(value, Tensor):
                raise TypeError(f"{op}(): argument '{name}' (position {position + 1}) must be Tensor, "
                                f"not {type(value).__name__}")
        return named(*args, **kwargs)
    return checked


def _tensors_arg(op, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                            f"but found element of type {type(t).__name__}")
    return list(tensors)


def _int_arg(op, name, position, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be int, not {type(value).__name__}")
    return int(value)


def _ints_arg(op, name, position, value):
    """An int list argument; a single int stands for a list of one, as PyTorch's int[1] does."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)]
    if not isinstance(value, (list, tuple)) or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                                   for v in value):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    return [int(v) for v in value]


def _sizes_arg(op, name, args):
    """Sizes given as varargs (x.tile(2, 3)) or as one sequence (x.tile((2, 3)))."""
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        args = args[0]
    return _ints_arg(op, name, 2, list(args) if isinstance(args, tuple) else args)


def _wrap_dim(dim, ndim):
    """dim in [0, ndim) (a 0-dim tensor has one dim to name, as in PyTorch), or IndexError."""
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


# ---------------------------------------------------------------------------------------------
# At least n dims, and the stacks built on them.

def _atleast(op, tensors, make):
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, Tensor):
        return make(tensors)
    return tuple(make(t) for t in _tensors_arg(op, tensors))


def atleast_1d(*tensors):
    return _atleast("atleast_1d", tensors, lambda t: t if t.dim() >= 1 else t.reshape(1))


def atleast_2d(*tensors):
    def make(t):
        if t.dim() == 0:
            return t.reshape(1, 1)
        return t.unsqueeze(0) if t.dim() == 1 else t
    return _atleast("atleast_2d", tensors, make)


def atleast_3d(*tensors):
    def make(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1) if t.dim() == 2 else t
    return _atleast("atleast_3d", tensors, make)


def _stacking(fn):
    """A stack over cat: a non-empty list of tensors in, cat's type promotion, and an out= whose
    dtype must be one the result can be cast to (a TypeError, as cat's out= raises)."""
    op = fn.__name__

    @functools.wraps(fn)
    def stack(tensors, *, out=None):
        tensors = _tensors_arg(op, tensors)
        if not tensors:
            raise RuntimeError(f"{op} expects a non-empty TensorList")
        result = _named(op)(fn)(tensors)
        if out is None:
            return result
        if isinstance(out, Tensor) and not can_cast(result.dtype, out.dtype):
            raise TypeError(f"{op}(): input types can't be cast to the desired output type {aten_name(out.dtype)}")
        return write_out(op, out, result)
    return stack


@_stacking
def hstack(tensors):
    tensors = atleast_1d(tensors)
    return _C.cat(tensors, 0 if tensors[0].dim() == 1 else 1)


@_stacking
def vstack(tensors):
    return _C.cat(atleast_2d(tensors), 0)


@_stacking
def row_stack(tensors):
    return _C.cat(atleast_2d(tensors), 0)


@_stacking
def dstack(tensors):
    return _C.cat(atleast_3d(tensors), 2)


@_stacking
def column_stack(tensors):
    columns = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _C.cat(columns, 1)


# ---------------------------------------------------------------------------------------------
# Splits.

def _slice(input, dim, start, end, step=1):
    """input[start:end:step] along dim (dim already wrapped), clamped as Python slices are."""
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _split_at(op, input, dim, sections=None, indices=None):
    """input split along dim into `sections` parts (the first ones one longer when they do not come
    out even) or at `indices`: PyTorch's tensor_split."""
    if input.dim() == 0:
        raise RuntimeError(f"{op} expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if indices is None:
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        base, extra = divmod(size, sections)
        lengths = [base + 1] * extra + [base] * (sections - extra)
        indices = list(itertools.accumulate(lengths))[:-1]
    bounds = [0] + list(indices) + [size]
    return tuple(_slice(input, dim, start, end) for start, end in zip(bounds, bounds[1:]))


def _sections_or_indices(op, indices_or_sections):
    """(sections, None) or (None, indices) from an int, a list of ints or a long tensor of either."""
    if isinstance(indices_or_sections, Tensor):
        split = indices_or_sections
        if split.device.type != "cpu":
            raise RuntimeError(f"{op} expected tensor_indices_or_sections to be on cpu, but it's on {split.device}")
        if split.dtype != _C.int64:
            raise RuntimeError(f"{op} expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{aten_name(split.dtype)}")
        if split.dim() > 1:
            raise RuntimeError(f"{op} expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {split.dim()} dims")
        return (split.item(), None) if split.dim() == 0 else (None, split.tolist())
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(indices_or_sections, bool):
        return int(indices_or_sections), None
    return None, _ints_arg(op, "indices", 2, indices_or_sections)


@_named_after
def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    # PyTorch's overloads name the second argument by its kind: sections=, indices= or
    # tensor_indices_or_sections=; positionally it is any of them.
    given = [a for a in (indices_or_sections, sections, indices, tensor_indices_or_sections) if a is not None]
    if len(given) != 1:
        raise TypeError("tensor_split() missing required argument 'indices_or_sections'")
    sections, indices = _sections_or_indices("tensor_split", given[0])
    return _split_at("tensor_split", input, _int_arg("tensor_split", "dim", 3, dim), sections, indices)


def _directional_split(op, dim, min_dims):
    """hsplit, vsplit and dsplit: tensor_split along one dim, whose size sections must divide."""
    def split(input, indices_or_sections=None, *, sections=None, indices=None):
        given = [a for a in (indices_or_sections, sections, indices) if a is not None]
        if len(given) != 1:
            raise TypeError(f"{op}() missing required argument 'indices_or_sections'")
        if not isinstance(input, Tensor):
            raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        if input.dim() < min_dims:
            raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {input.dim()} dimensions!")
        along = 0 if op == "hsplit" and input.dim() == 1 else dim
        if isinstance(given[0], numbers.Integral) and not isinstance(given[0], bool):
            sections = int(given[0])
            if sections == 0 or input.shape[along] % sections != 0:
                raise RuntimeError(f"torch.{op} attempted to split along dimension {along}, but the size of the "
                                   f"dimension {input.shape[along]} is not divisible by the split_size {sections}!")
            return _split_at(op, input, along, sections=sections)
        return _split_at(op, input, along, indices=_ints_arg(op, "indices", 2, given[0]))
    split.__name__ = split.__qualname__ = op
    return _named(op)(split)


hsplit = _directional_split("hsplit", 1, 1)
vsplit = _directional_split("vsplit", 0, 2)
dsplit = _directional_split("dsplit", 2, 3)


@_named_after
def split_with_sizes(input, split_sizes, dim=0):
    return tuple(input.split(_ints_arg("split_with_sizes", "split_sizes", 2, split_sizes),
                             _int_arg("split_with_sizes", "dim", 3, dim)))


# The unsafe forms are the same splits; PyTorch's differ only in not tracking the parts as views
# of their input for autograd, a safety check that composites do not need to skip.
@_named_after
def unsafe_split(input, split_size, dim=0):
    return tuple(input.split(_int_arg("unsafe_split", "split_size", 2, split_size),
                             _int_arg("unsafe_split", "dim", 3, dim)))


@_named_after
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


@_named_after
def unsafe_chunk(input, chunks, dim=0):
    return tuple(input.chunk(_int_arg("unsafe_chunk", "chunks", 2, chunks), _int_arg("unsafe_chunk", "dim", 3, dim)))


# ---------------------------------------------------------------------------------------------
# Repeats, rolls, rotations and flips.

@_named_after
def tile(input, *dims_args, dims=None):
    dims = _sizes_arg("tile", "dims", dims_args if dims is None else (dims,))
    # Fewer repeats than dims: the leading dims are repeated once.
    dims = [1] * (input.dim() - len(dims)) + dims
    return input.repeat(dims)


def _roll_dim(input, shift, dim):
    if input.numel() == 0:
        return input.clone()
    size = input.shape[dim] if input.dim() else 1
    start = (size - shift) % size
    return _C.cat([input.narrow(dim, start, size - start), input.narrow(dim, 0, start)], dim)


@_named_after
def roll(input, shifts, dims=None):
    shifts = _ints_arg("roll", "shifts", 2, shifts)
    dims = [] if dims is None else _ints_arg("roll", "dims", 3, dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return _roll_dim(input.reshape(-1), shifts[0], 0).view(input.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    for shift, dim in zip(shifts, dims):
        if input.numel() == 0:
            return input.clone()
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        input = _roll_dim(input, shift, _wrap_dim(dim, input.dim()))
    return input


@_named_after
def rot90(input, k=1, dims=(0, 1)):
    k = _int_arg("rot90", "k", 2, k)
    dims = _ints_arg("rot90", "dims", 3, dims)
    ndim = input.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = _wrap_dim(dims[0], ndim), _wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


@_named_after
def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("fliplr: Input must be >= 2-d.")
    return input.flip([1])


@_named_after
def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("flipud: Input must be >= 1-d.")
    return input.flip([0])


@_named_after
def moveaxis(input, source, destination):
    return input.movedim(source, destination)


@_named_after
def ravel(input):
    return input.reshape(-1)


# ---------------------------------------------------------------------------------------------
# Grids and products of sets.

_meshgrid_warned = False


def _grids(op, tensors, indexing):
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a.dtype != b.dtype:
            raise RuntimeError(f"{op} expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError(f"{op} expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    # "xy" is "ij" with the first two inputs swapped, and their grids swapped back.
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = [tensors[1], tensors[0]] + tensors[2:]
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {list(t.shape)}")
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(t.reshape(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@_named("meshgrid")
def meshgrid(*tensors, indexing=None):
    global _meshgrid_warned
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    tensors = _tensors_arg("meshgrid", tensors)
    if indexing is None:
        # PyTorch warns once per process.
        if not _meshgrid_warned:
            _meshgrid_warned = True
            warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                          "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    return _grids("meshgrid", tensors, indexing)


@_named("cartesian_prod")
def cartesian_prod(*tensors):
    tensors = _tensors_arg("cartesian_prod", tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"cartesian_prod: Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return _C.stack([g.flatten() for g in _grids("cartesian_prod", tensors, "ij")], 1)


@_named_after
def combinations(input, r=2, with_replacement=False):
    r = _int_arg("combinations", "r", 2, r)
    if input.dim() != 1:
        raise RuntimeError(f"combinations: Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return _C.empty(0, dtype=input.dtype, device=input.device)
    # The positions of each combination, in PyTorch's (lexicographic) order; the values are gathered
    # from them so that the gradient flows back to input.
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    positions = [i for combination in choose(range(input.shape[0]), r) for i in combination]
    index = _tensor.tensor(positions, dtype=_C.int64, device=input.device)
    return input.index_select(0, index).reshape(-1, r)


def _promoted_dtype(tensors):
    """PyTorch's result type of several tensors: 0-dim tensors raise the type only to a higher category."""
    def promote(dtypes):
        return functools.reduce(_C.promote_types, dtypes) if dtypes else None
    dims = promote([t.dtype for t in tensors if t.dim() > 0])
    zero_dims = promote([t.dtype for t in tensors if t.dim() == 0])
    if dims is None or zero_dims is None:
        return dims or zero_dims
    return dims if can_cast(zero_dims, dims) else _C.promote_types(dims, zero_dims)


@_named("block_diag")
@outside_autocast
def block_diag(*tensors):
    tensors = _tensors_arg("block_diag", tensors)
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    if not tensors:
        return _C.empty(1, 0)
    dtype, device = _promoted_dtype(tensors), tensors[0].device
    # Each block is a matrix: 0-dim and 1-D tensors are one row.
    blocks = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        height, right = b.shape[0], width - left - b.shape[1]
        rows.append(_C.cat([_C.zeros(height, left, dtype=dtype, device=device), b.to(dtype),
                            _C.zeros(height, right, dtype=dtype, device=device)], 1))
        left += b.shape[1]
    return _C.cat(rows, 0)


@with_out
@_named_after
def kron(input, other):
    ndim = max(input.dim(), other.dim())
    a = [1] * (ndim - input.dim()) + list(input.shape)
    b = [1] * (ndim - other.dim()) + list(other.shape)
    # input's dims interleaved with other's: each element of input scales a whole copy of other.
    a_view = [s for size in a for s in (size, 1)]
    b_view = [s for size in b for s in (1, size)]
    input, other = input.reshape(a_view), other.reshape(b_view)
    shape = [x * y for x, y in zip(a, b)]
    # PyTorch views the product as the result; its product is laid out as its inputs are, and where
    # that layout cannot be viewed so (a transposed input), PyTorch raises: so does this.
    product_shape = [x if y == 1 else y for x, y in zip(a_view, b_view)]
    _C.empty_strided(product_shape, _product_strides([input, other], product_shape), device="meta").view(shape)
    return (input * other).reshape(shape)


def _product_strides(operands, shape):
    """The strides of an elementwise result as PyTorch's TensorIterator lays it out: its dims ordered in
    memory as its operands' are, the first operand deciding first (reorder_dimensions)."""
    def byte_strides(t):
        return [0 if size == 1 and full != 1 else stride * t.itemsize
                for size, stride, full in zip(t.shape, t.stride(), shape)]
    strides = [byte_strides(t) for t in operands]

    def order(d0, d1):
        for st in strides:
            if st[d0] == 0 or st[d1] == 0:  # broadcast along one of them: the next operand decides
                continue
            if st[d0] != st[d1]:
                return -1 if st[d0] < st[d1] else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    # An insertion sort, from the fastest-moving dim, that keeps ambiguous pairs in place.
    perm = list(range(len(shape)))[::-1]
    for i in range(1, len(perm)):
        moving = i
        for j in range(i - 1, -1, -1):
            comparison = order(perm[j], perm[moving])
            if comparison > 0:
                perm[j], perm[moving] = perm[moving], perm[j]
                moving = j
            elif comparison < 0:
                break
    result, step = [0] * len(shape), 1
    for d in perm:
        result[d] = step
        step *= shape[d]
    return result


# ---------------------------------------------------------------------------------------------
# Tensor methods: unfold and sum_to_size.

@_named_after
def unfold(input, dimension, size, step):
    """The windows of `size` elements, `step` apart, along `dimension`, as a new last dim (a view)."""
    dimension = _wrap_dim(_int_arg("unfold", "dimension", 1, dimension), input.dim())
    size, step = _int_arg("unfold", "size", 2, size), _int_arg("unfold", "step", 3, step)
    sizes, strides = list(input.shape), list(input.stride())
    longest = sizes[dimension] if input.dim() else 1
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if size > longest:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {dimension} is {longest} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if input.dim() == 0:
        return input.as_strided([size], [1])
    window_stride = strides[dimension]
    sizes[dimension] = (sizes[dimension] - size) // step + 1
    strides[dimension] *= step
    return _Unfold.apply(input, sizes + [size], strides + [window_stride], dimension, step)


class _Unfold(Function):
    """unfold's windows as a view of input; the gradient of an element is the sum over the windows
    that hold it (they overlap where step < size)."""

    @staticmethod
    def forward(ctx, input, sizes, strides, dim, step):
        ctx.shape, ctx.dim, ctx.step = list(input.shape), dim, step
        # A view of input's memory, taken through a detached alias: as a view of input itself, autograd
        # would give it as_strided's history, whose gradient does not add up overlapping windows.
        return input.detach().as_strided(sizes, strides)

    @staticmethod
    def backward(ctx, grad):
        dim, count, size = ctx.dim, grad.shape[ctx.dim], grad.shape[-1]
        device = grad.device
        starts = _C.arange(count, device=device) * ctx.step
        positions = (starts.unsqueeze(1) + _C.arange(size, device=device)).reshape(-1)
        # Each window's elements in order along dim, leading: they add up where positions repeat.
        windows = grad.movedim(-1, dim + 1).flatten(dim, dim + 1).movedim(dim, 0)
        shape = [ctx.shape[dim]] + ctx.shape[:dim] + ctx.shape[dim + 1:]
        grad_input = _C.zeros(shape, dtype=grad.dtype, device=device)
        grad_input.index_put_((positions,), windows, accumulate=True)
        return grad_input.movedim(0, dim), None, None, None, None


@_named_after
def sum_to_size(input, *size_args, size=None):
    size = _sizes_arg("sum_to_size", "size", size_args if size is None else (size,))
    shape = list(input.shape)
    leading = len(shape) - len(size)
    if leading < 0 or any(s != 1 and s != n for s, n in zip(size, shape[leading:])):
        raise RuntimeError(f"sum_to_size: size {{{size}}} is not expandable to size {{{shape}}}.")
    dims = list(range(leading)) + [leading + i for i, s in enumerate(size) if s == 1 and shape[leading + i] != 1]
    if not dims:
        return input
    return input.sum(dims, keepdim=True).view(size)


# ---------------------------------------------------------------------------------------------
# In-place view ops: the tensor takes the geometry of a view of itself.

class _Rebase(Function):
    """input given view's geometry in place; the gradient flows through view's own history, so that
    each view op's backward (transpose, squeeze, as_strided ...) applies."""

    @staticmethod
    def forward(ctx, input, view):
        input.data = view
        ctx.mark_dirty(input)
        return input

    @staticmethod
    def backward(ctx, grad):
        return None, grad


def _rebase(op, input, view):
    if _C.is_grad_enabled() and input.requires_grad:
        if input.is_leaf:
            raise RuntimeError(f"{op}(): a leaf Variable that requires grad is being used in an in-place operation.")
        return _Rebase.apply(input, view)
    # An in-place write to an empty view bumps the version counter that input shares with its views
    # (as PyTorch's in-place view ops do), without touching an element.
    input.as_strided((0,), (1,)).zero_()
    input.data = view
    return input


@_named_after
def as_strided_(input, size, stride, storage_offset=None):
    return _rebase("as_strided_", input, input.as_strided(size, stride, storage_offset))


@_named_after
def squeeze_(input, dim=None):
    return _rebase("squeeze_", input, input.squeeze() if dim is None else input.squeeze(dim))


@_named_after
def unsqueeze_(input, dim):
    return _rebase("unsqueeze_", input, input.unsqueeze(dim))


@_named_after
def t_(input):
    return _rebase("t_", input, input.t())


@_named_after
def transpose_(input, dim0, dim1):
    return _rebase("transpose_", input, input.transpose(dim0, dim1))


@_named_after
def swapaxes_(input, axis0, axis1):
    return _rebase("swapaxes_", input, input.transpose(axis0, axis1))


@_named_after
def swapdims_(input, dim0, dim1):
    return _rebase("swapdims_", input, input.transpose(dim0, dim1))


# ---------------------------------------------------------------------------------------------
# The *_copy forms: the view op's result in memory of its own.

def _contiguous_copy(t):
    return t.contiguous() if not t.is_contiguous() else t.clone()


def _write_exact(op, out, result):
    """out= of a *_copy op: out's dtype must be the result's (these do not cast)."""
    if isinstance(out, Tensor) and out.dtype != result.dtype:
        raise RuntimeError(f"{op}(): Expected out tensor to have dtype {result.dtype}, but got {out.dtype} instead")
    return write_out(op, out, result.detach())


def _write_list(op, out, results):
    """out= of a *_copy op that returns several tensors: a list of as many. split_copy's out= copies
    into each as copy_ does (broadcasting, casting); the others' are written as a single out= is."""
    if not isinstance(out, (list, tuple)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{op}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != len(results):
        raise RuntimeError(f"{op}(): expected an out= argument of size {len(results)}, got size {len(out)}")
    for o, r in zip(out, results):
        if op == "split_copy":
            o.copy_(r.detach())
        else:
            _write_exact(op, o, r)


def _view_copy(view):
    """The *_copy form of a view op: view(input, ...) copied, with out=."""
    op = view.__name__

    named = _named_after(view)

    @functools.wraps(view)
    def copy(input, *args, out=None, **kwargs):
        result = named(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            results = tuple(_contiguous_copy(r) for r in result)
            return results if out is None else _write_list(op, out, results)
        result = _contiguous_copy(result)
        return result if out is None else _write_exact(op, out, result)
    return copy


@_view_copy
def alias_copy(input):
    return input


@_view_copy
def as_strided_copy(input, size, stride, storage_offset=None):
    return input.as_strided(size, stride, storage_offset)


@_view_copy
def detach_copy(input):
    return input.detach()


@_view_copy
def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return input.diagonal(offset, dim1, dim2)


@_view_copy
def view_as_real_copy(input):
    return _C.view_as_real(input)


@_view_copy
def view_as_complex_copy(input):
    return _C.view_as_complex(input)


@_view_copy
def expand_copy(input, size, *, implicit=False):
    return input.expand(size)


@_view_copy
def narrow_copy(input, dim, start, length):
    # PyTorch's narrow_copy checks start before length (narrow checks length first).
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start = start.item() if isinstance(start, Tensor) else start
    size = input.shape[_wrap_dim(dim, input.dim())]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start += size if start < 0 else 0
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input.narrow(dim, start, length)


@_view_copy
def permute_copy(input, dims):
    return input.permute(dims)


@_view_copy
def select_copy(input, dim, index):
    return input.select(dim, index)


@_view_copy
def slice_copy(input, dim=0, start=None, end=None, step=1):
    dim, step = _int_arg("slice_copy", "dim", 2, dim), _int_arg("slice_copy", "step", 5, step)
    if input.dim() == 0:
        raise IndexError("slice_copy: slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.dim())
    if step <= 0:
        raise RuntimeError("slice_copy: slice step must be positive")
    return _slice(input, dim, start, end, step)


@_view_copy
def split_copy(input, split_size, dim=0):
    return input.split(_int_arg("split_copy", "split_size", 2, split_size), dim)


@_view_copy
def split_with_sizes_copy(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


@_view_copy
def squeeze_copy(input, dim=None):
    return input.squeeze() if dim is None else input.squeeze(dim)


@_view_copy
def t_copy(input):
    return input.t()


@_view_copy
def transpose_copy(input, dim0, dim1):
    return input.transpose(dim0, dim1)


@_view_copy
def unbind_copy(input, dim=0):
    return input.unbind(dim)


@_view_copy
def unfold_copy(input, dimension, size, step):
    return unfold(input, dimension, size, step)


@_view_copy
def unsqueeze_copy(input, dim):
    return input.unsqueeze(dim)


@_view_copy
def view_copy(input, size=None, *, dtype=None):
    # view_copy(x, (2, 3)) or view_copy(x, tensorplay.int16): the second argument's kind decides.
    # The copy needs no view of input's memory, so any layout will do, as in PyTorch.
    if dtype is not None or isinstance(size, _C.dtype):
        return input.view(size if dtype is None else dtype)
    return input.reshape(size)

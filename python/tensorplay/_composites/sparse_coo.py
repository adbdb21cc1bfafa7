"""Sparse COO tensors from Python: the constructor torch.sparse_coo_tensor with PyTorch's argument
handling, Tensor.to_sparse, and the Tensor methods that read a sparse tensor's parts. The tensor, its
parts and the ops that take it (add, mm, to, coalesce, to_dense) are C++ (csrc/tensorplay/ops/sparse.cpp)."""

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._composites.tensor_api import sparse_coo as _sparse_coo_layout
from tensorplay._tensor import tensor as _tensor

__all__ = ["sparse_coo_tensor", "_sparse_coo_tensor_unsafe"]
METHODS = [
    "_indices", "_values", "indices", "values", "_nnz", "coalesce", "is_coalesced", "to_dense", "to_sparse",
    "to_sparse_coo", "sparse_dim", "dense_dim", "sparse_mask", "_coalesced_"
]


def _refuse_strided(op, input):
    if not input.is_sparse:
        raise RuntimeError(f"{op} expected sparse coordinate tensor layout but got Strided")


def _as_tensor(value, name, dtype=None):
    if isinstance(value, Tensor):
        return value
    try:
        return _tensor(value, dtype=dtype)
    except (TypeError, ValueError) as error:
        raise TypeError(f"sparse_coo_tensor(): argument '{name}' must be a tensor or a sequence of numbers, "
                        f"not {type(value).__name__}") from error


def _inferred_size(indices, values):
    """The smallest size that holds the entries: one past the largest index of each sparse dim, then
    the values' dense sizes."""
    if indices.shape[1] == 0:
        sparse_sizes = [0] * indices.shape[0]
    else:
        sparse_sizes = (indices.amax(1) + 1).tolist()
    return sparse_sizes + list(values.shape[1:])


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with `values` at `indices`. tensorplay always checks that the indices lie
    within the size (PyTorch does only when asked), so a bad index is an error here, not a crash
    later; check_invariants (or torch.sparse.check_sparse_tensor_invariants) adds the check that
    is_coalesced=True tells the truth."""
    if pin_memory:
        raise RuntimeError("sparse_coo_tensor: pin_memory needs a CUDA build; tensorplay's has no pinned memory")
    indices = _as_tensor(indices, "indices", dtype=_C.int64 if not isinstance(indices, Tensor) else None)
    values = _as_tensor(values, "values", dtype=dtype)
    if dtype is not None:
        values = values.to(dtype)
    if device is not None:
        indices, values = indices.to(device), values.to(device)
    if indices.dtype != _C.int64 or indices.dim() != 2:
        # The C++ constructor says what is wrong; an inferred size needs a usable indices tensor first.
        return _C._sparse_coo_tensor(indices, values, [], False)
    if size is None:
        size = _inferred_size(indices, values)
    result = _C._sparse_coo_tensor(indices, values, list(size), bool(is_coalesced))
    if is_coalesced and _checks_invariants(check_invariants):
        _check_coalesced(result)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _sparse_coo_tensor_unsafe(indices, values, size, *, dtype=None, device=None, requires_grad=False,
                              check_invariants=None, is_coalesced=None):
    return sparse_coo_tensor(indices, values, size, dtype=dtype, device=device, requires_grad=requires_grad,
                             check_invariants=check_invariants, is_coalesced=is_coalesced)


def _checks_invariants(check_invariants):
    if check_invariants is not None:
        return check_invariants
    from tensorplay.sparse import check_sparse_tensor_invariants
    return check_sparse_tensor_invariants.is_enabled()


def _check_coalesced(t):
    indices, size = t._indices(), t.shape
    keys = indices.new_zeros(indices.shape[1])
    for d in range(indices.shape[0]):
        keys = keys * size[d] + indices[d]
    if keys.numel() > 1 and not bool((keys[1:] > keys[:-1]).all()):
        raise RuntimeError("sparse_coo_tensor: is_coalesced=True but the indices are not sorted and unique")


# ---- the parts ----

def _reading(name, part):
    """The method `name` that reads part(input) of a sparse tensor, and refuses a strided one."""
    def method(input):
        _refuse_strided(name, input)
        return part(input)
    method.__name__ = method.__qualname__ = name
    return method


_indices = _reading("_indices", _C._sparse_indices)
_values = _reading("_values", _C._sparse_values)
_nnz = _reading("_nnz", lambda input: _C._sparse_indices(input).shape[1])
coalesce = _reading("coalesce", _C._coalesce)
is_coalesced = _reading("is_coalesced", _C._sparse_is_coalesced)


def _coalesced_part(name, input, part):
    _refuse_strided(name, input)
    if not _C._sparse_is_coalesced(input):
        raise RuntimeError(f"Cannot get {name} on an uncoalesced tensor, please call .coalesce() first")
    return part(input)


def indices(input):
    return _coalesced_part("indices", input, _C._sparse_indices)


def values(input):
    return _coalesced_part("values", input, _C._sparse_values)


def sparse_dim(input):
    """The number of sparse dims (those the indices address): 0 for a strided tensor."""
    return _C._sparse_indices(input).shape[0] if input.is_sparse else 0


def dense_dim(input):
    """The number of dense dims (those of each stored value): all of a strided tensor's."""
    return input.dim() - sparse_dim(input)


def _coalesced_(input, coalesced):
    """Marks the tensor coalesced or not, as PyTorch's private method does: a promise, here checked."""
    _refuse_strided("_coalesced_", input)
    if coalesced:
        _check_coalesced(input)
    replacement = _C._sparse_coo_tensor_unsafe(input._indices(), input._values(), list(input.shape), bool(coalesced))
    input.data = replacement
    return input


# ---- conversions ----

def to_dense(input, dtype=None, *, masked_grad=None):
    """A strided tensor with the sparse tensor's elements (a strided tensor is returned as it is, cast
    to dtype when that is another). masked_grad concerns which gradient a sparse input gets: ours is
    the gradient at its stored entries either way."""
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"to_dense(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    if masked_grad is not None and not isinstance(masked_grad, bool):
        raise TypeError(f"to_dense(): argument 'masked_grad' must be bool, not {type(masked_grad).__name__}")
    return _C._to_dense(input, dtype)


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A sparse COO tensor of the nonzero elements of the first sparse_dim dims (all by default): an
    entry for each position there at which any element is nonzero."""
    if layout is not None and layout is not _sparse_coo_layout:
        raise NotImplementedError(f"to_sparse: tensorplay has only the sparse COO layout, not {layout}")
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError("to_sparse: blocksize and dense_dim belong to the compressed layouts, which "
                                  "tensorplay does not have")
    if input.is_sparse:
        if sparse_dim is not None and sparse_dim != input.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim argument != "
                               f"self.sparse_dim() is not supported (got {sparse_dim} and {input.sparse_dim()})")
        return input
    sparse_dim = input.dim() if sparse_dim is None else sparse_dim
    if not 0 <= sparse_dim <= input.dim():
        raise RuntimeError(f"to_sparse: sparse_dim argument must be in [0, {input.dim()}], but got {sparse_dim}")
    flags = input != 0
    if sparse_dim < input.dim():
        flags = flags.flatten(sparse_dim).any(-1) if input.numel() else flags.flatten(sparse_dim)[..., 0]
    positions = flags.nonzero().t() if sparse_dim else _C.zeros(0, 1, dtype=_C.int64)
    stored = input[tuple(positions)] if sparse_dim else input.unsqueeze(0)
    return _C._sparse_coo_tensor_unsafe(positions, stored, list(input.shape), True)


def to_sparse_coo(input):
    return to_sparse(input)


def sparse_mask(input, mask):
    """The elements of the dense input at the stored entries of the sparse mask, as a sparse tensor with
    the mask's indices (its values are ignored)."""
    if not mask.is_sparse:
        raise RuntimeError("sparse_mask: expected mask to be a sparse COO tensor, but got a strided one")
    if tuple(input.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {tuple(input.shape)} "
                           f"but mask has size {tuple(mask.shape)}")
    mask = mask.coalesce()
    positions = mask._indices()
    source = input.to_dense() if input.is_sparse else input
    return _C._sparse_coo_tensor_unsafe(positions, source[tuple(positions)], list(input.shape), True)


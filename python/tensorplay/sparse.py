"""torch.sparse: products, sums and softmaxes of sparse COO tensors, as composites of dense ops on
their indices and values (so gradients reach the values and the dense operands), and the switch
for checking the invariants of the sparse tensors built while it is on."""

import functools

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._composites.sparse_coo import sparse_coo_tensor
from tensorplay._composites.statistics import unique

__all__ = ["addmm", "check_sparse_tensor_invariants", "mm", "sum", "softmax", "log_softmax",
           "to_sparse_semi_structured", "as_sparse_gradcheck"]


def _check_sparse(op, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_sparse:
        raise RuntimeError(f"{op}: expected a sparse COO tensor, but got a strided one")


def _wrap(op, dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    return dim % ndim


def mm(mat1, mat2, reduce="sum"):
    """mat1 @ mat2 for a sparse COO mat1 with two sparse dims and a dense or sparse mat2: dense for a
    dense mat2, sparse for a sparse one. Gradients reach mat2 and mat1's values."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm: reduce='{reduce}' is defined for sparse CSR tensors, which "
                                  f"tensorplay does not have; only 'sum' is")
    if isinstance(mat1, Tensor) and mat1.is_sparse and isinstance(mat2, Tensor) and mat2.is_sparse:
        return _C.mm(mat1, mat2.to_dense()).to_sparse()
    return _C.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) for a dense mat, sparse COO mat1 and dense mat2."""
    return _C.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's elements over dim (all of them by default). Summing over every
    sparse dim gives a dense tensor; over some of them, a coalesced sparse tensor of the rest."""
    _check_sparse("sparse.sum", input)
    if dim is None:
        # Coalesced first, so that a bool tensor's repeated entries count once, as in PyTorch.
        return input.coalesce().sum(dtype=dtype)
    return input.sum([dim] if isinstance(dim, int) else list(dim), dtype=dtype)


def _softmax(op, input, dim, dtype, log):
    """The softmax over dim of the stored entries alone (the others count as -inf): along a dense dim,
    each stored value's own; along a sparse dim, over the entries whose other indices agree."""
    _check_sparse(op, input)
    dim = _wrap(op, dim, input.dim())
    if dtype is not None:
        input = input.to(dtype)
    input = input.coalesce()
    indices, values = input._indices(), input._values()
    sparse_dim = indices.shape[0]
    if dim >= sparse_dim:
        out = (_C.log_softmax if log else _C.softmax)(values, dim - sparse_dim + 1)
    elif values.shape[0] == 0:
        out = values.clone()
    else:
        keys = indices.new_zeros(indices.shape[1])
        for d in range(sparse_dim):
            if d != dim:
                keys = keys * input.shape[d] + indices[d]
        group = unique(keys, return_inverse=True)[1]
        groups = (int(group.max()) + 1,) + tuple(values.shape[1:])
        at = group.view(-1, *[1] * (values.dim() - 1)).expand_as(values)
        # Shifting by each group's largest value leaves the softmax as it is and keeps exp finite.
        peak = values.new_zeros(groups).scatter_reduce(0, at, values.detach(), "amax", include_self=False)
        shifted = values - peak.gather(0, at)
        total = values.new_zeros(groups).scatter_add(0, at, shifted.exp())
        out = shifted - total.log().gather(0, at) if log else shifted.exp() / total.gather(0, at)
    return _C._sparse_coo_tensor_unsafe(indices, out, list(input.shape), True)


def softmax(input, dim, *, dtype=None):
    return _softmax("sparse.softmax", input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    return _softmax("sparse.log_softmax", input, dim, dtype, log=True)


def to_sparse_semi_structured(original_tensor, transposed=False):
    """2:4 semi-structured sparsity runs on NVIDIA's sparse tensor cores only."""
    raise RuntimeError(f"Error original_tensor.device= {original_tensor.device} is not supported! Only CUDA tensors "
                       f"are currently supported.")


class check_sparse_tensor_invariants:
    """Whether the sparse tensors built from here on are checked in full. tensorplay always checks
    that indices lie within the size; this adds the check that is_coalesced=True holds. A context
    manager and a decorator; enable() and disable() set the process-wide default."""

    _enabled = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context manager "
                               "instance for context nesting.")
        self.saved_state = self.is_enabled()
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved_state
        self.saved_state = None

    def __call__(self, function):
        @functools.wraps(function)
        def checked(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return function(*args, **kwargs)
        return checked


def as_sparse_gradcheck(gradcheck):
    """gradcheck for functions of sparse tensors: each sparse input that requires grad is checked
    through its values (the entries it stores, which the check perturbs), and sparse outputs are
    compared as dense tensors."""

    @functools.wraps(gradcheck)
    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        structure = []
        flat = []
        for x in inputs:
            if isinstance(x, Tensor) and x.is_sparse and x.requires_grad:
                x = x.detach().coalesce()
                structure.append((x._indices(), list(x.shape)))
                flat.append(x._values().detach().requires_grad_(True))
            else:
                structure.append(None)
                flat.append(x)

        def func_of_values(*args):
            rebuilt = [a if parts is None else sparse_coo_tensor(parts[0], a, parts[1], is_coalesced=True)
                       for a, parts in zip(args, structure)]
            outputs = func(*rebuilt)
            if isinstance(outputs, Tensor):
                return outputs.to_dense() if outputs.is_sparse else outputs
            return tuple(o.to_dense() if isinstance(o, Tensor) and o.is_sparse else o for o in outputs)

        return gradcheck(func_of_values, tuple(flat), **kwargs)

    return gradcheck_with_sparse_support

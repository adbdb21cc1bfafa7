"""Sparse COO tensors against torch's: construction (given and inferred sizes, dense dims, no entries,
the dtype/device/requires_grad arguments), the constructor's errors, coalesce and the is_coalesced
flags, to_dense and to_sparse round trips, torch.sparse.sum over every set of dims, the sparse
softmaxes, sparse @ dense products (values and gradients, and gradcheck), the additions that take a
sparse operand, repr, autocast, and clean errors from the ops that have no sparse path.

Most cases build the same tensor in both libraries (`m`) and compare what comes out; sparse results
are compared through their parts or densified."""

import copy
import io
import itertools
import pickle
import re

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import LIBS, run_isolated

# torch warns, once per process, that it does not check invariants unless asked, and that its
# sparse @ sparse goes through CSR, a beta layout.
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta:UserWarning")]


def name_of(dtype):
    return str(dtype).split(".")[-1]


def numpy_of(t):
    """The elements of a tensor of either library (densified when sparse) as a numpy array."""
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    if name_of(t.dtype) == "bfloat16":
        t = t.float()
    return t.numpy()


def assert_same(ours, theirs, rtol=1e-6, atol=1e-6):
    """Same layout, dtype, shape and (densified) elements."""
    assert ours.is_sparse == theirs.is_sparse
    assert name_of(ours.dtype) == name_of(theirs.dtype)
    assert list(ours.shape) == list(theirs.shape)
    np.testing.assert_allclose(numpy_of(ours), numpy_of(theirs), rtol=rtol, atol=atol)


# ---- the sparse tensors the cases run on: indices, values and size ----

RNG = np.random.default_rng(0)

CASES = {
    # 2 sparse dims, entry (0, 2) twice and not in order
    "matrix": ([[0, 1, 1, 0], [2, 0, 2, 2]], [1.0, -2.0, 3.0, 4.0], (2, 3)),
    # 2 sparse dims and a dense one, entry (0, 1) twice
    "hybrid": ([[0, 2, 0, 1], [1, 0, 1, 1]], RNG.normal(size=(4, 2)), (3, 2, 2)),
    # 1 sparse dim and two dense ones
    "rows": ([[3, 0]], RNG.normal(size=(2, 2, 3)), (4, 2, 3)),
    # 3 sparse dims, sorted and unique
    "cube": ([[0, 0, 1, 1], [0, 2, 1, 2], [1, 0, 1, 0]], [0.5, 1.5, -1.0, 2.0], (2, 3, 2)),
    # no entries
    "empty": (np.zeros((2, 0), dtype=np.int64), np.zeros(0), (2, 3)),
    "empty hybrid": (np.zeros((1, 0), dtype=np.int64), np.zeros((0, 3)), (4, 3)),
}


def build(m, case, dtype="float32", with_size=True, **kwargs):
    indices, values, size = CASES[case]
    indices = m.from_numpy(np.asarray(indices, dtype=np.int64))
    values = m.from_numpy(np.asarray(values, dtype=dtype))
    if with_size:
        return m.sparse_coo_tensor(indices, values, size, **kwargs)
    return m.sparse_coo_tensor(indices, values, **kwargs)


def both(call):
    """call(m) for each library."""
    return call(tp), call(torch)


# ---- construction ----

@pytest.mark.parametrize("with_size", [True, False], ids=["given size", "inferred size"])
@pytest.mark.parametrize("case", CASES)
def test_construction(case, with_size):
    ours, theirs = both(lambda m: build(m, case, with_size=with_size))
    assert ours.is_sparse and str(ours.layout) == "tensorplay.sparse_coo"
    assert list(ours.shape) == list(theirs.shape)
    assert (ours.sparse_dim(), ours.dense_dim(), ours._nnz()) == (theirs.sparse_dim(), theirs.dense_dim(),
                                                                   theirs._nnz())
    assert ours.dim() == theirs.dim() and ours.numel() == theirs.numel()
    np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
    np.testing.assert_array_equal(ours._values().numpy(), theirs._values().numpy())
    assert_same(ours.to_dense(), theirs.to_dense())


@pytest.mark.parametrize("call", [
    lambda m: m.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2]),
    lambda m: m.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2], dtype=m.float64),
    lambda m: m.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0], (4, 4), dtype=m.int32),
    lambda m: m.sparse_coo_tensor([[0, 2]], [[True, False], [False, True]], device="cpu"),
    lambda m: m.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0], (3, 3), requires_grad=True),
    lambda m: m.sparse_coo_tensor(m.tensor([[1]]), m.tensor([2.0], dtype=m.float64), device=m.device("cpu")),
], ids=["list arguments", "dtype", "dtype casts values", "device", "requires_grad", "device object"])
def test_construction_arguments(call):
    ours, theirs = both(call)
    assert name_of(ours.dtype) == name_of(theirs.dtype)
    assert str(ours.device) == str(theirs.device) == "cpu"
    assert ours.requires_grad == theirs.requires_grad
    assert ours.is_leaf == theirs.is_leaf
    assert_same(ours, theirs)


@pytest.mark.parametrize("indices, size", [
    ([[0, 3]], (3,)),
    ([[0, -1]], (3,)),
    ([[0, 1], [2, 4]], (2, 4)),
    ([[0, 1], [-2, 1]], (2, 4)),
], ids=["past the end", "negative", "past the end in dim 1", "negative in dim 1"])
def test_indices_out_of_range_raise(indices, size):
    """tensorplay checks the range always (torch only when asked), so a bad index fails at once."""
    values = [1.0] * len(indices[0])
    with pytest.raises((IndexError, RuntimeError), match="sparse_coo_tensor"):
        tp.sparse_coo_tensor(indices, values, size)
    with pytest.raises(RuntimeError), torch.sparse.check_sparse_tensor_invariants():
        torch.sparse_coo_tensor(indices, values, size)


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call, message", [
    (lambda m: m.sparse_coo_tensor([[0, 1, 2]], [1.0, 2.0], (3,)), "nnz"),
    (lambda m: m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3, 4)), "len\\(size\\) == sparse_dim \\+ dense_dim"),
    (lambda m: m.sparse_coo_tensor([[0, 1]], [[1.0, 2.0], [3.0, 4.0]], (3, 3)), "values has incorrect size"),
    (lambda m: m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 2, 2)), "len\\(size\\)"),
], ids=["nnz differs", "too many sizes", "dense size differs", "too many sizes for values"])
def test_inconsistent_arguments_raise(m, call, message):
    with pytest.raises(RuntimeError, match=message):
        call(m)


@pytest.mark.parametrize("indices", [
    lambda: tp.tensor([[0, 1]], dtype=tp.int32),
    lambda: tp.tensor([[0.0, 1.0]]),
    lambda: tp.tensor([[0, 1]], dtype=tp.int16),
], ids=["int32", "float32", "int16"])
def test_indices_that_are_not_int64_raise(indices):
    """torch converts such indices; tensorplay asks for int64 ones."""
    with pytest.raises(RuntimeError, match="sparse_coo_tensor.*int64"):
        tp.sparse_coo_tensor(indices(), tp.tensor([1.0, 2.0]), (3,))


@pytest.mark.parametrize("m", LIBS)
def test_is_coalesced_true_is_checked_on_request(m):
    build_unsorted = lambda **kw: m.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0], (3,), is_coalesced=True, **kw)
    with pytest.raises(RuntimeError):
        build_unsorted(check_invariants=True)
    with pytest.raises(RuntimeError), m.sparse.check_sparse_tensor_invariants():
        build_unsorted()
    assert not m.sparse.check_sparse_tensor_invariants.is_enabled()
    assert build_unsorted(check_invariants=False).is_coalesced()
    ok = m.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,), is_coalesced=True, check_invariants=True)
    assert ok.is_coalesced()


# ---- coalesce ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("case", CASES)
def test_coalesce(case, dtype):
    ours, theirs = both(lambda m: build(m, case, dtype=dtype))
    ours_c, theirs_c = ours.coalesce(), theirs.coalesce()
    assert ours_c.is_coalesced() and theirs_c.is_coalesced()
    np.testing.assert_array_equal(ours_c.indices().numpy(), theirs_c.indices().numpy())
    np.testing.assert_allclose(ours_c.values().numpy(), theirs_c.values().numpy(), rtol=1e-6)
    assert name_of(ours_c.dtype) == name_of(theirs_c.dtype)
    assert ours_c._nnz() == theirs_c._nnz()
    assert_same(ours_c, ours.to_dense().to_sparse(ours.sparse_dim()))  # the same tensor, whichever way
    again = ours_c.coalesce()
    np.testing.assert_array_equal(again._indices().numpy(), ours_c._indices().numpy())


@pytest.mark.parametrize("call", [
    lambda m: build(m, "matrix"),
    lambda m: build(m, "cube"),
    lambda m: build(m, "matrix").coalesce(),
    lambda m: build(m, "empty"),
    lambda m: m.sparse_coo_tensor([[1], [2]], [5.0], (2, 3)),
    lambda m: build(m, "cube", is_coalesced=True),
    lambda m: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(),
    lambda m: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(1),
    lambda m: build(m, "matrix").coalesce().double(),
    lambda m: build(m, "matrix").coalesce().detach(),
    lambda m: build(m, "matrix").coalesce() + build(m, "matrix").coalesce(),
    lambda m: build(m, "matrix") + build(m, "matrix"),
], ids=["unsorted with a duplicate", "sorted", "coalesced", "no entries", "one entry", "told so",
        "to_sparse", "to_sparse(1)", "double of coalesced", "detach of coalesced", "sum of coalesced",
        "sum of uncoalesced"])
def test_is_coalesced_flag(call):
    ours, theirs = both(call)
    assert ours.is_coalesced() == theirs.is_coalesced()


@pytest.mark.parametrize("m", LIBS)
def test_indices_and_values_need_a_coalesced_tensor(m):
    t = build(m, "matrix")
    for part in (t.indices, t.values):
        with pytest.raises(RuntimeError, match="uncoalesced"):
            part()
    assert t._values().tolist() == [1.0, -2.0, 3.0, 4.0]


# ---- to_dense and to_sparse ----

DENSE = {
    "vector": np.array([0.0, 2.0, 0.0, -1.0]),
    "matrix": np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [3.0, 0.0, -2.0]]),
    "3-D": np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 3.0], [0.0, 0.0]]]),
    "zeros": np.zeros((2, 3)),
    "no elements": np.zeros((0, 3)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name, sparse_dim", [
    (name, sparse_dim) for name, array in DENSE.items() for sparse_dim in [None, *range(1, array.ndim + 1)]])
def test_to_sparse_round_trip(name, sparse_dim, dtype):
    array = DENSE[name].astype(dtype)
    ours, theirs = both(lambda m: m.from_numpy(array.copy()).to_sparse(*[sparse_dim] if sparse_dim else []))
    assert ours.sparse_dim() == theirs.sparse_dim() and ours.dense_dim() == theirs.dense_dim()
    np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
    np.testing.assert_array_equal(ours._values().numpy(), theirs._values().numpy())
    assert ours.is_coalesced() == theirs.is_coalesced()
    assert_same(ours.to_dense(), theirs.to_dense())
    np.testing.assert_array_equal(ours.to_dense().numpy(), array)
    if sparse_dim is None:
        assert_same(ours.to_sparse_coo(), theirs.to_sparse_coo())


@pytest.mark.parametrize("m", LIBS)
def test_to_dense_of_zero_sparse_dims(m):
    """A 0-dim tensor's sparse form, and a sparse tensor whose one entry is a dense block."""
    scalar = m.tensor(3.0).to_sparse()
    assert (scalar.sparse_dim(), scalar._nnz()) == (0, 1)
    assert scalar.to_dense().item() == 3.0
    block = m.sparse_coo_tensor(m.zeros(0, 1, dtype=m.int64), m.tensor([[1.0, 2.0]]), (2,))
    assert block.to_dense().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("m", LIBS)
def test_to_sparse_of_a_sparse_tensor(m):
    t = build(m, "hybrid")
    assert t.to_sparse() is t or t.to_sparse()._nnz() == t._nnz()
    assert t.to_sparse(2).sparse_dim() == 2
    with pytest.raises(RuntimeError, match="sparse_dim"):
        t.to_sparse(1)


@pytest.mark.parametrize("case", ["matrix", "hybrid", "cube"])
def test_sparse_mask(case):
    def masked(m):
        mask = build(m, case).coalesce()
        source = m.from_numpy(np.arange(np.prod(mask.shape), dtype=np.float32).reshape(tuple(mask.shape)))
        return source.sparse_mask(mask)
    ours, theirs = both(masked)
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())


@pytest.mark.parametrize("dtype", ["float64", "int32", "bfloat16", "bool"])
def test_to_dtype(dtype):
    ours, theirs = both(lambda m: build(m, "hybrid").to(getattr(m, dtype)))
    assert ours.is_sparse and ours.is_coalesced() == theirs.is_coalesced()
    assert_same(ours, theirs, rtol=1e-2)
    assert name_of(ours._values().dtype) == dtype
    assert_same(*both(lambda m: build(m, "hybrid").double()))


# ---- torch.sparse.sum ----

def every_dim_set(ndim):
    return [dims for k in range(1, ndim + 1) for dims in itertools.combinations(range(ndim), k)]


SUMMED = [(case, dims) for case in ["matrix", "hybrid", "rows", "cube", "empty", "empty hybrid"]
          for dims in [None, *every_dim_set(len(CASES[case][2]))]]


@pytest.mark.parametrize("case, dims", SUMMED, ids=[f"{c}-{d}" for c, d in SUMMED])
def test_sparse_sum(case, dims):
    ours, theirs = both(lambda m: m.sparse.sum(build(m, case, dtype="float64"), dims) if dims is not None
                        else m.sparse.sum(build(m, case, dtype="float64")))
    assert_same(ours, theirs, rtol=1e-12)
    if ours.is_sparse:
        assert ours.sparse_dim() == theirs.sparse_dim() and ours.dense_dim() == theirs.dense_dim()


@pytest.mark.parametrize("dims", [-1, (-1, 0), (0, -2), -3])
def test_sparse_sum_negative_dims(dims):
    assert_same(*both(lambda m: m.sparse.sum(build(m, "hybrid"), dims)))


@pytest.mark.parametrize("dims", [None, 0, (0, 1)])
@pytest.mark.parametrize("values_dtype, dtype", [("int32", "float64"), ("float32", "float64"), ("int64", None),
                                                 ("bool", None)])
def test_sparse_sum_dtype(dims, values_dtype, dtype):
    def summed(m):
        t = build(m, "matrix").to(getattr(m, values_dtype))
        dt = None if dtype is None else getattr(m, dtype)
        return m.sparse.sum(t, dtype=dt) if dims is None else m.sparse.sum(t, dims, dtype=dt)
    assert_same(*both(summed))


@pytest.mark.parametrize("m", LIBS)
def test_sparse_sum_errors(m):
    with pytest.raises(IndexError):
        m.sparse.sum(build(m, "matrix"), 2)
    with pytest.raises((RuntimeError, TypeError)):
        m.sparse.sum(m.ones(2, 3), 0)


def test_sparse_sum_gradient_reaches_the_values():
    def grads(m):
        values = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        t = m.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], values, (2, 3))
        weights = m.tensor([1.0, -2.0, 0.5], dtype=m.float64)
        (m.sparse.sum(t, 0).to_dense() * weights).sum().backward()
        return values.grad
    assert_same(*both(grads))


# ---- torch.sparse.softmax and log_softmax ----

SOFTMAXES = [(op, case, dim) for op in ["softmax", "log_softmax"] for case in ["matrix", "hybrid", "rows", "cube"]
             for dim in range(-len(CASES[case][2]), len(CASES[case][2]))]


@pytest.mark.parametrize("op, case, dim", SOFTMAXES, ids=[f"{o}-{c}-{d}" for o, c, d in SOFTMAXES])
def test_sparse_softmax(op, case, dim):
    ours, theirs = both(lambda m: getattr(m.sparse, op)(build(m, case, dtype="float64"), dim))
    assert ours.is_sparse
    # torch's log_softmax leaves the unstored elements 0 (not -inf) when densified; so does ours.
    assert_same(ours, theirs, rtol=1e-10, atol=1e-12)
    assert_same(ours.coalesce(), theirs.coalesce(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_sparse_softmax_dtype_and_large_values(op):
    def call(m):
        t = m.sparse_coo_tensor([[0, 0, 1], [0, 2, 1]], [1000.0, 999.0, -1000.0], (2, 3))
        return getattr(m.sparse, op)(t, 1, dtype=m.float64)
    ours, theirs = both(call)
    assert_same(ours, theirs, rtol=1e-10)
    assert np.isfinite(ours._values().numpy()).all()


def test_sparse_softmax_gradient_reaches_the_values():
    def grads(m):
        values = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        t = m.sparse_coo_tensor([[0, 1, 1, 0], [0, 0, 2, 2]], values, (2, 3))
        weights = m.tensor([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]], dtype=m.float64)
        (m.sparse.softmax(t, 1).to_dense() * weights).sum().backward()
        return values.grad
    assert_same(*both(grads), rtol=1e-10)


@pytest.mark.parametrize("m", LIBS)
def test_sparse_softmax_errors(m):
    with pytest.raises(IndexError):
        m.sparse.softmax(build(m, "matrix"), 2)


# ---- sparse @ dense ----

PRODUCTS = {
    "mm": lambda m, s, d, bias: m.mm(s, d),
    "matmul": lambda m, s, d, bias: m.matmul(s, d),
    "@": lambda m, s, d, bias: s @ d,
    "spmm": lambda m, s, d, bias: m.spmm(s, d),
    "sparse.mm": lambda m, s, d, bias: m.sparse.mm(s, d),
    "addmm": lambda m, s, d, bias: m.addmm(bias, s, d),
    "addmm scaled": lambda m, s, d, bias: m.addmm(bias, s, d, beta=0.5, alpha=-2.0),
    "sparse.addmm": lambda m, s, d, bias: m.sparse.addmm(bias, s, d, beta=2.0, alpha=0.25),
    "Tensor.mm": lambda m, s, d, bias: s.mm(d),
}

MATRICES = {
    "uncoalesced": ([[0, 1, 1, 0, 2], [2, 0, 2, 2, 3]], [1.0, -2.0, 3.0, 4.0, 0.5], (3, 4)),
    "coalesced": ([[0, 1, 2], [1, 0, 3]], [1.5, -2.0, 3.0], (3, 4)),
    "empty": (np.zeros((2, 0), dtype=np.int64), np.zeros(0), (3, 4)),
}


def product_inputs(m, matrix, dtype, values_grad, sparse_grad=False):
    indices, values, size = MATRICES[matrix]
    values = m.from_numpy(np.asarray(values, dtype=dtype)).requires_grad_(values_grad)
    s = m.sparse_coo_tensor(m.from_numpy(np.asarray(indices, dtype=np.int64)), values, size,
                            requires_grad=sparse_grad)
    d = m.from_numpy(np.linspace(-1.0, 2.0, size[1] * 2).reshape(size[1], 2).astype(dtype)).requires_grad_(True)
    bias = m.from_numpy(np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 3.0]], dtype=dtype))
    return values, s, d, bias


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("matrix", MATRICES)
@pytest.mark.parametrize("product", PRODUCTS)
def test_sparse_dense_product_and_gradients(product, matrix, dtype):
    def run(m):
        values, s, d, bias = product_inputs(m, matrix, dtype, values_grad=True)
        out = PRODUCTS[product](m, s, d, bias)
        weights = m.from_numpy(np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]], dtype=dtype))
        (out * weights).sum().backward()
        return out, values.grad, d.grad
    (out, values_grad, d_grad), (t_out, t_values_grad, t_d_grad) = both(run)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    assert_same(out, t_out, rtol=tolerance, atol=tolerance)
    assert_same(d_grad, t_d_grad, rtol=tolerance, atol=tolerance)
    assert_same(values_grad, t_values_grad, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("matrix", ["coalesced", "uncoalesced"])
@pytest.mark.parametrize("product", ["mm", "sparse.mm", "addmm"])
def test_gradient_of_a_sparse_leaf(product, matrix):
    """requires_grad=True on the sparse tensor: its .grad is sparse, the gradient at the stored
    entries. torch's is that too after torch.sparse.mm, but dense and whole after torch.mm and
    torch.addmm: those are compared at the stored entries."""
    def run(m):
        _, s, d, bias = product_inputs(m, matrix, "float64", values_grad=False, sparse_grad=True)
        out = PRODUCTS[product](m, s, d, bias)
        out.pow(2).sum().backward()
        return s.grad, d.grad
    (s_grad, d_grad), (t_s_grad, t_d_grad) = both(run)
    assert s_grad is not None and s_grad.is_sparse
    stored = np.zeros(MATRICES[matrix][2], dtype=bool)
    stored[tuple(np.asarray(MATRICES[matrix][0], dtype=np.int64))] = True
    np.testing.assert_allclose(numpy_of(s_grad), np.where(stored, numpy_of(t_s_grad), 0.0), rtol=1e-12)
    assert_same(d_grad, t_d_grad, rtol=1e-12)


@pytest.mark.parametrize("a, b", [("coalesced", "uncoalesced"), ("uncoalesced", "empty")])
def test_sparse_mm_of_two_sparse_matrices(a, b):
    def run(m):
        first = product_inputs(m, a, "float64", values_grad=False)[1]
        second = product_inputs(m, b, "float64", values_grad=False)[1]
        return m.sparse.mm(first, second.to_dense().t().to_sparse())
    assert_same(*both(run), rtol=1e-12)


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call", [
    lambda m, s: m.mm(m.sparse_coo_tensor([[0, 2]], m.ones(2, 4), (3, 4)), m.ones(4, 2)),
    lambda m, s: m.mm(build(m, "hybrid"), m.ones(2, 2)),
    lambda m, s: m.mm(s, m.ones(3, 2)),
    lambda m, s: m.mm(s, m.ones(4, 2, dtype=m.float64)),
    lambda m, s: m.addmm(m.ones(2, 2), s, m.ones(3, 2)),
], ids=["one sparse dim", "hybrid", "shapes", "dtypes", "addmm shapes"])
def test_sparse_product_errors(m, call):
    with pytest.raises(RuntimeError):
        call(m, m.sparse_coo_tensor([[0, 2], [1, 3]], [1.0, 2.0], (3, 4)))


@pytest.mark.parametrize("product", ["mm", "matmul", "spmm", "sparse.mm", "addmm", "sparse.addmm"])
def test_sparse_product_under_autocast(product):
    def run(m):
        _, s, d, bias = product_inputs(m, "uncoalesced", "float32", values_grad=False)
        with m.autocast("cpu"):
            return PRODUCTS[product](m, s, d.detach(), bias)
    theirs, ours = run(torch), run(tp)
    assert_same(ours, theirs, rtol=2e-2, atol=2e-2)
    assert name_of(ours.dtype) == "bfloat16"


# ---- gradcheck ----

@pytest.mark.parametrize("indices", [[[0, 1, 1, 0], [2, 0, 2, 2]], [[0, 0, 1, 1], [0, 2, 0, 2]]],
                         ids=["a duplicate", "coalesced"])
def test_gradcheck_of_values_to_dense(indices):
    indices = tp.tensor(indices)
    values = tp.tensor([1.0, -2.0, 3.0, 4.0], dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(lambda v: tp.sparse_coo_tensor(indices, v, (2, 3)).to_dense(), (values,))
    assert tp.autograd.gradcheck(lambda v: tp.sparse_coo_tensor(indices, v, (2, 3)).coalesce().to_dense(),
                                 (values,))


def test_gradcheck_of_hybrid_values_to_dense():
    indices = tp.tensor([[0, 2, 0, 1], [1, 0, 1, 1]])
    values = tp.from_numpy(np.asarray(CASES["hybrid"][1], dtype=np.float64)).requires_grad_(True)
    assert tp.autograd.gradcheck(lambda v: tp.sparse_coo_tensor(indices, v, (3, 2, 2)).to_dense(), (values,))


@pytest.mark.parametrize("matrix", ["uncoalesced", "coalesced"])
@pytest.mark.parametrize("product", ["mm", "sparse.mm", "addmm scaled"])
def test_gradcheck_of_sparse_mm(product, matrix):
    values, _, d, bias = product_inputs(tp, matrix, "float64", values_grad=True)
    indices = tp.from_numpy(np.asarray(MATRICES[matrix][0], dtype=np.int64))

    def f(v, d):
        return PRODUCTS[product](tp, tp.sparse_coo_tensor(indices, v, (3, 4)), d, bias)
    assert tp.autograd.gradcheck(f, (values, d))


@pytest.mark.parametrize("function", [
    lambda m, s, d: m.sparse.mm(s, d),
    lambda m, s, d: m.sparse.softmax(s, 1),
    lambda m, s, d: m.sparse.sum(s, 0),
], ids=["mm", "softmax", "sum"])
def test_as_sparse_gradcheck(function):
    _, s, d, _ = product_inputs(tp, "coalesced", "float64", values_grad=False, sparse_grad=True)
    gradcheck = tp.sparse.as_sparse_gradcheck(tp.autograd.gradcheck)
    assert gradcheck(lambda s, d: function(tp, s, d), (s, d))


# ---- addition ----

ADDITIONS = {
    "sparse + sparse": lambda m, a, b, dense: a + b,
    "sparse.add(sparse, alpha)": lambda m, a, b, dense: a.add(b, alpha=-2.0),
    "torch.add(sparse, sparse)": lambda m, a, b, dense: m.add(a, b),
    "dense + sparse": lambda m, a, b, dense: dense + a,
    "torch.add(dense, sparse, alpha)": lambda m, a, b, dense: m.add(dense, b, alpha=3.0),
    "dense.add_(sparse)": lambda m, a, b, dense: dense.add_(a),
    "dense.add_(sparse, alpha)": lambda m, a, b, dense: dense.add_(b, alpha=0.5),
    "dense += sparse": lambda m, a, b, dense: dense.__iadd__(a),
}


@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("case", ["matrix", "hybrid", "empty"])
@pytest.mark.parametrize("addition", ADDITIONS)
def test_additions(addition, case, coalesced):
    def run(m):
        a = build(m, case, dtype="float64")
        a = a.coalesce() if coalesced else a
        b = m.sparse_coo_tensor(a._indices().flip(1), a._values() * 2.0, tuple(a.shape))
        dense = m.from_numpy(np.arange(np.prod(a.shape), dtype=np.float64).reshape(tuple(a.shape)))
        return ADDITIONS[addition](m, a, b, dense)
    ours, theirs = both(run)
    assert_same(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m, s: m.ones(2, 3, dtype=m.int64) + s,
    lambda m, s: s + s.to(m.float64),
    lambda m, s: m.ones(2, 3, dtype=m.float64) + s,
    lambda m, s: m.ones(2, 3, dtype=m.float64).add_(s),
], ids=["int64 dense + float32 sparse", "float32 + float64 sparse", "float64 dense + float32 sparse",
        "float64 dense add_ float32 sparse"])
def test_addition_dtypes(call):
    assert_same(*both(lambda m: call(m, build(m, "matrix"))))


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call", [
    lambda m, s: s + m.ones(2, 3),
    lambda m, s: s.add(m.ones(2, 3)),
    lambda m, s: m.ones(3, 3) + s,
    lambda m, s: m.ones(2, 3, dtype=m.int64).add_(s),
    lambda m, s: s + m.sparse_coo_tensor([[0]], [1.0], (3,)),
], ids=["sparse + dense", "sparse.add(dense)", "sizes differ", "float into an int64 tensor", "sparse sizes differ"])
def test_addition_errors(m, call):
    with pytest.raises(RuntimeError):
        call(m, build(m, "matrix"))


def test_addition_gradients():
    def grads(m):
        values = m.tensor([1.0, -2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        s = m.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], values, (2, 3))
        dense = m.ones(2, 3, dtype=m.float64, requires_grad=True)
        weights = m.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], dtype=m.float64)
        ((dense + (s + s)) * weights).sum().backward()
        return values.grad, dense.grad
    (values_grad, dense_grad), (t_values_grad, t_dense_grad) = both(grads)
    assert_same(values_grad, t_values_grad)
    assert_same(dense_grad, t_dense_grad)


@pytest.mark.parametrize("call", [
    lambda m, v: m.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], v, (2, 3)).to(m.float64).to_dense(),
    lambda m, v: m.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], v, (2, 3)).coalesce().values(),
    lambda m, v: m.sparse_coo_tensor([[1, 0, 1], [2, 1, 0]], v, (2, 3)).coalesce().values(),
    lambda m, v: m.stack([v, m.zeros(3), v * 2]).to_sparse().to_dense(),
    lambda m, v: m.stack([m.zeros(3), v]).to_sparse(1).to_dense(),
], ids=["to(float64)", "values()", "values() after sorting", "to_sparse", "to_sparse(1)"])
def test_gradients_through_the_parts(call):
    def grads(m):
        v = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        out = call(m, v)
        weights = m.from_numpy(np.arange(1.0, out.numel() + 1.0).reshape(tuple(out.shape)).astype(np.float32))
        (out * weights.to(out.dtype)).sum().backward()
        return v.grad
    assert_same(*both(grads))


@pytest.mark.parametrize("product", ["sparse.mm", "mm"])
def test_sparse_gradients_accumulate(product):
    def grads(m):
        s = m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), requires_grad=True)
        for scale in (1.0, 3.0):
            (PRODUCTS[product](m, s, m.ones(2, 3), None) * scale).sum().backward()
        return s.grad
    ours, theirs = both(grads)
    np.testing.assert_allclose(numpy_of(ours), numpy_of(theirs) * np.array([[0, 1], [1, 0]]))


@pytest.mark.parametrize("m", LIBS)
def test_check_sparse_tensor_invariants_as_a_decorator(m):
    @m.sparse.check_sparse_tensor_invariants()
    def unsorted():
        return m.sparse_coo_tensor([[1, 0]], [1.0, 2.0], (2,), is_coalesced=True)
    with pytest.raises(RuntimeError):
        unsorted()
    assert not m.sparse.check_sparse_tensor_invariants.is_enabled()


# ---- detach, requires_grad and repr ----

def test_detach():
    ours, theirs = both(lambda m: build(m, "matrix", requires_grad=True).detach())
    assert ours.is_sparse and not ours.requires_grad and not theirs.requires_grad
    assert_same(ours, theirs)


def normalised(text):
    return re.sub(r"\s+", " ", text.replace("torch.", "tensorplay.")).strip()


@pytest.mark.parametrize("call", [
    lambda m: build(m, "matrix"),
    lambda m: build(m, "matrix").coalesce(),
    lambda m: build(m, "hybrid", dtype="float64"),
    lambda m: build(m, "cube").to(m.int64),
    lambda m: build(m, "empty"),
    lambda m: m.sparse_coo_tensor([[0, 1]], [True, False], (2,)),
    lambda m: m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,), requires_grad=True),
    lambda m: m.tensor(3.0).to_sparse(),
], ids=["matrix", "coalesced", "hybrid float64", "int64", "empty", "bool", "requires_grad", "0-dim"])
def test_repr(call):
    ours, theirs = both(call)
    assert normalised(repr(ours)) == normalised(repr(theirs))


# ---- ops without a sparse path ----

UNSUPPORTED = {
    "exp": lambda s: s.exp(),
    "view": lambda s: s.view(6),
    "reshape": lambda s: s.reshape(6),
    "numpy": lambda s: s.numpy(),
    "tolist": lambda s: s.tolist(),
    "item": lambda s: s.item(),
    "max": lambda s: s.max(),
    "eq": lambda s: s == s,
    "add scalar": lambda s: s + 1,
    "nonzero": lambda s: s.nonzero(),
    "data_ptr": lambda s: s.data_ptr(),
    "contiguous": lambda s: s.contiguous(),
    "clamp": lambda s: s.clamp(0, 1),
    "index": lambda s: s[0, 1],
    "fill_": lambda s: s.fill_(1.0),
    "add_ scalar": lambda s: s.add_(1.0),
    "copy_ from dense": lambda s: s.copy_(tp.ones(2, 3)),
    "masked_fill_": lambda s: s.masked_fill_(tp.ones(2, 3, dtype=tp.bool), 0.0),
    "index_put_": lambda s: s.index_put_((tp.tensor([0]), tp.tensor([1])), tp.tensor([5.0])),
    "uniform_": lambda s: s.uniform_(),
    "sparse.add_(dense)": lambda s: s.add_(tp.ones(2, 3)),
    "len and bool": lambda s: bool(s),
    "t_": lambda s: s.t_(),
    "unsqueeze_": lambda s: s.unsqueeze_(0),
    "resize_": lambda s: s.resize_(6),
    "set_ onto a sparse tensor": lambda s: s.set_(tp.zeros(3)),
    "set_ from a sparse tensor": lambda s: tp.zeros(2).set_(s),
    "as_strided_": lambda s: s.as_strided_((6,), (1,)),
}


@pytest.mark.parametrize("op", UNSUPPORTED)
def test_unsupported_ops_raise_cleanly(op):
    """In a child process, so that a crash fails this case alone."""
    def check(call):
        s = build(tp, "matrix")
        try:
            result = call(s)
        except (NotImplementedError, RuntimeError, TypeError) as e:
            assert str(e), "the error says nothing"
            return
        raise AssertionError(f"no error; returned {type(result).__name__}")
    run_isolated(check, UNSUPPORTED[op])


@pytest.mark.parametrize("call", [
    lambda m, s: m.zeros_like(s),
    lambda m, s: m.empty_like(s),
], ids=["zeros_like", "empty_like"])
def test_like_constructors_keep_the_layout(call):
    """torch gives a sparse tensor; a dense one (let alone of uninitialised memory) is not the same."""
    ours, theirs = both(lambda m: call(m, build(m, "matrix")))
    assert ours.is_sparse == theirs.is_sparse
    if theirs.is_sparse:
        assert ours._nnz() == theirs._nnz() == 0


@pytest.mark.parametrize("matrix", MATRICES)
@pytest.mark.parametrize("product", [
    lambda m, s, d: d.t()[:, :3] @ s.t().t(),
    lambda m, s, d: m.mm(d.t()[:, :3], s),
    lambda m, s, d: m.matmul(s, d[:, 0]),
    lambda m, s, d: s.t() @ d[:3],
], ids=["dense @ sparse", "mm(dense, sparse)", "sparse @ vector", "transposed sparse @ dense"])
def test_products_with_a_transposed_sparse_or_a_vector(product, matrix):
    def run(m):
        indices, values, size = MATRICES[matrix]
        v = m.tensor(values, dtype=m.float64, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(np.asarray(indices, dtype=np.int64)), v, size)
        d = m.tensor(np.linspace(-1, 1, 8).reshape(4, 2), dtype=m.float64, requires_grad=True)
        out = product(m, s, d)
        out.pow(2).sum().backward()
        return out, v.grad, d.grad
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        assert_same(a, b, rtol=1e-12)


@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, -2), (1, 1)])
def test_transpose_of_sparse_dims(dims):
    def run(m):
        t = build(m, "matrix").transpose(*dims)
        return t.to_dense(), t.is_coalesced()
    (ours, ours_flag), (theirs, theirs_flag) = both(run)
    assert_same(ours, theirs)
    assert ours_flag == theirs_flag


# Ops with f(0) == 0 act on the stored elements (of the coalesced tensor) and stay sparse.
ELEMENTWISE = {
    "neg": lambda m, s: -s,
    "abs": lambda m, s: s.abs(),
    "sin": lambda m, s: m.sin(s),
    "tanh": lambda m, s: s.tanh(),
    "sqrt of abs": lambda m, s: s.abs().sqrt(),
    "floor": lambda m, s: s.floor(),
    "expm1": lambda m, s: s.expm1(),
    "times a number": lambda m, s: s * 2.5,
    "number times": lambda m, s: 3 * s,
    "over a number": lambda m, s: s / 4,
    "times a 0-dim tensor": lambda m, s: s * m.tensor(-2.0),
    "times a dense tensor": lambda m, s: s * m.arange(6.0).reshape(2, 3),
    "dense tensor times": lambda m, s: m.arange(6.0).reshape(2, 3) * s,
    "minus itself": lambda m, s: s - s * 2,
}


@pytest.mark.parametrize("op", ELEMENTWISE)
def test_elementwise_ops_keep_the_stored_elements(op):
    def run(m):
        result = ELEMENTWISE[op](m, build(m, "matrix"))
        return result, result.is_coalesced()
    (ours, ours_flag), (theirs, theirs_flag) = both(run)
    assert_same(ours, theirs)
    assert ours_flag == theirs_flag


# (floor is piecewise constant: its zero gradient is the op table's, for dense tensors.)
@pytest.mark.parametrize("op", [op for op in ELEMENTWISE if op != "floor"])
def test_elementwise_ops_gradcheck(op):
    indices, values, size = CASES["matrix"]
    v = tp.tensor(np.asarray(values) + 0.25, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(
        lambda x: ELEMENTWISE[op](tp, tp.sparse_coo_tensor(indices, x, size)).to_dense(), (v,))


def test_in_place_scaling_of_the_stored_elements():
    def run(m):
        s = build(m, "matrix").coalesce()
        s.mul_(3.0)
        s.div_(2.0)
        return s
    assert_same(*both(run))


@pytest.mark.parametrize("call", [
    lambda s: s.exp(), lambda s: s.cos(), lambda s: s.sigmoid(), lambda s: s + 1, lambda s: s * s,
    lambda s: s / tp.ones(2, 3), lambda s: s.add_(1.0), lambda s: s.relu_(),
], ids=["exp", "cos", "sigmoid", "plus a number", "sparse times sparse", "over a dense tensor", "add_", "relu_"])
def test_ops_that_would_fill_every_element_refuse(call):
    with pytest.raises(NotImplementedError):
        call(build(tp, "matrix"))


def test_data_assignment_carries_the_layout():
    """x.data = s makes x show the sparse tensor, parts and all; an op on it still refuses cleanly."""
    s = build(tp, "matrix")
    x = tp.zeros(2, 3)
    x.data = s
    assert x.is_sparse and x._nnz() == 4
    np.testing.assert_array_equal(x.to_dense().numpy(), s.to_dense().numpy())
    with pytest.raises(NotImplementedError):
        x.exp()



# ---- saving, loading, pickling and copying ----

def test_checkpoints_round_trip_between_the_libraries():
    """tensorplay.save writes a sparse tensor as torch.save does (its parts, rebuilt by
    torch._utils._rebuild_sparse_tensor): torch.load reads it, with its weights-only unpickler, and
    tensorplay.load reads torch's."""
    ours = {"uncoalesced": build(tp, "matrix"), "coalesced": build(tp, "hybrid").coalesce()}
    buffer = io.BytesIO()
    tp.save(ours, buffer)
    loaded = torch.load(io.BytesIO(buffer.getvalue()))
    theirs = {"uncoalesced": build(torch, "matrix"), "coalesced": build(torch, "hybrid").coalesce()}
    for key in ours:
        assert_same(ours[key], loaded[key])
        assert loaded[key].is_coalesced() == theirs[key].is_coalesced()
    buffer = io.BytesIO()
    torch.save(theirs, buffer)
    back = tp.load(io.BytesIO(buffer.getvalue()))
    for key in ours:
        assert_same(back[key], theirs[key])
        assert back[key].is_coalesced() == ours[key].is_coalesced()


def test_a_checkpoint_with_indices_out_of_range_raises():
    bad = torch.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (2,), check_invariants=False)
    buffer = io.BytesIO()
    torch.save(bad, buffer)
    with pytest.raises(pickle.UnpicklingError, match="size is inconsistent with indices"):
        tp.load(io.BytesIO(buffer.getvalue()))


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))], ids=["deepcopy", "pickle"])
def test_copies_keep_parts_and_requires_grad(copier):
    s = tp.sparse_coo_tensor([[0, 1, 0]], [1.0, 2.0, 3.0], (3,), requires_grad=True)
    c = copier(s)
    assert c.is_sparse and c.requires_grad and not c.is_coalesced()
    np.testing.assert_array_equal(c._indices().numpy(), s._indices().numpy())
    np.testing.assert_array_equal(c._values().detach().numpy(), s._values().detach().numpy())


def _scale_shared_values(queue, s):
    s._values().detach().mul_(10)
    queue.put((s.is_sparse, s.is_shared()))


def test_sparse_tensors_cross_processes_through_shared_memory():
    """share_memory_() shares the parts; a worker's write to the values is the parent's."""
    s = tp.sparse_coo_tensor([[0, 1, 0]], [1.0, 2.0, 3.0], (3,)).share_memory_()
    assert s.is_shared()
    ctx = tp.multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    worker = ctx.Process(target=_scale_shared_values, args=(queue, s))
    worker.start()
    try:
        assert queue.get(timeout=120) == (True, True)
    finally:
        worker.join(timeout=120)
    np.testing.assert_array_equal(s.to_dense().numpy(), [40.0, 20.0, 0.0])


@pytest.mark.parametrize("case", ["matrix", "hybrid", "cube"])
@pytest.mark.parametrize("dims, keepdim", [((), False), ((0,), False), ((1,), True), ((0, -1), False),
                                           ((0, 1), True), ((-1,), False)])
def test_tensor_sum(case, dims, keepdim):
    """Tensor.sum of a sparse tensor: all of it a dense number; over dims, sparse unless every sparse
    dim goes (then dense), with keepdim as for a dense tensor. (Its entries are coalesced either way;
    torch marks them so only without keepdim.)"""
    def run(m):
        s = build(m, case)
        return s.sum() if not dims else s.sum(dims, keepdim=keepdim)
    ours, theirs = both(run)
    assert_same(ours, theirs, rtol=1e-5)
    if ours.is_sparse and not keepdim:
        assert ours.is_coalesced() == theirs.is_coalesced()


def test_mean_of_a_sparse_tensor_counts_every_element():
    """torch has no mean for a sparse tensor; tensorplay's is the dense tensor's."""
    s = build(tp, "matrix")
    np.testing.assert_allclose(s.mean().item(), s.to_dense().mean().item())


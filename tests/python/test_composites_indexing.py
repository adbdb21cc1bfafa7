"""The indexing composites (tensorplay/_composites/indexing.py) in what the op table cannot express:
in-place forms and autograd through them, out=, keywords, gradients on ties and zeros, errors, and
results that are not one tensor. Every expectation is torch's answer to the same call."""

import math
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp


def both(array):
    """The same values as a (torch, tensorplay) pair of tensors."""
    array = np.asarray(array)
    return torch.from_numpy(array.copy()), tp.from_numpy(array.copy())


def assert_same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) == isinstance(theirs, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().double().numpy(), theirs.detach().double().numpy(), rtol=1e-6,
                               atol=1e-6, equal_nan=True)


def outcome(m, fn):
    """fn(m)'s result, or the kind of exception it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m)
    except Exception as e:  # noqa: BLE001 - the kind is what is compared
        return type(e)


def check(fn):
    """fn behaves in tensorplay as in torch: same values, or the same kind of exception."""
    theirs, ours = outcome(torch, fn), outcome(tp, fn)
    if isinstance(theirs, type):
        assert ours is theirs, f"torch raised {theirs.__name__}, tensorplay gave {ours!r}"
    else:
        assert not isinstance(ours, type), f"torch returned, tensorplay raised {ours.__name__}"
        assert_same(ours, theirs)
    return ours


X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
I = np.array([0, 2, 0])


# ---------------------------------------------------------------------------------------------
# In-place forms: they return self, write torch's values, and autograd sees them.

INPLACE = {
    "tril_": lambda m, x: x.tril_(1),
    "triu_": lambda m, x: x.triu_(-1),
    "put_": lambda m, x: x.put_(m.tensor([1, 1, -1]), m.tensor([1.0, 2.0, 3.0]), accumulate=True),
    "index_add_": lambda m, x: x.index_add_(0, m.tensor([0, 2, 0]), m.ones(3, 4), alpha=-2),
    "index_fill_": lambda m, x: x.index_fill_(1, m.tensor([-1, 0]), 7.5),
    "index_reduce_": lambda m, x: x.index_reduce_(0, m.tensor([0, 2, 0]), m.full((3, 4), 2.0), "prod"),
    "masked_scatter_": lambda m, x: x.masked_scatter_(x > 0, m.arange(12.0)),
    "scatter_reduce_": lambda m, x: x.scatter_reduce_(1, m.tensor([[0, 0], [3, 1], [2, 2]]),
                                                      m.full((3, 2), 4.0), "amax", include_self=False),
    "fill_diagonal_": lambda m, x: x.fill_diagonal_(-3.0),
    "index_put_": lambda m, x: m.index_put_(x, (m.tensor([0, 2]),), m.tensor(9.0)),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_form_returns_self_with_torch_values(name):
    theirs, ours = both(X)
    result_t, result_o = INPLACE[name](torch, theirs), INPLACE[name](tp, ours)
    assert result_t is theirs and result_o is ours
    assert_same(ours, theirs)


@pytest.mark.parametrize("name", list(INPLACE))
def test_gradient_flows_through_inplace_form(name):
    grads = []
    for m in (torch, tp):
        leaf = m.tensor(X.tolist(), requires_grad=True)
        out = INPLACE[name](m, leaf * 1.5)
        (out * m.arange(12.0).reshape(3, 4)).sum().backward()
        grads.append(leaf.grad)
    assert_same(grads[1], grads[0])


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_form_on_a_leaf_that_requires_grad_raises(name):
    for m in (torch, tp):
        with pytest.raises(RuntimeError):
            INPLACE[name](m, m.tensor(X.tolist(), requires_grad=True))


def test_inplace_masked_scatter_does_not_broadcast_self():
    check(lambda m: m.zeros(1, 3).masked_scatter_(m.tensor([[True], [False]]), m.arange(6.0)))


def test_inplace_index_add_refuses_a_source_of_another_dtype():
    check(lambda m: m.zeros(3, dtype=m.int64).index_add_(0, m.tensor([0]), m.ones(1)))


# ---------------------------------------------------------------------------------------------
# out=: values in an out of the result's dtype; these kernels refuse any other dtype, even a wider one.

OUT_FORMS = {
    "tril": lambda m, out: m.tril(m.tensor(X.tolist()), -1, out=out),
    "triu": lambda m, out: m.triu(m.tensor(X.tolist()), out=out),
    "diag": lambda m, out: m.diag(m.tensor([1.0, 2.0]), 1, out=out),
    "slice_scatter": lambda m, out: m.slice_scatter(m.tensor(X.tolist()), m.ones(3, 2), 1, 0, 4, 2, out=out),
    "take": lambda m, out: m.take(m.tensor(X.tolist()), m.tensor([[0, -1]]), out=out),
    "take_along_dim": lambda m, out: m.take_along_dim(m.tensor(X.tolist()), m.tensor([[1], [0], [3]]), 1, out=out),
    "index_add": lambda m, out: m.index_add(m.tensor(X.tolist()), 0, m.tensor([1]), m.ones(1, 4), out=out),
    "index_reduce": lambda m, out: m.index_reduce(m.tensor(X.tolist()), 0, m.tensor([1, 1]), m.ones(2, 4) * 3,
                                                  "mean", out=out),
    "scatter_reduce": lambda m, out: m.scatter_reduce(m.tensor(X.tolist()), 0, m.tensor([[2, 0]]),
                                                      m.ones(1, 2), "sum", out=out),
    "masked_select": lambda m, out: m.masked_select(m.tensor(X.tolist()), m.tensor(X.tolist()) > 2, out=out),
}


@pytest.mark.parametrize("name", list(OUT_FORMS))
@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
def test_out_takes_only_the_result_dtype(name, out_dtype):
    def run(m):
        out = m.empty(0, dtype=getattr(m, out_dtype))
        result = OUT_FORMS[name](m, out)
        assert result is out
        return out
    check(run)


@pytest.mark.parametrize("name", list(OUT_FORMS))
def test_out_of_another_category_raises(name):
    check(lambda m: OUT_FORMS[name](m, m.empty(0, dtype=m.int64)))


def test_nonzero_static_out():
    check(lambda m: m.nonzero_static(m.tensor([[0, 1], [2, 0]]), size=3, out=m.empty(0, dtype=m.int64)))


def test_out_refuses_inputs_that_require_grad():
    check(lambda m: m.tril(m.ones(2, 2, requires_grad=True), out=m.empty(2, 2)))


# ---------------------------------------------------------------------------------------------
# Keywords, as PyTorch names the arguments.

KEYWORD_CALLS = {
    "tril": lambda m, x: m.tril(input=x, diagonal=1),
    "diag_embed": lambda m, x: m.diag_embed(x, offset=-1, dim1=0, dim2=2),
    "diagonal_scatter": lambda m, x: m.diagonal_scatter(x, src=m.ones(3), offset=0, dim1=0, dim2=1),
    "select_scatter": lambda m, x: m.select_scatter(x, src=m.ones(4), dim=0, index=-1),
    "slice_scatter": lambda m, x: m.slice_scatter(x, src=m.ones(3, 1), dim=1, start=-1),
    "as_strided_scatter": lambda m, x: m.as_strided_scatter(x, m.ones(2), size=(2,), stride=(5,), storage_offset=1),
    "take_along_dim": lambda m, x: x.take_along_dim(indices=m.tensor([[0], [1], [2]]), dim=1),
    "put": lambda m, x: x.put(index=m.tensor([0]), source=m.ones(1), accumulate=True),
    "index_add": lambda m, x: x.index_add(dim=1, index=m.tensor([0]), source=m.ones(3, 1), alpha=3),
    "index_fill": lambda m, x: x.index_fill(dim=1, index=m.tensor([2]), value=-1),
    "index_reduce": lambda m, x: x.index_reduce(0, m.tensor([0]), m.ones(1, 4), reduce="amin", include_self=False),
    "scatter_reduce": lambda m, x: m.scatter_reduce(x, dim=1, index=m.tensor([[1]]), src=m.ones(1, 1),
                                                    reduce="mean", include_self=False),
    "masked_scatter": lambda m, x: x.masked_scatter(mask=x > 0, source=m.zeros(12)),
    "nonzero_static": lambda m, x: x.nonzero_static(size=2, fill_value=-5),
    "repeat_interleave": lambda m, x: x.repeat_interleave(repeats=m.tensor([1, 2, 0]), dim=0, output_size=3),
    "fill_diagonal_": lambda m, x: x.fill_diagonal_(fill_value=1, wrap=True),
    "tril_indices": lambda m, x: m.tril_indices(row=3, col=4, offset=1, dtype=m.int32),
    "triu_indices": lambda m, x: m.triu_indices(4, 3, -1, device="cpu"),
    "unravel_index": lambda m, x: m.unravel_index(indices=m.tensor([3, 11]), shape=(3, 4)),
    "index_put": lambda m, x: x.index_put(indices=(m.tensor([1]),), values=m.tensor(0.5), accumulate=True),
}


@pytest.mark.parametrize("name", list(KEYWORD_CALLS))
def test_keyword_arguments(name):
    check(lambda m: KEYWORD_CALLS[name](m, m.tensor(X.tolist())))


# ---------------------------------------------------------------------------------------------
# Gradients of prod, amax and amin follow PyTorch's rules on ties and zeros.

REDUCE_CASES = [
    # (input, index, src): ties between src elements, between src and self, zeros in both.
    ([5.0, 2.0, 0.0, 1.0], [0, 0, 0, 1, 2, 2], [5.0, 5.0, 1.0, 2.0, 0.0, 3.0]),
    ([0.0, 2.0, 3.0, -1.0], [0, 0, 1, 1, 2, 3], [0.0, 5.0, 0.0, 2.0, 0.0, -1.0]),
    ([1.0, 1.0, 1.0, 1.0], [3, 3, 3, 0, 0, 1], [0.0, 0.0, 2.0, 1.0, 1.0, 4.0]),
]


@pytest.mark.parametrize("case", range(len(REDUCE_CASES)))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean", "sum"])
def test_scatter_reduce_gradients_on_ties_and_zeros(reduce, include_self, case):
    values, index, src = REDUCE_CASES[case]
    grads = []
    for m in (torch, tp):
        x, s = m.tensor(values, requires_grad=True), m.tensor(src, requires_grad=True)
        out = m.scatter_reduce(x, 0, m.tensor(index), s, reduce, include_self=include_self)
        (out * m.tensor([1.0, -2.0, 3.0, 0.5])).sum().backward()
        grads.append((out, x.grad, s.grad))
    assert_same(grads[1], grads[0])


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
def test_index_reduce_gradients_on_ties_and_zeros(reduce, include_self):
    grads = []
    for m in (torch, tp):
        x = m.tensor([[1.0, 0.0], [2.0, 2.0], [3.0, -1.0]], requires_grad=True)
        s = m.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 0.0], [3.0, 5.0]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = m.index_reduce(x, 0, m.tensor([0, 0, 0, 2]), s, reduce, include_self=include_self)
        (out * m.tensor([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]])).sum().backward()
        grads.append((out, x.grad, s.grad))
    assert_same(grads[1], grads[0])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "int8"])
def test_scatter_reduce_random_3d_against_torch(reduce, dtype):
    rng = np.random.default_rng(7)
    values = rng.integers(-3, 4, (4, 5, 3)).astype(np.float32)
    src = rng.integers(-3, 4, (4, 9, 3)).astype(np.float32)
    if dtype in ("float32", "float64", "bfloat16"):
        src[0, 1, 0] = math.nan
        values, src = values + rng.uniform(0, 0.5, values.shape), src + rng.uniform(0, 0.5, src.shape)
    index = rng.integers(0, 5, (3, 7, 2))

    def run(m):
        as_dtype = getattr(m, dtype)
        x = m.tensor(values.tolist()).to(as_dtype)
        return [m.scatter_reduce(x, 1, m.tensor(index.tolist()), m.tensor(src.tolist()).to(as_dtype), reduce,
                                 include_self=include_self).float() for include_self in (True, False)]
    theirs, ours = run(torch), run(tp)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-2 if dtype == "bfloat16" else 1e-6, equal_nan=True)


# ---------------------------------------------------------------------------------------------
# Errors: the kind torch raises, and a message that names the op.

ERRORS = {
    "tril_1d": lambda m: m.tril(m.ones(3)),
    "tril_float_diagonal": lambda m: m.tril(m.ones(2, 2), 1.0),
    "tril_not_a_tensor": lambda m: m.tril([[1.0]]),
    "diag_3d": lambda m: m.diag(m.ones(2, 2, 2)),
    "diag_embed_same_dims": lambda m: m.diag_embed(m.ones(2, 3), 0, 1, 1),
    "diag_embed_bad_dim": lambda m: m.diag_embed(m.ones(2, 3), 0, 3, 1),
    "take_out_of_range": lambda m: m.take(m.ones(2, 2), m.tensor([4])),
    "take_int32": lambda m: m.take(m.ones(2, 2), m.tensor([1], dtype=m.int32)),
    "put_out_of_range": lambda m: m.ones(2, 2).put_(m.tensor([-5]), m.ones(1)),
    "index_add_out_of_range": lambda m: m.index_add(m.ones(3), 0, m.tensor([3]), m.ones(1)),
    "index_add_float_index": lambda m: m.index_add(m.ones(3), 0, m.tensor([1.0]), m.ones(1)),
    "index_add_bad_dim": lambda m: m.index_add(m.ones(3), 1, m.tensor([0]), m.ones(1)),
    "index_fill_out_of_range": lambda m: m.ones(3).index_fill(0, m.tensor([-4]), 1),
    "index_fill_int32_index": lambda m: m.ones(3).index_fill(0, m.tensor([0], dtype=m.int32), 1),
    "index_reduce_sum": lambda m: m.ones(3).index_reduce(0, m.tensor([0]), m.ones(1), "sum"),
    "index_reduce_negative": lambda m: m.ones(3).index_reduce(0, m.tensor([-1]), m.ones(1), "prod"),
    "scatter_reduce_bad_reduce": lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "add"),
    "scatter_reduce_out_of_range": lambda m: m.ones(3).scatter_reduce(0, m.tensor([3]), m.ones(1), "amax"),
    "scatter_reduce_negative": lambda m: m.ones(3).scatter_reduce(0, m.tensor([-1]), m.ones(1), "sum"),
    "scatter_reduce_dtype": lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1, dtype=m.float64), "sum"),
    "scatter_reduce_include_self_int": lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "sum",
                                                                           include_self=1),
    "masked_scatter_too_few": lambda m: m.ones(3).masked_scatter(m.ones(3, dtype=m.bool), m.ones(2)),
    "masked_select_float_mask": lambda m: m.ones(3).masked_select(m.ones(3)),
    "nonzero_static_no_size": lambda m: m.nonzero_static(m.ones(3)),
    "unravel_index_float": lambda m: m.unravel_index(m.tensor([1.0]), (2, 2)),
    "unravel_index_negative_shape": lambda m: m.unravel_index(m.tensor([1]), (2, -2)),
    "repeat_interleave_negative": lambda m: m.repeat_interleave(m.ones(3), m.tensor([1, -1, 1])),
    "repeat_interleave_float_repeats": lambda m: m.repeat_interleave(m.tensor([1.5])),
    "fill_diagonal_1d": lambda m: m.ones(3).fill_diagonal_(1),
    "tril_indices_float": lambda m: m.tril_indices(3, 3, dtype=m.float32),
    "tril_indices_negative": lambda m: m.tril_indices(3, -3),
    "select_scatter_out_of_range": lambda m: m.select_scatter(m.ones(2, 2), m.ones(2), 0, 2),
    "slice_scatter_zero_step": lambda m: m.slice_scatter(m.ones(2, 2), m.ones(2, 2), step=0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_torch_kinds_and_name_the_op(name):
    kind = outcome(torch, ERRORS[name])
    assert isinstance(kind, type) and issubclass(kind, Exception), "torch accepts this; the case is wrong"
    with pytest.raises(kind) as raised:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ERRORS[name](tp)
    op = name.split("_")[0]
    message = str(raised.value)
    assert any(part in message for part in name.split("_")[:3]) or op in message, message


# ---------------------------------------------------------------------------------------------
# Results that are not one tensor, devices and warnings.

def test_as_strided_scatter_values_match_torch_and_its_gradient_passes_gradcheck():
    # torch 2.13's own gradient for input is wrong (it fails torch's gradcheck): tensorplay's is checked
    # against finite differences instead, and the values against torch's op.
    check(lambda m: m.as_strided_scatter(m.tensor(X.tolist()).t(), m.ones(2, 2), (2, 2), (1, 3), 1))
    x = tp.randn(3, 3, dtype=tp.float64, requires_grad=True)
    s = tp.randn(3, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(lambda x, s: tp.as_strided_scatter(x, s, (3,), (4,)), (x, s))


def test_unravel_index_returns_a_tuple_of_int64_tensors():
    check(lambda m: m.unravel_index(m.tensor([[4, 1], [11, 0]], dtype=m.int32), (3, 2, 2)))
    check(lambda m: m.unravel_index(m.tensor(5), 7))
    check(lambda m: m.unravel_index(m.tensor([1]), ()))


def test_triangle_indices_on_meta():
    for m in (torch, tp):
        out = m.tril_indices(4, 5, 1, device="meta")
        assert out.is_meta and tuple(out.shape) == (2, 14) and out.dtype == m.int64


def test_index_reduce_warns_that_it_is_beta_once():
    tp._composites.indexing._index_reduce_warned = False
    with pytest.warns(UserWarning, match="index_reduce"):
        tp.index_reduce(tp.ones(2), 0, tp.tensor([0]), tp.ones(1), "prod")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.index_reduce(tp.ones(2), 0, tp.tensor([0]), tp.ones(1), "prod")


def test_scatter_reduce_on_meta_keeps_the_shape():
    out = tp.ones(3, 4, device="meta").scatter_reduce(1, tp.zeros(3, 2, dtype=tp.int64, device="meta"),
                                                      tp.ones(3, 2, device="meta"), "amax")
    assert out.is_meta and tuple(out.shape) == (3, 4)


def test_repeat_interleave_large_repeats_match_torch():
    check(lambda m: m.repeat_interleave(m.arange(5.0), m.tensor([0, 7, 1, 0, 30])))
    check(lambda m: m.repeat_interleave(m.tensor([0, 0, 3, 0])))


def test_masked_scatter_gradient_reaches_the_used_source_elements():
    grads = []
    for m in (torch, tp):
        x, s = m.zeros(2, 3, requires_grad=True), m.arange(8.0, requires_grad=True)
        out = m.masked_scatter(x, m.tensor([[True, False, True], [False, True, False]]), s)
        (out * m.arange(6.0).reshape(2, 3)).sum().backward()
        grads.append((out, x.grad, s.grad))
    assert_same(grads[1], grads[0])


def test_methods_and_functions_are_bound():
    for name in ("tril_", "triu_", "put_", "index_add_", "index_fill_", "index_reduce_", "masked_scatter_",
                 "scatter_reduce_", "fill_diagonal_", "index_put", "argwhere", "nonzero_static"):
        assert callable(getattr(tp.Tensor, name)), name
    for name in ("tril_indices", "triu_indices", "unravel_index", "index_put_", "diagflat", "argwhere"):
        assert callable(getattr(tp, name)), name

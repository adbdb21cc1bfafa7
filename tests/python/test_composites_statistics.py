"""The statistics composites (tensorplay/_composites/statistics.py) where the op table cannot reach:
in-place forms, out=, keyword forms, return types, warnings, autocast, gradients through ties and
large inputs. Everything is compared with torch."""

import math
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp


def both(values, dtype="float32"):
    array = np.asarray(values)
    return tp.tensor(array).to(getattr(tp, dtype)), torch.tensor(array).to(getattr(torch, dtype))


def assert_same(ours, theirs, rtol=1e-6, atol=1e-6):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tp.Tensor), type(ours)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.detach().double().numpy(), theirs.detach().double().numpy(), rtol=rtol,
                                   atol=atol, equal_nan=True)
    else:
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        assert getattr(type(ours), "__match_args__", ()) == getattr(type(theirs), "__match_args__", ())
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol, atol)


def raises_like(fn):
    """The exception class each library raises for fn(module, ...), checked to be the same."""
    kinds = []
    for m in (torch, tp):
        with pytest.raises(Exception) as info:
            fn(m)
        kinds.append(type(info.value))
    assert kinds[0] is kinds[1], kinds
    return kinds[0]


RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 6)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# In-place running sums and products

@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "int8"])
def test_cumulative_inplace_returns_self_and_matches_torch(name, dtype):
    ours, theirs = both((X * 3).round(), dtype)
    result = getattr(ours, name)(1)
    assert result is ours
    assert_same(ours, getattr(theirs, name)(1))


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_refuses_what_torch_refuses(name):
    assert raises_like(lambda m: getattr(m.ones(3, dtype=m.bool), name)(0)) is NotImplementedError
    assert raises_like(lambda m: getattr(m.ones(3), name)(0, dtype=m.float64)) is RuntimeError
    assert raises_like(lambda m: getattr(m.ones(3), name)(1)) is IndexError


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_is_differentiable(name):
    grads = []
    for m in (tp, torch):
        leaf = m.tensor(X.tolist(), requires_grad=True)
        y = leaf * 1.5
        getattr(y, name)(0)
        (y * m.tensor(X.tolist())).sum().backward()
        grads.append(leaf.grad)
    assert_same(grads[0], grads[1], rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# out=

def test_out_tensor_keeps_its_dtype_and_is_returned():
    for name, args, kwargs in [("nansum", (1,), {}), ("diff", (), {}), ("nanmean", (0,), {}), ("ger", (X[1],), {})]:
        results = []
        for m in (tp, torch):
            x = m.tensor((X[0] if name == "ger" else X).tolist())
            extra = tuple(m.tensor(a.tolist()) if isinstance(a, np.ndarray) else a for a in args)
            expected = getattr(m, name)(x, *extra, **kwargs)
            out = m.empty(tuple(expected.shape), dtype=m.float64)
            returned = getattr(m, name)(x, *extra, out=out, **kwargs)
            assert returned is out, name
            results.append(out)
        assert_same(results[0], results[1])


def test_out_of_another_dtype_is_refused_where_torch_refuses_it():
    x = X[:, :4]
    for name, args, kwargs in [("quantile", (0.3,), {"dim": 1}), ("logcumsumexp", (0,), {}), ("inner", (x,), {}),
                               ("histc", (), {}), ("matrix_power", (2,), {}), ("frobenius_norm", ((0, 1),), {})]:
        def call(m):
            extra = tuple(m.tensor(a.tolist()) if isinstance(a, np.ndarray) else a for a in args)
            return getattr(m, name)(m.tensor(x.tolist()), *extra, out=m.empty(0, dtype=m.float64), **kwargs)
        assert raises_like(call) is RuntimeError, name
    assert raises_like(lambda m: m.median(m.ones(3), out=m.empty(()))) is TypeError
    assert raises_like(lambda m: m.searchsorted(m.ones(3), m.ones(2), out=m.empty(2))) is RuntimeError


def test_out_refuses_a_narrower_category_and_grad():
    assert raises_like(lambda m: m.quantile(m.ones(4), 0.5, out=m.empty((), dtype=m.int64))) is RuntimeError
    assert raises_like(lambda m: m.nansum(m.ones(4, requires_grad=True), out=m.empty(()))) is RuntimeError
    assert raises_like(lambda m: m.diff(m.ones(4), out=[1])) is TypeError


def test_out_tuples():
    for name, kwargs in [("median", {"dim": 1}), ("nanmedian", {"dim": 0}), ("mode", {}), ("cummax", {"dim": 1}),
                         ("cummin", {"dim": 0}), ("aminmax", {"dim": 1})]:
        results = []
        for m in (tp, torch):
            x = m.tensor(X.tolist())
            expected = getattr(m, name)(x, **kwargs)
            out = (m.empty(tuple(expected[0].shape)), m.empty(tuple(expected[1].shape), dtype=expected[1].dtype))
            returned = getattr(m, name)(x, out=out, **kwargs)
            assert returned[0] is out[0] and returned[1] is out[1], name
            results.append(returned)
        assert_same(results[0][0], results[1][0])
        assert_same(results[0][1], results[1][1])


def test_searchsorted_out_int32():
    results = []
    for m in (tp, torch):
        out = m.empty(6, dtype=m.int32)
        m.searchsorted(m.tensor([1.0, 2.0, 3.0]), m.tensor([0.5, 1.0, 1.5, 2.0, 3.0, 9.0]), out_int32=True, right=True,
                       out=out)
        results.append(out)
    assert_same(results[0], results[1])


# ---------------------------------------------------------------------------------------------
# Return types, keyword forms, non-tensor results

def test_return_types_have_torch_field_names():
    ours, theirs = tp.tensor(X.tolist()), torch.tensor(X.tolist())
    for name, kwargs in [("median", {"dim": 1}), ("nanmedian", {"dim": 1}), ("mode", {}), ("cummax", {"dim": 0}),
                         ("cummin", {"dim": 1}), ("aminmax", {}), ("histogram", {"bins": 4})]:
        a, b = getattr(tp, name)(ours, **kwargs), getattr(torch, name)(theirs, **kwargs)
        assert type(a).__name__ == type(b).__name__ and type(a).__match_args__ == type(b).__match_args__, name
        assert_same(a, b)
        assert_same(getattr(ours, name)(**kwargs), b)  # the Tensor method
    hist, edges = tp.histogramdd(tp.tensor(X[:, :2].tolist()), bins=[2, 3])
    theirs = torch.histogramdd(torch.tensor(X[:, :2].tolist()), bins=[2, 3])
    assert isinstance(edges, tuple) and type(theirs.bin_edges) is tuple
    assert_same(hist, theirs.hist)
    assert_same(edges, theirs.bin_edges)


def test_plain_tuples():
    ours, theirs = tp.tensor(X.tolist()), torch.tensor(X.tolist())
    for name in ("std_mean", "var_mean"):
        a, b = getattr(tp, name)(ours, 1, keepdim=True), getattr(torch, name)(theirs, 1, keepdim=True)
        assert type(a) is tuple and type(b) is tuple
        assert_same(a, b)
    a, b = tp.gradient(ours, spacing=0.5), torch.gradient(theirs, spacing=0.5)
    assert type(a) is tuple
    assert_same(a, b)
    a, b = tp.unique(ours.round(), return_inverse=True), torch.unique(theirs.round(), return_inverse=True)
    assert type(a) is tuple
    assert_same(a, b)


def test_keyword_arguments():
    x_tp, x_t = tp.tensor(X.tolist()), torch.tensor(X.tolist())
    calls = [
        lambda m, x: m.quantile(x, q=0.25, dim=0, keepdim=True, interpolation="midpoint"),
        lambda m, x: m.nanquantile(input=x, q=0.5),
        lambda m, x: x.quantile(0.5, dim=1, interpolation="nearest"),
        lambda m, x: m.median(input=x, dim=1, keepdim=True),
        lambda m, x: m.mode(x, dim=0, keepdim=True),
        lambda m, x: m.searchsorted(sorted_sequence=x.sort(1).values, input=x, side="right"),
        lambda m, x: m.bucketize(input=x, boundaries=m.tensor([-1.0, 0.0, 1.0]), right=True),
        lambda m, x: m.histc(x, bins=5, min=-1, max=1),
        lambda m, x: x.histogram(bins=m.tensor([-2.0, 0.0, 2.0]), density=True),
        lambda m, x: m.diff(x, n=2, dim=0, append=x[:1]),
        lambda m, x: m.cumulative_trapezoid(y=x, dx=0.5, dim=0),
        lambda m, x: m.trapezoid(y=x, x=m.arange(6.0)),
        lambda m, x: m.cov(x, correction=0, aweights=m.ones(6)),
        lambda m, x: m.count_nonzero(x.round(), dim=(0, 1)),
        lambda m, x: m.isin(elements=x.round(), test_elements=m.tensor([0.0, 1.0]), invert=True),
        lambda m, x: m.vander(x[0], N=3, increasing=True),
        lambda m, x: m.unique_consecutive(x.round(), return_counts=True, dim=1),
        lambda m, x: m.bincount(x.abs().long().flatten(), weights=x.flatten(), minlength=5),
        lambda m, x: m.var_mean(x, dim=1, correction=0),
        lambda m, x: m.logcumsumexp(x, dim=1),
        lambda m, x: m.matrix_power(x[:, :4], n=4),
        lambda m, x: m.nanmean(x, dim=1, dtype=m.float64),
    ]
    for i, call in enumerate(calls):
        try:
            assert_same(call(tp, x_tp), call(torch, x_t), rtol=1e-5, atol=1e-5)
        except AssertionError as e:
            raise AssertionError(f"call {i}: {e}") from None


def test_errors_match_torch():
    cases = {
        "median dim out of range": (lambda m: m.median(m.ones(2, 3), 2), IndexError),
        "mode dim out of range": (lambda m: m.mode(m.ones(2, 3), -3), IndexError),
        "cummax dim out of range": (lambda m: m.cummax(m.ones(2, 3), 2), IndexError),
        "trapezoid 0-dim": (lambda m: m.trapezoid(m.tensor(1.0)), IndexError),
        "unique dim on 0-dim": (lambda m: m.unique(m.tensor(1.0), dim=0), IndexError),
        "aminmax tuple dim": (lambda m: m.aminmax(m.ones(2, 3), dim=(0, 1)), TypeError),
        "diff number prepend": (lambda m: m.diff(m.ones(3), prepend=1), TypeError),
        "matrix_power float n": (lambda m: m.matrix_power(m.ones(2, 2), 2.0), TypeError),
        "quantile of ints": (lambda m: m.quantile(m.ones(3, dtype=m.int64), 0.5), RuntimeError),
        "median of bools": (lambda m: m.median(m.ones(3, dtype=m.bool)), NotImplementedError),
        "bincount of floats": (lambda m: m.bincount(m.ones(3)), NotImplementedError),
        "bincount negative": (lambda m: m.bincount(m.tensor([1, -1])), RuntimeError),
        "logcumsumexp of ints": (lambda m: m.logcumsumexp(m.ones(3, dtype=m.int64), 0), NotImplementedError),
        "gradient of uint8": (lambda m: m.gradient(m.ones(3, dtype=m.uint8)), RuntimeError),
        "isin of bools": (lambda m: m.isin(m.ones(3, dtype=m.bool), m.ones(2, dtype=m.bool)), RuntimeError),
        "chain_matmul of nothing": (lambda m: m.chain_matmul(), RuntimeError),
        "frobenius_norm three dims": (lambda m: m.frobenius_norm(m.ones(2, 2, 2), (0, 1, 2)), RuntimeError),
        "cov negative fweights": (lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1, -1, 1])), RuntimeError),
        "searchsorted opposite sides": (lambda m: m.searchsorted(m.ones(3), m.ones(2), side="left", right=True),
                                        RuntimeError),
    }
    for name, (fn, kind) in cases.items():
        assert raises_like(fn) is kind, name
    with pytest.raises(RuntimeError, match="quantile\\(\\) q must be in the range"):
        tp.nanquantile(tp.ones(3), 2.0)
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 0 to have non-zero size"):
        tp.median(tp.ones(0, 3), 0)


def test_warnings_match_torch():
    for fn in (lambda m: m.cov(m.ones(2, 1)), lambda m: m.cov(m.ones(3, 4), correction=5)):
        messages = []
        for m in (torch, tp):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fn(m)
            messages.append([str(w.message) for w in caught])
        # torch adds where in its C++ the warning came from
        assert len(messages[0]) == len(messages[1]) == 1 and messages[0][0].startswith(messages[1][0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tp.chain_matmul(tp.ones(2, 2), tp.ones(2, 2))
        tp.frobenius_norm(tp.ones(2, 2), (0, 1))
    # Deprecations are said once per process; either this call or an earlier one said them.
    assert all("deprecated" in str(w.message) for w in caught)


# ---------------------------------------------------------------------------------------------
# dsmm and spmm: PyTorch's names of mm for a sparse first matrix; with a dense one, mm itself

@pytest.mark.parametrize("name", ["dsmm", "spmm"])
def test_dsmm_and_spmm_are_mm_on_dense_tensors(name):
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4))
    for dtype in ("float32", "float64", "int64"):
        (a_tp, a_t), (b_tp, b_t) = both(a * 3, dtype), both(b * 3, dtype)
        assert_same(getattr(tp, name)(a_tp, b_tp), getattr(torch, name)(a_t, b_t), rtol=1e-5, atol=1e-5)
    (a_tp, a_t), (b_tp, b_t) = both(a), both(b)
    assert_same(getattr(tp, name)(input=a_tp, mat2=b_tp), getattr(torch, name)(input=a_t, mat2=b_t), rtol=1e-5)
    out_tp, out_t = tp.empty(2, 4), torch.empty(2, 4)
    assert getattr(tp, name)(a_tp, b_tp, out=out_tp) is out_tp
    getattr(torch, name)(a_t, b_t, out=out_t)
    assert_same(out_tp, out_t, rtol=1e-5)
    grads = []
    for m, x, y in ((tp, a_tp, b_tp), (torch, a_t, b_t)):
        x = x.clone().requires_grad_()
        getattr(m, name)(x, y).sum().backward()
        grads.append(x.grad)
    assert_same(*grads, rtol=1e-5)
    for fn in (lambda m: getattr(m, name)(m.ones(2, 3), m.ones(3)),
               lambda m: getattr(m, name)(m.ones(2, 3), m.ones(2, 3)),
               lambda m: getattr(m, name)(m.ones(2, 3), m.ones(3, 4, dtype=m.float64))):
        assert raises_like(fn) is RuntimeError


# ---------------------------------------------------------------------------------------------
# Autocast, gradients, large inputs

@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_quantile_runs_in_float32_under_autocast(dtype):
    results = []
    for m in (tp, torch):
        x = m.tensor(X.tolist()).to(getattr(m, dtype))
        with m.autocast("cpu", dtype=getattr(m, dtype)):
            results.append(m.quantile(x, 0.3, dim=1))
    assert_same(results[0], results[1], rtol=1e-2)


def gradients(fn, values):
    grads = []
    for m in (tp, torch):
        leaf = m.tensor(values, dtype=m.float64, requires_grad=True)
        out = fn(m, leaf)
        outputs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.is_floating_point()]
        weights = [m.arange(float(o.numel()), dtype=m.float64).reshape(o.shape) + 1 for o in outputs]
        sum(((o * w).sum() for o, w in zip(outputs, weights)), m.zeros((), dtype=m.float64)).backward()
        grads.append(leaf.grad)
    assert_same(grads[0], grads[1], rtol=1e-7)


def test_gradients_through_ties_and_selections():
    ties = [[1.0, 3.0, 3.0, 2.0], [2.0, 2.0, 5.0, 5.0], [0.0, 4.0, 4.0, 4.0]]
    gradients(lambda m, x: m.median(x), ties)  # spread evenly over the elements equal to the median
    gradients(lambda m, x: m.nanmedian(x), ties)
    gradients(lambda m, x: m.cummax(x, 1), ties)  # to the last index of the running max
    gradients(lambda m, x: m.cummin(x, 0), ties)
    gradients(lambda m, x: m.mode(x, 1), ties)
    gradients(lambda m, x: m.aminmax(x, dim=1), ties)
    gradients(lambda m, x: m.quantile(x, m.tensor([0.2, 0.7], dtype=m.float64), dim=1), ties)
    gradients(lambda m, x: m.logcumsumexp(x, 1), ties)
    gradients(lambda m, x: m.gradient(x, spacing=[m.tensor([0.0, 1.0, 3.0]), m.tensor([0.0, 1.0, 1.5, 3.0])],
                                      edge_order=2), ties)
    gradients(lambda m, x: m.corrcoef(x), ties)


def test_large_inputs_match_torch():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(3, 3000)).astype(np.float32)
    boundaries = np.sort(rng.normal(size=5000).astype(np.float32))
    x_tp, x_t = tp.tensor(values.tolist()), torch.tensor(values.tolist())
    b_tp, b_t = tp.tensor(boundaries.tolist()), torch.tensor(boundaries.tolist())
    assert_same(tp.searchsorted(b_tp, x_tp), torch.searchsorted(b_t, x_t))
    assert_same(tp.bucketize(x_tp, b_tp, right=True), torch.bucketize(x_t, b_t, right=True))
    assert_same(tp.isin(x_tp, b_tp[::3]), torch.isin(x_t, b_t[::3]))
    assert_same(tp.logcumsumexp(x_tp, 1), torch.logcumsumexp(x_t, 1), rtol=1e-5, atol=1e-5)
    assert_same(tp.cummax(x_tp, 1), torch.cummax(x_t, 1))
    assert_same(tp.median(x_tp, 1), torch.median(x_t, 1))
    assert_same(tp.quantile(x_tp, 0.9, dim=1), torch.quantile(x_t, 0.9, dim=1))
    rounded_tp, rounded_t = (x_tp * 4).round(), (x_t * 4).round()
    assert_same(tp.unique(rounded_tp, return_counts=True), torch.unique(rounded_t, return_counts=True))
    # Which of many equal modes' indices torch returns depends on its unstable sort: values only.
    assert_same(tp.mode(rounded_tp, 1).values, torch.mode(rounded_t, 1).values)
    assert_same(tp.histc(x_tp, 50), torch.histc(x_t, 50))


def test_meta_shapes():
    x = tp.ones(3, 5, device="meta")
    assert tp.quantile(x, tp.ones(2, device="meta") / 2, dim=1).shape == (2, 3)
    assert tp.median(x, 1).indices.shape == (3,)
    assert tp.histc(x, 7).shape == (7,)
    assert tp.searchsorted(tp.ones(4, device="meta"), x).shape == (3, 5)
    assert math.prod(tp.cummax(x, 1).values.shape) == 15

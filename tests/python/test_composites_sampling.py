"""The sampling family (tensorplay/_composites/sampling.py) and tensorplay.random.

The draws cannot match PyTorch's stream, so the laws are tested: chi-squared tests for the discrete
samplers and Kolmogorov-Smirnov tests for the continuous ones, on fixed seeds, at a significance of
1e-4 with samples large enough that the wrong law (or a shifted parameter) fails. What is not random
(dtypes, shapes, errors, gradients) is compared with PyTorch."""

import math
import re
import warnings

import pytest
import torch

import tensorplay as tp

N = 20000
# z for a one-sided tail of 1e-4.
_Z = 3.719


def _chi2_critical(df):
    """The chi-squared quantile at 1 - 1e-4 (Wilson-Hilferty)."""
    return df * (1 - 2 / (9 * df) + _Z * math.sqrt(2 / (9 * df))) ** 3


def _check_chi2(samples, pmf, support):
    """samples (ints) follow pmf on support: bins of expected count under 5 are merged into a tail bin."""
    counts = {}
    for value in samples:
        counts[value] = counts.get(value, 0) + 1
    assert set(counts) <= set(support), f"draws outside the support: {set(counts) - set(support)}"
    n = len(samples)
    observed, expected, rest_obs, rest_exp = [], [], 0, 0.0
    for k in support:
        e = n * pmf(k)
        if e >= 5:
            observed.append(counts.get(k, 0))
            expected.append(e)
        else:
            rest_obs += counts.get(k, 0)
            rest_exp += e
    if rest_exp > 0:
        observed.append(rest_obs)
        expected.append(max(rest_exp, 1e-12))
    statistic = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    assert statistic < _chi2_critical(len(observed) - 1), (statistic, observed, expected)


def _check_ks(samples, cdf):
    """samples follow the continuous law of cdf (Kolmogorov-Smirnov at 1e-4)."""
    xs = sorted(samples)
    n = len(xs)
    d = max(max((i + 1) / n - cdf(x), cdf(x) - i / n) for i, x in enumerate(xs))
    assert d < math.sqrt(-math.log(1e-4 / 2) / (2 * n)), d


def _normal_cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _values(t):
    return t.reshape(-1).tolist()


# ---- The laws ----

def test_multinomial_with_replacement_law_and_zero_weights():
    tp.manual_seed(1)
    weights = [0.1, 0.0, 0.2, 0.3, 0.4]
    draws = _values(tp.multinomial(tp.tensor(weights), N, replacement=True))
    _check_chi2(draws, lambda k: weights[k], range(5))
    # Rows are independent laws.
    rows = tp.multinomial(tp.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]), 50, True)
    assert _values(rows[0]) == [0] * 50 and _values(rows[1]) == [2] * 50


def test_multinomial_without_replacement_is_successive_draws():
    tp.manual_seed(2)
    weights = [0.5, 0.25, 0.15, 0.1]
    pairs = tp.multinomial(tp.tensor([weights] * (N // 2)), 2)
    codes = _values(pairs[:, 0] * 4 + pairs[:, 1])

    def pmf(code):
        i, j = divmod(code, 4)
        return 0.0 if i == j else weights[i] * weights[j] / (1 - weights[i])
    _check_chi2(codes, pmf, range(16))
    # Without replacement every row is a set of distinct categories, all of positive weight first.
    draws = tp.multinomial(tp.tensor([[1.0, 2.0, 0.0, 3.0]] * 100), 3)
    assert all(sorted(row) == [0, 1, 3] for row in draws.tolist())


def test_multinomial_one_sample_law():
    tp.manual_seed(3)
    weights = [3.0, 1.0, 4.0, 1.0, 5.0]
    total = sum(weights)
    draws = _values(tp.multinomial(tp.tensor([weights] * (N // 2), dtype=tp.float16), 1))
    _check_chi2(draws, lambda k: weights[k] / total, range(5))


@pytest.mark.parametrize("p", [0.03, 0.5, 0.9])
def test_bernoulli_law(p):
    tp.manual_seed(4)
    _check_chi2(_values(tp.bernoulli(tp.full((N,), p)).long()), lambda k: p if k else 1 - p, (0, 1))
    _check_chi2(_values(tp.bernoulli(tp.zeros(N, dtype=tp.int64), p)), lambda k: p if k else 1 - p, (0, 1))
    _check_chi2(_values(tp.zeros(N, dtype=tp.bool).bernoulli_(tp.tensor([p])).long()),
                lambda k: p if k else 1 - p, (0, 1))


@pytest.mark.parametrize("rate", [0.7, 3.5, 9.5, 10.0, 30.0])
def test_poisson_law(rate):
    tp.manual_seed(5)
    draws = [int(v) for v in _values(tp.poisson(tp.full((N,), rate)))]
    pmf = lambda k: math.exp(-rate + k * math.log(rate) - math.lgamma(k + 1))  # noqa: E731
    _check_chi2(draws, pmf, range(0, int(rate * 4 + 40)))


def test_poisson_large_rates_mean_and_variance():
    tp.manual_seed(6)
    for rate in (1e4, 1e12):
        draws = tp.poisson(tp.full((N,), rate, dtype=tp.float64))
        mean, var = draws.mean().item(), draws.var().item()
        assert abs(mean - rate) < 5 * math.sqrt(rate / N)
        assert abs(var / rate - 1) < 5 * math.sqrt(2 / N)
        assert (draws == draws.floor()).all().item()


@pytest.mark.parametrize("count,prob", [(20.0, 0.1), (7.0, 0.5), (100.0, 0.3), (50.0, 0.9), (1000.0, 0.02)])
def test_binomial_law(count, prob):
    tp.manual_seed(7)
    draws = [int(v) for v in _values(tp.binomial(tp.full((N,), count), tp.full((N,), prob)))]
    n = int(count)
    _check_chi2(draws, lambda k: math.comb(n, k) * prob ** k * (1 - prob) ** (n - k), range(n + 1))


def test_binomial_edges_as_torch():
    count = tp.tensor([0.0, 5.0, 5.0, 5.0, 5.0, -3.0])
    prob = tp.tensor([0.5, 0.0, 1.0, 1.5, -0.5, 0.5])
    assert _values(tp.binomial(count, prob)) == _values(torch.binomial(torch.tensor(_values(count)),
                                                                        torch.tensor(_values(prob))))
    assert math.isnan(tp.binomial(tp.tensor([5.0]), tp.tensor([math.nan])).item())


def test_geometric_law():
    tp.manual_seed(8)
    p = 0.3
    for dtype in (tp.float32, tp.int64):
        draws = [int(v) for v in _values(tp.empty(N, dtype=dtype).geometric_(p))]
        _check_chi2(draws, lambda k: (1 - p) ** (k - 1) * p, range(1, 80))


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.int64, tp.uint8, tp.int8])
def test_random_from_to_law(dtype):
    tp.manual_seed(9)
    low, high = (-3, 5) if dtype != tp.uint8 else (2, 9)
    draws = [int(v) for v in _values(tp.empty(N, dtype=dtype).random_(low, high))]
    _check_chi2(draws, lambda k: 1 / (high - low), range(low, high))
    draws = [int(v) for v in _values(tp.empty(N, dtype=dtype).random_(6))]
    _check_chi2(draws, lambda k: 1 / 6, range(6))


@pytest.mark.parametrize("dtype,top", [(tp.uint8, 255), (tp.int8, 127), (tp.int16, 32767), (tp.bool, 1),
                                       (tp.float16, 2048), (tp.bfloat16, 256)])
def test_random_default_range(dtype, top):
    tp.manual_seed(10)
    draws = [int(v) for v in _values(tp.empty(N, dtype=dtype).random_())]
    if top < 300:
        _check_chi2(draws, lambda k: 1 / (top + 1), range(top + 1))
    else:
        assert min(draws) >= 0 and max(draws) <= top and max(draws) > top * 0.99
    from_draws = [int(v) for v in _values(tp.empty(N, dtype=dtype).random_(0, None))]
    assert min(from_draws) >= 0 and max(from_draws) <= top


def test_random_64_bit_ranges():
    tp.manual_seed(11)
    draws = tp.empty(N, dtype=tp.int64).random_(-2 ** 63, None)
    negative = (draws < 0).long().sum().item()
    assert abs(negative - N / 2) < 5 * math.sqrt(N / 4)
    # [from, max] holds more than 2^63 values for a negative from: drawn by rejection.
    draws = tp.empty(N, dtype=tp.int64).random_(-5, None)
    assert draws.min().item() >= -5
    assert abs((draws < 2 ** 62).long().sum().item() / N - (2 ** 62 + 5) / (2 ** 63 + 5)) < 0.02
    big = tp.empty(N, dtype=tp.int64).random_()
    assert big.min().item() >= 0 and big.max().item() > 2 ** 62


def test_normal_overloads_law():
    tp.manual_seed(12)
    mean, std = tp.tensor([1.0, -2.0]).repeat(N // 2), tp.tensor([0.5, 3.0]).repeat(N // 2)
    draws = tp.normal(mean, std)
    _check_ks(_values((draws - mean) / std), _normal_cdf)
    _check_ks(_values((tp.normal(mean, 2.0) - mean) / 2.0), _normal_cdf)
    _check_ks(_values((tp.normal(-1.0, std) + 1.0) / std), _normal_cdf)
    _check_ks(_values((tp.normal(3.0, 0.25, (N,)) - 3.0) / 0.25), _normal_cdf)
    _check_ks(_values(tp.normal(tp.zeros(N, dtype=tp.float64))), _normal_cdf)


def test_exponential_law():
    tp.manual_seed(13)
    _check_ks(_values(tp.empty(N, dtype=tp.float64).exponential_(2.5)), lambda x: 1 - math.exp(-2.5 * x))
    _check_ks(_values(tp.empty(N).exponential_()), lambda x: 1 - math.exp(-x))


def test_cauchy_law():
    tp.manual_seed(14)
    draws = _values(tp.empty(N, dtype=tp.float64).cauchy_(1.5, 0.5))
    _check_ks(draws, lambda x: 0.5 + math.atan((x - 1.5) / 0.5) / math.pi)


def test_log_normal_law():
    tp.manual_seed(15)
    draws = tp.empty(N, dtype=tp.float64).log_normal_(0.5, 0.75)
    assert (draws > 0).all().item()
    _check_ks(_values(draws), lambda x: _normal_cdf((math.log(x) - 0.5) / 0.75))


def test_wrong_laws_fail():
    # The checks have the power to tell close laws apart at these sizes.
    tp.manual_seed(16)
    with pytest.raises(AssertionError):
        _check_ks(_values(tp.empty(N).exponential_(1.05)), lambda x: 1 - math.exp(-x))
    with pytest.raises(AssertionError):
        _check_chi2([int(v) for v in _values(tp.poisson(tp.full((N,), 30.0)))],
                    lambda k: math.exp(-30.6 + k * math.log(30.6) - math.lgamma(k + 1)), range(200))


def test_randint_like():
    tp.manual_seed(17)
    x = tp.zeros(N, dtype=tp.float16)
    draws = tp.randint_like(x, 7)
    assert draws.dtype == tp.float16 and draws.shape == x.shape
    _check_chi2([int(v) for v in _values(draws)], lambda k: 1 / 7, range(7))
    draws = tp.randint_like(x, 3, 9, dtype=tp.int32)
    assert draws.dtype == tp.int32
    _check_chi2(_values(draws), lambda k: 1 / 6, range(3, 9))
    assert _values(tp.randint_like(x[:5], high=1)) == [0.0] * 5
    assert tp.randint_like(tp.zeros(3), 4, requires_grad=True).requires_grad
    assert tp.randint_like(tp.zeros(3), tp.tensor(10)).max().item() < 10


# ---- Reproducibility ----

_DRAWS = {
    "multinomial": lambda g: tp.multinomial(tp.tensor([[1.0, 2.0, 3.0, 4.0]] * 3), 3, generator=g),
    "multinomial_r": lambda g: tp.multinomial(tp.tensor([1.0, 2.0, 3.0]), 10, True, generator=g),
    "bernoulli": lambda g: tp.bernoulli(tp.full((20,), 0.5), generator=g),
    "bernoulli_p": lambda g: tp.bernoulli(tp.zeros(20), 0.3, generator=g),
    "bernoulli_": lambda g: tp.zeros(20).bernoulli_(tp.tensor(0.4), generator=g),
    "normal_tt": lambda g: tp.normal(tp.zeros(5), tp.ones(5), generator=g),
    "normal_tf": lambda g: tp.normal(tp.zeros(5), 2.0, generator=g),
    "normal_ft": lambda g: tp.normal(0.0, tp.ones(5), generator=g),
    "normal_ff": lambda g: tp.normal(0.0, 1.0, (5,), generator=g),
    "poisson": lambda g: tp.poisson(tp.tensor([0.5, 5.0, 50.0, 5e5]), generator=g),
    "binomial": lambda g: tp.binomial(tp.tensor([5.0, 500.0, 50.0]), tp.tensor([0.3, 0.3, 0.95]), generator=g),
    "randint_like": lambda g: tp.randint_like(tp.zeros(10), 100, generator=g),
    "exponential_": lambda g: tp.empty(8).exponential_(generator=g),
    "cauchy_": lambda g: tp.empty(8).cauchy_(generator=g),
    "geometric_": lambda g: tp.empty(8).geometric_(0.2, generator=g),
    "log_normal_": lambda g: tp.empty(8).log_normal_(generator=g),
    "random_": lambda g: tp.empty(8, dtype=tp.int64).random_(generator=g),
    "random_64": lambda g: tp.empty(8, dtype=tp.int64).random_(-2 ** 63 + 1, None, generator=g),
}


@pytest.mark.parametrize("name", sorted(_DRAWS))
def test_same_seed_same_draws(name):
    draw = _DRAWS[name]
    tp.manual_seed(123)
    first = draw(None)
    tp.manual_seed(123)
    assert _values(draw(None)) == _values(first)
    generator = tp.Generator().manual_seed(99)
    from_generator = draw(generator)
    # A generator's draws leave the default stream alone, and its seed replays them.
    tp.manual_seed(123)
    state = tp.get_rng_state()
    assert _values(draw(tp.Generator().manual_seed(99))) == _values(from_generator)
    assert tp.equal(tp.get_rng_state(), state)
    with pytest.raises(TypeError, match="generator"):
        draw(3)


# ---- Dtypes, shapes, methods, out=, in-place forms ----

def _dtype(d):
    return str(d).split(".")[-1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_result_dtypes_as_torch(dtype):
    tdt, pdt = getattr(torch, dtype), getattr(tp, dtype)
    pairs = [
        (lambda m, d: m.bernoulli(m.full((2, 3), 0.5, dtype=d)), None),
        (lambda m, d: m.bernoulli(m.zeros(2, dtype=d), 0.5), None),
        (lambda m, d: m.normal(m.zeros(2, 1, dtype=d), m.ones(3)), None),
        (lambda m, d: m.normal(m.zeros(2, dtype=d), 2.0), None),
        (lambda m, d: m.normal(1.0, m.ones(4, dtype=d)), None),
        (lambda m, d: m.normal(1.0, 2.0, (2, 2), dtype=d), None),
        (lambda m, d: m.poisson(m.ones(3, dtype=d)), None),
        (lambda m, d: m.randint_like(m.zeros(3, 2, dtype=d), 5), None),
        (lambda m, d: m.multinomial(m.ones(2, 3, dtype=d), 2), None),
        (lambda m, d: m.ones(3, dtype=d).multinomial(2, True), None),
        (lambda m, d: m.ones(3, dtype=d).bernoulli(), None),
    ]
    if dtype in ("float32", "float64"):
        pairs.append((lambda m, d: m.binomial(m.ones(2, 1, dtype=d), m.full((3,), 0.5, dtype=d)), None))
    for fn, _ in pairs:
        expected, got = fn(torch, tdt), fn(tp, pdt)
        assert _dtype(got.dtype) == _dtype(expected.dtype) and tuple(got.shape) == tuple(expected.shape)


@pytest.mark.parametrize("op,args", [("exponential_", (1.5,)), ("cauchy_", (0.0, 2.0)), ("log_normal_", ()),
                                     ("geometric_", (0.5,)), ("random_", (3,)), ("bernoulli_", (0.5,))])
def test_inplace_forms_return_self(op, args):
    for dtype in ("float32", "float16", "float64"):
        x = tp.zeros(4, 3, dtype=getattr(tp, dtype))[:, 1]
        assert getattr(x, op)(*args) is x and x.dtype == getattr(tp, dtype) and tuple(x.shape) == (4,)
    assert tp.Tensor.__dict__.get(op) is not None or hasattr(tp.Tensor, op)


def test_inplace_autograd_as_torch():
    for m in (torch, tp):
        leaf = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            leaf.exponential_()
        inner = leaf * 2
        inner.cauchy_()
        assert inner.requires_grad
        (inner * 3).sum().backward()
        assert leaf.grad.tolist() == [0.0, 0.0, 0.0]


def test_parameter_gradients_are_zero_as_torch():
    mean = tp.tensor([1.0, 2.0], requires_grad=True)
    std = tp.tensor([1.0, 3.0], requires_grad=True)
    out = tp.normal(mean, std)
    assert out.requires_grad
    out.sum().backward()
    assert mean.grad.tolist() == [0.0, 0.0] and std.grad.tolist() == [0.0, 0.0]
    p = tp.tensor([0.2, 0.7], requires_grad=True)
    for draw in (tp.bernoulli(p), tp.poisson(p * 10), tp.normal(p, 1.0), tp.normal(0.0, p)):
        assert draw.requires_grad
        draw.sum().backward()
    assert p.grad.tolist() == [0.0, 0.0]
    assert not tp.multinomial(p, 1).requires_grad
    draw = tp.binomial(tp.tensor([5.0]), tp.tensor([0.5], requires_grad=True))
    assert draw.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        draw.sum().backward()


def test_out_arguments():
    out = tp.zeros(5, dtype=tp.int64)
    assert tp.multinomial(tp.tensor([1.0, 2.0]), 3, True, out=out) is out
    assert set(_values(out)) <= {0, 1}
    with pytest.raises(RuntimeError, match="multinomial expects Long tensor out, got: Int"):
        tp.multinomial(tp.tensor([1.0, 2.0]), 1, out=tp.zeros(1, dtype=tp.int32))
    out = tp.zeros(4, dtype=tp.int64)
    assert tp.bernoulli(tp.full((4,), 0.5), out=out) is out and out.dtype == tp.int64
    assert set(_values(out)) <= {0, 1}
    out = tp.zeros(3, dtype=tp.float64)
    assert tp.normal(tp.zeros(3), tp.ones(3), out=out) is out and out.dtype == tp.float64
    out = tp.zeros(0)
    assert tp.normal(0.0, 1.0, (2, 3), out=out) is out and tuple(out.shape) == (2, 3)
    with pytest.raises(NotImplementedError, match="normal_kernel_cpu"):
        tp.normal(tp.zeros(1), tp.ones(1), out=tp.zeros(1, dtype=tp.int64))


def test_meta_device_shapes():
    meta = tp.ones(2, 5, device="meta")
    assert tuple(tp.multinomial(meta, 3).shape) == (2, 3)
    assert tp.bernoulli(meta).device.type == "meta"
    assert tuple(tp.normal(meta, tp.ones(5, device="meta")).shape) == (2, 5)
    assert tuple(tp.poisson(meta).shape) == (2, 5)
    assert tuple(tp.binomial(meta, meta).shape) == (2, 5)
    assert meta.exponential_() is meta and meta.random_(3) is meta


def test_autocast_keeps_the_parameters_dtype():
    with tp.autocast("cpu"), torch.autocast("cpu"):
        for m in (torch, tp):
            assert _dtype(m.normal(m.zeros(2), m.ones(2)).dtype) == "float32"
            assert _dtype(m.bernoulli(m.full((2,), 0.5)).dtype) == "float32"


# ---- Errors, as PyTorch raises them ----

_ERRORS = {
    "mn_3d": lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    "mn_int": lambda m: m.multinomial(m.tensor([1, 2]), 1),
    "mn_neg": lambda m: m.multinomial(m.tensor([1.0, -2.0]), 1),
    "mn_nan": lambda m: m.multinomial(m.tensor([1.0, math.nan]), 1),
    "mn_neg_r": lambda m: m.multinomial(m.tensor([1.0, -2.0]), 2, True),
    "mn_inf_r": lambda m: m.multinomial(m.tensor([1.0, math.inf]), 2, True),
    "mn_zero": lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
    "mn_zero_row_r": lambda m: m.multinomial(m.tensor([[1.0, 1.0], [0.0, 0.0]]), 2, True),
    "mn_too_many": lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3),
    "mn_none": lambda m: m.multinomial(m.tensor([1.0, 2.0]), 0),
    "mn_bool_n": lambda m: m.multinomial(m.tensor([1.0, 2.0]), True),
    "mn_int_replacement": lambda m: m.multinomial(m.tensor([1.0, 2.0]), 1, 1),
    "mn_categories": lambda m: m.multinomial(m.ones(2 ** 24 + 1), 1),
    "b_int": lambda m: m.bernoulli(m.tensor([0, 1])),
    "b_p": lambda m: m.bernoulli(m.tensor([0.0]), 1.5),
    "b_list": lambda m: m.bernoulli([0.5]),
    "b__int_p": lambda m: m.tensor([3.0]).bernoulli_(m.tensor([1])),
    "b__p": lambda m: m.tensor([3.0]).bernoulli_(-0.5),
    "n_int": lambda m: m.normal(m.tensor([0, 1]), m.tensor([1.0, 2.0])),
    "n_std": lambda m: m.normal(m.tensor([0.0]), -2.0),
    "n_std_t": lambda m: m.normal(m.tensor([0.0, 1.0]), m.tensor([-1.0, 1.0])),
    "n_std_nan": lambda m: m.normal(m.tensor([0.0]), m.tensor([math.nan])),
    "n_ff_std": lambda m: m.normal(0.0, -1.0, (2,)),
    "n_ff_int": lambda m: m.normal(0.0, 1.0, (2,), dtype=m.int64),
    "n_ft_int": lambda m: m.normal(0.0, m.tensor([1, 2])),
    "n_shapes": lambda m: m.normal(m.zeros(2, 3), m.ones(3, 2)),
    "n_size": lambda m: m.normal(0.0, 1.0, (-1,)),
    "p_int": lambda m: m.poisson(m.tensor([1, 2])),
    "p_neg": lambda m: m.poisson(m.tensor([-1.0])),
    "p_nan": lambda m: m.poisson(m.tensor([math.nan])),
    "bi_int": lambda m: m.binomial(m.tensor([5, 10]), m.tensor([0.5, 0.1])),
    "bi_bool_p": lambda m: m.binomial(m.tensor([5.0]), m.tensor([True])),
    "bi_mixed": lambda m: m.binomial(m.tensor([5.0]).double(), m.tensor([0.5])),
    "bi_half": lambda m: m.binomial(m.tensor([5.0]).half(), m.tensor([0.5]).half()),
    "bi_float_p": lambda m: m.binomial(m.tensor([5.0]), 0.5),
    "bi_shapes": lambda m: m.binomial(m.tensor([5.0, 10.0]), m.tensor([0.5, 0.5, 0.5])),
    "e_lambda": lambda m: m.zeros(3).exponential_(0.0),
    "e_nan": lambda m: m.zeros(3).exponential_(math.nan),
    "e_int": lambda m: m.zeros(3, dtype=m.int64).exponential_(),
    "c_sigma": lambda m: m.zeros(3).cauchy_(1.0, -1.0),
    "c_int": lambda m: m.zeros(3, dtype=m.uint8).cauchy_(),
    "g_p": lambda m: m.zeros(3).geometric_(1.0),
    "g_bool": lambda m: m.zeros(3, dtype=m.bool).geometric_(0.5),
    "ln_std": lambda m: m.zeros(3).log_normal_(0.0, 0.0),
    "ln_int": lambda m: m.zeros(3, dtype=m.int64).log_normal_(),
    "r_order": lambda m: m.zeros(3).random_(3, 2),
    "r_u8_from": lambda m: m.zeros(3, dtype=m.uint8).random_(-3, 5),
    "r_bool_to": lambda m: m.zeros(3, dtype=m.bool).random_(5),
    "r_i8_to": lambda m: m.zeros(3, dtype=m.int8).random_(0, 200),
    "r_half_to": lambda m: m.zeros(3, dtype=m.float16).random_(2 ** 62),
    "r_half_full": lambda m: m.zeros(3, dtype=m.float16).random_(-2 ** 63, None),
    "r_i32_full": lambda m: m.zeros(3, dtype=m.int32).random_(-2 ** 63, None),
    "r_float": lambda m: m.zeros(3).random_(1.5),
    "ril_order": lambda m: m.randint_like(m.zeros(3), 5, 4),
    "ril_bool": lambda m: m.randint_like(m.tensor([True]), 3),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors_as_torch(name):
    fn = _ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            fn(torch)
        with pytest.raises(Exception) as got:
            fn(tp)
    assert type(got.value) is type(expected.value)
    message, torch_message = str(got.value), str(expected.value)
    if not torch_message.startswith(("Expected p_in", "The expanded", "The size of", "bernoulli() received",
                                     "randint_like() received", "random_() received")):
        assert message == torch_message


def test_random_precision_warning_as_torch():
    for m in (torch, tp):
        with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^11\), 2\^11\]"):
            m.zeros(3, dtype=m.float16).random_(0, 5000)


# ---- Seeds and tensorplay.random ----

def test_torch_level_seed_functions():
    assert tp.seed is tp.random.seed and tp.initial_seed is tp.random.initial_seed
    assert tp.manual_seed is tp.random.manual_seed
    for seed in (0, 2 ** 63, 2 ** 64 - 1, 7.9, "12"):
        assert isinstance(tp.manual_seed(seed), tp.Generator)
        torch.manual_seed(seed)
        assert tp.initial_seed() == torch.initial_seed()
    tp.manual_seed(-1)
    assert tp.initial_seed() == 2 ** 64 - 1
    with pytest.raises(ValueError, match="Overflow"):
        tp.manual_seed(2 ** 64)
    drawn = tp.seed()
    assert 0 <= drawn < 2 ** 64 and tp.initial_seed() == drawn
    first = tp.rand(3)
    tp.manual_seed(drawn)
    assert _values(tp.rand(3)) == _values(first)


def test_fork_rng():
    tp.manual_seed(5)
    before = _values(tp.rand(4))
    tp.manual_seed(5)
    with tp.random.fork_rng():
        tp.rand(10)
    assert _values(tp.rand(4)) == before
    tp.manual_seed(5)
    with tp.random.fork_rng(devices=[], enabled=False):
        tp.rand(4)
    assert _values(tp.rand(4)) != before
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        with tp.random.fork_rng(devices=[0]):
            pass
    with tp.random.fork_rng(device_type="meta"):
        pass
    assert tp.random.thread_safe_generator() is None
    assert sorted(tp.random.__all__) == sorted(torch.random.__all__)


def test_rand_like_and_randn_like_take_a_generator():
    x = tp.zeros(3, 4, dtype=tp.float64).t()
    for name in ("rand_like", "randn_like"):
        fn = getattr(tp, name)
        first = fn(x, generator=tp.Generator().manual_seed(8))
        assert _values(fn(x, generator=tp.Generator().manual_seed(8))) == _values(first)
        expected = getattr(torch, name)(torch.zeros(3, 4, dtype=torch.float64).t(), generator=torch.Generator())
        assert first.dtype == tp.float64 and first.stride() == expected.stride()
        assert fn(x, generator=tp.Generator(), dtype=tp.float16, requires_grad=True).requires_grad
        with pytest.raises(NotImplementedError):
            fn(tp.zeros(2, dtype=tp.int64), generator=tp.Generator())
    tp.manual_seed(18)
    _check_ks(_values(tp.rand_like(tp.zeros(N), generator=tp.Generator().manual_seed(1))), lambda u: min(max(u, 0), 1))
    _check_ks(_values(tp.randn_like(tp.zeros(N), generator=tp.Generator().manual_seed(1))), _normal_cdf)


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m.randint(0, 3, (3,), dtype=m.bool), RuntimeError, "to - 1 is out of bounds for bool"),
    (lambda m: m.randint(-1, 2, (3,), dtype=m.bool), RuntimeError, "from is out of bounds for bool"),
    (lambda m: m.randint(0, 300, (3,), dtype=m.uint8), RuntimeError, "to - 1 is out of bounds for unsigned char"),
    (lambda m: m.randint(-300, 3, (3,), dtype=m.int8), RuntimeError, "from is out of bounds for signed char"),
    (lambda m: m.empty(3).uniform_(0, math.inf), RuntimeError, "to is out of bounds for float"),
    (lambda m: m.empty(3).uniform_(-math.inf, 0), RuntimeError, "from is out of bounds for float"),
    (lambda m: m.empty(3, dtype=m.float16).uniform_(0, 7e4), RuntimeError, "to is out of bounds for"),
    (lambda m: m.empty(3).uniform_(-3e38, 3e38), RuntimeError, "uniform_ expects to-from <= "),
    (lambda m: m.rand(2, generator=3), TypeError, "generator"),
    (lambda m: m.randn(2, generator="cpu"), TypeError, "generator"),
    (lambda m: m.manual_seed(2 ** 64), ValueError, "Overflow when unpacking long long"),
], ids=["bool_to", "bool_from", "uint8_to", "int8_from", "uniform_inf", "uniform_minus_inf", "uniform_half",
        "uniform_span", "rand_generator", "randn_generator", "seed_overflow"])
def test_sampler_bounds_and_argument_errors_as_torch(call, error, message):
    for m in (torch, tp):
        with pytest.raises(error, match=re.escape(message)):
            call(m)


def test_randint_of_bools_draws_both_values():
    draws = tp.randint(0, 2, (200,), dtype=tp.bool, generator=tp.Generator().manual_seed(3))
    assert 50 < int(draws.sum()) < 150


@pytest.mark.parametrize("seed", [2 ** 63, 2 ** 64 - 1, -1, -2 ** 63])
def test_seeds_span_64_bits_as_torch(seed):
    for m in (torch, tp):
        assert m.Generator().manual_seed(seed).initial_seed() == seed % 2 ** 64
        assert m.manual_seed(seed).initial_seed() == seed % 2 ** 64
    same = [tp.Generator().manual_seed(seed).initial_seed() for _ in range(2)]
    assert tp.rand(3, generator=tp.Generator().manual_seed(seed)).tolist() == \
        tp.rand(3, generator=tp.Generator().manual_seed(same[0])).tolist()

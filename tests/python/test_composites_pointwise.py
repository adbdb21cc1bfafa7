"""The pointwise math composites (tensorplay/_composites/pointwise.py) where the op table cannot reach:
in-place and out= forms, keyword arguments, errors, named-tuple and bool results, the accuracy of the
special functions over wide ranges, and their gradients. Every expected value comes from torch."""

import math

import numpy as np
import pytest
import torch

import tensorplay

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 2.0, -2.5, 1e-300, 1e300, -1e300, 5e-324]


def both(values, dtype="float64"):
    return tensorplay.tensor(values, dtype=getattr(tensorplay, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def assert_same(actual, expected, rtol=1e-7, atol=1e-7):
    assert isinstance(actual, tensorplay.Tensor), type(actual)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(actual.shape) == tuple(expected.shape)
    np.testing.assert_allclose(np.array(actual.double().tolist()), expected.double().numpy(), rtol=rtol, atol=atol)


def wide(lo, hi, n=600, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(lo, hi, n), SPECIAL]).tolist()


# ---------------------------------------------------------------------------------------------
# Special functions in float64, against torch's kernels over wide ranges and edge values.

@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0", "erfc", "sinc", "acosh", "asinh", "atanh"])
def test_unary_special_function_matches_torch_in_float64(name):
    for values in (wide(-40, 40), wide(0.999, 1.001, seed=2)):
        x, tx = both(values)
        assert_same(getattr(tensorplay, name)(x), getattr(torch, name)(tx), rtol=1e-10, atol=1e-13)


def test_erfc_keeps_relative_accuracy_in_the_far_tail():
    x, tx = both(np.linspace(2, 26, 200).tolist())
    assert_same(tensorplay.erfc(x), torch.erfc(tx), rtol=1e-12, atol=0)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_polygamma_matches_torch_in_float64(n):
    x, tx = both(wide(-6, 25))
    assert_same(tensorplay.polygamma(n, x), torch.polygamma(n, tx), rtol=1e-10, atol=1e-12)


def test_polygamma_method_takes_n_after_self():
    x, tx = both([0.3, 1.5, 4.0])
    assert_same(x.polygamma(2), tx.polygamma(2))
    y = x.clone()
    assert y.polygamma_(1) is y
    assert_same(y, tx.clone().polygamma_(1))


@pytest.mark.parametrize("p", [1, 2, 4])
def test_mvlgamma_matches_torch(p):
    x, tx = both(wide(2, 30))
    assert_same(tensorplay.mvlgamma(x, p=p), torch.mvlgamma(tx, p=p), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_matches_torch(name):
    rng = np.random.default_rng(3)
    a = np.exp(rng.uniform(-4, 5, 400)).tolist() + [0.0, 0.0, 1.0, math.inf, 2.0, -1.0, 1.0]
    x = np.exp(rng.uniform(-4, 5, 400)).tolist() + [0.0, 1.0, 0.0, 1.0, math.inf, 1.0, math.nan]
    (pa, ta), (px, tx) = both(a), both(x)
    # torch's asymptotic series for a ~ x > 20 is good to about 2e-9; tensorplay's series there to 1e-13.
    assert_same(getattr(tensorplay, name)(pa, px), getattr(torch, name)(ta, tx), rtol=1e-8, atol=1e-12)


def test_igamma_gradient_is_in_x_only():
    (a, ta), (x, tx) = both([0.5, 2.0, 7.0]), both([0.3, 2.5, 4.0])
    x.requires_grad_(True)
    tx.requires_grad_(True)
    tensorplay.igamma(a, x).sum().backward()
    torch.igamma(ta, tx).sum().backward()
    assert_same(x.grad, tx.grad, rtol=1e-10)
    a.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="igammac: input"):
        tensorplay.igammac(a, x).sum().backward()


@pytest.mark.parametrize("name, n", [("lgamma", None), ("digamma", None), ("polygamma", 1), ("polygamma", 3)])
def test_gamma_family_gradients_are_the_next_function(name, n):
    x, tx = both([0.2, 1.5, 3.7, -2.3, 12.0])
    x.requires_grad_(True)
    tx.requires_grad_(True)

    def call(m, v):
        return getattr(m, name)(v) if n is None else m.polygamma(n, v)
    (g,) = tensorplay.autograd.grad(call(tensorplay, x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(call(torch, tx).sum(), tx, create_graph=True)
    assert_same(g, tg.detach(), rtol=1e-9)
    (gg,) = tensorplay.autograd.grad(g.sum(), x)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert_same(gg, tgg, rtol=1e-8)


# ---------------------------------------------------------------------------------------------
# Bit-level ops.

@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_nextafter_steps_one_unit(dtype):
    values = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 3.5, 1e-30]
    others = [1.0, -1.0, 2.0, 0.0, 0.0, 0.0, 1.0, 3.5, -math.inf]
    (x, tx), (y, ty) = both(values, dtype), both(others, dtype)
    assert_same(tensorplay.nextafter(x, y), torch.nextafter(tx, ty), rtol=0, atol=0)


# (Not bfloat16: torch's conversion to it drops the sign of a NaN.)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_signbit_and_copysign_read_the_sign_bit(dtype):
    (x, tx) = both([-0.0, 0.0, -math.nan, math.nan, -2.0, math.inf], dtype)
    assert tensorplay.signbit(x).tolist() == torch.signbit(tx).tolist()
    assert_same(tensorplay.copysign(tensorplay.ones_like(x), x), torch.copysign(torch.ones_like(tx), tx))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_frexp_returns_mantissa_and_int32_exponent(dtype):
    x, tx = both(SPECIAL + [0.75, -3.0, 1024.0, 1e-5], dtype)
    result, expected = tensorplay.frexp(x), torch.frexp(tx)
    assert result._fields == ("mantissa", "exponent")
    assert_same(result.mantissa, expected.mantissa, rtol=0, atol=0)
    assert_same(result.exponent, expected.exponent, rtol=0, atol=0)
    assert_same(x.frexp()[0], expected[0], rtol=0, atol=0)


def test_frexp_out_and_errors():
    x, tx = both([3.0, -0.1])
    mantissa, exponent = tensorplay.empty(0, dtype=tensorplay.float64), tensorplay.empty(0, dtype=tensorplay.int32)
    result = tensorplay.frexp(x, out=(mantissa, exponent))
    assert result.mantissa is mantissa and result.exponent is exponent
    assert_same(exponent, torch.frexp(tx).exponent)
    with pytest.raises(RuntimeError, match="frexp"):
        tensorplay.frexp(tensorplay.tensor([1, 2]))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_shifts_past_the_width_match_torch(dtype):
    x, tx = both([5, -7, 1, -1, 100, 0], dtype) if dtype != "uint8" else both([5, 200, 1, 255, 100, 0], dtype)
    for shift in [0, 1, 6, 7, 8, 9, 15, 16, 31, 32, 63, 64, 100, -1]:
        assert_same(x << shift, tx << shift, rtol=0, atol=0)
        assert_same(x >> shift, tx >> shift, rtol=0, atol=0)
    assert_same(3 << x.abs().clamp(max=5), 3 << tx.abs().clamp(max=5), rtol=0, atol=0)
    assert_same(100 >> x.abs().clamp(max=5), 100 >> tx.abs().clamp(max=5), rtol=0, atol=0)


def test_shift_operators_in_place_and_errors():
    x, tx = both([1, 2, 3], "int8")
    y = x
    y <<= 2
    ty = tx
    ty <<= 2
    assert y is x
    assert_same(x, tx, rtol=0, atol=0)
    x >>= 1
    tx >>= 1
    assert_same(x, tx, rtol=0, atol=0)
    with pytest.raises(NotImplementedError, match="lshift_cpu"):
        tensorplay.tensor([1.5]) << 1
    with pytest.raises(NotImplementedError, match="rshift_cpu"):
        tensorplay.tensor([True]) >> tensorplay.tensor([True])


# ---------------------------------------------------------------------------------------------
# In-place forms.

INPLACE = [
    ("sinc_", (), "float64"), ("logit_", (), "float64"), ("erfc_", (), "float64"), ("lgamma_", (), "float64"),
    ("digamma_", (), "float64"), ("i0_", (), "float64"), ("deg2rad_", (), "float32"), ("rad2deg_", (), "float32"),
    ("frac_", (), "float32"), ("fix_", (), "float32"), ("sgn_", (), "int64"), ("acosh_", (), "float64"),
    ("asinh_", (), "float64"), ("atanh_", (), "float64"), ("arccos_", (), "float64"), ("arcsinh_", (), "float64"),
    ("mvlgamma_", (2,), "float64"), ("clamp_min_", (0.3,), "float32"), ("clamp_max_", (1,), "int64"),
    ("xlogy_", (2.5,), "float64"), ("fmod_", (0.3,), "float32"), ("copysign_", (-1,), "float32"),
]


@pytest.mark.parametrize("name, args, dtype", INPLACE, ids=[case[0] for case in INPLACE])
def test_inplace_returns_self_and_matches_torch(name, args, dtype):
    values = [0.2, 0.45, 0.9] if dtype.startswith("float") else [-2, 0, 3]
    if name == "acosh_":
        values = [1.0, 1.5, 7.0]
    if name == "mvlgamma_":
        values = [1.2, 3.0, 7.5]
    x, tx = both(values, dtype)
    assert getattr(x, name)(*args) is x
    assert_same(x, getattr(tx, name)(*args))


def test_inplace_of_a_float_result_refuses_an_integer_self():
    for name in ["sinc_", "lgamma_", "erfc_", "i0_", "deg2rad_"]:
        x, tx = both([1, 2], "int64")
        with pytest.raises(RuntimeError) as expected:
            getattr(tx, name)()
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            getattr(x, name)()
        assert "Long" in str(expected.value)


def test_inplace_binary_forms_with_tensors():
    for name, a, b in [("hypot_", [3.0, 5.0], [4.0, 12.0]), ("igamma_", [1.0, 2.0], [0.5, 3.0]),
                       ("igammac_", [1.0, 2.0], [0.5, 3.0]), ("nextafter_", [1.0, 2.0], [2.0, 0.0]),
                       ("ldexp_", [1.0, 2.0], [3.0, -1.0]), ("heaviside_", [0.0, -2.0], [0.5, 0.5])]:
        (x, tx), (y, ty) = both(a), both(b)
        assert getattr(x, name)(y) is x
        assert_same(x, getattr(tx, name)(ty), rtol=1e-12)
    (x, tx), (y, ty) = both([12, 18], "int32"), both([8, 27], "int32")
    assert_same(x.clone().gcd_(y), tx.clone().gcd_(ty))
    assert_same(x.clone().lcm_(y), tx.clone().lcm_(ty))


def test_inplace_is_differentiable():
    x = tensorplay.tensor([0.3, 0.6], dtype=tensorplay.float64, requires_grad=True)
    tx = torch.tensor([0.3, 0.6], dtype=torch.float64, requires_grad=True)
    (x * 1).lgamma_().sum().backward()
    (tx * 1).lgamma_().sum().backward()
    assert_same(x.grad, tx.grad, rtol=1e-10)


def test_float_power_inplace_needs_a_float64_self():
    x, tx = both([1.5, 2.0])
    assert x.float_power_(2) is x
    assert_same(x, tx.float_power_(2))
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but the operation's "
                                           "result requires dtype Double"):
        tensorplay.tensor([1.0]).float_power_(2)


def test_torch_level_inplace_functions():
    x, tx = both([0.25, 0.5])
    assert tensorplay.sinc_(x) is x
    assert_same(x, torch.sinc_(tx))
    assert_same(tensorplay.clamp_min_(x, 0.3), torch.clamp_min_(tx, 0.3))
    assert_same(tensorplay.arctan_(x), torch.arctan_(tx))


# ---------------------------------------------------------------------------------------------
# out=, keywords and argument errors.

def test_out_keeps_its_dtype_and_refuses_a_lower_category():
    x, tx = both([0.5, 1.5], "float32")
    out, t_out = tensorplay.empty(2, dtype=tensorplay.float64), torch.empty(2, dtype=torch.float64)
    assert tensorplay.lgamma(x, out=out) is out
    assert_same(out, torch.lgamma(tx, out=t_out))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tensorplay.erfc(x, out=tensorplay.empty(2, dtype=tensorplay.int64))
    out = tensorplay.empty(2, dtype=tensorplay.bool)
    assert tensorplay.isneginf(x, out=out) is out
    (a, ta), (b, tb) = both([2.0, -1.0]), both([3.0, 4.0])
    out = tensorplay.empty(0, dtype=tensorplay.float64)
    assert_same(tensorplay.hypot(a, b, out=out), torch.hypot(ta, tb))
    assert_same(out, torch.hypot(ta, tb))


def test_keyword_arguments():
    x, tx = both([-0.2, 0.5, 1.3])
    assert_same(tensorplay.logit(x, eps=0.05), torch.logit(tx, eps=0.05))
    assert_same(tensorplay.polygamma(n=2, input=x.abs()), torch.polygamma(n=2, input=tx.abs()))
    assert_same(tensorplay.mvlgamma(x + 2, p=3), torch.mvlgamma(tx + 2, p=3))
    assert_same(tensorplay.isclose(x, x + 0.01, rtol=0, atol=0.02), torch.isclose(tx, tx + 0.01, rtol=0, atol=0.02))
    assert_same(tensorplay.float_power(2, exponent=x), torch.float_power(2, exponent=tx))
    assert_same(tensorplay.xlogy(3, x.abs()), torch.xlogy(3, tx.abs()))


def test_allclose_returns_a_bool():
    x, tx = both([1.0, math.nan])
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}):
        result = tensorplay.allclose(x, x + 1e-9, **kwargs)
        assert type(result) is bool and result == torch.allclose(tx, tx + 1e-9, **kwargs)
    assert x.allclose(x, equal_nan=True) is True


def test_positive_is_the_input_itself():
    x = tensorplay.tensor([1, -2])
    assert tensorplay.positive(x) is x and x.positive() is x
    with pytest.raises(RuntimeError, match="bool tensor is not supported"):
        tensorplay.positive(tensorplay.tensor([True]))


def test_isreal_is_true_for_real_tensors():
    x, tx = both([1.0, math.nan, math.inf])
    assert tensorplay.isreal(x).tolist() == torch.isreal(tx).tolist()


@pytest.mark.parametrize("call, kind, message", [
    (lambda m: m.polygamma(-1, m.tensor([1.0])), RuntimeError, "does not support negative n"),
    (lambda m: m.polygamma(1.5, m.tensor([1.0])), TypeError, "polygamma"),
    (lambda m: m.mvlgamma(m.tensor([3.0]), 0), RuntimeError, "greater than or equal to 1"),
    (lambda m: m.frac(m.tensor([1, 2])), NotImplementedError, "frac_cpu"),
    (lambda m: m.hypot(m.tensor([1.0]), 2), TypeError, "hypot"),
    (lambda m: m.hypot(m.tensor([1, 2]), m.tensor([1, 2])), NotImplementedError, "hypot_cpu"),
    (lambda m: m.logaddexp(m.tensor([1]), m.tensor([1])), NotImplementedError, "logaddexp_cpu"),
    (lambda m: m.igamma(m.tensor([1]), m.tensor([1])), NotImplementedError, "igamma_cpu"),
    (lambda m: m.gcd(m.tensor([1.0]), m.tensor([1.0])), NotImplementedError, "gcd_cpu"),
    (lambda m: m.fmod(m.tensor([True]), m.tensor([True])), NotImplementedError, "fmod_cpu"),
    (lambda m: m.fmod(m.tensor([3]), 0), RuntimeError, "ZeroDivisionError"),
    (lambda m: m.float_power(2, 3), TypeError, "float_power"),
    (lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])), RuntimeError, "different dtypes"),
    (lambda m: m.isclose(m.tensor([1.0]), m.tensor([1])), RuntimeError, "Float did not match Long"),
    (lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.0]), rtol=-1), RuntimeError, "rtol must be greater"),
    (lambda m: m.nextafter(m.tensor([1]), m.tensor([2])), NotImplementedError, "nextafter_cpu"),
    (lambda m: m.ldexp(m.tensor([1.0]), 2), TypeError, "ldexp"),
])
def test_errors_match_torch(call, kind, message):
    with pytest.raises(kind):
        call(torch)
    with pytest.raises(kind, match=message):
        call(tensorplay)


def test_integer_and_bool_inputs_promote_as_in_torch():
    for name in ["sinc", "erfc", "lgamma", "digamma", "i0", "deg2rad", "acosh", "asinh", "atanh", "logit"]:
        for dtype in ["int64", "bool", "uint8"]:
            x, tx = both([1, 0, 1], dtype)
            assert_same(getattr(tensorplay, name)(x), getattr(torch, name)(tx), rtol=1e-6)
    (a, ta), (b, tb) = both([7, -7, 9], "int16"), both([3, 3, -4], "int16")
    assert_same(tensorplay.fmod(a, b), torch.fmod(ta, tb), rtol=0, atol=0)
    assert_same(tensorplay.fmod(a, 2.5), torch.fmod(ta, 2.5))
    assert_same(tensorplay.float_power(a, b), torch.float_power(ta, tb))
    assert_same(tensorplay.copysign(a, b), torch.copysign(ta, tb))
    assert_same(tensorplay.ldexp(a, b), torch.ldexp(ta, tb))


def test_sgn_and_copysign_sign_operand_have_zero_gradients():
    (x, tx), (y, ty) = both([-1.5, 0.5, 2.0]), both([-1.0, 1.0, -0.0])
    for t in (x, tx, y, ty):
        t.requires_grad_(True)
    (tensorplay.sgn(x) + tensorplay.copysign(x, y)).sum().backward()
    (torch.sgn(tx) + torch.copysign(tx, ty)).sum().backward()
    assert_same(x.grad, tx.grad)
    assert y.grad is not None and y.grad.tolist() == [0.0, 0.0, 0.0]

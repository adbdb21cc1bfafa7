"""Initialisation: the modules' default initial values and tensorplay.nn.init.

Random initialisations cannot match torch's bit for bit, so these check what the distributions must
satisfy: bounds (uniform schemes reach close to, never past, their bound), means and standard
deviations on large tensors (within a few standard errors), and exact values for the deterministic
schemes. The gains and fans are compared with torch.nn.init's.
"""

import inspect
import math
import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import to_numpy

init = tensorplay.nn.init


def assert_uniform(values, bound, what):
    """Values in [-bound, bound], reaching near both ends, with the uniform distribution's std."""
    values = np.asarray(values, dtype=np.float64).ravel()
    assert values.max() <= bound * (1 + 1e-6) and values.min() >= -bound * (1 + 1e-6), (
        f"{what}: range [{values.min()}, {values.max()}] exceeds the bound {bound}")
    # Each end is approached within a fraction `reach` of the width: the chance of missing it is
    # about exp(-10) for small tensors, far less for large ones.
    reach = min(1.0, max(0.05, 20 / values.size))
    assert values.max() > (1 - reach) * bound and values.min() < -(1 - reach) * bound, (
        f"{what}: range [{values.min()}, {values.max()}] does not fill [-{bound}, {bound}]")
    # The sample std's relative standard error for a uniform distribution is sqrt(0.2 / n).
    rtol = max(0.05, 5 * math.sqrt(0.2 / values.size))
    np.testing.assert_allclose(values.std(), bound / math.sqrt(3), rtol=rtol, err_msg=f"{what}: std")
    assert abs(values.mean()) < 4 * bound / math.sqrt(3 * values.size), f"{what}: mean {values.mean()}"


def assert_normal(values, mean, std, what):
    values = np.asarray(values, dtype=np.float64).ravel()
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(values.size), f"{what}: mean {values.mean()} != {mean}"
    np.testing.assert_allclose(values.std(), std, rtol=0.05, err_msg=f"{what}: std")
    # A normal sample spreads past 2 std; a uniform one with this std does not.
    assert np.abs(values - mean).max() > 2.5 * std, f"{what}: no values in the tails - not normal"


# ---------------------------------------------------------------------------------------------
# Modules' default initialisation


def test_linear_default_init():
    tensorplay.manual_seed(0)
    layer = tensorplay.nn.Linear(256, 512)
    bound = 1 / math.sqrt(256)
    assert_uniform(to_numpy(layer.weight), bound, "Linear.weight")
    assert_uniform(to_numpy(layer.bias), bound, "Linear.bias")


def test_conv2d_default_init():
    tensorplay.manual_seed(0)
    conv = tensorplay.nn.Conv2d(16, 64, 3)
    bound = 1 / math.sqrt(16 * 9)
    assert_uniform(to_numpy(conv.weight), bound, "Conv2d.weight")
    assert_uniform(to_numpy(conv.bias), bound, "Conv2d.bias")


def test_conv1d_grouped_default_init_uses_fan_in_per_group():
    tensorplay.manual_seed(0)
    conv = tensorplay.nn.Conv1d(32, 64, 5, groups=4)
    bound = 1 / math.sqrt(8 * 5)
    assert_uniform(to_numpy(conv.weight), bound, "Conv1d.weight")


def test_conv_transpose2d_default_init():
    """The weight is (in, out/groups, kH, kW), so fan_in is out/groups * kH * kW, as in torch."""
    tensorplay.manual_seed(0)
    conv = tensorplay.nn.ConvTranspose2d(32, 24, 3)
    bound = 1 / math.sqrt(24 * 9)
    assert_uniform(to_numpy(conv.weight), bound, "ConvTranspose2d.weight")
    assert_uniform(to_numpy(conv.bias), bound, "ConvTranspose2d.bias")


def test_bilinear_default_init():
    tensorplay.manual_seed(0)
    layer = tensorplay.nn.Bilinear(64, 16, 32)
    bound = 1 / math.sqrt(64)
    assert_uniform(to_numpy(layer.weight), bound, "Bilinear.weight")


@pytest.mark.parametrize("make", [
    pytest.param(lambda nn: nn.BatchNorm1d(7), id="BatchNorm1d"),
    pytest.param(lambda nn: nn.BatchNorm2d(7), id="BatchNorm2d"),
    pytest.param(lambda nn: nn.LayerNorm((2, 7)), id="LayerNorm"),
    pytest.param(lambda nn: nn.GroupNorm(7, 7), id="GroupNorm"),
])
def test_normalisation_default_init_is_exactly_torchs(make):
    """weight ones, bias zeros, running_mean zeros, running_var ones, num_batches_tracked 0 (int64)."""
    t, p = make(torch.nn), make(tensorplay.nn)
    t_state, p_state = t.state_dict(), p.state_dict()
    assert list(p_state) == list(t_state)
    for name, value in t_state.items():
        assert str(p_state[name].dtype).split(".")[-1] == str(value.dtype).split(".")[-1], name
        np.testing.assert_array_equal(to_numpy(p_state[name]), value.numpy(), err_msg=name)


def test_embedding_default_init_is_standard_normal():
    tensorplay.manual_seed(0)
    emb = tensorplay.nn.Embedding(1000, 64)
    assert_normal(to_numpy(emb.weight), 0.0, 1.0, "Embedding.weight")


def test_multihead_attention_default_init():
    """in_proj_weight xavier_uniform over its (3E, E) shape; in_proj_bias and out_proj.bias zero."""
    tensorplay.manual_seed(0)
    E = 64
    mha = tensorplay.nn.MultiheadAttention(E, 4)
    assert_uniform(to_numpy(mha.in_proj_weight), math.sqrt(6 / (E + 3 * E)), "in_proj_weight")
    np.testing.assert_array_equal(to_numpy(mha.in_proj_bias), 0.0)
    np.testing.assert_array_equal(to_numpy(mha.out_proj.bias), 0.0)
    assert_uniform(to_numpy(mha.out_proj.weight), 1 / math.sqrt(E), "out_proj.weight")


def test_default_init_follows_manual_seed():
    tensorplay.manual_seed(3)
    a = to_numpy(tensorplay.nn.Linear(8, 8).weight)
    tensorplay.manual_seed(3)
    b = to_numpy(tensorplay.nn.Linear(8, 8).weight)
    c = to_numpy(tensorplay.nn.Linear(8, 8).weight)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


# ---------------------------------------------------------------------------------------------
# tensorplay.nn.init


@pytest.mark.parametrize("nonlinearity, param", [
    ("linear", None), ("conv2d", None), ("conv_transpose2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None),
], ids=lambda v: str(v))
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param))


def test_calculate_gain_unknown_raises_like_torch():
    with pytest.raises(ValueError):
        torch.nn.init.calculate_gain("softsign_typo")
    with pytest.raises(ValueError):
        init.calculate_gain("softsign_typo")


@pytest.mark.parametrize("shape", [(5, 3), (6, 4, 3, 2), (2, 7, 5)], ids=str)
def test_fan_in_and_fan_out_match_torch(shape):
    want = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(tensorplay.empty(*shape)) == want


INPLACE_INITS = {
    "uniform_": lambda t: init.uniform_(t), "normal_": lambda t: init.normal_(t),
    "xavier_uniform_": lambda t: init.xavier_uniform_(t), "xavier_normal_": lambda t: init.xavier_normal_(t),
    "kaiming_uniform_": lambda t: init.kaiming_uniform_(t), "kaiming_normal_": lambda t: init.kaiming_normal_(t),
    "trunc_normal_": lambda t: init.trunc_normal_(t), "orthogonal_": lambda t: init.orthogonal_(t),
    "constant_": lambda t: init.constant_(t, 0.3), "ones_": lambda t: init.ones_(t), "zeros_": lambda t: init.zeros_(t),
    "eye_": lambda t: init.eye_(t),
}


@pytest.mark.parametrize("name", list(INPLACE_INITS))
def test_init_fills_in_place_returns_the_tensor_and_records_no_graph(name):
    w = tensorplay.nn.Parameter(tensorplay.full((20, 30), 7.0))
    out = INPLACE_INITS[name](w)
    assert out is w
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert not (to_numpy(w) == 7.0).any(), "the tensor was not filled"


def test_uniform_range_and_moments():
    t = init.uniform_(tensorplay.empty(200, 200), -3.0, 5.0)
    v = to_numpy(t)
    assert v.min() >= -3.0 and v.max() <= 5.0 and v.min() < -2.9 and v.max() > 4.9
    np.testing.assert_allclose(v.mean(), 1.0, atol=0.05)
    np.testing.assert_allclose(v.std(), 8 / math.sqrt(12), rtol=0.02)


def test_normal_moments():
    assert_normal(to_numpy(init.normal_(tensorplay.empty(200, 200), 2.0, 0.5)), 2.0, 0.5, "normal_")


def test_constant_ones_zeros_eye():
    np.testing.assert_array_equal(to_numpy(init.constant_(tensorplay.empty(3, 4), 2.5)), np.full((3, 4), 2.5))
    np.testing.assert_array_equal(to_numpy(init.ones_(tensorplay.empty(3, 4))), np.ones((3, 4)))
    np.testing.assert_array_equal(to_numpy(init.zeros_(tensorplay.ones(3, 4))), np.zeros((3, 4)))
    np.testing.assert_array_equal(to_numpy(init.eye_(tensorplay.empty(3, 5))), np.eye(3, 5))


@pytest.mark.parametrize("shape, gain", [((300, 200), 1.0), ((64, 32, 3, 3), 2.0)], ids=["2d", "4d_gain2"])
def test_xavier_uniform_bound(shape, gain):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    assert_uniform(to_numpy(init.xavier_uniform_(tensorplay.empty(*shape), gain=gain)), bound, "xavier_uniform_")


@pytest.mark.parametrize("shape, gain", [((300, 200), 1.0), ((64, 32, 3, 3), 0.5)], ids=["2d", "4d_gain0.5"])
def test_xavier_normal_std(shape, gain):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    assert_normal(to_numpy(init.xavier_normal_(tensorplay.empty(*shape), gain=gain)), 0.0, std, "xavier_normal_")


KAIMING = [
    pytest.param({}, id="default_leaky_relu_a0"),
    pytest.param({"a": math.sqrt(5)}, id="a_sqrt5"),
    pytest.param({"mode": "fan_out"}, id="fan_out"),
    pytest.param({"nonlinearity": "relu"}, id="relu"),
    pytest.param({"nonlinearity": "tanh", "mode": "fan_out"}, id="tanh_fan_out"),
]


def _kaiming_std(shape, kwargs):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    fan = fan_out if kwargs.get("mode") == "fan_out" else fan_in
    gain = torch.nn.init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"), kwargs.get("a", 0))
    return gain / math.sqrt(fan)


@pytest.mark.parametrize("kwargs", KAIMING)
def test_kaiming_uniform_bound(kwargs):
    shape = (128, 64, 3, 3)
    bound = math.sqrt(3.0) * _kaiming_std(shape, kwargs)
    assert_uniform(to_numpy(init.kaiming_uniform_(tensorplay.empty(*shape), **kwargs)), bound, "kaiming_uniform_")


@pytest.mark.parametrize("kwargs", KAIMING)
def test_kaiming_normal_std(kwargs):
    shape = (128, 64, 3, 3)
    std = _kaiming_std(shape, kwargs)
    assert_normal(to_numpy(init.kaiming_normal_(tensorplay.empty(*shape), **kwargs)), 0.0, std, "kaiming_normal_")


def test_kaiming_invalid_mode_raises_like_torch():
    with pytest.raises(ValueError):
        torch.nn.init.kaiming_uniform_(torch.empty(3, 3), mode="fan_avg")
    with pytest.raises(ValueError):
        init.kaiming_uniform_(tensorplay.empty(3, 3), mode="fan_avg")


@pytest.mark.parametrize("fn", ["xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"])
def test_fan_based_init_on_1d_tensor_raises_like_torch(fn):
    with pytest.raises(ValueError):
        getattr(torch.nn.init, fn)(torch.empty(5))
    with pytest.raises(ValueError):
        getattr(init, fn)(tensorplay.empty(5))


def _truncated_normal_moments(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean, std, a, b", [
    pytest.param(0.0, 1.0, -2.0, 2.0, id="default"),
    pytest.param(0.0, 0.02, -0.04, 0.04, id="std0.02_2sigma"),
    pytest.param(1.0, 0.5, 0.0, 1.5, id="asymmetric"),
    pytest.param(0.0, 1.0, -0.5, 3.0, id="narrow_left"),
])
def test_trunc_normal_range_and_moments(mean, std, a, b):
    v = to_numpy(init.trunc_normal_(tensorplay.empty(300, 300), mean=mean, std=std, a=a, b=b)).astype(np.float64)
    assert np.isfinite(v).all()
    assert v.min() >= a and v.max() <= b, f"range [{v.min()}, {v.max()}] outside [{a}, {b}]"
    want_mean, want_std = _truncated_normal_moments(mean, std, a, b)
    np.testing.assert_allclose(v.mean(), want_mean, atol=5 * want_std / 300)
    np.testing.assert_allclose(v.std(), want_std, rtol=0.02)
    # Both ends of the interval are reached (it is a truncated normal, not a clipped narrower one).
    assert v.min() < a + 0.05 * (b - a) and v.max() > b - 0.05 * (b - a)


@pytest.mark.parametrize("shape, gain", [
    pytest.param((40, 40), 1.0, id="square"),
    pytest.param((60, 20), 1.0, id="tall"),
    pytest.param((20, 60), 1.0, id="wide"),
    pytest.param((16, 4, 3, 3), 2.0, id="conv_weight_gain2"),
])
def test_orthogonal_is_orthogonal(shape, gain):
    w = to_numpy(init.orthogonal_(tensorplay.empty(*shape), gain=gain)).reshape(shape[0], -1).astype(np.float64)
    rows, cols = w.shape
    gram = w.T @ w if rows >= cols else w @ w.T
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_is_random():
    a = to_numpy(init.orthogonal_(tensorplay.empty(10, 10)))
    b = to_numpy(init.orthogonal_(tensorplay.empty(10, 10)))
    assert not np.allclose(a, b)


def test_orthogonal_on_1d_raises_like_torch():
    with pytest.raises(ValueError):
        torch.nn.init.orthogonal_(torch.empty(5))
    with pytest.raises(ValueError):
        init.orthogonal_(tensorplay.empty(5))


def test_init_with_generator_is_reproducible():
    g1, g2 = tensorplay.Generator(), tensorplay.Generator()
    g1.manual_seed(7)
    g2.manual_seed(7)
    a = to_numpy(init.kaiming_uniform_(tensorplay.empty(10, 10), generator=g1))
    b = to_numpy(init.kaiming_uniform_(tensorplay.empty(10, 10), generator=g2))
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# Names, signatures and the deprecated aliases


def _parameters(fn):
    return [(p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()]


def test_public_names_and_signatures_match_torch():
    assert init.__all__ == torch.nn.init.__all__
    for name in torch.nn.init.__all__:
        assert _parameters(getattr(init, name)) == _parameters(getattr(torch.nn.init, name)), name
        assert getattr(init, name).__name__ == getattr(torch.nn.init, name).__name__, name


DEPRECATED = {
    "uniform": lambda m, lib: m.uniform(lib.empty(4, 5), -1.0, b=1.0),
    "normal": lambda m, lib: m.normal(lib.empty(4, 5), std=2.0),
    "constant": lambda m, lib: m.constant(lib.empty(4, 5), 0.5),
    "eye": lambda m, lib: m.eye(lib.empty(4, 5)),
    "dirac": lambda m, lib: m.dirac(lib.empty(4, 4, 3)),
    "xavier_uniform": lambda m, lib: m.xavier_uniform(lib.empty(4, 5), gain=2.0),
    "xavier_normal": lambda m, lib: m.xavier_normal(lib.empty(4, 5)),
    "kaiming_uniform": lambda m, lib: m.kaiming_uniform(lib.empty(4, 5), mode="fan_out"),
    "kaiming_normal": lambda m, lib: m.kaiming_normal(lib.empty(4, 5), nonlinearity="relu"),
    "orthogonal": lambda m, lib: m.orthogonal(lib.empty(4, 5)),
    "sparse": lambda m, lib: m.sparse(lib.empty(4, 5), 0.5),
}


@pytest.mark.parametrize("name", list(DEPRECATED))
def test_deprecated_alias_warns_like_torch_and_fills_the_tensor(name):
    messages = []
    for m, lib in ((torch.nn.init, torch), (init, tensorplay)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = DEPRECATED[name](m, lib)
        assert [w.category for w in caught] == [FutureWarning], [str(w.message) for w in caught]
        assert caught[0].filename == __file__, "the warning should point at the caller"
        messages.append(str(caught[0].message))
        assert tuple(out.shape) in {(4, 5), (4, 4, 3)} and np.isfinite(to_numpy(out)).all()
    assert messages[1] == messages[0] == f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`."


def test_deprecated_deterministic_aliases_give_torchs_values():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        np.testing.assert_array_equal(to_numpy(init.eye(tensorplay.empty(3, 5))),
                                      torch.nn.init.eye(torch.empty(3, 5)).numpy())
        np.testing.assert_array_equal(to_numpy(init.dirac(tensorplay.empty(4, 2, 3, 3), 2)),
                                      torch.nn.init.dirac(torch.empty(4, 2, 3, 3), 2).numpy())
        np.testing.assert_array_equal(to_numpy(init.constant(tensorplay.empty(2, 3), -1.5)), np.full((2, 3), -1.5))


# ---------------------------------------------------------------------------------------------
# Deterministic initialisers: exactly torch's values, any dtype

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (1, 6), (0, 3)], ids=str)
def test_eye_matches_torch(shape, dtype):
    got = init.eye_(tensorplay.full(shape, 7, dtype=getattr(tensorplay, dtype)))
    want = torch.nn.init.eye_(torch.full(shape, 7, dtype=getattr(torch, dtype)))
    assert str(got.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(to_numpy(got), to_numpy(want))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fill", [
    pytest.param(lambda m, t: m.constant_(t, 2.75), id="constant_2.75"),
    pytest.param(lambda m, t: m.constant_(t, -3), id="constant_-3"),
    pytest.param(lambda m, t: m.ones_(t), id="ones_"),
    pytest.param(lambda m, t: m.zeros_(t), id="zeros_"),
])
def test_constant_ones_zeros_match_torch(fill, dtype):
    got = fill(init, tensorplay.full((3, 4), 7, dtype=getattr(tensorplay, dtype)))
    want = fill(torch.nn.init, torch.full((3, 4), 7, dtype=getattr(torch, dtype)))
    assert str(got.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(to_numpy(got), to_numpy(want))


@pytest.mark.parametrize("shape, groups", [
    pytest.param((4, 4, 3), 1, id="3d"),
    pytest.param((6, 4, 3, 3), 1, id="4d_more_out_than_in"),
    pytest.param((3, 5, 3, 3), 1, id="4d_more_in_than_out"),
    pytest.param((6, 2, 4, 5), 3, id="4d_groups3_even_kernel"),
    pytest.param((8, 3, 3, 3), 2, id="4d_groups2_more_in_than_out_per_group"),
    pytest.param((4, 4, 3, 3, 3), 2, id="5d_groups2"),
    pytest.param((2, 2, 1, 1, 1), 1, id="5d_1x1x1"),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_dirac_matches_torch(shape, groups, dtype):
    got = init.dirac_(tensorplay.full(shape, 7, dtype=getattr(tensorplay, dtype)), groups)
    want = torch.nn.init.dirac_(torch.full(shape, 7, dtype=getattr(torch, dtype)), groups)
    assert got.dtype == getattr(tensorplay, dtype)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(want))


def test_dirac_is_the_identity_of_a_convolution():
    x = tensorplay.randn(2, 3, 6, 6)
    conv = tensorplay.nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    np.testing.assert_allclose(to_numpy(conv(x)), to_numpy(x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call", [
    pytest.param(lambda m, lib: m.dirac_(lib.empty(3, 3)), id="2d"),
    pytest.param(lambda m, lib: m.dirac_(lib.empty(2, 2, 2, 2, 2, 2)), id="6d"),
    pytest.param(lambda m, lib: m.dirac_(lib.empty(5, 2, 3), groups=2), id="groups_do_not_divide"),
    pytest.param(lambda m, lib: m.dirac_(lib.empty(4, 2, 3), groups=0), id="groups0"),
    pytest.param(lambda m, lib: m.eye_(lib.empty(2, 2, 2)), id="eye_3d"),
    pytest.param(lambda m, lib: m.eye_(lib.empty(4)), id="eye_1d"),
    pytest.param(lambda m, lib: m.sparse_(lib.empty(4), 0.5), id="sparse_1d"),
    pytest.param(lambda m, lib: m.sparse_(lib.empty(4, 2, 2), 0.5), id="sparse_3d"),
    pytest.param(lambda m, lib: m.orthogonal_(lib.empty(4)), id="orthogonal_1d"),
    pytest.param(lambda m, lib: m.kaiming_normal_(lib.empty(3, 3), mode="fan_avg"), id="kaiming_bad_mode"),
    pytest.param(lambda m, lib: m.kaiming_uniform_(lib.empty(3, 3), a="x"), id="kaiming_bad_slope"),
    pytest.param(lambda m, lib: m.kaiming_uniform_(lib.empty(3, 3), a=True), id="kaiming_bool_slope"),
    pytest.param(lambda m, lib: m.kaiming_uniform_(lib.empty(3, 3), nonlinearity="gelu"), id="kaiming_unknown"),
    pytest.param(lambda m, lib: m.xavier_uniform_(lib.empty(0, 0)), id="xavier_zero_fans"),
    pytest.param(lambda m, lib: m.xavier_normal_(lib.empty(3)), id="xavier_1d"),
    pytest.param(lambda m, lib: m.trunc_normal_(lib.empty(3), std=0.0), id="trunc_normal_std0"),
    pytest.param(lambda m, lib: m.uniform_(lib.empty(3), 1.0, 0.0), id="uniform_a_above_b"),
    pytest.param(lambda m, lib: m.normal_(lib.empty(3), 0.0, -1.0), id="normal_negative_std"),
])
def test_bad_input_raises_like_torch(call):
    with pytest.raises(Exception) as want:
        call(torch.nn.init, torch)
    with pytest.raises(want.type) as got:
        call(init, tensorplay)
    if want.type is ValueError:
        assert str(got.value) == str(want.value)


# ---------------------------------------------------------------------------------------------
# sparse_, trunc_normal_ and the rest: distributions, dtypes, warnings


@pytest.mark.parametrize("rows, cols, sparsity", [(10, 200, 0.3), (7, 300, 0.5), (20, 50, 0.0), (6, 20, 1.0),
                                                  (9, 100, 0.01)])
def test_sparse_zeros_ceil_sparsity_rows_per_column(rows, cols, sparsity):
    v = to_numpy(init.sparse_(tensorplay.full((rows, cols), 7.0), sparsity, std=0.5))
    zeros = (v == 0).sum(axis=0)
    np.testing.assert_array_equal(zeros, np.full(cols, math.ceil(sparsity * rows)))
    nonzero = v[v != 0]
    if nonzero.size > 1000:
        assert_normal(nonzero, 0.0, 0.5, "sparse_ non-zeros")
    # The zeroed rows differ from column to column.
    if 0 < sparsity < 1:
        assert len({tuple(np.flatnonzero(v[:, c] == 0)) for c in range(cols)}) > 1


def test_sparse_default_std_and_dtype():
    v = init.sparse_(tensorplay.empty(100, 100, dtype=tensorplay.float64), 0.1)
    assert v.dtype == tensorplay.float64
    assert_normal(to_numpy(v)[to_numpy(v) != 0], 0.0, 0.01, "sparse_ default std")


@pytest.mark.parametrize("mean, std, a, b", [
    pytest.param(0.0, 1.0, 5.0, 6.0, id="right_tail"),
    pytest.param(0.0, 1.0, -11.0, -10.0, id="far_left_tail"),
    pytest.param(0.0, 1.0, 1.5, 1.6, id="thin_slice"),
    pytest.param(3.0, 0.5, -1.0, 1.0, id="mean_right_of_interval"),
])
def test_trunc_normal_outside_the_bulk(mean, std, a, b):
    """Intervals holding little of the normal's mass still get the truncated normal's moments."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        v = to_numpy(init.trunc_normal_(tensorplay.empty(100, 100), mean=mean, std=std, a=a, b=b)).astype(np.float64)
    assert np.isfinite(v).all() and v.min() >= a and v.max() <= b
    # Far in a tail the closed form's normaliser underflows, so integrate the density on a grid.
    x = np.linspace(a, b, 200001)
    z = (x - mean) / std
    density = np.exp(-0.5 * (z * z - (z * z).min()))
    want_mean = (density * x).sum() / density.sum()
    want_std = math.sqrt((density * (x - want_mean) ** 2).sum() / density.sum())
    np.testing.assert_allclose(v.mean(), want_mean, atol=5 * want_std / 100)
    np.testing.assert_allclose(v.std(), want_std, rtol=0.04)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_trunc_normal_keeps_dtype_and_bounds(dtype):
    """Bounds are rounded to the dtype first, as in torch, so a rounded-up bound may be reached."""
    b_rounded = float(torch.tensor(0.04, dtype=getattr(torch, dtype)).float())
    v = init.trunc_normal_(tensorplay.empty(100, 100, dtype=getattr(tensorplay, dtype)), std=0.02, a=-0.04, b=0.04)
    assert v.dtype == getattr(tensorplay, dtype)
    values = to_numpy(v)
    assert values.min() >= -b_rounded and values.max() <= b_rounded
    np.testing.assert_allclose(values.std(), _truncated_normal_moments(0.0, 0.02, -0.04, 0.04)[1], rtol=0.05)


@pytest.mark.parametrize("mean, warns", [(0.0, False), (4.5, True), (-4.01, True), (3.9, False)])
def test_trunc_normal_warns_like_torch_when_mean_is_far_from_the_interval(mean, warns):
    for m, lib in ((torch.nn.init, torch), (init, tensorplay)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.trunc_normal_(lib.empty(10), mean=mean, std=1.0, a=-2.0, b=2.0)
        got = [(w.category, str(w.message)) for w in caught]
        if warns:
            assert got == [(UserWarning, "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                                         "The distribution of values may be incorrect.")], lib.__name__
        else:
            assert got == [], lib.__name__


def test_trunc_normal_with_generator_is_reproducible():
    values = []
    for _ in range(2):
        g = tensorplay.Generator()
        g.manual_seed(11)
        values.append(to_numpy(init.trunc_normal_(tensorplay.empty(50, 50), a=1.0, b=3.0, generator=g)))
    np.testing.assert_array_equal(values[0], values[1])


@pytest.mark.parametrize("fn", ["kaiming_uniform_", "kaiming_normal_"])
def test_kaiming_on_zero_element_tensor_warns_like_torch(fn):
    for m, lib in ((torch.nn.init, torch), (init, tensorplay)):
        t = lib.empty(0, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(m, fn)(t) is t
        assert [(w.category, str(w.message)) for w in caught] == [
            (UserWarning, "Initializing zero-element tensors is a no-op")]
        assert caught[0].filename == __file__, f"{lib.__name__}: the warning should point at the caller"


def test_kaiming_bad_mode_message_matches_torch():
    with pytest.raises(ValueError) as want:
        torch.nn.init.kaiming_uniform_(torch.empty(3, 3), mode="Fan_Avg")
    with pytest.raises(ValueError) as got:
        init.kaiming_uniform_(tensorplay.empty(3, 3), mode="Fan_Avg")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("fn", ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                                "kaiming_normal_", "trunc_normal_", "orthogonal_"])
@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_random_inits_keep_the_dtype(fn, dtype):
    t = tensorplay.zeros(16, 8, dtype=getattr(tensorplay, dtype))
    out = getattr(init, fn)(t)
    assert out is t and out.dtype == getattr(tensorplay, dtype)
    assert np.isfinite(to_numpy(out)).all() and (to_numpy(out) != 0).any()


@pytest.mark.parametrize("fn", ["trunc_normal_", "orthogonal_", "dirac_", "sparse_", "uniform_", "eye_"])
def test_meta_tensors_are_left_alone(fn):
    shape = (4, 4, 3) if fn == "dirac_" else (4, 6)
    t = tensorplay.empty(*shape, device="meta")
    args = (0.5,) if fn == "sparse_" else ()
    out = getattr(init, fn)(t, *args)
    assert out is t and out.is_meta and tuple(out.shape) == shape


def test_dirac_and_sparse_fill_parameters_without_recording_a_graph():
    for w, fill in ((tensorplay.nn.Parameter(tensorplay.full((4, 4, 3, 3), 7.0)), init.dirac_),
                    (tensorplay.nn.Parameter(tensorplay.full((20, 30), 7.0)), lambda t: init.sparse_(t, 0.2))):
        assert fill(w) is w
        assert w.is_leaf and w.requires_grad and w.grad_fn is None
        assert not (to_numpy(w) == 7.0).any()

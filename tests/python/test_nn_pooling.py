"""The pooling modules of tensorplay.nn against torch.nn, and what the op table (op_table_pooling.py)
cannot check of nn.functional's pooling: gradients through ties, fractional pooling with windows
drawn at random, the max_pool / max_unpool round trip, reprs and constructor checks.

Each module is built from one factory in both libraries (`make(torch.nn)`, `make(tensorplay.nn)`);
outputs (indices too), input gradients and parameter gradients must agree (compare_module).
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_functional, compare_module, same_outcome, tp_tensor


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def whole(*shape, seed=0):
    """Whole numbers in [-1, 1]: most windows hold several maxima."""
    return np.random.default_rng(seed).integers(-1, 2, shape).astype(np.float32)


def case(id, make, *args, dtype=None):
    return pytest.param(make, list(args), dtype, id=id)


X1 = randn(2, 3, 11, seed=1)
X2 = randn(2, 3, 9, 8, seed=2)
X3 = randn(2, 2, 5, 6, 7, seed=3)
FRACTIONAL_SAMPLES_2D = np.random.default_rng(4).uniform(0, 1, (2, 3, 2)).astype(np.float32)
FRACTIONAL_SAMPLES_3D = np.random.default_rng(5).uniform(0, 1, (2, 2, 3)).astype(np.float32)


def fractional(cls, samples, **kwargs):
    """A fractional max pool whose windows are fixed by the given samples."""
    return lambda nn: getattr(nn, cls)(_random_samples=(torch.tensor if nn is torch.nn else tp_tensor)(samples),
                                       **kwargs)


MODULE_CASES = [
    case("MaxPool1d-k3_s2_p1", lambda nn: nn.MaxPool1d(3, 2, 1), X1),
    case("MaxPool1d-dilation_ceil_indices", lambda nn: nn.MaxPool1d(2, 2, 1, 2, return_indices=True, ceil_mode=True),
         X1),
    case("MaxPool1d-unbatched", lambda nn: nn.MaxPool1d(2), X1[0]),
    case("MaxPool3d-k2", lambda nn: nn.MaxPool3d(2), X3),
    case("MaxPool3d-k3_s2_p1_ceil_indices", lambda nn: nn.MaxPool3d(3, 2, 1, ceil_mode=True, return_indices=True), X3),
    case("MaxPool3d-rect_dilation", lambda nn: nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 2)), X3),
    case("MaxPool3d-ties", lambda nn: nn.MaxPool3d(2, 1, return_indices=True), whole(1, 2, 4, 4, 5)),
    case("MaxPool3d-unbatched_float64", lambda nn: nn.MaxPool3d(2, return_indices=True), X3[0], dtype=torch.float64),
    case("AvgPool1d-k3_s2_p1_ceil", lambda nn: nn.AvgPool1d(3, 2, 1, ceil_mode=True), X1),
    case("AvgPool1d-exclude_pad", lambda nn: nn.AvgPool1d(3, 2, 1, count_include_pad=False), X1),
    case("AvgPool3d-k2", lambda nn: nn.AvgPool3d(2), X3),
    case("AvgPool3d-k3_s2_p1_ceil", lambda nn: nn.AvgPool3d(3, 2, 1, ceil_mode=True), X3),
    case("AvgPool3d-exclude_pad_ceil", lambda nn: nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False), X3),
    case("AvgPool3d-divisor_override", lambda nn: nn.AvgPool3d((2, 3, 2), (1, 2, 3), divisor_override=5), X3),
    case("AvgPool3d-unbatched_float64", lambda nn: nn.AvgPool3d(2, 1, 1), X3[0], dtype=torch.float64),
    case("LPPool1d-p2", lambda nn: nn.LPPool1d(2, 3, 2), X1),
    case("LPPool2d-p3_ceil", lambda nn: nn.LPPool2d(3, (3, 2), ceil_mode=True), X2),
    case("LPPool2d-p1.5", lambda nn: nn.LPPool2d(1.5, 2), np.abs(X2) + 0.1),
    case("LPPool3d-p2", lambda nn: nn.LPPool3d(2, 2), X3),
    case("LPPool3d-pinf", lambda nn: nn.LPPool3d(float("inf"), 2, 1), X3),
    case("AdaptiveAvgPool1d-uneven", lambda nn: nn.AdaptiveAvgPool1d(4), X1),
    case("AdaptiveAvgPool3d-uneven", lambda nn: nn.AdaptiveAvgPool3d((2, 4, 3)), X3),
    case("AdaptiveAvgPool3d-None_upsample", lambda nn: nn.AdaptiveAvgPool3d((None, 8, 9)), X3),
    case("AdaptiveAvgPool3d-unbatched_float64", lambda nn: nn.AdaptiveAvgPool3d(3), X3[0], dtype=torch.float64),
    case("AdaptiveMaxPool1d-indices", lambda nn: nn.AdaptiveMaxPool1d(4, return_indices=True), X1),
    case("AdaptiveMaxPool2d-uneven", lambda nn: nn.AdaptiveMaxPool2d((4, 3)), X2),
    case("AdaptiveMaxPool2d-None_indices", lambda nn: nn.AdaptiveMaxPool2d((None, 3), return_indices=True), X2),
    case("AdaptiveMaxPool2d-ties", lambda nn: nn.AdaptiveMaxPool2d(3, return_indices=True), whole(2, 3, 7, 8)),
    case("AdaptiveMaxPool3d-uneven_indices", lambda nn: nn.AdaptiveMaxPool3d((2, 4, 3), return_indices=True), X3),
    case("AdaptiveMaxPool3d-upsample_float64", lambda nn: nn.AdaptiveMaxPool3d((6, 7, 9)), X3, dtype=torch.float64),
    case("FractionalMaxPool2d-output_size",
         fractional("FractionalMaxPool2d", FRACTIONAL_SAMPLES_2D, kernel_size=2, output_size=(4, 3)), X2[:, :3]),
    case("FractionalMaxPool2d-ratio_indices",
         fractional("FractionalMaxPool2d", FRACTIONAL_SAMPLES_2D, kernel_size=(3, 2), output_ratio=0.5,
                    return_indices=True), X2[:, :3]),
    case("FractionalMaxPool2d-ties",
         fractional("FractionalMaxPool2d", FRACTIONAL_SAMPLES_2D, kernel_size=3, output_size=4, return_indices=True),
         whole(2, 3, 9, 9)),
    case("FractionalMaxPool3d-output_size",
         fractional("FractionalMaxPool3d", FRACTIONAL_SAMPLES_3D, kernel_size=2, output_size=(3, 4, 5)), X3),
    case("FractionalMaxPool3d-ratio_indices",
         fractional("FractionalMaxPool3d", FRACTIONAL_SAMPLES_3D, kernel_size=(2, 3, 2), output_ratio=(0.5, 0.5, 0.6),
                    return_indices=True), X3),
    case("MaxUnpool1d", lambda nn: nn.MaxUnpool1d(2), randn(2, 3, 5), np.array([[[0, 3, 4, 6, 9]] * 3] * 2)),
]


@pytest.mark.parametrize("make,args,dtype", MODULE_CASES)
def test_module_matches_torch(make, args, dtype):
    rtol, atol = (1e-5, 1e-6) if dtype is None else (1e-10, 1e-12)
    compare_module(make, args, dtype=dtype, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# max_pool and max_unpool, round trip: the indices that one gives are the ones the other reads.

@pytest.mark.parametrize("n,shape,kernel,stride", [
    (1, (2, 3, 10), 2, None), (2, (2, 3, 8, 6), 2, None), (2, (3, 9, 9), 3, 3), (3, (2, 2, 4, 6, 8), 2, None),
    (3, (2, 6, 6, 4), (3, 2, 2), None),
])
@pytest.mark.parametrize("output_size", [False, True], ids=["default_size", "output_size"])
def test_max_unpool_inverts_max_pool(n, shape, kernel, stride, output_size):
    def run(m, x):
        pool = getattr(m.nn, f"MaxPool{n}d")(kernel, stride, return_indices=True)
        unpool = getattr(m.nn, f"MaxUnpool{n}d")(kernel, stride)
        values, indices = pool(x)
        # The input's own size (with N and C where batched): one more than the default along odd dims.
        size = list(x.shape) if x.dim() == n + 2 else list(x.shape[-n:])
        return unpool(values, indices, output_size=size) if output_size else unpool(values, indices)

    x = randn(*shape, seed=n)
    if output_size:
        x = x[(...,) + (slice(0, -1),) * n]
    t, p = torch.tensor(x, requires_grad=True), tp_tensor(x, requires_grad=True)
    want, got = run(torch, t), run(tensorplay, p)
    assert_same(got, want)
    g = randn(*want.shape, seed=7)
    want.backward(torch.tensor(g))
    got.backward(tp_tensor(g))
    assert_same(p.grad, t.grad)


@pytest.mark.parametrize("name,args,kwargs", [
    ("max_unpool2d", (randn(1, 2, 3, 3), np.arange(18).reshape(1, 2, 3, 3) * 2, 2), {}),
    ("max_unpool3d", (randn(2, 2, 2, 2), np.arange(16).reshape(2, 2, 2, 2), 2), {"output_size": (4, 4, 4)}),
    ("max_unpool1d", (randn(3, 4), np.arange(12).reshape(3, 4) % 8, 2), {}),
])
def test_max_unpool_functional_matches_torch(name, args, kwargs):
    compare_functional(name, list(args), kwargs)


# ---------------------------------------------------------------------------------------------
# Ties: the gradient goes to the first maximum of each window alone (amax would share it).

@pytest.mark.parametrize("name,args,kwargs", [
    ("max_pool1d", (whole(2, 3, 12), 3, 1), {"padding": 1}),
    ("max_pool3d", (whole(1, 2, 5, 5, 6), 3, 1), {"padding": 1, "dilation": (1, 2, 1)}),
    ("adaptive_max_pool1d", (whole(2, 3, 10), 4), {}),
    ("adaptive_max_pool3d", (whole(1, 2, 5, 6, 7), (3, 4, 2)), {}),
    ("fractional_max_pool2d", (whole(2, 3, 9, 9), 3, 5), {"_random_samples": FRACTIONAL_SAMPLES_2D}),
    ("fractional_max_pool3d", (whole(2, 2, 6, 6, 6), 2, (3, 4, 4)), {"_random_samples": FRACTIONAL_SAMPLES_3D}),
])
def test_gradient_of_ties_goes_to_the_first_maximum(name, args, kwargs):
    torch_kwargs = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    for return_indices in (False, True):
        # Overlapping windows add their gradients in another order than torch: a rounding apart.
        compare_functional(name, list(args), {**torch_kwargs, "return_indices": return_indices}, rtol=1e-6,
                           atol=1e-6)


NAN_SAMPLES = np.random.default_rng(6).uniform(0, 1, (2, 2, 3)).astype(np.float32)


@pytest.mark.parametrize("call", [
    lambda F, x, _: F.max_pool3d(x, 3, 2, 1, return_indices=True),
    lambda F, x, _: F.max_pool1d(x[0, 0], 3, 1, return_indices=True),
    lambda F, x, _: F.adaptive_max_pool3d(x, (4, 3, 5), return_indices=True),
    lambda F, x, _: F.adaptive_max_pool2d(x[0], (4, 3), return_indices=True),
    lambda F, x, samples: F.fractional_max_pool3d(x, 2, 3, return_indices=True, _random_samples=samples),
], ids=["max_pool3d", "max_pool1d", "adaptive_max_pool3d", "adaptive_max_pool2d", "fractional_max_pool3d"])
def test_nan_wins_its_window_as_in_torch(call):
    """torch's kernels take every NaN they meet: a window's last NaN is its maximum, and +inf loses to it."""
    x = randn(2, 2, 6, 6, 6, seed=6)
    x[np.random.default_rng(7).random(x.shape) < 0.08] = np.nan
    x[0, 0, 0, 0, :2] = np.inf
    want = call(torch.nn.functional, torch.tensor(x), torch.tensor(NAN_SAMPLES))
    got = call(tensorplay.nn.functional, tp_tensor(x), tp_tensor(NAN_SAMPLES))
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


# ---------------------------------------------------------------------------------------------
# Fractional pooling with windows drawn at random: no torch result to compare with, but the
# shapes are torch's, each value is its window's input element, and the windows vary by plane.

@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool_draws_valid_windows(n):
    shape, out = ((4, 3, 12, 11), (5, 4)) if n == 2 else ((2, 3, 8, 9, 10), (3, 4, 5))
    x = randn(*shape)
    want = getattr(torch.nn.functional, f"fractional_max_pool{n}d")(torch.tensor(x), 2, out, return_indices=True)
    values, indices = getattr(tensorplay.nn.functional, f"fractional_max_pool{n}d")(tp_tensor(x), 2, out,
                                                                                    return_indices=True)
    assert tuple(values.shape) == tuple(want[0].shape) and tuple(indices.shape) == tuple(want[1].shape)
    assert str(indices.dtype) == "tensorplay.int64"
    flat_x, flat_i = x.reshape(*shape[:2], -1), indices.numpy().reshape(*shape[:2], -1)
    np.testing.assert_array_equal(np.take_along_axis(flat_x, flat_i, -1), values.numpy().reshape(*shape[:2], -1))
    assert len({tuple(flat_i[b, c]) for b in range(shape[0]) for c in range(shape[1])}) > 1


def test_fractional_module_without_samples_draws_each_call():
    # 21 rows in 10 windows of 2: the starts step by 19 / 9, so where they round depends on the draw.
    pool = tensorplay.nn.FractionalMaxPool2d(2, output_size=10, return_indices=True)
    x = tp_tensor(randn(8, 4, 21, 21))
    first, second = pool(x)[1].numpy(), pool(x)[1].numpy()
    assert first.shape == (8, 4, 10, 10)
    assert (first != second).any()


# ---------------------------------------------------------------------------------------------
# 16-bit dtypes: torch's result dtype, or the same refusal.

SIXTEEN_BIT_CALLS = {
    "max_pool1d": lambda F, x: F.max_pool1d(x[0], 2, return_indices=True),
    "max_pool3d": lambda F, x: F.max_pool3d(x, 2),
    "max_pool3d_with_indices": lambda F, x: F.max_pool3d(x, 2, return_indices=True),
    "avg_pool1d": lambda F, x: F.avg_pool1d(x[0], 2),
    "avg_pool3d": lambda F, x: F.avg_pool3d(x, 2),
    "adaptive_avg_pool1d": lambda F, x: F.adaptive_avg_pool1d(x[0], 3),
    "adaptive_avg_pool3d": lambda F, x: F.adaptive_avg_pool3d(x, 3),
    "adaptive_max_pool1d": lambda F, x: F.adaptive_max_pool1d(x[0], 3, return_indices=True),
    "adaptive_max_pool2d": lambda F, x: F.adaptive_max_pool2d(x, 3, return_indices=True),
    "adaptive_max_pool3d": lambda F, x: F.adaptive_max_pool3d(x, 3, return_indices=True),
    "lp_pool1d": lambda F, x: F.lp_pool1d(x[0], 2, 2),
    "lp_pool2d": lambda F, x: F.lp_pool2d(x, 2, 2),
    "lp_pool3d": lambda F, x: F.lp_pool3d(x, 2, 2),
    "max_unpool2d": lambda F, x: F.max_unpool2d(x[0], F.max_pool2d(x[0], 2, return_indices=True)[1] * 0, 1),
    "max_unpool3d": lambda F, x: F.max_unpool3d(x, F.max_pool3d(x, 2, return_indices=True)[1] * 0, 1),
    "fractional_max_pool3d": lambda F, x: F.fractional_max_pool3d(
        x, 2, 3, _random_samples=(x.new_ones(1, 4, 3) * 0.3), return_indices=True),
    "fractional_max_pool2d": lambda F, x: F.fractional_max_pool2d(x[0], 2, 3,
                                                                  _random_samples=(x.new_ones(1, 4, 2) * 0.3)),
}


# torch's 16-bit average pools add up in the 16-bit type, tensorplay's in float32: a few units in
# the last place apart.
SIXTEEN_BIT_TOLERANCE = {"bfloat16": (3e-2, 1e-2), "float16": (4e-3, 1e-3)}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(SIXTEEN_BIT_CALLS))
def test_16_bit_results_like_torch(name, dtype):
    x = randn(1, 4, 6, 6, 6)
    outcomes = []
    for m, tensor in ((torch, torch.tensor), (tensorplay, tp_tensor)):
        try:
            out = SIXTEEN_BIT_CALLS[name](m.nn.functional, tensor(x).to(getattr(m, dtype)))
            outcomes.append(out if isinstance(out, tuple) else (out,))
        except Exception as e:  # noqa: BLE001 - torch has no 16-bit kernel for some: the same refusal
            outcomes.append(type(e))
    want, got = outcomes
    if isinstance(want, type):
        assert got is want, f"torch raised {want.__name__}, tensorplay gave {got}"
        return
    assert not isinstance(got, type), f"tensorplay raised {got.__name__}"
    rtol, atol = SIXTEEN_BIT_TOLERANCE[dtype]
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, rtol, atol)


@pytest.mark.parametrize("region", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(SIXTEEN_BIT_CALLS))
def test_autocast_computes_the_float32_list_in_float32(name, region):
    """torch's CPU autocast runs the 3-D pools (not max_pool3d with indices), max_unpool and
    fractional max pooling in float32; the 1-D and 2-D pools stay in the input's dtype."""
    x = randn(1, 4, 6, 6, 6)

    def dtypes(m):
        with m.autocast("cpu", dtype=getattr(m, region)):
            input = (torch.tensor(x) if m is torch else tp_tensor(x)).to(m.bfloat16)
            out = SIXTEEN_BIT_CALLS[name](m.nn.functional, input)
        return [str(o.dtype).split(".")[-1] for o in (out if isinstance(out, tuple) else (out,))]
    same_outcome(dtypes)


# ---------------------------------------------------------------------------------------------
# Bad arguments raise what torch raises.

def fractional_ctor(**kwargs):
    return lambda m: m.nn.FractionalMaxPool2d(2, **kwargs) and None


@pytest.mark.parametrize("scenario", [
    lambda m: m.nn.functional.max_pool3d(m.ones(4, 4), 2),
    lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 3, 3, 3), 4),
    lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 3, 3, 3), 2, padding=2),
    lambda m: m.nn.functional.max_pool1d(m.ones(1, 0, 4), 2),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.ones(4, 4), 2),
    lambda m: m.nn.functional.adaptive_avg_pool3d(m.ones(1, 4, 0, 3, 3), 2),
    lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(1, 2, 4, 4, dtype=m.int64), 2),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.int64), 2,
                                           output_size=(9, 9)),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.full((1, 1, 2, 2), 16, dtype=m.int64), 2),
    lambda m: m.nn.functional.fractional_max_pool2d(m.ones(1, 1, 4, 4), 2),
    lambda m: m.nn.functional.fractional_max_pool2d(m.ones(1, 1, 4, 4), 2, output_ratio=0.5),
    lambda m: m.nn.functional.fractional_max_pool2d(m.ones(1, 1, 4, 4), 4, 3,
                                                    _random_samples=m.ones(1, 1, 2) * 0.5),
    fractional_ctor(),
    fractional_ctor(output_size=2, output_ratio=0.5),
    fractional_ctor(output_ratio=1.5),
    lambda m: m.nn.FractionalMaxPool3d(0, output_ratio=0.5) and None,
], ids=["max_pool3d_2d_input", "max_pool3d_too_small", "avg_pool3d_pad", "max_pool1d_empty_channels",
        "adaptive_max_pool3d_2d_input", "adaptive_avg_pool3d_empty_dim", "adaptive_max_pool2d_int64",
        "max_unpool_bad_output_size", "max_unpool_index_out_of_range", "fractional_no_size",
        "fractional_2d_scalar_ratio", "fractional_pool_too_large", "FractionalMaxPool2d_no_size",
        "FractionalMaxPool2d_both_sizes", "FractionalMaxPool2d_ratio_over_1", "FractionalMaxPool3d_kernel0"])
def test_bad_arguments_raise_like_torch(scenario):
    same_outcome(scenario)


# ---------------------------------------------------------------------------------------------
# Construction: attributes, reprs and state dicts as torch has them.

REPRS = [
    "MaxPool1d(3, 2, 1, 2, True, True)", "MaxPool3d((2, 3, 2))", "AvgPool1d(3)",
    "AvgPool3d(3, 2, 1, True, False, 3)", "LPPool1d(2, 3)", "LPPool2d(1.5, (2, 3), 2)",
    "LPPool3d(2, 2, ceil_mode=True)",
    "AdaptiveMaxPool1d(3, True)", "AdaptiveMaxPool2d((2, None))", "AdaptiveMaxPool3d((2, None, 3))",
    "AdaptiveAvgPool1d(4)", "AdaptiveAvgPool3d(2)", "MaxUnpool1d(2)", "MaxUnpool2d(2, 1, 1)", "MaxUnpool3d((2, 1, 2))",
    "FractionalMaxPool2d(2, output_size=3)", "FractionalMaxPool3d(2, output_ratio=0.5)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_and_attributes_like_torch(expr):
    want, got = eval("torch.nn." + expr), eval("tensorplay.nn." + expr)
    assert repr(got) == repr(want)
    for name in ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices", "count_include_pad",
                 "divisor_override", "norm_type", "output_size", "output_ratio"):
        assert getattr(got, name, "absent") == getattr(want, name, "absent"), name


def test_fractional_samples_are_a_buffer_in_the_state_dict():
    samples = np.full((1, 2, 2), 0.25, np.float32)
    want = torch.nn.FractionalMaxPool2d(2, 3, _random_samples=torch.tensor(samples))
    got = tensorplay.nn.FractionalMaxPool2d(2, 3, _random_samples=tp_tensor(samples))
    assert list(got.state_dict()) == list(want.state_dict()) == ["_random_samples"]
    assert list(tensorplay.nn.FractionalMaxPool2d(2, 3).state_dict()) == list(
        torch.nn.FractionalMaxPool2d(2, 3).state_dict())

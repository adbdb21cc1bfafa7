"""tensorplay.nn.functional called directly, against torch.nn.functional.

test_functional_matches_torch (ids `<function>-<variant>`) calls F.<function> in both libraries
on the same inputs: results and the gradients of every floating input must agree. Then the
functions with state or options the generic check cannot express: batch_norm's running statistics,
softmax's implicit dim and dtype, one_hot, in-place activations.
"""

import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import NoGrad, assert_same, compare_functional, to_numpy, tp_tensor
from shared import FLOAT32_BFLOAT16_AND_FLOAT64, FLOATS


def randn(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def f(name, variant, *args, rtol=1e-4, atol=1e-5, **kwargs):
    return pytest.param(name, list(args), kwargs, rtol, atol, id=f"{name}-{variant}")


X4 = randn(2, 3, 8, 8, seed=1)
W_CONV = randn(4, 3, 3, 3, seed=2)
B_CONV = randn(4, seed=3)
IMG = randn(2, 3, 5, 6, seed=4)

# scaled_dot_product_attention: batch 2, heads 3, L=5 queries, S=7 keys, E=4, Ev=6.
Q, K, V = randn(2, 3, 5, 4, seed=5), randn(2, 3, 7, 4, seed=6), randn(2, 3, 7, 6, seed=7)
QS = randn(2, 3, 7, 4, seed=8)  # L == S for the causal self-attention cases
BOOL_MASK = np.random.default_rng(9).random((5, 7)) < 0.6  # True: the query may attend to the key
BOOL_MASK[:, 0] = True  # no query loses all its keys

FUNCTIONAL_CASES = [
    # ---- linear / convolution ----
    f("linear", "bias", randn(3, 5), randn(4, 5, seed=1), randn(4, seed=2)),
    f("linear", "no_bias", randn(2, 3, 5), randn(4, 5, seed=1)),
    f("bilinear", "bias", randn(4, 3), randn(4, 2, seed=1), randn(5, 3, 2, seed=2), randn(5, seed=3)),
    f("conv1d", "stride2_pad1_dil2", randn(2, 3, 11), randn(4, 3, 3, seed=1), randn(4, seed=2), stride=2, padding=1,
      dilation=2),
    f("conv1d", "same", randn(2, 4, 11), randn(6, 2, 4, seed=1), None, padding="same", groups=2),
    f("conv2d", "basic", X4, W_CONV, B_CONV),
    f("conv2d", "stride_tuple_padding_tuple", X4, W_CONV, B_CONV, stride=(2, 1), padding=(0, 2)),
    f("conv2d", "dilation", X4, W_CONV, None, dilation=(2, 1), padding=1),
    f("conv2d", "groups3", X4, randn(6, 1, 3, 3, seed=2), None, groups=3),
    f("conv2d", "same", X4, W_CONV, B_CONV, padding="same"),
    f("conv2d", "same_even_dilated", X4, randn(4, 3, 2, 4, seed=2), B_CONV, padding="same", dilation=(3, 1)),
    f("conv2d", "valid", X4, W_CONV, B_CONV, padding="valid"),
    f("conv_transpose2d", "basic", X4, randn(3, 2, 3, 3, seed=2), randn(2, seed=3)),
    f("conv_transpose2d", "stride2_pad1_outpad1", X4, randn(3, 2, 3, 3, seed=2), None, stride=2, padding=1,
      output_padding=1),
    f("conv_transpose2d", "groups3_dilation2", X4, randn(3, 2, 3, 3, seed=2), randn(6, seed=3), groups=3,
      dilation=2),
    f("conv_transpose2d", "rect_stride", X4, randn(3, 2, 2, 3, seed=2), None, stride=(2, 3), padding=(0, 1)),
    # ---- pooling ----
    f("max_pool2d", "k2", X4, 2),
    f("max_pool2d", "k3_s2_p1_ceil", X4, 3, stride=2, padding=1, ceil_mode=True),
    f("max_pool2d", "return_indices", X4, 3, stride=2, return_indices=True),
    f("max_pool2d", "dilation", X4, 2, stride=2, dilation=2),
    f("max_pool2d", "ties_gradient_to_first_max", np.floor(X4 * 1.5).astype(np.float32), 3, stride=1, padding=1),
    f("max_pool2d", "padding_with_negative_input", -np.abs(X4) - 1, 2, stride=2, padding=1),
    f("avg_pool2d", "k2", X4, 2),
    f("avg_pool2d", "k3_s2_p1", X4, 3, stride=2, padding=1),
    f("avg_pool2d", "exclude_pad", X4, 3, stride=2, padding=1, count_include_pad=False),
    f("avg_pool2d", "ceil_mode", randn(1, 2, 7, 7), 2, ceil_mode=True),
    f("avg_pool2d", "ceil_mode_pad_exclude", randn(1, 2, 7, 7), 3, stride=2, padding=1, ceil_mode=True,
      count_include_pad=False),
    f("avg_pool2d", "divisor_override", X4, 3, stride=1, divisor_override=5),
    f("adaptive_avg_pool2d", "3x3_from_8x8", X4, 3),
    f("adaptive_avg_pool2d", "5x2_from_5x6", IMG, (5, 2)),
    # ---- activations ----
    f("relu", "basic", randn(4, 5)),
    f("relu", "zeros_get_zero_gradient", np.array([[0.0, -1.0, 2.0, 0.0]], dtype=np.float32)),
    f("leaky_relu", "at_zero", np.array([[0.0, -1.0, 2.0, 0.0]], dtype=np.float32), 0.1),
    f("leaky_relu", "slope_0.3", randn(4, 5), 0.3),
    f("gelu", "none", randn(4, 5)),
    f("gelu", "tanh", randn(4, 5), approximate="tanh"),
    f("silu", "basic", randn(4, 5)),
    f("tanh", "basic", randn(4, 5)),
    f("sigmoid", "basic", randn(4, 5)),
    f("softplus", "default", randn(4, 5, scale=5)),
    f("softplus", "beta2_threshold3", randn(4, 5, scale=5), beta=2.0, threshold=3.0),
    f("softmax", "dim1", randn(3, 4, 5), dim=1),
    f("softmax", "dim_neg1", randn(3, 4, 5), dim=-1),
    f("softmax", "large_values", randn(3, 5, scale=100), dim=1),
    f("log_softmax", "dim0", randn(3, 4), dim=0),
    f("log_softmax", "large_values", randn(3, 5, scale=100), dim=-1),
    # ---- normalisation ----
    f("layer_norm", "last_dim", randn(3, 4, 5), (5,), randn(5, seed=1), randn(5, seed=2)),
    f("layer_norm", "two_dims_no_affine", randn(3, 4, 5), (4, 5)),
    f("layer_norm", "eps_0.1", randn(3, 5), (5,), eps=0.1),
    # Rows of 37: the SIMD kernel's vectors and a tail.
    f("layer_norm", "long_rows", randn(4, 37) + 10, (37,), randn(37, seed=1), randn(37, seed=2)),
    f("layer_norm", "weight_only", randn(4, 37), (37,), randn(37, seed=1), None),
    f("layer_norm", "bias_only", randn(4, 37), (37,), None, randn(37, seed=2)),
    f("layer_norm", "all_dims", randn(3, 4, 5), (3, 4, 5), randn(3, 4, 5, seed=1), randn(3, 4, 5, seed=2)),
    f("group_norm", "affine", X4, 3, randn(3, seed=1), randn(3, seed=2)),
    f("group_norm", "no_affine", X4, 1),
    f("batch_norm", "eval_running_stats", X4, NoGrad(randn(3, seed=1)), NoGrad(np.abs(randn(3, seed=2)) + 0.5),
      randn(3, seed=3), randn(3, seed=4)),
    f("batch_norm", "train_no_running_stats", X4, None, None, randn(3, seed=3), randn(3, seed=4), training=True),
    # ---- embedding ----
    f("embedding", "basic", np.array([[0, 2, 2], [4, 1, 0]]), randn(5, 3)),
    f("embedding", "padding_idx", np.array([[0, 2, 2], [4, 1, 0]]), randn(5, 3), padding_idx=2),
    # ---- pad ----
    f("pad", "constant_last_dim", IMG, (1, 2)),
    f("pad", "constant_two_dims_value", IMG, (1, 2, 3, 0), value=1.5),
    f("pad", "constant_three_dims", IMG, (0, 1, 2, 0, 1, 1), mode="constant", value=-2.0),
    f("pad", "constant_negative_crops", IMG, (-1, 2, 1, -2)),
    f("pad", "reflect_3d", randn(2, 3, 6), (2, 3), mode="reflect"),
    f("pad", "reflect_4d", IMG, (2, 1, 1, 3), mode="reflect"),
    f("pad", "replicate_3d", randn(2, 3, 6), (3, 1), mode="replicate"),
    f("pad", "replicate_4d", IMG, (2, 1, 4, 3), mode="replicate"),
    # ---- interpolate ----
    f("interpolate", "nearest_size_up", IMG, size=(10, 12)),
    f("interpolate", "nearest_size_uneven", IMG, size=(7, 4), mode="nearest"),
    f("interpolate", "nearest_scale_2", IMG, scale_factor=2),
    f("interpolate", "nearest_scale_1.5", IMG, scale_factor=1.5),
    f("interpolate", "nearest_scale_tuple", IMG, scale_factor=(2.0, 0.5)),
    f("interpolate", "nearest_scale_recompute", IMG, scale_factor=1.7, recompute_scale_factor=True),
    f("interpolate", "bilinear_up_align_False", IMG, size=(9, 11), mode="bilinear", align_corners=False),
    f("interpolate", "bilinear_up_align_True", IMG, size=(9, 11), mode="bilinear", align_corners=True),
    f("interpolate", "bilinear_down_align_False", IMG, size=(3, 4), mode="bilinear", align_corners=False),
    f("interpolate", "bilinear_down_align_True", IMG, size=(3, 4), mode="bilinear", align_corners=True),
    f("interpolate", "bilinear_scale_1.7_align_False", IMG, scale_factor=1.7, mode="bilinear", align_corners=False),
    f("interpolate", "bilinear_scale_2_align_True", IMG, scale_factor=2, mode="bilinear", align_corners=True),
    f("interpolate", "bilinear_default_align", IMG, scale_factor=2, mode="bilinear"),
    f("interpolate", "bilinear_recompute", IMG, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
    # ---- attention ----
    f("scaled_dot_product_attention", "plain", Q, K, V),
    f("scaled_dot_product_attention", "causal_square", QS, QS, QS, is_causal=True),
    f("scaled_dot_product_attention", "causal_L_lt_S", Q, K, V, is_causal=True),
    f("scaled_dot_product_attention", "bool_mask_broadcast", Q, K, V, attn_mask=torch.from_numpy(BOOL_MASK)),
    f("scaled_dot_product_attention", "bool_mask_per_batch", Q, K, V,
      attn_mask=torch.from_numpy(np.broadcast_to(BOOL_MASK, (2, 1, 5, 7)).copy())),
    f("scaled_dot_product_attention", "float_mask", Q, K, V, attn_mask=torch.from_numpy(randn(2, 3, 5, 7, seed=10))),
    f("scaled_dot_product_attention", "scale", Q, K, V, scale=0.3),
    f("scaled_dot_product_attention", "3d_inputs", Q[0], K[0], V[0]),
    f("scaled_dot_product_attention", "causal_scale", QS, QS, QS, is_causal=True, scale=1.5),
]


@pytest.mark.parametrize("name, args, kwargs, rtol, atol", FUNCTIONAL_CASES)
def test_functional_matches_torch(name, args, kwargs, rtol, atol):
    compare_functional(name, args, kwargs, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("momentum", [0.1, 0.6])
def test_batch_norm_training_updates_running_stats_like_torch(momentum):
    x = randn(8, 3, 4, seed=1) * 2 + 1
    mean, var = randn(3, seed=2), np.abs(randn(3, seed=3)) + 0.5
    t_mean, t_var = torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())
    p_mean, p_var = tp_tensor(mean), tp_tensor(var)
    out_t = torch.nn.functional.batch_norm(torch.from_numpy(x), t_mean, t_var, training=True, momentum=momentum)
    out_p = tensorplay.nn.functional.batch_norm(tp_tensor(x), p_mean, p_var, training=True, momentum=momentum)
    assert_same(out_p, out_t, what="output")
    assert_same(p_mean, t_mean, rtol=1e-5, atol=1e-6, what="running_mean")
    assert_same(p_var, t_var, rtol=1e-5, atol=1e-6, what="running_var (unbiased)")


@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4)], ids=["2d", "3d"])
def test_batch_norm_training_on_an_empty_batch_like_torch(shape):
    """An empty batch normalises to an empty output and leaves the running statistics as they were."""
    outs, stats, grads = [], [], []
    for m in (torch, tensorplay):
        mean, var = m.ones(3), m.full((3,), 2.0)
        x, w = m.ones(*shape, requires_grad=True), m.ones(3, requires_grad=True)
        out = m.nn.functional.batch_norm(x, mean, var, w, None, training=True)
        out.sum().backward()
        outs.append(tuple(out.shape))
        stats.append((mean.tolist(), var.tolist()))
        grads.append((tuple(x.grad.shape), w.grad.tolist()))
    assert outs[0] == outs[1] and stats[0] == stats[1] and grads[0] == grads[1]


def test_batch_norm_training_on_one_value_per_channel_raises():
    for m in (torch, tensorplay):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            m.nn.functional.batch_norm(m.ones(1, 3), None, None, training=True)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5), (2, 3, 4, 5)], ids=["1d", "2d", "3d", "4d"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_implicit_dim_like_torch(name, shape):
    x = randn(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(torch.nn.functional, name)(torch.from_numpy(x))
    got = getattr(tensorplay.nn.functional, name)(tp_tensor(x))
    assert_same(got, want)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtype_argument(name):
    x = randn(3, 4)
    want = getattr(torch.nn.functional, name)(torch.from_numpy(x), dim=1, dtype=torch.float64)
    got = getattr(tensorplay.nn.functional, name)(tp_tensor(x), dim=1, dtype=tensorplay.float64)
    assert_same(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("num_classes", [-1, 6])
def test_one_hot_like_torch(num_classes):
    labels = np.array([[0, 3], [2, 1], [3, 3]])
    want = torch.nn.functional.one_hot(torch.from_numpy(labels), num_classes)
    got = tensorplay.nn.functional.one_hot(tp_tensor(labels), num_classes)
    assert_same(got, want)


@pytest.mark.parametrize("name, args", [
    pytest.param("relu", (), id="relu"),
    pytest.param("leaky_relu", (0.2,), id="leaky_relu"),
    pytest.param("silu", (), id="silu"),
])
def test_inplace_activation_modifies_input_and_backpropagates(name, args):
    """x * 1 (a non-leaf) is modified in place; the gradient reaching the leaf matches torch's."""
    x = randn(4, 5)
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    xp = tp_tensor(x, requires_grad=True)
    yt, yp = xt * 1, xp * 1
    out_t = getattr(torch.nn.functional, name)(yt, *args, inplace=True)
    out_p = getattr(tensorplay.nn.functional, name)(yp, *args, inplace=True)
    assert_same(out_p, out_t)
    assert_same(yp, yt, what="the input after the in-place call")
    g = randn(4, 5, seed=3)
    out_t.backward(torch.from_numpy(g))
    out_p.backward(tp_tensor(g))
    assert_same(xp.grad, xt.grad, what="grad of the leaf")


def test_interpolate_rejects_align_corners_with_nearest_like_torch():
    x = IMG
    with pytest.raises(ValueError):
        torch.nn.functional.interpolate(torch.from_numpy(x), scale_factor=2, align_corners=True)
    with pytest.raises(ValueError):
        tensorplay.nn.functional.interpolate(tp_tensor(x), scale_factor=2, align_corners=True)


def test_interpolate_requires_exactly_one_of_size_and_scale_factor():
    x = IMG
    for kwargs in ({}, {"size": (4, 4), "scale_factor": 2}):
        with pytest.raises(ValueError):
            torch.nn.functional.interpolate(torch.from_numpy(x), **kwargs)
        with pytest.raises(ValueError):
            tensorplay.nn.functional.interpolate(tp_tensor(x), **kwargs)


def test_conv2d_same_padding_with_stride_raises_like_torch():
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError):
        tensorplay.nn.Conv2d(3, 4, 3, stride=2, padding="same")


def test_max_pool2d_indices_are_flat_positions_in_each_plane():
    x = X4
    _, want = torch.nn.functional.max_pool2d(torch.from_numpy(x), 3, stride=2, padding=1, return_indices=True)
    _, got = tensorplay.nn.functional.max_pool2d(tp_tensor(x), 3, stride=2, padding=1, return_indices=True)
    np.testing.assert_array_equal(to_numpy(got), want.numpy())


POOL_GEOMETRIES = pytest.mark.parametrize("shape,kernel,kwargs", [
    ((2, 3, 8, 8), 2, {}),                                 # the 2x2 pool with stride 2
    ((2, 3, 9, 9), 2, {}),                                 # ... with a row and a column left over
    ((1, 2, 5, 75), 2, {}),                                # ... over rows of several vectors
    ((1, 1, 7, 7), 2, dict(ceil_mode=True)),               # ... whose last window sticks out
    ((2, 2, 10, 11), 3, {}),                               # 3x3 windows tiling the plane
    ((2, 3, 9, 7), 3, dict(stride=2, padding=1)),
    ((1, 2, 10, 10), 2, dict(stride=1, dilation=2)),
    ((2, 2, 6, 8), (3, 2), dict(stride=(2, 1))),
], ids=["2x2", "2x2_odd", "2x2_wide", "2x2_ceil", "3x3_tiles", "3x3_s2_p1", "dilated", "rect"])


@pytest.mark.parametrize("dtype", FLOAT32_BFLOAT16_AND_FLOAT64)
@POOL_GEOMETRIES
def test_max_pool2d_picks_the_window_element_torch_picks(dtype, shape, kernel, kwargs):
    """Ties (rounded values), NaNs (a NaN wins, the last of several) and -inf windows (the first
    element): the values and the indices are PyTorch's, whatever path the kernel takes."""
    x = np.round(np.random.default_rng(0).standard_normal(shape)).astype(np.float32)
    x[x > 1] = np.nan
    x[x < -1] = -np.inf
    want, want_at = torch.nn.functional.max_pool2d(torch.from_numpy(x).to(getattr(torch, dtype)), kernel,
                                                   return_indices=True, **kwargs)
    got, got_at = tensorplay.nn.functional.max_pool2d(tp_tensor(x).to(getattr(tensorplay, dtype)), kernel,
                                                      return_indices=True, **kwargs)
    np.testing.assert_array_equal(to_numpy(got_at), want_at.numpy())
    np.testing.assert_array_equal(to_numpy(got.float()), want.float().numpy())


@pytest.mark.parametrize("dtype", FLOATS)
@POOL_GEOMETRIES
def test_max_pool2d_gradient_reaches_the_element_torch_picks(dtype, shape, kernel, kwargs):
    """Each window's gradient lands on its maximum (ties: the first; a NaN: the last), every other
    element gets 0, in every dtype: tiling windows write the gradient densely, the others scatter
    it (adding where windows overlap)."""
    rng = np.random.default_rng(1)
    x = np.round(rng.standard_normal(shape) * 2).astype(np.float32)
    x[x > 3] = np.nan
    out_shape = tuple(torch.nn.functional.max_pool2d(torch.from_numpy(x), kernel, **kwargs).shape)
    g = rng.standard_normal(out_shape).astype(np.float32)
    grads = []
    for m, make in ((torch, torch.from_numpy), (tensorplay, tp_tensor)):
        xt = make(x).to(getattr(m, dtype)).requires_grad_(True)
        m.nn.functional.max_pool2d(xt, kernel, **kwargs).backward(make(g).to(getattr(m, dtype)))
        assert xt.grad.dtype == getattr(m, dtype)
        grads.append(xt.grad.double().numpy())
    want, got = grads
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOAT32_BFLOAT16_AND_FLOAT64)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_rows_with_nan_inf_and_huge_values_match_torch(fn, dtype):
    """Rows long enough for the SIMD kernel (a NaN in its vector part, +-inf, a row of -inf, a row
    of 1e30 whose log_softmax is -log(n), not 0), along the last dim and along the first."""
    x = np.random.default_rng(0).standard_normal((6, 37)).astype(np.float32)
    x[1, 3], x[2, 5], x[3, :], x[4, 7], x[5, :] = np.nan, np.inf, -np.inf, -np.inf, 1e30
    for data, dim in ((x, -1), (np.ascontiguousarray(x.T), 0)):
        want = getattr(torch, fn)(torch.from_numpy(data).to(getattr(torch, dtype)), dim).double().numpy()
        got = getattr(tensorplay, fn)(tp_tensor(data).to(getattr(tensorplay, dtype)), dim).double().numpy()
        tol = 4e-2 if dtype == "bfloat16" else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_bfloat16_softmax_rows_are_rounded_once_from_float(fn):
    """Each value within one bfloat16 ulp (and float32's own error) of the float64 result on the
    same bfloat16 inputs, for rows shorter than a vector, of whole vectors, and with a partial
    vector at the end."""
    rng = np.random.default_rng(3)
    for n in (1, 5, 16, 17, 100, 1029):
        x = (rng.standard_normal((4, n)) * 6).astype(np.float32)
        xb = tensorplay.tensor(x).to(tensorplay.bfloat16)
        exact = xb.double().numpy()
        shifted = exact - exact.max(axis=1, keepdims=True)
        log_sum = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        want = shifted - log_sum if fn == "log_softmax" else np.exp(shifted - log_sum)
        got = getattr(tensorplay.nn.functional, fn)(xb, -1)
        assert got.dtype == tensorplay.bfloat16
        ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(want), 1e-38))) - 7)
        # float32 sums exp(shifted) to within 2^-24 of 1 or more: log_sum is off by as much.
        float32_error = 2.0**-22 * (np.abs(shifted) + log_sum + 1 if fn == "log_softmax" else np.abs(want))
        assert np.all(np.abs(got.double().numpy() - want) <= ulp + float32_error), n


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_and_its_gradient_match_torch_over_the_whole_range(approximate, dtype):
    """Values and gradients along [-12, 12] (both tails, where erf saturates), +-inf, NaN and -0,
    in rows long enough for the SIMD kernel with a tail, contiguous and strided."""
    x = np.concatenate([np.linspace(-12, 12, 997), [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-30, -1e-30]])
    x = x.astype(np.float32)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    results = []
    for m, make in ((torch, torch.from_numpy), (tensorplay, tp_tensor)):
        dt = getattr(m, dtype)
        outs = []
        for strided in (False, True):
            # The strided input is a transposed view of a (502, 2) array holding x as (2, 502).
            xt = make(np.ascontiguousarray(x.reshape(2, -1).T)).to(dt).T if strided else make(x).to(dt)
            xt = xt.detach().requires_grad_(True)
            y = m.nn.functional.gelu(xt, approximate=approximate)
            y.backward(make(g.reshape(xt.shape)).to(dt))
            assert y.dtype == dt and xt.grad.dtype == dt
            outs.append((y.detach().double().numpy(), xt.grad.double().numpy()))
        results.append(outs)
    tol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 1e-2, "float16": 2e-3}[dtype]
    # The zeros' signs: gelu(-0) and the far negative tail are -0, as torch's float64 kernel and
    # its float32 one on AVX-512 have them; its float32 kernel on AVX2 returns +0 in that tail.
    signs = np.signbit(torch.nn.functional.gelu(torch.from_numpy(x).to(getattr(torch, dtype)).double(),
                                                approximate=approximate).numpy())
    for (want_y, want_g), (got_y, got_g) in zip(*results):
        # torch's float32 and bfloat16 kernels on AVX-512 return NaN for gelu(+inf) inside a
        # vector; its float64 kernel and its scalar tail return inf, the limit, as tensorplay does.
        want_y = np.where(np.isposinf(x).reshape(want_y.shape), np.inf, want_y)
        np.testing.assert_allclose(got_y, want_y, rtol=tol, atol=tol, equal_nan=True)
        numbers = ~np.isnan(want_y)
        np.testing.assert_array_equal(np.signbit(got_y[numbers]), signs.reshape(want_y.shape)[numbers])
        np.testing.assert_allclose(got_g, want_g, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_relu_and_its_gradient_match_torch_on_special_values(dtype, layout):
    """NaN (kept, its gradient passed), infinities, signed zeros (relu(-0) is -0, no gradient) and
    subnormals, in rows with a partial vector at the end: contiguous rows take the SIMD kernels,
    strided ones the generic loop."""
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-39, -1e-39, 3.0, -3.0, 1e30, -1e30]
    x = np.concatenate([special, np.linspace(-2, 2, 25)]).astype(np.float32)  # 37 values
    g = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    results = []
    for m, make in ((torch, torch.from_numpy), (tensorplay, tp_tensor)):
        dt = getattr(m, dtype)
        if layout == "strided":
            xt = make(np.stack([x, -x], axis=1)).to(dt)[:, 0].detach().requires_grad_(True)
        else:
            xt = make(x).to(dt).requires_grad_(True)
        y = m.nn.functional.relu(xt)
        y.backward(make(g).to(dt))
        results.append((y.detach().double().numpy(), xt.grad.double().numpy()))
    (want_y, want_g), (got_y, got_g) = results
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(np.signbit(got_y[~np.isnan(got_y)]), np.signbit(want_y[~np.isnan(want_y)]))
    np.testing.assert_array_equal(got_g, want_g)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_of_a_view_at_an_odd_offset(approximate):
    """A row that starts off a vector boundary and ends in a partial vector: the SIMD tail reads
    and writes nothing past it (on every instruction set: test_cpu_capability runs this capped)."""
    x = np.linspace(-4, 4, 40, dtype=np.float32)
    want = torch.nn.functional.gelu(torch.from_numpy(x)[1:38], approximate=approximate).numpy()
    got = tensorplay.nn.functional.gelu(tp_tensor(x)[1:38], approximate=approximate)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype, param_dtype", [("bfloat16", "bfloat16"), ("bfloat16", "float32"),
                                                ("float16", "float32"), ("float64", "float64")])
def test_layer_norm_dtypes_and_gradients_match_torch(dtype, param_dtype):
    """The output keeps the input's dtype (16-bit inputs normalise in float32, with float32 or 16-bit
    parameters), and every gradient has its input's dtype and torch's values."""
    rng = np.random.default_rng(3)
    x, w, b, g = (rng.standard_normal(s).astype(np.float32) for s in ((6, 70), (70,), (70,), (6, 70)))
    results = []
    for m, make in ((torch, torch.from_numpy), (tensorplay, tp_tensor)):
        xt = make(x).to(getattr(m, dtype)).requires_grad_(True)
        wt, bt = (make(v).to(getattr(m, param_dtype)).requires_grad_(True) for v in (w, b))
        y = m.nn.functional.layer_norm(xt, (70,), wt, bt)
        y.backward(make(g).to(getattr(m, dtype)))
        results.append([(str(t.dtype), t.detach().double().numpy()) for t in (y, xt.grad, wt.grad, bt.grad)])
    tol = 1e-10 if dtype == "float64" else 3e-2
    for (want_dtype, want), (got_dtype, got) in zip(*results):
        assert got_dtype.split(".")[-1] == want_dtype.split(".")[-1]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_layer_norm_of_rows_far_from_zero_is_accurate():
    """Rows around 1000 with unit spread: summing them as they are, or E[x^2] - E[x]^2, loses the
    spread to rounding. Against float64 on the same float32 inputs (PyTorch is off by 5e-5 here)."""
    x = (np.random.default_rng(0).standard_normal((4, 37)) + 1000).astype(np.float32)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    got = tensorplay.nn.functional.layer_norm(tp_tensor(x), (37,)).numpy()
    np.testing.assert_allclose(got, want, atol=4e-5)


@pytest.mark.parametrize("call", [(1, 2), (1, 2, True), (1, 2, False), (1,), ()], ids=str)
@pytest.mark.parametrize("flag_by_keyword", [False, True])
def test_boolean_dispatch_picks_as_torch_does(call, flag_by_keyword):
    """The TorchScript-era helpers nn.functional exports behave as torch's."""
    picks = []
    for m in (torch, tensorplay):
        f = m.nn.functional.boolean_dispatch("flag", 2, False, lambda *a, **k: "true", lambda *a, **k: "false",
                                             "mod", "fn")
        kwargs = {"flag": call[-1]} if flag_by_keyword and len(call) == 3 else {}
        args = call[:2] if kwargs else call
        picks.append((f(*args, **kwargs), f.__name__, f.__module__))
    assert picks[0] == picks[1]


def test_assert_int_or_pair_and_dtype_alias_match_torch():
    for m in (torch, tensorplay):
        F = m.nn.functional
        F.assert_int_or_pair(3, "kernel_size", "{} must be an int or a pair")
        F.assert_int_or_pair((3, 2), "kernel_size", "{} must be an int or a pair")
        with pytest.raises(AssertionError, match="kernel_size must be an int or a pair"):
            F.assert_int_or_pair([3, 2, 1], "kernel_size", "{} must be an int or a pair")
        assert F.DType is int
    assert tensorplay.nn.functional.Tensor is tensorplay.Tensor


class Overriding:
    """An object that takes over any function called with it, as torch's protocol allows."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("overridden", func.__name__, [t.__name__ for t in types], len(args))


class OverridingSubclass(Overriding):
    pass


class Declining:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def public_function(*args):
    return "plain"


def test_torch_function_helpers_behave_as_torchs():
    results = []
    for m in (torch, tensorplay):
        F = m.nn.functional
        a, sub = Overriding(), OverridingSubclass()
        seen = [F.has_torch_function((m.ones(1), 2)), F.has_torch_function((a,)), F.has_torch_function_unary(sub),
                F.has_torch_function_variadic(1, m.ones(1)), F.handle_torch_function(public_function, (a, sub), a, sub)]
        with pytest.raises(TypeError, match="no implementation found for .*public_function"):
            F.handle_torch_function(public_function, (Declining(),), Declining())
        results.append(seen)
    assert results[0] == results[1]


@pytest.mark.parametrize("op, input_shape, weight_shape", [
    ("conv_transpose2d", (1, 4, 5, 5), (4, 1, 3, 3)),
    ("conv_transpose1d", (1, 4, 5), (4, 1, 3)),
])
def test_conv_transpose_weight_not_divisible_by_groups_is_an_error(op, input_shape, weight_shape):
    """The kernel would read past the weight (it once corrupted the heap): refused first, as in torch."""
    for m in (torch, tensorplay):
        with pytest.raises(RuntimeError, match="expected weight to be divisible by 3"):
            getattr(m.nn.functional, op)(m.ones(*input_shape), m.ones(*weight_shape), groups=3)

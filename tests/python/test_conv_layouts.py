"""Convolutions through oneDNN's blocked layouts (csrc/tensorplay/cpu/conv.cpp: each primitive takes the
layouts oneDNN prefers, and operands are reordered from and to NCHW around it), forward and both
gradients, in float32 and the 16-bit dtypes, over geometries whose channel counts fill a block of
16, fall short of one, or straddle two. The oracle is float64 on the same (rounded) inputs: a
16-bit result may differ from it by its own rounding and float32 accumulation, nothing more."""

import numpy as np
import pytest

import tensorplay as tp
from shared import FLOAT32_AND_16_BIT, FLOAT32_AND_BFLOAT16, FLOAT32_BFLOAT16_AND_FLOAT64, SIXTEEN_BIT_FLOATS

# (N, C, H, W), (O, C / groups, R, S), stride, padding, dilation, groups
GEOMETRIES = {
    "demo_first_layer": ((4, 1, 28, 28), (32, 1, 3, 3), 1, 0, 1, 1),
    "one_channel_padded_strided_dilated": ((3, 1, 11, 9), (5, 1, 3, 2), (2, 1), 1, 2, 1),
    "demo_second_layer": ((4, 32, 13, 13), (64, 32, 3, 3), 1, 0, 1, 1),
    "odd_channels_padded": ((3, 5, 9, 7), (7, 5, 3, 3), 1, 1, 1, 1),
    "channels_straddle_blocks": ((2, 20, 8, 8), (24, 20, 3, 3), 2, 1, 1, 1),
    "dilated_rectangular": ((2, 16, 10, 12), (16, 16, 2, 3), (1, 2), (2, 0), (2, 1), 1),
    "grouped": ((2, 32, 8, 8), (32, 8, 3, 3), 1, 1, 1, 4),
    "pointwise_batch_1": ((1, 48, 5, 5), (16, 48, 1, 1), 1, 0, 1, 1),
}

TOLERANCE = {"float32": 1e-5, "bfloat16": 1e-2, "float16": 2e-3}


def rounded(rng, shape, dtype):
    """Random values already representable in dtype, as float64, and the tensor holding them."""
    t = tp.tensor(rng.standard_normal(shape).astype(np.float32)).to(getattr(tp, dtype))
    return t.double().numpy(), t


def reference_conv(x, w, b, stride, padding, dilation, groups):
    """conv2d in float64 by explicit windows: the oracle."""
    (sh, sw), (ph, pw), (dh, dw) = (v if isinstance(v, tuple) else (v, v) for v in (stride, padding, dilation))
    n, c, h, wd = x.shape
    o, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    p = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    q = (wd + 2 * pw - dw * (s - 1) - 1) // sw + 1
    out = np.zeros((n, o, p, q))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(s):
                patch = xs[:, :, i * dh:i * dh + sh * p:sh, j * dw:j * dw + sw * q:sw]  # n, cg, p, q
                out[:, g * og:(g + 1) * og] += np.einsum("ncpq,oc->nopq", patch, w[g * og:(g + 1) * og, :, i, j])
    return out + b[None, :, None, None]


def assert_close(got, want, dtype):
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype", FLOAT32_AND_16_BIT)
@pytest.mark.parametrize("name", GEOMETRIES)
def test_conv2d_and_its_gradients_match_float64(name, dtype):
    in_shape, w_shape, stride, padding, dilation, groups = GEOMETRIES[name]
    rng = np.random.default_rng(sorted(GEOMETRIES).index(name))
    x64, x = rounded(rng, in_shape, dtype)
    w64, w = rounded(rng, w_shape, dtype)
    b64, b = rounded(rng, (w_shape[0],), dtype)
    x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    out = tp.nn.functional.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    assert out.dtype == getattr(tp, dtype)
    assert_close(out.detach().double().numpy(), reference_conv(x64, w64, b64, stride, padding, dilation, groups), dtype)

    g64, g = rounded(rng, tuple(out.shape), dtype)
    out.backward(g)
    assert x.grad.dtype == w.grad.dtype == b.grad.dtype == getattr(tp, dtype)
    # The gradients' oracle is the float64 path (direct loops, no oneDNN), itself checked against
    # reference_conv by the test below.
    x64t = tp.tensor(x64, requires_grad=True)
    w64t = tp.tensor(w64, requires_grad=True)
    ref = tp.nn.functional.conv2d(x64t, w64t, None, stride=stride, padding=padding, dilation=dilation, groups=groups)
    ref.backward(tp.tensor(g64))
    assert_close(x.grad.double().numpy(), x64t.grad.numpy(), dtype)
    assert_close(w.grad.double().numpy(), w64t.grad.numpy(), dtype)
    # The weight's kernel sums the bias's gradient in the same pass.
    assert_close(b.grad.double().numpy(), g64.sum(axis=(0, 2, 3)), dtype)


def float64_conv_and_gradients(x, w, b, g, stride, padding, dilation, groups):
    """conv2d of float64 arrays and its three gradients for output gradient g (the direct loops)."""
    xt, wt, bt = (tp.tensor(v, requires_grad=True) for v in (x, w, b))
    out = tp.nn.functional.conv2d(xt, wt, bt, stride=stride, padding=padding, dilation=dilation, groups=groups)
    out.backward(tp.tensor(g))
    return [t.numpy() for t in (out.detach(), xt.grad, wt.grad, bt.grad)]


def half_ulp(values, dtype):
    """Half the spacing of dtype's values at each of values (float64)."""
    mantissa_bits, smallest_exponent = {"bfloat16": (7, -126), "float16": (10, -14)}[dtype]
    exponent = np.maximum(np.floor(np.log2(np.maximum(np.abs(values), 1e-300))), smallest_exponent)
    return 0.5 * 2.0 ** (exponent - mantissa_bits)


@pytest.mark.parametrize("dtype", SIXTEEN_BIT_FLOATS)
@pytest.mark.parametrize("name", ["demo_second_layer", "odd_channels_padded", "channels_straddle_blocks", "grouped"])
def test_16_bit_convolutions_round_their_float32_sums_once(name, dtype):
    """Each value of a 16-bit conv2d and of its gradients is its float64 sum rounded to nearest:
    within half a 16-bit step of it, give or take float32's accumulation error. Truncating, or
    rounding twice, misses by up to a whole step. (Where the CPU has no 16-bit convolution, the
    plan widens the operands as it relays them out and rounds the float32 result as it relays it
    back; AVX512-BF16's kernels accumulate in float32 and round once too.)"""
    in_shape, w_shape, stride, padding, dilation, groups = GEOMETRIES[name]
    rng = np.random.default_rng(11)
    (x64, x), (w64, w), (b64, b) = (rounded(rng, shape, dtype) for shape in (in_shape, w_shape, (w_shape[0],)))
    x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    out = tp.nn.functional.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    g64, g = rounded(rng, tuple(out.shape), dtype)
    out.backward(g)
    got = [t.double().numpy() for t in (out.detach(), x.grad, w.grad, b.grad)]
    exact = float64_conv_and_gradients(x64, w64, b64, g64, stride, padding, dilation, groups)
    # Sums of the terms' magnitudes, which bound float32's accumulation error (a few units of 2^-24).
    magnitude = float64_conv_and_gradients(np.abs(x64), np.abs(w64), np.abs(b64), np.abs(g64), stride, padding,
                                           dilation, groups)
    for what, have, want, bound in zip(("output", "input gradient", "weight gradient", "bias gradient"), got, exact,
                                       magnitude):
        miss = np.abs(have - want) - half_ulp(want, dtype)
        worst = np.unravel_index(np.argmax(miss - 64 * 2.0 ** -24 * bound), miss.shape)
        assert miss[worst] <= 64 * 2.0 ** -24 * bound[worst], (
            f"{what}: {have[worst]} for {want[worst]} at {worst}, {miss[worst]} past half a step")


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_an_infinite_input_reaches_only_the_weights_whose_windows_hold_it(dtype):
    """A one-channel image (the weight gradient has a kernel of its own there, csrc/tensorplay/cpu/simd/conv.cpp)
    holding an infinity: the weights whose windows hold it get an infinity or a NaN, as in float64,
    and every other weight stays finite and right."""
    rng = np.random.default_rng(3)
    x64, x = rounded(rng, (2, 1, 12, 12), dtype)
    # Row 1, column 0: in tap (0, 0)'s and (1, 0)'s windows; the last columns' of the row above
    # meet it in taps (r, 2), which must not see it.
    x64[1, 0, 1, 0] = np.inf
    x = tp.tensor(x64).to(getattr(tp, dtype))
    w64, w = rounded(rng, (4, 1, 3, 3), dtype)
    w.requires_grad_()
    b = tp.zeros(4, dtype=getattr(tp, dtype), requires_grad=True)
    out = tp.nn.functional.conv2d(x, w, b)
    g64, g = rounded(rng, tuple(out.shape), dtype)
    out.backward(g)
    _, _, want, want_bias = float64_conv_and_gradients(x64, w64, np.zeros(4), g64, 1, 0, 1, 1)
    got = w.grad.double().numpy()
    assert not np.isfinite(want[:, :, :2, 0]).any() and np.isfinite(want[:, :, 2, :]).all()
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    assert_close(np.where(np.isfinite(want), got, 0), np.where(np.isfinite(want), want, 0), dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    assert_close(b.grad.double().numpy(), want_bias, dtype)


@pytest.mark.parametrize("needs", ["bias", "weight and bias"])
@pytest.mark.parametrize("dtype", FLOAT32_BFLOAT16_AND_FLOAT64)
def test_conv2d_bias_gradient_is_the_output_gradient_summed(dtype, needs):
    """With the weight's gradient (on AVX-512 one oneDNN kernel sums both) or without it, and
    with the input frozen; float64 runs the direct loops."""
    in_shape, w_shape, stride, padding, dilation, groups = GEOMETRIES["channels_straddle_blocks"]
    rng = np.random.default_rng(5)
    _, x = rounded(rng, in_shape, dtype if dtype != "float64" else "float32")
    x = x.to(getattr(tp, dtype))
    _, w = rounded(rng, w_shape, "bfloat16")
    w = w.to(getattr(tp, dtype)).requires_grad_(needs != "bias")
    b = tp.zeros(w_shape[0], dtype=getattr(tp, dtype), requires_grad=True)
    out = tp.nn.functional.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    g64, g = rounded(rng, tuple(out.shape), "bfloat16")
    out.backward(g.to(getattr(tp, dtype)))
    assert b.grad.dtype == getattr(tp, dtype) and (w.grad is None) == (needs == "bias")
    np.testing.assert_allclose(b.grad.double().numpy(), g64.sum(axis=(0, 2, 3)),
                               rtol=TOLERANCE.get(dtype, 1e-12), atol=1e-6 if dtype != "bfloat16" else 0.05)


def test_float64_gradients_agree_with_the_reference_convolution():
    """The float64 path the test above trusts for gradients (direct loops, no oneDNN) against the
    explicit-window oracle, by the identity <g, conv(x, w)> = <grad_x, x> for a linear map."""
    in_shape, w_shape, stride, padding, dilation, groups = GEOMETRIES["grouped"]
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(in_shape), rng.standard_normal(w_shape)
    xt, wt = tp.tensor(x, requires_grad=True), tp.tensor(w, requires_grad=True)
    out = tp.nn.functional.conv2d(xt, wt, None, stride=stride, padding=padding, groups=groups)
    np.testing.assert_allclose(out.detach().numpy(), reference_conv(x, w, np.zeros(w_shape[0]), stride, padding,
                                                                    dilation, groups), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(out.shape))
    out.backward(tp.tensor(g))
    total = float((g * out.detach().numpy()).sum())
    np.testing.assert_allclose(float((xt.grad.numpy() * x).sum()), total, rtol=1e-10)
    np.testing.assert_allclose(float((wt.grad.numpy() * w).sum()), total, rtol=1e-10)


def test_conv2d_reuses_its_plan_across_batch_sizes_and_calls():
    """Plans are cached per geometry: a second batch size gets its own, and the first still
    answers the same afterwards."""
    w = tp.randn(16, 8, 3, 3)
    first = tp.randn(2, 8, 6, 6)
    want = tp.nn.functional.conv2d(first, w).numpy()
    tp.nn.functional.conv2d(tp.randn(5, 8, 6, 6), w)
    np.testing.assert_array_equal(tp.nn.functional.conv2d(first, w).numpy(), want)


def test_conv2d_and_its_gradients_agree_across_thread_counts(restore_threads):
    """Plans are made per thread count (oneDNN splits the work when it creates a primitive): the
    one made for two threads computes what the one for one thread did."""
    x = tp.randn(8, 16, 12, 12).to(tp.bfloat16).requires_grad_()
    w = tp.randn(32, 16, 3, 3).to(tp.bfloat16).requires_grad_()
    results = []
    for threads in (1, 2, 1):
        tp.set_num_threads(threads)
        out = tp.nn.functional.conv2d(x, w, padding=1)
        gx, gw = tp.autograd.grad(out, (x, w), tp.ones_like(out))
        results.append([t.detach().float().numpy() for t in (out, gx, gw)])
    for other in results[1:]:
        for got, want in zip(other, results[0]):
            np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * np.abs(want).max())


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_a_partial_channel_block_reads_as_zeros_whatever_its_memory_held(dtype):
    """20 channels fill a block of 16 (or two of 8) and part of the next: the rest of that block
    must be zeros. The blocked copy's memory comes from the allocator's cache, filled here with NaN
    bits first, and NaN times the weights' zero padding would still be NaN."""
    rng = np.random.default_rng(5)
    x64, x = rounded(rng, (2, 20, 8, 8), dtype)
    w64, w = rounded(rng, (24, 20, 3, 3), dtype)
    junk = [tp.full((kib * 256,), 255, dtype=tp.uint8) for kib in range(1, 129)]  # 256 B to 32 KiB
    del junk  # every size class of that range now has a NaN-filled block cached
    out = tp.nn.functional.conv2d(x, w, padding=1)
    assert_close(out.double().numpy(), reference_conv(x64, w64, np.zeros(24), 1, 1, 1, 1), dtype)

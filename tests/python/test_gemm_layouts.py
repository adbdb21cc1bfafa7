"""Matrix products whose operands reach oneDNN in every layout it is handed: row-major or
transposed, with a leading dimension that is a multiple of 1 KiB (which csrc/tensorplay/cpu/gemm.cpp copies
to padded rows, see gemm_operand) or not, batched or broadcast, in float32 and in the emulated
16-bit dtypes. Values, dtypes and gradients against PyTorch on the same numbers."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_AND_16_BIT, FLOAT32_AND_BFLOAT16, SIXTEEN_BIT_FLOATS

# Stored either way, every operand has at least 64 rows, 1 KiB (256 float32) or 2 KiB apart.
M, K, N = 256, 256, 512


def operand(m, array, transposed, dtype, pad):
    """array (rows, cols) as a tensor of m, stored transposed or not, with `pad` spare columns."""
    stored = array.T if transposed else array
    wide = np.zeros((stored.shape[0], stored.shape[1] + pad), dtype=np.float32)
    wide[:, :stored.shape[1]] = stored
    t = m.tensor(wide, dtype=getattr(m, dtype))[:, :stored.shape[1]]
    return t.t() if transposed else t


@pytest.mark.parametrize("dtype", FLOAT32_AND_16_BIT)
@pytest.mark.parametrize("pad", [0, 16], ids=["rows_1KiB_apart", "padded_rows"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)],
                         ids=["nn", "tn", "nt", "tt"])
def test_matmul_layouts_match_torch(dtype, pad, ta, tb):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    results = {}
    for m in (torch, tp):
        x, y = operand(m, a, ta, dtype, pad), operand(m, b, tb, dtype, pad)
        assert x.stride() == ((1, M + pad) if ta else (K + pad, 1))
        assert y.stride() == ((1, K + pad) if tb else (N + pad, 1))
        out = x @ y
        results[m.__name__] = (str(out.dtype).split(".")[-1], out.float().numpy())
    (our_dtype, ours), (their_dtype, theirs) = results["tensorplay"], results["torch"]
    assert our_dtype == their_dtype == dtype
    tol = 1e-4 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * np.abs(theirs).max())


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_batched_and_broadcast_products_with_1KiB_rows(dtype):
    rng = np.random.default_rng(8)
    a, a_t = rng.standard_normal((3, M, K), dtype=np.float32), rng.standard_normal((3, K, M), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    outs = []
    for m in (torch, tp):
        x, x_t, y = (m.tensor(v, dtype=getattr(m, dtype)) for v in (a, a_t, b))
        products = (x @ y, x_t.transpose(1, 2) @ y, m.bmm(x, y.expand(3, K, N)), y.t() @ x_t.transpose(1, 2).mT)
        outs.append([p.float().numpy() for p in products])
    tol = 1e-4 if dtype == "float32" else 1e-2
    for theirs, ours in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * np.abs(theirs).max())


def test_linear_gradients_with_1KiB_rows():
    """The padded copies are the kernel's own: the gradients are those of the product."""
    rng = np.random.default_rng(9)
    x, w, g = (rng.standard_normal(s, dtype=np.float32) for s in ((M, K), (N, K), (M, N)))
    grads = []
    for m in (torch, tp):
        xt, wt = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        out = m.nn.functional.linear(xt, wt)
        out.backward(m.tensor(g))
        grads.append((out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), wt.grad.stride()))
    for theirs, ours in zip(*grads):
        if isinstance(theirs, tuple):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)], ids=["nn", "tn", "nt"])
def test_large_float32_products_with_bias_scale_and_sum(ta, tb):
    """Every extent from 512 up, where gemm.cpp asks oneDNN for its gemm:jit kernel first; addmm's
    beta and alpha, and linear's bias, go to that kernel as attributes."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((520, 530)), rng.standard_normal((530, 515))
    c, bias = rng.standard_normal((520, 515)), rng.standard_normal(515)
    for m in (tp, torch):
        x, y = operand(m, a, ta, "float32", 0), operand(m, b, tb, "float32", 0)
        got = [x @ y, m.addmm(m.tensor(c, dtype=m.float32), x, y, beta=0.5, alpha=2.0),
               m.nn.functional.linear(x, y.t(), m.tensor(bias, dtype=m.float32))]
        want = [a @ b, 0.5 * c + 2.0 * (a @ b), a @ b + bias]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy().astype(np.float64), w, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", FLOAT32_AND_16_BIT)
def test_skinny_products_with_small_transposed_operands(dtype):
    """A classifier layer's products (a 10-wide weight, a 10-wide gradient), whose transposed
    operands are small enough for gemm.cpp to copy to rows first; batched and broadcast too."""
    rng = np.random.default_rng(11)
    x, w, bias, g = (rng.standard_normal(s, dtype=np.float32) for s in ((256, 512), (10, 512), (10,), (256, 10)))
    batch = rng.standard_normal((3, 10, 64), dtype=np.float32)
    results = []
    for m in (torch, tp):
        xt, wt, bt = (m.tensor(v, dtype=getattr(m, dtype), requires_grad=True) for v in (x, w, bias))
        out = m.nn.functional.linear(xt, wt, bt)
        out.backward(m.tensor(g, dtype=getattr(m, dtype)))
        bt3 = m.tensor(batch, dtype=getattr(m, dtype))
        products = (out, xt.grad, wt.grad, bt.grad, bt3.transpose(1, 2) @ bt3, bt3[0].t().expand(3, 64, 10) @ bt3)
        results.append([(str(p.dtype), p.stride(), p.detach().float().numpy()) for p in products])
    tol = 1e-4 if dtype == "float32" else 1e-2
    for (our_dtype, our_strides, ours), (their_dtype, their_strides, theirs) in zip(*results):
        assert our_dtype.split(".")[-1] == their_dtype.split(".")[-1] == dtype
        assert our_strides == their_strides
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * np.abs(theirs).max())


@pytest.mark.parametrize("dtype", SIXTEEN_BIT_FLOATS)
@pytest.mark.parametrize("pad", [0, 16], ids=["dense", "padded_rows"])
def test_large_16_bit_products_with_row_major_right_operands(dtype, pad):
    """Every extent from 1024 up and a right operand with dense rows: on AMX, gemm.cpp reorders
    that operand into oneDNN's blocks before the product (packs_right_operand). Plain, as a batch
    of one, with addmm's beta, alpha and a broadcast bias row, against float64 on the same 16-bit
    values; each result within rounding of its dtype."""
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((1030, 1040)), rng.standard_normal((1040, 1050))
    c, bias = rng.standard_normal((1030, 1050)), rng.standard_normal(1050)
    low = getattr(tp, dtype)
    x, y = operand(tp, a, False, dtype, 0), operand(tp, b, False, dtype, pad)
    ct, bt = tp.tensor(c, dtype=low), tp.tensor(bias, dtype=low)
    a16, b16, c16, bias16 = (v.double().numpy() for v in (x, y, ct, bt))
    product = a16 @ b16
    got = [x @ y, (x[None] @ y[None])[0], tp.addmm(ct, x, y, beta=0.5, alpha=2.0), tp.addmm(bt, x, y)]
    want = [product, product, 0.5 * c16 + 2.0 * product, product + bias16]
    for g, w in zip(got, want):
        assert g.dtype == low
        np.testing.assert_allclose(g.double().numpy(), w, rtol=2.0 ** -7, atol=1e-3 * np.abs(w).max())

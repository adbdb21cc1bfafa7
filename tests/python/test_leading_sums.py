"""Sums over the leading dims of a contiguous tensor (a bias gradient: the batch summed away), which
csrc/tensorplay/cpu/reduce.cpp folds in one row at a time, in SIMD lanes for float32 and bfloat16 (whole
vectors, then a masked tail). Against PyTorch on the same numbers: widths around every vector
size, several leading dims, infinities and NaN in some columns."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_AND_BFLOAT16

WIDTHS = [1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100, 513]


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("width", WIDTHS)
def test_sum_over_the_batch_matches_torch(dtype, width):
    x = np.random.default_rng(width).standard_normal((37, width)).astype(np.float32)
    if width > 2:
        x[5, 1], x[9, 2], x[11, 2] = np.inf, np.nan, -np.inf
    theirs = torch.tensor(x, dtype=getattr(torch, dtype)).sum(0)
    ours = tp.tensor(x, dtype=getattr(tp, dtype)).sum(0)
    assert str(ours.dtype).split(".")[-1] == dtype and tuple(ours.shape) == (width,)
    tol = 1e-5 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_sum_over_several_leading_dims_and_the_bias_gradient(dtype):
    x = np.random.default_rng(1).standard_normal((4, 6, 2, 19)).astype(np.float32)
    results = {}
    for m in (torch, tp):
        t = m.tensor(x, dtype=getattr(m, dtype))
        bias = m.zeros(19, dtype=getattr(m, dtype), requires_grad=True)
        rows = t.reshape(-1, 19)
        m.nn.functional.linear(rows, m.ones(19, 19, dtype=getattr(m, dtype)), bias).backward(rows)
        results[m.__name__] = [r.float().numpy() for r in (t.sum((0, 1)), t.sum((0, 1, 2)), bias.grad)]
    tol = 1e-5 if dtype == "float32" else 2e-2
    for ours, theirs in zip(results["tensorplay"], results["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)

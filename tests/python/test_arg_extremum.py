"""argmax, argmin, max(dim) and min(dim) on float32 and bfloat16 rows, whose SIMD kernel
(csrc/tensorplay/cpu/simd/argmax.cpp) must pick the element PyTorch picks: the first of tied values, the
first NaN, infinities, signed zeros, on rows of every length a vector tail can leave."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_AND_BFLOAT16


def rows(length, seed):
    """Rows of few distinct values (so ties are common) with NaN, infinities and signed zeros."""
    rng = np.random.default_rng(seed)
    choices = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, 3.0], dtype=np.float32)
    x = rng.choice(choices, size=(24, length)).astype(np.float32)
    x[0] = -np.inf  # a row of only -inf
    x[1] = np.inf
    x[2, length // 2] = np.nan
    x[3, -1] = np.nan
    x[4, :] = np.nan
    x[5] = rng.standard_normal(length)
    return x


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("length", [1, 2, 7, 15, 16, 17, 31, 33, 64, 100, 1024])
def test_picks_the_element_torch_picks(length, dtype):
    x = rows(length, seed=length)
    a = tp.from_numpy(x).to(getattr(tp, dtype))
    b = torch.from_numpy(x).to(getattr(torch, dtype))
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(a, name)(-1).numpy(), getattr(b, name)(-1).numpy(), err_msg=name)
    for name in ("max", "min"):
        (ours, ours_at), (theirs, theirs_at) = getattr(a, name)(-1), getattr(b, name)(-1)
        np.testing.assert_array_equal(ours_at.numpy(), theirs_at.numpy(), err_msg=name)
        ours32, theirs32 = ours.to(tp.float32).numpy(), theirs.to(torch.float32).numpy()
        np.testing.assert_array_equal(ours32, theirs32)
        np.testing.assert_array_equal(np.signbit(ours32), np.signbit(theirs32))


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_along_a_strided_dim(dtype):
    x = rows(40, seed=1)
    a = tp.from_numpy(x).to(getattr(tp, dtype))
    b = torch.from_numpy(x).to(getattr(torch, dtype))
    np.testing.assert_array_equal(a.argmax(0).numpy(), b.argmax(0).numpy())
    np.testing.assert_array_equal(a[:, ::3].argmin(1).numpy(), b[:, ::3].argmin(1).numpy())

"""bfloat16 +, -, * and /, whose dense rows run one SIMD pass (csrc/cpu/simd_arith.cpp): each
value widened, computed in float32 and rounded once, as PyTorch computes them, on dense rows,
broadcast rows, 0-dim tensors, Python numbers, in place and with add's and sub's alpha."""

import numpy as np
import pytest
import torch

import tensorplay as tp

SHAPE = (37, 133)  # rows that end in a partial vector


def values(m, shape, seed, huge=3e38):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 8
    x.flat[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, huge]
    return m.from_numpy(x).to(m.bfloat16)


OTHERS = {
    "dense": lambda m: values(m, SHAPE, 1),
    "row": lambda m: values(m, SHAPE[1:], 2),
    "column": lambda m: values(m, (SHAPE[0], 1), 3),
    "zero_dim": lambda m: values(m, (1,), 4)[0],
    "number": lambda m: 0.3,
}


def same_bits(ours, theirs):
    a, b = ours.view(tp.int16).numpy(), theirs.view(torch.int16).numpy()
    nan = np.isnan(theirs.float().numpy())
    np.testing.assert_array_equal(np.isnan(ours.float().numpy()), nan)
    np.testing.assert_array_equal(a[~nan], b[~nan])


@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_matches_torch_bit_for_bit(op, other):
    ours = getattr(tp, op)(values(tp, SHAPE, 0), OTHERS[other](tp))
    theirs = getattr(torch, op)(values(torch, SHAPE, 0), OTHERS[other](torch))
    assert ours.dtype == tp.bfloat16
    same_bits(ours, theirs)


@pytest.mark.parametrize("other", ["dense", "row", "zero_dim"])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_in_place(op, other):
    ours, theirs = values(tp, SHAPE, 0), values(torch, SHAPE, 0)
    getattr(ours, op)(OTHERS[other](tp))
    getattr(theirs, op)(OTHERS[other](torch))
    same_bits(ours, theirs)


@pytest.mark.parametrize("alpha", [2.0, -0.5, 1e-3])
@pytest.mark.parametrize("other", ["dense", "row", "zero_dim"])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha_within_one_rounding_step(op, other, alpha):
    # a + alpha * b rounds alpha * b first; PyTorch may fuse the two into one FMA, so near FLT_MAX,
    # where alpha * b alone overflows, the two may differ by an infinity: no huge values here.
    ours = getattr(tp, op)(values(tp, SHAPE, 0, huge=1e30), OTHERS[other](tp), alpha=alpha).float().numpy()
    theirs = getattr(torch, op)(values(torch, SHAPE, 0, huge=1e30), OTHERS[other](torch), alpha=alpha)
    theirs = theirs.float().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=2 ** -8, atol=0)

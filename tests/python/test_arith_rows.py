"""float32 and bfloat16 +, -, * and /, whose dense rows run one SIMD pass (csrc/tensorplay/cpu/simd/arith.cpp;
a bfloat16 value widened, computed in float32 and rounded once, as PyTorch computes them), on dense
rows, broadcast rows, 0-dim tensors, Python numbers, in place and with add's and sub's alpha; and
float32 outputs big enough to be written past the cache."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_AND_BFLOAT16

SHAPE = (37, 301)  # rows that end in a partial vector, long enough for float32's SIMD rows


def values(m, shape, seed, dtype, huge=3e38):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 8
    x.flat[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, huge]
    return m.from_numpy(x).to(getattr(m, dtype))


OTHERS = {
    "dense": lambda m, dtype: values(m, SHAPE, 1, dtype),
    "row": lambda m, dtype: values(m, SHAPE[1:], 2, dtype),
    "column": lambda m, dtype: values(m, (SHAPE[0], 1), 3, dtype),
    "zero_dim": lambda m, dtype: values(m, (1,), 4, dtype)[0],
    "number": lambda m, dtype: 0.3,
}


def same_bits(ours, theirs):
    bits = {2: (tp.int16, torch.int16), 4: (tp.int32, torch.int32)}[theirs.element_size()]
    a, b = ours.view(bits[0]).numpy(), theirs.view(bits[1]).numpy()
    nan = np.isnan(theirs.float().numpy())
    np.testing.assert_array_equal(np.isnan(ours.float().numpy()), nan)
    np.testing.assert_array_equal(a[~nan], b[~nan])


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_matches_torch_bit_for_bit(op, other, dtype):
    ours = getattr(tp, op)(values(tp, SHAPE, 0, dtype), OTHERS[other](tp, dtype))
    theirs = getattr(torch, op)(values(torch, SHAPE, 0, dtype), OTHERS[other](torch, dtype))
    assert ours.dtype == getattr(tp, dtype)
    same_bits(ours, theirs)


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("other", ["dense", "row", "zero_dim"])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_in_place(op, other, dtype):
    ours, theirs = values(tp, SHAPE, 0, dtype), values(torch, SHAPE, 0, dtype)
    getattr(ours, op)(OTHERS[other](tp, dtype))
    getattr(theirs, op)(OTHERS[other](torch, dtype))
    same_bits(ours, theirs)


@pytest.mark.parametrize("alpha", [2.0, -0.5, 1e-3])
@pytest.mark.parametrize("other", ["dense", "row", "zero_dim"])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha_within_one_rounding_step(op, other, alpha):
    # a + alpha * b rounds alpha * b first; PyTorch may fuse the two into one FMA (and its scalar
    # tail rounds alpha * b to bfloat16), so near FLT_MAX, where alpha * b alone overflows, the two
    # may differ by an infinity: no huge values here.
    ours = getattr(tp, op)(values(tp, SHAPE, 0, "bfloat16", huge=1e30), OTHERS[other](tp, "bfloat16"), alpha=alpha)
    ours = ours.float().numpy()
    theirs = getattr(torch, op)(values(torch, SHAPE, 0, "bfloat16", huge=1e30), OTHERS[other](torch, "bfloat16"),
                                alpha=alpha)
    theirs = theirs.float().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=2 ** -7, atol=0)


@pytest.mark.parametrize("alpha", [0.3, -1.7])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha_is_rounded_to_the_dtype_first(op, dtype, alpha):
    # PyTorch's vector loop rounds alpha to the tensor's dtype and then computes a + alpha * b in
    # float32 with one rounding at the end. (Its scalar loop, for short rows and a row's last
    # elements, also rounds alpha * b: a length that is a multiple of 32 has no such elements.)
    shape = (37, 320)
    ours = getattr(tp, op)(values(tp, shape, 0, dtype, huge=1e4), values(tp, shape, 1, dtype, huge=1e4), alpha=alpha)
    theirs = getattr(torch, op)(values(torch, shape, 0, dtype, huge=1e4), values(torch, shape, 1, dtype, huge=1e4),
                                alpha=alpha)
    same_bits(ours, theirs)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_a_large_float32_output_has_the_bits_of_small_ones(op, streamed_from_1_mib):
    """Outputs past the streaming bound are written past the cache, each thread's share from its
    first vector-aligned element on: the bits must be those of small rows. The operands (4 x 65536
    values tiled 3 times, less a column) hold over 780K values, more than 1 MiB of float32 for each
    of two threads, the second's share starting off a vector's boundary."""
    fn = getattr(tp, op)
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal((4, 1 << 16)).astype(np.float32) for _ in range(2))
    want = np.tile(fn(tp.from_numpy(x), tp.from_numpy(y)).numpy().view(np.uint32), (3, 1))[:, 1:]
    big_x, big_y = (tp.from_numpy(np.ascontiguousarray(np.tile(v, (3, 1))[:, 1:])) for v in (x, y))
    np.testing.assert_array_equal(fn(big_x, big_y).numpy().view(np.uint32), want)

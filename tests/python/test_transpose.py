"""Copies that transpose (x.t().contiguous(), permutes, NCHW to NHWC): within one dtype of 2 or 4
bytes they run in SIMD blocks of 16x16 and 8x8 (csrc/tensorplay/cpu/simd/transpose.cpp), the edges one
element at a time; these check every element's place against PyTorch on the same bits, on
shapes that are whole blocks, fractions of one and everything between, and into destinations
whose rows are not contiguous with each other."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_AND_BFLOAT16

DTYPES = ["bfloat16", "float16", "float32", "int16", "int32", "float64", "uint8"]
SHAPES = [(1, 1), (1, 37), (37, 1), (7, 5), (8, 8), (16, 16), (15, 17), (17, 33), (64, 100), (100, 64),
          (130, 257)]


def bits(rows, cols, dtype, seed=0):
    """Distinct values in dtype for every element (integers as their bits, so no two collide)."""
    rng = np.random.default_rng(seed)
    if dtype in ("bfloat16", "float16", "int16"):
        raw = rng.integers(0, 2 ** 15, (rows, cols), dtype=np.int16)  # positive: no NaN patterns
        t = torch.from_numpy(raw).view(getattr(torch, dtype))
    else:
        t = torch.from_numpy(rng.standard_normal((rows, cols)) * 100).to(getattr(torch, dtype))
    return t


def to_tp(t):
    if t.dtype in (torch.bfloat16, torch.float16):
        return tp.from_numpy(t.view(torch.int16).numpy()).view(getattr(tp, str(t.dtype).split(".")[1]))
    return tp.from_numpy(t.numpy())


def same_bits(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    if theirs.dtype in (torch.bfloat16, torch.float16):
        ours, theirs = ours.view(tp.int16), theirs.view(torch.int16)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_transposed_contiguous_matches_torch(dtype, shape):
    theirs = bits(*shape, dtype)
    same_bits(to_tp(theirs).t().contiguous(), theirs.t().contiguous())


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int32"])
def test_batched_and_permuted_transposes_match_torch(dtype):
    theirs = bits(6 * 35, 49, dtype).reshape(6, 5, 7, 49)
    ours = to_tp(theirs.reshape(6 * 35, 49)).reshape(6, 5, 7, 49)
    for dims in [(0, 1, 3, 2), (0, 2, 3, 1), (3, 0, 1, 2), (1, 0, 3, 2)]:
        same_bits(ours.permute(*dims).contiguous(), theirs.permute(*dims).contiguous())


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_flipped_transposes_match_torch(dtype):
    """flip copies through a view that walks its dims backwards: a transposing copy with negative
    strides."""
    theirs = bits(37, 70, dtype)
    ours = to_tp(theirs)
    for dims in [(0,), (1,), (0, 1)]:
        same_bits(ours.t().flip(dims), theirs.t().flip(dims))
        same_bits(ours.t().contiguous().t().flip(dims).contiguous(),
                  theirs.t().contiguous().t().flip(dims).contiguous())


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
def test_transpose_into_a_strided_destination(dtype):
    """copy_ of a transposed source into a slice: the destination's rows lie a padded stride apart,
    and what lies outside the slice is left alone."""
    theirs = bits(40, 70, dtype)
    ours = to_tp(theirs)
    dst_theirs, dst_ours = torch.zeros(70, 48, dtype=theirs.dtype), tp.zeros(70, 48, dtype=getattr(tp, dtype))
    dst_theirs[:, 3:43].copy_(theirs.t())
    dst_ours[:, 3:43].copy_(ours.t())
    same_bits(dst_ours, dst_theirs)


def test_transposing_copy_with_a_conversion():
    """A transposing copy that also converts (float32 into bfloat16) takes the tiled loop."""
    x = bits(33, 65, "float32")
    ours, theirs = tp.empty(65, 33, dtype=tp.bfloat16), torch.empty(65, 33, dtype=torch.bfloat16)
    ours.copy_(to_tp(x).t())
    theirs.copy_(x.t())
    same_bits(ours, theirs)

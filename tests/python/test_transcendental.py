"""exp, log, tanh, sigmoid and silu, whose float rows run SIMD kernels (csrc/tensorplay/cpu/simd/transcendental.cpp),
against PyTorch's vectorised kernels over the whole float32 range: random bit patterns, a dense
sweep, the edges of each function's range and the special values, in float32 and through the
16-bit floats, on rows of every length a vector tail can leave."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import SIXTEEN_BIT_FLOATS

OPS = {
    "exp": (tp.exp, torch.exp),
    "log": (tp.log, torch.log),
    "tanh": (tp.tanh, torch.tanh),
    "sigmoid": (tp.sigmoid, torch.sigmoid),
    "silu": (tp.nn.functional.silu, torch.nn.functional.silu),
}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, 1.17549435e-38, 3.4028235e38, -3.4028235e38,
           88.72283, 88.722839, 89.0, 100.0, 104.0, 105.0, -87.3, -88.0, -100.0, -103.97, -104.0, -110.0,
           0.5, 0.625, 0.62500006, 9.0, 9.02, 10.0, -9.02, 20.0, -20.0, 1e-10, -1e-10, 1e30, -1e30]


def float32_values():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, 400_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    sweep = np.linspace(-120, 120, 100_001, dtype=np.float32)
    return np.concatenate([np.array(SPECIAL, dtype=np.float32), bits, sweep,
                           rng.standard_normal(50_000).astype(np.float32)])


def ulps_apart(ours, theirs):
    """|ours - theirs| in units of float32's spacing at theirs (its subnormal spacing below FLT_MIN)."""
    with np.errstate(over="ignore"):  # the spacing at FLT_MAX is infinite
        spacing = np.spacing(np.abs(theirs)).astype(np.float64)
    return np.abs(ours.astype(np.float64) - theirs.astype(np.float64)) / spacing


@pytest.mark.parametrize("op", list(OPS))
def test_float32_within_two_ulp_of_torch_and_equal_at_the_edges(op):
    ours_fn, torch_fn = OPS[op]
    x = float32_values()
    ours = ours_fn(tp.from_numpy(x.copy())).numpy()
    theirs = torch_fn(torch.from_numpy(x.copy())).numpy()
    normal = np.isfinite(theirs) & (np.abs(theirs) >= np.finfo(np.float32).tiny)
    assert ulps_apart(ours[normal], theirs[normal]).max() <= 2, op
    # Infinities, NaN and zeros (with their sign) exactly; results below FLT_MIN, where float32
    # holds fewer bits, within 1e-44.
    edge = ~normal
    np.testing.assert_array_equal(np.isnan(ours[edge]), np.isnan(theirs[edge]))
    finite = edge & ~np.isnan(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=0, atol=1e-44)
    np.testing.assert_array_equal(np.signbit(ours[finite & (theirs == 0)]), np.signbit(theirs[finite & (theirs == 0)]))


@pytest.mark.parametrize("dtype", SIXTEEN_BIT_FLOATS)
@pytest.mark.parametrize("op", list(OPS))
def test_16_bit_floats_within_one_step_of_torch(op, dtype):
    ours_fn, torch_fn = OPS[op]
    x = np.linspace(-12, 12, 20_001, dtype=np.float32)
    if op == "log":
        x = np.abs(x) * 8
    ours = ours_fn(tp.from_numpy(x).to(getattr(tp, dtype))).to(tp.float32).numpy()
    theirs = torch_fn(torch.from_numpy(x).to(getattr(torch, dtype))).to(torch.float32).numpy()
    step = {"bfloat16": 2 ** -7, "float16": 2 ** -10}[dtype]
    np.testing.assert_allclose(ours, theirs, rtol=step, atol=1e-6)


@pytest.mark.parametrize("op", list(OPS))
def test_every_row_length_and_a_strided_view(op):
    ours_fn, torch_fn = OPS[op]
    x = np.random.default_rng(1).uniform(0.1, 4, 80).astype(np.float32)
    for n in range(1, 40):
        np.testing.assert_allclose(ours_fn(tp.from_numpy(x[:n].copy())).numpy(),
                                   torch_fn(torch.from_numpy(x[:n].copy())).numpy(), rtol=3e-7)
    strided = np.random.default_rng(2).uniform(0.1, 4, (7, 12)).astype(np.float32)
    np.testing.assert_allclose(ours_fn(tp.from_numpy(strided)[:, 1::3]).numpy(),
                               torch_fn(torch.from_numpy(strided)[:, 1::3]).numpy(), rtol=3e-7)


LARGE_OPS = {**{name: fns[0] for name, fns in OPS.items()},
             "gelu": tp.nn.functional.gelu,
             "gelu_tanh": lambda x: tp.nn.functional.gelu(x, approximate="tanh")}


@pytest.mark.parametrize("op", list(LARGE_OPS))
def test_a_large_row_has_the_bits_of_small_ones(op, streamed_from_1_mib):
    """Outputs past the streaming bound are written past the cache, each thread's share from its
    first vector-aligned element on: the bits must be those the same values get in a small row,
    into a new tensor (the second thread's share starts off a vector's boundary) and in place into
    a view one float past one (in place, nothing is streamed)."""
    fn = LARGE_OPS[op]
    pattern = float32_values()[:1 << 16]
    small = fn(tp.from_numpy(pattern.copy())).numpy().view(np.uint32)
    reps, extra = 9, 12345  # over 600K values: more than 1 MiB of float32 for each of two threads
    x = np.concatenate([np.tile(pattern, reps), pattern[:extra]])
    want = np.concatenate([np.tile(small, reps), small[:extra]])
    base = tp.from_numpy(np.concatenate([[np.float32(1)], x]))
    np.testing.assert_array_equal(fn(base[1:]).numpy().view(np.uint32), want)
    in_place = getattr(base[1:], f"{op}_", None)
    if in_place is not None:
        in_place()
        np.testing.assert_array_equal(base[1:].numpy().view(np.uint32), want)
        assert base[0].item() == 1

"""Elementwise ops, casts and copies on tensors whose memory order is not their logical order.

Ops keep a dense input's layout (as PyTorch's preserve_format does), and the CPU loop walks the
operands in memory order; these tests check values and output strides against PyTorch for
transposed, permuted, channels-last, sliced and broadcast operands, mixed within one op."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_AND_16_BIT, FLOAT32_AND_BFLOAT16, FLOATS, SIXTEEN_BIT_FLOATS

# name -> function of a contiguous base tensor giving the operand; each works for any module.
LAYOUTS = {
    "contiguous": lambda m, x: x,
    "transposed": lambda m, x: x.transpose(0, 1),
    "permuted": lambda m, x: x.permute(2, 0, 1),
    "channels_last": lambda m, x: x.permute(0, 2, 3, 1),
    "sliced": lambda m, x: x[:, 1::2],
    "reversed_dims": lambda m, x: x.permute(*reversed(range(x.dim()))),
    # Every other element along each of ten dims: no two dims merge, and a loop of more dims than
    # it keeps inline (cpu/loop.h) goes to the heap.
    "ten_sliced_dims": lambda m, x: x[(slice(None, None, 2),) * 10],
}
BASE_SHAPES = {  # the base's shape for each layout, so the operands come out with these sizes
    "contiguous": (37, 65),
    "transposed": (65, 37),
    "permuted": (9, 17, 33),
    "channels_last": (3, 7, 9, 16),
    "sliced": (37, 130),
    "reversed_dims": (5, 7, 11),
    "ten_sliced_dims": (3,) * 10,
}

UNARY = {
    "relu": lambda m, x: m.relu(x),
    "neg": lambda m, x: -x,
    "exp": lambda m, x: m.exp(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "abs": lambda m, x: m.abs(x),
    "mul_scalar": lambda m, x: x * 3.0,
    "clone": lambda m, x: x.clone(),
    "contiguous": lambda m, x: x.contiguous(),
}


def operand(m, layout, dtype, seed=0):
    base = np.random.default_rng(seed).standard_normal(BASE_SHAPES[layout]).astype(np.float32)
    x = m.from_numpy(base).to(getattr(m, dtype))
    return LAYOUTS[layout](m, x)


def close(ours, theirs, dtype):
    assert ours.dtype == getattr(tp, str(theirs.dtype).split(".")[1])
    tol = {"float32": 1e-6, "float64": 1e-12, "bfloat16": 1e-2, "float16": 1e-3}[dtype]
    np.testing.assert_allclose(ours.to(tp.float64).numpy(), theirs.to(torch.float64).numpy(), rtol=tol, atol=tol)
    assert ours.stride() == theirs.stride()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_op_keeps_values_and_layout(op, layout, dtype):
    ours, theirs = (UNARY[op](m, operand(m, layout, dtype)) for m in (tp, torch))
    close(ours, theirs, dtype)


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("other", ["same", "contiguous", "row"])
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
def test_binary_op_on_mixed_layouts(op, layout, other, dtype):
    def run(m):
        a = operand(m, layout, dtype)
        if other == "same":
            b = operand(m, layout, dtype, seed=1)
        elif other == "contiguous":
            b = operand(m, layout, dtype, seed=1).contiguous()
        else:  # a broadcast row: stride 0 along every dim but the last
            b = operand(m, layout, dtype, seed=1).contiguous()[(0,) * (a.dim() - 1)]
        return getattr(m, op)(a, b)

    close(run(tp), run(torch), dtype)


@pytest.mark.parametrize("to", FLOATS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_cast_keeps_values_and_layout(layout, dtype, to):
    ours, theirs = (operand(m, layout, dtype).to(getattr(m, to)) for m in (tp, torch))
    close(ours, theirs, to)


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_copy_into_a_view_of_another_layout(layout, dtype):
    def run(m):
        src = operand(m, layout, dtype)
        dst = m.zeros(tuple(reversed(src.shape)), dtype=getattr(m, dtype)).permute(*reversed(range(src.dim())))
        dst.copy_(src)
        filled = m.zeros(tuple(reversed(src.shape)), dtype=getattr(m, dtype)).permute(*reversed(range(src.dim())))
        filled.fill_(2.5)
        return dst + filled

    close(run(tp), run(torch), dtype)


@pytest.mark.parametrize("dtype", FLOAT32_AND_BFLOAT16)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", ["relu", "gelu", "sigmoid"])
def test_gradient_through_a_layout(op, layout, dtype):
    def run(m):
        x = operand(m, layout, dtype).detach().requires_grad_(True)
        grad = operand(m, layout, dtype, seed=2).detach()
        UNARY[op](m, x).backward(grad)
        return x.grad

    close(run(tp), run(torch), dtype)


@pytest.mark.parametrize("to", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("dtype", FLOAT32_AND_16_BIT)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_copy_into_a_contiguous_tensor_of_another_dtype(layout, dtype, to):
    def run(m):
        src = operand(m, layout, dtype)
        return m.empty(tuple(src.shape), dtype=getattr(m, to)).copy_(src)

    close(run(tp), run(torch), to)


@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (7, 9), (31, 33), (64, 64), (100, 3)])
def test_transposing_copies_of_every_tile_remainder(shape):
    def run(m):
        x = m.from_numpy(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        batched = m.stack([x, -x, 2 * x])
        return x.t().contiguous(), batched.transpose(1, 2).contiguous(), x.t().to(m.bfloat16).contiguous()

    for ours, theirs in zip(run(tp), run(torch)):
        close(ours, theirs, "float32" if ours.dtype == tp.float32 else "bfloat16")


@pytest.mark.parametrize("dtype", SIXTEEN_BIT_FLOATS)
@pytest.mark.parametrize("op", ["relu_", "exp_", "sigmoid_"])
def test_in_place_op_on_a_16_bit_view_writes_only_the_view(op, dtype):
    """A row of every length from 1 to 40, one element into a buffer of NaNs: the tail's partial
    vector (16-bit lanes in pairs on AVX2, odd ones alone; test_cpu_capability runs this capped)
    writes the row's values and nothing on either side."""
    for n in range(1, 41):
        values = np.linspace(-3, 3, n, dtype=np.float32)
        base = tp.from_numpy(np.concatenate([[np.nan], values, [np.nan] * 40]).astype(np.float32)).to(getattr(tp, dtype))
        getattr(base[1:1 + n], op)()
        want = getattr(torch.from_numpy(values).to(getattr(torch, dtype)), op)()
        got = base.to(tp.float32).numpy()
        assert np.isnan(got[0]) and np.isnan(got[1 + n:]).all(), (op, n)
        step = {"bfloat16": 2**-7, "float16": 2**-10}[dtype]
        np.testing.assert_allclose(got[1:1 + n], want.float().numpy(), rtol=step, atol=1e-6)

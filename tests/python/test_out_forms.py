"""The out= form of every op in the op table whose torch function has one: the result written into
out, out returned, and out resized from empty. Where torch's function has no out=, tensorplay's
refuses it too. (Torch's kernels differ on whether out may have a wider dtype than the result;
tensorplay takes any dtype the result can be cast to, and the families' own tests check where torch
refuses.)"""

import zlib

import numpy as np
import pytest
import torch

import tensorplay
from op_table import TABLE, Maker, Sample
from test_ops import convert

# Where tensorplay takes out= and torch does not: torch's sum and prod over every element are an
# overload without out=, while tensorplay has one binding for every dim argument.
BEYOND_TORCH = {"sum", "prod"}

FUNCTION_OPS = [op for op in TABLE if op.fn is None and hasattr(torch, op.name) and not op.name.endswith("_")]


def samples(op):
    """The op's samples in each of its dtypes, float32 first."""
    for dtype in sorted(op.dtypes, key=lambda d: d != "float32"):
        mk = Maker(dtype, zlib.crc32(op.label.encode()), op.domain, op.other_domain, op.nonzero_other, op.integers)
        for sample in op.samples(mk):
            yield Sample(sample.label, sample.args, {**op.kwargs, **sample.kwargs})


def first_sample(op):
    """The op's first sample that torch runs (the table also holds samples torch refuses)."""
    for sample in samples(op):
        try:
            call(torch, op, sample)
        except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError):
            continue
        return sample
    raise AssertionError(f"{op.label}: torch runs none of its samples")


def call(lib, op, sample, **extra):
    return getattr(lib, op.name)(*convert(lib, list(sample.args)), **convert(lib, dict(sample.kwargs)), **extra)


def torch_takes_out(op, sample, expected):
    try:
        call(torch, op, sample, out=torch.empty(0, dtype=expected.dtype))
    except TypeError:
        return False
    return True


def as_array(t):
    return t.detach().to(tensorplay.float64 if t.is_floating_point() else t.dtype).numpy()


def single_result_cases():
    """(op, sample) for the ops whose torch function returns one tensor (the out= of those that
    return several is a tuple, tested in their families' files)."""
    cases = []
    for op in FUNCTION_OPS:
        sample = first_sample(op)
        if isinstance(call(torch, op, sample), torch.Tensor):
            cases.append(pytest.param(op, sample, id=op.label))
    return cases


@pytest.mark.parametrize("op,sample", single_result_cases())
def test_out_form_matches_torch(op, sample):
    expected = call(torch, op, sample)
    dtype = getattr(tensorplay, str(expected.dtype).removeprefix("torch."))
    if not torch_takes_out(op, sample, expected) and op.name not in BEYOND_TORCH:
        with pytest.raises(TypeError):
            call(tensorplay, op, sample, out=tensorplay.empty(0, dtype=dtype))
        return
    if op.name in BEYOND_TORCH:
        assert not torch_takes_out(op, sample, expected), f"{op.name} is no longer beyond torch"
    out = tensorplay.empty(0, dtype=dtype)
    result = call(tensorplay, op, sample, out=out)
    assert result is out
    assert tuple(out.shape) == tuple(expected.shape)
    reference = call(tensorplay, op, sample)
    np.testing.assert_array_equal(as_array(out), as_array(reference))

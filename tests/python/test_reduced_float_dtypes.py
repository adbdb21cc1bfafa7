"""The dtype of every op's output on bfloat16 and float16 inputs, outside and inside autocast,
against PyTorch's.

A 16-bit input that an op turns into float32 by accident (a mask or a constant built in the
default dtype) does not fail loudly where it happens: the next matmul meets a dtype it does not
expect. So every case of the op table (test_ops.py) with 16-bit inputs runs here with no region,
in a bfloat16 region and in a float16 region, in both libraries, and the outputs' dtypes (or the
kinds of exception) must agree. The random ops the table cannot hold (dropout and its module)
are checked the same way below.
"""

import pytest
import torch

import tensorplay
import test_ops

REGIONS = ("none", "bfloat16", "float16")
CASES = [case for case in test_ops.CASES if case.dtype in ("bfloat16", "float16")]


def output_dtypes(result):
    """The dtypes of a result's tensors, by name, in order ("-" for what is not a tensor)."""
    if isinstance(result, (torch.Tensor, tensorplay.Tensor)):
        return [test_ops.dtype_name(result)]
    if isinstance(result, (tuple, list)):
        return [d for r in result for d in output_dtypes(r)]
    return ["-"]


def has_float32_input(args):
    return any(isinstance(a, torch.Tensor) and a.dtype == torch.float32 or isinstance(a, list) and has_float32_input(a)
               for a in args)


# torch's op is a composite whose own parts meet autocast's promote with the region's other 16-bit
# dtype (a float32 constant, a cat) and raise "Unexpected floating ScalarType in
# at::autocast::prioritize"; tensorplay's op keeps its inputs' dtypes, as torch's does outside the
# region, which is what it is compared with.
PROMOTE_INSIDE = {"unique", "unique_consecutive", "combinations", "gradient", "convolution"}


def outcome(m, fn, args, kwargs, region, name=None):
    """The output dtypes of fn under `region`, or the kind of exception it raised."""
    if region == "none":
        result, error = test_ops.run(fn, m, args, kwargs)
    else:
        with m.autocast("cpu", dtype=getattr(m, region)):
            result, error = test_ops.run(fn, m, args, kwargs)
    if m is torch and "autocast::prioritize" in str(error) and has_float32_input(args):
        # torch's promote folds the inputs' dtypes in argument order and raises on a 16-bit dtype
        # other than the region's met before any float32; tensorplay's is order-free, float32
        # winning (test_autocast_ops.py, test_promote_with_float32_is_order_free).
        return ["float32"]
    if m is torch and "autocast::prioritize" in str(error) and name in PROMOTE_INSIDE:
        return outcome(m, fn, args, kwargs, "none")
    if m is torch and "could not create a primitive descriptor" in str(error):
        # torch's oneDNN picks its kernels by the CPU and has none for some dtypes on some CPUs
        # (float16 LSTMs where AVX512-BF16 is but AVX512-FP16 is not): nothing to compare with.
        return None
    if error is not None:
        kind = test_ops.exception_kind(error)
        return f"raised {kind.__name__ if kind else type(error).__name__}"
    return output_dtypes(result)


@pytest.mark.parametrize("region", REGIONS)
def test_output_dtypes_match_torch(region):
    # One test per region over all the cases, so that a regression lists every op it touches.
    wrong = []
    for case in CASES:
        args, kwargs = case.sample.args, case.sample.kwargs
        expected = outcome(torch, case.torch_fn, test_ops.convert(torch, list(args)),
                           test_ops.convert(torch, kwargs), region, case.op.name)
        actual = outcome(tensorplay, case.fn, test_ops.convert(tensorplay, list(args)),
                         test_ops.convert(tensorplay, kwargs), region)
        if expected is not None and actual != expected:
            wrong.append(f"{case.id}: torch {expected}, tensorplay {actual}")
    assert CASES
    assert not wrong, f"{len(wrong)} of {len(CASES)} cases in region {region}:\n" + "\n".join(wrong[:50])


DROPOUTS = {
    "F.dropout": lambda m, x: m.nn.functional.dropout(x, 0.3, training=True),
    "F.dropout inplace": lambda m, x: m.nn.functional.dropout(x.clone(), 0.3, training=True, inplace=True),
    "nn.Dropout": lambda m, x: m.nn.Dropout(0.3)(x),
    "F.dropout p=1": lambda m, x: m.nn.functional.dropout(x, 1.0, training=True),
    "F.dropout eval": lambda m, x: m.nn.functional.dropout(x, 0.3, training=False),
}


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "int64"])
@pytest.mark.parametrize("name", list(DROPOUTS))
def test_dropout_keeps_its_input_dtype(name, dtype, region):
    def run(m):
        return outcome(m, lambda m, x: DROPOUTS[name](m, x), [m.ones(64, 8, dtype=getattr(m, dtype))], {}, region)
    assert run(tensorplay) == run(torch)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dropout_scales_kept_elements_by_the_rounded_factor(dtype):
    # PyTorch divides the mask by 1 - p in the input's dtype: 3 / 0.7 in bfloat16 is 4.28125.
    out = tensorplay.nn.functional.dropout(tensorplay.full((4096,), 3.0, dtype=getattr(tensorplay, dtype)), 0.3)
    kept = out[out != 0].float()
    expected = torch.full((1,), 3.0, dtype=getattr(torch, dtype)) * (torch.ones(1, dtype=getattr(torch, dtype)) / 0.7)
    assert kept.numel() > 0 and bool((kept == float(expected.float()[0])).all())

"""Fuzzing of strided views with extreme sizes, strides and offsets against PyTorch
(tests/fuzz/fuzz_strides.py), on a short budget: TP_FUZZ_CASES raises it. The cases run in worker
processes, so a crash or a hang fails the test with the case that caused it instead of taking
pytest down. The fuzzer's own checks follow: its generation reaches what it promises, its oracle
catches faults injected on purpose, its workers survive a crash and a hang. Last, regression cases
for overflows that were found, each in a subprocess so that a crash fails only its own test."""

import os
import re
import resource
import subprocess
import sys

import pytest

import fuzz_scripts
import tensorplay as tp

CASES = int(os.environ.get("TP_FUZZ_CASES", "300"))

fuzz_strides = fuzz_scripts.load("fuzz_strides")


def test_views_match_torch():
    result = fuzz_strides.run(CASES, seed=0)
    if result.failures:
        first = "\n\n".join(f"case {number} (seed 0): {message}" for number, message in result.failures[:5])
        pytest.fail(f"{len(result.failures)} of {CASES} cases failed; the first ones:\n\n{first}", pytrace=False)
    assert result.tried == CASES
    # Both outcomes are common, so neither is checked vacuously.
    assert result.outcomes["ok"] > CASES // 10 and result.outcomes["raised"] > CASES // 10, result.outcomes


@pytest.fixture
def capped_address_space():
    """The workers' cap on the address space, for cases run here: drawing a case runs it in torch,
    and some ask for a list of 2**31 views (torch.zeros(1).expand(2**31).unbind())."""
    limits = resource.getrlimit(resource.RLIMIT_AS)
    fuzz_strides.cap_address_space()
    yield
    resource.setrlimit(resource.RLIMIT_AS, limits)


def test_generation_is_deterministic_and_reaches_every_op_dtype_and_extreme(capped_address_space):
    cases = [fuzz_strides.draw_case(number, seed=0) for number in range(400)]
    assert [c.text() for c in cases] == [fuzz_strides.draw_case(number, seed=0).text() for number in range(400)]
    ops = {op.name for c in cases for op in c.ops[c.base_len:]}
    assert ops == set(fuzz_strides.VIEW_OPS), set(fuzz_strides.VIEW_OPS) - ops
    assert {c.dtype for c in cases} == set(fuzz_strides.DTYPES)
    drawn = set(ints([op.args for c in cases for op in c.ops]))
    missing = set(fuzz_strides.EDGES + fuzz_strides.EXTREMES + fuzz_strides.BEYOND_INT64) - drawn
    assert not missing, missing
    assert any(len(c.ops) - c.base_len == 4 for c in cases)


def ints(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from ints(v)
    elif isinstance(value, slice):
        yield from ints((value.start, value.stop, value.step))
    elif isinstance(value, int):
        yield value


# Faults injected into tensorplay's ops (hook(case, op, call) runs each op of a chain), and what the
# oracle says when it catches one.

def silent(case, op, call):
    """A missing check: an op that fails returns an empty tensor instead."""
    try:
        return call()
    except Exception:  # noqa: BLE001
        return tp.zeros(0)


def wrong_kind(case, op, call):
    try:
        return call()
    except RuntimeError as e:
        raise ValueError(str(e)) from None


def copy(case, op, call):
    """Views that are copies: strides of their own, no storage offset."""
    y = call()
    return y.clone() if isinstance(y, tp.Tensor) else y


def shifted(case, op, call):
    """Views one element off."""
    y = call()
    return y.as_strided(y.shape, y.stride(), y.storage_offset() + 1) if isinstance(y, tp.Tensor) else y


FAULTS = {silent: "tensorplay returned", wrong_kind: "tensorplay raised ValueError",
          copy: "the views differ: (strides|storage offset)",
          shifted: "the views differ: storage offset|tensorplay raised RuntimeError"}  # (or out of bounds)


@pytest.mark.parametrize("fault", list(FAULTS), ids=lambda f: f.__name__)
def test_the_oracle_catches_an_injected_fault(fault, capped_address_space):
    for number in range(200):
        case = fuzz_strides.draw_case(number, seed=0)
        try:
            fuzz_strides.check(case)
        except fuzz_strides.Failure:
            continue  # a case that fails anyway proves nothing about the fault
        try:
            fuzz_strides.check(case, fault)
        except fuzz_strides.Failure as e:
            assert re.search(FAULTS[fault], str(e)), str(e)
            return
    pytest.fail(f"{fault.__name__} went unnoticed in 200 cases")


def test_a_crash_and_a_hang_fail_their_cases_and_the_fuzzer_goes_on():
    result = fuzz_strides.run(3, seed=0, timeout=3, crash_and_hang=True)  # case 1 crashes, case 2 hangs
    assert result.tried == 3
    (crash_case, crash), (hang_case, hang) = result.failures
    assert crash_case == 1 and "tensorplay crashed (" in crash, crash  # by SIGSEGV; under ASan, its exit status
    assert hang_case == 2 and "tensorplay hung" in hang, hang
    assert "\n  x = " in crash and "\n  x = " in hang  # the case that crashed or hung, as an expression


@pytest.mark.parametrize("expression", [
    "tp.ones(4).as_strided((3,), (2**61,))",
    "tp.ones(4).as_strided((3,), (2**62,))",
    "tp.ones(4).as_strided((3,), (1,), 2**62)",
])
def test_storage_size_overflow_is_refused(expression):
    code = f"import tensorplay as tp\ntry:\n    {expression}\nexcept RuntimeError as e:\n    print('RuntimeError', e)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("RuntimeError") and "Storage size calculation overflowed" in result.stdout, \
        result.stdout


# What the fuzzer found, pinned: each expression gives PyTorch's view (shape, strides, offset) or
# raises PyTorch's kind of error. Most were signed overflows in the view arithmetic.
FOUND = [
    "m.ones(()).view()", "m.ones(()).reshape()", "m.ones(()).permute()", "m.ones(2).expand()",
    "m.arange(3).expand(1, 3)", "m.arange(3).expand_as(m.zeros(1, 3))", "m.arange(3).expand(1, 3)[1:]",
    "m.ones(()).expand(1)", "m.arange(4).reshape(4, 1).t().flatten(1)",
    "m.zeros(0).view(2**63 - 1, -1, 2**61)", "m.arange(4).reshape(2, 2)[::2**62]",
    "m.arange(20).reshape(2, 5, 2)[-1:2**31 - 1:2**62, ::3]", "m.zeros(4).narrow(0, 4, 2**63 - 1)",
    "m.zeros(0).as_strided((0, 4), (1, 2**62)).select(1, 2)", "m.zeros(0).as_strided((0, 4), (1, 2**62))[:, 2:]",
    "m.zeros(0).chunk(2**63 - 1)", "m.zeros(0).as_strided((0, 2**62, 2**62), (5, 2**62, 1))",
    "m.zeros(0).requires_grad_().as_strided((0, 4), (1, 2**62)).as_strided((0, 4), (1, 2**62))",
]


def view_or_error(expression, m):
    try:
        y = eval(expression, {"m": m})
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return tuple(y.shape), y.stride(), y.storage_offset()


@pytest.mark.parametrize("expression", FOUND)
def test_found_views_and_errors_are_torchs(expression):
    assert view_or_error(expression, tp) == view_or_error(expression, __import__("torch"))


def test_empty_tensors_of_huge_sizes_list_as_torch_does():
    assert tp.zeros(0, 2**62).tolist() == [] and tp.zeros(2, 0, 2**62).tolist() == [[], []]

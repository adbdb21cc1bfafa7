"""Op fuzzing (tests/fuzz/fuzz_ops.py) on a short budget: every op of op_table.TABLE gets a few
hypothesis examples with random shapes, dtypes, layouts, devices and wrong argument types, checked
against PyTorch. `make fuzz` runs the long budget; TP_FUZZ_EXAMPLES raises this one.

The examples run in worker processes (a crash or a hang fails the op, not pytest) and are the
same on every run. The fuzzer's oracle is checked here too, with faults injected on purpose, and
the bugs it found are pinned down by the regression cases at the end.
"""

import os
import subprocess
import sys
import warnings

import pytest
import torch

import fuzz_scripts
import tensorplay
from op_table import TABLE
from test_errors import builtin_class, names_op
from test_ops import EXCEPTIONS, Mismatch, assert_same

EXAMPLES = int(os.environ.get("TP_FUZZ_EXAMPLES", "10"))

fuzz_ops = fuzz_scripts.load("fuzz_ops")


@pytest.fixture(scope="module")
def session():
    """One run of the fuzzer over the whole table, shared by the per-op tests."""
    return fuzz_ops.run_session(fuzz_ops.TABLE_INDICES, EXAMPLES, jobs=2)


# Findings not fixed yet, each a different exception class or message on invalid input than
# torch's (no crash, no wrong value); the issue note lists them as the next fixes. Each must still
# fail, so the fix removes its line.
KNOWN_FINDINGS = {
    "scatter_reduce.amin": "checks reduce= before the index/src dims torch checks first",
    "Tensor.index_put": "the C++ index_put checks bounds before shapes, and float indices give RuntimeError",
    "index_put_": "the same checks as Tensor.index_put",
    "torch.grid_sampler_2d": "nn.functional.grid_sample's checks where torch's kernel has others",
    "torch.affine_grid_generator": "ValueError where torch raises RuntimeError or IndexError",
    "torch.binary_cross_entropy_with_logits": "refuses target sizes torch broadcasts; takes int64 input",
    "torch.margin_ranking_loss": "nn.functional's equal-dims check, where torch broadcasts",
    "torch.lstm": "errors from the weight count do not name the op; dims checked in another order",
    "torch.gru": "as torch.lstm",
    "torch.rnn_tanh": "as torch.lstm",
    "torch.rnn_relu": "as torch.lstm",
}


@pytest.mark.parametrize("index", fuzz_ops.TABLE_INDICES, ids=[op.label for op in TABLE])
def test_op_survives_fuzzing(session, index):
    failures = session.failures[index]
    if TABLE[index].label in KNOWN_FINDINGS:
        assert failures, f"{TABLE[index].label} now survives fuzzing: remove it from KNOWN_FINDINGS"
        return
    if failures:
        pytest.fail(fuzz_ops.format_failures(index, failures), pytrace=False)
    assert session.counts[index] == EXAMPLES


def test_workers_exit_cleanly(session):
    """An interpreter that has run every op exits with status 0 (a global Python object released
    after finalization once aborted it)."""
    assert not session.exit_failures, "\n".join(session.exit_failures)


# ---------------------------------------------------------------------------------------------
# The fuzzer's own checks: the generator covers what it promises, the oracle catches faults.

def generated(label, examples=300):
    found = []
    fuzz_ops.for_examples(fuzz_ops.LABELS.index(label), examples, found.append)
    return found


def test_generation_is_deterministic():
    first = [e.describe(values=True) for e in generated("add", 40)]
    second = [e.describe(values=True) for e in generated("add", 40)]
    assert first == second


def test_generation_covers_shapes_layouts_dtypes_devices_and_wrong_types():
    examples = generated("add") + generated("matmul") + generated("sum")
    text = "\n".join(e.describe() for e in examples)
    args = [a for e in examples for a in fuzz_ops.tensor_args(e)]
    shapes = [tuple(a.shape) for a in args]
    assert any(s == () for s in shapes), "0-dim"
    assert any(0 in s for s in shapes), "empty"
    assert any(len(s) == 4 for s in shapes), "rank 4"
    for layout in ("transpose(", "permute(", "expand(", "narrow(", ":1000]", "t["):
        assert layout in text, layout
    assert "on cuda" in text
    assert "wrong type" in text
    assert "bogus_keyword" in text
    # dtypes beyond the op's list: matmul lists no int8, bool or uint8
    matmul = [a.base.dtype.name for e in examples if e.op.name == "matmul" for a in fuzz_ops.tensor_args(e)]
    assert {"int8", "bool", "uint8"} & set(matmul)
    forms = {e.form.label for e in examples}
    assert {"add", "Tensor.add", "Tensor.add_", "sum", "Tensor.sum", "matmul", "Tensor.matmul"} <= forms


FAULTS = {
    "fault.wrong_values": "values differ",
    "fault.wrong_dtype": "dtype",
    "fault.wrong_kind": "ValueError where torch raised RuntimeError",
    "fault.unnamed": "message does not name the op",
    "fault.hang": "hang",    # (before the crash: no worker is restarted after it, the queue being empty)
    "fault.crash": "crash",
}


def test_fuzzer_catches_injected_faults():
    indices = [fuzz_ops.LABELS.index(label) for label in FAULTS]
    result = fuzz_ops.run_session(indices, examples=4, jobs=2, timeout=5)
    for index, (label, expected) in zip(indices, FAULTS.items()):
        keys = [f["key"] for f in result.failures[index]]
        assert any(expected in key for key in keys), f"{label}: {keys}"
    crash = next(f for f in result.failures[indices[5]] if "crash" in f["key"])
    # SIGSEGV, or AddressSanitizer's report of the SEGV under `make test-asan`
    assert "SEGV" in crash["message"] and crash["example"].startswith("fault.crash(")


def test_cuda_examples():
    """On "cuda" the op agrees with PyTorch on the CPU; without a CUDA build (as here), making a cuda
    tensor raises a RuntimeError that names the op and CUDA."""
    examples = [e for e in generated("add", 200) if e.device == "cuda"]
    assert examples
    for example in examples:
        assert fuzz_ops.check(example) is None, example.describe()
    if not tensorplay.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"^\[\w+\] .*CUDA"):
            tensorplay.ones(2).to("cuda")


# ---------------------------------------------------------------------------------------------
# Regressions: the bugs the fuzzer found, one case each, checked as the fuzzer checks them (the
# second field names the op, as in test_errors.py).

A = "[[0.45507812, 0.6171875, -0.08105469], [2.234375, 2.53125, 2.296875]]"
B = ("[[1.875, -2.890625, 2.171875, 1.765625], [-2.03125, 2.171875, -0.58984375, 1.5625], "
     "[-0.640625, -2.234375, 1.2109375, -2.140625]]")
C = "[[-0.26953125, -2.875], [-2.75, -1.1640625], [-2.875, 1.3671875], [0.9765625, -1.9296875]]"

REGRESSIONS = [
    # In-place writes into a tensor whose elements share memory (expand) are refused, first.
    ("m.ones(1).expand(3).add_(1)", "add_"),
    ("m.ones(1).expand(3).mul_(m.ones(3))", "mul_"),
    ("m.ones(1, dtype=m.bool).expand(3).trunc_()", "trunc_"),
    ("m.ones(1).expand(3).nan_to_num_()", "nan_to_num_"),
    ("m.ones(1).expand(3).clamp_(0, 1)", "clamp_"),
    ("m.ones(1).expand(3).lerp_(m.ones(3), 0.5)", "lerp_"),
    ("m.ones(1).expand(3).copy_(m.zeros(3))", "copy_"),
    ("m.zeros(1).expand(3).scatter_(0, m.tensor([0]), m.ones(1))", "scatter_"),
    ("m.ones(1).expand(3).fill_(2)", "fill_"),          # allowed, as in PyTorch
    ("m.ones(1, 0).expand(3, 0).add_(1)", "add_"),      # nothing is written twice
    # PyTorch's exception kinds and check order.
    ("m.nn.functional.gelu(m.ones(2), approximate='tanhx')", "gelu"),
    ("m.div(m.ones(2), 2, rounding_mode='trun')", "div"),
    ("m.bitwise_or(m.ones(2, 3), m.ones(2, 4))", "bitwise_or"),
    ("m.lerp(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64), m.ones(4, dtype=m.int64))", "lerp"),
    ("m.addcmul(m.ones(3, dtype=m.bool), m.ones(4, dtype=m.bool), m.ones(3, dtype=m.bool))", "addcmul"),
    ("m.clamp(m.ones(3, dtype=m.bool), min=m.ones(4, dtype=m.bool), max=m.ones(3, dtype=m.bool))", "clamp"),
    ("m.narrow(m.ones(0, 1), 1, -2, -5)", "narrow"),
    ("m.addbmm(m.ones(3, 5), m.ones(4), m.ones(2, 4, 5))", "addbmm"),
    ("m.baddbmm(m.ones(2, 3, 5), m.ones(2, 3, 4), m.ones(4, 5))", "baddbmm"),
    ("m.index_select(m.tensor(1.0), 0, m.tensor([0, 0]))", "index_select"),
    ("m.ones(()).flatten(1)", "flatten"),
    ("m.trace(m.ones(3, 3, dtype=m.bool))", "trace"),
    ("m.cosine_similarity(m.ones(3, 2, dtype=m.int64), m.ones(3, 2, dtype=m.int64))", "cosine_similarity"),
    ("m.ones(2, 3).reshape([[1.0]])", "reshape"),
    ("m.linalg.vector_norm(m.ones(3), ord={'x': 1})", "linalg.vector_norm"),
    ("m.tensor(1.0).size(0)", "size"),
    ("m.mv(m.tensor(1.0), m.ones(0))", "mv"),
    ("m.index_select(m.ones(3, 4), 0, m.tensor([-1]))", "index_select"),  # no negative indices
    ("m.index_select(m.tensor(1.0), -6, m.tensor([0, 1]))", "index_select"),
    ("m.cat([m.ones(1), m.tensor(1.0)], 1)", "cat"),
    ("m.split(m.tensor(True), [3, 0, 3], 1)", "split|split_with_sizes"),
    ("m.tensor(1.0).unflatten(-1, (3, -1))", "unflatten"),
    ("m.ones(1, 1).expand(-1, -5)", "expand"),  # once a tensor of size -5
    ("m.ones(0).norm(p=float('inf'))", "norm"),
    ("m.cdist(m.ones(2, 3, dtype=m.bfloat16), m.ones(2, 3, dtype=m.bfloat16), p=-1.0)", "cdist"),
    ("m.tensordot(m.ones(3, 4), m.ones(4, 3), dims=([1],))", "tensordot"),
    ("m.tensordot(m.ones(3, 4), m.ones(4, 3), dims=m.ones(2))", "tensordot"),
    ("m.linalg.multi_dot(m.ones(2))", "linalg.multi_dot|multi_dot"),
    ("m.cat(m.ones(2))", "cat"),
    ("m.ones(2, 3).view(5, m.ones(2))", "view"),
    # Numbers PyTorch converts with an overflow check (an unsigned dtype takes small negatives).
    ("m.clamp(m.ones(3, dtype=m.float16), min=1e30)", "clamp"),
    ("m.addcmul(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64), value=float('inf'))",
     "addcmul"),
    ("m.ones(3, dtype=m.int64).scatter(0, m.tensor([0]), float('inf'))", "scatter"),
    ("m.ones(3, dtype=m.float16).masked_fill(m.tensor([True, False, True]), 1e30)", "masked_fill"),
    ("m.full((2,), -1, dtype=m.uint8)", "full"),
    ("m.round(m.ones(3, dtype=m.int16), decimals=0)", "round"),  # the decimals overload, floats only
    ("m.bmm(m.ones(2, 3, 4, dtype=m.bool), m.ones(2, 4, 5, dtype=m.float64))", "bmm"),  # bool before the pair
    ("m.baddbmm(m.ones(2, 3, 5, dtype=m.bool), m.ones(2, 3, 4, dtype=m.bool), m.ones(2, 4, 5, dtype=m.float64))",
     "baddbmm"),
    ("m.baddbmm(m.ones(2, 3, 5, dtype=m.bfloat16), m.ones(2, 3, 4, dtype=m.bool), m.ones(2, 4, 5, dtype=m.bfloat16))",
     "baddbmm"),  # the input's dtype against batch1's before batch1's support
    ("m.trace(m.ones(5, dtype=m.bool))", "trace"),
    ("m.cross(m.ones(4, 3), m.ones(4, 2), dim=4)", "cross"),
    ("m.renorm(m.ones(3, 3, dtype=m.int32), 6, 2, 1.0)", "renorm"),
    ("m.tensordot(m.ones(5, dtype=m.uint8), m.ones(5, 2, 3, dtype=m.uint8), dims=([0, 2], [2, 0]))", "tensordot"),
    ("m.zeros(1).expand(3, 4).scatter_(2, m.zeros(3, 2, dtype=m.int64), 1.5)", "scatter_"),
    ("m.linalg.matrix_norm(m.ones(4, 3, 3, 0), ord=-1, keepdim=True)", "linalg.matrix_norm"),
    # Errors that name the op called, not the op it is built on.
    ("m.clip(m.ones(3), min=m.ones(4))", "clip|clamp"),
    ("m.logsumexp(m.ones(2, 3), dim=3)", "logsumexp"),
    ("m.addbmm(m.ones(3, 4), m.ones(0, 3, 4), m.ones(0, 4, 5))", "addbmm"),
    ("m.addmm(m.ones(3, 4), m.ones(3, 4), m.ones(4, 5), beta=0)", "addmm"),  # beta = 0 still checks the shape
    ("m.linalg.matrix_norm(m.ones(2, 3, dtype=m.int64))", "linalg.matrix_norm"),
    ("m.mv(m.ones(2, 3, dtype=m.bool), m.ones(3, dtype=m.bool))", "mv"),
    ("m.einsum('ij,jk->ik', m.ones(2, 3, dtype=m.int64), m.ones(3, 2))", "einsum"),
    ("m.einsum('ij,jk->ik', m.ones(2, 3), 'a')", "einsum"),
    ("m.linalg.multi_dot([m.ones(2, 3, dtype=m.bool), m.ones(3, 2, dtype=m.bool)])", "linalg.multi_dot|multi_dot"),
    ("m.dist(m.ones(3, dtype=m.bfloat16), m.ones(3, dtype=m.bool))", "dist"),
    ("m.tensor(1.0).clamp_(min=m.ones(1), max=m.tensor(0.5))", "clamp_"),
    # Results PyTorch gives.
    ("m.amax(m.arange(6).reshape(2, 3), dim=None)", "amax"),
    ("m.ones(4, 0).split(2, 1)", "split"),
    ("m.dist(m.arange(3), m.ones(3, dtype=m.float16))", "dist"),
    ("m.clamp(m.ones(3), min=-1.5, max=float('nan'))", "clamp"),
    ("m.clamp(m.ones((), dtype=m.float16), min=1.5, max=m.tensor(2.0, dtype=m.float16))", "clamp"),
    ("m.add(m.ones(2), 1, alpha=m.tensor(2))", "add"),
    ("m.lerp(m.ones(2, dtype=m.bfloat16), m.ones(2, dtype=m.bfloat16), m.tensor(-2, dtype=m.int32))", "lerp"),
    ("m.gather(m.tensor(5.0), 0, m.tensor([0, 0]))", "gather"),
    ("m.gather(m.ones(4, 4), 1, m.ones(0, 4, 3, dtype=m.int64))", "gather"),
    ("m.tensor([5.0, 6.0]).scatter(0, m.tensor(1), m.tensor(7.0))", "scatter"),
    ("m.add(2, m.ones(3, dtype=m.int16))", "add"),  # a number as the input, as PyTorch allows
    ("m.sub(2.5, m.arange(3), alpha=2)", "sub"),
    ("m.mul(2, 3.5)", "mul"),
    ("m.div(7, m.arange(1, 4), rounding_mode='floor')", "div"),
    ("m.remainder(7, m.arange(1, 4))", "remainder"),
    ("m.ones(2, 3).sum(dim=m.tensor(1))", "sum"),  # a 0-dim integer tensor is an int
    ("m.tensordot(m.ones(3, 4), m.full((1, 1), 2.0), dims=([1], [0]))", "tensordot"),  # size 1 broadcasts
    ("m.cdist(m.ones(0, 3, dtype=m.bfloat16), m.ones(2, 3, dtype=m.bfloat16))", "cdist"),
    ("m.pdist(m.ones(1, 2, dtype=m.float16))", "pdist"),
    ("m.ones(1, dtype=m.int64).expand(3).nan_to_num_()", "nan_to_num_"),  # nothing to write for integers
    ("m.clip(m.tensor(-0.9, dtype=m.float64), min=m.zeros(3, 4, dtype=m.int16), max=m.ones(3, 4, dtype=m.bfloat16))",
     "clip"),  # bfloat16: the 0-dim input does not decide the dtype
    ("m.where(m.tensor(1))", "where"),
    ("m.tensor([[1e30], [7e4]]).norm(p=3, dim=1)", "norm"),  # one number's norm is its magnitude, exactly
    ("m.linalg.vector_norm(m.tensor([[1e30], [7e4]]), ord=0.5, dim=1)", "linalg.vector_norm"),
    ("m.addr(m.ones(4, dtype=m.bool), m.ones(3, dtype=m.bool), m.zeros(4, dtype=m.bool), beta=2, alpha=3)", "addr"),
    ("m.einsum('i,j->ij', m.arange(3), m.tensor([True, False, False, True]))", "einsum"),  # no sum: mul promotes
    ("m.einsum('ij,jk->ik', m.tensor([[0], [2], [0]]), m.ones(4, 5))", "einsum"),  # j of size 1 on one side
    ("m.linalg.matrix_norm(m.ones(4, 0, 1), ord=float('inf'))", "linalg.matrix_norm"),
    # multi_dot multiplies in PyTorch's order, A @ (B @ C) here, which decides the rounding.
    (f"m.linalg.multi_dot([m.tensor({A}, dtype=m.bfloat16), m.tensor({B}, dtype=m.bfloat16), "
     f"m.tensor({C}, dtype=m.bfloat16)])", "linalg.multi_dot"),
]


def evaluate(expr, module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, {"m": module}), None
        except Exception as e:
            return None, e


@pytest.mark.parametrize("expr,names", REGRESSIONS, ids=[expr for expr, _ in REGRESSIONS])
def test_regression(expr, names):
    expected, theirs = evaluate(expr, torch)
    actual, ours = evaluate(expr, tensorplay)
    if theirs is not None:
        assert ours is not None, f"torch raised {theirs!r}; tensorplay returned {actual!r}"
        assert builtin_class(ours) is builtin_class(theirs), f"torch: {theirs!r}, tensorplay: {ours!r}"
        if isinstance(theirs, EXCEPTIONS):
            assert names_op(str(ours), names), f"message does not name {names!r}: {ours!r}"
        return
    assert ours is None, f"torch returned {expected!r}; tensorplay raised {ours!r}"
    try:
        assert_same(actual, expected, {})
    except Mismatch as e:
        pytest.fail(str(e), pytrace=False)


CRASHES = [
    # A 0-dim src read past its end (SIGSEGV).
    ("tp.zeros(3, 4).scatter_add_(1, tp.zeros(3, 2, dtype=tp.int64), tp.tensor(1.0))", "RuntimeError"),
    ("tp.scatter(tp.zeros(3, 4), 1, tp.zeros(3, 2, dtype=tp.int64), tp.tensor(1.0))", "RuntimeError"),
    # A contracted dim of a 0-dim tensor written past the end of an empty vector (SIGSEGV).
    ("tp.tensordot(tp.tensor(1.0), tp.ones(5, 2, 3), dims=([0, 2], [2, 0]))", "IndexError"),
    # An integer divisor that the dtype holds as 0 (int16 // -2**63) divided by zero (SIGFPE).
    ("tp.div(tp.ones(3, 4, dtype=tp.int16), -2 ** 63, rounding_mode='trunc')", "RuntimeError"),
    ("tp.ones(3, dtype=tp.int16) % 65536", "RuntimeError"),
]


@pytest.mark.parametrize("expr,kind", CRASHES, ids=[expr for expr, _ in CRASHES])
def test_crash_regression_raises(expr, kind):
    """Each in its own interpreter, which must survive."""
    code = ("import tensorplay as tp\n"
            f"try:\n    {expr}\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"the interpreter died with return code {result.returncode}: {result.stderr[-500:]}"
    assert result.stdout.startswith(f"{kind} ["), result.stdout + result.stderr[-500:]

"""Bad input raises the Python exception PyTorch raises, with a message that names the op, and never crashes.

Each case is an expression in `m`, evaluated with m = torch (the oracle) and m = tensorplay. The second field lists
the names that count as naming the op in tensorplay's message ("a|b": either).
"""

import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp


ERROR_CASES = [
    # (expression in m, names the op)
    ("m.ones(2, 3) + m.ones(4)", "add"),
    ("m.add(m.ones(2, 3), m.ones(3, 2))", "add"),
    ("m.ones(2, 3).add_(m.ones(2, 2, 3))", "add_"),
    ("m.ones(3).mul_(m.ones(2, 3))", "mul_"),
    ("m.ones(2, 3) * m.ones(3, 2)", "mul"),
    ("m.ones(2, 3) @ m.ones(2, 3)", "matmul|mm"),
    ("m.matmul(m.ones(3), m.ones(4))", "matmul|dot"),
    ("m.matmul(m.ones(2, 3, 4), m.ones(2, 5, 6))", "matmul|bmm"),
    ("m.mm(m.ones(2, 3), m.ones(2, 3))", "mm"),
    ("m.mm(m.ones(3), m.ones(3, 2))", "mm"),
    ("m.mv(m.ones(2, 3), m.ones(2))", "mv"),
    ("m.bmm(m.ones(2, 2, 3), m.ones(3, 3, 2))", "bmm"),
    ("m.bmm(m.ones(2, 3), m.ones(3, 2))", "bmm"),
    ("m.dot(m.ones(3), m.ones(4))", "dot"),
    ("m.cat([m.ones(2, 3), m.ones(2, 4)])", "cat"),
    ("m.cat([m.ones(2, 3), m.ones(2)])", "cat"),
    ("m.cat([])", "cat"),
    ("m.cat([m.ones(2, 3), m.ones(2, 3)], dim=2)", "cat"),
    ("m.stack([m.ones(2, 3), m.ones(3, 2)])", "stack"),
    ("m.stack([])", "stack"),
    ("m.stack([m.ones(2), m.ones(2)], dim=3)", "stack"),
    ("m.ones(2, 3).view(4)", "view"),
    ("m.ones(2, 3).view(-1, -1)", "view"),
    ("m.ones(2, 3).t().view(6)", "view"),
    ("m.ones(2, 3).view(-2, 3)", "view"),
    ("m.ones(2, 3).reshape(4)", "reshape|view"),
    ("m.ones(3).expand(2, 4)", "expand"),
    ("m.broadcast_to(m.ones(3), (2, 4))", "broadcast_to|expand"),
    ("m.index_select(m.ones(3), 0, m.tensor([0.0]))", "index_select"),
    ("m.index_select(m.ones(3), 0, m.tensor([3]))", "index_select"),
    ("m.gather(m.ones(3), 0, m.tensor([0.0]))", "gather"),
    ("m.gather(m.ones(3), 0, m.tensor([5]))", "gather"),
    ("m.ones(3)[m.tensor([0.0])]", "index"),
    ("m.bitwise_and(m.ones(2), m.ones(2))", "bitwise_and"),
    ("m.ones(2) | m.ones(2)", "bitwise_or"),
    ("m.ones(2) ^ m.ones(2)", "bitwise_xor"),
    ("~m.ones(2)", "bitwise_not"),
    ("m.tensor([1, 2]) & 1.5", "bitwise_and"),
    ("m.ones(2, 3).sum(dim=2)", "sum"),
    ("m.ones(2, 3).sum(dim=-3)", "sum"),
    ("m.softmax(m.ones(2, 3), dim=5)", "softmax"),
    ("m.ones(2, 3).transpose(0, 3)", "transpose"),
    ("m.ones(2, 3).unsqueeze(4)", "unsqueeze"),
    ("m.ones(2, 3).squeeze(5)", "squeeze"),
    ("m.ones(2, 3).size(5)", "size"),
    ("m.ones(2, 3).stride(2)", "stride"),
    ("m.ones(2, 3).flatten(0, 5)", "flatten"),
    ("m.ones(2, 3).select(3, 0)", "select"),
    ("m.ones(2, 3).select(0, 2)", "select"),
    ("m.ones(2, 3).narrow(2, 0, 1)", "narrow"),
    ("m.ones(2, 3).narrow(1, 2, 2)", "narrow"),
    ("m.ones(2, 3).argmax(dim=2)", "argmax"),
    ("m.ones(2, 3).max(dim=2)", "max"),
    ("m.ones(2, 3).mean(dim=3)", "mean"),
    ("m.ones(2, 3).cumsum(dim=2)", "cumsum"),
    ("m.movedim(m.ones(2, 3), 0, 2)", "movedim"),
    ("m.ones(2, 3).permute(0)", "permute"),
    ("m.ones(2, 3).permute(0, 0)", "permute"),
    ("m.ones(2, 3).flip(2)", "flip"),
    ("m.zeros(-1)", "zeros"),
    ("m.ones(2, -3)", "ones"),
    ("m.empty(-1)", "empty"),
    ("m.full((-1,), 0.0)", "full"),
    ("m.rand(-1)", "rand"),
    ("m.randn(2, -2)", "randn"),
    ("m.randint(0, 5, (-1,))", "randint"),
    ("m.randint(5, 5, (2,))", "randint"),
    ("m.randperm(-1)", "randperm"),
    ("m.eye(-1)", "eye"),
    ("m.linspace(0, 1, -1)", "linspace"),
    ("m.arange(0, 10, -1)", "arange"),
    ("m.arange(10, 0)", "arange"),
    ("m.arange(0, 10, 0)", "arange"),
    ("m.ones(3).new_zeros(-2)", "new_zeros|zeros"),
    ("m.full((2,), 300, dtype=m.uint8)", "full"),
    ("m.full((2,), float('nan'), dtype=m.int64)", "full"),
    ("m.zeros(3, dtype=m.int8).fill_(1000)", "fill_"),
    ("m.full((2,), 1e10, dtype=m.int32)", "full"),
    ("m.masked_fill(m.ones(3), m.tensor([1, 0, 1]), 0.0)", "masked_fill"),
    ("m.masked_fill(m.ones(3), m.tensor([1.0, 0.0, 1.0]), 0.0)", "masked_fill"),
    ("m.ones(3).masked_fill_(m.tensor([1, 0, 1], dtype=m.uint8), 0.0)", "masked_fill_|masked_fill"),
    ("m.masked_fill(m.ones(3), m.tensor([True, False]), 0.0)", "masked_fill"),
    ("m.masked_fill(m.ones(3), m.tensor([True, False, True]), m.ones(3))", "masked_fill"),
    ("m.tensor([1, 2]) // 0", "floor_divide"),
    ("m.floor_divide(m.tensor([1, 2]), m.tensor([1, 0]))", "floor_divide"),
    ("m.tensor([5]) % 0", "remainder"),
    ("m.remainder(m.tensor([5], dtype=m.int32), m.tensor([0], dtype=m.int32))", "remainder"),
    ("m.div(m.tensor([3]), 0, rounding_mode='trunc')", "div"),
    ("m.div(m.tensor([3]), m.tensor([0]), rounding_mode='floor')", "div"),
    ("m.tensor([3], dtype=m.uint8) // m.tensor([0], dtype=m.uint8)", "floor_divide"),
    ("m.tensor([3]).floor_divide_(0)", "floor_divide_|floor_divide"),
    ("m.mm(m.ones(2, 2), m.ones(2, 2, dtype=m.float64))", "mm"),
    ("m.matmul(m.ones(2, 2), m.ones(2, 2, dtype=m.float16))", "matmul|mm"),
    ("m.ones(2, 2) @ m.ones(2, 2, dtype=m.bfloat16)", "matmul|mm"),
    ("m.bmm(m.ones(1, 2, 2), m.ones(1, 2, 2, dtype=m.float64))", "bmm"),
    ("m.mv(m.ones(2, 2, dtype=m.float64), m.ones(2))", "mv"),
    ("m.dot(m.ones(2), m.ones(2, dtype=m.int64))", "dot"),
    ("m.matmul(m.ones(3), m.ones(3, dtype=m.float64))", "matmul|dot"),
    ("m.ones(2).item()", "item"),
    ("m.where(m.ones(3), m.ones(3), m.zeros(3))", "where"),
    ("m.ones(2).chunk(0)", "chunk"),
    ("m.ones(3).scatter(0, m.tensor([5]), m.ones(1))", "scatter"),
    ("m.tensor([1, 2]).add_(1.5)", "add_|add"),
    ("m.tensor([True]).mul_(2)", "mul_|mul"),
    ("m.ones(2, 3).unflatten(1, (2, 2))", "unflatten"),
    ("m.ones(2, 3).split(0)", "split"),
    ("m.ones(2, 3).repeat(2)", "repeat"),
    ("m.outer(m.ones(2, 2), m.ones(2))", "outer"),
    ("m.ones(2).fill_(m.ones(2))", "fill_"),
    ("m.ones(2, 3).copy_(m.ones(3, 2))", "copy_"),
    ("m.broadcast_tensors(m.ones(2), m.ones(3))", "broadcast_tensors|broadcast"),
    ("m.ones(2, 3).std(dim=4)", "std"),
    ("m.log_softmax(m.ones(3), dim=1)", "log_softmax"),
]


def raised(expr, module):
    """The exception that evaluating expr in module raises, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            eval(expr, {"m": module})
        except Exception as e:
            return e
    return None


def builtin_class(exc):
    """The nearest built-in exception class: torch raises subclasses such as torch.AcceleratorError."""
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


def names_op(message, names):
    """Whether the message names one of the ops; an in-place op and its out-of-place form name each other."""
    candidates = set()
    for name in names.split("|"):
        candidates |= {name, name.rstrip("_"), name.rstrip("_") + "_"}
    return any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) for name in candidates)


IDS = [expr for expr, _ in ERROR_CASES]


@pytest.mark.parametrize("expr,names", ERROR_CASES, ids=IDS)
def test_raises_the_same_exception_class_as_torch(expr, names):
    theirs = raised(expr, torch)
    assert theirs is not None, "torch accepts this; the case is wrong"
    ours = raised(expr, tp)
    assert ours is not None, f"tensorplay returned normally; torch raised {theirs!r}"
    assert builtin_class(ours) is builtin_class(theirs), f"torch: {theirs!r}, tensorplay: {ours!r}"


@pytest.mark.parametrize("expr,names", ERROR_CASES, ids=IDS)
def test_message_names_the_op(expr, names):
    ours = raised(expr, tp)
    assert ours is not None, "tensorplay returned normally"
    assert names_op(str(ours), names), f"message does not name {names!r}: {ours!r}"


ZERO_DIVISIONS = [expr for expr, _ in ERROR_CASES if "ZeroDivision" in str(raised(expr, torch))]


@pytest.mark.parametrize("expr", ZERO_DIVISIONS)
def test_integer_division_by_zero_says_zero_division(expr):
    ours = raised(expr, tp)
    assert isinstance(ours, RuntimeError) and "ZeroDivisionError" in str(ours), repr(ours)


DTYPE_WORDS = {
    "float32": ["float32", "float", "Float"], "float64": ["float64", "double", "Double"],
    "float16": ["float16", "half", "Half"], "bfloat16": ["bfloat16", "BFloat16"], "int64": ["int64", "long", "Long"],
}
MIXED_DTYPE_PRODUCTS = [
    ("m.mm(m.ones(2, 2), m.ones(2, 2, dtype=m.float64))", "float32", "float64"),
    ("m.matmul(m.ones(2, 2), m.ones(2, 2, dtype=m.float16))", "float32", "float16"),
    ("m.ones(2, 2) @ m.ones(2, 2, dtype=m.bfloat16)", "float32", "bfloat16"),
    ("m.bmm(m.ones(1, 2, 2), m.ones(1, 2, 2, dtype=m.float64))", "float32", "float64"),
    ("m.mv(m.ones(2, 2, dtype=m.float64), m.ones(2))", "float64", "float32"),
    ("m.dot(m.ones(2), m.ones(2, dtype=m.int64))", "float32", "int64"),
    ("m.matmul(m.ones(3), m.ones(3, dtype=m.float64))", "float32", "float64"),
    ("m.matmul(m.ones(2, 3, 4, dtype=m.float64), m.ones(4, 5))", "float64", "float32"),
]


@pytest.mark.parametrize("expr,a,b", MIXED_DTYPE_PRODUCTS, ids=[e for e, _, _ in MIXED_DTYPE_PRODUCTS])
def test_mixed_dtype_product_names_both_dtypes(expr, a, b):
    assert isinstance(raised(expr, torch), RuntimeError)
    ours = raised(expr, tp)
    assert isinstance(ours, RuntimeError), repr(ours)
    message = str(ours)
    for dtype in (a, b):
        assert any(re.search(rf"(?<!\w){word}(?!\w)", message) for word in DTYPE_WORDS[dtype]), \
            f"{dtype} not named in {message!r}"


# Edge cases that are not errors: tensorplay must give torch's values, not raise.
NOT_ERRORS = [
    "m.tensor([1.0, -1.0, 0.0]) / 0", "m.tensor([1, -1, 0]) / 0", "m.tensor([-1.0, 0.0, 2.0]) // 0.0",
    "m.tensor([1.0, -2.0]) % 0.0", "m.ones(0, 3) @ m.ones(3, 0)", "m.ones(2, 0) @ m.ones(0, 3)",
    "m.tensor([2]) ** m.tensor([-1])", "m.tensor([-2 ** 63]) // -1", "m.ones(0).sum()", "m.ones(0, 3).sum(0)",
    "m.ones(0).prod()", "m.ones(0).mean()", "m.cat([m.ones(0, 3), m.ones(2, 3)])", "m.ones(3).std(correction=5)",
    "m.tensor(float('nan')).long()", "m.ones(2, 3)[5:]", "m.zeros(0).reshape(0, 5, 0)", "m.ones(3).expand(0, 3)",
]


def _as_float64(t):
    return (t.to(torch.float64) if isinstance(t, torch.Tensor) else t.to(tp.float64)).numpy()


@pytest.mark.parametrize("expr", NOT_ERRORS)
def test_edge_case_is_not_an_error(expr):
    theirs = eval(expr, {"m": torch})
    ours = eval(expr, {"m": tp})
    assert repr(ours.dtype).split(".")[-1] == repr(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(_as_float64(ours), _as_float64(theirs))


# Sizes whose byte count overflows: each runs in its own interpreter, so a crash fails one test and not the run.
HUGE_SIZES = [
    "tp.zeros(2 ** 62)", "tp.ones(2 ** 61, dtype=tp.float64)", "tp.empty(2 ** 31, 2 ** 31, 4)",
    "tp.zeros(2 ** 40, 2 ** 40)", "tp.linspace(0, 1, 2 ** 62)", "tp.full((2 ** 62,), 1.0)", "tp.arange(2 ** 62)",
    "tp.ones(3).expand(2 ** 62, 3).contiguous()", "tp.randperm(2 ** 62)",
]


@pytest.mark.parametrize("expr", HUGE_SIZES)
def test_huge_size_raises_runtime_error_without_crashing(expr):
    assert isinstance(raised(expr.replace("tp.", "m."), torch), RuntimeError)
    code = ("import tensorplay as tp\n"
            f"try:\n    t = {expr}\nexcept RuntimeError as e:\n    print('RuntimeError', e)\n"
            "else:\n    print('no error', tuple(t.shape))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"the interpreter died with return code {result.returncode}: {result.stderr[-500:]}"
    assert result.stdout.startswith("RuntimeError"), result.stdout + result.stderr[-500:]


@pytest.mark.parametrize("main_imports_first", [True, False], ids=["after_main", "before_main"])
def test_import_in_a_sub_interpreter_raises_import_error(main_imports_first):
    """The extension lives in one interpreter: a sub-interpreter's import fails cleanly, and the
    main interpreter's import still works after it."""
    code = ("import warnings\nwarnings.simplefilter('ignore')\nimport _xxsubinterpreters as si\n"
            + ("import tensorplay\n" if main_imports_first else "")
            + "try:\n    si.run_string(si.create(), 'import tensorplay')\nexcept Exception as e:\n    print(e)\n"
            "import tensorplay\nprint(tensorplay.ones(2).sum().item())\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"the interpreter died with return code {result.returncode}: {result.stderr[-500:]}"
    assert result.stdout.splitlines() == ["<class 'ImportError'>: tensorplay cannot be imported in a sub-interpreter: "
                                          "import it in the main interpreter", "2.0"]


@pytest.mark.parametrize("op", ["add", "sub"])
def test_integer_alpha_must_fit_the_dtype(op):
    """int32 + 2**62 * b overflows alpha's conversion: an error in PyTorch, never a wrapped answer."""
    a = tp.ones(3, dtype=tp.int32)
    with pytest.raises(RuntimeError, match="without overflow"):
        getattr(tp, op)(a, a, alpha=2 ** 62)
    with pytest.raises(RuntimeError, match="without overflow"):
        getattr(torch, op)(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32), alpha=2 ** 62)
    assert getattr(tp, op)(a, a, alpha=2 ** 20).tolist() == getattr(torch, op)(
        torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32), alpha=2 ** 20).tolist()

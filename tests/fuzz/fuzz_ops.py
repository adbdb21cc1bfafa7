"""Hypothesis-driven fuzzing of every op of tests/python/op_table.py against PyTorch.

    .venv/bin/python tests/fuzz/fuzz_ops.py [--examples N] [--jobs J] [--op LABEL ...]
                                            (N per op, or TP_FUZZ_EXAMPLES=N)

Each example takes one of the op's table samples as a template and mutates it: new shapes of rank
0-4 with sizes 0-5 (kept, made broadcastable, off by one, or random), other dtypes, non-contiguous
views (transposed, permuted, strided slices with steps up to 1000, expanded with stride 0, at a
storage offset), special float values, other dims, sizes and scalars, dtype= arguments,
arguments of a wrong type, an unknown keyword, and now and then the device "cuda". It runs
in both libraries; the only outcomes allowed are
  - torch returns: tensorplay returns the same dtype, shape and values (op_table.TOLERANCES);
  - torch raises one of the documented kinds (test_ops.EXCEPTIONS): tensorplay raises the same
    kind with a message that names the op (test_errors.names_op);
  - "cuda" without a CUDA build: making the inputs raises a RuntimeError that names CUDA.
Where PyTorch's answer is an accident rather than a contract (a kernel that rounds differently for
strided inputs, a check skipped for empty ones, an error of the wrong kind raised while formatting
another), tensorplay's documented answer is accepted: see "accepted differences" below, each rule
as narrow as the accident.
A crash or a hang of tensorplay fails the op at the example it was running: the examples run in
worker processes, and the parent kills a worker that is silent for --timeout seconds.

Generation is derandomized (a fixed seed per op), so a run is reproducible; the last line gives
the number of cases tried. Exit status 0 when every op passed.
"""

import argparse
import json
import math
import os
import pathlib
import re
import select
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field

HERE = pathlib.Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "python"))

import numpy as np  # noqa: E402

from op_table import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMPY_DTYPES, SPECIAL, TABLE, TOLERANCES,  # noqa: E402
                      DType, Maker, Op, View)

CASE_TIMEOUT_S = 60       # a worker silent this long is hung
STARTUP_TIMEOUT_S = 300   # importing torch and tensorplay on a loaded machine
ADDRESS_SPACE_HEADROOM = 6 << 30
MAX_COMPARED_ELEMENTS = 1 << 20  # larger results (views with a huge size) are compared by dtype and shape


# ---------------------------------------------------------------------------------------------
# The ops under test: the table, and faults that the tests inject to see the fuzzer catch them.

def fault_ops():
    """Ops that misbehave in tensorplay on purpose: test_fuzz_ops.py checks that each is caught."""
    import signal

    def unary(label, tp_fn):
        from op_table import unary_samples
        return Op("neg", unary_samples, label=label, method=False,
                  fn=lambda m, x: tp_fn(x) if m.__name__ == "tensorplay" else x.neg(), torch_fn=lambda m, x: x.neg())

    def wrong_kind(x):
        raise ValueError("[neg] a ValueError where torch raises RuntimeError")

    def unnamed(x):
        raise RuntimeError("something went wrong")

    def crash(x):
        os.kill(os.getpid(), signal.SIGSEGV)

    def hang(x):
        time.sleep(3600)

    # torch's neg raises RuntimeError for bool tensors: the error faults show there.
    bool_only = dict(dtypes=("bool",))
    return [
        unary("fault.wrong_values", lambda x: x.abs()),
        unary("fault.wrong_dtype", lambda x: x.neg().double()),
        Op("neg", fault_ops_bool_samples, label="fault.wrong_kind", method=False, **bool_only,
           fn=lambda m, x: wrong_kind(x) if m.__name__ == "tensorplay" else x.neg()),
        Op("neg", fault_ops_bool_samples, label="fault.unnamed", method=False, **bool_only,
           fn=lambda m, x: unnamed(x) if m.__name__ == "tensorplay" else x.neg()),
        unary("fault.crash", crash),
        unary("fault.hang", hang),
    ]


def fault_ops_bool_samples(mk):
    from op_table import S
    return [S("bool", mk((2, 3), dtype="bool"))]


OPS = TABLE + fault_ops()
LABELS = [op.label for op in OPS]
TABLE_INDICES = list(range(len(TABLE)))


# ---------------------------------------------------------------------------------------------
# Names that count as naming an op in an error message (test_errors.names_op's rule, per name).

# Python's operators: the op they reach, and the operator itself (Python's own TypeError for an
# operand of a wrong type names only the symbol).
OPERATOR_NAMES = {
    "add": ["add", "+"], "sub": ["sub", "rsub", "-"], "mul": ["mul", "*"], "truediv": ["div", "true_divide", "/"],
    "floordiv": ["floor_divide", "//"], "mod": ["remainder", "%"], "pow": ["pow", "**"],
    "and": ["bitwise_and", "logical_and", "&"], "or": ["bitwise_or", "logical_or", "|"],
    "xor": ["bitwise_xor", "logical_xor", "^"], "eq": ["eq", "=="], "ne": ["ne", "!="], "lt": ["lt", "<"],
    "le": ["le", "<="], "gt": ["gt", ">"], "ge": ["ge", ">="], "neg": ["neg", "-"], "abs": ["abs"],
    "invert": ["bitwise_not", "~"], "matmul": ["matmul", "@", "mm", "bmm", "dot", "mv"],
}

# Composites whose errors come from the op they are built on, as test_errors.py allows, and
# PyTorch's aliases (by name or by the table's label).
COMPOSITE_NAMES = {
    "matmul": ["mm", "bmm", "dot", "mv"],
    "reshape": ["view"],
    "view_as": ["view"],
    "broadcast_to": ["expand"],
    "expand_as": ["expand"],
    "T": ["t", "permute", "transpose"],
    "swapaxes": ["transpose"],
    "clip": ["clamp"],
    "rsub": ["sub"],
    "split": ["split_with_sizes"],  # split(x, [sizes]) is split_with_sizes, in PyTorch too
    "square": ["pow"],              # square is pow(x, 2), in PyTorch too
    "max.other": ["maximum"],       # max(a, b) is maximum
    "min.other": ["minimum"],
}


def op_names(op):
    name = op.name
    if name.startswith("__") and name.endswith("__"):
        base = name[2:-2]
        if base not in OPERATOR_NAMES and base[0] in "ri":  # __radd__, __iadd__
            base = base[1:]
        return OPERATOR_NAMES[base]
    names = [name, name.split(".")[-1]] + COMPOSITE_NAMES.get(name, []) + COMPOSITE_NAMES.get(op.label, [])
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------------------------
# Inputs. A tensor argument is a base array and a view of it; the view is applied in each library.

@dataclass
class Arg:
    """One tensor argument: base values, a view of them (or none), and a description."""
    base: np.ndarray
    view: object = None        # view(tensor) -> tensor, in either library
    view_text: str = ""
    shape: tuple = ()

    def describe(self, values=False):
        d = f"{dtype_name(self.base)}{list(self.shape)}"
        if self.view_text:
            d += f" as {self.view_text} of base{list(self.base.shape)}"
        if values:
            base = self.base.astype(np.float64) if dtype_name(self.base) == "bfloat16" else self.base
            d += " base values " + np.array2string(base, threshold=200, separator=",").replace("\n", "")
        return d


def dtype_name(array):
    return "bfloat16" if array.dtype == NUMPY_DTYPES["bfloat16"] else array.dtype.name


def describe_value(v, values=False):
    if isinstance(v, Arg):
        return v.describe(values)
    if isinstance(v, list):
        return "[" + ", ".join(describe_value(x, values) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(describe_value(x, values) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, DType):
        return f"m.{v}"
    if isinstance(v, float) and not math.isfinite(v):
        return f"float('{v}')"
    return repr(v)


@dataclass
class Example:
    op: Op
    form: object              # test_ops.Form
    device: str
    dtype: str
    sample: str
    args: list
    kwargs: dict
    notes: list = field(default_factory=list)
    wrong: object = None      # the argument of a wrong type put in, if any

    def describe(self, values=False):
        parts = [describe_value(a, values) for a in self.args]
        parts += [f"{k}={describe_value(v, values)}" for k, v in self.kwargs.items()]
        where = f" on {self.device}" if self.device != "cpu" else ""
        note = f"  [{'; '.join(self.notes)}]" if self.notes else ""
        return f"{self.form.label}({', '.join(parts)}){where}  <- sample {self.sample!r} in {self.dtype}{note}"


# ---------------------------------------------------------------------------------------------
# Generation: hypothesis draws every choice, so runs are reproducible and examples small.

class Drawer:
    """Draws through hypothesis's `data` object; `chance(p)` is a biased coin."""

    def __init__(self, data):
        from hypothesis import strategies as st
        self.data = data
        self.st = st

    def chance(self, percent):
        # hypothesis starts from (and shrinks towards) 0: there, nothing happens
        return self.data.draw(self.st.integers(0, 99)) >= 100 - percent

    def choice(self, options):
        return self.data.draw(self.st.sampled_from(list(options)))

    def integer(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))


def exact_numpy(t):
    """A torch tensor as a NumPy array of the same dtype (bfloat16 included)."""
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(NUMPY_DTYPES["bfloat16"]).copy()
    return t.numpy().copy()


def template_values(value):
    """A template argument as a plain array: a table View is applied (in torch) and copied."""
    if isinstance(value, View):
        import torch
        from test_ops import from_numpy
        return exact_numpy(value.view(from_numpy(torch, value.base)))
    return value


def regenerate(d, mk, shape, dtype, like):
    """New values of `shape` and `dtype`; indices stay indices (non-negative, now and then one past the end)."""
    if like.dtype.kind in "iu" and like.size and like.min() >= 0 and dtype in INT_DTYPES:
        high = int(like.max()) + 1 + (1 if d.chance(10) else 0)
        return mk.rng.integers(0, high, shape).astype(NUMPY_DTYPES[dtype])
    values = mk(shape, dtype=dtype)
    if dtype in FLOAT_DTYPES and d.chance(10):
        specials = SPECIAL + [1e4, -1e30, 7.0e4]  # 7e4 overflows float16
        with np.errstate(over="ignore"):
            values = np.array(mk.rng.choice(specials, shape)).astype(NUMPY_DTYPES[dtype])
    return values


def mutate_shape(d, shape):
    """The template's shape (most often), a broadcastable variant, an off-by-one or a random shape."""
    roll = d.integer(0, 99)
    if roll < 65:
        return shape
    if roll < 77:  # broadcastable: dims set to 1, leading dims dropped or added
        new = [1 if d.chance(40) else s for s in shape]
        if new and d.chance(30):
            new = new[d.integer(1, len(new)):]
        if len(new) < 4 and d.chance(20):
            new = [d.choice([1, 2])] + new
        return tuple(new)
    if roll < 87 and shape:  # one dim off by one (a mismatch)
        i = d.integer(0, len(shape) - 1)
        new = list(shape)
        new[i] = max(0, new[i] + d.choice([-1, 1]))
        return tuple(new)
    rank = d.integer(0, 4)
    return tuple(d.integer(0, 5) for _ in range(rank))


def make_layout(d, mk, values, dtype):
    """An Arg holding `values` (or new values of their shape) in one of several memory layouts."""
    shape = values.shape
    kinds = ["contiguous"] * 4 + ["sliced", "offset", "expanded", "huge_step"]
    if len(shape) >= 2:
        kinds += ["transposed", "transposed", "permuted"]
    if len(shape) == 0:
        kinds += ["select"]
    kind = d.choice(kinds)
    if kind == "contiguous" or (kind != "select" and not shape):
        return Arg(values, shape=shape)
    if kind == "transposed":
        a, b = sorted(d.data.draw(d.st.lists(d.st.integers(0, len(shape) - 1), min_size=2, max_size=2, unique=True)))
        base = np.ascontiguousarray(np.swapaxes(values, a, b))
        return Arg(base, lambda t, a=a, b=b: t.transpose(a, b), f"transpose({a}, {b})", shape)
    if kind == "permuted":
        perm = tuple(d.data.draw(d.st.permutations(range(len(shape)))))
        inverse = tuple(int(i) for i in np.argsort(perm))
        base = np.ascontiguousarray(values.transpose(inverse))  # base.permute(perm) == values
        return Arg(base, lambda t, p=perm: t.permute(*p), f"permute{perm}", shape)
    if kind in ("sliced", "huge_step"):
        dim = d.integer(0, len(shape) - 1)
        if kind == "huge_step":
            if int(np.prod(shape)) > 25:
                return Arg(values, shape=shape)
            step = 1000
        else:
            step = d.integer(2, 7)
        start = d.integer(0, step - 1)
        base_shape = list(shape)
        base_shape[dim] = start + shape[dim] * step
        base = mk(tuple(base_shape), dtype=dtype).astype(values.dtype)  # filler between the elements read
        index = (slice(None),) * dim + (slice(start, start + shape[dim] * step, step),)
        base[index] = values
        return Arg(base, lambda t, i=index: t[i], f"t[{', '.join(fmt_slice(s) for s in index)}]", shape)
    if kind == "offset":
        pad = d.integer(1, 3)
        filler = np.zeros((pad,) + shape[1:], values.dtype)
        base = np.concatenate([filler, values], axis=0)
        return Arg(base, lambda t, p=pad, n=shape[0]: t.narrow(0, p, n), f"narrow(0, {pad}, {shape[0]})", shape)
    if kind == "select":  # a 0-dim view inside a 1-D base
        pad = d.integer(1, 3)
        base = np.concatenate([np.zeros((pad,), values.dtype), values.reshape(1)])
        return Arg(base, lambda t, p=pad: t[p], f"t[{pad}]", shape)
    # expanded: some dims read one element with stride 0; the values are new
    dims = [i for i in range(len(shape)) if d.chance(50)] or [d.integer(0, len(shape) - 1)]
    base_shape = tuple(1 if i in dims else s for i, s in enumerate(shape))
    base = regenerate(d, mk, base_shape, dtype, values).astype(values.dtype)
    return Arg(base, lambda t, s=shape: t.expand(*s), f"expand{shape}", shape)


def fmt_slice(s):
    if s == slice(None):
        return ":"
    return f"{s.start}:{s.stop}:{s.step}"


def mutate_array(d, mk, value):
    """A template array (or table View): new shape, dtype, values and layout, each now and then."""
    is_view = isinstance(value, View)
    array = template_values(value)
    template_shape = array.shape
    dtype = dtype_name(array)
    shape = mutate_shape(d, array.shape)
    new_dtype = d.choice(ALL_DTYPES) if d.chance(15) else dtype
    if shape != array.shape or new_dtype != dtype:
        array = regenerate(d, mk, shape, new_dtype, array)
    elif new_dtype in FLOAT_DTYPES and d.chance(8):
        array = regenerate(d, mk, shape, new_dtype, array)
    if is_view and shape == template_shape and new_dtype == dtype and d.chance(50):
        return Arg(value.base, value.view, "the table's view", shape)
    return make_layout(d, mk, np.asarray(array), new_dtype)


SCALAR_INTS = list(range(-6, 7)) + [2 ** 31, 2 ** 62, -2 ** 63]
SCALAR_FLOATS = [0.0, -0.0, 0.5, -1.5, 2.0, 3.5, 1e30, math.inf, -math.inf, math.nan]
# Arguments of a wrong type, among them tensors where a number or a dim is expected (a 0-dim int
# tensor is an int to PyTorch) and a number where a tensor is.
WRONG_TYPES = [None, "a", [1, 2], 1.5, (1,), 2, [[1.0]], {"x": 1},
               Arg(np.array(1, np.int64)), Arg(np.array([1.0, 2.0], np.float32), shape=(2,))]


def mutate_value(d, mk, value):
    if isinstance(value, (np.ndarray, View)):
        return mutate_array(d, mk, value)
    if isinstance(value, list):
        items = [mutate_value(d, mk, v) for v in value]
        if items and d.chance(5):
            items = items[:-1] if d.chance(50) else items + [items[0]]
        return items
    if isinstance(value, DType):
        return DType(d.choice(ALL_DTYPES)) if d.chance(25) else value
    if isinstance(value, bool):
        return (not value) if d.chance(10) else value
    if isinstance(value, int):
        if d.chance(15):
            return d.choice(SCALAR_INTS) if d.chance(10) else d.choice(SCALAR_INTS[:13])
        return value
    if isinstance(value, float):
        return d.choice(SCALAR_FLOATS) if d.chance(15) else value
    if isinstance(value, tuple):
        items = list(value)
        if d.chance(15) and items:
            i = d.integer(0, len(items) - 1)
            items[i] = mutate_value(d, mk, items[i]) if not isinstance(items[i], int) else d.integer(-6, 6)
        if d.chance(5):
            items = items[:-1] if items and d.chance(50) else items + [d.integer(-3, 3)]
        return tuple(items)
    if isinstance(value, str):
        if d.chance(8):
            return value[:-1] if value and d.chance(50) else value + "x"
        return value
    if value is None:
        return d.integer(-3, 3) if d.chance(10) else value
    return value


def draw_example(data, op, forms):
    """One example for `op`: a form, a device, a dtype, a table sample, and mutations of it."""
    d = Drawer(data)
    form = d.choice(forms)
    dtype = d.choice(ALL_DTYPES) if d.chance(15) else d.choice(op.dtypes)
    seed = d.integer(0, 2 ** 32 - 1)
    mk = Maker(dtype, seed, op.domain, op.other_domain, op.nonzero_other, op.integers)
    samples = op.samples(mk)
    sample = d.choice(samples)
    example = Example(op, form, "cpu", dtype, sample.label, [], {})
    kwargs = {**op.kwargs, **sample.kwargs}
    example.args = [mutate_value(d, mk, a) for a in sample.args]
    example.kwargs = {k: mutate_value(d, mk, v) for k, v in kwargs.items()}
    if d.chance(8):  # an argument of a wrong type
        slots = [("arg", i) for i in range(len(example.args))] + [("kwarg", k) for k in example.kwargs]
        if slots:
            where, key = d.choice(slots)
            wrong = example.wrong = d.choice(WRONG_TYPES)
            if where == "arg":
                example.args[key] = wrong
            else:
                example.kwargs[key] = wrong
            example.notes.append(f"wrong type at {where} {key}")
    if op.fn is None and d.chance(2):  # (a table's fn is a lambda of fixed arguments)
        example.kwargs["bogus_keyword"] = 1
    if has_tensor(example.args + list(example.kwargs.values())) and d.chance(4):
        example.device = "cuda"
    return example


def has_tensor(values):
    return any(isinstance(v, Arg) or (isinstance(v, list) and has_tensor(v)) for v in values)


# ---------------------------------------------------------------------------------------------
# The oracle.

def build(m, value, device):
    """The argument in library m: Args become tensors on `device`, DTypes m's dtypes."""
    from test_ops import from_numpy
    if isinstance(value, Arg):
        t = from_numpy(m, value.base)
        if device != "cpu":
            t = t.to(device)
        return value.view(t) if value.view is not None else t
    if isinstance(value, DType):
        return getattr(m, value)
    if isinstance(value, list):
        return [build(m, v, device) for v in value]
    if isinstance(value, tuple):
        return tuple(build(m, v, device) for v in value)
    if isinstance(value, dict):
        return {k: build(m, v, device) for k, v in value.items()}
    return value


def to_cpu(result):
    import tensorplay as tp
    if isinstance(result, tp.Tensor):
        return result.cpu()
    if isinstance(result, tuple) and type(result) is not tuple:
        return result  # a named tuple of results: compared field by field as is
    if isinstance(result, (list, tuple)):
        return type(result)(to_cpu(r) for r in result)
    return result


def numel(result):
    shape = getattr(result, "shape", None)
    if shape is not None:
        return math.prod(shape)
    if isinstance(result, (list, tuple)):
        return sum(numel(r) for r in result)
    return 1


def error_kind(e):
    from test_errors import builtin_class
    from test_ops import exception_kind
    return exception_kind(e) or builtin_class(e)


def check(example):
    """None when tensorplay agrees with torch on the example; otherwise (category, message)."""
    import warnings

    import tensorplay as tp
    import torch
    from test_errors import names_op
    from test_ops import Mismatch, assert_same, exception_kind, require, run

    form, op = example.form, example.op
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_args, torch_kwargs = build(torch, example.args, "cpu"), build(torch, example.kwargs, "cpu")
        expected, torch_error = run(form.torch_fn, torch, torch_args, torch_kwargs)
        if example.device == "cuda" and not tp.cuda.is_available():
            try:
                build(tp, example.args, "cuda"), build(tp, example.kwargs, "cuda")
            except RuntimeError as e:
                if "cuda" in str(e).lower() and str(e).startswith("["):
                    return None
                return "cuda message", f"placing a tensor on cuda raised a RuntimeError that says little: {e}"
            except Exception as e:
                return "cuda kind", f"placing a tensor on cuda raised {type(e).__name__}: {e}"
            return "cuda accepted", "tensorplay placed a tensor on cuda without a CUDA build"
        try:
            tp_args, tp_kwargs = build(tp, example.args, example.device), build(tp, example.kwargs, example.device)
        except Exception as e:
            return "inputs", f"making the inputs raised {type(e).__name__}: {e}"
        actual, error = run(form.fn, tp, tp_args, tp_kwargs)
    try:
        if torch_error is not None:
            kind = error_kind(torch_error)
            torch_says = f"torch raised {type(torch_error).__name__}: {first_line(torch_error)}"
            if error is None:
                if mkl_refuses_empty(torch_error, actual):
                    return None
                return "returned where torch raised", f"{torch_says}\ntensorplay returned {describe_short(actual)}"
            if error_kind(error) is not kind and not torch_quirk(op, torch_error, error) \
                    and not torch_method_reads_tensor_as_size(example, error):
                return (f"{type(error).__name__} where torch raised {type(torch_error).__name__}",
                        f"{torch_says}\ntensorplay raised {type(error).__name__}: {first_line(error)}")
            names = op_names(op)
            if str(error) == str(torch_error):
                return None  # Python's own error, before either library ran: `(1,) * 1.5`, a bad keyword
            if exception_kind(torch_error) is not None and not any(names_op(str(error), n) for n in names):
                return "message does not name the op", \
                    f"tensorplay raised {type(error).__name__}: {first_line(error)}\n(names accepted: {names})"
            return None
        if error is not None:
            if lax_on_empty(example, expected, error) or torch_method_reads_tensor_as_size(example, error) \
                    or no_complex32(expected, error):
                return None
            return (f"raised {type(error).__name__} where torch returned",
                    f"torch returned {describe_short(expected)}\ntensorplay raised {type(error).__name__}: "
                    f"{first_line(error)}")
        if form.returns_self and isinstance(example.args[0], Arg):
            require(expected is torch_args[0], "bad case: torch's in-place op did not return its input")
            require(actual is tp_args[0], "the in-place op returned a new object, not its input")
        actual = to_cpu(actual)
        if numel(expected) > MAX_COMPARED_ELEMENTS:
            require(numel(actual) == numel(expected), f"{numel(actual)} elements, torch {numel(expected)}")
            require(tuple(getattr(actual, "shape", ())) == tuple(getattr(expected, "shape", ())), "shapes differ")
            return None
        assert_same(actual, expected, tolerances(example))
    except Mismatch as e:
        message = str(e)
        if "values differ" in message and (lapack_leftovers(example) or
                                            more_accurate_matrix_exp(example, torch_args, actual) or
                                            same_product_of_factors(example, actual, expected) or
                                            same_eigenvalues(example, torch_args, actual, expected) or
                                            singular_in_working_precision(example, actual, expected)):
            return None
        return category(message), message
    return None


# ---------------------------------------------------------------------------------------------
# Accepted differences: where PyTorch's behaviour is an accident, not a contract, tensorplay's
# documented answer is accepted instead. Each rule is as narrow as the accident.

def lax_on_empty(example, expected, error):
    """PyTorch skips its dtype checks where there is nothing to compute: bmm, baddbmm and addbmm
    of an empty batch and cdist of an empty set in mixed dtypes return. tensorplay checks dtypes
    whatever the sizes; its RuntimeError about the dtype is accepted there."""
    empty = numel(expected) == 0 or any(math.prod(a.shape) == 0 for a in tensor_args(example))
    return empty and isinstance(error, RuntimeError) and re.search(r"dtype|not implemented for", str(error))


def mkl_refuses_empty(torch_error, actual):
    """PyTorch's CPU transforms (MKL's DFTI) refuse an empty batch, which NumPy and tensorplay
    (pocketfft) transform into an empty result: accepted."""
    return "MKL FFT error" in str(torch_error) and numel(actual) == 0


def no_complex32(expected, error):
    """tensorplay has no complex32 (PyTorch's ComplexHalf, which pairs float16 parts): where PyTorch
    returns one, tensorplay's NotImplementedError that says so is accepted."""
    import torch
    return getattr(expected, "dtype", None) == torch.complex32 and isinstance(error, NotImplementedError) \
        and "complex32" in str(error)


# The factorizations' LAPACK: OpenBLAS here, another in torch's build.
LAPACK_OPS = {"det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "lu", "lu_solve",
              "lu_unpack", "linalg.det", "linalg.slogdet", "linalg.inv", "linalg.inv_ex", "linalg.solve",
              "linalg.solve_ex", "linalg.cholesky", "linalg.cholesky_ex", "linalg.lu_factor", "linalg.lu_factor_ex",
              "linalg.lu", "linalg.lu_solve", "qr", "geqrf", "svd", "pinverse", "nuclear_norm", "linalg.qr",
              "linalg.svd", "linalg.svdvals", "linalg.eigh", "linalg.eigvalsh", "linalg.eig", "linalg.eigvals",
              "linalg.pinv", "linalg.pinv_hermitian",
              "linalg.matrix_rank", "linalg.cond", "linalg.lstsq", "linalg.tensorinv", "linalg.tensorsolve", "orgqr",
              "ormqr", "linalg.householder_product"}


def lapack_leftovers(example):
    """On inf or NaN input a factorization's result is whatever its LAPACK's pivoting and checks
    leave, which differs between LAPACK implementations (so between PyTorch builds): accepted."""
    return example.op.label in LAPACK_OPS and any(
        not np.isfinite(a.base.astype(np.float64)).all() for a in tensor_args(example)
        if a.base.size and a.base.dtype.kind == "f")


def more_accurate_matrix_exp(example, torch_args, actual):
    """tensorplay's matrix_exp of 16-bit input sums in float64 and rounds once; PyTorch sums in the
    16-bit dtype. Accepted where tensorplay's result is within the dtype's rounding of the float64
    answer."""
    import torch
    inputs = [a for a in torch_args if isinstance(a, torch.Tensor)]
    if example.op.name != "matrix_exp" and example.op.label != "linalg.matrix_exp" or len(inputs) != 1 \
            or inputs[0].dtype not in (torch.float16, torch.bfloat16):
        return False
    exact = torch.linalg.matrix_exp(inputs[0].double()).numpy()
    eps = EPSILON[str(inputs[0].dtype).removeprefix("torch.")]
    ours = np.asarray(actual.double().numpy())
    finite = np.isfinite(exact)
    return np.allclose(ours[finite], exact[finite], rtol=4 * eps, atol=4 * eps * max(1.0, np.abs(exact[finite]).max(
        initial=0.0)))


def _svd_product(U, S, Vh):
    k = S.shape[-1]
    return (U[..., :k] * S[..., None, :]) @ Vh[..., :k, :]


# What the factors of a decomposition multiply back to, from the op-table row's outputs
# (op_table_linalg.py), as float64 arrays.
PRODUCT_OF_FACTORS = {
    "linalg.svd": lambda U, Vh, S: _svd_product(U, S, Vh),
    "svd": lambda U, S, V: _svd_product(U, S, np.swapaxes(V, -1, -2)),
    "linalg.eigh": lambda L, V: (V * L[..., None, :]) @ np.swapaxes(V, -1, -2),
    "linalg.qr": lambda Q, R: Q @ R if Q.size else R,
    "qr": lambda Q, R: Q @ R,
}


def same_product_of_factors(example, actual, expected):
    """Where singular values or eigenvalues repeat, or a matrix is rank-deficient, its singular
    vectors, eigenvectors and QR factors are not unique: each LAPACK picks its own. Accepted where
    tensorplay's factors multiply back to what PyTorch's do (and so to the input)."""
    product = PRODUCT_OF_FACTORS.get(example.op.label)
    if product is None or not isinstance(actual, (tuple, list)):
        return False
    ours = product(*[np.asarray(t.double().numpy()) for t in actual])
    theirs = product(*[np.asarray(t.double().numpy()) for t in expected])
    scale = max(1.0, float(np.abs(theirs[np.isfinite(theirs)]).max(initial=0.0)))
    return ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=1e-4, atol=1e-4 * scale, equal_nan=True)


def same_eigenvalues(example, torch_args, actual, expected):
    """The order in which a LAPACK's QR iteration finds repeated (or nearly repeated) eigenvalues, and
    the basis it picks for their eigenspace, are its own. Accepted where tensorplay's eigenvalues are
    PyTorch's up to order (both sorted, within rounding at the matrix's scale) and, for eig, each of
    tensorplay's eigenvectors is one: A v = lambda v."""
    if example.op.label not in ("linalg.eig", "linalg.eigvals"):
        return False
    ours_l, theirs_l = (actual[0], expected[0]) if example.op.label == "linalg.eig" else (actual, expected)
    ours, theirs = np.sort_complex(ours_l.numpy()), np.sort_complex(theirs_l.numpy())
    A = torch_args[0].double().numpy()
    scale = max(1.0, float(np.abs(A).max(initial=0.0)))
    tol = (1e-3 if str(ours_l.dtype).endswith("complex64") else 1e-9) * scale
    if ours.shape != theirs.shape or not np.allclose(ours, theirs, atol=tol, rtol=0):
        return False
    if example.op.label == "linalg.eigvals":
        return True
    V, L = actual[1].numpy().astype(np.complex128), actual[0].numpy().astype(np.complex128)
    return V.shape == A.shape and np.allclose(A @ V, V * L[..., None, :], atol=tol, rtol=0)


def singular_in_working_precision(example, actual, expected):
    """A condition number is infinite where the LU pivots reach an exact zero, and beyond 1/eps
    where rounding leaves a tiny one instead: which of the two a LAPACK gives for a matrix singular
    in working precision is accepted."""
    if example.op.label != "linalg.cond":
        return False
    ours, theirs = np.asarray(actual.double().numpy()), np.asarray(expected.double().numpy())
    eps = np.finfo(str(expected.dtype).removeprefix("torch.")).eps
    differ = ~np.isclose(ours, theirs, rtol=1e-3, equal_nan=True)
    return bool(np.all(np.isinf(ours[differ]) & (np.abs(theirs[differ]) > 0.1 / eps)))


# The unit roundoff of the 16-bit floats.
EPSILON = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def tolerances(example):
    """op_table's tolerances, and for 16-bit results an absolute one of a unit in the last place at
    the inputs' magnitude. Two valid ways to round a 16-bit computation (PyTorch's own CPU kernels
    differ between contiguous and strided inputs: a - 1.5 * b rounds 1.5 * b to float16 first in
    one and not in the other) differ by that much, which is far beyond the result's relative
    tolerance where the result nearly cancels."""
    values = [np.abs(a.base.astype(np.float64)) for a in tensor_args(example) if a.base.size]
    values = [v[np.isfinite(v)] for v in values]
    scale = max([float(v.max()) for v in values if v.size] + [1.0])
    tol = dict(example.op.tol)
    for name, eps in EPSILON.items():
        rtol, atol = tol.get(name, TOLERANCES[name])
        tol[name] = (rtol, max(atol, eps * scale))
    return tol


def torch_quirk(op, torch_error, error):
    """Errors of another kind than PyTorch's, where PyTorch's kind comes from a bug of its own."""
    # torch.norm(x) and torch.split(x) are Python that reads x.layout or calls x.split: an
    # AttributeError when x is not a tensor, where the documented kind is TypeError.
    if isinstance(torch_error, AttributeError) and type(error) is TypeError:
        return True
    # addmv with a 0-dim input and mismatched shapes: PyTorch fails with an IndexError while
    # formatting its size-mismatch message (it calls input.size(0)); tensorplay raises the
    # RuntimeError that the message was meant to be.
    if (op.name == "addmv" and isinstance(torch_error, IndexError) and "no dimensions" in str(torch_error)
            and type(error) is RuntimeError and "addmv" in str(error)):
        return True
    # scatter with a src of fewer dims than index: PyTorch reads src.size(d) past src's dims (an
    # IndexError) before its own check that they match, the RuntimeError tensorplay raises.
    return (op.name in ("scatter", "scatter_add") and isinstance(torch_error, IndexError)
            and type(error) is RuntimeError and "same number of dimensions as src" in str(error))


def torch_method_reads_tensor_as_size(example, error):
    """PyTorch's Tensor methods (x.broadcast_to(t), x.permute(t)) read a one-element integer tensor
    as a list of one size, where its functions refuse it with a TypeError; tensorplay refuses it
    in both. Accepted: tensorplay's TypeError that names the op, for such a tensor put in."""
    wrong = example.wrong
    return (isinstance(wrong, Arg) and wrong.base.size == 1 and wrong.base.dtype.kind in "iu"
            and example.form.label.startswith("Tensor.") and type(error) is TypeError)


def tensor_args(example):
    def walk(v):
        if isinstance(v, Arg):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                yield from walk(x)
    return list(walk(example.args)) + list(walk(list(example.kwargs.values())))


def first_line(e):
    text = str(e).strip().splitlines()
    return text[0][:300] if text else ""


def describe_short(result):
    from test_ops import describe
    try:
        return describe(result)[:400]
    except Exception as e:  # a result too broken to print (a negative size) is a failure all the same
        return f"{type(result).__name__} that cannot be printed ({type(e).__name__}: {e})"


def category(message):
    """A failure's kind, for grouping: the message's first words, without numbers and values."""
    head = message.splitlines()[0]
    for cut in (": values differ", ": dtype", ": shape", ": torch gave", " items, torch", "the in-place"):
        if cut in head:
            return cut.strip(": ")
    return head.split(":")[0][:60]


# ---------------------------------------------------------------------------------------------
# The worker: fuzzes the ops the parent names on stdin, one line of output per event.

def emit(*parts):
    sys.stdout.write(" ".join(parts).replace("\r", " ") + "\n")
    sys.stdout.flush()


def for_examples(index, examples, on_example):
    """Draws `examples` hypothesis examples for OPS[index] (the same ones on every run: a fixed seed
    per op) and calls on_example(example) on each."""
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st
    from test_ops import call_forms

    op = OPS[index]
    forms = call_forms(op)

    @seed(zlib.crc32(op.label.encode()))
    @settings(max_examples=examples, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(st.data())
    def run(data):
        on_example(draw_example(data, op, forms))

    run()


def fuzz_op(index, examples):
    """Runs `examples` examples of OPS[index]; emits each case and each distinct failure."""
    failures = {}
    count = 0

    def fuzz(example):
        nonlocal count
        count += 1
        emit("case", str(count), example.describe().replace("\n", " "))
        try:
            outcome = check(example)
        except Exception as e:  # the harness itself broke: report it like a failure
            import traceback
            outcome = "harness error", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
        if outcome is not None:
            kind, message = outcome
            key = f"{example.form.label}: {kind}"
            if key not in failures:
                failures[key] = {"key": key, "count": 0, "example": example.describe(values=True), "message": message}
            failures[key]["count"] += 1

    for_examples(index, examples, fuzz)
    for failure in failures.values():
        emit("fail", json.dumps(failure))
    emit("done", str(count))


def cap_address_space():
    import resource
    with open("/proc/self/status") as f:
        size_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    limit = size_kb * 1024 + ADDRESS_SPACE_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))


def worker(examples):
    import tensorplay as tp
    import test_ops  # noqa: F401  (torch, and the helpers check() uses)
    tp.ones(1000, 1000).sum()  # start the intra-op threads before the cap, so their stacks are counted
    cap_address_space()
    emit("ready")
    for line in sys.stdin:
        fuzz_op(int(line), examples)


# ---------------------------------------------------------------------------------------------
# The parent: hands ops to workers, restarts a worker that crashed or hung.

@dataclass
class Result:
    counts: dict = field(default_factory=dict)     # op index -> cases tried
    failures: dict = field(default_factory=dict)   # op index -> [failure dicts]
    exit_failures: list = field(default_factory=list)  # workers that crashed at interpreter shutdown
    seconds: float = 0.0

    @property
    def cases(self):
        return sum(self.counts.values())


class Worker:
    def __init__(self, examples):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, str(HERE), "--worker", "--examples", str(examples)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.buffer = b""
        self.ready = False
        self.op = None          # the op index it is running
        self.last_case = None
        self.deadline = time.monotonic() + STARTUP_TIMEOUT_S

    def send(self, index, timeout):
        self.op, self.last_case = index, None
        self.deadline = time.monotonic() + timeout
        self.proc.stdin.write(f"{index}\n".encode())
        self.proc.stdin.flush()

    def lines(self):
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *complete, self.buffer = self.buffer.split(b"\n")
        return [line.decode(errors="replace") for line in complete]

    def stderr_tail(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-1500:]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()


def run_session(indices, examples, jobs=2, timeout=CASE_TIMEOUT_S, progress=None):
    """Fuzzes OPS[i] for i in indices with `examples` examples each, in `jobs` worker processes."""
    start = time.monotonic()
    queue = list(indices)
    result = Result()
    workers = [Worker(examples) for _ in range(min(jobs, len(queue)))]

    def dispatch(w):
        if queue:
            index = queue.pop(0)
            result.counts[index] = 0
            result.failures[index] = []
            w.send(index, timeout)
        else:
            w.op = None

    while any(w.op is not None or not w.ready for w in workers):
        active = [w for w in workers if w.op is not None or not w.ready]
        wait = max(0.0, min(w.deadline for w in active) - time.monotonic())
        readable, _, _ = select.select([w.proc.stdout for w in active], [], [], wait)
        for w in active:
            lines = w.lines() if w.proc.stdout in readable else []
            dead = lines is None
            for line in lines or []:
                kind, _, rest = line.partition(" ")
                w.deadline = time.monotonic() + timeout
                if kind == "ready":
                    w.ready = True
                    dispatch(w)
                elif kind == "case":
                    result.counts[w.op] += 1
                    w.last_case = rest.partition(" ")[2]
                elif kind == "fail":
                    result.failures[w.op].append(json.loads(rest))
                elif kind == "done":
                    if progress:
                        progress(w.op, result)
                    dispatch(w)
            hung = not dead and time.monotonic() > w.deadline
            if dead or hung:
                w.kill()
                what = f"hung: no progress for {timeout} s" if hung else \
                    f"crashed the interpreter: {describe_exit(w.proc.returncode)}"
                if w.op is None:
                    raise RuntimeError(f"fuzz_ops worker {what} while starting:\n{w.stderr_tail()}")
                result.failures[w.op].append({
                    "key": f"{LABELS[w.op]}: {'hang' if hung else 'crash'}", "count": 1,
                    "example": w.last_case or "(before the first example)",
                    "message": f"tensorplay {what}\n{w.stderr_tail()}"})
                if progress:
                    progress(w.op, result)
                if queue:
                    workers[workers.index(w)] = Worker(examples)
                else:
                    workers.remove(w)
    for w in workers:  # each must exit cleanly: no crash at interpreter shutdown
        w.proc.stdin.close()
        try:
            code = w.proc.wait(timeout=STARTUP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            w.kill()
            code = "a hang"
        w.proc.stdout.close()
        if code != 0:
            result.exit_failures.append(f"a worker's interpreter ended with {describe_exit(code)} at exit:\n"
                                        f"{w.stderr_tail()}")
    result.seconds = time.monotonic() - start
    return result


def describe_exit(code):
    import signal
    if isinstance(code, int) and code < 0:
        return signal.Signals(-code).name
    return f"exit status {code}"


def format_failures(index, failures):
    lines = [f"{LABELS[index]}: {len(failures)} distinct failure(s)"]
    for f in failures:
        lines.append(f"  [{f['key']}] x{f['count']}\n    example: {f['example']}\n    "
                     + f["message"].replace("\n", "\n    "))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=int(os.environ.get("TP_FUZZ_EXAMPLES", "200")),
                        help="hypothesis examples per op")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=CASE_TIMEOUT_S)
    parser.add_argument("--op", action="append", help="fuzz only this op label (repeatable)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.examples)
        return 0
    indices = TABLE_INDICES if not args.op else [LABELS.index(label) for label in args.op]

    def progress(index, result):
        print(f"  {LABELS[index]}: {result.counts[index]} cases"
              + (f", {len(result.failures[index])} failure(s)" if result.failures[index] else ""), flush=True)

    result = run_session(indices, args.examples, args.jobs, args.timeout, progress)
    failed = [i for i in indices if result.failures.get(i)]
    for i in failed:
        print(format_failures(i, result.failures[i]))
    for failure in result.exit_failures:
        print(failure)
    print(f"fuzz_ops: {result.cases} cases over {len(indices)} ops ({args.examples} examples per op) in "
          f"{result.seconds:.0f} s: {len(failed)} op(s) failed")
    return 1 if failed or result.exit_failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""tensorplay's ops against PyTorch, driven by op_table.TABLE.

For every (op, dtype, sample) the op runs in both libraries on the same values. Where torch
raises, tensorplay must raise the same kind of exception; otherwise the results must agree in
dtype, shape and values (within the result dtype's tolerance, NaN where torch has NaN).
Test ids read `<op>-<dtype>-<sample>`, e.g. `add-float32-broadcast` or `Tensor.add_-int64-0dim`.
"""

import zlib
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
import pytest
import torch

import tensorplay
from op_table import COMPLEX_DTYPES, FLOAT_DTYPES, TABLE, TOLERANCES, DType, Maker, Op, Sample, View
from shared import run_isolated

# NotImplementedError first: it is a subclass of RuntimeError.
EXCEPTIONS = (NotImplementedError, IndexError, ValueError, TypeError, RuntimeError)

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


# ---------------------------------------------------------------------------------------------
# The cases: each op of the table, in each of its call forms, dtypes and samples.

@dataclass
class Case:
    id: str
    op: Op
    fn: Callable           # fn(tensorplay, *args, **kwargs)
    torch_fn: Callable     # torch_fn(torch, *args, **kwargs)
    returns_self: bool
    dtype: str
    sample: Sample


# A Tensor method reaches the same kernel as the module function; what may differ is the binding
# (overloads, keywords, defaults), which does not depend on the dtype.
METHOD_DTYPES = ("float32",)
# An in-place op runs the function's kernel and writes into its input: a float, an integer and
# bool cover the result-dtype casts that it must allow or refuse.
INPLACE_DTYPES = ("float32", "int64", "bool")


@dataclass
class Form:
    """One way of calling an op: the module function, the Tensor method or the in-place method."""
    label: str
    fn: Callable
    torch_fn: Callable
    returns_self: bool
    dtypes: tuple


def call_function(name):
    return lambda m, *args, **kwargs: getattr(m, name)(*args, **kwargs)


def call_method(name):
    return lambda m, x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


def call_forms(op):
    if op.fn is not None:
        return [Form(op.label, op.fn, op.torch_fn or op.fn, op.returns_self, op.dtypes)]
    forms = []
    if hasattr(torch, op.name):
        forms.append(Form(op.label, call_function(op.name), call_function(op.name), False, op.dtypes))
    if op.method and hasattr(torch.Tensor, op.name):
        dtypes = tuple(d for d in op.dtypes if d in METHOD_DTYPES)
        forms.append(Form("Tensor." + op.label, call_method(op.name), call_method(op.name), False, dtypes))
    inplace = op.name + "_"
    if op.inplace and hasattr(torch.Tensor, inplace):
        dtypes = tuple(d for d in op.dtypes if d in INPLACE_DTYPES)
        label = "Tensor." + op.label.replace(op.name, inplace, 1)
        forms.append(Form(label, call_method(inplace), call_method(inplace), True, dtypes))
    return forms


def build_cases():
    cases = []
    for op in TABLE:
        forms = call_forms(op)
        assert forms, f"{op.label}: torch has neither torch.{op.name} nor Tensor.{op.name}"
        for dtype in op.dtypes:
            seed = zlib.crc32(f"{op.label}-{dtype}".encode())
            mk = Maker(dtype, seed, op.domain, op.other_domain, op.nonzero_other, op.integers)
            for sample in op.samples(mk):
                sample = Sample(sample.label, sample.args, {**op.kwargs, **sample.kwargs})
                for form in forms:
                    if dtype in form.dtypes:
                        cases.append(Case(f"{form.label}-{dtype}-{sample.label}", op, form.fn, form.torch_fn,
                                          form.returns_self, dtype, sample))
    ids = [case.id for case in cases]
    assert len(set(ids)) == len(ids), "duplicate case ids"
    return cases


CASES = build_cases()


# ---------------------------------------------------------------------------------------------
# Inputs: NumPy values turned into each library's tensors.

def from_numpy(m, array):
    # torch.from_numpy has no bfloat16: go through float32, which holds every bfloat16 exactly.
    if m is torch and array.dtype == BFLOAT16:
        return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
    return m.from_numpy(array.copy())  # a copy: in-place ops must not write into the sample


def convert(m, value):
    if isinstance(value, View):
        return value.view(convert(m, value.base))
    if isinstance(value, np.ndarray):
        return from_numpy(m, value)
    if isinstance(value, DType):
        return getattr(m, value)
    if isinstance(value, list):
        return [convert(m, v) for v in value]
    if isinstance(value, dict):
        return {k: convert(m, v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# Results: compared as NumPy arrays, 16-bit floats in float32.

def dtype_name(t):
    return str(t.dtype).removeprefix("torch.").removeprefix("tensorplay.")


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj()
        return (t.float() if t.dtype in (torch.float16, torch.bfloat16) else t).numpy()
    array = np.asarray(t.numpy())
    return array.astype(np.float32) if array.dtype in (BFLOAT16, np.float16) else array


def fmt(array):
    return np.array2string(array, threshold=40, precision=6, separator=", ").replace("\n", "")


def describe(result):
    if isinstance(result, (torch.Tensor, tensorplay.Tensor)):
        return f"{dtype_name(result)} {tuple(result.shape)} {fmt(to_numpy(result))}"
    if isinstance(result, (tuple, list)):
        return f"{type(result).__name__}({', '.join(describe(r) for r in result)})"
    return repr(result)


def assert_same(actual, expected, dtype_tol, where="result"):
    if isinstance(expected, torch.Tensor):
        require(isinstance(actual, tensorplay.Tensor), f"{where}: torch gave a tensor, tensorplay {describe(actual)}")
        require(dtype_name(actual) == dtype_name(expected),
                f"{where}: dtype {dtype_name(actual)}, torch {dtype_name(expected)}\n"
                f"  torch:      {describe(expected)}\n  tensorplay: {describe(actual)}")
        require(tuple(actual.shape) == tuple(expected.shape),
                f"{where}: shape {tuple(actual.shape)}, torch {tuple(expected.shape)}")
        got, want = to_numpy(actual), to_numpy(expected)
        name = dtype_name(expected)
        try:
            if name in FLOAT_DTYPES + COMPLEX_DTYPES:
                rtol, atol = dtype_tol.get(name, TOLERANCES[name])
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
            else:
                np.testing.assert_array_equal(got, want)
        except AssertionError as e:
            detail = [line for line in str(e).splitlines() if line.startswith(("Mismatched elements", "Max"))]
            raise Mismatch(f"{where}: values differ\n  torch:      {fmt(want)}\n  tensorplay: {fmt(got)}\n  "
                           + "; ".join(detail)) from None
    elif isinstance(expected, (tuple, list)):
        require(isinstance(actual, (tuple, list)), f"{where}: torch gave a {type(expected).__name__}, "
                                                    f"tensorplay {describe(actual)}")
        require(len(actual) == len(expected), f"{where}: {len(actual)} items, torch {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, dtype_tol, f"{where}[{i}]")
        # After the items, so that wrong values are reported before a wrong container.
        require(isinstance(actual, tuple) == isinstance(expected, tuple),
                f"{where}: torch gave a {type(expected).__name__}, tensorplay a {type(actual).__name__}")
        for field in getattr(type(expected), "__match_args__", ()):  # torch.return_types: (values, indices)
            require(hasattr(actual, field), f"{where}: no field {field!r} as in torch's {type(expected).__name__}")
    else:
        require(actual == expected, f"{where}: {actual!r}, torch {expected!r}")


class Mismatch(AssertionError):
    pass


def require(condition, message):
    if not condition:
        raise Mismatch(message)


def exception_kind(e):
    return next((kind for kind in EXCEPTIONS if isinstance(e, kind)), None)


# ---------------------------------------------------------------------------------------------

def run(fn, m, args, kwargs):
    """(result, None), or (None, the exception) when fn raises."""
    try:
        return fn(m, *args, **kwargs), None
    except Exception as e:
        return None, e


def check_case(case):
    """Raises Mismatch unless tensorplay agrees with torch on this case."""
    args, kwargs = case.sample.args, case.sample.kwargs
    torch_args, torch_kwargs = convert(torch, list(args)), convert(torch, kwargs)
    tp_args, tp_kwargs = convert(tensorplay, list(args)), convert(tensorplay, kwargs)

    expected, torch_error = run(case.torch_fn, torch, torch_args, torch_kwargs)
    actual, error = run(case.fn, tensorplay, tp_args, tp_kwargs)
    if torch_error is not None:
        kind = exception_kind(torch_error)
        require(kind is not None, f"bad sample: torch raised {type(torch_error).__name__}: {torch_error}")
        torch_says = f"torch raised {type(torch_error).__name__}: {torch_error}"
        require(error is not None, f"{torch_says}\ntensorplay returned {describe(actual)}")
        require(exception_kind(error) is kind, f"{torch_says}\ntensorplay raised {type(error).__name__}: {error}")
        return
    require(error is None, f"torch returned {describe(expected)}\ntensorplay raised {type(error).__name__}: {error}")

    if case.returns_self:
        require(expected is torch_args[0], "bad case: torch's in-place op did not return its input")
        require(actual is tp_args[0], "the in-place op returned a new object, not its input")
    assert_same(actual, expected, case.op.tol)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_op(case):
    try:
        if case.op.isolate:  # it crashed the interpreter once: a crash must fail this case alone
            run_isolated(check_case, case, failure=Mismatch)
        else:
            check_case(case)
        failure = None
    except Mismatch as e:
        failure = str(e)
    if failure:
        pytest.fail(failure, pytrace=False)  # the message says it all; tracebacks would cost seconds


# ---------------------------------------------------------------------------------------------
# The table must keep covering what the suite promises.

REQUIRED_OPS = """
    neg abs sign exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan tanh sigmoid erf
    floor ceil round trunc relu silu gelu softplus bitwise_not logical_not isnan isinf isfinite nan_to_num
    clamp clip square
    add sub mul div floor_divide remainder pow atan2 maximum minimum bitwise_and bitwise_or bitwise_xor
    eq ne lt le gt ge logical_and logical_or logical_xor lerp addcmul addcdiv where
    __add__ __sub__ __mul__ __truediv__ __floordiv__ __mod__ __pow__ __and__ __or__ __xor__
    __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __neg__ __abs__ __invert__ __matmul__
    __radd__ __rsub__ __rmul__ __rtruediv__ __rfloordiv__ __rmod__ __rpow__ __rand__ __ror__ __rxor__
    __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__ __ixor__
    sum mean prod amax amin max min argmax argmin var std norm logsumexp all any cumsum cumprod
    softmax log_softmax
    matmul mm bmm addmm baddbmm dot mv outer
    view reshape permute transpose t T expand expand_as broadcast_to squeeze unsqueeze flatten unflatten
    contiguous clone narrow select split chunk unbind cat stack repeat flip movedim
    index_select gather scatter scatter_add masked_fill nonzero
""".split()

# Call forms and samples that the brief names one by one.
REQUIRED_CASES = """
    round.decimals2-float32-2d gelu.tanh-float32-2d gelu-float32-2d softplus-float32-2d
    clamp-float32-2d clamp.tensor-float32-min_max clip-float32-2d clip.tensor-float32-min_max
    add.alpha2-float32-broadcast sub.alpha2-int64-broadcast Tensor.add_-float32-same_shape
    div-float32-same_shape div.trunc-int64-same_shape div.floor-int64-same_shape
    __rsub__.int-float32-2d __rtruediv__.int-int64-2d __rpow__.int-float32-2d
    __rfloordiv__.int-int64-2d __rmod__.int-int64-2d __iadd__-float32-int_scalar
    where-float32-tensors where-float32-tensor_int_scalar where-float32-int_scalars
    promote.scalar-int64-float promote.0dim-float16-with_0dim_float64 promote.tensor-bfloat16-with_float16
    promote.tensor-uint8-with_int8 promote.tensor-bool-with_int64 promote.scalar-bool-int promote.iadd-int64-float
    max-float32-full max-float32-dim1 max-float32-dim1_keepdim sum-float32-dims0_2
    sum-float32-dim_none sum-int64-dtype_float64 sum-float32-strided_dim-1 var-float32-dim1_correction0 var-float32-unbiased_false
    norm.int_p-float32-p1 norm-float32-pinf norm.int_p-float32-p3_dim1 norm.int_p-float32-p2_dim1 norm-float32-full
    matmul-float32-1d@1d matmul-float32-1d@2d matmul-float32-2d@1d matmul-float32-2d@2d
    matmul-float32-batched_broadcast matmul-float32-3d@2d matmul-int64-2d@2d matmul-bfloat16-2d@2d
    matmul-float16-2d@2d matmul-float32-mixed_dtype addmm-float32-beta_alpha baddbmm-float32-beta_alpha
    split-float32-int split-float32-list Tensor.scatter_-float32-src_dim1 nonzero-float32-as_tuple
""".split()


def test_table_covers_required_ops():
    missing = sorted(set(REQUIRED_OPS) - {op.name for op in TABLE})
    assert not missing, f"ops dropped from the table: {missing}"


def test_table_covers_required_cases():
    ids = {case.id for case in CASES}
    missing = [i for i in REQUIRED_CASES if i not in ids]
    assert not missing, f"cases dropped from the table: {missing}"


def test_table_samples_are_varied():
    """Every op family sees 0-dim, empty and non-contiguous inputs."""
    labels = {label for case in CASES for label in case.sample.label.split("_")}
    for needed in ("0dim", "empty", "transposed", "strided", "noncontig", "broadcast"):
        assert needed in labels, needed


# ---------------------------------------------------------------------------------------------
# The harness hands ml_dtypes.bfloat16 arrays straight to tensorplay.from_numpy.

@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3)], ids=["0dim", "empty", "2d"])
def test_from_numpy_bfloat16(shape):
    array = np.arange(np.prod(shape), dtype=np.float32).reshape(shape).astype(ml_dtypes.bfloat16)
    t = tensorplay.from_numpy(array)
    assert t.dtype == tensorplay.bfloat16
    assert tuple(t.shape) == shape
    np.testing.assert_array_equal(t.numpy().astype(np.float32), array.astype(np.float32))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "int64", "bool"])
@pytest.mark.parametrize("dims", [(0, 2, 3), (2, 3), (0, 3), (3,), (0, 1, 3)])
def test_reductions_around_kept_dims_match_torch(dims, dtype):
    """A 4-D tensor reduced on both sides of its kept dims (the bias gradient of a convolution:
    sum over N, H, W), reduced in place rather than permuted first; NaN and ties included."""
    values = np.random.default_rng(5).integers(-3, 4, (3, 5, 4, 7)).astype(np.float32)
    if dtype in ("float32", "bfloat16", "float64"):
        values[1, 2, 3, 4] = np.nan
    for op in ("sum", "amax", "amin", "any", "all"):
        if dtype == "bool" and op in ("sum", "amax", "amin"):
            continue
        want = getattr(torch, op)(torch.from_numpy(values).to(getattr(torch, dtype)), dims)
        got = getattr(tensorplay, op)(tensorplay.tensor(values).to(getattr(tensorplay, dtype)), dims)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], op
        np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=1e-2, equal_nan=True, err_msg=op)


@pytest.mark.parametrize("shape,dim", [((2, 0), 1), ((2, 0, 3), 1), ((0, 2), 0), ((3, 0, 2), (0, 1)), ((2, 0), None)],
                         ids=str)
@pytest.mark.parametrize("op", ["sum", "prod", "mean", "nansum", "std", "var", "logsumexp", "any", "all"])
def test_reductions_over_an_empty_dim_match_torch(op, shape, dim):
    """Reducing dims of size 0 gives each reduction's identity (or NaN for a mean), never a crash."""
    if (op == "logsumexp" and dim is None) or (op == "prod" and isinstance(dim, tuple)):
        dim = 0  # logsumexp needs a dim, prod takes one dim only
    kwargs = {} if dim is None else {"dim": dim}
    want = getattr(torch, op)(torch.zeros(shape), **kwargs)
    got = getattr(tensorplay, op)(tensorplay.zeros(shape), **kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.double().numpy(), want.double().numpy())


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int16"])
def test_integer_arithmetic_wraps_around_as_in_torch(dtype):
    """add, sub and mul (with alpha) of integers past the dtype's range wrap around as PyTorch's
    do, where the C++ arithmetic of signed types would be undefined."""
    big = int(np.iinfo(getattr(np, dtype)).max)
    values = [1, -5 if dtype != "uint8" else 5, big, big // 3 + 1]
    t, x = torch.tensor(values, dtype=getattr(torch, dtype)), tensorplay.tensor(values, dtype=getattr(tensorplay, dtype))
    for op in (lambda m, a: a * a, lambda m, a: a + a, lambda m, a: a - a * 3, lambda m, a: m.add(a, a, alpha=7),
               lambda m, a: m.sub(a, a, alpha=5)):
        assert op(tensorplay, x).tolist() == op(torch, t).tolist()


BINARY_ROWS = ["mul", "floor_divide", "remainder", "pow", "atan2", "maximum", "minimum", "bitwise_and", "bitwise_or",
               "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]


def number_forms(m, op):
    """What m.<op> does with a number in each place and with a keyword second operand: the
    result's values, or the kind of exception."""
    t, u = m.tensor([3, 1, 4]), m.tensor([2, 2, 5])
    keyword = "exponent" if op == "pow" else "other"
    forms = {"tensors": lambda: getattr(m, op)(t, u), "number_other": lambda: getattr(m, op)(t, 2),
             "number_input": lambda: getattr(m, op)(2, u), "numbers": lambda: getattr(m, op)(2, 3),
             "keyword": lambda: getattr(m, op)(t, **{keyword: u}),
             "method_keyword": lambda: getattr(t, op)(**{keyword: 2}) if op not in (
                 "atan2", "maximum", "minimum", "logical_and", "logical_or", "logical_xor") else getattr(t, op)(u)}
    seen = {}
    for name, form in forms.items():
        try:
            seen[name] = form().tolist()
        except Exception as e:  # noqa: BLE001 - the kind of the exception is what is compared
            seen[name] = type(e).__name__
    return seen


@pytest.mark.parametrize("op", BINARY_ROWS)
def test_binary_ops_take_numbers_where_torch_does(op):
    """The rows of dispatch/binary_ops.h bind a number operand where PyTorch takes one."""
    assert number_forms(tensorplay, op) == number_forms(torch, op)

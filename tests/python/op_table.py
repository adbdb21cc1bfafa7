"""The op table that drives test_ops.py.

Each Op names a tensorplay op and says how to call it, which inputs to try and in which dtypes.
test_ops.py calls it once with tensorplay and once with torch on the same values and compares.

An Op is called as fn(module, *args, **kwargs) with module = tensorplay or torch (torch_fn for
torch when the reference lives elsewhere, e.g. torch.nn.functional). Without fn, the op is looked
up by name: as a module function where torch has one, as a Tensor method where torch.Tensor has
one, and, for inplace=True ops, as the in-place method `name_`.

Sample arguments are NumPy arrays (turned into a tensor of each library), View (a non-contiguous
view of one), DType (a dtype name, e.g. for dtype=), lists of those, or plain Python values.
"""

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import ml_dtypes
import numpy as np

FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ("bool",)
LINALG_DTYPES = ("float32", "float64", "bfloat16", "float16", "int64")
# The ops with a complex form (op_table_complex.ALSO_COMPLEX) run in these too.
COMPLEX_DTYPES = ("complex64", "complex128")
# Broadcast, 0-dim, empty and non-contiguous inputs, and the many dim=/keepdim= forms of a
# reduction, take code paths that do not depend on the dtype: they run in a float, a 16-bit float
# and an integer dtype. The plain samples run in every dtype the op lists.
LAYOUT_DTYPES = ("float32", "bfloat16", "int64", "complex64")
# Python's operators reach the kernels that the functions test in every dtype; these cover a
# float, a 16-bit float, an integer and bool.
OPERATOR_DTYPES = ("float32", "bfloat16", "int64", "bool")
# Shape ops move elements without looking at them: one dtype per element size, and bool.
SHAPE_DTYPES = ("float32", "bfloat16", "int8", "int64", "bool")

NUMPY_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "bool": np.bool_,
    "complex64": np.complex64, "complex128": np.complex128,
}

# (rtol, atol) by the dtype of the result. float16 keeps 11 significant bits and bfloat16 8, so a
# result rounded differently in the two libraries is off by one unit in the last place: about
# 1e-3 and 8e-3 relative. The float32/float64 values are torch.testing's defaults.
TOLERANCES = {
    "float64": (1e-7, 1e-7),
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

# Floats that exercise NaN/inf handling, signed zero and round-half-to-even.
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0]
# Paired with SPECIAL elementwise: 0/0, inf-inf, inf*0, x/-0, NaN on either side, ...
SPECIAL_OTHER = [0.0, 1.0, math.inf, math.inf, 1.0, 0.0, -0.0, -math.inf, math.nan, -0.0, 0.5, -2.0]


class DType(str):
    """A dtype argument, by name; test_ops turns it into tensorplay.<name> or torch.<name>."""


@dataclass
class View:
    """A tensor argument that is a non-contiguous view: `base` is turned into a tensor, then `view`
    (e.g. a transpose) is applied to it in each library, so both ops read strided memory."""
    base: np.ndarray
    view: Callable[[Any], Any]


@dataclass
class Sample:
    label: str
    args: tuple
    kwargs: dict


def S(label, *args, **kwargs):
    return Sample(label, args, kwargs)


class Maker:
    """Makes the inputs of one (op, dtype): random values in the op's domain, stored in dtype.

    Integer dtypes take the whole numbers of the domain that the dtype can hold. nonzero=True
    keeps values away from 0 (divisors). integers=True makes floats whole numbers too, for ops
    that need ties or zeros (argmax, nonzero, all/any).
    """

    def __init__(self, dtype, seed, domain=(-3, 3), other_domain=None, nonzero_other=False, integers=False):
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)
        self.domain = domain
        self.other_domain = other_domain or domain
        self.nonzero_other = nonzero_other
        self.integers = integers

    @property
    def is_float(self):
        return self.dtype in FLOAT_DTYPES

    @property
    def layouts(self):
        """Whether to add the 0-dim, empty and non-contiguous samples (see LAYOUT_DTYPES)."""
        return self.dtype in LAYOUT_DTYPES

    def __call__(self, shape, dtype=None, domain=None, nonzero=False):
        dtype = dtype or self.dtype
        lo, hi = domain or self.domain
        if dtype == "bool":
            values = np.ones(shape, bool) if nonzero else self.rng.random(shape) < 0.5
        elif dtype in COMPLEX_DTYPES:  # both parts in the domain
            values = self.rng.uniform(lo, hi, shape) + 1j * self.rng.uniform(lo, hi, shape)
            if nonzero:
                values = np.where(np.abs(values) < 0.25, 0.25 + 0.25j, values)
        elif dtype in INT_DTYPES or self.integers:
            if dtype in INT_DTYPES:
                info = np.iinfo(NUMPY_DTYPES[dtype])
                lo, hi = max(lo, info.min), min(hi, info.max)
            lo, hi = math.ceil(lo), math.floor(hi)
            hi = max(lo, hi)  # e.g. a negative domain for uint8: all zeros
            values = self.rng.integers(lo, hi + 1, shape)
            if nonzero:
                values[values == 0] = 1 if hi >= 1 else -1
        else:
            values = self.rng.uniform(lo, hi, shape)
            if nonzero:
                values = np.where(np.abs(values) < 0.25, np.copysign(0.25, values), values)
        return np.asarray(values).astype(NUMPY_DTYPES[dtype])

    def other(self, shape, dtype=None):
        """The second operand of a binary op (its own domain; kept off 0 for divisions)."""
        return self(shape, dtype, self.other_domain, self.nonzero_other)

    def transposed(self, shape, **kw):
        """A view of `shape` whose last two dims are transposed in memory."""
        base = self(shape[:-2] + (shape[-1], shape[-2]), **kw)
        return View(base, lambda t: t.transpose(-2, -1))

    def strided(self, shape, **kw):
        """A view of `shape` that reads every other element of its last dim."""
        base = self(shape[:-1] + (2 * shape[-1],), **kw)
        return View(base, lambda t: t[..., ::2])

    def special(self, shape=(12,), other=False):
        values = np.array(SPECIAL_OTHER if other else SPECIAL).reshape(shape)
        return values.astype(NUMPY_DTYPES[self.dtype])

    def around(self, shape, value):
        """Values within 2% of +value or -value: x + value and x - value then nearly cancel."""
        signs = self.rng.choice([-1.0, 1.0], shape)
        return (signs * value * self.rng.uniform(0.98, 1.02, shape)).astype(NUMPY_DTYPES[self.dtype])

    def mask(self, shape):
        return self.rng.random(shape) < 0.5

    def index(self, shape, high, dtype=np.int64):
        return self.rng.integers(0, high, shape).astype(dtype)

    def unique_index(self, shape, high, dim):
        """Indices that never repeat along `dim` (scatter's result is undefined for repeats)."""
        keys = self.rng.random(shape[:dim] + (high,) + shape[dim + 1:])
        order = np.argsort(keys, axis=dim)
        return np.take(order, np.arange(shape[dim]), axis=dim).astype(np.int64)


@dataclass
class Op:
    name: str                               # the op's name in PyTorch's API
    samples: Callable[[Maker], list]        # mk -> [Sample]
    dtypes: tuple = ALL_DTYPES
    label: str = ""                         # the test id's first part; defaults to name
    fn: Callable | None = None              # fn(module, *args, **kwargs); default: by name
    torch_fn: Callable | None = None        # when torch's reference differs from fn
    kwargs: dict = field(default_factory=dict)  # added to every sample's kwargs
    method: bool = True                     # also Tensor.<name>, where torch.Tensor has it
    inplace: bool = False                   # also Tensor.<name>_, where torch.Tensor has it
    returns_self: bool = False              # fn is in-place: its result must be its first argument
    domain: tuple = (-3, 3)
    other_domain: tuple | None = None
    nonzero_other: bool = False
    integers: bool = False
    tol: dict = field(default_factory=dict)  # dtype name -> (rtol, atol), over TOLERANCES
    isolate: bool = False                   # run in a child process: tensorplay has crashed the interpreter here

    def __post_init__(self):
        self.label = self.label or self.name


# ---------------------------------------------------------------------------------------------
# Sample sets shared by several ops.

def unary_samples(mk):
    samples = [S("2d", mk((5, 7)))]  # 35 elements: a vectorized body and a scalar tail
    if mk.is_float:
        samples.append(S("special", mk.special()))
    if mk.layouts:
        samples += [
            S("0dim", mk(())),
            S("empty", mk((0, 3))),
            S("transposed", mk.transposed((4, 3))),
        ]
    return samples


def binary_samples(mk):
    samples = [
        S("same_shape", mk((5, 7)), mk.other((5, 7))),
        S("int_scalar", mk((3, 4)), 2),
        S("float_scalar", mk((3, 4)), 1.5),
    ]
    if mk.is_float:
        samples += [
            S("special", mk.special(), mk.special(other=True)),
            # 1.1 has no exact 16-bit form: torch computes with the number as given, and a result
            # that nearly cancels shows whether it was rounded to the tensor's dtype first.
            S("inexact_scalar", mk.around((3, 4), 1.1), 1.1),
        ]
    if mk.layouts:
        samples += [
            S("broadcast", mk((3, 1)), mk.other((1, 4))),
            S("0dim_other", mk((3, 4)), mk.other(())),
            S("0dim", mk(()), mk.other(())),
            S("empty", mk((0, 4)), mk.other((1, 4))),
            S("noncontig", mk.transposed((3, 4)),
              mk.strided((3, 4), domain=mk.other_domain, nonzero=mk.nonzero_other)),
            # Both operands broadcast, the other one to more dims: its gradient is summed over a dim
            # that it lacks and over one that it has as 1.
            S("broadcast_ranks", mk((2, 1, 3)), mk.other((4, 1))),
        ]
    return samples


def operator_samples(mk):
    """Python's operators reach the same kernels as the functions: fewer shapes, every kind of operand."""
    keep = ("same_shape", "broadcast", "0dim_other", "int_scalar", "float_scalar", "inexact_scalar", "special")
    return [s for s in binary_samples(mk) if s.label in keep]


def tensor_binary_samples(mk):
    """binary_samples without the Python-number operands, for ops that take only tensors."""
    return [s for s in binary_samples(mk) if not s.label.endswith("_scalar")]


def reflected_samples(mk):
    """A tensor for `number <op> tensor`, the number being fn's business."""
    return [
        S("0dim", mk(())),
        S("2d", mk((3, 4))),
        S("transposed", mk.transposed((3, 4))),
    ]


def ternary_samples(mk):
    """(input, tensor1, tensor2), the last one drawn like a binary op's other operand."""
    samples = [
        S("same_shape", mk((3, 4)), mk((3, 4)), mk.other((3, 4))),
        S("broadcast", mk((3, 1)), mk((1, 4)), mk.other((4,))),
    ]
    if mk.layouts:
        samples += [
            S("0dim", mk(()), mk(()), mk.other(())),
            S("empty", mk((0, 4)), mk((0, 4)), mk.other((4,))),
            S("noncontig", mk.transposed((3, 4)), mk.strided((3, 4)), mk.other((3, 4))),
        ]
    return samples


def reduction_samples(*forms, dim_needed=False):
    """A (2, 3, 4) input reduced as each of `forms` says (label, kwargs); then 0-dim, empty and
    non-contiguous inputs and special values, reduced over dim 1 or the whole tensor.
    Only the first two forms run in every dtype; the rest are about parsing dims and layouts."""
    def samples(mk):
        x = mk((2, 3, 4))
        out = [Sample(label, (x,), kwargs) for label, kwargs in (forms if mk.layouts else forms[:2])]
        if mk.is_float:
            out.append(S("special_dim1", mk.special((3, 4)), dim=1))
        if mk.layouts:
            whole = {"dim": 0} if dim_needed else {}
            out += [
                S("0dim", mk(()), **whole),
                S("empty", mk((0, 3)), **whole),
                S("empty_dim1", mk((0, 3)), dim=1),
                S("transposed_dim1", mk.transposed((3, 4)), dim=1),
                S("strided_dim-1", mk.strided((3, 4)), dim=-1),
            ]
        return out
    return samples


FULL = ("full", {})
DIM1 = ("dim1", {"dim": 1})
DIMS = ("dims0_2", {"dim": (0, 2)})
KEEPDIM = ("dim1_keepdim", {"dim": 1, "keepdim": True})
DIMS_KEEPDIM = ("dims0_2_keepdim", {"dim": (0, 2), "keepdim": True})
DIM_NONE = ("dim_none", {"dim": None})


def with_extra(samples, *extra):
    """samples plus a few op-specific layout samples (extra: functions mk -> Sample)."""
    return lambda mk: samples(mk) + ([make(mk) for make in extra] if mk.layouts else [])


# ---------------------------------------------------------------------------------------------
# Elementwise unary ops.

def unary(name, domain=(-3, 3), **kw):
    return Op(name, unary_samples, domain=domain, inplace=True, **kw)


def functional(name, torch_fn=None, **kw):
    """An op that torch has only in torch.nn.functional and tensorplay at module level."""
    return Op(name, unary_samples, fn=lambda m, x, **k: getattr(m, name)(x, **k),
              torch_fn=torch_fn or (lambda m, x, **k: getattr(m.nn.functional, name)(x, **k)), **kw)


def torch_gelu_through_float64(m, x, **kwargs):
    """torch's float32 and bfloat16 gelu on AVX-512 returns NaN for +inf inside a vector (its
    float64 kernel and its scalar tail return inf, the limit, as tensorplay does): the reference
    for floating inputs is torch's float64 gelu, rounded to their dtype."""
    if isinstance(x, m.Tensor) and x.is_floating_point():
        return m.nn.functional.gelu(x.double(), **kwargs).to(x.dtype)
    return m.nn.functional.gelu(x, **kwargs)


def clamp_tensor_samples(mk):
    return [
        S("min_max", mk((3, 4)), min=mk((3, 1)), max=mk((1, 4))),  # min > max in places: max wins
        S("min_only", mk((3, 4)), min=mk((4,))),
        S("max_only", mk((3, 4)), max=mk(())),
        S("0dim", mk(()), min=mk(()), max=mk(())),
        S("noncontig", mk.transposed((3, 4)), min=mk.strided((3, 4)), max=mk((3, 4))),
        S("no_bounds", mk((3, 4))),
    ]


UNARY = [
    unary("neg"),
    unary("abs"),
    unary("sign"),
    unary("exp"),
    unary("exp2"),
    unary("expm1", domain=(-2, 2)),
    unary("log", domain=(0.1, 5)),
    unary("log2", domain=(0.1, 5)),
    unary("log10", domain=(0.1, 5)),
    unary("log1p", domain=(-0.9, 3)),
    unary("sqrt", domain=(0, 5)),
    unary("rsqrt", domain=(0.1, 5)),
    unary("reciprocal"),
    unary("sin"),
    unary("cos"),
    unary("tan", domain=(-1.2, 1.2)),  # away from the poles at +-pi/2
    unary("asin", domain=(-0.95, 0.95)),
    unary("acos", domain=(-0.95, 0.95)),
    unary("atan"),
    unary("sinh"),
    unary("cosh"),
    unary("tanh"),
    unary("sigmoid"),
    unary("erf"),
    unary("erfinv", domain=(-0.95, 0.95)),
    unary("floor"),
    unary("ceil"),
    unary("round"),
    unary("round", label="round.decimals2", kwargs={"decimals": 2}),
    unary("trunc"),
    unary("relu"),
    functional("silu"),
    functional("gelu", torch_fn=torch_gelu_through_float64),
    functional("gelu", label="gelu.tanh", kwargs={"approximate": "tanh"}),
    functional("softplus"),
    functional("softplus", label="softplus.beta2", kwargs={"beta": 2, "threshold": 3}),
    unary("bitwise_not"),
    unary("logical_not"),
    unary("isnan"),
    unary("isinf"),
    unary("isfinite"),
    unary("nan_to_num"),
    unary("nan_to_num", label="nan_to_num.values", kwargs={"nan": 1.5, "posinf": 100.0, "neginf": -100.0}),
    unary("clamp", kwargs={"min": -1, "max": 1}),
    unary("clamp", label="clamp.min", kwargs={"min": -0.5}),
    unary("clamp", label="clamp.max", kwargs={"max": 0.5}),
    unary("clamp", label="clamp.float_bounds", kwargs={"min": -1.5, "max": 0.5}),  # int inputs promote
    unary("clamp", label="clamp.min_gt_max", kwargs={"min": 1, "max": -1}),
    Op("clamp", clamp_tensor_samples, label="clamp.tensor", inplace=True),
    unary("clip", kwargs={"min": -1, "max": 1}),
    Op("clip", clamp_tensor_samples, label="clip.tensor", inplace=True),
    unary("square"),
]


# ---------------------------------------------------------------------------------------------
# Elementwise binary ops, as functions and methods (tensor-tensor and tensor-number).

def binary(name, samples=binary_samples, **kw):
    return Op(name, samples, inplace=True, **kw)


DIVISION = {"nonzero_other": True}  # integer division by zero raises in torch


def pow_samples(mk):
    return binary_samples(mk) + [
        S("negative_int_exponent", mk((3, 4)), -2),  # raises for integer tensors
        S("fractional_exponent", mk((3, 4)), 0.5),
    ]


def with_mixed_dtypes(samples):
    """samples plus operands of two dtypes, for the gradient checks: each input's gradient comes back in its own
    dtype, also where a 0-dim other of a wider dtype leaves the result in the narrower one."""
    return with_extra(
        samples,
        lambda mk: S("mixed_dtype", mk((3, 1)), mk.other((4,), dtype=other_dtype(mk.dtype))),
        lambda mk: S("0dim_mixed_dtype", mk((3, 4)), mk.other((), dtype=other_dtype(mk.dtype))),
        lambda mk: S("bfloat16_other", mk((4,)), mk.other((4,), dtype="bfloat16")),
        lambda mk: S("int64_other", mk((3, 4)), mk.other((3, 4), dtype="int64")),
    )


BINARY = [
    binary("add"),
    binary("add", label="add.alpha2", kwargs={"alpha": 2}),
    binary("add", label="add.alpha_float", kwargs={"alpha": 0.3}),  # raises for integer tensors
    binary("sub"),
    binary("sub", label="sub.alpha2", kwargs={"alpha": 2}),
    # torch's scalar loop (short inner dims, row tails) rounds alpha * b to bfloat16 before the
    # subtraction, its vector loop does not (nor does tensorplay): near cancellation they differ by
    # an ulp of the operands, not of the result.
    binary("sub", label="sub.alpha_float", kwargs={"alpha": 0.3}, tol={"bfloat16": (1.6e-2, 2e-2)}),
    binary("rsub"),
    binary("rsub", label="rsub.alpha2", kwargs={"alpha": 2}),
    binary("mul", with_mixed_dtypes(binary_samples)),
    binary("div", with_mixed_dtypes(binary_samples), **DIVISION),
    binary("div", label="div.trunc", kwargs={"rounding_mode": "trunc"}, **DIVISION),
    binary("div", label="div.floor", kwargs={"rounding_mode": "floor"}, **DIVISION),
    binary("floor_divide", **DIVISION),
    binary("remainder", **DIVISION),
    binary("pow", pow_samples, domain=(0.1, 3), other_domain=(-2, 3)),
    binary("pow", pow_samples, label="pow.negative_base", domain=(-3, 3), other_domain=(0, 3)),
    Op("pow", reflected_samples, label="pow.scalar_base", fn=lambda m, x: m.pow(2, x), domain=(0, 3)),
    binary("atan2", tensor_binary_samples),
    binary("maximum", with_mixed_dtypes(tensor_binary_samples)),
    binary("minimum", tensor_binary_samples),
    Op("max", tensor_binary_samples, label="max.other"),
    Op("min", tensor_binary_samples, label="min.other"),
    binary("bitwise_and", domain=(-100, 100)),
    binary("bitwise_or", domain=(-100, 100)),
    binary("bitwise_xor", domain=(-100, 100)),
    binary("eq", integers=True),  # whole numbers, so that some pairs are equal
    binary("ne", integers=True),
    binary("lt", integers=True),
    binary("le", integers=True),
    binary("gt", integers=True),
    binary("ge", integers=True),
    binary("logical_and", tensor_binary_samples, integers=True),
    binary("logical_or", tensor_binary_samples, integers=True),
    binary("logical_xor", tensor_binary_samples, integers=True),
]


def lerp_samples(mk):
    return [
        S("scalar_weight", mk((3, 4)), mk((3, 4)), 0.3),
        S("tensor_weight", mk((3, 4)), mk((3, 4)), mk((3, 4), domain=(0, 1))),
        S("broadcast", mk((3, 1)), mk((1, 4)), mk((4,), domain=(0, 1))),
        S("0dim", mk(()), mk(()), 0.75),
        S("empty", mk((0, 4)), mk((0, 4)), 0.5),
        S("noncontig", mk.transposed((3, 4)), mk.strided((3, 4)), mk.transposed((3, 4), domain=(0, 1))),
    ]


def where_samples(mk):
    return [
        S("tensors", mk.mask((3, 4)), mk((3, 4)), mk((3, 4))),
        S("broadcast", mk.mask((3, 1)), mk((1, 4)), mk((3, 4))),
        S("tensor_int_scalar", mk.mask((3, 4)), mk((3, 4)), 2),
        S("float_scalar_tensor", mk.mask((3, 4)), 2.5, mk((3, 4))),
        S("int_scalars", mk.mask((3, 4)), 1, 0),
        S("float_scalars", mk.mask((3, 4)), 1.5, 0),
        S("0dim", mk.mask(()), mk(()), mk(())),
        S("empty", mk.mask((0, 4)), mk((0, 4)), mk((0, 4))),
        S("noncontig", View(mk.mask((4, 3)), lambda t: t.t()), mk.transposed((3, 4)), mk.strided((3, 4))),
        S("other_float32", mk.mask((3, 4)), mk((3, 4)), mk((3, 4), dtype="float32")),
        S("uint8_condition", mk((3, 4), dtype="uint8", domain=(0, 1)), mk((3, 4)), mk((3, 4))),
        S("condition_only", mk.mask((3, 4))),
        S("broadcast_ranks", mk.mask((3, 4)), mk((3, 4)), mk((4,))),
    ]


def tensor_where_samples(mk):
    """x.where(condition, other)."""
    return [
        S("tensors", mk((3, 4)), mk.mask((3, 4)), mk((3, 4))),
        S("broadcast", mk((1, 4)), mk.mask((3, 1)), mk((3, 4))),
        S("scalar_other", mk((3, 4)), mk.mask((3, 4)), 2),
        S("0dim", mk(()), mk.mask(()), mk(())),
    ]


TERNARY = [
    Op("lerp", lerp_samples, inplace=True),
    Op("addcmul", ternary_samples, inplace=True),
    Op("addcmul", ternary_samples, label="addcmul.value", kwargs={"value": 0.3}, inplace=True),
    Op("addcmul", ternary_samples, label="addcmul.int_value", kwargs={"value": 2}, inplace=True),
    Op("addcdiv", ternary_samples, inplace=True, nonzero_other=True),
    Op("addcdiv", ternary_samples, label="addcdiv.value", kwargs={"value": 0.3}, inplace=True, nonzero_other=True),
    Op("where", where_samples, method=False),
    Op("where", tensor_where_samples, label="Tensor.where", fn=lambda m, x, cond, other: x.where(cond, other)),
]


# ---------------------------------------------------------------------------------------------
# Python's operators: tensor <op> tensor/number, number <op> tensor, and the in-place forms.

def operator_op(name, fn, samples=operator_samples, **kw):
    return Op(name, samples, fn=lambda m, *args: fn(*args), dtypes=OPERATOR_DTYPES, **kw)


def reflected(name, fn, **kw):
    """number <op> tensor, with an int and with a float on the left."""
    return [
        Op(name, reflected_samples, label=f"{name}.int", fn=lambda m, x: fn(2, x), dtypes=OPERATOR_DTYPES, **kw),
        Op(name, reflected_samples, label=f"{name}.float", fn=lambda m, x: fn(2.5, x), dtypes=OPERATOR_DTYPES, **kw),
    ]


def inplace_operator(name, fn, **kw):
    return Op(name, operator_samples, fn=lambda m, x, y: fn(x, y), returns_self=True, dtypes=OPERATOR_DTYPES, **kw)


OPERATORS = [
    operator_op("__add__", operator.add),
    operator_op("__sub__", operator.sub),
    operator_op("__mul__", operator.mul),
    operator_op("__truediv__", operator.truediv, **DIVISION),
    operator_op("__floordiv__", operator.floordiv, **DIVISION),
    operator_op("__mod__", operator.mod, **DIVISION),
    operator_op("__pow__", operator.pow, domain=(0.1, 3), other_domain=(0, 3)),
    operator_op("__and__", operator.and_, domain=(-100, 100)),
    operator_op("__or__", operator.or_, domain=(-100, 100)),
    operator_op("__xor__", operator.xor, domain=(-100, 100)),
    operator_op("__eq__", operator.eq, integers=True),
    operator_op("__ne__", operator.ne, integers=True),
    operator_op("__lt__", operator.lt, integers=True),
    operator_op("__le__", operator.le, integers=True),
    operator_op("__gt__", operator.gt, integers=True),
    operator_op("__ge__", operator.ge, integers=True),
    operator_op("__neg__", operator.neg, unary_samples),
    operator_op("__abs__", abs, unary_samples),
    operator_op("__invert__", operator.invert, unary_samples),
    *reflected("__radd__", operator.add),
    *reflected("__rsub__", operator.sub),
    *reflected("__rmul__", operator.mul),
    *reflected("__rtruediv__", operator.truediv, nonzero_other=True, domain=(0.5, 3)),
    *reflected("__rfloordiv__", operator.floordiv, domain=(1, 3)),
    *reflected("__rmod__", operator.mod, domain=(1, 3)),
    *reflected("__rpow__", operator.pow, domain=(0, 3)),
    Op("__rpow__", reflected_samples, label="__rpow__.negative_int_exponent", fn=lambda m, x: 2 ** x,
       domain=(-3, -1), dtypes=OPERATOR_DTYPES),  # raises for integer tensors
    Op("__rand__", reflected_samples, fn=lambda m, x: 6 & x, domain=(-100, 100), dtypes=OPERATOR_DTYPES),
    Op("__ror__", reflected_samples, fn=lambda m, x: 6 | x, domain=(-100, 100), dtypes=OPERATOR_DTYPES),
    Op("__rxor__", reflected_samples, fn=lambda m, x: 6 ^ x, domain=(-100, 100), dtypes=OPERATOR_DTYPES),
    inplace_operator("__iadd__", operator.iadd),
    inplace_operator("__isub__", operator.isub),
    inplace_operator("__imul__", operator.imul),
    inplace_operator("__itruediv__", operator.itruediv, **DIVISION),
    inplace_operator("__ifloordiv__", operator.ifloordiv, **DIVISION),
    inplace_operator("__imod__", operator.imod, **DIVISION),
    inplace_operator("__ipow__", operator.ipow, domain=(0.1, 3), other_domain=(0, 3)),
    inplace_operator("__iand__", operator.iand, domain=(-100, 100)),
    inplace_operator("__ior__", operator.ior, domain=(-100, 100)),
    inplace_operator("__ixor__", operator.ixor, domain=(-100, 100)),
]


# ---------------------------------------------------------------------------------------------
# Type promotion: each dtype against every other, as tensors, as 0-dim tensors (which only
# count when they are of a higher category) and as Python numbers.

def promotion_tensor_samples(mk):
    return [S(f"with_{d}", mk((2, 3)), mk((2, 3), dtype=d)) for d in ALL_DTYPES]


def promotion_0dim_samples(mk):
    return [S(f"with_0dim_{d}", mk((2, 3)), mk((), dtype=d)) for d in ALL_DTYPES]


def promotion_scalar_samples(mk):
    return [S("int", mk((2, 3)), 2), S("float", mk((2, 3)), 2.5), S("bool", mk((2, 3)), True)]


def promotion_inplace_samples(mk):
    return promotion_tensor_samples(mk) + promotion_scalar_samples(mk)


PROMOTION = [
    Op("__add__", promotion_tensor_samples, label="promote.tensor", fn=lambda m, x, y: x + y),
    Op("__add__", promotion_0dim_samples, label="promote.0dim", fn=lambda m, x, y: x + y),
    Op("__add__", promotion_scalar_samples, label="promote.scalar", fn=lambda m, x, y: x + y),
    # x += y keeps x's dtype, so a y of a higher category must raise.
    Op("__iadd__", promotion_inplace_samples, label="promote.iadd", fn=lambda m, x, y: operator.iadd(x, y),
       returns_self=True),
]


# ---------------------------------------------------------------------------------------------
# Reductions.

SUM_FORMS = (FULL, DIM1, DIMS, KEEPDIM, DIMS_KEEPDIM, DIM_NONE, ("dtype_float64", {"dtype": DType("float64")}))


def empty_dim0(mk):
    return S("empty_dim0", mk((0, 3)), dim=0)  # a dim of size 0 reduced away


def var_extra(mk):
    return S("dof0", mk((3, 1)), dim=1)  # one element per row: correction leaves no degrees of freedom


REDUCTIONS = [
    Op("sum", with_extra(reduction_samples(*SUM_FORMS), empty_dim0)),
    Op("mean", with_extra(reduction_samples(*SUM_FORMS), empty_dim0)),
    Op("prod", with_extra(reduction_samples(FULL, DIM1, KEEPDIM, DIMS, ("dtype_float64", {"dtype": DType("float64")})),
                          empty_dim0), domain=(-1.5, 1.5)),
    Op("amax", with_extra(reduction_samples(FULL, DIM1, DIMS, KEEPDIM, DIMS_KEEPDIM), empty_dim0), integers=True),
    Op("amin", with_extra(reduction_samples(FULL, DIM1, DIMS, KEEPDIM, DIMS_KEEPDIM), empty_dim0), integers=True),
    # Whole-number values, so that rows have ties: the first index of the extreme must win.
    Op("max", with_extra(reduction_samples(FULL, DIM1, KEEPDIM, DIMS), empty_dim0), integers=True),
    Op("min", with_extra(reduction_samples(FULL, DIM1, KEEPDIM, DIMS), empty_dim0), integers=True),
    Op("argmax", with_extra(reduction_samples(FULL, DIM1, KEEPDIM, DIM_NONE,
                                              ("dim_none_keepdim", {"dim": None, "keepdim": True})), empty_dim0),
       integers=True),
    Op("argmin", with_extra(reduction_samples(FULL, DIM1, KEEPDIM, DIM_NONE,
                                              ("dim_none_keepdim", {"dim": None, "keepdim": True})), empty_dim0),
       integers=True),
]

VAR_FORMS = (FULL, DIM1, DIMS, KEEPDIM, DIM_NONE,
             ("dim1_correction0", {"dim": 1, "correction": 0}),
             ("correction2", {"correction": 2}),
             ("unbiased_false", {"unbiased": False}),
             ("dim1_unbiased_false", {"dim": 1, "unbiased": False}))
NORM_FORMS = (FULL,
              ("pinf", {"p": math.inf}),
              DIM_NONE,
              ("p3.0_dim1", {"p": 3.0, "dim": 1}),
              ("pinf_dim-1", {"p": math.inf, "dim": -1}),
              ("dtype_float64", {"dtype": DType("float64")}))


def norm_int_p_samples(mk):
    x = mk((2, 3, 4))
    return [S("p1", x, p=1), S("p2_dim1", x, p=2, dim=1), S("p3_dim1", x, p=3, dim=1),
            S("p2_dims0_2_keepdim", x, p=2, dim=(0, 2), keepdim=True)]
LOGSUMEXP_FORMS = (DIM1, DIMS, KEEPDIM, DIM_NONE)
BOOL_FORMS = (FULL, DIM1, DIMS, KEEPDIM, DIM_NONE)
CUMULATIVE_FORMS = (("dim0", {"dim": 0}), DIM1, ("dim1_dtype_float64", {"dim": 1, "dtype": DType("float64")}))
SOFTMAX_FORMS = (("dim0", {"dim": 0}), DIM1, ("dim1_dtype_float64", {"dim": 1, "dtype": DType("float64")}))

REDUCTIONS += [
    Op("var", with_extra(reduction_samples(*VAR_FORMS), var_extra)),
    Op("std", with_extra(reduction_samples(*VAR_FORMS), var_extra)),
    Op("norm", reduction_samples(*NORM_FORMS)),
    # An int p (norm(x, p=1)) crashed the interpreter (segfault) when this table was written.
    Op("norm", norm_int_p_samples, label="norm.int_p", isolate=True),
    Op("logsumexp", reduction_samples(*LOGSUMEXP_FORMS, dim_needed=True)),
    Op("all", reduction_samples(*BOOL_FORMS), domain=(-1, 1), integers=True),  # whole numbers: zeros occur
    Op("any", reduction_samples(*BOOL_FORMS), domain=(-1, 1), integers=True),
    Op("cumsum", reduction_samples(*CUMULATIVE_FORMS, dim_needed=True)),
    Op("cumprod", reduction_samples(*CUMULATIVE_FORMS, dim_needed=True), domain=(-1.5, 1.5)),
    Op("softmax", reduction_samples(*SOFTMAX_FORMS, dim_needed=True)),
    Op("log_softmax", reduction_samples(*SOFTMAX_FORMS, dim_needed=True)),
]


# ---------------------------------------------------------------------------------------------
# Matrix products.

def other_dtype(dtype):
    return "float32" if dtype == "float64" else "float64"


def matmul_samples(mk):
    return [
        S("1d@1d", mk((4,)), mk((4,))),
        S("1d@2d", mk((4,)), mk((4, 3))),
        S("2d@1d", mk((3, 4)), mk((4,))),
        S("2d@2d", mk((3, 4)), mk((4, 5))),
        S("batched_broadcast", mk((2, 1, 3, 4)), mk((3, 4, 2))),
        S("3d@2d", mk((2, 3, 4)), mk((4, 5))),
        S("2d@3d", mk((3, 4)), mk((2, 4, 5))),
        S("1d@3d", mk((4,)), mk((2, 4, 5))),
        S("transposed", mk.transposed((3, 4)), mk.transposed((4, 5))),
        S("strided", mk.strided((3, 4)), mk.strided((4, 5))),
        S("empty_m", mk((0, 4)), mk((4, 3))),
        S("empty_k", mk((3, 0)), mk((0, 4))),  # a sum of nothing: zeros
        S("0dim", mk(()), mk((4,))),
        S("size_mismatch", mk((3, 4)), mk((5, 2))),
        S("mixed_dtype", mk((3, 4)), mk((4, 5), dtype=other_dtype(mk.dtype))),
    ]


def mm_samples(mk):
    return [
        S("2d", mk((3, 4)), mk((4, 5))),
        S("transposed", mk.transposed((3, 4)), mk.transposed((4, 5))),
        S("strided", mk.strided((3, 4)), mk((4, 5))),
        S("empty_k", mk((3, 0)), mk((0, 4))),
        S("1d", mk((4,)), mk((4, 5))),
        S("size_mismatch", mk((3, 4)), mk((5, 2))),
        S("mixed_dtype", mk((3, 4)), mk((4, 5), dtype=other_dtype(mk.dtype))),
    ]


def bmm_samples(mk):
    return [
        S("3d", mk((2, 3, 4)), mk((2, 4, 5))),
        S("transposed", mk.transposed((2, 3, 4)), mk.transposed((2, 4, 5))),
        S("empty_batch", mk((0, 3, 4)), mk((0, 4, 5))),
        S("batch_mismatch", mk((2, 3, 4)), mk((3, 4, 5))),
        S("2d", mk((3, 4)), mk((4, 5))),
        S("mixed_dtype", mk((2, 3, 4)), mk((2, 4, 5), dtype=other_dtype(mk.dtype))),
    ]


def addmm_samples(mk):
    samples = [
        S("2d", mk((3, 5)), mk((3, 4)), mk((4, 5))),
        S("broadcast_input", mk((5,)), mk((3, 4)), mk((4, 5))),
        S("beta_alpha", mk((3, 5)), mk((3, 4)), mk((4, 5)), beta=2, alpha=3),
        S("float_beta_alpha", mk((3, 5)), mk((3, 4)), mk((4, 5)), beta=0.5, alpha=2.0),  # raise for int64
        S("transposed", mk.transposed((3, 5)), mk.transposed((3, 4)), mk((4, 5))),
        S("empty_k", mk((3, 5)), mk((3, 0)), mk((0, 5))),
        S("mixed_dtype", mk((3, 5)), mk((3, 4)), mk((4, 5), dtype=other_dtype(mk.dtype))),
    ]
    if mk.is_float:  # beta=0 ignores input, NaN included
        samples.append(S("beta0_nan_input", np.full((3, 5), np.nan, NUMPY_DTYPES[mk.dtype]),
                         mk((3, 4)), mk((4, 5)), beta=0))
    return samples


def baddbmm_samples(mk):
    samples = [
        S("3d", mk((2, 3, 5)), mk((2, 3, 4)), mk((2, 4, 5))),
        S("broadcast_input", mk((3, 5)), mk((2, 3, 4)), mk((2, 4, 5))),
        S("beta_alpha", mk((2, 3, 5)), mk((2, 3, 4)), mk((2, 4, 5)), beta=2, alpha=3),
        S("float_beta_alpha", mk((2, 3, 5)), mk((2, 3, 4)), mk((2, 4, 5)), beta=0.5, alpha=2.0),
        S("transposed", mk((2, 3, 5)), mk.transposed((2, 3, 4)), mk.transposed((2, 4, 5))),
        S("mixed_dtype", mk((2, 3, 5)), mk((2, 3, 4)), mk((2, 4, 5), dtype=other_dtype(mk.dtype))),
    ]
    if mk.is_float:
        samples.append(S("beta0_nan_input", np.full((2, 3, 5), np.nan, NUMPY_DTYPES[mk.dtype]),
                         mk((2, 3, 4)), mk((2, 4, 5)), beta=0))
    return samples


def dot_samples(mk):
    return [
        S("1d", mk((5,)), mk((5,))),
        S("strided", mk.strided((5,)), mk((5,))),
        S("empty", mk((0,)), mk((0,))),
        S("size_mismatch", mk((5,)), mk((4,))),
        S("2d", mk((2, 3)), mk((2, 3))),
        S("0dim", mk(()), mk(())),
        S("mixed_dtype", mk((5,)), mk((5,), dtype=other_dtype(mk.dtype))),
    ]


def mv_samples(mk):
    return [
        S("2d", mk((3, 4)), mk((4,))),
        S("transposed", mk.transposed((3, 4)), mk.strided((4,))),
        S("empty_k", mk((3, 0)), mk((0,))),
        S("size_mismatch", mk((3, 4)), mk((3,))),
        S("mixed_dtype", mk((3, 4)), mk((4,), dtype=other_dtype(mk.dtype))),
    ]


def outer_samples(mk):
    return [
        S("1d", mk((3,)), mk((4,))),
        S("strided", mk.strided((3,)), mk((4,))),
        S("empty", mk((0,)), mk((4,))),
        S("mixed_dtype", mk((3,)), mk((4,), dtype=other_dtype(mk.dtype))),
    ]


def addmv_samples(mk):
    return [
        S("2d", mk((3,)), mk((3, 4)), mk((4,))),
        S("broadcast_input", mk((1,)), mk((3, 4)), mk((4,))),
        S("float_beta_alpha", mk((3,)), mk.transposed((3, 4)), mk.strided((4,)), beta=0.5, alpha=2.0),
        S("size_mismatch", mk((2,)), mk((3, 4)), mk((4,))),
        S("mixed_dtype", mk((3,)), mk((3, 4)), mk((4,), dtype=other_dtype(mk.dtype))),
    ]


def addr_samples(mk):
    return [
        S("1d", mk((3, 4)), mk((3,)), mk((4,))),
        S("broadcast_input", mk((4,)), mk.strided((3,)), mk((4,)), beta=2, alpha=3),
        S("bad_input", mk((2, 4)), mk((3,)), mk((4,))),
        S("mixed_dtype", mk((3, 4)), mk((3,)), mk((4,), dtype=other_dtype(mk.dtype))),
    ]


def addbmm_samples(mk):
    return [
        S("3d", mk((3, 5)), mk((2, 3, 4)), mk((2, 4, 5))),
        S("float_beta_alpha", mk((5,)), mk.transposed((2, 3, 4)), mk((2, 4, 5)), beta=0.5, alpha=2.0),
        S("empty_batch", mk((3, 5)), mk((0, 3, 4)), mk((0, 4, 5))),
        S("batch_mismatch", mk((3, 5)), mk((2, 3, 4)), mk((3, 4, 5))),
        S("mixed_dtype", mk((3, 5)), mk((2, 3, 4)), mk((2, 4, 5), dtype=other_dtype(mk.dtype))),
    ]


def tensordot_samples(mk):
    return [
        S("int_dims", mk((2, 3, 4)), mk((3, 4, 2)), dims=2),
        S("lists", mk((3, 4, 5)), mk((5, 2, 3)), dims=([0, 2], [2, 0])),
        S("outer", mk((3,)), mk.transposed((2, 4)), dims=0),
        S("size_mismatch", mk((3, 4)), mk((5, 2)), dims=([1], [0])),
        S("mixed_dtype", mk((3, 4)), mk((4, 2), dtype=other_dtype(mk.dtype)), dims=1),
    ]


def einsum_samples(mk):
    return [
        S("matmul", "ij,jk->ik", mk((3, 4)), mk((4, 5))),
        S("batched", "bij,bjk->bik", mk((2, 3, 4)), mk.transposed((2, 4, 5))),
        S("implicit", "ij,kj", mk((3, 4)), mk((2, 4))),
        S("trace", "ii", mk((4, 4))),
        S("diagonal", "bii->bi", mk((2, 3, 3))),
        S("outer", "i,j->ij", mk((3,)), mk((4,))),
        S("sum_out", "ijk->j", mk((2, 3, 4))),
        S("three", "ij,jk,kl->il", mk((2, 3)), mk((3, 4)), mk((4, 2))),
        S("ellipsis", "...ij,...jk->...ik", mk((2, 3, 4)), mk((4, 2))),
        S("broadcast", "bij,bjk->bik", mk((1, 3, 4)), mk((2, 4, 5))),
        S("bilinear", "bn,anm,bm->ba", mk((2, 3)), mk((4, 3, 5)), mk((2, 5))),
        S("uppercase", "Ab,bC->AC", mk((2, 3)), mk((3, 2))),
        S("too_few_operands", "ij,jk->ik", mk((3, 4))),
        S("bad_subscripts", "ijk,jk->ik", mk((3, 4)), mk((4, 5))),
        S("size_mismatch", "ij,jk->ik", mk((3, 4)), mk((5, 2))),
        S("unknown_output", "ij,jk->iz", mk((3, 4)), mk((4, 5))),
        S("mixed_dtype", "ij,jk->ik", mk((3, 4)), mk((4, 5), dtype=other_dtype(mk.dtype))),
    ]


def cross_samples(mk):
    return [
        S("dim1", mk((4, 3)), mk((4, 3)), dim=1),
        S("broadcast", mk((2, 1, 3)), mk((1, 4, 3)), dim=-1),
        S("default_dim", mk((3, 4)), mk((3, 4))),
        S("not_3", mk((4, 2)), mk((4, 2)), dim=1),
        S("mixed_dtype", mk((2, 3)), mk((2, 3), dtype=other_dtype(mk.dtype)), dim=1),
    ]


def trace_samples(mk):
    return [S("square", mk((4, 4))), S("wide", mk.transposed((3, 5))), S("empty", mk((0, 3))), S("1d", mk((4,)))]


def diagonal_samples(mk):
    return [
        S("2d", mk((4, 5))),
        S("offset", mk((4, 5)), offset=2),
        S("negative_offset", mk.transposed((4, 5)), offset=-1),
        S("dims", mk((2, 3, 4)), offset=1, dim1=2, dim2=0),
        S("offset_past_end", mk((3, 3)), offset=5),
        S("same_dims", mk((3, 3)), dim1=1, dim2=1),
    ]


def vecdot_samples(mk):
    return [
        S("2d", mk((3, 4)), mk((3, 4))),
        S("broadcast", mk((2, 1, 4)), mk((3, 4)), dim=-1),
        S("dim0", mk((4, 3)), mk((4, 3)), dim=0),
        S("mixed_dtype", mk((3, 4)), mk((3, 4), dtype=other_dtype(mk.dtype))),
    ]


def multi_dot_samples(mk):
    return [
        S("matrices", [mk((2, 3)), mk((3, 4)), mk((4, 2))]),
        S("vector_ends", [mk((3,)), mk((3, 4)), mk((4,))]),
        S("two", [mk((2, 3)), mk.transposed((3, 4))]),
        S("one", [mk((2, 3))]),
        S("3d", [mk((2, 3)), mk((2, 3, 4))]),
    ]


LINALG = [
    Op("matmul", matmul_samples, dtypes=LINALG_DTYPES),
    Op("__matmul__", matmul_samples, fn=lambda m, x, y: x @ y, dtypes=LINALG_DTYPES),
    Op("mm", mm_samples, dtypes=LINALG_DTYPES),
    Op("bmm", bmm_samples, dtypes=LINALG_DTYPES),
    Op("addmm", addmm_samples, dtypes=LINALG_DTYPES),
    Op("baddbmm", baddbmm_samples, dtypes=LINALG_DTYPES),
    Op("dot", dot_samples, dtypes=LINALG_DTYPES),
    Op("mv", mv_samples, dtypes=LINALG_DTYPES),
    Op("outer", outer_samples, dtypes=LINALG_DTYPES),
    Op("vdot", dot_samples, dtypes=LINALG_DTYPES),
    Op("addmv", addmv_samples, dtypes=LINALG_DTYPES),
    Op("addr", addr_samples, dtypes=LINALG_DTYPES),
    # one product over the whole batch, rounded once; torch rounds the sum of the batch's products
    Op("addbmm", addbmm_samples, dtypes=LINALG_DTYPES, tol={"bfloat16": (4e-2, 1e-2), "float16": (1e-2, 1e-3)}),
    Op("tensordot", tensordot_samples, dtypes=LINALG_DTYPES),
    Op("einsum", einsum_samples, dtypes=LINALG_DTYPES, method=False),
    Op("cross", cross_samples, dtypes=LINALG_DTYPES),
    Op("trace", trace_samples, dtypes=LINALG_DTYPES),
    Op("diagonal", diagonal_samples, dtypes=SHAPE_DTYPES),
    Op("linalg.vecdot", vecdot_samples, dtypes=LINALG_DTYPES, fn=lambda m, *a, **k: m.linalg.vecdot(*a, **k),
       method=False),
    Op("linalg.multi_dot", multi_dot_samples, dtypes=LINALG_DTYPES,
       fn=lambda m, *a, **k: m.linalg.multi_dot(*a, **k), method=False),
]


# ---------------------------------------------------------------------------------------------
# Norms and distances: floating only. Values stay away from 0 so that no sample sits on a kink.

def vector_norm_samples(mk):
    return [
        S("full", mk((3, 4))),
        S("dim1", mk((3, 4)), dim=1),
        S("inf_keepdim", mk((3, 4)), ord=math.inf, dim=0, keepdim=True),
        S("ord1_dims", mk.transposed((2, 3, 4)), ord=1, dim=(0, 2)),
        S("ord0", mk((3, 4)), ord=0),
        S("ord3", mk((3, 4)), ord=3, dim=-1),
        S("ord_half", mk((3, 4)), ord=0.5),
        S("neg_inf", mk((3, 4)), ord=-math.inf, dim=1),
        S("dtype_float64", mk((3, 4)), dtype=DType("float64")),
        S("zeros", np.zeros((2, 3), NUMPY_DTYPES[mk.dtype]), dim=1),
        S("empty", mk((0, 3)), dim=1),
        S("bad_dim", mk((3, 4)), dim=2),
    ]


def matrix_norm_samples(mk):
    return [
        S("fro", mk((3, 4))),
        S("batched", mk((2, 3, 4))),
        S("ord1", mk((3, 4)), ord=1),
        S("ord_inf", mk.transposed((3, 4)), ord=math.inf),
        S("ord_neg1", mk((3, 4)), ord=-1, keepdim=True),
        S("dims", mk((3, 2, 4)), ord=-math.inf, dim=(0, 2)),
        S("1d", mk((4,))),
    ]


def renorm_samples(mk):
    return [
        S("dim0", mk((3, 4)), 2, 0, 1.5),
        S("dim1_p1", mk.transposed((3, 4)), 1, 1, 2.0),
        S("nothing_scaled", mk((2, 3)), 2, 0, 100.0),
        S("1d", mk((4,)), 2, 0, 1.0),
        S("negative_p", mk((3, 4)), -1, 0, 1.0),
    ]


def dist_samples(mk):
    return [
        S("2d", mk((3, 4)), mk((3, 4))),
        S("broadcast_p1", mk((3, 4)), mk((4,)), p=1),
        S("pinf", mk((3, 4)), mk.transposed((3, 4)), p=math.inf),
        S("p3", mk((3, 4)), mk((3, 4)), p=3),
        S("bad_shapes", mk((3, 4)), mk((2, 4))),
    ]


def cdist_samples(mk):
    return [
        S("2d", mk((3, 4)), mk((5, 4))),
        S("batched_p1", mk((2, 3, 4)), mk((2, 5, 4)), p=1.0),
        S("broadcast_batch", mk((1, 3, 4)), mk((2, 2, 4)), p=3.0),
        S("pinf", mk.transposed((3, 4)), mk((2, 4)), p=math.inf),
        S("columns_mismatch", mk((3, 4)), mk((2, 5))),
        S("1d", mk((4,)), mk((2, 4))),
    ]


def pdist_samples(mk):
    return [S("2d", mk((4, 3))), S("p1", mk((5, 2)), p=1.0), S("one_row", mk((1, 3), dtype="float64")), S("3d", mk((2, 3, 4)))]


def cosine_similarity_samples(mk):
    return [
        S("dim1", mk((3, 4)), mk((3, 4))),
        S("broadcast", mk((2, 3, 4)), mk((4,)), dim=-1),
        S("transposed", mk.transposed((3, 4)), mk((3, 4))),
        S("eps", mk((3, 4)), mk((3, 4)) * 0.01, dim=0, eps=0.5),
        S("bad_dim", mk((3, 4)), mk((3, 4)), dim=2),
    ]


NORMS = [
    Op("linalg.vector_norm", vector_norm_samples, dtypes=FLOAT_DTYPES, method=False,
       fn=lambda m, *a, **k: m.linalg.vector_norm(*a, **k), domain=(0.25, 3)),
    Op("linalg.matrix_norm", matrix_norm_samples, dtypes=FLOAT_DTYPES, method=False,
       fn=lambda m, *a, **k: m.linalg.matrix_norm(*a, **k)),
    Op("renorm", renorm_samples, dtypes=FLOAT_DTYPES),
    Op("dist", dist_samples, dtypes=FLOAT_DTYPES),
    Op("cdist", cdist_samples, dtypes=FLOAT_DTYPES),
    Op("pdist", pdist_samples, dtypes=FLOAT_DTYPES),
    Op("cosine_similarity", cosine_similarity_samples, dtypes=FLOAT_DTYPES),
]


# ---------------------------------------------------------------------------------------------
# Shape and indexing ops. Each sample's extra arguments are the op's own (sizes, dims, ...).

def method(name, label=None):
    """A Tensor method that torch has no module function for (x.view, x.repeat, ...)."""
    return lambda m, x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


def shape_op(name, samples, **kw):
    return Op(name, samples, dtypes=SHAPE_DTYPES, **kw)


def transpose_samples(mk):
    return [
        S("3d", mk((2, 3, 4)), 0, 2),
        S("negative", mk((2, 3, 4)), -1, 0),
        S("same_dim", mk((2, 3)), 1, 1),
        S("0dim", mk(()), 0, -1),
        S("empty", mk((0, 3)), 0, 1),
        S("out_of_range", mk((2, 3)), 0, 2),
    ]


SHAPE = [
    shape_op("view", lambda mk: [
        S("flat", mk((2, 3, 4)), -1),
        S("2d", mk((2, 3, 4)), 6, 4),
        S("tuple", mk((2, 3, 4)), (4, 6)),
        S("infer", mk((2, 3, 4)), 4, -1),
        S("0dim", mk(()), 1),
        S("to_0dim", mk((1,)), ()),
        S("empty", mk((0, 3)), 3, 0),
        S("empty_infer", mk((0, 3)), 0, -1),  # -1 could be anything: raises
        S("transposed", mk.transposed((3, 4)), 12),  # not expressible as a view: raises
        S("bad_size", mk((2, 3, 4)), 5, 5),
    ], label="Tensor.view", fn=method("view")),
    shape_op("view_as", lambda mk: [
        S("2d", mk((3, 4)), mk((2, 6))),
        S("flat", mk((2, 3, 4)), mk((24,))),
        S("transposed", mk.transposed((3, 4)), mk((12,))),  # not expressible as a view: raises
        S("bad_size", mk((3, 4)), mk((5,))),
    ], label="Tensor.view_as", fn=method("view_as")),
    shape_op("reshape", lambda mk: [
        S("2d", mk((2, 3, 4)), (6, 4)),
        S("infer", mk((2, 3, 4)), (-1, 2)),
        S("0dim", mk(()), (1, 1)),
        S("to_0dim", mk((1, 1)), ()),
        S("empty", mk((0, 3)), (3, 0, 1)),
        S("transposed", mk.transposed((3, 4)), (12,)),  # copies
        S("bad_size", mk((2, 3, 4)), (5, 5)),
    ]),
    shape_op("permute", lambda mk: [
        S("3d", mk((2, 3, 4)), (2, 0, 1)),
        S("negative", mk((2, 3, 4)), (-1, 0, 1)),
        S("0dim", mk(()), ()),
        S("transposed", mk.transposed((3, 4)), (1, 0)),
        S("repeated_dim", mk((2, 3, 4)), (0, 0, 1)),
    ]),
    shape_op("transpose", transpose_samples),
    shape_op("swapaxes", transpose_samples),
    shape_op("t", lambda mk: [
        S("2d", mk((2, 3))),
        S("1d", mk((3,))),
        S("0dim", mk(())),
        S("empty", mk((0, 3))),
        S("3d", mk((2, 3, 4))),
    ]),
    shape_op("T", lambda mk: [
        S("2d", mk((2, 3))),
        S("1d", mk((3,))),
        S("0dim", mk(())),
        S("transposed", mk.transposed((2, 3))),
    ], label="Tensor.T", fn=lambda m, x: x.T),
    shape_op("expand", lambda mk: [
        S("2d", mk((3, 1)), 3, 4),
        S("new_dims", mk((3, 1)), 2, -1, 4),
        S("tuple", mk((3, 1)), (3, 4)),
        S("0dim", mk(()), 2, 2),
        S("empty", mk((0, 1)), 0, 3),
        S("bad_size", mk((3, 2)), 3, 4),
    ], label="Tensor.expand", fn=method("expand")),
    shape_op("expand_as", lambda mk: [
        S("2d", mk((3, 1)), mk((3, 4))),
        S("new_dims", mk((4,)), mk((2, 3, 4))),
        S("bad_size", mk((3, 2)), mk((3, 4))),
    ], label="Tensor.expand_as", fn=method("expand_as")),
    shape_op("broadcast_to", lambda mk: [
        S("2d", mk((3, 1)), (3, 4)),
        S("new_dims", mk((4,)), (2, 3, 4)),
        S("keep_size", mk((3, 1)), (-1, 4)),
        S("0dim", mk(()), (2,)),
        S("bad_size", mk((3, 2)), (3, 4)),
    ]),
    shape_op("squeeze", lambda mk: [
        S("all", mk((1, 3, 1, 2))),
        S("dim", mk((1, 3, 1, 2)), 2),
        S("negative_dim", mk((1, 3, 1, 2)), -4),
        S("dims", mk((1, 3, 1, 2)), (0, 2)),
        S("not_one", mk((1, 3, 1, 2)), 1),  # a dim of size > 1 is left alone
        S("0dim", mk(())),
        S("0dim_dim0", mk(()), 0),
        S("out_of_range", mk((1, 3)), 2),
    ]),
    shape_op("unsqueeze", lambda mk: [
        S("front", mk((2, 3)), 0),
        S("back", mk((2, 3)), 2),
        S("negative", mk((2, 3)), -1),
        S("0dim", mk(()), 0),
        S("out_of_range", mk((2, 3)), 3),
    ]),
    shape_op("flatten", lambda mk: [
        S("all", mk((2, 3, 4))),
        S("from1", mk((2, 3, 4)), 1),
        S("range", mk((2, 3, 4, 2)), 1, 2),
        S("negative", mk((2, 3, 4)), -2, -1),
        S("0dim", mk(())),
        S("transposed", mk.transposed((3, 4))),
    ]),
    shape_op("unflatten", lambda mk: [
        S("middle", mk((2, 6, 2)), 1, (2, 3)),
        S("infer", mk((2, 6)), -1, (3, -1)),
        S("empty", mk((0, 6)), 1, (2, 3)),
        S("bad_sizes", mk((2, 6)), 1, (4, 2)),
    ]),
    shape_op("contiguous", lambda mk: [
        S("contiguous", mk((2, 3))),
        S("transposed", mk.transposed((3, 4))),
        S("strided", mk.strided((3, 4))),
        S("0dim", mk(())),
    ], label="Tensor.contiguous", fn=method("contiguous")),
    shape_op("clone", lambda mk: [
        S("2d", mk((2, 3))),
        S("transposed", mk.transposed((3, 4))),
        S("strided", mk.strided((3, 4))),
        S("0dim", mk(())),
        S("empty", mk((0, 3))),
    ]),
    shape_op("narrow", lambda mk: [
        S("dim1", mk((3, 5)), 1, 1, 3),
        S("negative_dim", mk((3, 5)), -1, 0, 2),
        S("negative_start", mk((3, 5)), 1, -2, 2),
        S("zero_length", mk((3, 5)), 0, 3, 0),
        S("transposed", mk.transposed((3, 4)), 0, 1, 2),
        S("out_of_range", mk((3, 5)), 1, 4, 2),
    ]),
    shape_op("select", lambda mk: [
        S("dim1", mk((3, 4)), 1, 2),
        S("negative", mk((3, 4)), -1, -1),
        S("1d", mk((4,)), 0, 3),
        S("transposed", mk.transposed((3, 4)), 0, 1),
        S("out_of_range", mk((3, 4)), 0, 5),
    ]),
    shape_op("split", lambda mk: [
        S("int", mk((5, 4)), 2),
        S("int_dim1", mk((3, 4)), 3, 1),
        S("list", mk((5, 4)), [1, 4]),
        S("list_dim1", mk((3, 4)), [1, 0, 3], 1),
        S("list_bad_sum", mk((3, 4)), [1, 2], 1),
        S("empty", mk((0, 4)), 2, 1),
    ]),
    shape_op("chunk", lambda mk: [
        S("even", mk((4, 3)), 2),
        S("uneven", mk((5, 3)), 2),
        S("more_chunks_than_size", mk((3, 2)), 5, 1),
        S("negative_dim", mk((3, 4)), 3, -1),
        S("zero_chunks", mk((3, 4)), 0),
    ]),
    shape_op("unbind", lambda mk: [
        S("dim0", mk((3, 4))),
        S("dim1", mk((3, 4)), 1),
        S("negative", mk((2, 3, 4)), -1),
        S("empty", mk((0, 3)), 0),
        S("0dim", mk(())),
    ]),
    shape_op("cat", lambda mk: [
        S("dim0", [mk((2, 3)), mk((1, 3))]),
        S("dim1", [mk((2, 3)), mk((2, 1)), mk((2, 2))], 1),
        S("negative_dim", [mk((2, 3)), mk((2, 2))], -1),
        S("single", [mk((2, 3))]),
        S("noncontig", [mk.transposed((2, 3)), mk.strided((2, 3))]),
        S("mixed_dtype", [mk((2, 3)), mk((1, 3), dtype="float32")]),  # promotes
        S("empty_1d_legacy", [mk((2, 3)), mk((0,))]),  # a 1-D empty tensor is skipped
        S("shape_mismatch", [mk((2, 3)), mk((2, 2))]),
        S("0dim", [mk(()), mk(())]),
        S("no_tensors", []),
    ], method=False),
    shape_op("stack", lambda mk: [
        S("dim0", [mk((2, 3)), mk((2, 3))]),
        S("dim_last", [mk((2, 3)), mk((2, 3)), mk((2, 3))], 2),
        S("negative_dim", [mk((2, 3)), mk((2, 3))], -1),
        S("0dim", [mk(()), mk(())]),
        S("noncontig", [mk.transposed((2, 3)), mk.strided((2, 3))]),
        S("shape_mismatch", [mk((2, 3)), mk((3, 2))]),
    ], method=False),
    shape_op("repeat", lambda mk: [
        S("2d", mk((2, 3)), 2, 1),
        S("new_dims", mk((2, 3)), 2, 1, 2),
        S("tuple", mk((2, 3)), (1, 3)),
        S("0dim", mk(()), 3),
        S("zero", mk((2, 3)), 0, 2),
        S("transposed", mk.transposed((2, 3)), 2, 2),
        S("too_few", mk((2, 3)), 2),
    ], label="Tensor.repeat", fn=method("repeat")),
    shape_op("flip", lambda mk: [
        S("dim0", mk((3, 4)), (0,)),
        S("dims", mk((2, 3, 4)), (0, 2)),
        S("negative", mk((3, 4)), (-1,)),
        S("0dim", mk(()), ()),
        S("transposed", mk.transposed((3, 4)), (0, 1)),
    ]),
    shape_op("movedim", lambda mk: [
        S("forward", mk((2, 3, 4)), 0, 2),
        S("negative", mk((2, 3, 4)), -1, 0),
        S("same", mk((2, 3)), 1, 1),
        S("tuples", mk((2, 3, 4)), (0, 1), (2, 0)),
        S("out_of_range", mk((2, 3)), 2, 0),
    ]),
]

INDEXING = [
    Op("index_select", lambda mk: [
        S("dim1", mk((3, 4)), 1, mk.index((5,), 4)),
        S("dim0", mk((3, 4)), 0, mk.index((2,), 3)),
        S("negative_dim", mk((2, 3, 4)), -1, mk.index((3,), 4)),
        S("int32_index", mk((3, 4)), 1, mk.index((3,), 4, np.int32)),
        S("0dim_index", mk((3, 4)), 0, np.array(2)),
        S("empty_index", mk((3, 4)), 0, np.zeros((0,), np.int64)),
        S("transposed", mk.transposed((3, 4)), 0, mk.index((4,), 3)),
        S("out_of_range", mk((3, 4)), 0, np.array([0, 3])),
        S("out_of_range_dim1", mk((3, 4)), 1, np.array([0, 4])),
    ]),
    Op("gather", lambda mk: [
        S("dim1", mk((3, 4)), 1, mk.index((3, 2), 4)),
        S("dim0", mk((3, 4)), 0, mk.index((2, 4), 3)),
        S("negative_dim", mk((2, 3, 4)), -1, mk.index((2, 3, 5), 4)),
        S("smaller_index", mk((3, 4)), 1, mk.index((2, 2), 4)),
        S("transposed", mk.transposed((3, 4)), 1, mk.index((3, 3), 4)),
        S("empty_index", mk((3, 4)), 1, np.zeros((3, 0), np.int64)),
        S("int32_index", mk((3, 4)), 1, mk.index((3, 2), 4, np.int32)),
        S("out_of_range", mk((3, 4)), 1, np.full((3, 2), 4)),
    ]),
    Op("scatter", lambda mk: [
        S("src_dim1", mk((3, 4)), 1, mk.unique_index((3, 2), 4, 1), mk((3, 2))),
        S("src_dim0", mk((3, 4)), 0, mk.unique_index((2, 4), 3, 0), mk((2, 4))),
        S("larger_src", mk((3, 4)), 1, mk.unique_index((3, 2), 4, 1), mk((3, 3))),
        S("int_value", mk((3, 4)), 1, mk.unique_index((3, 2), 4, 1), 2),
        S("float_value", mk((3, 4)), 1, mk.unique_index((3, 2), 4, 1), 1.5),
        S("transposed", mk.transposed((3, 4)), 1, mk.unique_index((3, 2), 4, 1), mk((3, 2))),
        S("src_dtype_mismatch", mk((3, 4)), 1, mk.unique_index((3, 2), 4, 1),
          mk((3, 2), dtype=other_dtype(mk.dtype))),
        S("out_of_range", mk((3, 4)), 1, np.full((3, 1), 4), mk((3, 1))),
    ], inplace=True),
    Op("scatter_add", lambda mk: [
        S("dim1", mk((3, 4)), 1, mk.index((3, 5), 4), mk((3, 5))),  # repeated indices add up
        S("dim0", mk((3, 4)), 0, mk.index((4, 4), 3), mk((4, 4))),
        S("transposed", mk.transposed((3, 4)), 1, mk.index((3, 2), 4), mk.transposed((3, 2))),
        S("src_dtype_mismatch", mk((3, 4)), 1, mk.index((3, 2), 4), mk((3, 2), dtype=other_dtype(mk.dtype))),
        S("out_of_range", mk((3, 4)), 1, np.full((3, 1), 4), mk((3, 1))),
    ], inplace=True),
    Op("masked_fill", lambda mk: [
        S("int_value", mk((3, 4)), mk.mask((3, 4)), 2),
        S("float_value", mk((3, 4)), mk.mask((3, 4)), 1.5),
        S("bool_value", mk((3, 4)), mk.mask((3, 4)), True),
        S("broadcast_mask", mk((3, 4)), mk.mask((1, 4)), -1),
        S("0dim_tensor_value", mk((3, 4)), mk.mask((3, 4)), mk(())),
        S("0dim", mk(()), mk.mask(()), 2),
        S("noncontig", mk.transposed((3, 4)), mk.mask((3, 4)), 0),
        S("mask_larger_than_input", mk((1, 4)), mk.mask((3, 4)), 2),
        S("uint8_mask", mk((3, 4)), mk((3, 4), dtype="uint8", domain=(0, 1)), 2),
        S("1d_tensor_value", mk((3, 4)), mk.mask((3, 4)), mk((1,))),
    ], inplace=True),
    Op("nonzero", lambda mk: [
        S("2d", mk((3, 4))),
        S("3d", mk((2, 3, 4))),
        S("as_tuple", mk((3, 4)), as_tuple=True),
        S("0dim", mk((), domain=(1, 1), nonzero=True)),
        S("0dim_as_tuple", mk((), domain=(1, 1), nonzero=True), as_tuple=True),
        S("0dim_zero_as_tuple", mk((), domain=(0, 0)), as_tuple=True),
        S("empty", mk((0, 3))),
        S("transposed", mk.transposed((3, 4))),
    ], domain=(-1, 1), integers=True),  # whole numbers: zeros occur
]


# ---------------------------------------------------------------------------------------------
# Sorting and selection. Equal elements may come out in any order unless stable=True asks for
# theirs, so the plain samples hold distinct values; the ties are sorted stably.

def distinct(mk, shape):
    """Values that differ pairwise (as far as the dtype can hold them: bool has two)."""
    if mk.dtype == "bool":
        return mk(shape)
    n = int(np.prod(shape))
    values = mk.rng.permutation(n) - (0 if mk.dtype == "uint8" else n // 2)
    return values.reshape(shape).astype(NUMPY_DTYPES[mk.dtype])


def sort_samples(mk):
    samples = [
        S("dim_last", distinct(mk, (4, 6))),
        S("dim0_descending", distinct(mk, (4, 6)), 0, True),
        S("ties_stable", mk((5, 7)), stable=True),
        S("ties_stable_descending_dim0", mk((5, 7)), dim=0, descending=True, stable=True),
    ]
    if mk.is_float:
        samples.append(S("special_stable", mk.special(), stable=True))  # NaN above inf; -0.0 ties 0.0
        samples.append(S("special_stable_descending", mk.special(), descending=True, stable=True))
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty", mk((0, 3)), dim=0), S("empty_dim1", mk((0, 3)), dim=1),
                    S("transposed", View(distinct(mk, (6, 4)), lambda t: t.transpose(0, 1))),
                    S("3d_dim1", distinct(mk, (2, 5, 3)), dim=1)]
    return samples


def topk_samples(mk):
    samples = [
        S("k2", distinct(mk, (4, 6)), 2),
        S("k3_dim0_smallest", distinct(mk, (4, 6)), 3, 0, False),
        S("k_all", distinct(mk, (4, 6)), 6),
        S("k0", distinct(mk, (4, 6)), 0),
        S("k_too_large", distinct(mk, (4, 6)), 7),
    ]
    if mk.is_float:
        samples.append(S("nan_largest", np.array([1.0, math.nan, -2.0, 3.0]).astype(NUMPY_DTYPES[mk.dtype]), 2))
    if mk.layouts:
        samples += [S("0dim", mk(()), 1), S("transposed", View(distinct(mk, (6, 4)), lambda t: t.transpose(0, 1)), 2),
                    S("3d_dim1", distinct(mk, (2, 5, 3)), 2, dim=1)]
    return samples


def kthvalue_samples(mk):
    samples = [
        S("k2", distinct(mk, (4, 6)), 2),
        S("k1_dim0_keepdim", distinct(mk, (4, 6)), 1, 0, True),
        S("k_last", distinct(mk, (4, 6)), 6),
        S("k0", distinct(mk, (4, 6)), 0),
    ]
    if mk.layouts:
        samples += [S("0dim", mk(()), 1), S("empty_dim1", mk((2, 0)), 1, dim=1),
                    S("3d_dim1", distinct(mk, (2, 5, 3)), 3, dim=1)]
    return samples


SORTING = [
    Op("sort", sort_samples),
    Op("argsort", sort_samples),
    Op("msort", lambda mk: [S("2d", distinct(mk, (5, 3))), S("1d", distinct(mk, (6,)))], method=True),
    Op("topk", topk_samples),
    Op("kthvalue", kthvalue_samples),
]

TABLE = UNARY + BINARY + TERNARY + OPERATORS + PROMOTION + REDUCTIONS + SORTING + LINALG + NORMS + SHAPE + INDEXING

# nn.functional's families keep their rows next to each other in files of their own. They build
# rows with the helpers above, so they are imported once those exist.
import op_table_activation, op_table_loss, op_table_normalization, op_table_pooling, op_table_vision  # noqa: E402

TABLE += (op_table_activation.ROWS + op_table_loss.ROWS + op_table_normalization.ROWS + op_table_pooling.ROWS +
          op_table_vision.ROWS)

# The torch namespace's composite families (tensorplay/_composites/) keep their rows, and which of
# them are differentiable, in files of their own too.
import op_table_creation, op_table_indexing, op_table_nn_ops, op_table_pointwise, op_table_shape  # noqa: E402
import op_table_fft, op_table_linalg, op_table_special, op_table_statistics  # noqa: E402

import op_table_complex  # noqa: E402

COMPOSITE_FAMILIES = (op_table_creation, op_table_fft, op_table_indexing, op_table_linalg, op_table_nn_ops, op_table_pointwise,
                      op_table_shape, op_table_special, op_table_statistics, op_table_complex)
for _family in COMPOSITE_FAMILIES:
    TABLE += _family.ROWS
assert op_table_complex.ALSO_COMPLEX <= {_op.label for _op in TABLE}, "ALSO_COMPLEX names rows the table lacks"
for _op in TABLE:
    if _op.label in op_table_complex.ALSO_COMPLEX and COMPLEX_DTYPES[0] not in _op.dtypes:  # (rows repeat)
        _op.dtypes = tuple(_op.dtypes) + COMPLEX_DTYPES

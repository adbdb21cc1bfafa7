"""Op-table rows of the torch namespace's pointwise composites (tensorplay/_composites/pointwise.py).

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import operator

from op_table import (ALL_DTYPES, DIVISION, FLOAT_DTYPES, OPERATOR_DTYPES, Op, binary, binary_samples, operator_samples,
                      tensor_binary_samples, unary, unary_samples)


NOT_BFLOAT16 = tuple(d for d in ALL_DTYPES if d != "bfloat16")


def polygamma(n, **kw):
    return Op("polygamma", unary_samples, label=f"polygamma.n{n}", fn=lambda m, x: m.polygamma(n, x), **kw)


def shift_operator(label, op, fn):
    """x << y and x >> y, under the name of the op they reach (whose name their errors carry)."""
    return Op(op, operator_samples, label=label, fn=lambda m, x, y: fn(x, y), dtypes=OPERATOR_DTYPES,
              domain=(-100, 100), other_domain=(0, 9))


ROWS = [
    # Unary, float-valued: integer inputs give the default dtype.
    unary("sinc"),
    unary("logit", domain=(0.05, 0.95)),
    unary("logit", label="logit.eps", domain=(-0.5, 1.5), kwargs={"eps": 0.1}),
    unary("erfc", domain=(-3, 6)),
    unary("lgamma", domain=(-4.5, 12)),
    unary("digamma", domain=(-4.5, 12)),
    polygamma(0, domain=(-4.5, 12)),
    polygamma(1, domain=(-4.5, 12)),
    polygamma(2, domain=(0.2, 12)),
    polygamma(3, domain=(-2.9, 6)),
    Op("mvlgamma", unary_samples, label="mvlgamma.p3", domain=(1.1, 8), kwargs={"p": 3}, inplace=True),
    unary("i0", domain=(-12, 12)),
    unary("deg2rad", domain=(-400, 400)),
    unary("rad2deg"),
    unary("acosh", domain=(1, 6)),
    unary("asinh", domain=(-6, 6)),
    unary("atanh", domain=(-0.95, 0.95)),
    unary("arccos", domain=(-0.95, 0.95)),
    unary("arcsin", domain=(-0.95, 0.95)),
    unary("arctan"),
    unary("arccosh", domain=(1, 6)),
    unary("arcsinh"),
    unary("arctanh", domain=(-0.95, 0.95)),
    # Unary, dtype-keeping (frac and frexp only for floats; positive refuses bool).
    unary("frac", domain=(-5, 5)),
    Op("frexp", unary_samples, domain=(-1000, 1000)),
    unary("fix", domain=(-5, 5)),
    unary("sgn"),
    unary("positive"),
    # Not bfloat16: torch's conversion of NaN to bfloat16 sets the sign bit (tensorplay's keeps it),
    # and these two read it.
    unary("signbit", dtypes=NOT_BFLOAT16),
    unary("isneginf"),
    unary("isposinf"),
    unary("isreal"),
    # Binary.
    binary("float_power", domain=(0.1, 3), other_domain=(-2, 3)),
    binary("fmod", **DIVISION),
    binary("hypot", tensor_binary_samples),
    Op("logaddexp", tensor_binary_samples),
    Op("logaddexp2", tensor_binary_samples),
    binary("copysign", dtypes=NOT_BFLOAT16),
    binary("nextafter", tensor_binary_samples),
    binary("ldexp", tensor_binary_samples, other_domain=(-4, 4)),
    binary("xlogy", other_domain=(0.1, 4)),
    binary("heaviside", tensor_binary_samples, integers=True),
    binary("igamma", tensor_binary_samples, domain=(0.1, 6), other_domain=(0.05, 9)),
    binary("igammac", tensor_binary_samples, domain=(0.1, 6), other_domain=(0.05, 9)),
    # igamma's derivative exists in its second argument only: these fix the first.
    Op("igamma", unary_samples, label="igamma.grad_other", dtypes=FLOAT_DTYPES, domain=(0.05, 9),
       fn=lambda m, x: m.igamma(m.full_like(x, 2.5) if isinstance(x, m.Tensor) else 2.5, x)),
    Op("igammac", unary_samples, label="igammac.grad_other", dtypes=FLOAT_DTYPES, domain=(0.05, 9),
       fn=lambda m, x: m.igammac(m.full_like(x, 2.5) if isinstance(x, m.Tensor) else 2.5, x)),
    Op("fmax", tensor_binary_samples),
    Op("fmin", tensor_binary_samples),
    binary("clamp_min", binary_samples),
    binary("clamp_max", binary_samples),
    Op("isclose", tensor_binary_samples, integers=True),
    Op("isclose", tensor_binary_samples, label="isclose.tolerances", kwargs={"rtol": 0.1, "atol": 0.5}),
    binary("gcd", tensor_binary_samples, domain=(-100, 100)),
    binary("lcm", tensor_binary_samples, domain=(-20, 20)),
    binary("bitwise_left_shift", domain=(-100, 100), other_domain=(0, 9)),
    binary("bitwise_right_shift", domain=(-100, 100), other_domain=(0, 9)),
    shift_operator("__lshift__", "bitwise_left_shift", operator.lshift),
    shift_operator("__rshift__", "bitwise_right_shift", operator.rshift),
]

GRADIENT_LABELS = """
sinc logit logit.eps erfc lgamma digamma polygamma.n0 polygamma.n1 polygamma.n2 polygamma.n3 mvlgamma.p3 i0
deg2rad rad2deg acosh asinh atanh arccos arcsin arctan arccosh arcsinh arctanh frac frexp fix positive
float_power fmod hypot logaddexp logaddexp2 copysign ldexp xlogy igamma.grad_other igammac.grad_other fmax fmin
clamp_min clamp_max nextafter
""".split()

_BOOL_RESULT = "bool result: a predicate has no gradient"
_INTEGER_ONLY = "integer-only op: torch refuses floating inputs"
_NO_DERIVATIVE = "torch has no derivative for it (backward raises 'derivative ... is not implemented')"

NOT_DIFFERENTIABLE = {
    "signbit": _BOOL_RESULT,
    "isneginf": _BOOL_RESULT,
    "isposinf": _BOOL_RESULT,
    "isreal": _BOOL_RESULT,
    "isclose": _BOOL_RESULT,
    "isclose.tolerances": _BOOL_RESULT,
    "gcd": _INTEGER_ONLY,
    "lcm": _INTEGER_ONLY,
    "bitwise_left_shift": _INTEGER_ONLY,
    "bitwise_right_shift": _INTEGER_ONLY,
    "__lshift__": _INTEGER_ONLY,
    "__rshift__": _INTEGER_ONLY,
    "heaviside": _NO_DERIVATIVE,
    # Zero everywhere; torch returns it as an efficient ZeroTensor, which the gradient checks cannot read
    # (test_composites_pointwise.py checks the zeros).
    "sgn": "its gradient is zero everywhere (a ZeroTensor in torch)",
    "igamma": "torch has no derivative in its first argument; igamma.grad_other checks the second",
    "igammac": "torch has no derivative in its first argument; igammac.grad_other checks the second",
}

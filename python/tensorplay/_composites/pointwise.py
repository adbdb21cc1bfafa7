"""The pointwise math of the torch namespace that has no kernel of its own: elementwise functions
written over the ops that do, with PyTorch's type promotion and edge values.

- Float-valued ops (sinc, erfc, lgamma, ...) take integer and bool inputs to the default dtype, and
  compute 16-bit inputs in float32, rounding once at the end, as PyTorch's kernels do.
- The special functions (lgamma, digamma, polygamma, i0, erfc, igamma) compute in float64 and
  round to their input's dtype. digamma, trigamma, Hurwitz zeta and i0 follow the Cephes
  algorithms that PyTorch's kernels use, so that their edge values (poles, infinities) agree;
  lgamma is Stirling's series after a shift, erfc a continued fraction in the tail, and igamma a
  power series and a continued fraction (SciPy's split between them).
- lgamma, digamma, polygamma and igamma are autograd Functions: their derivatives are the next
  function of the family (digamma, polygamma(n + 1), the integrand of igamma), not the
  derivative of an approximation.
- The bit-level ops (signbit, copysign, nextafter) read a float's bits through a same-size
  integer view; the shifts are multiplications and floor divisions by powers of two.
- The arc* names are PyTorch's aliases of the inverse trigonometric and hyperbolic functions."""

import collections
import math
import numbers

import tensorplay
from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._composites._forms import can_cast, inplace, with_out
from tensorplay.autograd import Function
from tensorplay.nn._functional._checks import _aten_name, _named, _tensor_arg

__all__ = [
    "acosh", "acosh_", "allclose", "arccos", "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_", "arcsinh",
    "arcsinh_", "arctan", "arctan_", "arctanh", "arctanh_", "asinh", "asinh_", "atanh", "atanh_",
    "bitwise_left_shift", "bitwise_right_shift", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "copysign",
    "deg2rad", "deg2rad_", "digamma", "erfc", "erfc_", "fix", "fix_", "float_power", "fmax", "fmin", "fmod", "frac",
    "frac_", "frexp", "gcd", "gcd_", "heaviside", "hypot", "i0", "i0_", "igamma", "igammac", "isclose", "isneginf",
    "isposinf", "isreal", "lcm", "lcm_", "ldexp", "ldexp_", "lgamma", "logaddexp", "logaddexp2", "logit", "logit_",
    "mvlgamma", "nextafter", "polygamma", "positive", "rad2deg", "rad2deg_", "sgn", "signbit", "sinc", "sinc_",
    "xlogy", "xlogy_",
]
METHODS = [
    "__lshift__", "__rshift__", "__rlshift__", "__rrshift__", "__ilshift__", "__irshift__",
    "acosh", "acosh_", "allclose", "arccos", "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_", "arcsinh",
    "arcsinh_", "arctan", "arctan_", "arctanh", "arctanh_", "asinh", "asinh_", "atanh", "atanh_",
    "bitwise_left_shift", "bitwise_left_shift_", "bitwise_right_shift", "bitwise_right_shift_", "clamp_max",
    "clamp_max_", "clamp_min", "clamp_min_", "copysign", "copysign_", "deg2rad", "deg2rad_", "digamma", "digamma_",
    "erfc", "erfc_", "fix", "fix_", "float_power", "float_power_", "fmax", "fmin", "fmod", "fmod_", "frac", "frac_",
    "frexp", "gcd", "gcd_", "heaviside", "heaviside_", "hypot", "hypot_", "i0", "i0_", "igamma", "igamma_",
    "igammac", "igammac_", "isclose", "isneginf", "isposinf", "isreal", "lcm", "lcm_", "ldexp", "ldexp_", "lgamma",
    "lgamma_", "logaddexp", "logaddexp2", "logit", "logit_", "mvlgamma", "mvlgamma_", "nextafter", "nextafter_",
    "positive", "rad2deg", "rad2deg_", "sgn", "sgn_", "signbit", "sinc", "sinc_", "xlogy", "xlogy_",
]

_REDUCED_FLOATS = (_C.float16, _C.bfloat16)
# The integer dtype of each float's size: the view that exposes its bits.
_BITS = {_C.float64: _C.int64, _C.float32: _C.int32, _C.float16: _C.int16, _C.bfloat16: _C.int16}
_INT_WIDTHS = {_C.uint8: 8, _C.int8: 8, _C.int16: 16, _C.int32: 32, _C.int64: 64}


# ---------------------------------------------------------------------------------------------
# Argument checks and dtypes.

def _not_implemented(kernel, dtype):
    """PyTorch's error for a dtype that its kernel was not built for."""
    return NotImplementedError(f'"{kernel}_cpu" not implemented for \'{_aten_name(dtype)}\'')


def _number_or_tensor(op, name, position, value):
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor or Number, "
                        f"not {type(value).__name__}")


def _check_broadcast(input, other):
    """PyTorch's error for operands whose shapes do not broadcast, raised before any dtype check."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        return
    a, b = tuple(input.shape), tuple(other.shape)
    n = max(len(a), len(b))
    for i in reversed(range(n)):
        size_a = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        size_b = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at "
                               f"non-singleton dimension {i}")


def _float_dtype(dtype):
    """The dtype of a float-valued op's result: integers and bool give the default dtype."""
    return dtype if dtype.is_floating_point else tensorplay.get_default_dtype()


def _compute_dtype(dtype):
    """16-bit floats are computed in float32 and rounded once, as PyTorch's kernels do."""
    return _C.float32 if dtype in _REDUCED_FLOATS else dtype


def _float_unary(compute, input):
    """compute(x) for a float-valued unary op: on input in its result dtype (computed in float32 for
    16-bit floats)."""
    dtype = _float_dtype(input.dtype)
    return compute(input.to(_compute_dtype(dtype))).to(dtype)


def _float64_unary(compute, input):
    """compute(x) for a special function: computed in float64, rounded to the result dtype."""
    return compute(input.to(_C.float64)).to(_float_dtype(input.dtype))


def _promoted(input, other):
    """The dtype of a binary op's result under PyTorch's promotion."""
    return tensorplay.result_type(input, other)


def _as(value, dtype):
    return value.to(dtype) if isinstance(value, Tensor) else value


def _has_data(t):
    """Whether t's values can be read: loops that run until convergence do no iterations on meta."""
    return t.device.type != "meta"


def _signbit(x):
    """Whether each float's sign bit is set (True for -0.0 and for NaNs with the bit set)."""
    return x.view(_BITS[x.dtype]) < 0


def _copysign(magnitude, sign_of):
    magnitude = magnitude.abs()
    return tensorplay.where(_signbit(sign_of), -magnitude, magnitude)


# ---------------------------------------------------------------------------------------------
# Elementary functions.

@with_out
def frac(input):
    _tensor_arg("frac", "input", 1, input)
    if not input.is_floating_point():
        raise _not_implemented("frac", input.dtype)
    return input - input.trunc()


@with_out
def sinc(input):
    _tensor_arg("sinc", "input", 1, input)
    def compute(x):
        # PyTorch divides sin(pi x) by the product pi x as rounded in the computing dtype.
        product = x * math.pi
        safe = tensorplay.where(x == 0, 1.0, product)
        return tensorplay.where(x == 0, 1.0, safe.sin() / safe)
    return _float_unary(compute, input)


@with_out
def logit(input, eps=None):
    _tensor_arg("logit", "input", 1, input)
    # PyTorch's 16-bit logit rounds after each step, as this does.
    x = input.to(_float_dtype(input.dtype))
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


@with_out
def deg2rad(input):
    _tensor_arg("deg2rad", "input", 1, input)
    return input.to(_float_dtype(input.dtype)) * (math.pi / 180)


@with_out
def rad2deg(input):
    _tensor_arg("rad2deg", "input", 1, input)
    return input.to(_float_dtype(input.dtype)) * (180 / math.pi)


@with_out
def acosh(input):
    _tensor_arg("acosh", "input", 1, input)
    def compute(x):
        # log1p of x - 1 keeps the digits near 1, where log(x + sqrt(x^2 - 1)) loses them; above
        # 1/sqrt(eps) the square would overflow and acosh(x) is log(2x) to the last digit.
        big = x > 1 / math.sqrt(tensorplay.finfo(x.dtype).eps)
        near = tensorplay.where(big, 1.0, x) - 1
        far = tensorplay.where(big, x, 1.0)
        result = tensorplay.where(big, far.log() + math.log(2), (near + (near * (near + 2)).sqrt()).log1p())
        return tensorplay.where(x < 1, math.nan, result)
    return _float_unary(compute, input)


@with_out
def asinh(input):
    _tensor_arg("asinh", "input", 1, input)
    def compute(x):
        a = x.abs()
        big = a > 1 / math.sqrt(tensorplay.finfo(x.dtype).eps)
        near = tensorplay.where(big, 0.0, a)
        far = tensorplay.where(big, a, 1.0)
        # x + x^2 / (1 + sqrt(1 + x^2)) is sqrt(1 + x^2) - 1 + x without the cancellation.
        small_form = (near + near * near / (1 + (1 + near * near).sqrt())).log1p()
        return _copysign(tensorplay.where(big, far.log() + math.log(2), small_form), x)
    return _float_unary(compute, input)


@with_out
def atanh(input):
    _tensor_arg("atanh", "input", 1, input)
    def compute(x):
        a = x.abs()
        return _copysign(0.5 * (2 * a / (1 - a)).log1p(), x)
    return _float_unary(compute, input)


@with_out
def hypot(input, other):
    _tensor_arg("hypot", "input", 1, input)
    _tensor_arg("hypot", "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if not dtype.is_floating_point:
        raise _not_implemented("hypot", dtype)
    x, y = input.to(_compute_dtype(dtype)).abs(), other.to(_compute_dtype(dtype)).abs()
    # Scaled by the larger magnitude, so that the squares neither overflow nor underflow.
    big, small = tensorplay.maximum(x, y), tensorplay.minimum(x, y)
    ratio = small / tensorplay.where(big == 0, 1.0, big)
    result = big * (1 + ratio * ratio).sqrt()
    # An infinite side makes the hypotenuse infinite, even when the other side is NaN.
    return tensorplay.where(x.isinf() | y.isinf(), math.inf, result).to(dtype)


def _logaddexp(op, input, other, exp, log_scale):
    _tensor_arg(op, "input", 1, input)
    _tensor_arg(op, "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if not dtype.is_floating_point:
        raise _not_implemented(op, dtype)
    a, b = input.to(_compute_dtype(dtype)), other.to(_compute_dtype(dtype))
    # Equal infinities would make a - b NaN: their sum is the infinity itself.
    same_infinity = a.isinf() & (a == b)
    result = tensorplay.maximum(a, b) + exp(-(a - b).abs()).log1p() * log_scale
    return tensorplay.where(same_infinity, a, result).to(dtype)


@with_out
def logaddexp(input, other):
    return _logaddexp("logaddexp", input, other, tensorplay.exp, 1.0)


@with_out
def logaddexp2(input, other):
    return _logaddexp("logaddexp2", input, other, tensorplay.exp2, 1 / math.log(2))


def _times_log(op, input, other, log, neutral):
    """input * log(other), 0 where input is 0 unless other is NaN: xlogy (log) and xlog1py (log1p,
    whose argument `neutral` 0 gives 0 as log's 1 does)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    _number_or_tensor(op, "input", 1, input)
    _number_or_tensor(op, "other", 2, other)
    _check_broadcast(input, other)
    dtype = _float_dtype(_promoted(input, other))
    # A number operand takes the result's dtype first (1.1 is rounded to float16 for a float16 x).
    like = input if isinstance(input, Tensor) else other
    x = input.to(dtype) if isinstance(input, Tensor) else tensorplay.full_like(like, input, dtype=dtype)
    y = other.to(dtype) if isinstance(other, Tensor) else tensorplay.full_like(like, other, dtype=dtype)
    x, y = tensorplay.broadcast_tensors(x.to(_compute_dtype(dtype)), y.to(_compute_dtype(dtype)))
    # 0 * log(y) is 0 for every y but NaN; the log reads its neutral argument where x is 0, so that
    # no -inf or NaN reaches the gradient of the branch that is not taken.
    zero = x == 0
    product = x * log(tensorplay.where(zero, neutral, y))
    result = tensorplay.where(y.isnan(), y, tensorplay.where(zero, 0.0, product))
    return result.to(dtype)


@with_out
def xlogy(input, other):
    return _times_log("xlogy", input, other, tensorplay.log, 1.0)


@with_out
def xlog1py(input, other):
    """torch.special.xlog1py: input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    return _times_log("xlog1py", input, other, tensorplay.log1p, 0.0)


@with_out
def float_power(input, exponent):
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__})")
    _number_or_tensor("float_power", "input", 1, input)
    _number_or_tensor("float_power", "exponent", 2, exponent)
    return tensorplay.pow(_as(input, _C.float64), _as(exponent, _C.float64))


def float_power_(input, exponent):
    _number_or_tensor("float_power_", "exponent", 1, exponent)
    if input.dtype != _C.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_aten_name(input.dtype)} but the "
                           "operation's result requires dtype Double")
    return input.pow_(_as(exponent, _C.float64))


@with_out
def fmod(input, other):
    _tensor_arg("fmod", "input", 1, input)
    _number_or_tensor("fmod", "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if dtype == _C.bool:
        raise _not_implemented("fmod", dtype)
    x, y = input.to(dtype), _as(other, dtype)
    if not dtype.is_floating_point:
        return x - tensorplay.div(x, y, rounding_mode="trunc") * y
    # remainder of the magnitudes is exact (it is fmod for positive operands); fmod takes the
    # dividend's sign, including for a zero result.
    y = y if isinstance(y, Tensor) else tensorplay.full_like(x, y)
    computed = _compute_dtype(dtype)
    x, y = x.to(computed), y.to(computed)
    return _copysign(tensorplay.remainder(x.abs(), y.abs()), x).to(dtype)


@with_out
def copysign(input, other):
    _tensor_arg("copysign", "input", 1, input)
    _number_or_tensor("copysign", "other", 2, other)
    _check_broadcast(input, other)
    dtype = _float_dtype(_promoted(input, other))
    x = input.to(dtype)
    sign_of = other.to(dtype) if isinstance(other, Tensor) else tensorplay.full_like(x, other)
    # The sign is not differentiable: other's gradient is zero, as in PyTorch (a where that never
    # picks it still gives it one).
    result = _copysign(x, sign_of.detach())
    return tensorplay.where(tensorplay.zeros_like(result, dtype=_C.bool), sign_of, result)


@with_out
def nextafter(input, other):
    _tensor_arg("nextafter", "input", 1, input)
    _tensor_arg("nextafter", "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if not dtype.is_floating_point:
        raise _not_implemented("nextafter", dtype)
    x, y = tensorplay.broadcast_tensors(input.to(dtype), other.to(dtype))
    return _Nextafter.apply(x, y)


class _Nextafter(Function):
    """PyTorch differentiates nextafter as the identity in input (and not at all in other)."""

    @staticmethod
    def forward(ctx, x, y):
        return _next_float(x, y)

    @staticmethod
    def backward(ctx, grad):
        return grad, tensorplay.zeros_like(grad)


def _next_float(x, y):
    dtype = x.dtype
    bits = x.contiguous().view(_BITS[dtype])
    # A float's bits, read as a signed integer, step away from zero by +1 and towards it by -1,
    # whatever the sign.
    away_from_zero = (y > x) == (x > 0)
    stepped = (bits + tensorplay.where(away_from_zero, 1, -1).to(bits.dtype)).view(dtype)
    smallest = tensorplay.ones((), dtype=bits.dtype, device=x.device).view(dtype)
    from_zero = tensorplay.where(y < 0, -smallest, smallest)
    result = tensorplay.where(x == 0, from_zero, stepped)
    result = tensorplay.where(x == y, y, result)
    return tensorplay.where(x.isnan() | y.isnan(), x + y, result)


@with_out
def ldexp(input, other):
    _tensor_arg("ldexp", "input", 1, input)
    _tensor_arg("ldexp", "other", 2, other)
    _check_broadcast(input, other)
    return input * tensorplay.pow(2.0, other)


def ldexp_(input, other):
    _tensor_arg("ldexp_", "other", 1, other)
    return input.mul_(tensorplay.pow(2.0, other))


frexp_result = collections.namedtuple("frexp", ["mantissa", "exponent"])


def frexp(input, *, out=None):
    _tensor_arg("frexp", "input", 1, input)
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.to(_C.float64)
    regular = x.isfinite() & (x != 0)
    a = tensorplay.where(regular, x.abs(), 1.0)
    exponent = a.log2().floor() + 1
    # 2^-exponent in two halves: for subnormals it is past float64's range.
    half = (exponent / 2).trunc()
    mantissa = a * tensorplay.exp2(-half) * tensorplay.exp2(half - exponent)
    # log2 may round across a power of two: one step puts the mantissa back into [0.5, 1).
    high, low = mantissa >= 1, mantissa < 0.5
    mantissa = tensorplay.where(high, mantissa / 2, tensorplay.where(low, mantissa * 2, mantissa))
    exponent = exponent + high.to(exponent.dtype) - low.to(exponent.dtype)
    mantissa = tensorplay.where(regular, _copysign(mantissa, x), x).to(input.dtype)
    exponent = tensorplay.where(regular, exponent, 0.0).to(_C.int32)
    if out is None:
        return frexp_result(mantissa, exponent)
    if not isinstance(out, (tuple, list)) or len(out) != 2 or not all(isinstance(t, Tensor) for t in out):
        raise TypeError("frexp(): argument 'out' must be tuple of Tensors")
    if out[0].dtype != input.dtype:
        raise RuntimeError("torch.frexp() expects mantissa to have dtype " + _aten_name(input.dtype) +
                           " but got " + _aten_name(out[0].dtype))
    if out[1].dtype != _C.int32:
        raise RuntimeError("torch.frexp() expects exponent to have int dtype but got " + _aten_name(out[1].dtype))
    for destination, result in zip(out, (mantissa, exponent)):
        if tuple(destination.shape) != tuple(result.shape):
            destination.resize_(result.shape)
        destination.copy_(result)
    return frexp_result(*out)


# ---------------------------------------------------------------------------------------------
# Integer functions.

def _integer_operands(op, input, other):
    _tensor_arg(op, "input", 1, input)
    _tensor_arg(op, "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if dtype == _C.bool or dtype.is_floating_point:
        raise _not_implemented(op, dtype)
    return tensorplay.broadcast_tensors(input.to(dtype), other.to(dtype))


def _gcd(a, b):
    """Euclid's algorithm on every element at once; an element whose divisor reached 0 stays put."""
    a, b = a.abs(), b.abs()
    # Consecutive Fibonacci numbers take the most steps: fewer than 1.5 per bit of the dtype.
    for _ in range(3 * _INT_WIDTHS[a.dtype] // 2):
        if _has_data(b) and not bool((b != 0).any()):
            break
        done = b == 0
        divisor = tensorplay.where(done, tensorplay.ones_like(b), b)
        a, b = tensorplay.where(done, a, b), tensorplay.where(done, b, tensorplay.remainder(a, divisor))
    return a


@with_out
def gcd(input, other):
    a, b = _integer_operands("gcd", input, other)
    return _gcd(a, b)


@with_out
def lcm(input, other):
    a, b = _integer_operands("lcm", input, other)
    g = _gcd(a, b)
    zero = g == 0
    # PyTorch multiplies in C++'s int (at least), then narrows: a result past the dtype wraps.
    a, b, divisor = a.to(_C.int64), b.to(_C.int64), tensorplay.where(zero, tensorplay.ones_like(g), g).to(_C.int64)
    multiple = (tensorplay.div(a, divisor, rounding_mode="trunc") * b).abs().to(g.dtype)
    return tensorplay.where(zero, g, multiple)


def _shift_operands(op, kernel, input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    _number_or_tensor(op, "input", 1, input)
    _number_or_tensor(op, "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if dtype == _C.bool or dtype.is_floating_point:
        raise _not_implemented(kernel, dtype)
    like = input if isinstance(input, Tensor) else other
    x = input.to(dtype) if isinstance(input, Tensor) else tensorplay.full_like(like, input, dtype=dtype)
    s = other.to(dtype) if isinstance(other, Tensor) else tensorplay.full_like(like, other, dtype=dtype)
    return tensorplay.broadcast_tensors(x, s)


def _power_of_two(exponent):
    """2^exponent in exponent's integer dtype, wrapping as a shift does (2^(bits-1) is the minimum)."""
    return tensorplay.pow(tensorplay.full_like(exponent, 2), exponent)


@with_out
def bitwise_left_shift(input, other):
    x, s = _shift_operands("bitwise_left_shift", "lshift", input, other)
    width = _INT_WIDTHS[x.dtype]
    # Shifting by the width or more, or by a negative count, shifts every bit out.
    out_of_range = (s < 0) | (s >= width)
    safe = tensorplay.where(out_of_range, tensorplay.zeros_like(s), s)
    return tensorplay.where(out_of_range, tensorplay.zeros_like(x), x * _power_of_two(safe))


@with_out
def bitwise_right_shift(input, other):
    x, s = _shift_operands("bitwise_right_shift", "rshift", input, other)
    width = _INT_WIDTHS[x.dtype]
    # Past the width (or negative) the sign fills every bit, which leaves 0 of an unsigned x; the
    # shift is a floor division, in two steps, since 2^(width-1) does not fit the dtype.
    out_of_range = (s < 0) | (s >= width)
    if x.dtype == _C.uint8:
        x = tensorplay.where(out_of_range, tensorplay.zeros_like(x), x)
    s = tensorplay.where(out_of_range, tensorplay.full_like(s, width - 1), s)
    first = tensorplay.where(s > 0, s - 1, s)
    shifted = tensorplay.floor_divide(x, _power_of_two(first))
    return tensorplay.where(s > 0, tensorplay.floor_divide(shifted, 2), shifted)


def __lshift__(input, other):
    return bitwise_left_shift(input, other)


def __rshift__(input, other):
    return bitwise_right_shift(input, other)


def __rlshift__(input, other):
    return bitwise_left_shift(other, input)


def __rrshift__(input, other):
    return bitwise_right_shift(other, input)


def __ilshift__(input, other):
    return input.bitwise_left_shift_(other)


def __irshift__(input, other):
    return input.bitwise_right_shift_(other)


@with_out
def heaviside(input, values):
    _tensor_arg("heaviside", "input", 1, input)
    _tensor_arg("heaviside", "values", 2, values)
    _check_broadcast(input, values)
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    # PyTorch has no derivative for heaviside: the result takes no part in autograd.
    x, values = input.detach(), values.detach()
    return tensorplay.where(x == 0, values, (x > 0).to(x.dtype))


# ---------------------------------------------------------------------------------------------
# Predicates, signs and small aliases.

@with_out
def signbit(input):
    _tensor_arg("signbit", "input", 1, input)
    if input.is_floating_point():
        return _signbit(input)
    return input < 0


@with_out
def isneginf(input):
    _tensor_arg("isneginf", "input", 1, input)
    return input == -math.inf if input.is_floating_point() else tensorplay.zeros_like(input, dtype=_C.bool)


@with_out
def isposinf(input):
    _tensor_arg("isposinf", "input", 1, input)
    return input == math.inf if input.is_floating_point() else tensorplay.zeros_like(input, dtype=_C.bool)


def isreal(input):
    _tensor_arg("isreal", "input", 1, input)
    return tensorplay.ones_like(input, dtype=_C.bool)


@with_out
def sgn(input):
    """sign() for real tensors; z / |z| (0 at 0) for complex ones."""
    _tensor_arg("sgn", "input", 1, input)
    if not input.is_complex():
        return tensorplay.sign(input)
    magnitude = input.abs()
    return input / tensorplay.where(magnitude == 0, 1.0, magnitude)


def sgn_(input):
    return input.copy_(sgn(input)) if input.is_complex() else input.sign_()


def positive(input):
    _tensor_arg("positive", "input", 1, input)
    if input.dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@with_out
def fix(input):
    _tensor_arg("fix", "input", 1, input)
    return tensorplay.trunc(input)


def fix_(input):
    return input.trunc_()


@with_out
def clamp_min(input, min):
    _tensor_arg("clamp_min", "input", 1, input)
    _number_or_tensor("clamp_min", "min", 2, min)
    return tensorplay.clamp(input, min=min)


@with_out
def clamp_max(input, max):
    _tensor_arg("clamp_max", "input", 1, input)
    _number_or_tensor("clamp_max", "max", 2, max)
    return tensorplay.clamp(input, max=max)


def clamp_min_(input, min):
    return input.clamp_(min=min)


def clamp_max_(input, max):
    return input.clamp_(max=max)


def _nan_ignoring(op, pick):
    def fn(input, other):
        _tensor_arg(op, "input", 1, input)
        _tensor_arg(op, "other", 2, other)
        _check_broadcast(input, other)
        dtype = _promoted(input, other)
        x, y = input.to(dtype), other.to(dtype)
        if not dtype.is_floating_point:
            return pick(x, y)
        # A NaN on one side gives the other side; NaN only where both are.
        return tensorplay.where(x.isnan(), y, tensorplay.where(y.isnan(), x, pick(x, y)))
    fn.__name__ = fn.__qualname__ = op
    return with_out(fn)


fmax = _nan_ignoring("fmax", _C.maximum)
fmin = _nan_ignoring("fmin", _C.minimum)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _tensor_arg("isclose", "input", 1, input)
    _tensor_arg("isclose", "other", 2, other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_aten_name(input.dtype)} did not match {_aten_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    _check_broadcast(input, other)
    close = input == other
    if equal_nan and input.is_floating_point():
        close = close | (input.isnan() & other.isnan())
    if rtol == 0 and atol == 0:
        return close
    # PyTorch's steps, dtypes included: bool operands count in the default dtype.
    if input.dtype == _C.bool:
        input, other = input.to(tensorplay.get_default_dtype()), other.to(tensorplay.get_default_dtype())
    allowed = atol + (rtol * other).abs()
    actual = (input - other).abs()
    return close | (actual.isfinite() & (actual <= allowed))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _tensor_arg("allclose", "input", 1, input)
    _tensor_arg("allclose", "other", 2, other)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# ---------------------------------------------------------------------------------------------
# Gamma and related special functions (float64 arithmetic: see the module docstring).

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _lgamma_positive(x):
    """lgamma on x > 0: Stirling's series at x + 8 or more (its error is below float64's rounding
    there), brought back by the recurrence lgamma(x) = lgamma(x + 8) - log(x (x+1) ... (x+7))."""
    small = x < 8
    z = tensorplay.where(small, x + 8, x)
    product = tensorplay.where(small, x, 1.0)
    for k in range(1, 8):
        product = product * tensorplay.where(small, x + k, 1.0)
    r = 1 / (z * z)
    series = (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r * (1 / 1188 - r * (691 / 360360 - r / 156))))))
    return (z - 0.5) * z.log() - z + _HALF_LOG_2PI + series / z - product.log()


def _abs_sin_pi(x):
    """|sin(pi x)|, with x reduced exactly to [-0.5, 0.5] first, so that no digits are lost to the
    rounding of pi x."""
    return (math.pi * (x - x.round())).sin().abs()


def _lgamma64(x):
    negative = x < 0
    positive_part = _lgamma_positive(tensorplay.where(negative, 1 - x, x))
    # Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
    reflected = math.log(math.pi) - _abs_sin_pi(x).log() - positive_part
    result = tensorplay.where(negative, reflected, positive_part)
    # Poles at 0, -1, -2, ...
    return tensorplay.where(x.isinf() | (negative & (x == x.round())), math.inf, result)


_PSI_10 = 2.25175258906672110764
_DIGAMMA_ASYMPTOTIC = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                       -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                       8.33333333333333333333E-2)


def _digamma64(x):
    """Cephes' psi, as PyTorch's kernel computes it."""
    negative = x < 0
    y = tensorplay.where(negative, 1 - x, x)
    result = tensorplay.zeros_like(y)
    for _ in range(10):  # pushes y to 10 or more (y > 0 reaches it in at most 10 steps)
        below = y < 10
        result = result - tensorplay.where(below, 1 / y, 0.0)
        y = tensorplay.where(below, y + 1, y)
    z = 1 / (y * y)
    polynomial = tensorplay.zeros_like(z) + _DIGAMMA_ASYMPTOTIC[0]
    for coefficient in _DIGAMMA_ASYMPTOTIC[1:]:
        polynomial = polynomial * z + coefficient
    tail = tensorplay.where(y < 1.0e17, z * polynomial, 0.0)
    value = tensorplay.where(y == 10, result + _PSI_10, result + y.log() - 0.5 / y - tail)
    # Reflection: psi(x) = psi(1 - x) - pi / tan(pi r), r the fractional part of x.
    value = tensorplay.where(negative, value - math.pi / (math.pi * (x - x.trunc())).tan(), value)
    value = tensorplay.where(negative & (x == x.trunc()), math.nan, value)
    # psi has a pole at 0 whose sign follows the zero's: -inf at +0, +inf at -0.
    return tensorplay.where(x == 0, tensorplay.where(_signbit(x), math.inf, -math.inf), value)


def _trigamma64(x):
    """PyTorch's trigamma: reflection below 0.5 (with sin(pi x) unreduced, as PyTorch has it), six
    recurrence steps, then the asymptotic series."""
    reflect = x < 0.5
    sin_pi_x = (math.pi * x).sin()
    result = tensorplay.where(reflect, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
    y = tensorplay.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    r = 1 / (y * y)
    result = result + (1 + 1 / (2 * y) + r * (1 / 6 - r * (1 / 30 - r * (1 / 42)))) / y
    return tensorplay.where(reflect, -result, result)


_ZETA_EULER_MACLAURIN = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                         -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                         1.8152105401943546773e17, -7.1661652561756670113e18)


_ZETA_MAX_TERMS = 100_000


def _hurwitz_zeta64(s, q):
    """Cephes' zeta(s, q) for an integer s >= 2, as PyTorch's kernel computes it: the terms
    (q + k)^-s until q + k passes 9, then the Euler-Maclaurin tail."""
    pole = (q <= 0) & (q == q.floor())
    q = tensorplay.where(pole, 1.0, q)
    total = q.pow(-s)
    a = q.clone()
    b = tensorplay.zeros_like(q)
    steps = 0
    # At least 9 terms, and more where q is negative, until every element's q + k passes 9 (a
    # q below -_ZETA_MAX_TERMS stops short, where PyTorch's loop would run for ages).
    while steps < 9 or (steps < _ZETA_MAX_TERMS and _has_data(a) and bool((a <= 9).any())):
        more = (a <= 9) | (steps < 9)
        a = tensorplay.where(more, a + 1, a)
        b = tensorplay.where(more, a.pow(-s), b)
        total = tensorplay.where(more, total + b, total)
        steps += 1
    w = a
    total = total + b * w / (s - 1) - 0.5 * b
    factor, k = 1.0, 0.0
    for coefficient in _ZETA_EULER_MACLAURIN:
        factor *= s + k
        b = b / w
        total = total + factor * b / coefficient
        k += 1
        factor *= s + k
        b = b / w
        k += 1
    # Poles at q = 0, -1, -2, ... (and q = -inf).
    return tensorplay.where(pole, math.inf, total)


def _polygamma64(n, x):
    if n == 0:
        return _digamma64(x)
    if n == 1:
        return _trigamma64(x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.factorial(n) * _hurwitz_zeta64(float(n + 1), x)


class _Polygamma(Function):
    """polygamma(n, x) in float64, differentiated as polygamma(n + 1, x)."""

    @staticmethod
    def forward(ctx, x, n):
        ctx.n = n
        ctx.save_for_backward(x)
        return _polygamma64(n, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _Polygamma.apply(x, ctx.n + 1), None


class _Lgamma(Function):
    """lgamma in float64, differentiated as digamma."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _lgamma64(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _Polygamma.apply(x, 0)


# The Functions below get a copy of their input: they save it for backward, and an in-place form
# (x.lgamma_()) writes into the input itself.

@with_out
def lgamma(input):
    _tensor_arg("lgamma", "input", 1, input)
    return _float64_unary(lambda x: _Lgamma.apply(x.clone()), input)


@with_out
def digamma(input):
    _tensor_arg("digamma", "input", 1, input)
    return _float64_unary(lambda x: _Polygamma.apply(x.clone(), 0), input)


@with_out
def polygamma(n, input):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    _tensor_arg("polygamma", "input", 2, input)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    # PyTorch's trigamma computes in the input's dtype (float32 for 16-bit floats), and its sin(pi x)
    # rounds differently in float32: computed alike, the two agree to the last digits.
    compute = _float_unary if n == 1 else _float64_unary
    result = compute(lambda x: _Polygamma.apply(x.clone(), n), input)
    if n >= 2:
        # Cephes' tail sums to NaN at q = +inf (PyTorch's answer there).
        result = tensorplay.where(input == math.inf, math.nan, result)
    return result


def _tensor_polygamma(input, n):
    return polygamma(n, input)


# Tensor.polygamma takes n after self, where torch.polygamma takes it first: bound here, not
# through METHODS (which binds the torch-level function itself).
_tensor_polygamma.__name__ = _tensor_polygamma.__qualname__ = "polygamma"
Tensor.polygamma = _tensor_polygamma
Tensor.polygamma_ = inplace(_tensor_polygamma)


@with_out
def mvlgamma(input, p):
    _tensor_arg("mvlgamma", "input", 1, input)
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if input.dtype == _C.bool:
        raise RuntimeError("mvlgamma: The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input.to(_float_dtype(input.dtype))
    total = None
    for j in range(p):
        term = lgamma(x + (j - (p - 1)) / 2)
        total = term if total is None else total + term
    return total + p * (p - 1) * math.log(math.pi) / 4


_I0E_SMALL = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14, -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6,
    -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5, 1.88502885095841655729E-4,
    -5.76375574538582365885E-4, 1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1,
    -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_LARGE = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17, 3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15, 3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11, 4.94060238822496958910E-10, 3.39623202570838634515E-9, 2.26666899049817806459E-8,
    2.04891858946906374183E-7, 2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)


def _chebyshev(y, coefficients):
    """Cephes' chbevl: the Chebyshev series with these coefficients at y (Clenshaw's recurrence)."""
    b0, b1, b2 = tensorplay.zeros_like(y) + coefficients[0], tensorplay.zeros_like(y), None
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _i0_64(x):
    """Cephes' i0: exp(|x|) times a Chebyshev series for exp(-x) I0(x) on [0, 8], and for
    exp(-x) sqrt(x) I0(x) in 1/x above 8. Each branch reads a safe value where the other is taken,
    so that neither sends NaN into the gradient of the other."""
    a = x.abs()
    small = a <= 8
    near = tensorplay.where(small, a, 8.0)
    far = tensorplay.where(small, 8.0, a)
    near_value = near.exp() * _chebyshev(near / 2 - 2, _I0E_SMALL)
    far_value = far.exp() * _chebyshev(32 / far - 2, _I0E_LARGE) / far.sqrt()
    return tensorplay.where(small, near_value, far_value)


@with_out
def i0(input):
    _tensor_arg("i0", "input", 1, input)
    return _float64_unary(_i0_64, input)


# The continued fraction of erfc converges in fewer than this many terms from x = 2 on.
_ERFC_FRACTION_TERMS = 60


def _erfc64(x):
    """1 - erf(x) below 2 (where erfc(x) > 0.004, so no digits cancel), and Laplace's continued
    fraction erfc(x) = exp(-x^2) / sqrt(pi) / (x + 1/2 / (x + 1 / (x + 3/2 / (x + ...)))) above."""
    tail = x >= 2
    far = tensorplay.where(tail, x, 2.0)
    fraction = far
    for k in range(_ERFC_FRACTION_TERMS, 0, -1):
        fraction = far + (k / 2) / fraction
    far_value = (-far * far).exp() / (math.sqrt(math.pi) * fraction)
    return tensorplay.where(tail, far_value, 1 - tensorplay.erf(x))


@with_out
def erfc(input):
    _tensor_arg("erfc", "input", 1, input)
    return _float64_unary(_erfc64, input)


# ---------------------------------------------------------------------------------------------
# The regularized incomplete gamma functions.

_IGAMMA_EPSILON = 1.11022302462515654042E-16
_IGAMMA_MAX_ITERATIONS = 2000
_IGAMMA_CHECK_EVERY = 8


def _igamma_factor(a, x):
    """x^a exp(-x) / Gamma(a)."""
    return (a * x.log() - x - _lgamma64(a)).exp()


def _converge(step, state, used):
    """Runs step(state) -> (state, converged) until every element in `used` has converged."""
    for i in range(_IGAMMA_MAX_ITERATIONS):
        state, converged = step(state)
        if (i + 1) % _IGAMMA_CHECK_EVERY == 0 and (not _has_data(used) or bool((converged | ~used).all())):
            break
    return state


def _igamma_series(a, x, used):
    """P(a, x) by its power series (DLMF 8.11.4); a and x are safe values outside `used`."""
    def step(state):
        r, c, total = state
        r = r + 1
        c = c * x / r
        total = total + c
        return (r, c, total), c <= _IGAMMA_EPSILON * total
    _, _, total = _converge(step, (a.clone(), tensorplay.ones_like(a), tensorplay.ones_like(a)), used)
    return total * _igamma_factor(a, x) / a


def _igammac_series(a, x, used):
    """Q(a, x) for small x by DLMF 8.7.3, which avoids the cancellation of 1 - P."""
    def step(state):
        n, factor, total = state
        factor = factor * -x / n
        term = factor / (a + n)
        total = total + term
        return (n + 1, factor, total), term.abs() <= _IGAMMA_EPSILON * total.abs()
    _, _, total = _converge(step, (1.0, tensorplay.ones_like(a), tensorplay.zeros_like(a)), used)
    log_x = x.log()
    return -(a * log_x - _lgamma64(a + 1)).expm1() - (a * log_x - _lgamma64(a)).exp() * total


def _igammac_fraction(a, x, used):
    """Q(a, x) for large x by its continued fraction (DLMF 8.9.2), in Cephes' rescaled form."""
    y = 1 - a
    z = x + y + 1
    big, big_inverse = 4.503599627370496e15, 2.22044604925031308085e-16

    def step(state):
        c, y, z, p2, p1, q2, q1, answer = state
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        p = p1 * z - p2 * yc
        q = q1 * z - q2 * yc
        nonzero = q != 0
        ratio = p / tensorplay.where(nonzero, q, 1.0)
        change = tensorplay.where(nonzero, ((answer - ratio) / ratio).abs(), 1.0)
        answer = tensorplay.where(nonzero, ratio, answer)
        # Rescales the recurrence before it overflows.
        scale = tensorplay.where(p.abs() > big, big_inverse, 1.0)
        return (c, y, z, p1 * scale, p * scale, q1 * scale, q * scale, answer), change <= _IGAMMA_EPSILON
    ones = tensorplay.ones_like(a)
    state = (0.0, y, z, ones, x + 1, x, z * x, (x + 1) / (z * x))
    answer = _converge(step, state, used)[-1]
    return answer * _igamma_factor(a, x)


def _igammac64(a, x):
    """Q(a, x) = Gamma(a, x) / Gamma(a), choosing between the series of P, the series of Q and the
    continued fraction of Q as SciPy does."""
    regular = (a > 0) & (x > 0) & a.isfinite() & x.isfinite()
    a_safe, x_safe = tensorplay.where(regular, a, 1.0), tensorplay.where(regular, x, 1.0)
    use_fraction = regular & (x > 1.1) & (x >= a)
    use_p = regular & ~use_fraction & tensorplay.where(
        x > 1.1, x < a, tensorplay.where(x <= 0.5, -0.4 / x_safe.log() < a, x * 1.1 < a))
    use_q_series = regular & ~use_fraction & ~use_p
    # Each method runs on safe values (a = 1, x = 0.5 or 2) where another is chosen, so that it
    # converges there at once.
    p = _igamma_series(tensorplay.where(use_p, a_safe, 1.0), tensorplay.where(use_p, x_safe, 0.5), use_p)
    fraction = _igammac_fraction(tensorplay.where(use_fraction, a_safe, 1.0),
                                 tensorplay.where(use_fraction, x_safe, 2.0), use_fraction)
    q_series = _igammac_series(tensorplay.where(use_q_series, a_safe, 1.0),
                               tensorplay.where(use_q_series, x_safe, 0.5), use_q_series)
    q = tensorplay.where(use_fraction, fraction, tensorplay.where(use_p, 1 - p, q_series))
    return _incomplete_gamma_edges(a, x, q, lower=False)


def _igamma64(a, x):
    regular = (a > 0) & (x > 0) & a.isfinite() & x.isfinite()
    use_q = regular & (x > 1) & (x > a)
    a_safe, x_safe = tensorplay.where(regular, a, 1.0), tensorplay.where(regular, x, 1.0)
    p = _igamma_series(tensorplay.where(use_q, 1.0, a_safe), tensorplay.where(use_q, 0.5, x_safe), regular & ~use_q)
    q = _igammac64(tensorplay.where(use_q, a_safe, 1.0), tensorplay.where(use_q, x_safe, 2.0))
    return _incomplete_gamma_edges(a, x, tensorplay.where(use_q, 1 - q, p), lower=True)


def _incomplete_gamma_edges(a, x, value, lower):
    """PyTorch's (SciPy's) values on the edges of the domain, for P (lower) or Q."""
    low, high = (0.0, 1.0) if lower else (1.0, 0.0)
    value = tensorplay.where(x.isinf(), high, value)
    value = tensorplay.where(a.isinf(), tensorplay.where(x.isinf(), math.nan, low), value)
    value = tensorplay.where(x == 0, low, value)
    value = tensorplay.where(a == 0, tensorplay.where(x > 0, high, math.nan), value)
    return tensorplay.where((x < 0) | (a < 0) | a.isnan() | x.isnan(), math.nan, value)


class _IncompleteGamma(Function):
    """P(a, x) or Q(a, x) in float64. PyTorch differentiates them in x only: the derivative in x is
    +-x^(a-1) exp(-x) / Gamma(a)."""

    @staticmethod
    def forward(ctx, a, x, lower):
        ctx.lower = lower
        ctx.save_for_backward(a, x)
        return _igamma64(a, x) if lower else _igammac64(a, x)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            name = "igamma" if ctx.lower else "igammac"
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        density = ((a - 1) * x.log() - x - _Lgamma.apply(a)).exp()
        return None, grad * (density if ctx.lower else -density), None


def _incomplete_gamma(op, input, other, lower):
    _tensor_arg(op, "input", 1, input)
    _tensor_arg(op, "other", 2, other)
    _check_broadcast(input, other)
    dtype = _promoted(input, other)
    if not dtype.is_floating_point:
        raise _not_implemented(op, dtype)
    a, x = tensorplay.broadcast_tensors(input.to(_C.float64), other.to(_C.float64))
    return _IncompleteGamma.apply(a.clone(), x.clone(), lower).to(dtype)


@with_out
def igamma(input, other):
    return _incomplete_gamma("igamma", input, other, lower=True)


@with_out
def igammac(input, other):
    return _incomplete_gamma("igammac", input, other, lower=False)


# ---------------------------------------------------------------------------------------------
# In-place forms, and PyTorch's aliases.

acosh_ = inplace(acosh)
asinh_ = inplace(asinh)
atanh_ = inplace(atanh)
sinc_ = inplace(sinc)
logit_ = inplace(logit)
deg2rad_ = inplace(deg2rad)
rad2deg_ = inplace(rad2deg)
def _check_no_overlap(input):
    """PyTorch refuses to write into an expanded tensor before it looks at the dtypes."""
    if input.numel() > 1 and any(stride == 0 and size > 1 for stride, size in zip(input.stride(), input.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


def frac_(input):
    _check_no_overlap(input)
    return _frac_in_place(input)


_frac_in_place = inplace(frac)
erfc_ = inplace(erfc)
lgamma_ = inplace(lgamma)
digamma_ = inplace(digamma)
mvlgamma_ = inplace(mvlgamma)
i0_ = inplace(i0)


def _float_promoted(input, other):
    return _float_dtype(_promoted(input, other))


def _inplace_binary(fn, result_dtype=_promoted):
    """The in-place form of a binary op, which checks, as PyTorch does before its kernel's dtype
    check, that other broadcasts to self's shape and that the result's dtype can be written into self."""
    checked = inplace(fn)

    def op(input, other):
        name = fn.__name__ + "_"
        _check_no_overlap(input)
        if isinstance(other, Tensor):
            shape = tuple(tensorplay.broadcast_shapes(input.shape, other.shape))
            if shape != tuple(input.shape):
                raise RuntimeError(f"{name}(): output with shape {list(input.shape)} doesn't match the broadcast "
                                   f"shape {list(shape)}")
        if isinstance(other, (Tensor, numbers.Number)):
            dtype = result_dtype(input, other)
            if not can_cast(dtype, input.dtype):
                raise RuntimeError(f"{name}(): result type {_aten_name(dtype)} can't be cast to the desired output "
                                   f"type {_aten_name(input.dtype)}")
        return checked(input, other)
    op.__name__ = op.__qualname__ = checked.__name__
    op.__doc__ = checked.__doc__
    return op


fmod_ = _inplace_binary(fmod)
hypot_ = _inplace_binary(hypot)
copysign_ = _inplace_binary(copysign, _float_promoted)
nextafter_ = _inplace_binary(nextafter)
gcd_ = _inplace_binary(gcd)
lcm_ = _inplace_binary(lcm)
heaviside_ = _inplace_binary(heaviside)
xlogy_ = _inplace_binary(xlogy, _float_promoted)
igamma_ = _inplace_binary(igamma)
igammac_ = _inplace_binary(igammac)
bitwise_left_shift_ = _inplace_binary(bitwise_left_shift)
bitwise_right_shift_ = _inplace_binary(bitwise_right_shift)


def _alias(name, target):
    """PyTorch's alias `name` of tensorplay's `target`, with out=."""
    def op(input):
        return getattr(_C, target)(input)
    op.__name__ = op.__qualname__ = name
    return with_out(op)


arccos, arccos_ = _alias("arccos", "acos"), Tensor.acos_
arcsin, arcsin_ = _alias("arcsin", "asin"), Tensor.asin_
arctan, arctan_ = _alias("arctan", "atan"), Tensor.atan_
arccosh, arccosh_ = acosh, acosh_
arcsinh, arcsinh_ = asinh, asinh_
arctanh, arctanh_ = atanh, atanh_


_OPERATOR_OPS = {"lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}


def _base_name(name):
    """The op that errors name: the in-place form's op, or the one an operator reaches."""
    if name.startswith("__"):
        operator = name[2:-2]
        return _OPERATOR_OPS.get(operator) or _OPERATOR_OPS[operator[1:]]  # __rlshift__, __ilshift__
    return name.removesuffix("_")


# Errors raised by the ops these are built on name the op that was called, as PyTorch's do.
for _name in dict.fromkeys(__all__ + METHODS):
    globals()[_name] = _named(_base_name(_name))(globals()[_name])
Tensor.polygamma = _named("polygamma")(Tensor.polygamma)
Tensor.polygamma_ = _named("polygamma")(Tensor.polygamma_)

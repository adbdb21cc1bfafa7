"""tensorplay.special: PyTorch's special functions (torch.special).

Many are ops the torch namespace has under the same or an older name (expit is sigmoid, gammaln is
lgamma, psi is digamma, multigammaln is mvlgamma, gammainc is igamma): here they are those ops, with
their errors naming the special function called. entr and ndtr are written here, xlog1py beside
xlogy, zeta on the Hurwitz zeta that polygamma uses. The Bessel and Airy functions, erfcx, ndtri,
log_ndtr and the orthogonal polynomials have a kernel (csrc/tensorplay/cpu/special.cpp, on
Boost.Math), computed in float32 or float64; their derivatives, where PyTorch has them, are here."""

import math
import numbers

import tensorplay
from tensorplay import _C
from tensorplay._composites.pointwise import _check_broadcast, _float_unary, _hurwitz_zeta64, _not_implemented, xlog1py
from tensorplay._composites._forms import with_out
from tensorplay.autograd.function import Function
from tensorplay.nn._functional._checks import _named

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

Tensor = _C.Tensor  # (torch.special re-exports it)


def _alias(name, op):
    """op as torch.special.<name>: the same arguments, errors naming special.<name>."""
    fn = _named(f"special.{name}")(op)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}: tensorplay.{op.__name__}, under its special-function name."
    return fn


digamma = _alias("digamma", tensorplay.digamma)
erf = _alias("erf", tensorplay.erf)
erfc = _alias("erfc", tensorplay.erfc)
erfinv = _alias("erfinv", tensorplay.erfinv)
exp2 = _alias("exp2", tensorplay.exp2)
expit = _alias("expit", tensorplay.sigmoid)
expm1 = _alias("expm1", tensorplay.expm1)
gammaln = _alias("gammaln", tensorplay.lgamma)
i0 = _alias("i0", tensorplay.i0)
log1p = _alias("log1p", tensorplay.log1p)
log_softmax = _alias("log_softmax", tensorplay.log_softmax)
logit = _alias("logit", tensorplay.logit)
logsumexp = _alias("logsumexp", tensorplay.logsumexp)
multigammaln = _alias("multigammaln", tensorplay.mvlgamma)
polygamma = _alias("polygamma", tensorplay.polygamma)
psi = _alias("psi", tensorplay.digamma)
sinc = _alias("sinc", tensorplay.sinc)
softmax = _alias("softmax", tensorplay.softmax)
xlogy = _alias("xlogy", tensorplay.xlogy)
gammainc = _alias("gammainc", tensorplay.igamma)
gammaincc = _alias("gammaincc", tensorplay.igammac)


class _Entr(Function):
    """-x log x for x > 0, 0 at 0, -inf below (NaN stays); PyTorch's derivative, -(1 + log x),
    everywhere: inf at 0 and NaN below, where the function is constant."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        positive = x > 0
        inside = -x * tensorplay.where(positive, x, 1.0).log()
        outside = tensorplay.where(x == 0, 0.0, tensorplay.where(x.isnan(), x, -math.inf))
        return tensorplay.where(positive, inside, outside)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(1 + x.log())


def _tensor(op, input):
    if not isinstance(input, tensorplay.Tensor):
        raise TypeError(f"special.{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


@_named("special.round")
def round(input, *, decimals=0, out=None):  # noqa: A001  (torch.special.round shadows the builtin too)
    """torch.round for floating tensors; integers and bool are refused, as PyTorch's special.round
    refuses them (where torch.round returns them as they are)."""
    _tensor("round", input)
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"special.round: not implemented for '{str(input.dtype).removeprefix('tensorplay.')}'")
    return tensorplay.round(input, decimals=decimals, out=out)


@with_out
@_named("special.entr")
def entr(input):
    _tensor("entr", input)
    return _float_unary(_Entr.apply, input)


@with_out
@_named("special.ndtr")
def ndtr(input):
    """The standard normal distribution's CDF, as erfc(-x / sqrt 2) / 2: accurate in the lower tail,
    where 1 + erf would cancel."""
    _tensor("ndtr", input)
    return _float_unary(lambda x: 0.5 * tensorplay.erfc(x * -math.sqrt(0.5)), input)


# ---- the functions with kernels (csrc/tensorplay/cpu/special.cpp) ----

# The ones whose PyTorch kernels also take float16 and bfloat16 (computed in float32, rounded once).
_REDUCED_FLOAT_KERNELS = {"i0e", "i1", "i1e"}


def _kernel_dtypes(name, dtype):
    """The dtype a kernel computes in and the result's: integers and bool give the default dtype."""
    reduced = dtype in (tensorplay.float16, tensorplay.bfloat16)
    if dtype.is_complex or (reduced and name not in _REDUCED_FLOAT_KERNELS):
        raise _not_implemented(name, dtype)
    if not dtype.is_floating_point:
        dtype = tensorplay.get_default_dtype()
    return (tensorplay.float32 if reduced else dtype), dtype


def _kernel(name, x, n=None):
    """The kernel's values, without a derivative (as PyTorch's functions that have none)."""
    return _C._special_function(name, x, n)


class _Differentiable(Function):
    """A kernel with PyTorch's derivative, derivative(x, y) (y the result), written with ops that are
    themselves differentiable so that second derivatives follow."""

    @staticmethod
    def forward(ctx, name, x, derivative):
        y = _kernel(name, x)
        ctx.derivative = derivative
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return None, grad * ctx.derivative(x, y), None


def _i0e_derivative(x, y):
    return i1e(x) - x.sign() * y


def _i1_derivative(x, y):
    # i1'(x) = i0(x) - i1(x) / x, 1/2 at 0.
    return tensorplay.where(x == 0, 0.5, tensorplay.i0(x) - y / tensorplay.where(x == 0, 1.0, x))


def _i1e_derivative(x, y):
    safe = tensorplay.where(x == 0, 1.0, x)
    return tensorplay.where(x == 0, 0.5, i0e(x) - y * (x.sign() + 1 / safe))


def _erfcx_derivative(x, y):
    return 2 * x * y - 2 / math.sqrt(math.pi)


def _ndtri_derivative(x, y):
    return math.sqrt(2 * math.pi) * (y * y / 2).exp()


def _log_ndtr_derivative(x, y):
    return (-x * x / 2 - y).exp() / math.sqrt(2 * math.pi)


_DERIVATIVES = {"i0e": _i0e_derivative, "i1": _i1_derivative, "i1e": _i1e_derivative, "erfcx": _erfcx_derivative,
                "ndtri": _ndtri_derivative, "log_ndtr": _log_ndtr_derivative}


def _unary_kernel(name):
    """torch.special.<name> of one tensor, on its kernel."""
    def function(input):
        _tensor(name, input)
        compute, dtype = _kernel_dtypes(name, input.dtype)
        x = input.to(compute)
        derivative = _DERIVATIVES.get(name)
        y = _Differentiable.apply(name, x, derivative) if derivative else _kernel(name, x)
        return y.to(dtype)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.special.{name}, on its kernel (csrc/tensorplay/cpu/special.cpp)."
    return with_out(_named(f"special.{name}")(function))


def _operand(op, name, position, value):
    if isinstance(value, tensorplay.Tensor):
        return value
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return None
    raise TypeError(f"special.{op}(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


def _polynomial(name):
    """torch.special.<name>(input, n): the polynomial of degree n (truncated to an integer; 0 for a
    negative degree) at input; either may be a number. No derivative, as in PyTorch."""
    def function(input, n):
        x_tensor, n_tensor = _operand(name, "input", 1, input), _operand(name, "n", 2, n)
        if x_tensor is None and n_tensor is None:
            raise TypeError(f"special.{name}(): expected a tensor for input or n")
        _check_broadcast(input, n)
        dtype = tensorplay.result_type(input, n)
        compute, dtype = _kernel_dtypes(name, dtype)
        like = x_tensor if x_tensor is not None else n_tensor
        x = input.to(compute) if x_tensor is not None else tensorplay.full((), input, dtype=compute,
                                                                            device=like.device)
        degree = n.to(compute) if n_tensor is not None else tensorplay.full((), n, dtype=compute,
                                                                           device=like.device)
        return _kernel(name, x, degree).to(dtype)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.special.{name}, on its kernel (csrc/tensorplay/cpu/special.cpp)."
    return with_out(_named(f"special.{name}")(function))


airy_ai = _unary_kernel("airy_ai")
bessel_j0 = _unary_kernel("bessel_j0")
bessel_j1 = _unary_kernel("bessel_j1")
bessel_y0 = _unary_kernel("bessel_y0")
bessel_y1 = _unary_kernel("bessel_y1")
modified_bessel_i0 = _unary_kernel("modified_bessel_i0")
modified_bessel_i1 = _unary_kernel("modified_bessel_i1")
modified_bessel_k0 = _unary_kernel("modified_bessel_k0")
modified_bessel_k1 = _unary_kernel("modified_bessel_k1")
scaled_modified_bessel_k0 = _unary_kernel("scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _unary_kernel("scaled_modified_bessel_k1")
spherical_bessel_j0 = _unary_kernel("spherical_bessel_j0")
i0e = _unary_kernel("i0e")
i1 = _unary_kernel("i1")
i1e = _unary_kernel("i1e")
erfcx = _unary_kernel("erfcx")
ndtri = _unary_kernel("ndtri")
log_ndtr = _unary_kernel("log_ndtr")

chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")


# ---- the Hurwitz zeta function ----

def _zeta64(x, q):
    """zeta(x, q) = sum_k (q + k)^-x, with Cephes' domain (PyTorch's): inf at x = 1 and at the poles
    q = 0, -1, ...; NaN for x < 1 and for a non-integer x with q < 0."""
    value = _hurwitz_zeta64(x, tensorplay.where(q <= 0, 1.0, q))
    negative_q = tensorplay.where(q == q.floor(), math.inf,
                                  tensorplay.where(x == x.floor(), _hurwitz_zeta64(x, q), math.nan))
    value = tensorplay.where(q <= 0, negative_q, value)
    value = tensorplay.where(x == 1, math.inf, value)
    return tensorplay.where(x < 1, math.nan, value)


class _Zeta(Function):
    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        return _zeta64(x, q)

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, grad * -x * _Zeta.apply(x + 1, q)


@with_out
@_named("special.zeta")
def zeta(input, other):
    """The Hurwitz zeta function zeta(x, q), computed in float64 and rounded to the result dtype."""
    x_tensor, q_tensor = _operand("zeta", "input", 1, input), _operand("zeta", "other", 2, other)
    if x_tensor is None and q_tensor is None:
        raise TypeError("special.zeta(): expected a tensor for input or other")
    _check_broadcast(input, other)
    dtype = tensorplay.result_type(input, other)
    if dtype.is_complex or dtype in (tensorplay.float16, tensorplay.bfloat16):
        raise _not_implemented("zeta", dtype)
    if not dtype.is_floating_point:
        dtype = tensorplay.get_default_dtype()
    like = x_tensor if x_tensor is not None else q_tensor

    def as64(value, tensor):
        return value.to(tensorplay.float64) if tensor is not None else tensorplay.full(
            (), value, dtype=tensorplay.float64, device=like.device)

    x, q = tensorplay.broadcast_tensors(as64(input, x_tensor), as64(other, q_tensor))
    return _Zeta.apply(x, q).to(dtype)

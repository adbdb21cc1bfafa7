"""tensorplay.special: PyTorch's special functions (torch.special).

Most are ops the torch namespace has under the same or an older name (expit is sigmoid, gammaln is
lgamma, psi is digamma, multigammaln is mvlgamma): here they are those ops, with their errors naming
the special function called. entr and ndtr are written here, xlog1py beside xlogy."""

import math

import tensorplay
from tensorplay._composites.pointwise import _float_unary, xlog1py
from tensorplay._composites._forms import with_out
from tensorplay.autograd.function import Function
from tensorplay.nn._functional._checks import _named

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "log1p",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma", "psi", "round", "sinc",
           "softmax", "xlog1py", "xlogy"]


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

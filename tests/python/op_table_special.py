"""Op-table rows of torch.special (tensorplay/special.py): the functions the torch namespace has
under other names, checked under their special names (errors must name them), the ones written
there (entr, ndtr, zeta) or beside xlogy (xlog1py), and the ones with kernels of their own (the
Bessel and Airy functions, erfcx, ndtri, log_ndtr, the orthogonal polynomials).

The kernels' values are checked against an exact reference: mpmath at 30 digits for the Bessel and
Airy functions and log_ndtr (PyTorch's and SciPy's approximations lose digits near the Bessel
functions' zeros, in K's far tail and in log_ndtr's upper tail, where tensorplay's keep them), SciPy
for the rest; torch still decides the result's dtype and
which inputs are errors. The polynomials are checked against torch itself.

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import math

import mpmath
import numpy as np
import scipy.special

from op_table import FLOAT_DTYPES, Op, S, binary_samples, reduction_samples, unary_samples
from op_table import LOGSUMEXP_FORMS, SOFTMAX_FORMS


def special(name, samples=unary_samples, label=None, **kw):
    """torch.special.<name>, in both libraries."""
    return Op(f"special.{name}", samples, label=label, method=False,
              fn=lambda m, *args, **k: getattr(m.special, name)(*args, **k), **kw)


def torch_ndtr_through_float32(m, x):
    """torch's ndtr of 16-bit floats computes in their precision and loses the lower tail (0 where
    the value is 1e-10) and a few units in the last place elsewhere; tensorplay computes in float32
    and rounds once: the reference for them is torch's float32 ndtr, rounded."""
    if isinstance(x, m.Tensor) and x.dtype in (m.float16, m.bfloat16):
        return m.special.ndtr(x.float()).to(x.dtype)
    return m.special.ndtr(x)


def exact(m, result, x, reference):
    """result (torch's, for its dtype and its gradient) with the reference's values at x's finite
    elements; at NaN and the infinities torch's own values stand (the references do not all define
    them)."""
    values = np.asarray(x.detach().double().numpy(), dtype=np.float64)
    finite = np.isfinite(values)
    with np.errstate(all="ignore"):
        exact_values = reference(np.where(finite, values, 0.0))
    merged = np.where(finite, exact_values, result.detach().double().numpy())
    target = m.from_numpy(merged).to(result.dtype)
    both_finite = m.isfinite(result) & m.isfinite(target)
    # The exact value, carrying torch's gradient where it is finite.
    adjusted = result + m.where(both_finite, target - result, m.zeros_like(result)).detach()
    return m.where(both_finite, adjusted, target)


def by_mpmath(function):
    """A float64 NumPy function from an mpmath one, at 30 digits (inf where it overflows float64)."""
    def reference(values):
        with mpmath.workdps(30):
            out = np.empty_like(values)
            for i, v in np.ndenumerate(values):
                try:
                    out[i] = float(function(mpmath.mpf(float(v))))
                except (ValueError, ZeroDivisionError, OverflowError):
                    out[i] = math.nan
            return out
    return reference


def positive_only(reference, at_zero):
    """A reference defined for x > 0: at_zero at 0 and NaN below, as PyTorch's kernels answer."""
    def restricted(values):
        out = reference(np.where(values > 0, values, 1.0))
        return np.where(values > 0, out, np.where(values == 0, at_zero, math.nan))
    return restricted


SPECIAL_REFERENCES = {
    "airy_ai": by_mpmath(mpmath.airyai),
    "bessel_j0": by_mpmath(lambda v: mpmath.besselj(0, v)),
    "bessel_j1": by_mpmath(lambda v: mpmath.besselj(1, v)),
    "bessel_y0": positive_only(by_mpmath(lambda v: mpmath.bessely(0, v)), -math.inf),
    "bessel_y1": positive_only(by_mpmath(lambda v: mpmath.bessely(1, v)), -math.inf),
    "modified_bessel_i0": lambda v: scipy.special.iv(0, v),
    "modified_bessel_i1": lambda v: scipy.special.iv(1, v),
    "modified_bessel_k0": positive_only(by_mpmath(lambda v: mpmath.besselk(0, v)), math.inf),
    "modified_bessel_k1": positive_only(by_mpmath(lambda v: mpmath.besselk(1, v)), math.inf),
    "scaled_modified_bessel_k0": positive_only(by_mpmath(lambda v: mpmath.exp(v) * mpmath.besselk(0, v)), math.inf),
    "scaled_modified_bessel_k1": positive_only(by_mpmath(lambda v: mpmath.exp(v) * mpmath.besselk(1, v)), math.inf),
    "spherical_bessel_j0": lambda v: scipy.special.spherical_jn(0, v),
    "i0e": scipy.special.i0e,
    "i1": scipy.special.i1,
    "i1e": scipy.special.i1e,
    "erfcx": scipy.special.erfcx,
    "ndtri": scipy.special.ndtri,
    # (the upper tail as log1p of the lower one: SciPy's loses digits there)
    "log_ndtr": by_mpmath(lambda v: mpmath.log(mpmath.ncdf(v)) if v < 0 else mpmath.log1p(-mpmath.ncdf(-v))),
}


def special_kernel(name, domain=(-12, 12), **kw):
    """A function with a kernel of its own, its values checked against SPECIAL_REFERENCES."""
    def fn(m, x):
        result = getattr(m.special, name)(x)
        if m.__name__ == "torch" and isinstance(x, m.Tensor) and x.is_floating_point():
            return exact(m, result, x, SPECIAL_REFERENCES[name])
        return result
    # (complex inputs, which they refuse, are tested in test_special_accuracy.py)
    return Op(f"special.{name}", unary_samples, FLOAT_DTYPES + ("int64", "bool"), method=False, domain=domain, fn=fn,
              **kw)


def degree_samples(mk):
    """The polynomials at x for degrees 0 .. 12 and negative ones; n a tensor of x's dtype or a number;
    x at +-1 and 0, where the polynomials have closed values."""
    degrees = np.array([-2, 0, 1, 2, 3, 5, 8, 9, 12, 2, 7, 4], dtype=np.float64)
    samples = [
        S("degrees", mk((12,)), degrees.astype(mk((1,)).dtype)),
        S("scalar_degree", mk((3, 4)), 6),
        S("edges", np.array([1.0, -1.0, 0.0, 0.5]).astype(mk((1,)).dtype), 9),
        S("broadcast", mk((3, 1)), np.array([0, 3, 10]).astype(mk((1,)).dtype)),
        S("scalar_x", 0.3, np.array([0, 2, 11]).astype(mk((1,)).dtype)),
    ]
    if mk.layouts:
        samples += [S("0dim", mk(()), 4), S("transposed", mk.transposed((4, 3)), 5)]
    return samples


def polynomial(name, domain=(-1.2, 1.2)):
    return Op(f"special.{name}", degree_samples, ("float32", "float64", "int64", "float16"), method=False,
              domain=domain, fn=lambda m, *args, **kw: getattr(m.special, name)(*args, **kw))


def zeta_samples(mk):
    return [
        S("domain", mk((12,), domain=(1.1, 6)), mk.other((12,))),
        S("integer_s", np.arange(2, 14).astype(mk((1,)).dtype), mk.other((12,))),
        S("poles_and_edges", np.array([1.0, 0.5, 2.0, 2.5, 3.0, 2.0]).astype(mk((1,)).dtype),
          np.array([1.0, 1.0, 0.0, -1.5, -2.5, -3.0]).astype(mk((1,)).dtype)),
        S("scalar_s", 2.5, mk.other((5,))),
        S("scalar_q", mk((5,), domain=(1.5, 4)), 2),
        S("broadcast", mk((3, 1), domain=(1.5, 4)), mk.other((1, 4))),
    ]


ROWS = [
    special("expit"),
    special("logit", domain=(0.05, 0.95)),
    special("erf"),
    special("erfc", domain=(-3, 6)),
    special("erfinv", domain=(-0.95, 0.95)),
    special("exp2"),
    special("expm1", domain=(-2, 2)),
    special("log1p", domain=(-0.9, 3)),
    special("gammaln", domain=(-4.5, 12)),
    special("digamma", domain=(-4.5, 12)),
    special("psi", domain=(-4.5, 12)),
    Op("special.polygamma", unary_samples, label="special.polygamma.n1", method=False, domain=(-4.5, 12),
       fn=lambda m, x: m.special.polygamma(1, x)),
    # (mvlgamma's float16 results may differ from torch's by one unit in the last place.)
    Op("special.multigammaln", unary_samples, label="special.multigammaln.p3", method=False, domain=(1.1, 8),
       fn=lambda m, x: m.special.multigammaln(x, 3), tol={"float16": (2e-3, 1e-3)}),
    special("i0", domain=(-12, 12)),
    special("sinc"),
    special("round"),
    special("entr", domain=(-1, 4)),
    special("ndtr", domain=(-8, 8), torch_fn=torch_ndtr_through_float32),
    special("xlogy", binary_samples, other_domain=(0.1, 4)),
    special("xlog1py", binary_samples, other_domain=(-0.9, 4)),
    special("logsumexp", reduction_samples(*LOGSUMEXP_FORMS, dim_needed=True)),
    special("gammainc", binary_samples, domain=(0.5, 4), other_domain=(0.1, 6)),
    special("gammaincc", binary_samples, domain=(0.5, 4), other_domain=(0.1, 6)),
    # Their derivative exists in the second argument only: these fix the first.
    Op("special.gammainc", unary_samples, label="special.gammainc.grad_other", dtypes=FLOAT_DTYPES, method=False,
       domain=(0.05, 9), fn=lambda m, x: m.special.gammainc(m.full_like(x, 2.5) if isinstance(x, m.Tensor) else 2.5,
                                                            x)),
    Op("special.gammaincc", unary_samples, label="special.gammaincc.grad_other", dtypes=FLOAT_DTYPES, method=False,
       domain=(0.05, 9), fn=lambda m, x: m.special.gammaincc(m.full_like(x, 2.5) if isinstance(x, m.Tensor) else 2.5,
                                                             x)),
    Op("special.zeta", zeta_samples, ("float32", "float64", "int64", "bfloat16"), method=False, other_domain=(0.2, 5),
       fn=lambda m, *args, **kw: m.special.zeta(*args, **kw)),
    *(special_kernel(name) for name in (
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
        "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
        "spherical_bessel_j0", "i0e", "i1", "i1e", "erfcx", "log_ndtr")),
    special_kernel("ndtri", domain=(0, 1)),
    *(polynomial(name) for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
        "hermite_polynomial_h", "hermite_polynomial_he", "legendre_polynomial_p")),
    *(polynomial(name, domain=(-0.1, 1.1)) for name in (
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w")),
    polynomial("laguerre_polynomial_l", domain=(-1, 6)),
    special("softmax", reduction_samples(*SOFTMAX_FORMS, dim_needed=True)),
    special("log_softmax", reduction_samples(*SOFTMAX_FORMS, dim_needed=True)),
]

GRADIENT_LABELS = """
    special.expit special.logit special.erf special.erfc special.erfinv special.exp2 special.expm1 special.log1p
    special.gammaln special.digamma special.psi special.polygamma.n1 special.multigammaln.p3 special.i0
    special.sinc special.entr special.ndtr special.xlogy special.xlog1py special.logsumexp special.softmax
    special.log_softmax special.round special.gammainc.grad_other special.gammaincc.grad_other special.zeta
    special.i0e special.i1 special.i1e special.erfcx special.ndtri special.log_ndtr
""".split()

_NO_DERIVATIVE = "PyTorch defines no derivative: its result does not require grad"
_SECOND_ARGUMENT = "torch has no derivative in its first argument; the .grad_other row checks the second"
NOT_DIFFERENTIABLE = {"special.gammainc": _SECOND_ARGUMENT, "special.gammaincc": _SECOND_ARGUMENT}
NOT_DIFFERENTIABLE |= {f"special.{name}": _NO_DERIVATIVE for name in (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")}

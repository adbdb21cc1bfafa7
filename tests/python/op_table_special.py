"""Op-table rows of torch.special (tensorplay/special.py): the functions the torch namespace has
under other names, checked under their special names (errors must name them), and the ones written
there (entr, ndtr) or beside xlogy (xlog1py).

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

from op_table import Op, binary_samples, reduction_samples, unary_samples
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
    special("softmax", reduction_samples(*SOFTMAX_FORMS, dim_needed=True)),
    special("log_softmax", reduction_samples(*SOFTMAX_FORMS, dim_needed=True)),
]

GRADIENT_LABELS = """
    special.expit special.logit special.erf special.erfc special.erfinv special.exp2 special.expm1 special.log1p
    special.gammaln special.digamma special.psi special.polygamma.n1 special.multigammaln.p3 special.i0
    special.sinc special.entr special.ndtr special.xlogy special.xlog1py special.logsumexp special.softmax
    special.log_softmax special.round
""".split()

NOT_DIFFERENTIABLE = {}

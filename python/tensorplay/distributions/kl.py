"""The Kullback-Leibler divergence KL(p || q) between distributions, by a registry of closed forms
keyed by the pair of types: `kl_divergence(p, q)` runs the most specific function registered for a
pair of base classes of p's and q's types."""

import functools
import math
import warnings

import tensorplay
from tensorplay.distributions.bernoulli import Bernoulli
from tensorplay.distributions.beta import Beta
from tensorplay.distributions.binomial import Binomial
from tensorplay.distributions.categorical import Categorical
from tensorplay.distributions.cauchy import Cauchy
from tensorplay.distributions.dirichlet import Dirichlet
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.exponential import Exponential
from tensorplay.distributions.gamma import Gamma
from tensorplay.distributions.geometric import Geometric
from tensorplay.distributions.gumbel import _EULER_GAMMA, Gumbel
from tensorplay.distributions.half_normal import HalfNormal
from tensorplay.distributions.independent import Independent
from tensorplay.distributions.laplace import Laplace
from tensorplay.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from tensorplay.distributions.normal import Normal
from tensorplay.distributions.one_hot_categorical import OneHotCategorical
from tensorplay.distributions.poisson import Poisson
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import _sum_rightmost
from tensorplay.distributions.uniform import Uniform

__all__ = ["register_kl", "kl_divergence"]

_REGISTRY = {}  # (type of p, type of q) -> fn(p, q)


def register_kl(type_p, type_q):
    """Decorates fn(p, q) as the KL divergence between instances of type_p and type_q (and of
    their subclasses, where nothing more specific is registered)."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn):
        _REGISTRY[type_p, type_q] = fn
        _dispatch.cache_clear()
        return fn
    return decorator


@functools.cache
def _dispatch(type_p, type_q):
    """The function registered for the most specific pair of base classes: among the matching pairs,
    those no other matching pair is more specific than (on both sides); where two such remain,
    PyTorch's warning, and the one whose classes come first in the types' MROs."""
    matches = [(p, q) for p, q in _REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None

    def more_specific(a, b):
        return a != b and issubclass(a[0], b[0]) and issubclass(a[1], b[1])

    best = [m for m in matches if not any(more_specific(other, m) for other in matches)]
    best.sort(key=lambda m: (type_p.__mro__.index(m[0]) + type_q.__mro__.index(m[1]), type_p.__mro__.index(m[0])))
    if len(best) > 1 and _REGISTRY[best[0]] is not _REGISTRY[best[1]]:
        (p1, q1), (p2, q2) = best[0], best[1]
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
                      f"({p1.__name__}, {q2.__name__})", RuntimeWarning)
    return _REGISTRY[best[0]]


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(X) - log q(X)], over the batch of p and q."""
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fn(p, q)


def _infinite_where(condition, value):
    return tensorplay.where(condition, math.inf, value)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # p log(p / q) + (1 - p) log((1 - p) / (1 - q)), with 0 log 0 = 0 at p in {0, 1}.
    one = p.probs * (tensorplay.nn.functional.softplus(-q.logits) - tensorplay.nn.functional.softplus(-p.logits))
    one = tensorplay.where(q.probs == 0, math.inf, one)
    one = tensorplay.where(p.probs == 0, 0.0, one)
    zero = (1 - p.probs) * (tensorplay.nn.functional.softplus(q.logits) - tensorplay.nn.functional.softplus(p.logits))
    zero = tensorplay.where(q.probs == 1, math.inf, zero)
    zero = tensorplay.where(p.probs == 1, 0.0, zero)
    return one + zero


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    terms = p.probs * (p.logits - q.logits)
    terms = tensorplay.where(q.probs == 0, math.inf, terms)
    terms = tensorplay.where(p.probs == 0, 0.0, terms)
    return terms.sum(-1)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    ratio = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (ratio + shift - 1 - ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    kl = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), kl)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs() / q.scale
    return -ratio.log() + distance + ratio * tensorplay.exp(-distance * q.scale / p.scale) - 1


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_one_hot_one_hot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """Infinite where p has more trials than q (p puts mass where q has none)."""
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + tensorplay.log1p(-p.probs) - tensorplay.log1p(-q.probs))
    return _infinite_where(p.total_count > q.total_count, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # -H(p) - E_p[log q(K)], log q(k) = k log(1 - q) + log q and E_p[K] = 1 / p - 1.
    return -p.entropy() - tensorplay.log1p(-q.probs) / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log()


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariate_normal(p, q):
    """(tr(S_q^-1 S_p) + |mu_q - mu_p|^2_{S_q^-1} - k + log det S_q - log det S_p) / 2, through the
    Cholesky factors: the trace is |L_q^-1 L_p|_F^2."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    shape = tensorplay.broadcast_shapes(Lp.shape, Lq.shape)
    ratio = tensorplay.linalg.solve_triangular(Lq.expand(shape), Lp.expand(shape), upper=False)
    trace = ratio.pow(2).sum((-2, -1))
    distance = _batch_mahalanobis(Lq, q.loc - p.loc)
    log_dets = q._half_log_det() - p._half_log_det()
    k = p.event_shape[0]
    return (log_dets + 0.5 * (trace + distance - k)).expand(tensorplay.broadcast_shapes(p.batch_shape, q.batch_shape))


@register_kl(HalfNormal, HalfNormal)
def _kl_half_normal_half_normal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    """With r = scale_p / scale_q and d = (loc_p - loc_q) / scale_q:
    -log r + d + gamma (r - 1) + exp(lgamma(1 + r) - d) - 1."""
    r = p.scale / q.scale
    d = (p.loc - q.loc) / q.scale
    return -r.log() + d + _EULER_GAMMA * (r - 1) + (tensorplay.lgamma(1 + r) - d).exp() - 1


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """The same bijections applied to both: the divergence of the bases (KL is invariant under them)."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), len(p.event_shape) - len(p.base_dist.event_shape))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    return ((p.concentration - q.concentration) * tensorplay.digamma(p.concentration)
            - tensorplay.lgamma(p.concentration) + tensorplay.lgamma(q.concentration)
            + q.concentration * (p.rate.log() - q.rate.log()) + p.concentration * (q.rate - p.rate) / p.rate)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    return (tensorplay.lgamma(a0) - tensorplay.lgamma(a).sum(-1) - tensorplay.lgamma(b0) + tensorplay.lgamma(b).sum(-1)
            + ((a - b) * (tensorplay.digamma(a) - tensorplay.digamma(a0).unsqueeze(-1))).sum(-1))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return p._sum_event(kl_divergence(p.base_dist, q.base_dist))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_exponential_family(p, q):
    """For two members of one family, the Bregman divergence of the log-normalizer A between their
    natural parameters: A(theta_q) - A(theta_p) - <theta_q - theta_p, grad A(theta_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    theta_p = [t.detach().requires_grad_() for t in p._natural_params]
    theta_q = q._natural_params
    normalizer_p = p._log_normalizer(*theta_p)
    gradients = tensorplay.autograd.grad(normalizer_p.sum(), theta_p, create_graph=True)
    kl = q._log_normalizer(*theta_q) - normalizer_p
    for tp_, tq, g in zip(theta_p, theta_q, gradients):
        kl = kl - (tq - tp_) * g
    return kl

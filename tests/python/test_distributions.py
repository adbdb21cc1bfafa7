"""tensorplay.distributions against torch.distributions on the same parameters: shapes, moments,
densities, CDFs and their inverses, entropies, supports, validation errors, expand, KL divergences
and the constraints; samples against their law (fixed seeds); rsample gradients against finite
differences of the same draws."""

import functools
import math

import numpy as np
import pytest
import torch

import tensorplay
import tensorplay.distributions as D


def pair(values, dtype="float64"):
    """The same values as a tensorplay and a torch tensor."""
    array = np.asarray(values, dtype=dtype)
    return tensorplay.from_numpy(array.copy()), torch.from_numpy(array.copy())


def both(name, **params):
    """The distribution `name` in each library, on the same parameters (arrays become tensors)."""
    ours, theirs = {}, {}
    for key, value in params.items():
        if isinstance(value, (list, np.ndarray)):
            ours[key], theirs[key] = pair(value)
        else:
            ours[key] = theirs[key] = value
    return getattr(D, name)(**ours), getattr(torch.distributions, name)(**theirs)


# name, parameters, values inside the support (broadcast against the batch)
CASES = [
    ("Normal", dict(loc=0.5, scale=2.0), [-1.0, 0.0, 3.5]),
    ("Normal", dict(loc=[[0.0, 1.0, -2.0]], scale=[[1.0], [0.5]]), [[0.3, -0.7, 2.0]]),
    ("Uniform", dict(low=-1.0, high=3.0), [-1.0, 0.0, 2.9]),
    ("Uniform", dict(low=[0.0, 1.0], high=[[2.0, 4.0]]), [1.5, 3.0]),
    ("Exponential", dict(rate=1.5), [0.0, 0.2, 4.0]),
    ("Exponential", dict(rate=[[0.5, 2.0, 3.0]]), [[0.1, 1.0, 2.0]]),
    ("Laplace", dict(loc=[0.0, 1.0], scale=[1.0, 0.25]), [[-1.0, 1.5], [0.0, 1.0]]),
    ("Bernoulli", dict(probs=[0.2, 0.5, 0.9]), [[0.0, 1.0, 1.0]]),
    ("Bernoulli", dict(logits=[[-1.0, 2.0], [0.0, 0.5]]), [1.0, 0.0]),
    ("Bernoulli", dict(probs=0.3), [0.0, 1.0]),
    ("Categorical", dict(probs=[0.2, 0.3, 0.5]), [0.0, 2.0, 1.0]),
    ("Categorical", dict(logits=[[0.1, -1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]]), [[3.0, 0.0]]),
    ("Categorical", dict(probs=[[0.0, 1.0], [0.5, 0.5]]), [1.0, 0.0]),
    ("Cauchy", dict(loc=[0.0, 2.0], scale=[1.0, 0.5]), [[-3.0, 2.5], [0.0, 1.0]]),
    ("Geometric", dict(probs=[0.3, 0.9, 1.0]), [[0.0, 2.0, 0.0]]),
    ("Geometric", dict(logits=[-1.0, 2.0]), [3.0, 0.0]),
    ("Poisson", dict(rate=[0.5, 3.0, 0.0]), [[0.0, 2.0, 0.0], [1.0, 5.0, 0.0]]),
    ("Binomial", dict(total_count=5, probs=[0.3, 0.5, 1.0]), [[0.0, 2.0, 5.0]]),
    ("Binomial", dict(total_count=[3.0, 6.0], logits=[-1.0, 2.0]), [3.0, 4.0]),
    ("OneHotCategorical", dict(probs=[[0.2, 0.8], [0.5, 0.5]]), [[0.0, 1.0], [1.0, 0.0]]),
    ("OneHotCategoricalStraightThrough", dict(logits=[0.1, 1.0, -1.0]), [[0.0, 0.0, 1.0]]),
    ("Multinomial", dict(total_count=4, probs=[0.2, 0.3, 0.5]), [[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]]),
    ("Multinomial", dict(total_count=3, logits=[[0.0, 1.0], [2.0, -1.0]]), [[1.0, 2.0]]),
    ("MultivariateNormal", dict(loc=[0.0, 1.0], covariance_matrix=[[2.0, 0.5], [0.5, 1.0]]), [[0.5, -1.0], [0.0, 0.0]]),
    ("MultivariateNormal", dict(loc=[[0.0, 1.0], [1.0, 0.0]], scale_tril=[[1.0, 0.0], [0.3, 0.5]]), [0.5, -1.0]),
    ("MultivariateNormal", dict(loc=[0.0, 1.0, 2.0], precision_matrix=[[2.0, 0.5, 0.0], [0.5, 1.0, 0.1],
                                                                       [0.0, 0.1, 3.0]]), [0.5, -1.0, 0.0]),
    ("LogNormal", dict(loc=[0.0, 1.0], scale=[1.0, 0.5]), [[0.5, 2.0], [3.0, 0.1]]),
    ("HalfNormal", dict(scale=[1.0, 2.5]), [[0.0, 2.0], [0.3, 4.0]]),
    ("HalfCauchy", dict(scale=[1.0, 2.5]), [[0.0, 2.0], [0.3, 4.0]]),
    ("Gumbel", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), [[-1.0, 2.0], [0.5, 0.0]]),
    ("Pareto", dict(scale=[1.0, 2.0], alpha=[5.0, 6.5]), [[1.5, 2.0], [3.0, 9.0]]),  # (finite 4th moments)
    ("Weibull", dict(scale=[1.0, 2.0], concentration=[1.5, 3.0]), [[0.5, 2.0], [3.0, 0.1]]),
    ("Kumaraswamy", dict(concentration1=[2.0, 0.5], concentration0=[3.0, 1.5]), [[0.2, 0.5], [0.9, 0.1]]),
    ("LogisticNormal", dict(loc=[0.0, 1.0], scale=[1.0, 0.5]), [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    ("RelaxedBernoulli", dict(temperature=np.array(0.5), probs=[0.3, 0.6]), [[0.4, 0.9], [0.01, 0.5]]),
    ("RelaxedOneHotCategorical", dict(temperature=np.array(0.7), logits=[[0.0, 1.0, -1.0]]),
     [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    ("VonMises", dict(loc=[0.5, -1.0], concentration=[2.0, 0.3]), [[0.1, 2.0], [-3.0, 0.0]]),
    ("Gamma", dict(concentration=[2.0, 0.5, 7.0], rate=[1.0, 3.0, 0.5]), [[1.0, 0.2, 20.0], [0.0, 1.0, 3.0]]),
    ("Chi2", dict(df=[3.0, 1.0]), [[1.0, 0.2], [4.0, 2.0]]),
    ("InverseGamma", dict(concentration=[3.0, 1.5], rate=[2.0, 1.0]), [[0.5, 2.0], [1.0, 0.1]]),
    ("StudentT", dict(df=[3.0, 1.5, 0.8], loc=[0.0, 1.0, -1.0], scale=[1.0, 2.0, 0.5]), [[0.5, 1.0, 2.0]]),
    ("FisherSnedecor", dict(df1=[3.0, 5.0], df2=[12.0, 2.0]), [[0.5, 1.0], [2.0, 0.1]]),
    ("Beta", dict(concentration1=[2.0, 0.5, 4.0], concentration0=[3.0, 0.5, 1.5]), [[0.3, 0.9, 0.5]]),
    ("Dirichlet", dict(concentration=[[2.0, 0.5, 1.0], [3.0, 3.0, 3.0]]), [[0.3, 0.2, 0.5], [0.1, 0.1, 0.8]]),
    ("NegativeBinomial", dict(total_count=[3.0, 0.5], probs=[0.3, 0.6]), [[2.0, 0.0], [5.0, 1.0]]),
    ("ContinuousBernoulli", dict(probs=[0.3, 0.5, 0.4995, 0.9]), [[0.4, 0.2, 0.7, 1.0]]),
    ("ContinuousBernoulli", dict(logits=[-2.0, 0.0005, 3.0]), [[0.4, 0.0, 0.7]]),
    ("LowRankMultivariateNormal", dict(loc=[[0.0, 1.0, -1.0], [1.0, 0.0, 2.0]],
                                       cov_factor=[[1.0, 0.5], [0.0, 2.0], [-1.0, 0.3]], cov_diag=[0.5, 1.0, 2.0]),
     [[0.5, -1.0, 0.0]]),
]

# Where torch's value is not the distribution's: ours is checked against the formula instead.
TORCH_DIFFERS = {
    # torch's Kumaraswamy.mode takes log1p(-b) (NaN for b > 1) where the mode is ((a - 1) / (a b - 1))^(1/a).
    ("Kumaraswamy", "mode"): lambda d: np.where((d.concentration1.numpy() >= 1) & (d.concentration0.numpy() >= 1),
                                                ((d.concentration1.numpy() - 1) /
                                                 (d.concentration1.numpy() * d.concentration0.numpy() - 1))
                                                ** (1 / d.concentration1.numpy()), np.nan),
}
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(CASES)]


def outcome(fn):
    try:
        return fn()
    except NotImplementedError:
        return NotImplementedError


def assert_same(ours, theirs, what, rtol=1e-10):
    if theirs is NotImplementedError or ours is NotImplementedError:
        assert ours is theirs, f"{what}: ours {ours}, torch {theirs}"
        return
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{what}: dtype"
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=rtol * 1e-2,
                               err_msg=what)


@pytest.mark.parametrize("name, params, values", CASES, ids=IDS)
def test_matches_pytorch(name, params, values):
    ours, theirs = both(name, **params)
    # Number parameters are float32 tensors (the default dtype), whose logarithms and such the two
    # libraries may round one unit apart.
    rtol = 1e-6 if any(isinstance(v, float) for v in params.values()) else 1e-10
    if name == "Multinomial":
        rtol = 1e-7  # (torch's entropy takes log n! in float32)
    if name == "VonMises":
        rtol = 1e-8  # (torch's I0 and I1 are polynomial approximations good to about 1e-9; ours Boost's)
    same = functools.partial(assert_same, rtol=rtol)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample and ours.has_enumerate_support == theirs.has_enumerate_support

    def shown(constraint):  # (a bound that is a tensor prints its library's name)
        return repr(constraint).replace("tensorplay", "torch")
    assert shown(ours.support) == shown(theirs.support)
    assert {k: shown(v) for k, v in ours.arg_constraints.items()} == {k: shown(v) for k, v in
                                                                     theirs.arg_constraints.items()}
    for prop in ("mean", "mode", "variance", "stddev"):
        if (name, prop) in TORCH_DIFFERS:
            np.testing.assert_allclose(getattr(ours, prop).numpy(), TORCH_DIFFERS[name, prop](ours), rtol=1e-12)
            continue
        same(outcome(lambda: getattr(ours, prop)), outcome(lambda: getattr(theirs, prop)), prop)
    same(outcome(ours.entropy), outcome(theirs.entropy), "entropy")
    same(outcome(ours.perplexity), outcome(theirs.perplexity), "perplexity")
    x, y = pair(values)
    same(ours.log_prob(x), theirs.log_prob(y), "log_prob")
    same(outcome(lambda: ours.cdf(x)), outcome(lambda: theirs.cdf(y)), "cdf")
    u, v = pair([0.05, 0.5, 0.95][:len(values)] if np.ndim(values) == 1 else np.full(np.shape(values), 0.3))
    same(outcome(lambda: ours.icdf(u)), outcome(lambda: theirs.icdf(v)), "icdf")
    if theirs.has_enumerate_support:
        for expand in (True, False):
            same(outcome(lambda: ours.enumerate_support(expand)), outcome(lambda: theirs.enumerate_support(expand)),
                 "enumerate_support")
    big_ours, big_theirs = ours.expand((4,) + tuple(ours.batch_shape)), theirs.expand((4,) + tuple(theirs.batch_shape))
    assert tuple(big_ours.batch_shape) == tuple(big_theirs.batch_shape)
    # The values with a dim of 1 for the new leading batch dim (before the batch and event dims).
    k = x.dim() - len(ours.batch_shape) - len(ours.event_shape)
    same(big_ours.log_prob(x.unsqueeze(k) if k >= 0 else x), big_theirs.log_prob(y.unsqueeze(k) if k >= 0 else y),
         "expanded log_prob")
    assert tuple(ours.sample((5, 2)).shape) == tuple(theirs.sample((5, 2)).shape)


@pytest.mark.parametrize("name, params, values", CASES, ids=IDS)
def test_samples_follow_the_law(name, params, values):
    tensorplay.manual_seed(0)
    ours, theirs = both(name, **params)
    draws = ours.sample((20000,))
    assert bool(ours.support.check(draws).all())
    if name == "VonMises":  # angles: the mean direction and the circular variance 1 - |E e^(ix)|
        cos, sin = draws.double().cos().mean(0).numpy(), draws.double().sin().mean(0).numpy()
        np.testing.assert_allclose(np.arctan2(sin, cos), theirs.mean.numpy(), atol=0.1)
        np.testing.assert_allclose(1 - np.hypot(cos, sin), theirs.variance.numpy(), atol=0.02)
        return
    if outcome(lambda: theirs.mean) is NotImplementedError:  # no moments to compare: the support only
        return
    mean, variance = theirs.mean.numpy(), theirs.variance.numpy()
    if name in ("Cauchy", "HalfCauchy"):  # no moments: the quartiles
        for q in (0.25, 0.5, 0.75):
            below = (draws < ours.icdf(tensorplay.tensor(q, dtype=draws.dtype))).double().mean(0).numpy()
            np.testing.assert_allclose(below, q, atol=5 * np.sqrt(q * (1 - q) / 20000))
        return
    if name == "Categorical":  # the frequencies of the categories
        counts = torch.nn.functional.one_hot(torch.from_numpy(draws.numpy()), theirs.probs.size(-1)).double()
        frequencies, probs = counts.mean(0).numpy(), theirs.probs.numpy()
        np.testing.assert_allclose(frequencies, probs, atol=5 * np.sqrt(0.25 / 20000))
        return
    # Where the moments exist (a heavy tail may lack them): the sample's against them.
    mean, variance = np.broadcast_to(mean, draws.shape[1:]), np.broadcast_to(variance, draws.shape[1:])
    finite = np.isfinite(mean) & np.isfinite(variance)
    values = draws.double().numpy()
    standard_error = np.sqrt(variance[finite] / 20000)
    assert np.all(np.abs(values.mean(0)[finite] - mean[finite]) <= 5 * standard_error + 1e-12)
    np.testing.assert_allclose(values.var(0)[finite], variance[finite], rtol=0.1)


@pytest.mark.parametrize("name, params", [
    ("Normal", dict(loc=[0.5, -1.0], scale=[2.0, 0.3])),
    ("Uniform", dict(low=[-1.0, 0.0], high=[3.0, 0.5])),
    ("Exponential", dict(rate=[1.5, 0.2])),
    ("Laplace", dict(loc=[0.0, 1.0], scale=[1.0, 0.25])),
    ("Cauchy", dict(loc=[0.0, 1.0], scale=[1.0, 0.25])),
    ("LogNormal", dict(loc=[0.0, 1.0], scale=[1.0, 0.25])),
    ("Gumbel", dict(loc=[0.0, 1.0], scale=[1.0, 0.25])),
    ("Weibull", dict(scale=[1.0, 2.0], concentration=[1.5, 0.7])),
    ("Pareto", dict(scale=[1.0, 2.0], alpha=[1.5, 3.0])),
    ("Kumaraswamy", dict(concentration1=[2.0, 0.5], concentration0=[3.0, 1.5])),
])
def test_rsample_gradients_match_finite_differences(name, params):
    """The same draws (one seed) as the parameters move: d(sample)/d(parameter) by autograd and by
    central differences agree."""
    names = list(params)
    base = {k: tensorplay.tensor(v, dtype=tensorplay.float64) for k, v in params.items()}

    def draws(values):
        tensorplay.manual_seed(7)
        return getattr(D, name)(**values).rsample((3,))
    leaves = {k: v.clone().requires_grad_() for k, v in base.items()}
    weights = tensorplay.randn(3, 2, dtype=tensorplay.float64)
    (draws(leaves) * weights).sum().backward()
    for k in names:
        for i in range(2):
            step = 1e-6
            plus, minus = dict(base), dict(base)
            plus[k] = base[k].clone()
            minus[k] = base[k].clone()
            plus[k][i] += step
            minus[k][i] -= step
            numeric = ((draws(plus) - draws(minus)) * weights).sum().item() / (2 * step)
            assert abs(leaves[k].grad[i].item() - numeric) < 1e-5 * max(1.0, abs(numeric)), (k, i)


def test_validation_errors_match_pytorch():
    bad = [("Normal", dict(loc=[0.0, 1.0], scale=[1.0, -1.0])), ("Uniform", dict(low=1.0, high=0.0)),
           ("Exponential", dict(rate=[0.0])), ("Bernoulli", dict(probs=[1.5])),
           ("Categorical", dict(probs=[[0.5, -0.5]])), ("Poisson", dict(rate=[-1.0])),
           ("Binomial", dict(total_count=[2.5], probs=[0.5])), ("Geometric", dict(probs=[0.0, 0.5])),
           ("MultivariateNormal", dict(loc=[0.0, 0.0], covariance_matrix=[[1.0, 2.0], [2.0, 1.0]]))]
    for name, params in bad:  # (validation asked for: other tests may have changed the default)
        with pytest.raises(ValueError) as theirs:
            getattr(torch.distributions, name)(**{k: torch.tensor(v) if isinstance(v, list) else v
                                                  for k, v in params.items()}, validate_args=True)
        with pytest.raises(ValueError) as ours:
            getattr(D, name)(**{k: tensorplay.tensor(v) if isinstance(v, list) else v for k, v in params.items()},
                             validate_args=True)
        head = str(theirs.value).split(" of distribution ")[0]
        assert str(ours.value).startswith(head), (str(ours.value), str(theirs.value))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Bernoulli(probs=0.3, logits=0.1)
    with pytest.raises(ValueError, match="must be at least one-dimensional"):
        D.Categorical(tensorplay.tensor(0.5))
    normal = D.Normal(0.0, 1.0)
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(\)\) to be within the support"):
        normal.log_prob(tensorplay.tensor(float("nan")))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        normal.log_prob(0.5)
    with pytest.raises(ValueError, match="Value is not broadcastable"):
        D.Normal(tensorplay.zeros(3), 1.0).log_prob(tensorplay.zeros(2))
    assert math.isnan(D.Normal(0.0, -1.0, validate_args=False).scale.sqrt().item())
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


KL_PAIRS = [
    ("Normal", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), "Normal", dict(loc=[0.5, -1.0], scale=[0.5, 1.0])),
    ("Uniform", dict(low=[0.0, -1.0], high=[1.0, 1.0]), "Uniform", dict(low=[-1.0, 0.0], high=[2.0, 1.0])),
    ("Exponential", dict(rate=[1.0, 3.0]), "Exponential", dict(rate=[2.0, 0.5])),
    ("Laplace", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), "Laplace", dict(loc=[0.5, -1.0], scale=[0.5, 1.0])),
    ("Bernoulli", dict(probs=[0.0, 0.3, 1.0, 0.5]), "Bernoulli", dict(probs=[0.5, 0.6, 0.2, 0.0])),
    ("Categorical", dict(probs=[[0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]), "Categorical",
     dict(probs=[[0.3, 0.3, 0.4], [0.5, 0.0, 0.5]])),
    ("OneHotCategorical", dict(probs=[0.2, 0.8]), "OneHotCategorical", dict(logits=[1.0, -1.0])),
    ("Cauchy", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), "Cauchy", dict(loc=[0.5, -1.0], scale=[0.5, 1.0])),
    ("Geometric", dict(probs=[0.3, 0.9]), "Geometric", dict(probs=[0.6, 0.2])),
    ("Poisson", dict(rate=[2.0, 0.5]), "Poisson", dict(rate=[3.0, 0.7])),
    ("Binomial", dict(total_count=[5.0, 7.0], probs=[0.3, 0.5]), "Binomial", dict(total_count=[5.0, 6.0],
                                                                                  probs=[0.6, 0.2])),
    ("MultivariateNormal", dict(loc=[0.0, 1.0], covariance_matrix=[[2.0, 0.5], [0.5, 1.0]]), "MultivariateNormal",
     dict(loc=[[1.0, 0.0], [0.5, 0.5]], scale_tril=[[1.0, 0.0], [0.3, 0.5]])),
    ("LogNormal", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), "LogNormal", dict(loc=[0.5, -1.0], scale=[0.5, 1.0])),
    ("HalfNormal", dict(scale=[1.0, 2.0]), "HalfNormal", dict(scale=[0.5, 3.0])),
    ("Gumbel", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), "Gumbel", dict(loc=[0.5, -1.0], scale=[0.5, 1.0])),
    ("Pareto", dict(scale=[1.0, 2.0], alpha=[3.0, 1.5]), "Pareto", dict(scale=[1.0, 2.0], alpha=[2.0, 2.5])),
    ("Gamma", dict(concentration=[2.0, 0.5], rate=[1.0, 3.0]), "Gamma", dict(concentration=[1.0, 4.0],
                                                                              rate=[2.0, 0.5])),
    ("Beta", dict(concentration1=[2.0, 0.5], concentration0=[3.0, 0.5]), "Beta",
     dict(concentration1=[1.0, 4.0], concentration0=[2.0, 0.5])),
    ("Dirichlet", dict(concentration=[2.0, 0.5, 1.0]), "Dirichlet", dict(concentration=[[1.0, 1.0, 1.0],
                                                                                      [3.0, 0.5, 2.0]])),
]


@pytest.mark.parametrize("p_name, p_params, q_name, q_params", KL_PAIRS, ids=[f"{p[0]}-{i}" for i, p in enumerate(KL_PAIRS)])
def test_kl_divergence_matches_pytorch(p_name, p_params, q_name, q_params):
    p_ours, p_theirs = both(p_name, **p_params)
    q_ours, q_theirs = both(q_name, **q_params)
    assert_same(D.kl_divergence(p_ours, q_ours), torch.distributions.kl_divergence(p_theirs, q_theirs), "kl")


def test_kl_of_independent_and_exponential_families():
    p, tp_ = both("Normal", loc=[[0.0, 1.0], [2.0, 3.0]], scale=[[1.0, 2.0], [0.5, 0.5]])
    q, tq = both("Normal", loc=[[1.0, 1.0], [0.0, 3.0]], scale=[[2.0, 2.0], [1.0, 0.5]])
    assert_same(D.kl_divergence(D.Independent(p, 1), D.Independent(q, 1)),
                torch.distributions.kl_divergence(torch.distributions.Independent(tp_, 1),
                                                  torch.distributions.Independent(tq, 1)), "independent kl")

    class Rate(D.ExponentialFamily):
        """The exponential distribution through its family's form alone: KL by the Bregman divergence."""
        arg_constraints = {}

        def __init__(self, rate):
            self.rate = rate
            super().__init__(rate.shape)

        @property
        def _natural_params(self):
            return (-self.rate,)

        def _log_normalizer(self, eta):
            return -tensorplay.log(-eta)
    p_rate, q_rate = tensorplay.tensor([1.0, 3.0]), tensorplay.tensor([2.0, 0.5])
    bregman = D.kl_divergence(Rate(p_rate), Rate(q_rate))
    closed = D.kl_divergence(D.Exponential(p_rate), D.Exponential(q_rate))
    np.testing.assert_allclose(bregman.detach().numpy(), closed.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(Rate(p_rate), D.Exponential(q_rate))
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Laplace and q "
                                                  "type Bernoulli"):
        D.kl_divergence(D.Laplace(0.0, 1.0), D.Bernoulli(0.5))


def test_register_kl_dispatches_to_the_most_specific_pair():
    class Narrow(D.Normal):
        pass

    @D.register_kl(Narrow, D.Normal)
    def _narrow_normal(p, q):
        return tensorplay.tensor(42.0)
    assert D.kl_divergence(Narrow(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), Narrow(0.0, 1.0)).item() == 0.0

    class Other(D.Normal):
        pass

    @D.register_kl(D.Normal, Other)
    def _normal_other(p, q):
        return tensorplay.tensor(7.0)
    with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence"):  # (Narrow, Normal) or (Normal, Other)?
        D.kl_divergence(Narrow(0.0, 1.0), Other(0.0, 1.0))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_independent_reinterprets_batch_dims():
    ours, theirs = both("Normal", loc=np.zeros((3, 2)), scale=np.ones((3, 2)))
    ours, theirs = D.Independent(ours, 1), torch.distributions.Independent(theirs, 1)
    assert tuple(ours.batch_shape) == (3,) and tuple(ours.event_shape) == (2,)
    x, y = pair([[0.5, -1.0]])
    assert_same(ours.log_prob(x), theirs.log_prob(y), "log_prob")
    assert_same(ours.entropy(), theirs.entropy(), "entropy")
    assert repr(ours.support) == repr(theirs.support)
    assert tuple(ours.expand((4, 3)).batch_shape) == (4, 3)
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(0.0, 1.0), 1)


CONSTRAINT_VALUES = [[0.0, 0.5, 1.0], [-1.0, 2.0, float("nan")], [[0.2, 0.8], [0.5, 0.6]], [[1.0, 0.0], [0.0, 1.0]],
                     [[1.0, 0.0], [0.5, 2.0]], [[2.0, 1.0], [1.0, 2.0]], [[1.0, 0.0], [-1.0, 1.0]]]


@pytest.mark.parametrize("name", [
    "real", "positive", "nonnegative", "unit_interval", "simplex", "boolean", "nonnegative_integer",
    "positive_integer", "real_vector", "one_hot", "lower_cholesky", "lower_triangular", "positive_definite",
    "positive_semidefinite", "square", "symmetric", "corr_cholesky", ("interval", -0.5, 1.0),
    ("half_open_interval", 0.0, 1.0), ("greater_than", 0.5), ("greater_than_eq", 0.5), ("less_than", 0.5),
    ("integer_interval", 0, 1), ("multinomial", 1)])
def test_constraints_match_pytorch(name):
    if isinstance(name, tuple):
        name, *args = name
        ours, theirs = getattr(D.constraints, name)(*args), getattr(torch.distributions.constraints, name)(*args)
    else:
        ours, theirs = getattr(D.constraints, name), getattr(torch.distributions.constraints, name)
    assert repr(ours) == repr(theirs)
    assert (ours.event_dim, ours.is_discrete) == (theirs.event_dim, theirs.is_discrete)
    for values in CONSTRAINT_VALUES:
        x, y = pair(values)
        if x.dim() < ours.event_dim:
            continue
        assert ours.check(x).tolist() == theirs.check(y).tolist(), (name, values)


def test_composed_and_dependent_constraints():
    C, TC = D.constraints, torch.distributions.constraints
    x, y = pair([[-1.0, 2.0, 0.5], [1.0, -2.0, 0.7]])
    assert C.cat([C.real, C.positive, C.unit_interval], dim=1).check(x).tolist() == \
        TC.cat([TC.real, TC.positive, TC.unit_interval], dim=1).check(y).tolist()
    assert C.stack([C.positive, C.real], dim=0).check(x).tolist() == \
        TC.stack([TC.positive, TC.real], dim=0).check(y).tolist()
    assert C.independent(C.positive, 1).check(x).tolist() == TC.independent(TC.positive, 1).check(y).tolist()
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(x)
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        C.dependent.event_dim
    assert C.dependent(is_discrete=True, event_dim=1).event_dim == 1
    assert C.is_dependent(D.Uniform.support) and D.Categorical(tensorplay.ones(3)).support.upper_bound == 2


# ---- transforms and the constraint registries ----

def transform_pairs():
    """(label, ours, theirs, input) for every transform."""
    T, TT = D.transforms, torch.distributions.transforms
    loc, t_loc = pair([0.5, 1.0, -1.0])
    scale, t_scale = pair([2.0, 0.5, -3.0])
    rows = [[0.3, -1.2, 2.0], [0.1, 0.5, -0.7]]
    positive = [[0.3, 1.2, 2.0], [0.1, 0.5, 0.7]]
    square = [[0.3, 1.0], [0.5, -0.2]]
    return [
        ("exp", T.ExpTransform(), TT.ExpTransform(), rows),
        ("power", T.PowerTransform(2.5), TT.PowerTransform(2.5), positive),
        ("sigmoid", T.SigmoidTransform(), TT.SigmoidTransform(), rows),
        ("softplus", T.SoftplusTransform(), TT.SoftplusTransform(), rows),
        ("tanh", T.TanhTransform(), TT.TanhTransform(), rows),
        ("abs", T.AbsTransform(), TT.AbsTransform(), rows),
        ("affine", T.AffineTransform(1.0, -2.0), TT.AffineTransform(1.0, -2.0), rows),
        ("affine_tensors", T.AffineTransform(loc, scale), TT.AffineTransform(t_loc, t_scale), rows),
        ("affine_event", T.AffineTransform(loc, scale, event_dim=1), TT.AffineTransform(t_loc, t_scale, event_dim=1),
         rows),
        ("softmax", T.SoftmaxTransform(), TT.SoftmaxTransform(), rows),
        ("stick_breaking", T.StickBreakingTransform(), TT.StickBreakingTransform(), rows),
        ("lower_cholesky", T.LowerCholeskyTransform(), TT.LowerCholeskyTransform(), square),
        ("positive_definite", T.PositiveDefiniteTransform(), TT.PositiveDefiniteTransform(), square),
        ("corr_cholesky", T.CorrCholeskyTransform(), TT.CorrCholeskyTransform(), rows),
        ("corr_cholesky_4", T.CorrCholeskyTransform(), TT.CorrCholeskyTransform(), [0.3, -1.2, 2.0, 0.1, 0.5, -0.7]),
        ("compose", T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)]),
         TT.ComposeTransform([TT.ExpTransform(), TT.AffineTransform(0.0, 2.0)]), rows),
        ("compose_event", T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.StickBreakingTransform()]),
         TT.ComposeTransform([TT.AffineTransform(1.0, 2.0), TT.StickBreakingTransform()]), rows),
        ("identity", T.identity_transform, TT.identity_transform, rows),
        ("independent", T.IndependentTransform(T.ExpTransform(), 1), TT.IndependentTransform(TT.ExpTransform(), 1),
         rows),
        ("reshape", T.ReshapeTransform((3,), (3, 1)), TT.ReshapeTransform((3,), (3, 1)), rows),
        ("cat", T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=1, lengths=[1, 2]),
         TT.CatTransform([TT.ExpTransform(), TT.AffineTransform(0.0, 3.0)], dim=1, lengths=[1, 2]), rows),
        ("stack", T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.AbsTransform()], dim=1),
         TT.StackTransform([TT.ExpTransform(), TT.TanhTransform(), TT.AbsTransform()], dim=1), rows),
        ("cdf", T.CumulativeDistributionTransform(D.Normal(0.0, 1.0)),
         TT.CumulativeDistributionTransform(torch.distributions.Normal(0.0, 1.0)), rows),
    ]


@pytest.mark.parametrize("label, ours, theirs, values", transform_pairs(), ids=[t[0] for t in transform_pairs()])
def test_transforms_match_pytorch(label, ours, theirs, values):
    x, y = pair(values)
    forward_ours, forward_theirs = ours(x), theirs(y)
    assert_same(forward_ours, forward_theirs, "forward")
    assert_same(outcome(lambda: ours.inv(forward_ours)), outcome(lambda: theirs.inv(forward_theirs)), "inverse")
    assert_same(outcome(lambda: ours.log_abs_det_jacobian(x, forward_ours)),
                outcome(lambda: theirs.log_abs_det_jacobian(y, forward_theirs)), "log_abs_det_jacobian")
    assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain)
    assert ours.bijective == theirs.bijective
    assert tuple(ours.forward_shape(x.shape)) == tuple(theirs.forward_shape(y.shape))
    assert repr(ours) == repr(theirs) and repr(ours.inv) == repr(theirs.inv)


def test_transform_caching_and_inverses():
    T = D.transforms
    exp = T.ExpTransform(cache_size=1)
    x = tensorplay.tensor([0.5, 1.0])
    y = exp(x)
    assert exp.inv(y) is x and exp(x) is y  # the cached pair, not recomputed
    assert exp.inv.inv is exp and T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    assert T.AffineTransform(0.0, -2.0).sign == -1 and T.ComposeTransform([T.ExpTransform(),
                                                                           T.AffineTransform(0.0, -1.0)]).sign == -1


@pytest.mark.parametrize("name", ["real", "positive", "nonnegative", "unit_interval", "simplex", "lower_cholesky",
                                  "positive_definite", "corr_cholesky", "real_vector", ("greater_than", 2.0),
                                  ("less_than", 1.0), ("interval", -1.0, 3.0), ("half_open_interval", 0.0, 2.0)])
def test_biject_to_and_transform_to_match_pytorch(name):
    if isinstance(name, tuple):
        name, *args = name
        ours, theirs = getattr(D.constraints, name)(*args), getattr(torch.distributions.constraints, name)(*args)
    else:
        ours, theirs = getattr(D.constraints, name), getattr(torch.distributions.constraints, name)
    for mine, reference in ((D.biject_to, torch.distributions.biject_to),
                            (D.transform_to, torch.distributions.transform_to)):
        try:
            expected = repr(reference(theirs))
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                mine(ours)
            continue
        transform = mine(ours)
        assert repr(transform) == expected
        target = (4,) + (3,) * transform.codomain.event_dim
        x = tensorplay.randn(*transform.inverse_shape(target))  # any input lands in the constraint
        assert bool(ours.check(transform(x)).all())


def test_transformed_distribution_matches_pytorch():
    T, TT = D.transforms, torch.distributions.transforms
    base, t_base = both("Normal", loc=[[0.0, 0.5, -1.0], [1.0, 0.0, 0.2]], scale=[[1.0, 2.0, 0.5], [1.0, 1.0, 1.0]])
    ours = D.TransformedDistribution(base, [T.StickBreakingTransform()])
    theirs = torch.distributions.TransformedDistribution(t_base, [TT.StickBreakingTransform()])
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    assert repr(ours.support) == repr(theirs.support)
    x, y = pair([0.1, 0.2, 0.3, 0.4])
    assert_same(ours.log_prob(x), theirs.log_prob(y), "log_prob")
    decreasing = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.AffineTransform(1.0, -2.0)])
    t_decreasing = torch.distributions.TransformedDistribution(torch.distributions.Normal(0.0, 1.0),
                                                               [TT.AffineTransform(1.0, -2.0)])
    u, v = pair([0.5, 2.0])
    assert_same(decreasing.cdf(u), t_decreasing.cdf(v), "cdf", rtol=1e-6)
    assert_same(decreasing.icdf(u * 0.3), t_decreasing.icdf(v * 0.3), "icdf", rtol=1e-6)
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        D.TransformedDistribution(base, T.ExpTransform)


def test_mixture_same_family_matches_pytorch():
    weights, t_weights = pair([[0.3, 0.7], [0.5, 0.5]])
    loc, t_loc = pair([[0.0, 2.0], [1.0, -1.0]])
    scale, t_scale = pair([[1.0, 0.5], [2.0, 0.3]])
    ours = D.MixtureSameFamily(D.Categorical(weights), D.Normal(loc, scale))
    theirs = torch.distributions.MixtureSameFamily(torch.distributions.Categorical(t_weights),
                                                   torch.distributions.Normal(t_loc, t_scale))
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    assert repr(ours.support) == repr(theirs.support)
    x, y = pair([[0.5, 1.0], [2.0, -1.0]])
    for what in ("log_prob", "cdf"):
        assert_same(getattr(ours, what)(x), getattr(theirs, what)(y), what)
    assert_same(ours.mean, theirs.mean, "mean")
    assert_same(ours.variance, theirs.variance, "variance")
    tensorplay.manual_seed(0)
    draws = ours.sample((20000,))
    np.testing.assert_allclose(draws.mean(0).numpy(), theirs.mean.numpy(), atol=0.05)
    np.testing.assert_allclose(draws.var(0).numpy(), theirs.variance.numpy(), rtol=0.1)
    vectors = D.MixtureSameFamily(D.Categorical(weights[0]), D.Independent(D.Normal(loc, scale), 1))
    assert tuple(vectors.event_shape) == (2,) and tuple(vectors.sample((3,)).shape) == (3, 2)
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(tensorplay.ones(3)), D.Normal(loc, scale))


def test_weibull_mode_is_zero_for_shapes_up_to_one():
    """The density of k <= 1 is largest at 0 (torch's formula ((k - 1) / k)^(1/k) is not a mode there)."""
    weibull = D.Weibull(tensorplay.tensor([2.0, 1.0, 3.0]), tensorplay.tensor([0.5, 1.0, 2.0]))
    np.testing.assert_allclose(weibull.mode.numpy(), [0.0, 0.0, 3.0 * 0.5 ** 0.5], rtol=1e-6)



def test_standard_gamma_draws_and_their_implicit_gradient():
    """Draws follow Gamma(alpha, 1) (mean and variance alpha); their gradient is the implicit one
    (Figurnov et al.), whose average is d E[f(X)] / d alpha: 1 for f(x) = x, 2 alpha + 1 for x^2."""
    tensorplay.manual_seed(0)
    for alpha in (0.3, 1.0, 4.5):
        a = tensorplay.full((40000,), alpha, dtype=tensorplay.float64, requires_grad=True)
        x = tensorplay._standard_gamma(a)
        np.testing.assert_allclose([x.mean().item(), x.var().item()], [alpha, alpha], rtol=0.05)
        (gradient,) = tensorplay.autograd.grad(x.sum(), a, retain_graph=True)
        (square_gradient,) = tensorplay.autograd.grad((x * x).sum(), a)
        np.testing.assert_allclose(gradient.mean().item(), 1.0, rtol=0.03)
        np.testing.assert_allclose(square_gradient.mean().item(), 2 * alpha + 1, rtol=0.05)
    alpha, t_alpha = pair([0.5, 1.0, 3.0, 10.0, 100.0])
    sample, t_sample = pair([0.2, 1.3, 2.0, 12.0, 95.0])
    np.testing.assert_allclose(tensorplay._standard_gamma_grad(alpha, sample).numpy(),
                               torch._standard_gamma_grad(t_alpha, t_sample).numpy(), rtol=1e-3)



def test_generalized_pareto_matches_pytorch():
    """In float32: torch's GeneralizedPareto mixes a float32 zero into float64 parameters."""
    params = ([0.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.5, -0.25, 0.0])
    ours = D.GeneralizedPareto(*(tensorplay.tensor(p) for p in params))
    theirs = torch.distributions.GeneralizedPareto(*(torch.tensor(p) for p in params))
    x, y = pair([0.4, 2.0, 0.4], "float32")
    u, v = pair([0.4, 0.7, 0.2], "float32")
    for what, a, b in (("log_prob", ours.log_prob(x), theirs.log_prob(y)), ("cdf", ours.cdf(x), theirs.cdf(y)),
                       ("icdf", ours.icdf(u), theirs.icdf(v)), ("entropy", ours.entropy(), theirs.entropy()),
                       ("mean", ours.mean, theirs.mean), ("variance", ours.variance, theirs.variance),
                       ("mode", ours.mode, theirs.mode)):
        assert_same(a, b, what, rtol=1e-6)
    assert repr(ours.support).replace("tensorplay", "torch") == repr(theirs.support)
    tensorplay.manual_seed(0)
    draws = ours.rsample((20000,)).double().numpy()
    np.testing.assert_allclose(draws.mean(0)[1:], theirs.mean.numpy()[1:], rtol=0.03)
    assert bool(ours.support.check(tensorplay.from_numpy(draws.astype(np.float32))).all())



def test_low_rank_multivariate_normal_matches_the_full_one():
    """Its covariance, precision and Cholesky factor against torch's, and its density against
    MultivariateNormal of the same covariance."""
    loc, t_loc = pair([0.0, 1.0, -1.0])
    factor, t_factor = pair([[[1.0, 0.5], [0.0, 2.0], [-1.0, 0.3]], [[0.2, 0.1], [1.0, 0.0], [0.5, 0.5]]])
    diag, t_diag = pair([0.5, 1.0, 2.0])
    ours = D.LowRankMultivariateNormal(loc, factor, diag)
    theirs = torch.distributions.LowRankMultivariateNormal(t_loc, t_factor, t_diag)
    for what in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        assert_same(getattr(ours, what), getattr(theirs, what), what)
    full = D.MultivariateNormal(loc, covariance_matrix=ours.covariance_matrix)
    x, _ = pair([[0.5, -1.0, 0.0], [1.0, 1.0, 1.0]])
    np.testing.assert_allclose(ours.log_prob(x).numpy(), full.log_prob(x).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(loc, tensorplay.ones(2, 2, dtype=tensorplay.float64), diag)


def test_wishart_matches_pytorch():
    S, t_S = pair([[2.0, 0.5], [0.5, 1.0]])
    df, t_df = pair([4.0, 2.5])
    for given in ("covariance_matrix", "precision_matrix", "scale_tril"):
        matrix = {"covariance_matrix": S, "precision_matrix": tensorplay.linalg.inv(S),
                  "scale_tril": tensorplay.linalg.cholesky(S)}[given]
        ours = D.Wishart(df, **{given: matrix})
        theirs = torch.distributions.Wishart(t_df, **{given: torch.from_numpy(matrix.numpy())})
        for what in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
            assert_same(getattr(ours, what), getattr(theirs, what), what)
        assert_same(ours.entropy(), theirs.entropy(), "entropy")
        x, y = pair([[3.0, 1.0], [1.0, 2.0]])
        assert_same(ours.log_prob(x), theirs.log_prob(y), "log_prob")
    tensorplay.manual_seed(0)
    draws = D.Wishart(df[0], covariance_matrix=S).rsample((20000,))
    np.testing.assert_allclose(draws.mean(0).numpy(), 4.0 * S.numpy(), rtol=0.03)
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 1"):
        D.Wishart(tensorplay.tensor(0.5), covariance_matrix=S.float())


def test_lkj_cholesky_matches_pytorch():
    c, t_c = pair([0.5, 2.0])
    ours, theirs = D.LKJCholesky(3, c), torch.distributions.LKJCholesky(3, t_c)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    value = theirs.sample()
    assert_same(ours.log_prob(tensorplay.from_numpy(value.numpy())), theirs.log_prob(value), "log_prob", rtol=1e-12)
    tensorplay.manual_seed(0)
    draws = ours.sample((20000,))
    assert bool(ours.support.check(draws).all())
    # An off-diagonal correlation of LKJ(c) in d dims has variance 1 / (2 c + d - 1).
    correlations = (draws @ draws.mT)[..., 0, 1]
    np.testing.assert_allclose(correlations.var(0).numpy(), 1 / (2 * c.numpy() + 2), rtol=0.05)
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        D.LKJCholesky(1)

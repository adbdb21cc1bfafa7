"""tensorplay.distributions: PyTorch's probability distributions (torch.distributions).

Each distribution is written with tensorplay's ops, so its log_prob, entropy and reparameterised
samples (rsample) are differentiable with respect to its parameters. This first slice has the
framework (Distribution, ExponentialFamily, the constraints, the KL registry) and the distributions
listed in __all__."""

from tensorplay.distributions import constraints
from tensorplay.distributions.bernoulli import Bernoulli
from tensorplay.distributions.binomial import Binomial
from tensorplay.distributions.categorical import Categorical
from tensorplay.distributions.cauchy import Cauchy
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.exponential import Exponential
from tensorplay.distributions.geometric import Geometric
from tensorplay.distributions.independent import Independent
from tensorplay.distributions.kl import kl_divergence, register_kl
from tensorplay.distributions.laplace import Laplace
from tensorplay.distributions.multinomial import Multinomial
from tensorplay.distributions.multivariate_normal import MultivariateNormal
from tensorplay.distributions.normal import Normal
from tensorplay.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from tensorplay.distributions.poisson import Poisson
from tensorplay.distributions.uniform import Uniform

__all__ = ["Bernoulli", "Binomial", "Categorical", "Cauchy", "Distribution", "Exponential", "ExponentialFamily",
           "Geometric", "Independent", "Laplace", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "Uniform", "constraints", "kl_divergence", "register_kl"]

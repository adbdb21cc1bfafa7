"""tensorplay.distributions: PyTorch's probability distributions (torch.distributions).

Each distribution is written with tensorplay's ops, so its log_prob, entropy and reparameterised
samples (rsample) are differentiable with respect to its parameters. Here: the framework
(Distribution, ExponentialFamily, the constraints, the transforms with biject_to and transform_to,
TransformedDistribution, the KL registry) and the distributions in __all__."""

from tensorplay.distributions import constraints, transforms
from tensorplay.distributions.bernoulli import Bernoulli
from tensorplay.distributions.beta import Beta
from tensorplay.distributions.binomial import Binomial
from tensorplay.distributions.categorical import Categorical
from tensorplay.distributions.cauchy import Cauchy
from tensorplay.distributions.chi2 import Chi2
from tensorplay.distributions.constraint_registry import biject_to, transform_to
from tensorplay.distributions.continuous_bernoulli import ContinuousBernoulli
from tensorplay.distributions.dirichlet import Dirichlet
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.exponential import Exponential
from tensorplay.distributions.fishersnedecor import FisherSnedecor
from tensorplay.distributions.gamma import Gamma
from tensorplay.distributions.generalized_pareto import GeneralizedPareto
from tensorplay.distributions.geometric import Geometric
from tensorplay.distributions.gumbel import Gumbel
from tensorplay.distributions.half_cauchy import HalfCauchy
from tensorplay.distributions.half_normal import HalfNormal
from tensorplay.distributions.independent import Independent
from tensorplay.distributions.inverse_gamma import InverseGamma
from tensorplay.distributions.kumaraswamy import Kumaraswamy
from tensorplay.distributions.kl import kl_divergence, register_kl
from tensorplay.distributions.laplace import Laplace
from tensorplay.distributions.lkj_cholesky import LKJCholesky
from tensorplay.distributions.log_normal import LogNormal
from tensorplay.distributions.logistic_normal import LogisticNormal
from tensorplay.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from tensorplay.distributions.mixture_same_family import MixtureSameFamily
from tensorplay.distributions.multinomial import Multinomial
from tensorplay.distributions.multivariate_normal import MultivariateNormal
from tensorplay.distributions.negative_binomial import NegativeBinomial
from tensorplay.distributions.normal import Normal
from tensorplay.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from tensorplay.distributions.pareto import Pareto
from tensorplay.distributions.poisson import Poisson
from tensorplay.distributions.relaxed_bernoulli import RelaxedBernoulli
from tensorplay.distributions.relaxed_categorical import RelaxedOneHotCategorical
from tensorplay.distributions.studentT import StudentT
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import *  # noqa: F401,F403  (PyTorch exports the transforms here too)
from tensorplay.distributions.uniform import Uniform
from tensorplay.distributions.von_mises import VonMises
from tensorplay.distributions.weibull import Weibull
from tensorplay.distributions.wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence",
           "register_kl", "transform_to", "transforms"] + transforms.__all__

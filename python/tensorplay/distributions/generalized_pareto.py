"""The generalized Pareto distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of location `loc`, scale `scale` and shape `concentration`
    xi: survival function (1 + xi z)^(-1/xi) at z = (x - loc) / scale (exp(-z) at xi = 0), on
    [loc, loc - scale / xi] for xi < 0 and [loc, inf) otherwise."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        return self._expanded(new, batch_shape, "loc", "scale", "concentration")

    def _xi(self):
        """Where xi is (close to) 0, whose forms are the limits, and xi with 1 there."""
        zero = tensorplay.isclose(self.concentration, tensorplay.zeros_like(self.concentration))
        return zero, tensorplay.where(zero, 1.0, self.concentration)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        zero, xi = self._xi()
        upper = tensorplay.where(self.concentration < 0, self.loc - self.scale / xi, math.inf)
        return constraints.interval(self.loc, upper)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = tensorplay.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._xi()
        power = -(1 + 1 / xi) * tensorplay.log1p(xi * z)
        return tensorplay.where(zero, -z, power) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._xi()
        survival = tensorplay.where(zero, (-z).exp(), tensorplay.log1p(xi * z).mul(-1 / xi).exp())
        return 1 - survival

    def icdf(self, value):
        zero, xi = self._xi()
        log_survival = tensorplay.log1p(-value)
        z = tensorplay.where(zero, -log_survival, tensorplay.expm1(-xi * log_survival) / xi)
        return self.loc + self.scale * z

    @property
    def mean(self):
        xi = self.concentration
        return tensorplay.where(xi < 1, self.loc + self.scale / (1 - xi).clamp(min=1e-38), math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        xi = self.concentration
        variance = self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi))
        return tensorplay.where(xi < 0.5, variance, math.nan)

    def entropy(self):
        return self.scale.log() + self.concentration + 1

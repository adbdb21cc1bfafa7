"""The inverse gamma distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.gamma import Gamma
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-tensorplay.ones_like(base.rate)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        alpha = self.concentration
        return tensorplay.where(alpha > 1, self.rate / (alpha - 1).clamp(min=tensorplay.finfo(alpha.dtype).tiny),
                                math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        alpha = self.concentration
        variance = self.rate.pow(2) / ((alpha - 1).pow(2) * (alpha - 2))
        return tensorplay.where(alpha > 2, variance, math.inf)

    def entropy(self):
        alpha = self.concentration
        return alpha + self.rate.log() + tensorplay.lgamma(alpha) - (1 + alpha) * tensorplay.digamma(alpha)

"""The Pareto distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exponential import Exponential
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import AffineTransform, ExpTransform
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto (type I) distribution of minimum `scale` and tail index `alpha`: scale exp(E) for
    E ~ Exponential(alpha)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha), [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale, new.alpha = self.scale.expand(batch_shape), self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        # infinite for alpha <= 1
        alpha = self.alpha.clamp(min=1)
        return tensorplay.where(self.alpha > 1, alpha * self.scale / (alpha - 1), math.inf)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        # infinite for alpha <= 2
        alpha = self.alpha.clamp(min=2)
        return tensorplay.where(self.alpha > 2, self.scale.pow(2) * alpha / ((alpha - 1).pow(2) * (alpha - 2)),
                                math.inf)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())

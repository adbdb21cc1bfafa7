"""The Weibull distribution."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exponential import Exponential
from tensorplay.distributions.gumbel import _EULER_GAMMA
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import AffineTransform, PowerTransform
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution of scale `scale` and shape `concentration` k: scale E^(1/k) for
    E ~ Exponential(1)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(tensorplay.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale, new.concentration = self.scale.expand(batch_shape), self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * tensorplay.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        # scale ((k - 1) / k)^(1/k) for k > 1; for k <= 1 the density is largest at 0.
        k = self.concentration
        return self.scale * ((k - 1) / k).clamp(min=0).pow(self.concentration_reciprocal)

    @property
    def variance(self):
        first = tensorplay.lgamma(1 + self.concentration_reciprocal).exp()
        second = tensorplay.lgamma(1 + 2 * self.concentration_reciprocal).exp()
        return self.scale.pow(2) * (second - first.pow(2))

    def entropy(self):
        return _EULER_GAMMA * (1 - self.concentration_reciprocal) + (self.scale / self.concentration).log() + 1

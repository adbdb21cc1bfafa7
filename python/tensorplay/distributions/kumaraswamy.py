"""The Kumaraswamy distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.gumbel import _EULER_GAMMA
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import AffineTransform, PowerTransform
from tensorplay.distributions.uniform import Uniform
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    scaled = 1 + n / a
    return (b.log() + tensorplay.lgamma(scaled) + tensorplay.lgamma(b) - tensorplay.lgamma(scaled + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on (0, 1), density a b x^(a - 1) (1 - x^a)^(b - 1) for a =
    `concentration1`, b = `concentration0`: (1 - U^(1/b))^(1/a) for U uniform."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(tensorplay.full_like(self.concentration0, 0), tensorplay.full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a) where a, b >= 1 (not both 1); elsewhere the density has no
        # interior maximum.
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).clamp(min=0).pow(a.reciprocal())
        return tensorplay.where((a >= 1) & (b >= 1) & ((a > 1) | (b > 1)), mode, math.nan)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1).pow(2)

    def entropy(self):
        """(1 - 1/b) + (1 - 1/a) H_b - log(a b), H_b the b-th harmonic number (digamma(b + 1) + gamma)."""
        a, b = self.concentration1, self.concentration0
        harmonic = tensorplay.digamma(b + 1) + _EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - (a * b).log()

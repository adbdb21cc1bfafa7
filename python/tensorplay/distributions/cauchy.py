"""The Cauchy distribution."""

import math
import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of median `loc` and half-width `scale`: no mean or variance."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalars = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        return self._expanded(new, batch_shape, "loc", "scale")

    @property
    def mean(self):
        return tensorplay.full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return tensorplay.full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        unit = tensorplay.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + unit * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - tensorplay.log1p(z * z)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tensorplay.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tensorplay.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()

"""The Laplace distribution."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace (double exponential) distribution of location `loc` and scale `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalars = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        return self._expanded(new, batch_shape, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    def rsample(self, sample_shape=()):
        """The inverse CDF at a uniform draw u in (-1, 1): loc - scale sign(u) log(1 - |u|)."""
        shape = self._extended_shape(sample_shape)
        eps = tensorplay.finfo(self.loc.dtype).eps
        u = tensorplay.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * tensorplay.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return 0.5 - 0.5 * z.sign() * tensorplay.expm1(-z.abs())

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * tensorplay.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + (2 * self.scale).log()

"""The exponential distribution."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution of rate `rate` (mean 1 / rate)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, numbers.Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        return self._expanded(new, batch_shape, "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return tensorplay.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        unit = tensorplay.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return unit / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - tensorplay.exp(-self.rate * value)

    def icdf(self, value):
        return -tensorplay.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, eta):
        return -tensorplay.log(-eta)

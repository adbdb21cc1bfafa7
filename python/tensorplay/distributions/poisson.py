"""The Poisson distribution."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The number of events in a unit of time, for events at rate `rate`."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, numbers.Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        return self._expanded(new, batch_shape, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with tensorplay.no_grad():
            return tensorplay.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = tensorplay.broadcast_tensors(self.rate, value)
        return tensorplay.xlogy(value, rate) - rate - tensorplay.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()

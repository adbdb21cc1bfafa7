"""The gamma distribution."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Gamma"]


def _tiny(t):
    return tensorplay.finfo(t.dtype).tiny


class Gamma(ExponentialFamily):
    """The gamma distribution of shape `concentration` and inverse scale `rate`."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalars = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalars else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        return self._expanded(new, batch_shape, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """Gamma(concentration, 1) draws (differentiable in the concentration) over the rate."""
        shape = self._extended_shape(sample_shape)
        draws = tensorplay._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return draws.clamp(min=_tiny(draws))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = tensorplay.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        return (tensorplay.xlogy(self.concentration, self.rate) + tensorplay.xlogy(self.concentration - 1, value)
                - self.rate * value - tensorplay.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tensorplay.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        alpha = self.concentration
        return alpha - self.rate.log() + tensorplay.lgamma(alpha) + (1 - alpha) * tensorplay.digamma(alpha)

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return tensorplay.lgamma(x + 1) + (x + 1) * tensorplay.log(-y.reciprocal())

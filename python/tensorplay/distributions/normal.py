"""The normal distribution."""

import math
import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Normal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution of mean `loc` and standard deviation `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalars = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Normal, _instance)
        return self._expanded(new, batch_shape, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with tensorplay.no_grad():
            return tensorplay.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        noise = tensorplay.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + noise * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -0.5 * z * z - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # (the value's dtype first: float parameters meet a float64 value without rounding twice)
        return 0.5 * (1 + tensorplay.erf((value - self.loc) / self.scale / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * (tensorplay.erfinv(2 * value - 1) * math.sqrt(2))

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 / self.scale.pow(2)

    def _log_normalizer(self, eta1, eta2):
        return -eta1 * eta1 / (4 * eta2) + 0.5 * tensorplay.log(-math.pi / eta2)


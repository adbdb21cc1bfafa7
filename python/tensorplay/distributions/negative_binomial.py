"""The negative binomial distribution."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binary_parameters import BinaryParameters
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.gamma import Gamma

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParameters, Distribution):
    """The number of successes before `total_count` failures, in trials that each succeed with
    probability `probs` (or sigmoid(`logits`)): give exactly one of the two."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,) = self._take_parameters(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        return self._expanded(new, batch_shape, "probs", "logits", "total_count")


    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / tensorplay.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        """A Poisson draw of a gamma-distributed rate (the gamma-Poisson mixture)."""
        with tensorplay.no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
            return tensorplay.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = tensorplay.nn.functional.logsigmoid
        unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = (-tensorplay.lgamma(self.total_count + value) + tensorplay.lgamma(1.0 + value)
                         + tensorplay.lgamma(self.total_count))
        # No failures needed and none seen: probability 1.
        normalization = tensorplay.where(self.total_count + value == 0.0, 0.0, normalization)
        return unnormalized - normalization

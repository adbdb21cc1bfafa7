"""The relaxed Bernoulli (binary Concrete) distribution and its logit form."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binary_parameters import BinaryParameters
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import SigmoidTransform
from tensorplay.distributions.utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryParameters, Distribution):
    """The logit of a relaxed Bernoulli draw: (logit(U) + logits) / temperature, U uniform (Maddison,
    Mnih and Teh, 2017; Jang, Gu and Poole, 2017)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._take_parameters(probs, logits)
        scalar = isinstance(probs if probs is not None else logits, numbers.Number)
        super().__init__(() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        new.temperature = self.temperature
        return self._expanded(new, batch_shape, "probs", "logits")

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(tensorplay.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - tensorplay.log1p(-u) + probs.log() - tensorplay.log1p(-probs)) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * tensorplay.log1p(diff.exp())


class RelaxedBernoulli(TransformedDistribution):
    """A differentiable stand-in for a Bernoulli draw: sigmoid of LogitRelaxedBernoulli's, in (0, 1),
    approaching {0, 1} as temperature goes to 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs

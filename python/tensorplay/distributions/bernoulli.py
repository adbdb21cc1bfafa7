"""The Bernoulli distribution."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binary_parameters import BinaryParameters
from tensorplay.distributions.exp_family import ExponentialFamily

__all__ = ["Bernoulli"]


class Bernoulli(BinaryParameters, ExponentialFamily):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0: give exactly one of the two."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._take_parameters(probs, logits)
        scalar = isinstance(probs if probs is not None else logits, numbers.Number)
        super().__init__(() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        return self._expanded(new, batch_shape, "probs", "logits")

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return tensorplay.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with tensorplay.no_grad():
            return tensorplay.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = tensorplay.broadcast_tensors(self.logits, value)
        return -tensorplay.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return tensorplay.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = tensorplay.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (tensorplay.logit(self.probs),)

    def _log_normalizer(self, x):
        return tensorplay.log1p(tensorplay.exp(x))

"""The geometric distribution."""

import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binary_parameters import BinaryParameters
from tensorplay.distributions.distribution import Distribution

__all__ = ["Geometric"]


class Geometric(BinaryParameters, Distribution):
    """The number of failures before the first success of independent trials that each succeed with
    probability `probs` (or sigmoid(`logits`)): give exactly one of the two."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._take_parameters(probs, logits)
        value = self._param
        scalar = isinstance(probs if probs is not None else logits, numbers.Number)
        super().__init__(() if scalar else value.size(), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((value > 0).all()):
            # (a trial that never succeeds has no number of failures before success)
            raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of "
                             f"distribution {self!r} to be positive but found invalid values:\n{value[value <= 0]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        return self._expanded(new, batch_shape, "probs", "logits")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return tensorplay.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """The inverse CDF at a uniform draw: floor(log u / log(1 - p))."""
        shape = self._extended_shape(sample_shape)
        tiny = tensorplay.finfo(self.probs.dtype).tiny
        with tensorplay.no_grad():
            u = tensorplay.empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / tensorplay.log1p(-self.probs)).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = tensorplay.broadcast_tensors(value, self.probs)
        # value log(1 - p) is 0 for value 0, also where p is 1.
        failures = tensorplay.where(value == 0, 0.0, value * tensorplay.log1p(-probs))
        return failures + probs.log()

    def entropy(self):
        return tensorplay.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                                         reduction="none") / self.probs

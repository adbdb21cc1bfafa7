"""The binomial distribution."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binary_parameters import BinaryParameters
from tensorplay.distributions.distribution import Distribution

__all__ = ["Binomial"]


class Binomial(BinaryParameters, Distribution):
    """The number of successes in `total_count` independent trials that each succeed with probability
    `probs` (or sigmoid(`logits`)): give exactly one of the two."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,) = self._take_parameters(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        return self._expanded(new, batch_shape, "probs", "logits", "total_count")

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)


    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with tensorplay.no_grad():
            return tensorplay.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        """log C(n, k) + k log p + (n - k) log(1 - p), the last two as k logit - n softplus(logit) (exact
        at p near 0 and 1, where log(1 - p) would lose digits)."""
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_choose = tensorplay.lgamma(n + 1) - tensorplay.lgamma(value + 1) - tensorplay.lgamma(n - value + 1)
        logits = self.logits
        # k logit - n softplus(logit), written so that an infinite logit (p of 0 or 1) meets k = 0 or k = n exactly.
        successes = tensorplay.where(value == 0, 0.0, value * logits.clamp(max=0)) - \
            tensorplay.where(value == n, 0.0, (n - value) * logits.clamp(min=0))
        return log_choose + successes - n * tensorplay.log1p(tensorplay.exp(-logits.abs()))

    def entropy(self):
        counts = self.total_count.unique()
        if counts.numel() > 1:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_pmf = self.log_prob(self.enumerate_support(False))
        return -(log_pmf.exp() * log_pmf).sum(0)

    def enumerate_support(self, expand=True):
        counts = self.total_count.unique()
        if counts.numel() > 1:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = tensorplay.arange(1 + int(counts.item()), dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

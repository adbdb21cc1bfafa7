"""The multinomial distribution."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binomial import Binomial
from tensorplay.distributions.categorical import Categorical
from tensorplay.distributions.distribution import Distribution

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """The counts of each of K categories among `total_count` independent draws of Categorical(probs
    or logits)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self._categorical.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """total_count categorical draws, counted per category."""
        sample_shape = tensorplay.Size(sample_shape)
        draws = self._categorical.sample(tensorplay.Size((self.total_count,)) + sample_shape)
        one_hot = tensorplay.nn.functional.one_hot(draws, self._categorical.param_shape[-1])
        return one_hot.sum(0).to(self.probs.dtype)

    def log_prob(self, value):
        """log n! - sum_i log x_i! + sum_i x_i log p_i, where a category of probability 0 drawn 0
        times adds nothing."""
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        logits = tensorplay.where((value == 0) & (logits == float("-inf")), 0.0, logits)
        log_factorials = tensorplay.lgamma(value.sum(-1) + 1) - tensorplay.lgamma(value + 1).sum(-1)
        return log_factorials + (value * logits).sum(-1)

    def entropy(self):
        """-log n! - n sum_i p_i log p_i + sum_i E[log X_i!], X_i ~ Binomial(n, p_i) (its marginal)."""
        n = tensorplay.tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        counts = self._binomial.enumerate_support(expand=False)  # [n + 1, 1, ...]
        counts = counts.reshape((-1,) + (1,) * (self.probs.dim()))
        binomial_pmf = self._binomial.log_prob(counts).exp()
        expected_log_factorials = (binomial_pmf * tensorplay.lgamma(counts + 1)).sum([0, -1])
        logits = self.logits.clamp(min=tensorplay.finfo(self.logits.dtype).min)
        return -tensorplay.lgamma(n + 1) - n * (self.probs * logits).sum(-1) + expected_log_factorials

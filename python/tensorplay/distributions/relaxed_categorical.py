"""The relaxed one-hot categorical (Concrete, Gumbel-softmax) distribution."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.categorical import Categorical
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.transformed_distribution import TransformedDistribution
from tensorplay.distributions.transforms import ExpTransform
from tensorplay.distributions.utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The logarithm of a relaxed one-hot draw: log_softmax((logits + Gumbel noise) / temperature)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, tensorplay.Size(batch_shape))

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(tensorplay.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        scores = (self.logits + -(-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        """The Concrete density of the log-probabilities value, with its normaliser
        log (K - 1)! + (K - 1) log temperature."""
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = tensorplay.broadcast_tensors(self.logits, value)
        log_scale = tensorplay.full_like(self.temperature, float(k)).lgamma() + (k - 1) * self.temperature.log()
        score = logits - value * self.temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A differentiable stand-in for a one-hot categorical draw: a point of the simplex near a
    vertex, nearer as temperature goes to 0 (exp of ExpRelaxedCategorical's draws)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedOneHotCategorical, _instance))

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs

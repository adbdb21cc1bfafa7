"""The Dirichlet distribution."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The distribution over the simplex of concentrations `concentration` (its last dim): gamma
    draws of those concentrations, normalised to sum to 1."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape=()):
        """Gamma draws (differentiable in their concentrations) over their sum."""
        shape = self._extended_shape(sample_shape)
        gammas = tensorplay._standard_gamma(self.concentration.expand(shape))
        draws = gammas / gammas.sum(-1, keepdim=True)
        info = tensorplay.finfo(draws.dtype)
        return draws.clamp(min=info.tiny, max=1 - info.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (tensorplay.xlogy(c - 1.0, value).sum(-1) + tensorplay.lgamma(c.sum(-1))
                - tensorplay.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(c - 1) / sum(c - 1) over the concentrations above 1; where all are below 1, the vertex
        PyTorch picks (the first: 0 / 0 ties at NaN)."""
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, keepdim=True)
        all_below_one = (self.concentration < 1).all(-1, keepdim=True)
        vertex = tensorplay.nn.functional.one_hot(mode.argmax(-1), excess.size(-1)).to(mode.dtype)
        return tensorplay.where(all_below_one, vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        total = c.sum(-1)
        return (tensorplay.lgamma(c).sum(-1) - tensorplay.lgamma(total) - (k - total) * tensorplay.digamma(total)
                - ((c - 1.0) * tensorplay.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return tensorplay.lgamma(x).sum(-1) - tensorplay.lgamma(x.sum(-1))

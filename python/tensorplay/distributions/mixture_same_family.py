"""MixtureSameFamily: a mixture of distributions of one family, weighted by a categorical."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.categorical import Categorical
from tensorplay.distributions.distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Draw a component k from mixture_distribution (a Categorical over K), then a value from the
    k-th of component_distribution's batch (whose rightmost batch dim holds the K components)."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape)[:-1]
        for m, c in zip(reversed(mixture_batch), reversed(component_batch)):
            if m != 1 and c != 1 and m != c:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({component_batch})")
        k = mixture_distribution.logits.shape[-1]
        if component_distribution.batch_shape[-1] != k:
            raise ValueError(f"`mixture_distribution component` ({k}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({component_distribution.batch_shape[-1]})")
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        return self._expanded(new, batch_shape)

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _weights(self):
        """The mixture's probabilities, shaped to broadcast against the components' moments."""
        return self._mixture_distribution.probs.reshape(
            tuple(self._mixture_distribution.probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        """The law of total variance: E[Var(X | k)] + Var(E[X | k])."""
        weights = self._weights()
        component_mean = self._component_distribution.mean
        mean = (weights * component_mean).sum(-1 - self._event_ndims, keepdim=True)
        within = (weights * self._component_distribution.variance).sum(-1 - self._event_ndims)
        between = (weights * (component_mean - mean).pow(2)).sum(-1 - self._event_ndims)
        return within + between

    def _pad(self, value):
        """value with a dim for the components, before its event dims."""
        return value.unsqueeze(-1 - self._event_ndims)

    def cdf(self, value):
        value = self._pad(value)
        return (self._component_distribution.cdf(value) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        component_log_prob = self._component_distribution.log_prob(self._pad(value))
        log_weights = tensorplay.log_softmax(self._mixture_distribution.logits, dim=-1)
        return (component_log_prob + log_weights).logsumexp(-1)

    def sample(self, sample_shape=()):
        sample_shape = tensorplay.Size(sample_shape)
        with tensorplay.no_grad():
            choices = self._mixture_distribution.sample(sample_shape)  # [sample, batch]
            draws = self._component_distribution.sample(sample_shape)  # [sample, batch, K, event]
            index = choices.reshape(tuple(choices.shape) + (1,) * (self._event_ndims + 1))
            index = index.expand(tuple(choices.shape) + (1,) + tuple(self.event_shape))
            return draws.gather(len(sample_shape) + len(self.batch_shape), index).squeeze(
                len(sample_shape) + len(self.batch_shape))

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n  {self._mixture_distribution!r},\n  "
                f"{self._component_distribution!r})")

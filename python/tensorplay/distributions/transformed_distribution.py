"""TransformedDistribution: a base distribution pushed through a sequence of transforms."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.independent import Independent
from tensorplay.distributions.transforms import ComposeTransform, Transform, _sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The law of Y = t_n(... t_1(X)) for X ~ base_distribution: log p(y) is the base's log-density
    at the inverse image less each transform's log |det Jacobian|. The event dims grow where a
    transform needs more of them than the base's events have (its batch dims are reinterpreted)."""

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {chain.domain.event_dim}, "
                             f"but got {base_shape}.")
        forward_shape = tuple(chain.forward_shape(base_shape))
        expanded_base_shape = tuple(chain.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            batch = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(batch)
        reinterpreted = chain.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with tensorplay.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob, y = 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _oriented(self, probability):
        """probability as seen through the transforms' direction: unchanged when their composition
        increases, 1 - probability where it decreases (a CDF's value at the mirrored point)."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return probability
        return sign * (probability - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._oriented(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._oriented(value))
        for t in self.transforms:
            value = t(value)
        return value

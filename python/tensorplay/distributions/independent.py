"""Independent: a distribution's rightmost batch dims reinterpreted as event dims."""

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution

__all__ = ["Independent"]


class Independent(Distribution):
    """base_distribution with its rightmost reinterpreted_batch_ndims batch dims made part of the
    event: a Normal over [3, 2] as Independent(..., 1) is a batch of 3 distributions over vectors of
    2, whose log_prob sums the 2."""

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new.base_dist = self.base_dist.expand(tuple(batch_shape) +
                                              tuple(self.event_shape[:self.reinterpreted_batch_ndims]))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return self._expanded(new, batch_shape)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        support = self.base_dist.support
        return constraints.independent(support, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims \
            else support

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def _sum_event(self, value):
        """value summed over the reinterpreted dims (the rightmost of its batch dims)."""
        n = self.reinterpreted_batch_ndims
        return value.reshape(*value.shape[:value.dim() - n], -1).sum(-1) if n else value

    def log_prob(self, value):
        return self._sum_event(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_event(self.base_dist.entropy())

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_dist!r}, {self.reinterpreted_batch_ndims})"

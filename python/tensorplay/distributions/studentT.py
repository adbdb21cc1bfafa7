"""Student's t distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.chi2 import Chi2
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`: loc + scale X /
    sqrt(V / df) for X standard normal and V ~ Chi2(df)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new.df, new.loc, new.scale = (t.expand(batch_shape) for t in (self.df, self.loc, self.scale))
        new._chi2 = self._chi2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return tensorplay.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return tensorplay.where(df > 2, finite, tensorplay.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = tensorplay.randn(shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (v / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        half_df = 0.5 * self.df
        normalizer = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                      + tensorplay.lgamma(half_df) - tensorplay.lgamma(half_df + 0.5))
        return -0.5 * (self.df + 1.0) * tensorplay.log1p(y * y / self.df) - normalizer

    def entropy(self):
        half_df = 0.5 * self.df
        log_beta = tensorplay.lgamma(half_df) + math.lgamma(0.5) - tensorplay.lgamma(half_df + 0.5)
        return (self.scale.log() + (half_df + 0.5) * (tensorplay.digamma(half_df + 0.5) - tensorplay.digamma(half_df))
                + 0.5 * self.df.log() + log_beta)

"""The Fisher-Snedecor (F) distribution."""

import math
import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.gamma import Gamma
from tensorplay.distributions.utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The ratio (V1 / df1) / (V2 / df2) of independent chi-squared draws V1, V2 of df1 and df2
    degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        # V / df ~ Gamma(df / 2, df / 2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1 * 0.5)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2 * 0.5)
        scalars = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if scalars else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new.df1, new.df2 = self.df1.expand(batch_shape), self.df2.expand(batch_shape)
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        df2 = self.df2
        return tensorplay.where(df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return tensorplay.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        variance = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return tensorplay.where(df2 > 4, variance, math.nan)

    def rsample(self, sample_shape=()):
        tiny = tensorplay.finfo(self.df1.dtype).tiny
        numerator = self._gamma1.rsample(sample_shape)
        denominator = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (numerator / denominator).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2, ratio = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        log_beta = tensorplay.lgamma(half1 + half2) - tensorplay.lgamma(half1) - tensorplay.lgamma(half2)
        return log_beta + half1 * ratio.log() + (half1 - 1) * value.log() - (half1 + half2) * tensorplay.log1p(
            ratio * value)

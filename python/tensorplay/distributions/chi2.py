"""The chi-squared distribution."""

from tensorplay.distributions import constraints
from tensorplay.distributions.gamma import Gamma
from tensorplay.distributions.utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The sum of the squares of `df` standard normals: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2

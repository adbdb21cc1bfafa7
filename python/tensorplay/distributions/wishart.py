"""The Wishart distribution."""

import math
import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.multivariate_normal import _precision_to_scale_tril
from tensorplay.distributions.utils import lazy_property

__all__ = ["Wishart"]


def _multivariate_digamma(x, p):
    """sum_{i < p} digamma(x - i / 2)."""
    return sum(tensorplay.digamma(x - i / 2) for i in range(p))


class Wishart(Distribution):
    """The law of sum_{k <= df} z_k z_k^T for z_k ~ Normal(0, S), S given by exactly one of its
    covariance matrix, precision matrix or lower Cholesky factor `scale_tril`; df (real) > p - 1."""

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        p = matrix.size(-1)
        if isinstance(df, numbers.Number):
            batch_shape = matrix.shape[:-2]
            self.df = tensorplay.tensor(df, dtype=matrix.dtype, device=matrix.device)
        else:
            batch_shape = tensorplay.broadcast_shapes(matrix.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch_shape, p, p)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch_shape, p, p)
            self._unbroadcasted_scale_tril = tensorplay.linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = precision_matrix.expand(*batch_shape, p, p)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self.arg_constraints = dict(Wishart.arg_constraints, df=constraints.greater_than(p - 1))
        super().__init__(batch_shape, (p, p), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        p = self._event_shape[-1]
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(batch_shape)
        new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, p, p))
        return self._expanded(new, batch_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return tensorplay.cholesky_inverse(self._unbroadcasted_scale_tril).expand(*self._batch_shape,
                                                                                   *self._event_shape)

    def _df(self):
        return self.df.reshape(tuple(self.df.shape) + (1, 1))

    @property
    def mean(self):
        return self._df() * self.covariance_matrix

    @property
    def mode(self):
        p = self._event_shape[-1]
        mode = (self._df() - p - 1) * self.covariance_matrix
        return tensorplay.where(self._df() > p + 1, mode, math.nan)

    @property
    def variance(self):
        S = self.covariance_matrix
        diagonal = S.diagonal(dim1=-2, dim2=-1)
        return self._df() * (S.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def rsample(self, sample_shape=()):
        """Bartlett's decomposition: S's factor times a lower-triangular A with sqrt(chi2(df - i)) on its
        diagonal and standard normals below, squared: L A A^T L^T."""
        shape = self._extended_shape(sample_shape)
        p = self._event_shape[-1]
        df = self.df.expand(tuple(shape[:-2]))
        dtype, device = self._unbroadcasted_scale_tril.dtype, self._unbroadcasted_scale_tril.device
        offsets = tensorplay.arange(p, dtype=dtype, device=device)
        chi2 = 2 * tensorplay._standard_gamma((df.unsqueeze(-1) - offsets) / 2)
        noise = tensorplay.randn(shape, dtype=dtype, device=device).tril(-1)
        A = noise + tensorplay.diag_embed(chi2.sqrt())
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.mT

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._event_shape[-1]
        df = self.df
        log_det_S = 2 * self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        log_det_X = 2 * tensorplay.linalg.cholesky(value).diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = (tensorplay.cholesky_solve(value, self._unbroadcasted_scale_tril)).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (0.5 * (df - p - 1) * log_det_X - 0.5 * trace - 0.5 * df * p * math.log(2) - 0.5 * df * log_det_S
                - tensorplay.mvlgamma(0.5 * df, p))

    def entropy(self):
        p = self._event_shape[-1]
        df = self.df
        log_det_S = 2 * self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (0.5 * (p + 1) * log_det_S + 0.5 * p * (p + 1) * math.log(2) + tensorplay.mvlgamma(0.5 * df, p)
                - 0.5 * (df - p - 1) * _multivariate_digamma(0.5 * df, p) + 0.5 * df * p)

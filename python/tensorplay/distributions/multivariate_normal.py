"""The multivariate normal distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(scale_tril, x):
    """|L^-1 x|^2 over the last dim, L lower triangular (broadcast over the batch)."""
    shape = tensorplay.broadcast_shapes(scale_tril.shape[:-1], x.shape)
    L = scale_tril.expand(*shape, scale_tril.size(-1))
    z = tensorplay.linalg.solve_triangular(L, x.expand(shape).unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """The normal distribution over vectors of mean `loc`, given by exactly one of its covariance
    matrix, its precision matrix (the covariance's inverse) or `scale_tril` (the covariance's
    lower-triangular Cholesky factor L, covariance = L L^T)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0]
        if matrix.dim() < 2:
            name = ("covariance_matrix" if covariance_matrix is not None else
                    "precision_matrix" if precision_matrix is not None else "scale_tril")
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch "
                             "dimensions")
        batch_shape = tensorplay.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        n = loc.size(-1)
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch_shape, n, n)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch_shape, n, n)
        else:
            self.precision_matrix = precision_matrix.expand(*batch_shape, n, n)
        self.loc = loc.expand(*batch_shape, n)
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        # The Cholesky factor of the unbroadcast matrix: the one factorisation everything uses.
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tensorplay.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        n = self.event_shape[0]
        new.loc = self.loc.expand(*batch_shape, n)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, n, n))
        return self._expanded(new, batch_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return tensorplay.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            *self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        noise = tensorplay.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ noise.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self._event_shape[0]
        distance = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + distance) - self._half_log_det()

    def entropy(self):
        n = self._event_shape[0]
        entropy = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return entropy.expand(self._batch_shape) if len(self._batch_shape) else entropy


def _precision_to_scale_tril(P):
    """The Cholesky factor of P^-1 without inverting P: with P's flipped Cholesky factor, P^-1 =
    L L^T for L = the flipped inverse transpose (a triangular solve against the identity)."""
    flipped = tensorplay.linalg.cholesky(tensorplay.flip(P, (-2, -1)))
    L_inv = tensorplay.flip(flipped, (-2, -1)).mT
    identity = tensorplay.eye(P.size(-1), dtype=P.dtype, device=P.device)
    return tensorplay.linalg.solve_triangular(L_inv, identity, upper=False)

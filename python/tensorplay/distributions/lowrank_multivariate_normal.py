"""The multivariate normal distribution with a low-rank-plus-diagonal covariance."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(Distribution):
    """The normal distribution over vectors of mean `loc` and covariance W W^T + diag(D), for W =
    `cov_factor` (n x rank) and D = `cov_diag`: its density, by the Woodbury identity and the
    matrix determinant lemma, costs a rank x rank factorisation (the capacitance I + W^T D^-1 W),
    not an n x n one."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {tuple(event_shape)}")
        batch_shape = tensorplay.broadcast_shapes(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1])
        n, rank = event_shape[0], cov_factor.size(-1)
        self.loc = loc.expand(*batch_shape, n)
        self.cov_factor = cov_factor.expand(*batch_shape, n, rank)
        self.cov_diag = cov_diag.expand(*batch_shape, n)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance_cholesky(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @staticmethod
    def _capacitance_cholesky(W, D):
        """The Cholesky factor of I + W^T D^-1 W."""
        scaled = W / D.sqrt().unsqueeze(-1)
        capacitance = scaled.mT @ scaled
        identity = tensorplay.eye(W.size(-1), dtype=W.dtype, device=W.device)
        return tensorplay.linalg.cholesky(capacitance + identity)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        n, rank = self.event_shape[0], self.cov_factor.size(-1)
        new.loc = self.loc.expand(*batch_shape, n)
        new.cov_factor = self.cov_factor.expand(*batch_shape, n, rank)
        new.cov_diag = self.cov_diag.expand(*batch_shape, n)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self._event_shape[0]
        return (W @ W.mT + tensorplay.diag_embed(D)).expand(*self._batch_shape, n, n)

    @lazy_property
    def scale_tril(self):
        return tensorplay.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        """D^-1 - D^-1 W C^-1 W^T D^-1 (Woodbury), C the capacitance."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        inverse_diag = D.reciprocal()
        half = tensorplay.linalg.solve_triangular(self._capacitance_tril, (W * inverse_diag.unsqueeze(-1)).mT,
                                                  upper=False)
        n = self._event_shape[0]
        return (tensorplay.diag_embed(inverse_diag) - half.mT @ half).expand(*self._batch_shape, n, n)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rank = self._unbroadcasted_cov_factor.size(-1)
        factor_noise = tensorplay.randn(tuple(shape[:-1]) + (rank,), dtype=self.loc.dtype, device=self.loc.device)
        diag_noise = tensorplay.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (self._unbroadcasted_cov_factor @ factor_noise.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * diag_noise)

    def _log_det(self):
        """log det(W W^T + D) = log det C + sum log D (the matrix determinant lemma)."""
        return (2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                + self._unbroadcasted_cov_diag.log().sum(-1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        # x^T S^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2 (Woodbury)
        scaled = diff / D
        projected = (W.mT @ scaled.unsqueeze(-1))
        shape = tensorplay.broadcast_shapes(self._capacitance_tril.shape[:-2], projected.shape[:-2])
        rank = W.size(-1)
        solved = tensorplay.linalg.solve_triangular(self._capacitance_tril.expand(*shape, rank, rank),
                                                    projected.expand(*shape, rank, 1), upper=False)
        mahalanobis = (diff * scaled).sum(-1) - solved.squeeze(-1).pow(2).sum(-1)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        n = self._event_shape[0]
        entropy = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return entropy.expand(self._batch_shape) if len(self._batch_shape) else entropy

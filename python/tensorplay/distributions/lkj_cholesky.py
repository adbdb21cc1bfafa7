"""The LKJ distribution over Cholesky factors of correlation matrices."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.beta import Beta
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The Lewandowski-Kurowicka-Joe distribution of correlation matrices M of size dim, density
    proportional to det(M)^(concentration - 1), over their lower Cholesky factors L (M = L L^T).
    Drawn by the onion method: row i of L is a uniform direction in its first i coordinates scaled
    by the square root of a Beta(i / 2, concentration + (dim - 2 - i) / 2) draw, completed to unit
    length by its diagonal."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # The Beta of each row: row 0 has none (it is e_0), row i > 0 Beta(i / 2, c + (dim - 2 - i) / 2).
        offset = tensorplay.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = tensorplay.cat([offset.new_zeros((1,)), offset])
        marginal = self.concentration + 0.5 * (self.dim - 2)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tensorplay.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return self._expanded(new, batch_shape)

    def sample(self, sample_shape=()):
        with tensorplay.no_grad():
            radius_squared = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            directions = tensorplay.randn(shape, dtype=radius_squared.dtype, device=radius_squared.device).tril(-1)
            directions = directions / directions.norm(dim=-1, keepdim=True).clamp(min=tensorplay.finfo(
                directions.dtype).tiny)
            first_row = tensorplay.arange(self.dim, device=directions.device) == 0
            directions = tensorplay.where(first_row.unsqueeze(-1), 0.0, directions)
            w = radius_squared.sqrt() * directions
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tensorplay.finfo(w.dtype).tiny).sqrt()
            return w + tensorplay.diag_embed(diagonal)

    def log_prob(self, value):
        """sum_i (2 (c - 1) + dim - i) log L_ii over rows i = 2 .. dim (1-based), less the log of the
        normaliser: (dim - 1) log(pi) / 2 + mvlgamma(c + (dim - 1) / 2 - 1/2, dim - 1)
        - (dim - 1) lgamma(c + (dim - 1) / 2)."""
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = tensorplay.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        exponents = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (exponents * diagonal.log()).sum(-1)
        m = self.dim - 1
        alpha = self.concentration + 0.5 * m
        normalizer = 0.5 * m * math.log(math.pi) + tensorplay.mvlgamma(alpha - 0.5, m) - tensorplay.lgamma(alpha) * m
        return unnormalized - normalizer

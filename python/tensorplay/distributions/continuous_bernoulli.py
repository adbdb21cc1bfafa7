"""The continuous Bernoulli distribution."""

import math
import numbers

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.binary_parameters import BinaryParameters
from tensorplay.distributions.exp_family import ExponentialFamily
from tensorplay.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryParameters, ExponentialFamily):
    """The distribution on [0, 1] of density C(lambda) lambda^x (1 - lambda)^(1 - x), lambda = `probs`
    (or sigmoid(`logits`)), C normalising (Loaiza-Ganem and Cunningham, 2019). Its closed forms
    divide by 1 - 2 lambda: within `lims` of 1/2 they are replaced by their Taylor expansions."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        self._take_parameters(probs, logits)
        if probs is not None:
            # Checked before the clamp below would hide a bad value, when validate_args is given (as
            # PyTorch does; with the default, the clamped value is what validation sees).
            if validate_args is not None and not bool(constraints.unit_interval.check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        self._lims = lims
        scalar = isinstance(probs if probs is not None else logits, numbers.Number)
        super().__init__(() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        return self._expanded(new, batch_shape, "probs", "logits")

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside(self):
        """Where lambda is far enough from 1/2 for the closed forms."""
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _safe_probs(self):
        """lambda where the closed forms hold, a harmless stand-in elsewhere (their value is replaced)."""
        return tensorplay.where(self._outside(), self.probs, self._lims[0] * tensorplay.ones_like(self.probs))

    def _log_normalizer_of_probs(self):
        """log C(lambda) = log(2 atanh(1 - 2 lambda) / (1 - 2 lambda)); near 1/2, with t = lambda - 1/2,
        log 2 + 4 t^2 / 3 + 104 t^4 / 45."""
        p = self._safe_probs()
        # 2 atanh(1 - 2p) = log(1 - p) - log(p), taken as |.| over |1 - 2p| (the two have one sign).
        exact = (tensorplay.log1p(-p) - p.log()).abs().log() - (1 - 2 * p).abs().log()
        t2 = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * t2) * t2
        return tensorplay.where(self._outside(), exact, taylor)

    @property
    def mean(self):
        p = self._safe_probs()
        exact = p / (2 * p - 1) + 1 / (tensorplay.log1p(-p) - p.log())
        s = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * s.pow(2)) * s
        return tensorplay.where(self._outside(), exact, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._safe_probs()
        exact = p * (p - 1) / (1 - 2 * p).pow(2) + 1 / (tensorplay.log1p(-p) - p.log()).pow(2)
        t2 = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * t2) * t2
        return tensorplay.where(self._outside(), exact, taylor)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = tensorplay.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def sample(self, sample_shape=()):
        with tensorplay.no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = tensorplay.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._log_normalizer_of_probs()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._safe_probs()
        exact = (p.pow(value) * (1 - p).pow(1 - value) + p - 1) / (2 * p - 1)
        unclipped = tensorplay.where(self._outside(), exact, value)
        return tensorplay.where(value <= 0, 0.0, tensorplay.where(value >= 1, 1.0, unclipped))

    def icdf(self, value):
        p = self._safe_probs()
        exact = (tensorplay.log1p(-p + value * (2 * p - 1)) - tensorplay.log1p(-p)) / (p.log() - tensorplay.log1p(-p))
        return tensorplay.where(self._outside(), exact, value)

    def entropy(self):
        log_q, log_p = tensorplay.log1p(-self.probs), self.probs.log()
        return self.mean * (log_q - log_p) - self._log_normalizer_of_probs() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the logit x: log((e^x - 1) / x), near 0 log 1 + x/2 + x^2/24 - x^4/2880."""
        outside = (x <= -0.001) | (x >= 0.001)
        safe = tensorplay.where(outside, x, -0.001 * tensorplay.ones_like(x))
        exact = (safe.exp() - 1.0).abs().log() - safe.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return tensorplay.where(outside, exact, taylor)

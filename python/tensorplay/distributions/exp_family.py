"""ExponentialFamily: distributions whose density is h(x) exp(<t(x), theta> - A(theta)), for which
the entropy and the KL divergence between two members follow from the log-normalizer A alone."""

import tensorplay
from tensorplay.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A member subclass gives `_natural_params` (theta), `_log_normalizer(*theta)` (A) and
    `_mean_carrier_measure` (E[log h(X)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = A(theta) - <theta, grad A(theta)> - E[log h(X)]: grad A(theta) is the mean of t(X)."""
        theta = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*theta)
        gradients = tensorplay.autograd.grad(log_normalizer.sum(), theta, create_graph=True)
        entropy = log_normalizer - self._mean_carrier_measure
        for t, g in zip(theta, gradients):
            entropy = entropy - t * g
        return entropy

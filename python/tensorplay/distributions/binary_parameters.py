"""The parameters of the distributions of binary trials: the probability of success `probs` or its
log-odds `logits`, exactly one of them given, the other derived when first asked for."""

from tensorplay.distributions.utils import (broadcast_all, lazy_property, logits_to_probs, probs_or_logits,
                                            probs_to_logits)

__all__ = ["BinaryParameters"]


class BinaryParameters:
    """A mixin of Distribution subclasses (Bernoulli, Binomial, Geometric, ...)."""

    def _take_parameters(self, probs, logits, *others):
        """Sets probs or logits (the one given), broadcast with the other parameters, which are returned."""
        name, value = probs_or_logits(probs, logits)
        value, *others = broadcast_all(value, *others)
        setattr(self, name, value)
        return others

    @property
    def _param(self):
        """The parameter given (its shape, dtype and device are the distribution's)."""
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

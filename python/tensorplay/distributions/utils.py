"""Helpers of the distributions: parameters broadcast into tensors, and probabilities and logits
converted into each other."""

import functools
import numbers

import tensorplay

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_or_logits", "probs_to_logits"]


def broadcast_all(*values):
    """The values broadcast to one shape, as tensors: numbers become tensors of the first tensor's
    dtype and device (of the default dtype when all are numbers)."""
    tensors = [v for v in values if isinstance(v, tensorplay.Tensor)]
    for v in values:
        if not isinstance(v, (tensorplay.Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    if not tensors:
        return tuple(tensorplay.tensor(float(v), dtype=tensorplay.get_default_dtype()) for v in values)
    like = tensors[0]
    values = [v if isinstance(v, tensorplay.Tensor) else tensorplay.tensor(v, dtype=like.dtype, device=like.device)
              for v in values]
    return tuple(tensorplay.broadcast_tensors(*values))


def probs_or_logits(probs, logits):
    """("probs", probs) or ("logits", logits): the one given, of a distribution that takes exactly one."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


def clamp_probs(probs):
    """probs kept within [eps, 1 - eps] of their dtype, so that their logarithms stay finite."""
    eps = tensorplay.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for a binary event, softmax over the last dim otherwise."""
    return tensorplay.sigmoid(logits) if is_binary else tensorplay.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped off 0 and 1): log(p / (1 - p)) for a binary event,
    log p otherwise."""
    p = clamp_probs(probs)
    return tensorplay.log(p) - tensorplay.log1p(-p) if is_binary else tensorplay.log(p)


class lazy_property:  # noqa: N801  (PyTorch's name)
    """A property computed on first use and then stored on the instance: a distribution given its
    probs computes its logits only when asked for them."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with tensorplay.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value

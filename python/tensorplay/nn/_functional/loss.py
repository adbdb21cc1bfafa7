"""Losses."""

from tensorplay._C import _nn
from tensorplay.nn._functional._utils import _reduction

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
]


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _nn.mse_loss(input, target, _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.l1_loss(input, target, _reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _nn.smooth_l1_loss(input, target, _reduction(size_average, reduce, reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    return _nn.huber_loss(input, target, reduction, delta)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nn.nll_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    return _nn.cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index,
                             label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    return _nn.binary_cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                _reduction(size_average, reduce, reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    return _nn.kl_div(input, target, _reduction(size_average, reduce, reduction), log_target)

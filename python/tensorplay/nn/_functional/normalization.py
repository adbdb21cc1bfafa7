"""Normalization layers."""

from tensorplay._C import _nn
from tensorplay.nn._functional._utils import _single

__all__ = ["batch_norm", "layer_norm", "group_norm"]


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _nn.layer_norm(input, list(_single(normalized_shape)), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _nn.group_norm(input, num_groups, weight, bias, eps)

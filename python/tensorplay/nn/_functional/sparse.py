"""Lookups: embeddings and one-hot encodings."""

from tensorplay._C import _nn

__all__ = ["embedding", "one_hot"]


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    return _nn.embedding(input, weight, padding_idx)


def one_hot(tensor, num_classes=-1):
    return _nn.one_hot(tensor, num_classes)

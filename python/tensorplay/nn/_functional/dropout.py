"""Dropout."""

from tensorplay._C import _nn

__all__ = ["dropout"]


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    out = _nn.dropout(input, p, training)
    return input.copy_(out) if inplace and out is not input else out

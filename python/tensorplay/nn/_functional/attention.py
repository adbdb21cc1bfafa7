"""Attention."""

from tensorplay._C import _nn

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    return _nn.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)

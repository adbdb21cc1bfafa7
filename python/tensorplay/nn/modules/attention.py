"""MultiheadAttention."""

import math

from tensorplay import _C
from tensorplay.nn import functional as F, init
from tensorplay.nn.modules.linear import Linear
from tensorplay.nn.modules.module import Module
from tensorplay.nn.parameter import Parameter


__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim // num_heads features each, with PyTorch's
    parameter layout (in_proj_weight holding the q, k and v projections) and initialisation."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and kdim/vdim different from "
                                      "embed_dim are not supported")
        if embed_dim % num_heads != 0:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.in_proj_weight = Parameter(_C.empty(3 * embed_dim, embed_dim, device=device, dtype=dtype))
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            # As in torch, is_causal only hints that attn_mask is causal; the mask itself is required.
            raise RuntimeError("Need attn_mask if specifying the is_causal hint.")
        batched = query.dim() == 3
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        L, N, E = query.shape
        S = key.shape[0]
        H, D = self.num_heads, self.head_dim
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        # [seq, batch, E] -> [batch, heads, seq, head_dim]
        q = F.linear(query, w_q, b_q).reshape(L, N, H, D).permute(1, 2, 0, 3)
        k = F.linear(key, w_k, b_k).reshape(S, N, H, D).permute(1, 2, 0, 3)
        v = F.linear(value, w_v, b_v).reshape(S, N, H, D).permute(1, 2, 0, 3)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        if attn_mask is not None:
            mask = attn_mask if attn_mask.dim() == 2 else attn_mask.reshape(N, H, L, S)
            scores = scores.masked_fill(mask, float("-inf")) if mask.dtype == _C.bool else scores + mask
        if key_padding_mask is not None:
            padding = key_padding_mask.reshape(N, 1, 1, S)
            scores = scores.masked_fill(padding, float("-inf")) if padding.dtype == _C.bool else scores + padding
        weights = scores.softmax(-1)
        attended = F.dropout(weights, self.dropout, self.training) @ v
        out = self.out_proj(attended.permute(2, 0, 1, 3).reshape(L, N, E))
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        weights = weights.mean(1) if average_attn_weights else weights
        return out, (weights if batched else weights.squeeze(0))

"""MultiheadAttention."""

from tensorplay import _C
from tensorplay.nn import functional as F, init
from tensorplay.nn._functional.attention import _canonical_mask, _none_or_dtype
from tensorplay.nn.modules.linear import NonDynamicallyQuantizableLinear
from tensorplay.nn.modules.module import Module
from tensorplay.nn.parameter import Parameter


__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim // num_heads features each, with PyTorch's
    parameters and initialisation: in_proj_weight holds the q, k and v projections when keys and
    values are embed_dim wide, else q_proj_weight, k_proj_weight and v_proj_weight do."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_C.empty(3 * embed_dim, embed_dim, **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(_C.empty(embed_dim, embed_dim, **factory_kwargs))
            self.k_proj_weight = Parameter(_C.empty(embed_dim, self.kdim, **factory_kwargs))
            self.v_proj_weight = Parameter(_C.empty(embed_dim, self.vdim, **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(_C.empty(1, 1, embed_dim, **factory_kwargs))
            self.bias_v = Parameter(_C.empty(1, 1, embed_dim, **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            # Transposing shared inputs once keeps them shared, so self-attention projects in one matmul.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and is_batched:
            attn_output = attn_output.transpose(1, 0)
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(mask, mask type) for batch-first self-attention: the key padding mask alone (type 1), or the
        attention mask, plus the padding mask if any, as (batch, heads, seq, seq) (type 2)."""
        mask_type, merged_mask = None, None
        if key_padding_mask is not None:
            mask_type, merged_mask = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged_mask = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                merged_mask = attn_mask.reshape(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged_mask = merged_mask + key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged_mask, mask_type

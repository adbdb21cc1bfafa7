"""tensorplay.backends.mha, as torch.backends.mha: whether nn.MultiheadAttention and
nn.TransformerEncoder may take PyTorch's fused inference path. tensorplay has no fused path, so the
flag is state only."""

_is_fastpath_enabled = True


def get_fastpath_enabled():
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    global _is_fastpath_enabled
    _is_fastpath_enabled = value

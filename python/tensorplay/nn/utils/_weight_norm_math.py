"""The weight-norm reparametrisation w = g * v / ||v|| as composite ops, shared by the hook-based
weight_norm and the parametrization."""


def norm_except_dim(v, dim):
    """The 2-norm of v over every dim except `dim`, kept broadcastable against v; dim=-1 means
    the norm of the whole tensor (a 0-dim tensor), as torch.norm_except_dim has it."""
    if dim == -1:
        return v.norm(2)
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    return v.norm(2, dim=others, keepdim=True) if others else v.abs()


def weight_norm(v, g, dim):
    return v * (g / norm_except_dim(v, dim))

"""Flattening parameters into one vector and back."""

from tensorplay import _C
from tensorplay.autograd.grad_mode import no_grad


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor."""
    return _C.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of vec into the parameters."""
    if not isinstance(vec, _C.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view_as(p))
            offset += n

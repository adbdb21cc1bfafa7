"""tensorplay.autograd: reverse-mode differentiation (see csrc/autograd/ for the engine)."""

from tensorplay import _C
from tensorplay.autograd.function import Function, FunctionCtx
from tensorplay.autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                                           no_grad, set_grad_enabled)
from tensorplay.autograd.gradcheck import GradcheckError, gradcheck
from tensorplay.autograd.graph import Node


def _tensors(x):
    if x is None:
        return None
    return [x] if isinstance(x, _C.Tensor) else list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of tensors (weighted by grad_tensors) into the leaves' .grad."""
    tensors = _tensors(tensors)
    grads = _tensors(grad_tensors)
    if grads is not None and len(grads) != len(tensors):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs: got {len(tensors)} tensors and "
                           f"{len(grads)} gradients")
    if inputs is not None and len(_tensors(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    _C._backward(tensors, grads, retain_graph, create_graph, _tensors(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs, returned rather than accumulated."""
    outputs, inputs = _tensors(outputs), _tensors(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    allow = bool(allow_unused) or materialize_grads
    result = _C._grad(outputs, inputs, _tensors(grad_outputs), retain_graph, create_graph, allow)
    if materialize_grads:
        result = tuple(_C.zeros_like(x) if g is None else g for g, x in zip(result, inputs))
    return result


__all__ = ["Function", "FunctionCtx", "Node", "backward", "grad", "gradcheck", "GradcheckError", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled"]

"""tensorplay.autograd: reverse-mode differentiation (see csrc/tensorplay/autograd/ for the engine)."""

import warnings

from tensorplay import _C
from tensorplay.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from tensorplay.autograd.function import Function, FunctionCtx
from tensorplay.autograd.grad_mode import (enable_grad, enforce_grad_layout_policy, inference_mode, is_grad_enabled,
                                           is_inference_mode_enabled, no_grad, set_grad_enabled,
                                           set_multithreading_enabled)
from tensorplay.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from tensorplay.autograd.graph import Node
from tensorplay.autograd import profiler  # noqa: E402  (torch.autograd.profiler)


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """What tensors were before they carried autograd themselves, kept for old code:
    Variable(data, requires_grad=False) is data detached (sharing its memory) with requires_grad
    set, and every tensor is an instance of Variable."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            return _C.empty(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


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


__all__ = ["Function", "FunctionCtx", "Node", "Variable", "backward", "grad", "gradcheck", "gradgradcheck",
           "GradcheckError", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly", "set_multithreading_enabled",
           "enforce_grad_layout_policy", "variable"]

"""gradcheck: compares the gradients autograd computes with central finite differences.

A complex tensor counts as its real and imaginary parts (view_as_real): the Jacobian has a row per
part of each input element and a column per part of each output element. That is PyTorch's
convention: the gradient reaching a complex input is dL/dRe + i dL/dIm."""

import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay.autograd.grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _parts(t):
    """t as real numbers: a complex tensor's parts, a real tensor itself."""
    return _C.view_as_real(t) if t.is_complex() else t


def _flat(t):
    return _parts(t.detach()).contiguous().reshape(-1)


def _differentiable(t):
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _numerical_jacobian(func, inputs, x, output_index, eps):
    """d(output)/d(x) by central differences: one row per element of x."""
    flat = _parts(x.data).view(-1) if x.is_contiguous() else None
    if flat is None:
        raise ValueError("gradcheck: inputs must be contiguous")
    if x.numel() == 0:
        return np.zeros((0, _flat(_as_tuple(func(*inputs))[output_index]).numel()))
    columns = []
    with no_grad():
        for j in range(flat.numel()):
            original = flat[j].item()
            flat[j] = original + eps
            plus = _flat(_as_tuple(func(*inputs))[output_index]).double().numpy().copy()
            flat[j] = original - eps
            minus = _flat(_as_tuple(func(*inputs))[output_index]).double().numpy().copy()
            flat[j] = original
            columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=0) if columns else np.zeros((0, 0))


def _analytical_jacobian(func, inputs, x, output_index):
    """d(output)/d(x) row by row from autograd, one output element at a time."""
    output = _as_tuple(func(*inputs))[output_index]
    parts = _parts(output.detach())
    rows = []
    for k in range(parts.numel()):
        seed = _C.zeros(parts.numel(), dtype=parts.dtype)
        seed[k] = 1
        seed = seed.reshape(tuple(parts.shape))
        if output.is_complex():
            seed = _C.view_as_complex(seed)
        (g,) = _C._grad([output], [x], [seed], True, False, True)
        rows.append(np.zeros(_flat(x).numel()) if g is None else _flat(g).double().numpy())
    return np.stack(rows, axis=1) if rows else np.zeros((_flat(x).numel(), 0))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """True when autograd's gradients of func at inputs match float64 central differences.

    Every input that requires grad is checked against every floating output.
    """
    inputs = _as_tuple(inputs) if not isinstance(inputs, (list, tuple)) else tuple(inputs)
    wrt = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    outputs = _as_tuple(func(*inputs))
    for i, out in enumerate(outputs):
        if not _differentiable(out):
            continue
        for position, x in enumerate(inputs):
            if not any(x is w for w in wrt):
                continue
            numerical = _numerical_jacobian(func, inputs, x, i, eps)
            analytical = _analytical_jacobian(func, inputs, x, i)
            if numerical.shape != analytical.shape or not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {i} with respect to input {position},\n"
                                     f"numerical:{numerical}\nanalytical:{analytical}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored):
    """True when the second derivatives of func at inputs match finite differences of its first
    ones: gradcheck of the function (inputs, grad_outputs) -> autograd.grad(func(inputs), inputs,
    grad_outputs, create_graph=True). Without grad_outputs, random ones that require grad are drawn
    (from the global generator), so the check covers their derivative too.
    """
    inputs = _as_tuple(inputs) if not isinstance(inputs, (list, tuple)) else tuple(inputs)
    wrt = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    outputs = [out for out in _as_tuple(func(*inputs)) if isinstance(out, Tensor) and out.requires_grad]
    if grad_outputs is None:
        with no_grad():
            grad_outputs = tuple(_C.randn(tuple(out.shape), dtype=out.dtype, device=out.device).requires_grad_()
                                 for out in outputs)
    grad_outputs = _as_tuple(grad_outputs) if not isinstance(grad_outputs, (list, tuple)) else tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"gradgradcheck: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs that "
                         "require grad")

    def first_derivatives(*args):
        ins, grads = args[:len(inputs)], args[len(inputs):]
        with enable_grad():  # also while gradcheck's finite differences run under no_grad
            outs = [out for out in _as_tuple(func(*ins)) if isinstance(out, Tensor) and out.requires_grad]
            wanted = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
            derivatives = _C._grad(outs, wanted, list(grads), True, True, True)
        return tuple(d for d in derivatives if d is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)

"""gradcheck: compares the gradients autograd computes with central finite differences."""

import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay.autograd.grad_mode import no_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _flat(t):
    return t.detach().contiguous().reshape(-1)


def _numerical_jacobian(func, inputs, x, output_index, eps):
    """d(output)/d(x) by central differences: one row per element of x."""
    flat = x.data.view(-1) if x.is_contiguous() else None
    if flat is None:
        raise ValueError("gradcheck: inputs must be contiguous")
    if x.numel() == 0:
        return np.zeros((0, _as_tuple(func(*inputs))[output_index].numel()))
    columns = []
    with no_grad():
        for j in range(x.numel()):
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
    rows = []
    for k in range(output.numel()):
        seed = _C.zeros(output.numel(), dtype=output.dtype)
        seed[k] = 1
        (g,) = _C._grad([output], [x], [seed.reshape(tuple(output.shape))], True, False, True)
        rows.append(np.zeros(x.numel()) if g is None else _flat(g).double().numpy())
    return np.stack(rows, axis=1) if rows else np.zeros((x.numel(), 0))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """True when autograd's gradients of func at inputs match float64 central differences.

    Every input that requires grad is checked against every floating output.
    """
    inputs = _as_tuple(inputs) if not isinstance(inputs, (list, tuple)) else tuple(inputs)
    wrt = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    outputs = _as_tuple(func(*inputs))
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out.is_floating_point():
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

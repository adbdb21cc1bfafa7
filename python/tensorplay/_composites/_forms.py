"""The in-place (`x.op_()`) and `out=` forms of an op, derived from its functional form as PyTorch
derives them: compute the result, check that it can be cast to the destination's dtype, write it."""

import collections
import functools

from tensorplay import _C

# A result may be written into a destination of its own category (bool, integral, floating) or a
# higher one, never a lower one: PyTorch's casting rule, from the C++ core.
can_cast = _C.can_cast


def _check_cast(op, result, dtype):
    if not can_cast(result.dtype, dtype):
        raise RuntimeError(f"[{op}] result type {str(result.dtype).split('.')[-1]} can't be cast to the desired "
                           f"output type {str(dtype).split('.')[-1]}")


def write_out(op, out, result):
    """Writes result into out as PyTorch's out= does (the same code as the C++ ops' out= forms): out
    takes result's shape (with PyTorch's warning when a nonempty out had another), keeps its own dtype
    if result can be cast to it, and is returned."""
    if not isinstance(out, _C.Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    return _C._write_out(op, out, result)


def write_outs(op, out, results):
    """PyTorch's out= of an op with several results: a tuple of as many tensors, each written as
    write_out writes one; returns them in the op's named tuple."""
    if not isinstance(out, (tuple, list)) or not all(isinstance(t, _C.Tensor) for t in out):
        raise TypeError(f"{op}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(out)}")
    for target, value in zip(out, results):
        write_out(op, target, value)
    return type(results)(*out)


def with_out(fn):
    """fn with PyTorch's keyword-only out= argument."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else write_out(fn.__name__, out, result)
    return op


def inplace(fn):
    """The in-place form of fn (`x.fn_(...)`): fn's result written into x, which is returned. The write is
    a differentiable copy, so autograd sees x's new history as it does for PyTorch's in-place ops."""
    def op(self, *args, **kwargs):
        # fn may save its input for backward (mul saves both factors); writing the result into that
        # input would then invalidate what it saved, so while autograd records, fn reads a copy.
        records = _C.is_grad_enabled() and any(
            isinstance(t, _C.Tensor) and t.requires_grad for t in (self, *args, *kwargs.values()))
        result = fn(self.clone() if records else self, *args, **kwargs)
        _check_cast(fn.__name__ + "_", result, self.dtype)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"[{fn.__name__}_] output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        return self.copy_(result)
    op.__name__ = op.__qualname__ = fn.__name__ + "_"
    op.__doc__ = f"In-place form of {fn.__name__}()."
    return op


def return_type(name, fields):
    """The named tuple an op returns, as PyTorch's torch.return_types.<name>."""
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "tensorplay.return_types"
    return cls

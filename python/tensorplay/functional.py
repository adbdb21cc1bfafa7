"""The top-level ops whose PyTorch signatures take Python-shaped arguments: einsum (operands as
arguments or one list), tensordot (dims as a count or as two lists), cdist (compute_mode)."""

import numbers

from tensorplay import _C
from tensorplay._composites._forms import write_out

__all__ = ["einsum", "tensordot", "cdist"]


def _check_tensors(op, **tensors):
    """A TypeError that names the op for an argument that is not a tensor (the _C functions below
    would name themselves, _einsum or _tensordot)."""
    for name, value in tensors.items():
        if not isinstance(value, _C.Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(value).__name__}")


def einsum(equation, *operands):
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    _check_tensors("einsum", **{f"operands[{i}]": op for i, op in enumerate(operands)})
    return _C._einsum(equation, list(operands))


def tensordot(a, b, dims=2, out=None):
    if out is not None:
        return write_out("tensordot", out, tensordot(a, b, dims))
    _check_tensors("tensordot", a=a, b=b)
    if isinstance(dims, _C.Tensor):  # as PyTorch reads it: two rows of dims, or one count
        dims = (dims[0].tolist(), dims[1].tolist()) if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        # the last `dims` dims of a with the first `dims` of b
        return _C._tensordot(a, b, list(range(a.dim() - dims, a.dim())), list(range(dims)))
    if not isinstance(dims, (list, tuple)):
        raise RuntimeError(f"tensordot expects dims to be an int or a pair of lists, got {dims!r}")
    if len(dims) != 2:  # a ValueError, as unpacking the pair raises in PyTorch
        raise ValueError(f"tensordot(): dims must be a pair of lists, got {len(dims)} item(s): {dims!r}")
    dims_a, dims_b = (_dim_list(d) for d in dims)
    return _C._tensordot(a, b, dims_a, dims_b)


def _dim_list(dims):
    """An int or a sequence of ints as a list; a TypeError that names tensordot otherwise."""
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        return [dims]
    if isinstance(dims, (list, tuple)) and all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                                               for d in dims):
        return list(dims)
    raise TypeError(f"tensordot(): dims must be ints or sequences of ints, got {dims!r}")


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    # tensorplay always takes the differences directly: exact, and the same in every mode.
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _C.cdist(x1, x2, p)

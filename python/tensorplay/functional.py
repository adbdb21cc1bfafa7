"""The top-level ops whose PyTorch signatures take Python-shaped arguments: einsum (operands as
arguments or one list), tensordot (dims as a count or as two lists), cdist (compute_mode)."""

import numbers

from tensorplay import _C

__all__ = ["einsum", "tensordot", "cdist"]


def einsum(equation, *operands):
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C._einsum(equation, list(operands))


def tensordot(a, b, dims=2, out=None):
    if out is not None:
        raise TypeError("tensordot(): out= is not supported")
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        # the last `dims` dims of a with the first `dims` of b
        return _C._tensordot(a, b, list(range(a.dim() - dims, a.dim())), list(range(dims)))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise RuntimeError(f"tensordot expects dims to be an int or a pair of lists, got {dims!r}")
    dims_a, dims_b = ([d] if isinstance(d, numbers.Integral) else list(d) for d in dims)
    return _C._tensordot(a, b, dims_a, dims_b)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    # tensorplay always takes the differences directly: exact, and the same in every mode.
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _C.cdist(x1, x2, p)

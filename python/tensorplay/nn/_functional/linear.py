"""Linear and bilinear maps, and the grouped matmul of mixture-of-experts layers."""

import tensorplay
from tensorplay._C import _nn
from tensorplay._dtypes import aten_name

__all__ = ["linear", "bilinear", "grouped_mm"]


def linear(input, weight, bias=None):
    return _nn.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return _nn.bilinear(input1, input2, weight, bias)


_GROUPED_MM_DTYPES = (tensorplay.float32, tensorplay.bfloat16, tensorplay.float16)
def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """One matmul per group (expert), the groups given by a leading dim of size G of a 3-D operand, or
    by the offsets `offs` (int32, increasing; offs[i] ends group i) into the jagged dim of a 2-D one:

    - 2-D a (M, K), 3-D b (G, K, N): rows offs[i-1]:offs[i] of a times b[i], giving (M, N);
    - 3-D a (G, M, K), 2-D b (K, N): a[i] times columns offs[i-1]:offs[i] of b, giving (M, N);
    - 2-D a (M, K), 2-D b (K, N): the K dim split by offs, one (M, N) product per group, (G, M, N);
    - 3-D a, 3-D b: a batched matmul, (G, M, N).

    Each product is an mm of its group's slices, so gradients and autocast follow from mm; rows or
    columns past offs[-1] are zeros."""
    _check_grouped_mm(mat_a, mat_b, offs, bias, out_dtype)
    if mat_a.dim() == 3 and mat_b.dim() == 3:
        return tensorplay.bmm(mat_a, mat_b)
    ends = offs.tolist()
    starts = [0] + ends[:-1]
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        return _jagged(mat_a, 0, starts, ends, lambda i, rows: rows @ mat_b[i], (0, mat_b.shape[2]))
    if mat_a.dim() == 3:
        return _jagged(mat_b, 1, starts, ends, lambda i, cols: mat_a[i] @ cols, (mat_a.shape[1], 0))
    return tensorplay.stack([mat_a[:, _span(s, e, mat_a.shape[1])] @ mat_b[_span(s, e, mat_b.shape[0])]
                             for s, e in zip(starts, ends)])


def _span(start, end, length):
    """The slice of group [start, end) within length, empty for decreasing offsets."""
    start = min(max(start, 0), length)
    return slice(start, min(max(end, start), length))


def _jagged(operand, dim, starts, ends, product, empty_shape):
    """The products of each group's slice of operand along dim, concatenated along that dim, with
    zeros for what lies past the last group."""
    length = operand.shape[dim]
    pieces = []
    for i, (start, end) in enumerate(zip(starts, ends)):
        piece = _span(start, end, length)
        pieces.append(product(i, operand[piece] if dim == 0 else operand[:, piece]))
    covered = sum(p.shape[dim] for p in pieces)
    if covered < length:
        shape = list(pieces[0].shape) if pieces else list(empty_shape)
        shape[dim] = length - covered
        pieces.append(tensorplay.zeros(shape, dtype=pieces[0].dtype if pieces else operand.dtype,
                                       device=operand.device))
    return tensorplay.cat(pieces, dim)


def _check_grouped_mm(mat_a, mat_b, offs, bias, out_dtype):
    """PyTorch's checks, in its order and words."""
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if not isinstance(t, tensorplay.Tensor):
            raise TypeError(f"grouped_mm(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t.dtype not in _GROUPED_MM_DTYPES:
            raise RuntimeError(f"grouped_mm: Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{aten_name(t.dtype)}")
        if t.dim() not in (2, 3):
            raise RuntimeError(f"grouped_mm: {name} has to be 2 or 3d")
        _check_strides(t)
    if mat_a.dtype != mat_b.dtype:
        raise RuntimeError(f"grouped_mm: expected m1 and m2 to have the same dtype, but got: {mat_a.dtype} != "
                           f"{mat_b.dtype}")
    if (offs is None) != (mat_a.dim() == 3 and mat_b.dim() == 3):
        raise RuntimeError("grouped_mm: Have to provide offsets if there is a 2d matrix, or no offset if both "
                           "matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("grouped_mm: offs has to be 1D")
        if offs.dtype != tensorplay.int32:
            raise RuntimeError("grouped_mm: Offsets have to be int32")
    if mat_a.shape[-1] != mat_b.shape[-2] and not (mat_a.dim() == 2 and mat_b.dim() == 2):
        raise RuntimeError("grouped_mm: contraction dimension of mat_a and mat_b must match")
    if mat_a.dim() == 2 and mat_b.dim() == 2 and mat_a.shape[1] != mat_b.shape[0]:
        raise RuntimeError("grouped_mm: contraction dimension of mat_a and mat_b must match")
    if mat_a.dim() == 3 and mat_b.dim() == 3 and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("grouped_mm: batched dimension has to match")
    if mat_a.dim() == 2 and mat_b.dim() == 3 and offs.shape[0] != mat_b.shape[0]:
        raise RuntimeError("grouped_mm: matrix batch sizes have to match")
    if mat_a.dim() == 3 and mat_b.dim() == 2 and offs.shape[0] != mat_a.shape[0]:
        raise RuntimeError("grouped_mm: matrix batch sizes have to match")
    if bias is not None:
        raise RuntimeError("grouped_mm: Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("grouped_mm: Grouped gemm output dtype must match `mat_a` dtype")


def _check_strides(t):
    """PyTorch's grouped GEMM wants each matrix row- or column-major with a leading stride of a
    multiple of 16 bytes; it refuses other layouts, and so does this."""
    rows, cols = t.stride()[-2:]
    leading = cols if rows == 1 else rows
    if (rows != 1 and cols != 1) or (leading * t.element_size()) % 16 != 0:
        raise RuntimeError("grouped_mm: strides should be multiple of 16 bytes")

"""tensorplay.linalg: norms, products, factorizations and solves, with PyTorch's names and arguments."""

import numbers

import tensorplay
from tensorplay import _C
LinAlgError = _C._LinAlgError
LinAlgError.__module__ = "tensorplay.linalg"

__all__ = ["vector_norm", "matrix_norm", "norm", "vecdot", "multi_dot", "cross", "cholesky", "cholesky_ex", "det",
           "inv", "inv_ex", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "slogdet", "solve", "solve_ex",
           "solve_triangular", "matrix_exp", "matrix_power", "qr", "householder_product", "svd", "svdvals", "pinv",
           "matrix_rank", "cond", "lstsq", "eig", "eigvals", "eigh", "eigvalsh", "tensorinv", "tensorsolve", "vander", "diagonal",
           "matmul", "ldl_factor", "ldl_factor_ex", "ldl_solve", "LinAlgError"]

vecdot = _C._linalg.vecdot
multi_dot = _C._linalg.multi_dot
cross = _C._linalg.cross


def _dims(dim):
    if dim is None:
        return []
    return [dim] if isinstance(dim, numbers.Integral) else list(dim)


def _number(op, name, value):
    """float(value); for anything that is not a number, a TypeError that names the op, as PyTorch's
    argument parser raises."""
    if not isinstance(value, str):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"[{op}] argument '{name}' must be a number, not {type(value).__name__}")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return _C._linalg.vector_norm(x, _number("linalg.vector_norm", "ord", ord), _dims(dim), keepdim, dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if not isinstance(ord, str):
        ord = _number("linalg.matrix_norm", "ord", ord)
    return _C._linalg.matrix_norm(A, ord, list(dim), keepdim, dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm or a matrix norm, as PyTorch chooses: a matrix norm for a str ord, for a
    2-tuple dim, and for a 2-D input with ord given and no dim."""
    if isinstance(dim, numbers.Integral):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if ord is not None and dim is None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    matrix = isinstance(ord, str) or (dim is not None and len(dim) == 2) or (ord is not None and dim is None and
                                                                               A.dim() == 2)
    if matrix:
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# Last: the composites import this module's norms while they load.
from tensorplay._composites.linalg import (linalg_cholesky as cholesky, linalg_cholesky_ex as cholesky_ex,
                                           linalg_det as det, linalg_inv as inv, linalg_inv_ex as inv_ex,
                                           linalg_ldl_factor as ldl_factor,
                                           linalg_ldl_factor_ex as ldl_factor_ex, linalg_ldl_solve as ldl_solve,
                                           linalg_lu as lu, linalg_lu_factor as lu_factor,
                                           linalg_lu_factor_ex as lu_factor_ex, linalg_lu_solve as lu_solve,
                                           linalg_slogdet as slogdet, linalg_solve as solve,
                                           linalg_solve_ex as solve_ex, linalg_solve_triangular as solve_triangular,
                                           linalg_matrix_exp as matrix_exp)
from tensorplay._composites.statistics import matrix_power
from tensorplay._composites.decompositions import (linalg_cond as cond, linalg_eig as eig, linalg_eigh as eigh,
                                                   linalg_eigvals as eigvals,
                                                   linalg_eigvalsh as eigvalsh,
                                                   linalg_householder_product as householder_product,
                                                   linalg_lstsq as lstsq, linalg_matrix_rank as matrix_rank,
                                                   linalg_pinv as pinv, linalg_qr as qr, linalg_svd as svd,
                                                   linalg_svdvals as svdvals, linalg_tensorinv as tensorinv,
                                                   linalg_tensorsolve as tensorsolve, linalg_vander as vander)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def matmul(input, other, *, out=None):
    return tensorplay.matmul(input, other, out=out)

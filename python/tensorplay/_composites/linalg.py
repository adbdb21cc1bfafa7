"""Linear algebra on LU and Cholesky factors: determinants, inverses, the Cholesky and LU helpers of
the torch namespace, and the matrix exponential.

They are composites of the LAPACK-backed ops of tensorplay._C._linalg (csrc/tensorplay/ops/factorization.cpp):
the LU and Cholesky factorizations, the solves on them and the triangular solve, whose backward
nodes give these their gradients. A determinant is the product of U's diagonal, signed by the
parity of the LU pivots."""

import contextlib
import re
import warnings

import tensorplay
from tensorplay import _C
from tensorplay._composites._forms import return_type, with_out, write_out, write_outs
from tensorplay.amp.composite_casts import float32_inputs, outside_autocast

__all__ = [
    "det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "triangular_solve",
    "lu", "lu_solve", "lu_unpack", "matrix_exp",
]
METHODS = [
    "det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "triangular_solve",
    "lu", "lu_solve", "matrix_exp",
]

_L = _C._linalg



linalg_slogdet_result = return_type("linalg_slogdet", "sign logabsdet")
slogdet_result = return_type("slogdet", "sign logabsdet")
lu_factor_result = return_type("linalg_lu_factor", "LU pivots")
lu_factor_ex_result = return_type("linalg_lu_factor_ex", "LU pivots info")
lu_result = return_type("lu", "LU pivots")
ldl_factor_result = return_type("linalg_ldl_factor", "LD pivots")
ldl_factor_ex_result = return_type("linalg_ldl_factor_ex", "LD pivots info")
lu_infos_result = return_type("lu", "LU pivots infos")
linalg_lu_result = return_type("linalg_lu", "P L U")
lu_unpack_result = return_type("lu_unpack", "P L U")
inv_ex_result = return_type("linalg_inv_ex", "inverse info")
cholesky_ex_result = return_type("linalg_cholesky_ex", "L info")
solve_ex_result = return_type("linalg_solve_ex", "result info")
triangular_solve_result = return_type("triangular_solve", "solution cloned_coefficient")

_warned = set()


def _deprecated(name, message):
    """PyTorch warns once per process for its deprecated linear algebra functions."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)


# The ops whose own checks refuse a dtype before anything else, as PyTorch's do: integers and bool
# ("Expected a floating point or complex tensor"), and for some the 16-bit floats ("Low precision
# dtypes not supported"). The others refuse them in their LAPACK kernel, after the shape checks.
_REFUSE_INTEGERS = {"det", "linalg.det", "logdet", "slogdet", "linalg.slogdet", "inverse", "linalg.inv",
                    "linalg.inv_ex", "linalg.solve", "linalg.solve_ex", "linalg.cholesky", "linalg.cholesky_ex",
                    "lu_solve", "linalg.lu_solve", "matrix_exp", "linalg.matrix_exp", "linalg.ldl_factor",
                    "linalg.ldl_factor_ex"}
_REFUSE_LOW_PRECISION = {"logdet", "slogdet", "linalg.slogdet", "inverse", "linalg.inv", "linalg.inv_ex"}


def _check(op, *tensors, square=True):
    """PyTorch's first checks of an op's matrices: tensors, of a dtype the op's own check accepts,
    at least 2-D, and square where asked."""
    _check_types(op, *tensors)
    for t in tensors:
        dtype = str(t.dtype).removeprefix("tensorplay.")
        if op in _REFUSE_INTEGERS and not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {dtype}")
        if op in _REFUSE_LOW_PRECISION and t.dtype in (tensorplay.bfloat16, tensorplay.float16):
            raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {dtype}")
        if t.dim() < 2:
            raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    A = tensors[0]
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _check_flags(op, **flags):
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{op}(): argument '{name}' must be bool, not {type(value).__name__}")


def _check_types(op, *tensors):
    for position, t in enumerate(tensors, 1):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"{op}(): argument (position {position}) must be Tensor, not {type(t).__name__}")


@contextlib.contextmanager
def _named(op):
    """Errors of the ops a composite calls, re-raised naming the op that was called."""
    try:
        yield
    except (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError) as error:
        if re.search(rf"(?<![\w.]){re.escape(op)}(?!\w)", str(error)):
            raise
        raise type(error)(f"{op}: {error}") from None


def _linalg_errors(op, info, message):
    """LinAlgError for the first matrix whose LAPACK info is positive, with PyTorch's batch prefix."""
    if info.numel() == 0 or info.device.type == "meta" or not bool((info > 0).any()):
        return
    flat = info.reshape(-1)
    index = int((flat > 0).int().argmax())
    prefix = f"(Batch element {index}): " if info.dim() > 0 else ""
    raise _C._LinAlgError(f"{op}: {prefix}{message(int(flat[index]))}")


def _eye_like(A):
    n = A.shape[-1]
    return tensorplay.eye(n, dtype=A.dtype, device=A.device).expand(A.shape)


# ---- determinants ----

def _lu_sign_and_diagonal(op, A):
    """The sign of the LU permutation ([...], A's dtype) and U's diagonal ([..., n])."""
    _check(op, A)
    with _named(op):
        LU, pivots, _ = _L.lu_factor_ex(A, True, False)
    n = A.shape[-1]
    swaps = (pivots != tensorplay.arange(1, n + 1, dtype=pivots.dtype, device=pivots.device)).sum(-1)
    sign = 1 - 2 * (swaps % 2)
    return sign.to(A.dtype), LU.diagonal(0, -2, -1)


def _det(op, A):
    sign, diagonal = _lu_sign_and_diagonal(op, A)
    return sign * diagonal.prod(-1)


def linalg_det(A, *, out=None):
    result = _det("linalg.det", A)
    return result if out is None else write_out("linalg_det", out, result)


def det(input):
    return _det("det", input)


def _slogdet(op, A):
    """The sign (a unit complex number for a complex A) and log |det A|, real."""
    sign, diagonal = _lu_sign_and_diagonal(op, A)
    return sign * diagonal.sgn().prod(-1), diagonal.abs().log().sum(-1)


def linalg_slogdet(A, *, out=None):
    result = linalg_slogdet_result(*_slogdet("linalg.slogdet", A))
    return result if out is None else write_outs("linalg_slogdet", out, result)


def slogdet(input):
    return slogdet_result(*_slogdet("slogdet", input))


def logdet(input):
    """log(det(A)): for a real A, NaN where the determinant is negative and -inf where it is zero;
    for a complex A, the principal logarithm."""
    sign, logabsdet = _slogdet("logdet", input)
    if sign.is_complex():
        return logabsdet + sign.log()
    return tensorplay.where(sign < 0, float("nan"), logabsdet)


# ---- inverses and solves ----

def _solve_ex(op, A, B, left, check_errors):
    _check_types(op, A, B)
    A, B = float32_inputs(A, B)
    _check(op, A)
    _check(op, B if B.dim() != 1 else B.unsqueeze(-1), square=False)
    with _named(op):
        return _L.solve_ex(A, B, left, check_errors)


def linalg_solve_ex(A, B, *, left=True, check_errors=False, out=None):
    result = solve_ex_result(*_solve_ex("linalg.solve_ex", A, B, left, check_errors))
    return result if out is None else write_outs("linalg_solve_ex", out, result)


def linalg_solve(A, B, *, left=True, out=None):
    result = _solve_ex("linalg.solve", A, B, left, True)[0]
    return result if out is None else write_out("linalg_solve", out, result)


def _singular(k):
    return (f"The diagonal element {k} is zero, the inversion could not be completed because the input matrix is "
            "singular.")


def _inv_ex(op, A, check_errors):
    (A,) = float32_inputs(A)
    _check(op, A)
    with _named(op):
        inverse, info = _L.solve_ex(A, _eye_like(A), True, False)
    if check_errors:
        _linalg_errors(op, info, _singular)
    return inverse, info


def linalg_inv_ex(A, *, check_errors=False, out=None):
    result = inv_ex_result(*_inv_ex("linalg.inv_ex", A, check_errors))
    return result if out is None else write_outs("linalg_inv_ex", out, result)


def linalg_inv(A, *, out=None):
    inverse = _inv_ex("linalg.inv", A, True)[0]
    return inverse if out is None else write_out("linalg_inv", out, inverse)


@with_out
def inverse(input):
    return _inv_ex("inverse", input, True)[0]


def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    op = "linalg.solve_triangular"
    _check_types(op, A, B)
    _check(op, A)
    _check(op, B, square=False)
    B = B.to(A.dtype)  # PyTorch solves in A's dtype
    with _named(op):
        result = _L.solve_triangular(A, B, upper, left, unitriangular)
    return result if out is None else write_out("linalg_solve_triangular", out, result)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Solves op(A) X = input for triangular A; returns (X, a copy of A)."""
    _deprecated("triangular_solve", "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
                "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
                "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution"
                "\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    _check_types("triangular_solve", input, A)
    _check_flags("triangular_solve", upper=upper, transpose=transpose, unitriangular=unitriangular)
    input, A = float32_inputs(input, A)
    _check("triangular_solve", A)
    _check("triangular_solve", input, square=False)
    if input.dtype != A.dtype:
        raise RuntimeError(f"triangular_solve: Expected b and A to have the same dtype, but found b of type "
                           f"{str(input.dtype).removeprefix('tensorplay.')} and A of type "
                           f"{str(A.dtype).removeprefix('tensorplay.')} instead.")
    coefficient = A.mT if transpose else A
    with _named("triangular_solve"):
        solution = _L.solve_triangular(coefficient, input, upper != transpose, True, unitriangular)
    batch = tuple(solution.shape[:-2])
    result = triangular_solve_result(solution, A.expand(batch + tuple(A.shape[-2:])).clone())
    return result if out is None else write_outs("triangular_solve", out, result)


# ---- Cholesky ----

def _cholesky_ex(op, A, upper, check_errors):
    _check_flags(op, upper=upper)
    (A,) = float32_inputs(A)
    _check(op, A)
    with _named(op):
        return _L.cholesky_ex(A, upper, check_errors)


def linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    result = cholesky_ex_result(*_cholesky_ex("linalg.cholesky_ex", A, upper, check_errors))
    return result if out is None else write_outs("linalg_cholesky_ex", out, result)


def linalg_cholesky(A, *, upper=False, out=None):
    result = _cholesky_ex("linalg.cholesky", A, upper, True)[0]
    return result if out is None else write_out("linalg_cholesky", out, result)


@with_out
def cholesky(input, upper=False):
    _deprecated("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
                "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = "
                "torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for all valid "
                "(symmetric positive definite) inputs.")
    _check_flags("cholesky", upper=upper)
    if isinstance(input, _C.Tensor) and input.numel() == 0:
        return input.clone()  # of any shape, as torch.cholesky returns an empty input
    return _cholesky_ex("cholesky", input, upper, True)[0]


def _cholesky_solve(op, B, factor, upper):
    if not isinstance(upper, bool):
        raise TypeError(f"{op}(): argument 'upper' must be bool, not {type(upper).__name__}")
    B, factor = float32_inputs(B, factor)
    _check(op, factor)
    _check(op, B, square=False)
    lower = factor.mH if upper else factor
    with _named(op):
        return _L.solve_triangular(lower.mH, _L.solve_triangular(lower, B, False, True, False), True, True, False)


@with_out
def cholesky_solve(input, input2, upper=False):
    """X with A X = input, from A's Cholesky factor input2 (L with A = L L^H, or U with A = U^H U)."""
    return _cholesky_solve("cholesky_solve", input, input2, upper)


@with_out
def cholesky_inverse(input, upper=False):
    if not isinstance(upper, bool):
        raise TypeError(f"cholesky_inverse(): argument 'upper' must be bool, not {type(upper).__name__}")
    (factor,) = float32_inputs(input)
    _check("cholesky_inverse", factor)
    return _cholesky_solve("cholesky_inverse", _eye_like(factor), factor, upper)


# ---- LU ----

def _lu_factor_ex(op, A, pivot, check_errors):
    _check(op, A, square=False)
    with _named(op):
        return _L.lu_factor_ex(A, pivot, check_errors)


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    result = lu_factor_ex_result(*_lu_factor_ex("linalg.lu_factor_ex", A, pivot, check_errors))
    return result if out is None else write_outs("linalg_lu_factor_ex", out, result)


def linalg_lu_factor(A, *, pivot=True, out=None):
    LU, pivots, _ = _lu_factor_ex("linalg.lu_factor", A, pivot, True)
    result = lu_factor_result(LU, pivots)
    return result if out is None else write_outs("linalg_lu_factor", out, result)


# ---- LDL ----

def _ldl_factor_ex(op, A, hermitian, check_errors):
    _check(op, A)
    _check_flags(op, hermitian=hermitian)
    with _named(op):
        return _L.ldl_factor_ex(A, hermitian, check_errors)


def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    result = ldl_factor_ex_result(*_ldl_factor_ex("linalg.ldl_factor_ex", A, hermitian, check_errors))
    return result if out is None else write_outs("linalg_ldl_factor_ex", out, result)


def linalg_ldl_factor(A, *, hermitian=False, out=None):
    LD, pivots, _ = _ldl_factor_ex("linalg.ldl_factor", A, hermitian, True)
    result = ldl_factor_result(LD, pivots)
    return result if out is None else write_outs("linalg_ldl_factor", out, result)


@with_out
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    _check_types("linalg.ldl_solve", LD, pivots, B)
    _check_flags("linalg.ldl_solve", hermitian=hermitian)
    with _named("linalg.ldl_solve"):
        return _L.ldl_solve(LD, pivots, B, hermitian)


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), and the LAPACK infos when get_infos; a singular A is no error."""
    LU, pivots, infos = _lu_factor_ex("lu", A, pivot, False)
    result = lu_infos_result(LU, pivots, infos) if get_infos else lu_result(LU, pivots)
    return result if out is None else write_outs("lu", out, result)


def _lu_unpack(op, LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    _check(op, LU_data, square=False)
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = tensorplay.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    L = U = P = empty
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + tensorplay.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        if LU_pivots.dtype != tensorplay.int32:
            raise RuntimeError(f"{op}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: "
                               "this function is intended to be used with the output produced by "
                               "torch.linalg.lu_factor")
        with _named(op):
            rows = _L.lu_permutation(LU_pivots, m)
        P = tensorplay.eye(m, dtype=LU_data.dtype, device=LU_data.device)[rows]
    return lu_unpack_result(P, L, U)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) with A = P L U, from lu_factor's LU and pivots; empty tensors for what is not
    unpacked."""
    result = _lu_unpack("lu_unpack", LU_data, LU_pivots, unpack_data, unpack_pivots)
    return result if out is None else write_outs("lu_unpack", out, result)


def linalg_lu(A, *, pivot=True, out=None):
    LU, pivots, _ = _lu_factor_ex("linalg.lu", A, pivot, False)
    result = linalg_lu_result(*_lu_unpack("linalg.lu", LU, pivots))
    return result if out is None else write_outs("linalg_lu", out, result)


def _lu_solve(op, LU, pivots, B, left, adjoint):
    _check_types(op, LU, pivots, B)
    _check(op, LU)
    _check(op, B, square=False)
    with _named(op):
        return _L.lu_solve(LU, pivots, B, left, adjoint)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    result = _lu_solve("linalg.lu_solve", LU, pivots, B, left, adjoint)
    return result if out is None else write_out("linalg_lu_solve", out, result)


@with_out
def lu_solve(input, LU_data, LU_pivots):
    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
                "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    input, LU_data = float32_inputs(input, LU_data)
    return _lu_solve("lu_solve", LU_data, LU_pivots, input, True, False)


# ---- the matrix exponential ----

@outside_autocast
def _matrix_exp(A):
    """exp(A) by scaling and squaring: each matrix is halved s times until its 1-norm is at most
    1/2, where 18 Taylor terms are exact to working precision, and the sum is squared s times.
    Only products, so every float dtype and the gradient follow."""
    if A.shape[-1] == 1 or A.numel() == 0:
        return A.exp()
    norms = A.detach().abs().sum(-2).amax(-1).double()
    steps = (norms / 0.5).log2().ceil().clamp(min=0).nan_to_num(0, 0, 0)
    scaled = A / (2 ** steps).to(A.dtype)[..., None, None]
    identity = _eye_like(A)
    result, term = identity, identity
    for k in range(1, 19):
        term = (term @ scaled) / k
        result = result + term
    # How often to square depends on the values, which a meta tensor does not have.
    squarings = 0 if steps.numel() == 0 or A.device.type == "meta" else int(steps.max())
    for step in range(squarings):
        squared = result @ result
        result = tensorplay.where((steps > step)[..., None, None], squared, result)
    return result


def _checked_matrix_exp(op, A):
    _check(op, A)
    # Summed in double precision and rounded once: the squarings would multiply single precision's
    # rounding errors.
    wide = tensorplay.complex128 if A.is_complex() else tensorplay.float64
    return _matrix_exp(A.to(wide)).to(A.dtype) if A.dtype != wide else _matrix_exp(A)


def matrix_exp(input):
    return _checked_matrix_exp("matrix_exp", input)


def linalg_matrix_exp(A):
    return _checked_matrix_exp("linalg.matrix_exp", A)

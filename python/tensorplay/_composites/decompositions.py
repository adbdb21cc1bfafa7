"""QR, the singular value decomposition and the symmetric eigendecomposition, with PyTorch's names,
and what is built on them: Householder products, the pseudo-inverse, least squares, ranks, condition
numbers, tensor inverses and solves, and the randomized low-rank SVD and PCA.

The decompositions are the LAPACK-backed ops of tensorplay._C._linalg (csrc/tensorplay/ops/factorization.cpp,
csrc/tensorplay/ops/spectral.cpp), whose backward nodes give the rest their gradients. Products of Householder
reflectors (householder_product, orgqr, ormqr) are applied one reflector at a time, so that their
gradients follow from the products'."""

import math
import operator

import tensorplay
from tensorplay import _C
from tensorplay._composites._forms import return_type, write_out, write_outs
from tensorplay._dtypes import aten_name
from tensorplay._composites.linalg import _check, _check_flags, _check_types, _deprecated, _named, linalg_inv_ex
from tensorplay.amp.composite_casts import float32_inputs, in_float32

__all__ = ["qr", "geqrf", "orgqr", "ormqr", "svd", "pinverse", "nuclear_norm", "svd_lowrank", "pca_lowrank"]
METHODS = ["qr", "geqrf", "orgqr", "ormqr", "svd", "pinverse"]

_L = _C._linalg

linalg_qr_result = return_type("linalg_qr", "Q R")
qr_result = return_type("qr", "Q R")
geqrf_result = return_type("geqrf", "a tau")
linalg_svd_result = return_type("linalg_svd", "U S Vh")
svd_result = return_type("svd", "U S V")
eigh_result = return_type("linalg_eigh", "eigenvalues eigenvectors")
eig_result = return_type("linalg_eig", "eigenvalues eigenvectors")
lstsq_result = return_type("linalg_lstsq", "solution residuals rank singular_values")


_LAPACK_DTYPES = (tensorplay.float32, tensorplay.float64, tensorplay.complex64, tensorplay.complex128)


def _dtype_name(t):
    return str(t.dtype).removeprefix("tensorplay.")


def _floating(op, *tensors):
    """PyTorch's first check of the ops that refuse integers before anything else."""
    for t in tensors:
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {_dtype_name(t)}")


def _lapack_dtypes(op, *tensors):
    """The dtypes LAPACK has, for the composites that have no kernel of their own to refuse others."""
    for t in tensors:
        if t.dtype not in _LAPACK_DTYPES:
            raise NotImplementedError(f"{op}: not implemented for '{_dtype_name(t)}'")


def _float_matrices(op, A):
    """A checked as the decompositions' ops check it first (autocast's float32 list applied): a tensor
    of floats, at least 2-D."""
    _check_types(op, A)
    (A,) = float32_inputs(A)
    _floating(op, A)
    _check(op, A, square=False)
    return A


# ---- QR ----

def _qr(op, A, mode):
    A = _float_matrices(op, A)
    if not isinstance(mode, str):
        raise TypeError(f"{op}(): argument 'mode' must be str, not {type(mode).__name__}")
    with _named(op):
        return _L.qr(A, mode)


def linalg_qr(A, mode="reduced", *, out=None):
    result = linalg_qr_result(*_qr("linalg.qr", A, mode))
    return result if out is None else write_outs("linalg_qr", out, result)


def qr(input, some=True, *, out=None):
    _deprecated("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
                "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
                "'complete')")
    result = qr_result(*_qr("qr", input, "reduced" if some else "complete"))
    return result if out is None else write_outs("qr", out, result)


def geqrf(input, *, out=None):
    """LAPACK's QR: R on and above the diagonal, the Householder reflectors below it, and their
    scales tau. Not differentiable, as in PyTorch."""
    _check_types("geqrf", input)
    (input,) = float32_inputs(input)
    with _named("geqrf"):
        result = geqrf_result(*_L.geqrf(input))
    return result if out is None else write_outs("geqrf", out, result)


def _apply_reflectors(reflectors, tau, C, left, adjoint):
    """Q C, Q^H C, C Q or C Q^H for Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i is column i
    of `reflectors` below the diagonal with a 1 on it."""
    rows, k = reflectors.shape[-2], tau.shape[-1]
    V = reflectors[..., :, :k].tril(-1) + tensorplay.eye(rows, k, dtype=reflectors.dtype, device=reflectors.device)
    # Q C = H_1 (... (H_k C)): the last reflector first; Q^H C = H_k^H ... H_1^H C: the first first,
    # where H_i^H scales by conj(tau_i).
    order = range(k) if left == adjoint else reversed(range(k))
    scales = tau.conj() if adjoint else tau
    for i in order:
        v, scale = V[..., :, i:i + 1], scales[..., i:i + 1, None]
        if left:
            C = C - (scale * v) @ (v.mH @ C)
        else:
            C = C - ((C @ v) * scale) @ v.mH
    return C


def _check_tau(op, A, tau):
    """The checks of tau that follow those of the matrices' sizes, as PyTorch orders them."""
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")


def _reflector_count(op, tau):
    if tau.dim() == 0:
        raise IndexError(f"{op}: Dimension specified as -1 but tensor has no dimensions")
    return tau.shape[-1]


@in_float32
def _householder_product(op, A, tau):
    _check_types(op, A, tau)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < _reflector_count(op, tau):
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    _check_tau(op, A, tau)
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: tau dtype {_dtype_name(tau)} does not match input dtype {_dtype_name(A)}")
    _lapack_dtypes(op, A)
    identity = tensorplay.eye(m, n, dtype=A.dtype, device=A.device).expand(A.shape)
    return _apply_reflectors(A, tau, identity, True, False)


def linalg_householder_product(A, tau, *, out=None):
    result = _householder_product("linalg.householder_product", A, tau)
    return result if out is None else write_out("linalg_householder_product", out, result)


def orgqr(input, tau, *, out=None):
    result = _householder_product("orgqr", input, tau)
    return result if out is None else write_out("orgqr", out, result)


@in_float32
def _ormqr(input, tau, other, left, transpose):
    op = "ormqr"
    _check_types(op, input, tau, other)
    _check_flags(op, left=left, transpose=transpose)
    if input.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError(f"{op}: other must have at least 2 dimensions.")
    side = other.shape[-2] if left else other.shape[-1]
    if side != input.shape[-2]:
        raise RuntimeError(f"{op}: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    if _reflector_count(op, tau) != min(side, input.shape[-1]):
        raise RuntimeError(f"{op}: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
                           "input.shape[-1])")
    _check_tau(op, input, tau)
    if tuple(other.shape[:-2]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of other to be equal to input.shape[:-2], but got "
                           f"{list(other.shape[:-2])}")
    for name, t in (("tau", tau), ("other", other)):
        if t.dtype != input.dtype:
            raise RuntimeError(f"{op}: Expected input and {name} to have the same dtype, but input has dtype "
                               f"{_dtype_name(input)} and {name} has dtype {_dtype_name(t)}")
    _lapack_dtypes(op, input)
    return _apply_reflectors(input, tau, other, left, transpose)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """other multiplied by the Q of geqrf's reflectors (or its conjugate transpose), from the left or
    the right."""
    result = _ormqr(input, tau, other, left, transpose)
    return result if out is None else write_out("ormqr", out, result)


# ---- the singular value decomposition ----

def _svd(op, A, full_matrices):
    A = _float_matrices(op, A)
    with _named(op):
        return _L.svd(A, full_matrices)


def _no_driver(op, driver):
    if driver is not None:
        raise RuntimeError(f"{op}: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                           "backend.")


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    _no_driver("linalg.svd", driver)
    result = linalg_svd_result(*_svd("linalg.svd", A, full_matrices))
    return result if out is None else write_outs("linalg_svd", out, result)


def _svdvals(op, A):
    A = _float_matrices(op, A)
    with _named(op):
        return _L.svdvals(A)


def linalg_svdvals(A, *, driver=None, out=None):
    _no_driver("linalg.svdvals", driver)
    result = _svdvals("linalg.svdvals", A)
    return result if out is None else write_out("linalg_svdvals", out, result)


def svd(input, some=True, compute_uv=True, *, out=None):
    """U, S, V with input = U diag(S) V^H; without compute_uv, U and V are zero matrices of their
    full sizes (of input's dtype), as in PyTorch."""
    _check_types("svd", input)
    if input.dim() < 2:
        raise RuntimeError(f"svd: input should have at least 2 dimensions, but has {input.dim()} dimensions instead")
    if compute_uv:
        U, S, Vh = _svd("svd", input, not some)
        result = svd_result(U, S, Vh.mH)
    else:
        S = _svdvals("svd", input)
        m, n, batch = input.shape[-2], input.shape[-1], tuple(input.shape[:-2])
        result = svd_result(tensorplay.zeros(batch + (m, m), dtype=input.dtype, device=S.device), S,
                            tensorplay.zeros(batch + (n, n), dtype=input.dtype, device=S.device))
    return result if out is None else write_outs("svd", out, result)


def _tolerances(op, A, atol, rtol):
    """PyTorch's atol and rtol as tensors: atol 0 when not given; rtol eps * max(m, n) when neither is
    given (or atol is not positive), 0 when a positive atol is. Of A's real dtype (the singular
    values' one)."""
    real = A.dtype.to_real()

    def as_tensor(value, name="tolerance"):
        if isinstance(value, _C.Tensor):
            if value.is_complex():
                raise RuntimeError(f"torch.{op}: {name} tensor of complex type is not supported. Got "
                                   f"{aten_name(value.dtype)}")
            return value.to(real)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{op}(): argument '{name}' must be float or Tensor, not {type(value).__name__}")
        return tensorplay.tensor(float(value), dtype=real, device=A.device)
    if atol is not None:
        atol = as_tensor(atol, "atol")
    if rtol is not None:
        rtol = as_tensor(rtol, "rtol")
    default = tensorplay.finfo(real).eps * max(A.shape[-2], A.shape[-1])
    if rtol is None:
        rtol = default if atol is None else tensorplay.where(as_tensor(atol) > 0, 0.0, default)
    atol = 0.0 if atol is None else atol
    return as_tensor(atol), as_tensor(rtol)


def _check_pinv(op, A):
    _check_types(op, A)
    if A.dim() < 2 or A.dtype not in _LAPACK_DTYPES:
        raise RuntimeError(f"{op}: expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           f"types, got {_dtype_name(A)} of {A.dim()} dimensions")


def _pinv(op, A, atol, rtol, hermitian):
    """The pseudo-inverse from the singular values above max(atol, rtol * the largest). Not on
    autocast's lists: its decomposition computes in float32 and its product in the region's dtype,
    as PyTorch's composite does."""
    if isinstance(A, _C.Tensor) and atol is not None and rtol is None and A.dim() < 2:
        # PyTorch sizes rtol's default from the matrices before checking that there are any.
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-max(A.dim(), 1)}, "
                         f"{max(A.dim(), 1) - 1}], but got -2)" if A.dim() else
                         f"{op}: Dimension specified as -2 but tensor has no dimensions")
    _check_pinv(op, A)
    atol, rtol = _tolerances(op, A, atol, rtol)
    if A.numel() == 0:
        return tensorplay.zeros(A.shape[:-2] + (A.shape[-1], A.shape[-2]), dtype=A.dtype, device=A.device)
    with _named(op):
        if hermitian:
            L, V = _L.eigh(A, False)
            S, U, Vh = L.abs(), V * L.sign().unsqueeze(-2), V.mH
            largest = S.amax(-1, keepdim=True)  # (A has elements: the empty case returned above)
        else:
            U, S, Vh = _L.svd(A, False)
            largest = S[..., :1]  # descending
    tolerance = tensorplay.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest)
    inverse = tensorplay.where(S > tolerance, 1 / S, 0)
    return Vh.mH @ (inverse.unsqueeze(-1) * U.mH)


def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    result = _pinv("linalg.pinv", A, atol, rtol, hermitian)
    return result if out is None else write_out("linalg_pinv", out, result)


@in_float32
def pinverse(input, rcond=1e-15):
    return _pinv("pinverse", input, None, rcond, False)


@in_float32
def _matrix_rank(op, A, atol, rtol, hermitian):
    _check_types(op, A)
    if rtol is not None and atol is None and not hermitian:
        # PyTorch's form for rtol alone goes straight to the SVD, whose checks refuse the dtype.
        _floating(op, A)
    elif A.dtype not in _LAPACK_DTYPES:
        raise RuntimeError(f"{op}: This function doesn't handle types other than float and double")
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor input must have at least 2 dimensions.")
    atol, rtol = _tolerances(op, A, atol, rtol)
    with _named(op):
        S = _L.eigvalsh(A, False).abs() if hermitian else _L.svdvals(A)
    largest = S.amax(-1, keepdim=True) if S.shape[-1] else S
    tolerance = tensorplay.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest)
    return (S > tolerance).sum(-1)


def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    result = _matrix_rank("linalg.matrix_rank", A, atol, rtol, hermitian)
    return result if out is None else write_out("linalg_matrix_rank", out, result)


_NORMS_OF_INVERSE = ("fro", "nuc", math.inf, -math.inf, 1, -1)


@in_float32
def _cond(A, p):
    op = "linalg.cond"
    _check_types(op, A)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor must have at least 2 dimensions.")
    # PyTorch's answer for matrices without columns, before any other check.
    if A.shape[-1] == 0:
        return tensorplay.zeros(A.shape[:-2], dtype=A.dtype.to_real(), device=A.device)
    if p is not None and not isinstance(p, (int, float, str)):
        raise TypeError(f"{op}(): argument 'p' must be Number or str, not {type(p).__name__}")
    if p is None or p in (2, -2):
        if A.numel() == 0:
            return tensorplay.zeros(A.shape[:-2], dtype=A.dtype.to_real(), device=A.device)
        S = _svdvals(op, A)
        largest, smallest = S[..., 0], S[..., -1]
        return smallest / largest if p == -2 else largest / smallest
    if p not in _NORMS_OF_INVERSE:
        raise RuntimeError(f"{op} got an invalid norm type: {p}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}(ord={p}): A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.numel() == 0:
        return tensorplay.zeros(A.shape[:-2], dtype=A.dtype.to_real(), device=A.device)
    _floating(op, A)
    with _named(op):
        inverse, info = linalg_inv_ex(A)
        singular = (info > 0)[..., None, None]
        inverse = tensorplay.where(singular, 0, inverse)  # what LAPACK left of it may be NaN
        norms = tensorplay.linalg.matrix_norm(A, p) * tensorplay.linalg.matrix_norm(inverse, p)
    # A singular matrix's condition number is infinite.
    return tensorplay.where(info > 0, math.inf, norms)


def linalg_cond(A, p=None, *, out=None):
    result = _cond(A, p)
    return result if out is None else write_out("linalg_cond", out, result)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    _deprecated("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will "
                "be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` "
                "instead")
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    _check_types("nuclear_norm", input)
    with _named("nuclear_norm"):
        result = tensorplay.linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    return result if out is None else write_out("nuclear_norm", out, result)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@in_float32
def _lstsq(A, B, rcond, driver):
    """The least-squares solution of minimum norm, from the pseudo-inverse; the residuals, rank and
    singular values where PyTorch's LAPACK driver gives them."""
    op = "linalg.lstsq"
    _check_types(op, A, B)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError(f"{op}: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{_dtype_name(A)} and other's dtype {_dtype_name(B)}")
    if A.dtype not in _LAPACK_DTYPES:
        raise RuntimeError(f"{op}: This function doesn't handle types other than float and double")
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    if vector:
        B = B.unsqueeze(-1)
    if A.shape[-2] != B.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
    try:
        tensorplay.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except RuntimeError as error:
        raise RuntimeError(f"{op}: {error}") from None
    m, n = A.shape[-2], A.shape[-1]
    rtol = tensorplay.finfo(A.dtype.to_real()).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    with _named(op):
        U, S, Vh = _L.svd(A, False)
    kept = S > rtol * S[..., :1]
    solution = Vh.mH @ (tensorplay.where(kept, 1 / S, 0).unsqueeze(-1) * (U.mH @ B))
    rank = kept.sum(-1)
    empty = tensorplay.empty(0, dtype=A.dtype.to_real(), device=A.device)
    residuals = empty
    # (On the meta device, where ranks have no values, A is taken to be of full rank.)
    full_rank = A.device.type == "meta" or bool((rank == n).all())
    if driver != "gelsy" and m > n and full_rank:
        residuals = ((A @ solution - B).abs() ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    return lstsq_result(solution.squeeze(-1) if vector else solution, residuals,
                        rank if driver != "gels" else tensorplay.empty(0, dtype=tensorplay.int64, device=A.device),
                        S if driver in ("gelsd", "gelss") else empty)


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    return _lstsq(A, B, rcond, driver)


# ---- the symmetric eigendecomposition ----

def _eigh(op, A, UPLO, values_only):
    _check_types(op, A)
    (A,) = float32_inputs(A)
    if not isinstance(UPLO, str):
        raise TypeError(f"{op}(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check(op, A)
    with _named(op):
        return _L.eigvalsh(A, UPLO == "U") if values_only else _L.eigh(A, UPLO == "U")


def linalg_eigh(A, UPLO="L", *, out=None):
    result = eigh_result(*_eigh("linalg.eigh", A, UPLO, False))
    return result if out is None else write_outs("linalg_eigh", out, result)


def linalg_eigvalsh(A, UPLO="L", *, out=None):
    result = _eigh("linalg.eigvalsh", A, UPLO, True)
    return result if out is None else write_out("linalg_eigvalsh", out, result)


# ---- the general eigendecomposition (complex eigenvalues and eigenvectors) ----

def _eig(op, A, values_only):
    _check_types(op, A)
    (A,) = float32_inputs(A)
    with _named(op):
        return _L.eigvals(A) if values_only else _L.eig(A)


def linalg_eig(A, *, out=None):
    result = eig_result(*_eig("linalg.eig", A, False))
    return result if out is None else write_outs("linalg_eig", out, result)


def linalg_eigvals(A, *, out=None):
    result = _eig("linalg.eigvals", A, True)
    return result if out is None else write_out("linalg_eigvals", out, result)


# ---- tensor inverses and solves, Vandermonde matrices ----

@in_float32
def linalg_tensorinv(A, ind=2, *, out=None):
    """The tensor X with tensordot(A, X, ind) the identity: A's first `ind` dims taken as rows."""
    op = "linalg.tensorinv"
    _check_types(op, A)
    try:
        ind = operator.index(ind)
    except TypeError:
        raise TypeError(f"{op}(): argument 'ind' must be int, not {type(ind).__name__}") from None
    if ind <= 0:
        raise RuntimeError(f"{op}: Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.dim():
        raise RuntimeError(f"{op}: Expected 'ind' to be at most the number of dimensions ({A.dim()}), but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"{op}: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != {math.prod(rows)}")
    with _named(op):
        result = tensorplay.linalg.inv(A.reshape(math.prod(rows), -1)).reshape(cols + rows)
    return result if out is None else write_out("linalg_tensorinv", out, result)


@in_float32
def linalg_tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) == B; `dims` moves those dims of A to its end first."""
    op = "linalg.tensorsolve"
    _check_types(op, A, B)
    if dims is not None:
        if not isinstance(dims, (tuple, list)) or not all(isinstance(d, int) for d in dims):
            raise TypeError(f"{op}(): argument 'dims' must be tuple of ints, not {type(dims).__name__}")
        for d in dims:
            if not -A.dim() <= d < A.dim():
                raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-A.dim()}, "
                                 f"{A.dim() - 1}], but got {d})")
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    solution_shape = tuple(A.shape[B.dim():])
    rows = B.numel()
    if rows != math.prod(solution_shape):
        raise RuntimeError(f"{op}: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(solution_shape)} != {rows}")
    with _named(op):
        result = tensorplay.linalg.solve(A.reshape(rows, rows), B.reshape(rows)).reshape(solution_shape)
    return result if out is None else write_out("linalg_tensorsolve", out, result)


def linalg_vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1) of each vector x (N defaults to its length)."""
    op = "linalg.vander"
    _check_types(op, x)
    if x.dtype in (tensorplay.float16, tensorplay.bfloat16, tensorplay.bool):
        raise RuntimeError(f"{op} supports floating point, complex, and integer tensors, but got {_dtype_name(x)}")
    x = x.reshape(1) if x.dim() == 0 else x  # a number is a vector of one, as in PyTorch
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError(f"{op}: N must be greater than 1.")
    powers = tensorplay.cat([tensorplay.ones_like(x).unsqueeze(-1), x.unsqueeze(-1).expand(*x.shape, N - 1)], -1)
    return powers.cumprod(-1)


# ---- randomized low-rank approximations ----

def _range_basis(A, M, q, niter):
    """An orthonormal basis of the range of A - M (M may be None) that captures its q largest
    singular directions: A - M applied to q random vectors, then niter rounds of subspace iteration
    (A - M)(A - M)^H, each step re-orthonormalised by QR (Halko, Martinsson and Tropp, "Finding
    structure with randomness", 2011, algorithm 4.4)."""
    def apply(X):
        return A @ X if M is None else A @ X - M @ X

    def apply_adjoint(X):
        return A.mH @ X if M is None else A.mH @ X - M.mH @ X

    probe = tensorplay.randn(A.size(-1), q, dtype=A.dtype if A.is_floating_point() else None, device=A.device)
    Q = tensorplay.linalg.qr(apply(probe)).Q
    for _ in range(niter):
        Q = tensorplay.linalg.qr(apply_adjoint(Q)).Q
        Q = tensorplay.linalg.qr(apply(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """U, S, V with A - M ~= U diag(S) V^H, the q largest singular triplets (fewer if A has fewer),
    from a random projection refined by niter subspace iterations. Random: seed for repeatable
    results."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if M is not None:
        M = M.expand(A.shape)
    if A.size(-2) < A.size(-1):  # work on the tall matrix A^H, whose U and V are A's V and U
        V, S, U = svd_lowrank(A.mH, q, niter, None if M is None else M.mH)
        return U, S, V
    Q = _range_basis(A, M, q, niter)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = tensorplay.linalg.svd(B, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """The principal components of the rows of A (batches of m samples of n features): svd_lowrank of
    A less its column means (when center), with q = min(6, m, n) by default."""
    m, n = A.size(-2), A.size(-1)
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter)

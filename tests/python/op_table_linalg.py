"""Op-table rows of the factorizations and what is built on them: torch.det, slogdet, logdet, inverse,
the Cholesky and LU helpers, triangular_solve, matrix_exp (tensorplay/_composites/linalg.py) and
torch.linalg's solve, inv, det, slogdet, cholesky, solve_triangular, lu_factor, lu, lu_solve
(csrc/tensorplay/ops/factorization.cpp); QR, the SVD, eigh and what is built on them (qr, svd, pinv, lstsq,
matrix_rank, cond, householder products, ...: tensorplay/_composites/decompositions.py).

Every row runs in float32, float64, complex64 and complex128. Singular and eigenvectors are unique
up to sign (a phase, for complex ones): the rows return them with the sign (phase) that makes each
vector's largest entry real and positive, the same in both libraries whatever their LAPACK chose.

Matrices that must be invertible are diagonally dominant; Hermitian positive-definite ones are
built inside the row's function as A A^H + n I, and Hermitian ones as A + A^H, so that a gradient
check perturbs A freely.

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import numpy as np

from op_table import NUMPY_DTYPES, Op, S, View

LAPACK_DTYPES = ("float32", "float64", "complex64", "complex128")


def invertible(mk, shape):
    """Diagonally dominant matrices of `shape` [..., n, n]: well conditioned, det away from 0."""
    n = shape[-1]
    return (mk(shape, domain=(-1, 1)) + 2 * n * np.eye(n)).astype(NUMPY_DTYPES[mk.dtype])


def spd(m, a):
    """A Hermitian positive-definite matrix from a square floating or complex a; anything else (the
    fuzzer's inputs) as it is, so that the op itself meets it."""
    if not isinstance(a, m.Tensor) or not (a.is_floating_point() or a.is_complex()) or a.dim() < 2 or \
            a.shape[-1] != a.shape[-2]:
        return a
    return a @ a.mH + a.shape[-1] * m.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def lapack_dtypes(m):
    return (m.float32, m.float64, m.complex64, m.complex128)


def is_matrix_batch(m, a):
    """Whether a is what the factorizations take: square matrices of a dtype LAPACK has."""
    return isinstance(a, m.Tensor) and a.dtype in lapack_dtypes(m) and a.dim() >= 2 and a.shape[-1] == a.shape[-2]


def cholesky_factor(m, a, upper=False):
    """The Cholesky factor of spd(a); a fuzzed input as it is."""
    return m.linalg.cholesky_ex(spd(m, a), upper=bool(upper))[0] if is_matrix_batch(m, a) else a


def lu_factors(m, a):
    """lu_factor_ex(a)'s LU and pivots; a fuzzed input as it is, with pivots of the shape it would
    have."""
    if not is_matrix_batch(m, a):
        matrices = isinstance(a, m.Tensor) and a.dim() >= 2
        shape = tuple(a.shape[:-2]) + (min(a.shape[-2:]),) if matrices else (1,)
        return a, m.ones(shape, dtype=m.int32)
    return m.linalg.lu_factor_ex(a)[:2]


def square_samples(mk):
    return [
        S("3x3", invertible(mk, (3, 3))),
        S("batched", invertible(mk, (2, 2, 4, 4))),
        S("1x1", invertible(mk, (1, 1))),
        S("transposed", View(invertible(mk, (3, 3)), lambda t: t.transpose(-2, -1))),
    ]


def determinant_samples(mk):
    """Determinants are well conditioned where inverses are not: any matrix will do."""
    return square_samples(mk) + [S("random", mk((4, 4))), S("not_square", mk((2, 3))), S("1d", mk((3,)))]


def square_error_samples(mk):
    return square_samples(mk) + [S("not_square", mk((2, 3))), S("1d", mk((3,)))]


def solve_samples(mk):
    a = invertible(mk, (3, 3))
    return [
        S("matrix", a, mk((3, 2))),
        S("vector", a, mk((3,))),
        S("batched_broadcast", invertible(mk, (2, 1, 3, 3)), mk((4, 3, 2))),
        S("right", a, mk((2, 3)), left=False),
        S("mismatch", a, mk((4, 2))),
    ]


def triangular_samples(mk):
    a, b = invertible(mk, (3, 3)), mk((3, 2))
    return [
        S("lower", a, b, upper=False),
        S("upper", a, b, upper=True),
        S("unit", a, b, upper=False, unitriangular=True),
        S("right", a, mk((2, 3)), upper=True, left=False),
        S("batched", invertible(mk, (2, 3, 3)), mk((1, 3, 2)), upper=False),
    ]


def legacy_triangular_samples(mk):
    a, b = invertible(mk, (3, 3)), mk((3, 2))
    return [S("default", b, a), S("lower", b, a, False), S("transpose", b, a, True, True),
            S("unit", b, a, False, False, True), S("batched", mk((2, 3, 2)), invertible(mk, (2, 3, 3)))]


def spd_samples(mk):
    return [S("3x3", mk((3, 3), domain=(-1, 1))), S("batched", mk((2, 4, 4), domain=(-1, 1))),
            S("upper", mk((3, 3), domain=(-1, 1)), upper=True)]


def cholesky_solve_samples(mk):
    a = mk((3, 3), domain=(-1, 1))
    return [S("lower", mk((3, 2)), a), S("upper", mk((3, 2)), a, True),
            S("batched", mk((2, 3, 1)), mk((2, 3, 3), domain=(-1, 1)))]


def lu_solve_samples(mk):
    a = invertible(mk, (3, 3))
    return [S("default", mk((3, 2)), a), S("batched", mk((2, 3, 2)), invertible(mk, (2, 3, 3)))]


def linalg_lu_solve_samples(mk):
    a = invertible(mk, (3, 3))
    return [S("default", a, mk((3, 2))), S("adjoint", a, mk((3, 2)), adjoint=True),
            S("right", a, mk((2, 3)), left=False), S("right_adjoint", a, mk((2, 3)), left=False, adjoint=True)]


def lu_samples(mk):
    return [S("square", invertible(mk, (3, 3))), S("batched", invertible(mk, (2, 4, 4))),
            S("random", mk((4, 4)))]


def ldl_samples(mk):
    """Matrices made symmetric by symmetric(): indefinite ones, whose
    factorization takes 2 x 2 pivot blocks, as well as definite ones."""
    return [S("3x3", mk((3, 3))), S("batched", mk((2, 3, 5, 5))), S("definite", invertible(mk, (4, 4))),
            S("hermitian", mk((4, 4)), hermitian=True), S("empty", mk((0, 0))), S("empty_batch", mk((0, 3, 3)))]


def ldl_solve_samples(mk):
    return [S("default", mk((5, 5)), mk((5, 2))), S("batched", mk((2, 4, 4)), mk((2, 4, 3))),
            S("broadcast_b", mk((4, 4)), mk((3, 4, 1))), S("broadcast_a", mk((2, 3, 3)), mk((3, 2))),
            S("hermitian", mk((3, 3)), mk((3, 1)), hermitian=True)]


def ldl_input(m, a, hermitian=False):
    """What ldl_factor takes: a symmetric matrix, or a Hermitian one where asked."""
    return hermitian_matrix(m, a) if hermitian else symmetric(m, a)


def _ldl_solve(m, a, b, **kw):
    """ldl_solve with ldl_factor's factors of a made symmetric (Hermitian); a fuzzed input as it is,
    with pivots of the shape they would have."""
    if not is_matrix_batch(m, a):
        shape = tuple(a.shape[:-1]) if isinstance(a, m.Tensor) and a.dim() >= 1 else (1,)
        return m.linalg.ldl_solve(a, m.ones(shape, dtype=m.int32), b, **kw)
    return m.linalg.ldl_solve(*m.linalg.ldl_factor_ex(ldl_input(m, a, **kw), **kw)[:2], b, **kw)


def matrix_exp_samples(mk):
    return [
        S("small", mk((3, 3), domain=(-0.3, 0.3))),
        S("norm_12", mk((4, 4))),
        S("batched", mk((2, 3, 3), domain=(-1, 1))),
        S("1x1", mk((1, 1))),
        S("zeros", np.zeros((2, 2), NUMPY_DTYPES[mk.dtype])),
        S("not_square", mk((2, 3))),
    ]


def _lu_solve(m, b, a):
    return m.lu_solve(b, *lu_factors(m, a))


def _linalg_lu_solve(m, a, b, **kw):
    return m.linalg.lu_solve(*lu_factors(m, a), b, **kw)


def _lu_unpack(m, a):
    """L and U (the permutation P has no gradient: test_linalg.py checks it)."""
    return m.lu_unpack(*lu_factors(m, a))[1:]


def gauge_fixed(m, U, Vh=None):
    """U's columns (and Vh's rows with them) turned by the sign (phase) that makes each column's
    largest entry real and positive."""
    if U.numel() == 0:
        return U, Vh
    largest = U.abs().argmax(-2, keepdim=True)
    phase = U.gather(-2, largest).sgn().conj()
    if Vh is None:
        return U * phase, None
    # With full_matrices, U and Vh may have more vectors than there are singular values.
    rows, phases = Vh.shape[-2], phase.mH
    if rows > phases.shape[-2]:
        phases = m.cat([phases, m.ones_like(Vh[..., phases.shape[-2]:, :1])], -2)
    return U * phase, Vh * phases[..., :rows, :]


def is_float_matrix(m, a):
    return isinstance(a, m.Tensor) and a.dtype in lapack_dtypes(m) and a.dim() >= 2


def symmetric(m, a):
    """a + a^T for square matrices; a fuzzed input as it is."""
    return a + a.mT if is_matrix_batch(m, a) else a


def hermitian_matrix(m, a):
    """a + a^H for square matrices; a fuzzed input as it is."""
    return a + a.mH if is_matrix_batch(m, a) else a


def _svd(m, a, some=True):
    U, S, V = m.svd(a, some)
    if not is_float_matrix(m, a):
        return U, S, V
    U, Vh = gauge_fixed(m, U, V.mH)
    return U, S, Vh.mH


def _linalg_svd(m, a, **kw):
    U, S, Vh = m.linalg.svd(a, **kw)
    return (*gauge_fixed(m, U, Vh), S)


def _eigh(m, a, **kw):
    L, V = m.linalg.eigh(hermitian_matrix(m, a), **kw)
    return L, gauge_fixed(m, V)[0]


def _eig(m, a):
    """The eigenvalues, and the eigenvectors with each column's phase fixed (its largest entry made
    real and positive): LAPACK's are determined up to that phase, which MKL and OpenBLAS choose
    differently for a complex pair."""
    L, V = m.linalg.eig(a)
    if V.numel() == 0:
        return L, V
    largest = V.gather(-2, V.abs().argmax(-2, keepdim=True))
    return L, V * (largest.conj() / largest.abs())


def _lstsq(m, a, b, **kw):
    """The solution, and with a driver that gives them, the residuals (gelsy's empty ones have no
    history in tensorplay)."""
    result = m.linalg.lstsq(a, b, **kw)
    return result[:2] if kw.get("driver") == "gelsd" else result.solution


def rectangular_samples(mk):
    return [S("tall", mk((4, 3))), S("wide", mk((3, 4))), S("batched", mk((2, 3, 3))), S("1d", mk((3,)))]


def qr_samples(mk):
    return rectangular_samples(mk) + [S("complete", mk((3, 4)), mode="complete"), S("r", mk((4, 3)), mode="r")]


def svd_samples(mk):
    return [S("tall", mk((4, 3)), full_matrices=False), S("wide", mk((3, 4)), full_matrices=False),
            S("batched", mk((2, 3, 3))), S("1d", mk((3,)))]


def eigh_samples(mk):
    return [S("lower", mk((3, 3))), S("upper", mk((3, 3)), UPLO="U"), S("batched", mk((2, 4, 4))),
            S("not_square", mk((2, 3)))]


def eig_samples(mk):
    return [S("square", mk((3, 3))), S("batched", mk((2, 4, 4))), S("empty", mk((0, 0))),
            S("not_square", mk((2, 3))), S("1d", mk((3,)))]


def pinv_samples(mk):
    return rectangular_samples(mk) + [S("atol", mk((4, 3)), atol=0.5), S("rtol", mk((3, 4)), rtol=0.2)]


def pinv_hermitian_samples(mk):
    """Well conditioned matrices (float32's pseudo-inverse of an ill-conditioned one differs between
    LAPACKs by more than float32's tolerance), and one of rank 2, whose third eigenvalue is cut."""
    rank_2 = View(mk((3, 2)), lambda t: t @ t.mH)
    return [S("3x3", invertible(mk, (3, 3))), S("batched", invertible(mk, (2, 4, 4))), S("rank_2", rank_2),
            S("not_square", mk((2, 3)))]


def cond_samples(mk):
    a = invertible(mk, (3, 3))
    return [S("default", mk((4, 3))), S("2", a, 2), S("-2", a, -2), S("fro", a, "fro"), S("nuc", a, "nuc"),
            S("inf", a, float("inf")), S("1", a, 1), S("batched", invertible(mk, (2, 3, 3)), -1)]


def lstsq_samples(mk):
    a = mk((5, 3))
    return [S("tall", a, mk((5, 2))), S("vector", a, mk((5,))), S("gelsd", a, mk((5, 2)), driver="gelsd"),
            S("batched", mk((2, 4, 4)), mk((2, 4, 1))), S("mismatch", a, mk((4, 2)))]


def householder_samples(mk):
    return [S("tall", mk((4, 3), domain=(-1, 1)), mk((2,), domain=(0, 1))),
            S("batched", mk((2, 3, 3), domain=(-1, 1)), mk((2, 3), domain=(0, 1))),
            S("wide", mk((3, 4)), mk((2,)))]


def ormqr_samples(mk):
    a, tau = mk((4, 3), domain=(-1, 1)), mk((3,), domain=(0, 1))
    return [S("left", a, tau, mk((4, 2))), S("transpose", a, tau, mk((4, 2)), transpose=True),
            S("right", a, tau, mk((2, 4)), left=False),
            S("right_transpose", a, tau, mk((2, 4)), left=False, transpose=True),
            S("mismatch", a, tau, mk((3, 2)))]


def nuclear_norm_samples(mk):
    return [S("2d", mk((4, 3))), S("dim", mk((2, 3, 4)), (0, 2)), S("keepdim", mk((3, 4)), keepdim=True)]


def tensorinv_samples(mk):
    return [S("ind1", invertible(mk, (4, 4)), 1), S("ind2", View(invertible(mk, (6, 6)), lambda t: t.reshape(2, 3, 6)),
                                                     ind=2)]


def tensorsolve_samples(mk):
    a = View(invertible(mk, (6, 6)), lambda t: t.reshape(2, 3, 6))
    return [S("default", a, mk((2, 3))), S("dims", View(invertible(mk, (6, 6)), lambda t: t.reshape(6, 2, 3)),
                                          mk((2, 3)), dims=(0,))]


def vander_samples(mk):
    return [S("default", mk((3,))), S("N", mk((2, 3)), N=4), S("0dim", mk(()))]


ROWS = [
    Op("det", determinant_samples, dtypes=LAPACK_DTYPES),
    Op("slogdet", square_samples, dtypes=LAPACK_DTYPES),
    Op("logdet", spd_samples, dtypes=LAPACK_DTYPES, fn=lambda m, a, upper=None: m.logdet(spd(m, a)), method=False),
    Op("inverse", square_error_samples, dtypes=LAPACK_DTYPES),
    Op("cholesky", spd_samples, dtypes=LAPACK_DTYPES, fn=lambda m, a, **k: m.cholesky(spd(m, a), **k), method=False),
    Op("cholesky_solve", cholesky_solve_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, b, a, *up: m.cholesky_solve(b, cholesky_factor(m, a, bool(up and up[0])), *up)),
    Op("cholesky_inverse", spd_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.cholesky_inverse(cholesky_factor(m, a, **k), **k)),
    Op("triangular_solve", legacy_triangular_samples, dtypes=LAPACK_DTYPES),
    Op("lu_solve", lu_solve_samples, dtypes=LAPACK_DTYPES, fn=_lu_solve, method=False),
    Op("lu_unpack", lu_samples, dtypes=LAPACK_DTYPES, fn=_lu_unpack, method=False),
    Op("lu", lu_samples, dtypes=LAPACK_DTYPES),
    Op("matrix_exp", matrix_exp_samples, dtypes=LAPACK_DTYPES),
    Op("linalg.det", determinant_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.det(a)),
    Op("linalg.slogdet", square_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.slogdet(a)),
    Op("linalg.inv", square_error_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.inv(a)),
    Op("linalg.inv_ex", square_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.inv_ex(a)),
    Op("linalg.solve", solve_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, b, **k: m.linalg.solve(a, b, **k)),
    Op("linalg.solve_ex", solve_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, b, **k: m.linalg.solve_ex(a, b, **k)),
    Op("linalg.cholesky", spd_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.linalg.cholesky(spd(m, a), **k)),
    Op("linalg.cholesky_ex", spd_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.linalg.cholesky_ex(spd(m, a), **k)),
    Op("linalg.solve_triangular", triangular_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, b, **k: m.linalg.solve_triangular(a, b, **k)),
    Op("linalg.lu_factor", lu_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.lu_factor(a)),
    Op("linalg.lu_factor_ex", lu_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a: m.linalg.lu_factor_ex(a)),
    Op("linalg.lu", lu_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.lu(a)[1:]),
    Op("linalg.lu_solve", linalg_lu_solve_samples, dtypes=LAPACK_DTYPES, method=False, fn=_linalg_lu_solve),
    Op("linalg.ldl_factor", ldl_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.linalg.ldl_factor(ldl_input(m, a, **k), **k)),
    Op("linalg.ldl_factor_ex", ldl_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.linalg.ldl_factor_ex(ldl_input(m, a, **k), **k)),
    Op("linalg.ldl_solve", ldl_solve_samples, dtypes=LAPACK_DTYPES, method=False, fn=_ldl_solve),
    Op("linalg.matrix_exp", matrix_exp_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a: m.linalg.matrix_exp(a)),
    Op("qr", rectangular_samples, dtypes=LAPACK_DTYPES),
    Op("geqrf", rectangular_samples, dtypes=LAPACK_DTYPES),
    Op("svd", rectangular_samples, dtypes=LAPACK_DTYPES, fn=_svd, method=False),
    Op("pinverse", rectangular_samples, dtypes=LAPACK_DTYPES),
    Op("nuclear_norm", nuclear_norm_samples, dtypes=LAPACK_DTYPES, method=False),
    Op("orgqr", householder_samples, dtypes=LAPACK_DTYPES),
    Op("ormqr", ormqr_samples, dtypes=LAPACK_DTYPES),
    Op("linalg.qr", qr_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a, **k: m.linalg.qr(a, **k)),
    Op("linalg.svd", svd_samples, dtypes=LAPACK_DTYPES, method=False, fn=_linalg_svd),
    Op("linalg.svdvals", rectangular_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a: m.linalg.svdvals(a)),
    Op("linalg.eigh", eigh_samples, dtypes=LAPACK_DTYPES, method=False, fn=_eigh),
    Op("linalg.eigvalsh", eigh_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.linalg.eigvalsh(hermitian_matrix(m, a), **k)),
    Op("linalg.eig", eig_samples, dtypes=LAPACK_DTYPES, method=False, fn=_eig),
    Op("linalg.eigvals", eig_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a: m.linalg.eigvals(a)),
    Op("linalg.pinv", pinv_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a, **k: m.linalg.pinv(a, **k)),
    Op("linalg.pinv", pinv_hermitian_samples, dtypes=LAPACK_DTYPES, method=False, label="linalg.pinv_hermitian",
       fn=lambda m, a, **k: m.linalg.pinv(hermitian_matrix(m, a), hermitian=True)),
    Op("linalg.matrix_rank", pinv_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, **k: m.linalg.matrix_rank(a, **k)),
    Op("linalg.cond", cond_samples, dtypes=LAPACK_DTYPES, method=False, fn=lambda m, a, *p: m.linalg.cond(a, *p)),
    Op("linalg.lstsq", lstsq_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=_lstsq),
    Op("linalg.householder_product", householder_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, tau: m.linalg.householder_product(a, tau)),
    Op("linalg.tensorinv", tensorinv_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, *i, **k: m.linalg.tensorinv(a, *i, **k)),
    Op("linalg.tensorsolve", tensorsolve_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a, b, **k: m.linalg.tensorsolve(a, b, **k)),
    Op("linalg.vander", vander_samples, method=False, fn=lambda m, x, **k: m.linalg.vander(x, **k)),
]

GRADIENT_LABELS = """
    det slogdet logdet inverse cholesky cholesky_solve cholesky_inverse triangular_solve lu_solve lu_unpack lu
    matrix_exp linalg.det linalg.slogdet linalg.inv linalg.inv_ex linalg.solve linalg.solve_ex linalg.cholesky
    linalg.cholesky_ex linalg.solve_triangular linalg.lu_factor linalg.lu_factor_ex linalg.lu linalg.lu_solve
    linalg.matrix_exp qr svd pinverse nuclear_norm orgqr ormqr linalg.qr linalg.svd linalg.svdvals linalg.eigh
    linalg.eigvalsh linalg.eig linalg.eigvals linalg.pinv linalg.pinv_hermitian linalg.cond linalg.lstsq linalg.householder_product
    linalg.tensorinv linalg.tensorsolve linalg.vander
""".split()

NOT_DIFFERENTIABLE = {
    "geqrf": "PyTorch has no derivative for geqrf (its backward raises; test_linalg.py checks ours does)",
    "linalg.matrix_rank": "an integer count",
    "linalg.ldl_factor": "PyTorch has no derivative for the LDL factorization (test_linalg.py checks the error)",
    "linalg.ldl_factor_ex": "PyTorch has no derivative for the LDL factorization",
    "linalg.ldl_solve": "PyTorch has no derivative for ldl_solve (test_linalg.py checks the error)",
}

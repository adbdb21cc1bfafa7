"""Op-table rows of the factorizations and what is built on them: torch.det, slogdet, logdet, inverse,
the Cholesky and LU helpers, triangular_solve, matrix_exp (tensorplay/_composites/linalg.py) and
torch.linalg's solve, inv, det, slogdet, cholesky, solve_triangular, lu_factor, lu, lu_solve
(csrc/ops/factorization.cpp).

Matrices that must be invertible are diagonally dominant; symmetric positive-definite ones are
built inside the row's function as A A^T + n I, so that a gradient check perturbs A freely.

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import numpy as np

from op_table import NUMPY_DTYPES, Op, S, View

LAPACK_DTYPES = ("float32", "float64")


def invertible(mk, shape):
    """Diagonally dominant matrices of `shape` [..., n, n]: well conditioned, det away from 0."""
    n = shape[-1]
    return (mk(shape, domain=(-1, 1)) + 2 * n * np.eye(n)).astype(NUMPY_DTYPES[mk.dtype])


def spd(m, a):
    """A symmetric positive-definite matrix from a square floating a; anything else (the fuzzer's
    inputs) as it is, so that the op itself meets it."""
    if not isinstance(a, m.Tensor) or not a.is_floating_point() or a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        return a
    return a @ a.mT + a.shape[-1] * m.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def is_matrix_batch(m, a):
    """Whether a is what the factorizations take: square float32 or float64 matrices."""
    return isinstance(a, m.Tensor) and a.dtype in (m.float32, m.float64) and a.dim() >= 2 and \
        a.shape[-1] == a.shape[-2]


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
    Op("linalg.matrix_exp", matrix_exp_samples, dtypes=LAPACK_DTYPES, method=False,
       fn=lambda m, a: m.linalg.matrix_exp(a)),
]

GRADIENT_LABELS = """
    det slogdet logdet inverse cholesky cholesky_solve cholesky_inverse triangular_solve lu_solve lu_unpack lu
    matrix_exp linalg.det linalg.slogdet linalg.inv linalg.inv_ex linalg.solve linalg.solve_ex linalg.cholesky
    linalg.cholesky_ex linalg.solve_triangular linalg.lu_factor linalg.lu_factor_ex linalg.lu linalg.lu_solve
    linalg.matrix_exp
""".split()

NOT_DIFFERENTIABLE = {}

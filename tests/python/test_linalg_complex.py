"""Complex matrices across torch.linalg: the forms of each op that the op table's complex rows
(op_table_linalg.py, every row in complex64 and complex128) do not differentiate, checked against
torch's complex gradients for a complex upstream gradient; PyTorch's checks that a loss of complex
singular vectors and eigenvectors does not depend on their phases; and the results whose dtype is
real for a complex input (singular values, eigenvalues of a Hermitian matrix, log |det|, norms,
condition numbers, residuals)."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import LIBS


def complex_matrix(shape, seed=0, dominant=False):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    if dominant:  # well conditioned: a diagonal that outweighs each row
        a = a + 2 * shape[-1] * np.eye(shape[-1])
    return a


def gauge_fixed(U, Vh=None):
    """Each column of U turned by the phase that makes its largest entry real and positive (Vh's
    rows turned back): what a loss of singular vectors or eigenvectors may depend on."""
    largest = U.abs().argmax(-2, keepdim=True)
    phase = U.gather(-2, largest).sgn().conj()
    return (U * phase,) if Vh is None else (U * phase, Vh * phase.mH)


def grads_of(m, fn, arrays, seed=1):
    """The inputs' gradients of fn's outputs for a fixed random complex upstream gradient."""
    inputs = [m.tensor(a).requires_grad_() for a in arrays]
    outputs = [o for o in fn(m, *inputs) if o.is_complex() or o.is_floating_point()]
    rng = np.random.default_rng(seed)
    upstream = []
    for o in outputs:
        g = rng.normal(size=tuple(o.shape)) + (1j * rng.normal(size=tuple(o.shape)) if o.is_complex() else 0)
        upstream.append(m.tensor(g, dtype=o.dtype))
    return [g.resolve_conj().numpy() for g in m.autograd.grad(outputs, inputs, upstream)]


def _lu_solve(m, a, b, **kw):
    return (m.linalg.lu_solve(*m.linalg.lu_factor(a), b, **kw),)


def _full_svd_vectors(m, a):
    """The singular vectors of a tall a, gauge-fixed, and U's columns past them, whose gradient is
    dropped (they are any basis of the rest)."""
    U, _, Vh = m.linalg.svd(a, full_matrices=True)
    k = Vh.shape[-2]
    return (*gauge_fixed(U[..., :k], Vh), U[..., k:])


FORMS = {
    "solve_right": (lambda m, a, b: (m.linalg.solve(a, b, left=False),), [(3, 3), (2, 3)]),
    "solve_triangular_upper": (lambda m, a, b: (m.linalg.solve_triangular(a, b, upper=True),), [(3, 3), (3, 2)]),
    "solve_triangular_right_unit": (lambda m, a, b: (m.linalg.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True),), [(3, 3), (2, 3)]),
    "lu_solve_adjoint": (lambda m, a, b: _lu_solve(m, a, b, adjoint=True), [(3, 3), (3, 2)]),
    "lu_solve_right": (lambda m, a, b: _lu_solve(m, a, b, left=False), [(3, 3), (2, 3)]),
    "lu_solve_right_adjoint": (lambda m, a, b: _lu_solve(m, a, b, left=False, adjoint=True), [(3, 3), (2, 3)]),
    "triangular_solve_transpose": (lambda m, b, a: (m.triangular_solve(b, a, transpose=True).solution,),
                                   [(3, 2), (3, 3)]),
    "cholesky_upper": (lambda m, a: (m.linalg.cholesky(a @ a.mH + 3 * m.eye(3), upper=True),), [(3, 3)]),
    "cholesky_solve_upper": (lambda m, b, a: (m.cholesky_solve(b, m.linalg.cholesky(a @ a.mH + 3 * m.eye(3),
                                                                                   upper=True), upper=True),),
                             [(3, 2), (3, 3)]),
    "qr_wide": (lambda m, a: m.linalg.qr(a), [(3, 5)]),
    "qr_complete_square": (lambda m, a: m.linalg.qr(a, mode="complete"), [(4, 4)]),
    "qr_batched_tall": (lambda m, a: m.linalg.qr(a), [(2, 5, 3)]),
    "svd_wide": (lambda m, a: (*gauge_fixed(*m.linalg.svd(a, full_matrices=False)[::2]),
                               m.linalg.svd(a, full_matrices=False)[1]), [(3, 5)]),
    "svd_full_tall": (lambda m, a: _full_svd_vectors(m, a), [(5, 3)]),
    "svd_vectors_only": (lambda m, a: gauge_fixed(m.linalg.svd(a)[0]), [(3, 3)]),
    "eigh_upper": (lambda m, a: (m.linalg.eigh(a + a.mH, UPLO="U")[0], *gauge_fixed(m.linalg.eigh(a + a.mH)[1])),
                   [(4, 4)]),
    "eigvalsh_batched": (lambda m, a: (m.linalg.eigvalsh(a + a.mH),), [(2, 3, 3)]),
    "svdvals_batched": (lambda m, a: (m.linalg.svdvals(a),), [(2, 4, 3)]),
    "pinv_wide": (lambda m, a: (m.linalg.pinv(a),), [(3, 5)]),
    "matrix_norm_2": (lambda m, a: (m.linalg.matrix_norm(a, 2), m.linalg.matrix_norm(a, "nuc")), [(3, 4)]),
    "lstsq_wide_gelsd": (lambda m, a, b: (m.linalg.lstsq(a, b, driver="gelsd").solution,), [(3, 5), (3, 2)]),
    "det_batched": (lambda m, a: (m.linalg.det(a), *m.linalg.slogdet(a), m.logdet(a)), [(2, 3, 3)]),
}


@pytest.mark.parametrize("form", FORMS)
def test_complex_gradients_as_torch(form):
    fn, shapes = FORMS[form]
    arrays = [complex_matrix(s, seed=i, dominant=len(s) >= 2 and s[-1] == s[-2]) for i, s in enumerate(shapes)]
    ours, theirs = grads_of(tp, fn, arrays), grads_of(torch, fn, arrays)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("form", ["qr_wide", "svd_wide", "eigh_upper", "lu_solve_right_adjoint",
                                  "solve_triangular_right_unit"])
def test_complex_gradients_pass_gradcheck(form):
    """Finite differences in both the real and the imaginary direction of each input."""
    fn, shapes = FORMS[form]
    inputs = tuple(tp.tensor(complex_matrix(s, seed=i, dominant=len(s) >= 2 and s[-1] == s[-2])).requires_grad_()
                   for i, s in enumerate(shapes))
    assert tp.autograd.gradcheck(lambda *x: fn(tp, *x), inputs)


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call", [
    lambda m, a: m.linalg.svd(a)[0].real.sum(),
    lambda m, a: m.linalg.svd(a)[2].imag.sum(),
    lambda m, a: m.linalg.eigh(a + a.mH)[1].real.sum(),
], ids=["svd_U", "svd_Vh", "eigh_V"])
def test_a_loss_that_depends_on_the_phases_of_complex_vectors_is_refused(m, call):
    a = m.tensor(complex_matrix((3, 3))).requires_grad_()
    with pytest.raises(RuntimeError, match=r"e\^\{i phi\}"):
        call(m, a).backward()


@pytest.mark.parametrize("call", [
    lambda m, a: m.linalg.svdvals(a),
    lambda m, a: m.linalg.svd(a)[1],
    lambda m, a: m.linalg.eigvalsh(a + a.mH),
    lambda m, a: m.linalg.slogdet(a).logabsdet,
    lambda m, a: m.linalg.matrix_norm(a, 2),
    lambda m, a: m.linalg.cond(a),
    lambda m, a: m.linalg.lstsq(a[:, :2], a @ a, driver="gelsd").residuals,
    lambda m, a: m.linalg.lstsq(a[:, :2], a @ a, driver="gelsd").singular_values,
], ids=["svdvals", "svd_S", "eigvalsh", "logabsdet", "matrix_norm", "cond", "residuals", "lstsq_singular_values"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_results_that_are_real_for_complex_matrices(call, dtype):
    a = complex_matrix((3, 3)).astype(dtype)
    ours, theirs = call(tp, tp.tensor(a)), call(torch, torch.tensor(a))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4 if dtype == "complex64" else 1e-10)


def test_complex_determinants_have_a_unit_sign():
    a = complex_matrix((2, 3, 3), seed=5)
    (sign, logabsdet), (tsign, tlogabsdet) = (m.linalg.slogdet(m.tensor(a)) for m in (tp, torch))
    np.testing.assert_allclose(sign.numpy(), tsign.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.abs(sign.numpy()), 1.0, rtol=1e-12)
    np.testing.assert_allclose(tp.logdet(tp.tensor(a)).numpy(), torch.logdet(torch.tensor(a)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.det(tp.tensor(a)).numpy(), np.linalg.det(a), rtol=1e-12)


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_solves_complex_symmetric_and_hermitian_systems(hermitian):
    a = complex_matrix((4, 4), seed=6)
    a = a + (a.conj().T if hermitian else a.T)
    b = complex_matrix((4, 2), seed=7)
    LD, pivots = tp.linalg.ldl_factor(tp.tensor(a), hermitian=hermitian)
    x = tp.linalg.ldl_solve(LD, pivots, tp.tensor(b), hermitian=hermitian)
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-10)


@pytest.mark.parametrize("m", LIBS)
def test_complex_operands_of_different_precisions_are_refused(m):
    a = m.tensor(complex_matrix((3, 3), dominant=True))
    with pytest.raises(RuntimeError, match="same dtype"):
        m.linalg.solve(a, a.to(m.complex64))


def test_complex_matrices_stay_complex_under_autocast():
    """Autocast's float32 list casts floating inputs; complex ones run as they are, as in PyTorch."""
    a = complex_matrix((3, 3), dominant=True).astype(np.complex128)
    for m in (tp, torch):
        with m.autocast("cpu"):
            x = m.linalg.solve(m.tensor(a), m.tensor(a))
            U, S, Vh = m.linalg.svd(m.tensor(a))
        assert str(x.dtype).endswith("complex128") and str(S.dtype).endswith("float64")


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call", [
    lambda m, a: m.linalg.pinv(a, atol=m.tensor(0.1 + 0j, dtype=m.complex128)),
    lambda m, a: m.linalg.matrix_rank(a, rtol=m.tensor(0.1 + 0j, dtype=m.complex128)),
], ids=["pinv_atol", "matrix_rank_rtol"])
def test_complex_tolerances_are_refused(m, call):
    with pytest.raises(RuntimeError, match="tensor of complex type is not supported. Got ComplexDouble"):
        call(m, m.tensor(complex_matrix((3, 3))))

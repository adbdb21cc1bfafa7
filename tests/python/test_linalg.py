"""The factorizations and what is built on them, for what the op table cannot say: LinAlgError
and its messages, the _ex forms' infos, determinants of singular matrices, the permutation of
lu_unpack, out=, the deprecation warnings, negative matrix powers, autocast's dtypes, second
derivatives, and a matmul whose operands both broadcast over the batch.

Each case runs with both libraries (`m`) and must agree."""

import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import LIBS


def array(*rows):
    return np.array(rows, dtype=np.float64)


SINGULAR = array([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0])
NOT_POSITIVE = array([1.0, 2.0], [2.0, 1.0])
WELL = array([4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0])


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call, message", [
    (lambda m, a: m.linalg.inv(a), "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed "
                                   "because the input matrix is singular."),
    (lambda m, a: m.linalg.solve(a, m.ones(3, dtype=m.float64)), "The solver failed because the input matrix is "
                                                                  "singular."),
])
def test_singular_matrices_raise_linalg_error(m, call, message):
    with pytest.raises(m.linalg.LinAlgError, match=message):
        call(m, m.from_numpy(SINGULAR))
    assert issubclass(m.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("m", LIBS)
def test_lu_factor_of_a_singular_matrix_raises_a_runtime_error(m):
    with pytest.raises(RuntimeError, match=r"linalg.lu_factor: .*U\[3,3\] is zero and using it on lu_solve would "
                                           "result in a division by zero") as raised:
        m.linalg.lu_factor(m.from_numpy(SINGULAR))
    assert not isinstance(raised.value, m.linalg.LinAlgError)


@pytest.mark.parametrize("m", LIBS)
def test_cholesky_of_a_matrix_that_is_not_positive_definite(m):
    batch = m.from_numpy(np.stack([WELL[:2, :2], NOT_POSITIVE]))
    with pytest.raises(m.linalg.LinAlgError, match=r"\(Batch element 1\): The factorization could not be completed "
                                                   r"because the input is not positive-definite \(the leading minor "
                                                   r"of order 2 is not positive-definite\)"):
        m.linalg.cholesky(batch)
    factor, info = m.linalg.cholesky_ex(batch)
    assert info.tolist() == [0, 2] and info.dtype == m.int32


@pytest.mark.parametrize("m", LIBS)
def test_ldl_factor_of_a_singular_matrix(m):
    """LAPACK completes the factorization and reports D's zero: ldl_factor_ex returns it per matrix,
    ldl_factor raises it (PyTorch raises a RuntimeError, with an internal-assert message; ours names
    the zero)."""
    batch = m.from_numpy(np.stack([WELL, np.zeros((3, 3))]))
    LD, pivots, info = m.linalg.ldl_factor_ex(batch)
    assert info.tolist() == [0, 1] and info.dtype == m.int32 and pivots.dtype == m.int32
    with pytest.raises(RuntimeError, match="ldl_factor" if m is torch else
                       r"linalg.ldl_factor\] \(Batch element 1\): D\[0, 0\] is exactly zero"):
        m.linalg.ldl_factor(batch)


@pytest.mark.parametrize("m", LIBS)
def test_ldl_solve_checks_its_pivots_and_right_hand_side(m):
    LD, pivots = m.linalg.ldl_factor(m.from_numpy(WELL))
    b = m.ones(3, 2, dtype=m.float64)
    x64 = m.linalg.ldl_solve(LD, pivots.long(), b)  # any integer pivots
    np.testing.assert_allclose(WELL @ x64.numpy(), np.ones((3, 2)), atol=1e-12)
    with pytest.raises(RuntimeError, match=r"ldl_solve\W+Expected pivots to be integers. Got (Float|float32)"):
        m.linalg.ldl_solve(LD, pivots.float(), b)
    with pytest.raises(RuntimeError, match=r"ldl_solve\W+Expected LD.shape\[:-1\] and pivots.shape to be the same"):
        m.linalg.ldl_solve(LD, pivots[:2], b)
    with pytest.raises(RuntimeError, match="to have the same dtype"):
        m.linalg.ldl_solve(LD, pivots, b.float())
    with pytest.raises(RuntimeError, match="ldl_solve"):
        m.linalg.ldl_solve(LD, pivots, m.ones(4, 2, dtype=m.float64))
    with pytest.raises(IndexError):
        m.linalg.ldl_solve(LD, pivots, m.ones(3, dtype=m.float64))


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("op", ["linalg_ldl_factor_ex", "linalg_ldl_solve"])
def test_ldl_has_no_derivative(m, op):
    A = m.from_numpy(WELL).requires_grad_()
    LD, pivots = m.linalg.ldl_factor(A if op == "linalg_ldl_factor_ex" else A.detach())
    out = LD if op == "linalg_ldl_factor_ex" else m.linalg.ldl_solve(LD, pivots, A)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match=f"derivative for aten::{op} is not implemented"):
        out.sum().backward()


def test_ex_forms_report_infos_as_torch_does():
    for fn in (lambda m, a: m.linalg.inv_ex(a).info, lambda m, a: m.linalg.lu_factor_ex(a).info,
               lambda m, a: m.linalg.solve_ex(a, m.ones(2, 1, 3, 2, dtype=m.float64)).info):
        ours, theirs = (fn(m, m.from_numpy(np.stack([WELL, SINGULAR]))) for m in (tp, torch))
        assert ours.tolist() == theirs.tolist() and tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("a", [SINGULAR, -WELL, WELL, np.zeros((0, 0))], ids=["singular", "negative", "well", "0x0"])
def test_determinants_match_torch(a):
    for fn in (lambda m, x: m.det(x), lambda m, x: m.logdet(x), lambda m, x: m.linalg.slogdet(x).sign,
               lambda m, x: m.linalg.slogdet(x).logabsdet):
        ours, theirs = (fn(m, m.from_numpy(a)).numpy() for m in (tp, torch))
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (4, 2), (2, 4)], ids=["square", "batched", "tall", "wide"])
def test_lu_unpack_and_linalg_lu_give_torchs_permutation(shape):
    a = np.random.default_rng(1).standard_normal(shape)
    results = {}
    for m in (tp, torch):
        LU, pivots = m.linalg.lu_factor(m.from_numpy(a))
        results[m] = [t.numpy() for t in (*m.lu_unpack(LU, pivots), *m.linalg.lu(m.from_numpy(a)))]
    for ours, theirs in zip(results[tp], results[torch]):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
    P, L, U = results[tp][:3]
    np.testing.assert_allclose(P @ L @ U, a, atol=1e-12)


@pytest.mark.parametrize("m", LIBS)
def test_lu_with_infos_does_not_raise(m):
    LU, pivots, infos = m.lu(m.from_numpy(SINGULAR), get_infos=True)
    assert infos.tolist() == 3 or int(infos) == 3


@pytest.mark.parametrize("m", LIBS)
def test_out_forms_keep_their_tensor(m):
    a = m.from_numpy(WELL)
    out = m.empty(0, dtype=m.float64)
    assert m.linalg.det(a, out=out) is out and abs(float(out) - float(m.det(a))) < 1e-12
    inverse = m.empty(3, 3, dtype=m.float64)
    assert m.linalg.inv(a, out=inverse) is inverse
    np.testing.assert_allclose(inverse.numpy() @ WELL, np.eye(3), atol=1e-12)


def test_deprecated_functions_warn_once_per_process(monkeypatch):
    """As PyTorch's (TORCH_WARN_ONCE), which is why torch itself cannot be asked here: an earlier
    test in this process may have used its warnings up."""
    from tensorplay._composites import linalg
    monkeypatch.setattr(linalg, "_warned", set())
    a = tp.from_numpy(WELL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            tp.cholesky(a)
            tp.triangular_solve(tp.ones(3, 1, dtype=tp.float64), a)
            tp.lu_solve(tp.ones(3, 1, dtype=tp.float64), *tp.linalg.lu_factor(a))
    messages = [str(w.message) for w in caught]
    for name in ("torch.cholesky is deprecated", "torch.triangular_solve is deprecated", "torch.lu_solve is deprecated"):
        assert sum(message.startswith(name) for message in messages) == 1


def test_negative_matrix_powers_match_torch():
    for n in (-1, -3):
        ours, theirs = (m.matrix_power(m.from_numpy(WELL), n).numpy() for m in (tp, torch))
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda m, a: m.inverse(a), lambda m, a: m.linalg.cholesky(a @ a.mT + m.eye(3)), lambda m, a: m.matrix_exp(a),
    lambda m, a: m.linalg.solve(a, a), lambda m, a: m.det(a.float()), lambda m, a: m.linalg.svd(a).S,
    lambda m, a: m.linalg.qr(a).R, lambda m, a: m.linalg.eigh(a).eigenvalues, lambda m, a: m.linalg.pinv(a),
    lambda m, a: m.pinverse(a), lambda m, a: m.linalg.matrix_rank(a), lambda m, a: m.linalg.cond(a),
    lambda m, a: m.linalg.lstsq(a, a).solution, lambda m, a: m.linalg.matrix_norm(a, "nuc"),
    lambda m, a: m.orgqr(*m.geqrf(a)),
], ids=["inverse", "cholesky", "matrix_exp", "solve", "det", "svd", "qr", "eigh", "pinv", "pinverse", "matrix_rank",
        "cond", "lstsq", "nuclear_norm", "orgqr"])
def test_output_dtype_under_autocast_matches_torch(fn):
    dtypes = []
    for m in (tp, torch):
        a = m.from_numpy(WELL).float()
        with m.autocast("cpu", dtype=m.bfloat16):
            dtypes.append(str(fn(m, a).dtype).split(".")[-1])
    assert dtypes[0] == dtypes[1]


@pytest.mark.parametrize("fn", [
    lambda m, a, b: m.linalg.solve(a, b), lambda m, a, b: m.linalg.inv(a) @ b,
    lambda m, a, b: m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, dtype=a.dtype)),
    lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), lambda m, a, b: m.det(a),
    lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), lambda m, a, b: m.matrix_exp(a),
    lambda m, a, b: m.linalg.svdvals(a), lambda m, a, b: m.linalg.qr(b), lambda m, a, b: m.linalg.qr(b.mT),
    lambda m, a, b: m.linalg.eigvalsh(a + a.mT), lambda m, a, b: m.linalg.pinv(b),
], ids=["solve", "inv", "cholesky", "solve_triangular", "det", "lu_solve", "matrix_exp", "svdvals", "qr_tall",
        "qr_wide", "eigvalsh", "pinv"])
def test_second_derivatives_match_finite_differences(fn):
    rng = np.random.default_rng(2)
    a = tp.from_numpy(WELL + 0.1 * rng.standard_normal((3, 3))).requires_grad_()
    b = tp.from_numpy(rng.standard_normal((3, 2))).requires_grad_()
    assert tp.autograd.gradgradcheck(lambda x, y: fn(tp, x, y), (a, b))


@pytest.mark.parametrize("m", LIBS)
def test_product_of_two_batch_broadcast_operands(m):
    a = m.tensor([[[0.5, 2.0]]]).expand(3, 1, 2)
    b = m.tensor([[[1.0], [3.0]]]).expand(3, 2, 1)
    assert (a @ b).tolist() == [[[6.5]]] * 3
    assert (b @ a).tolist() == [[[0.5, 2.0], [1.5, 6.0]]] * 3


# (name, call with out=): the ops with several results take a tuple out=.
TUPLE_OUTS = [
    ("triangular_solve", lambda m, a, out: m.triangular_solve(m.ones(3, 2, dtype=m.float64), a, out=out), 2),
    ("lu_unpack", lambda m, a, out: m.lu_unpack(*m.linalg.lu_factor(a), out=out), 3),
    ("lu", lambda m, a, out: m.lu(a, get_infos=True, out=out), 3),
    ("linalg.slogdet", lambda m, a, out: m.linalg.slogdet(a, out=out), 2),
    ("linalg.solve_ex", lambda m, a, out: m.linalg.solve_ex(a, m.ones(3, dtype=m.float64), out=out), 2),
    ("linalg.inv_ex", lambda m, a, out: m.linalg.inv_ex(a, out=out), 2),
    ("linalg.cholesky_ex", lambda m, a, out: m.linalg.cholesky_ex(a, out=out), 2),
    ("linalg.lu_factor", lambda m, a, out: m.linalg.lu_factor(a, out=out), 2),
    ("linalg.lu_factor_ex", lambda m, a, out: m.linalg.lu_factor_ex(a, out=out), 3),
    ("linalg.lu", lambda m, a, out: m.linalg.lu(a, out=out), 3),
    ("linalg.ldl_factor", lambda m, a, out: m.linalg.ldl_factor(a, out=out), 2),
    ("linalg.ldl_factor_ex", lambda m, a, out: m.linalg.ldl_factor_ex(a, out=out), 3),
    ("linalg.qr", lambda m, a, out: m.linalg.qr(a, out=out), 2),
    ("geqrf", lambda m, a, out: m.geqrf(a, out=out), 2),
    ("linalg.eigh", lambda m, a, out: m.linalg.eigh(a, out=out), 2),
    ("svd", lambda m, a, out: m.svd(a, compute_uv=False, out=out), 3),
]


@pytest.mark.parametrize("call, count", [case[1:] for case in TUPLE_OUTS], ids=[case[0] for case in TUPLE_OUTS])
def test_tuple_out_forms_match_torch(call, count):
    results = {}
    for m in (tp, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = m.from_numpy(WELL)
            expected = call(m, a, None)
            out = tuple(m.empty(0, dtype=e.dtype) for e in expected)
            returned = call(m, a, out)
            assert all(r is o for r, o in zip(returned, out))
            with pytest.raises(TypeError, match=f"expected tuple of {count} elements but got 1"):
                call(m, a, out[:1])
        results[m] = [t.numpy() for t in returned]
    for ours, theirs in zip(results[tp], results[torch]):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


# ---- QR, SVD and eigh ----

@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call, message", [
    (lambda m, a: m.geqrf(a).a, "the derivative for 'geqrf' is not implemented"),
    (lambda m, a: m.linalg.qr(a, mode="r").R, "The derivative of linalg.qr depends on Q, which is not computed when "
                                               "mode='r'"),
    (lambda m, a: m.linalg.qr(a[:, :2], mode="complete").Q, "The QR decomposition is not differentiable when "
                                                             "mode='complete' and nrows > ncols"),
], ids=["geqrf", "qr_mode_r", "qr_complete_tall"])
def test_decompositions_without_a_derivative_say_so_in_backward(m, call, message):
    a = m.from_numpy(WELL).requires_grad_()
    result = call(m, a)
    with pytest.raises((RuntimeError, NotImplementedError), match=message):
        result.sum().backward()


@pytest.mark.parametrize("m", LIBS)
def test_svd_of_nan_raises_linalg_error_and_of_inf_returns_nan(m):
    nan = m.from_numpy(array([np.nan, 1.0], [1.0, 2.0]))
    with pytest.raises(m.linalg.LinAlgError, match="The algorithm failed to converge because the input matrix "
                                                   "contained non-finite values"):
        m.linalg.svd(nan)
    assert m.linalg.svdvals(m.from_numpy(array([np.inf, 1.0], [2.0, 3.0]))).isnan().all()


def test_svd_without_vectors_gives_zero_matrices_of_full_size():
    shapes = []
    for m in (tp, torch):
        U, S, V = m.svd(m.ones(2, 4, 3, dtype=m.float64), compute_uv=False)
        assert not U.any() and not V.any()
        shapes.append((tuple(U.shape), tuple(S.shape), tuple(V.shape)))
    assert shapes[0] == shapes[1] == ((2, 4, 4), (2, 3), (2, 3, 3))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_returns_what_each_driver_gives(driver):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    ours, theirs = (m.linalg.lstsq(m.from_numpy(a), m.from_numpy(b), driver=driver) for m in (tp, torch))
    for field in ("solution", "residuals", "rank", "singular_values"):
        x, y = getattr(ours, field), getattr(theirs, field)
        assert tuple(x.shape) == tuple(y.shape) and str(x.dtype)[11:] == str(y.dtype)[6:], field
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)


def test_rank_deficient_least_squares_give_the_minimum_norm_solution():
    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0])  # rank 1
    b = np.arange(8.0).reshape(4, 2)
    ours = tp.linalg.lstsq(tp.from_numpy(a), tp.from_numpy(b))
    assert int(ours.rank) == 1
    np.testing.assert_allclose(ours.solution.numpy(), np.linalg.pinv(a) @ b, atol=1e-12)


def test_pseudo_inverse_tolerances_match_torch():
    a = np.diag([4.0, 1.0, 1e-3])
    for kwargs in ({}, {"atol": 0.5}, {"rtol": 0.1}, {"atol": 0.01, "rtol": 0.5}, {"hermitian": True}):
        ours, theirs = (m.linalg.pinv(m.from_numpy(a), **kwargs).numpy() for m in (tp, torch))
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
        assert int(tp.linalg.matrix_rank(tp.from_numpy(a), **kwargs)) == \
            int(torch.linalg.matrix_rank(torch.from_numpy(a), **kwargs))


def test_singular_vectors_give_gradients_through_gauge_invariant_losses():
    """|U| and U diag(S) V^T do not depend on the signs LAPACK picks: their gradients are torch's."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 3))
    grads = []
    for m in (tp, torch):
        x = m.from_numpy(a).requires_grad_()
        U, S, Vh = m.linalg.svd(x, full_matrices=True)
        L, V = m.linalg.eigh(x.mT @ x)
        (U.abs().sum() + (U[:, :3] * S) @ Vh).sum().backward(retain_graph=True)
        (V.abs() * m.arange(3.0, dtype=m.float64)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["qr", "nuclear_norm"])
def test_deprecated_decompositions_warn_once(monkeypatch, name):
    from tensorplay._composites import linalg
    monkeypatch.setattr(linalg, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            getattr(tp, name)(tp.from_numpy(WELL))
    assert len(caught) == 1 and "deprecated" in str(caught[0].message)


# ---- randomized low-rank SVD and PCA ----

def test_svd_lowrank_recovers_a_low_rank_matrix():
    """A rank-4 matrix is found exactly: its singular values (torch's deterministic SVD's), and
    U diag(S) V^T, tall or wide, batched, with a mean M taken off."""
    tp.manual_seed(0)
    for shape in ((50, 30), (30, 50), (3, 40, 20)):
        A = tp.randn(*shape[:-1], 4, dtype=tp.float64) @ tp.randn(4, shape[-1],
                                                                                           dtype=tp.float64)
        U, S, V = tp.svd_lowrank(A, q=6)
        k = min(6, *shape[-2:])
        assert tuple(U.shape) == (*shape[:-1], k) and tuple(V.shape) == (*shape[:-2], shape[-1], k)
        np.testing.assert_allclose((U @ tp.diag_embed(S) @ V.mT).numpy(), A.numpy(), atol=1e-10)
        exact = torch.linalg.svdvals(torch.from_numpy(A.numpy()))[..., :4]
        np.testing.assert_allclose(S[..., :4].numpy(), exact.numpy(), rtol=1e-10)
    A = tp.randn(50, 3, dtype=tp.float64) @ tp.randn(3, 30, dtype=tp.float64)
    M = tp.ones(1, 30, dtype=tp.float64)
    U, S, V = tp.svd_lowrank(A + M, q=4, M=M)
    np.testing.assert_allclose((U @ tp.diag(S) @ V.mT).numpy(), A.numpy(), atol=1e-10)


def test_pca_lowrank_centres_and_checks_q():
    tp.manual_seed(1)
    samples = tp.randn(200, 3, dtype=tp.float64) @ tp.tensor(
        [[3.0, 0.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0, 0.0]], dtype=tp.float64)
    samples = samples + 5  # the mean, which centring removes
    U, S, V = tp.pca_lowrank(samples, q=3)
    centred = torch.from_numpy(samples.numpy()) - torch.from_numpy(samples.numpy()).mean(0)
    np.testing.assert_allclose(S.numpy(), torch.linalg.svdvals(centred)[:3].numpy(), rtol=1e-10)
    assert [tuple(t.shape) for t in tp.pca_lowrank(samples)] == [(200, 5), (5,), (5, 5)]
    for q in (-1, 6):
        with pytest.raises(ValueError, match=rf"q\(={q}\) must be non-negative integer and not greater than "
                                             r"min\(m, n\)=5"):
            tp.pca_lowrank(samples, q=q)


def test_svd_lowrank_is_differentiable():
    """The same random probe in each call (a fixed seed), so gradcheck sees one function."""
    A = tp.randn(8, 5, dtype=tp.float64, requires_grad=True)

    def singular_values(a):
        tp.manual_seed(3)
        return tp.svd_lowrank(a, q=3, niter=1)[1]
    assert tp.autograd.gradcheck(singular_values, (A,))


# ---- the general eigendecomposition: complex inputs, gradients and errors ----

def eig_input(m, dtype, seed=0, shape=(2, 4, 4)):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.normal(size=shape)
    return m.tensor(a.astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig_values_and_vectors_as_torch(dtype):
    """The eigenvalues in LAPACK's order, and eigenvectors (of norm 1) that agree up to each column's
    phase, which the two LAPACKs choose differently: compared through their moduli, and checked to
    be eigenvectors."""
    (L, V), (TL, TV) = (tp.linalg.eig(eig_input(tp, dtype)), torch.linalg.eig(eig_input(torch, dtype)))
    assert str(L.dtype).split(".")[-1] == str(TL.dtype).split(".")[-1] == str(V.dtype).split(".")[-1]
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    np.testing.assert_allclose(L.numpy(), TL.numpy(), atol=tol)
    np.testing.assert_allclose(np.abs(V.numpy()), np.abs(TV.numpy()), atol=tol)
    A = eig_input(tp, dtype).numpy().astype(np.complex128)
    np.testing.assert_allclose(A @ V.numpy(), V.numpy() * L.numpy()[..., None, :], atol=10 * tol)
    np.testing.assert_allclose(tp.linalg.eigvals(eig_input(tp, dtype)).numpy(), L.numpy())


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig_gradients_as_torch(dtype):
    """A loss that does not depend on the eigenvectors' phases (which are a choice): the eigenvalues'
    moduli and the eigenvectors' elementwise moduli, weighted, and eigvals' real parts."""
    rng = np.random.default_rng(1)
    w1, w2 = rng.normal(size=3), rng.normal(size=(3, 3))

    def grad(m):
        A = eig_input(m, dtype, seed=2, shape=(3, 3)).requires_grad_()
        L, V = m.linalg.eig(A)
        loss = (L.abs() ** 2 * m.tensor(w1)).sum() + (V.abs() * m.tensor(w2)).sum() + m.linalg.eigvals(A).real.sum()
        loss.backward()
        return A.grad.numpy()
    np.testing.assert_allclose(grad(tp), grad(torch), atol=1e-10)


def test_eig_second_derivatives():
    A = eig_input(tp, "float64", seed=3, shape=(3, 3)).requires_grad_()
    assert tp.autograd.gradgradcheck(lambda x: tp.linalg.eigvals(x).abs(), (A,))


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call, kind", [
    (lambda m: m.linalg.eig(m.ones(2, 3)), RuntimeError),
    (lambda m: m.linalg.eig(m.ones(3)), RuntimeError),
    (lambda m: m.linalg.eig(m.ones(2, 2, dtype=m.int64)), RuntimeError),
    (lambda m: m.linalg.eigvals(m.ones(2, 2, dtype=m.float16)), NotImplementedError),
    (lambda m: m.linalg.eig(m.tensor([[float("nan"), 1.0], [0.0, 1.0]])), RuntimeError),
    (lambda m: m.linalg.eig(m.tensor([[1.0, float("inf")], [0.0, 1.0]])), RuntimeError),
], ids=["not square", "1-d", "int64", "float16", "nan", "inf"])
def test_eig_errors(m, call, kind):
    with pytest.raises(kind):
        call(m)


def test_eigvals_of_a_matrix_that_is_not_finite_are_nan():
    """eigvals (without a gradient to compute) does not check, as PyTorch's does not: such a matrix's
    eigenvalues are NaN (PyTorch's are what its LAPACK leaves: NaN in some), the other matrices' as
    they are."""
    def run(m):
        a = m.tensor([[[1.0, float("inf")], [0.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]], [[float("nan"), 0.0], [0.0, 1.0]]])
        return m.linalg.eigvals(a).numpy()
    ours, theirs = run(tp), run(torch)
    assert np.isnan(ours[[0, 2]]).all() and np.isnan(theirs[[0, 2]]).any(axis=1).all()
    np.testing.assert_allclose(ours[1], theirs[1])


def test_eig_under_autocast_runs_in_float32():
    for m in (tp, torch):
        with m.autocast("cpu"):
            L, V = m.linalg.eig(m.ones(3, 3, dtype=m.bfloat16) + m.eye(3, dtype=m.bfloat16))
        assert str(L.dtype).endswith("complex64") and str(V.dtype).endswith("complex64")

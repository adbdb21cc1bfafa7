// The spectral decompositions, A = U diag(S) V^H (SVD), A = V diag(L) V^H for Hermitian A (eigh)
// and A = V diag(L) V^-1 for any square A (eig, complex L and V), over the backend's LAPACK
// kernels (dispatch/backend.h), with their backward nodes.
// Results are column-major, as PyTorch's are. The pseudo-inverse, ranks, condition numbers and
// spectral norms are composites of these (tensorplay/_composites/linalg.py, linalg.cpp).
//
// Derivatives, real and complex, written with public ops so that double backward works; ^H is the
// conjugate transpose, E[i, j] = S[j]^2 - S[i]^2 (L[j] - L[i] for eigh) off the diagonal:
//   SVD:  gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS) + i Im diag(U^H gU - V^H gV) / 2S] V^H
//              + (I - U U^H) gU S^{-1} V^H + U S^{-1} gV^H (I - V V^H),   skew(X) = X - X^H
//         (the quotient off the diagonal only; the last two terms only for a non-square A); with
//         full_matrices, the vectors past min(m, n) do not enter (as in PyTorch, their gradient is
//         dropped).
//   eigh: gA = V [skew(V^H gV) / 2E + diag(gL)] V^H (V's gradient taken on the unitary matrices'
//         tangent space, so gA is Hermitian).
//   eig:  gA = V^-H [(V^H gV - V^H V Re(diag(V^H gV))) / conj(E) + diag(gL)] V^H (off the diagonal,
//         the quotient; on it, gL), its real part for a real A. The second term keeps V's columns
//         of norm 1, as LAPACK normalises them.
// Complex singular vectors and eigenvectors are defined up to a phase e^{i phi} per column, so a
// loss of them must not depend on it: PyTorch checks that, and so do these nodes (see
// check_phase_invariant).
// All are infinite where singular values (eigenvalues) repeat, as in PyTorch.

#include <cmath>
#include <string>

#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/matrix_batches.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

using namespace matrix_batches;

// values[..., j] - values[..., i] at [..., i, j], with ones on the diagonal.
Tensor differences(const Tensor& values) {
  Tensor d = sub(unsqueeze(values, -2), unsqueeze(values, -1));
  return add(d, eye(values.size(-1), {}, values.dtype(), values.device()));
}

// A diagonal matrix [..., n, n] of v [..., n].
Tensor diagonal_matrix(const Tensor& v) { return mul(unsqueeze(v, -1), eye(v.size(-1), {}, v.dtype(), v.device())); }

Tensor skew(const Tensor& x) { return sub(x, mH(x)); }

// Ones off the diagonal of [n, n] matrices, zeros on it.
Tensor off_diagonal(int64_t n, ScalarType dtype, Device device) { return rsub(eye(n, {}, dtype, device), 1); }

// PyTorch's check that a loss does not depend on the phases of complex vectors: the imaginary part
// of diag(V^H gV) (for the SVD, of U's and V's together) is zero up to `tolerance`.
void check_phase_invariant(const Tensor& imaginary_diagonal, double tolerance, const char* message) {
  if (!imaginary_diagonal.device().is_cpu() || imaginary_diagonal.numel() == 0) return;
  TP_CHECK(!any(gt(abs(imaginary_diagonal), tolerance)).item().to_bool(), message);
}

// Its outputs are U, S and Vh even where the op returns S alone (svdvals): the gradient is written
// with U and Vh, whose own history must be this node for second derivatives.
class SvdBackward final : public autograd::Node {
 public:
  std::string name() const override { return "LinalgSvdBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor U = u_.unpack(*this), S = s_.unpack(*this), Vh = vh_.unpack(*this);
    const int64_t k = S.size(-1);
    if (U.size(-1) != k) U = narrow(U, -1, 0, k);
    if (Vh.size(-2) != k) Vh = narrow(Vh, -2, 0, k);
    Tensor gU = grads[0], gS = grads[1], gVh = grads[2];
    // With full_matrices, only the first k singular vectors are determined by A.
    if (gU.defined() && gU.size(-1) != k) gU = narrow(gU, -1, 0, k);
    if (gVh.defined() && gVh.size(-2) != k) gVh = narrow(gVh, -2, 0, k);
    if (!gU.defined() && !gVh.defined()) return {gS.defined() ? matmul(mul(U, unsqueeze(gS, -2)), Vh) : Tensor()};
    Tensor V = mH(Vh), gV = gVh.defined() ? mH(gVh) : Tensor();
    const Tensor rows = unsqueeze(S, -1), cols = unsqueeze(S, -2);
    Tensor core, UhgU, VhgV;
    if (gU.defined()) {
      UhgU = matmul(mH(U), gU);
      core = mul(skew(UhgU), cols);
    }
    if (gV.defined()) {
      VhgV = matmul(Vh, gV);
      Tensor right = mul(rows, skew(VhgV));
      core = core.defined() ? add(core, right) : right;
    }
    core = mul(div(core, differences(mul(S, S))), off_diagonal(k, S.dtype(), S.device()));
    if (is_complex(U.dtype())) {
      // Turning U's and V's columns by the same phases moves neither A nor (the check) the loss;
      // turning them apart is the imaginary part of diag(U^H dA V) / S.
      const Tensor im_u = UhgU.defined() ? imag(diagonal(UhgU, 0, -2, -1)) : zeros_like(S);
      const Tensor im_v = VhgV.defined() ? imag(diagonal(VhgV, 0, -2, -1)) : zeros_like(S);
      check_phase_invariant(add(im_u, im_v), 5e-3,
                            "[linalg.svd] svd_backward: The singular vectors in the complex case are specified up to "
                            "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                            "making it ill-defined.");
      core = add(core, diagonal_matrix(complex(zeros_like(S), div(sub(im_u, im_v), mul(S, 2)))));
    }
    if (gS.defined()) core = add(core, diagonal_matrix(gS));
    Tensor gA = matmul(matmul(U, core), Vh);
    const int64_t m = U.size(-2), n = Vh.size(-1);
    if (gU.defined() && m > k) gA = add(gA, matmul(div(sub(gU, matmul(U, UhgU)), cols), Vh));
    if (gV.defined() && n > k) gA = add(gA, matmul(U, mH(div(sub(gV, matmul(V, VhgV)), cols))));
    return {gA};
  }
  void release_saved() override {
    u_.release();
    s_.release();
    vh_.release();
  }
  autograd::SavedTensor u_, s_, vh_;
};

// Its outputs are L and V even where the op returns L alone (eigvalsh), as SvdBackward's.
class EighBackward final : public autograd::Node {
 public:
  std::string name() const override { return "LinalgEighBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor L = l_.unpack(*this), V = v_.unpack(*this);
    const Tensor &gL = grads[0], &gV = grads[1];
    Tensor core;
    if (gV.defined()) {
      const Tensor VhgV = matmul(mH(V), gV);
      if (is_complex(V.dtype()))
        check_phase_invariant(imag(diagonal(VhgV, 0, -2, -1)), 1e-2,
                              "[linalg.eigh] linalg_eigh_backward: The eigenvectors in the complex case are specified "
                              "up to multiplication by e^{i phi}. The specified loss function depends on this "
                              "quantity, so it is ill-defined.");
      core = mul(div(mul(skew(VhgV), 0.5), differences(L)), off_diagonal(L.size(-1), L.dtype(), L.device()));
    }
    if (gL.defined()) core = core.defined() ? add(core, diagonal_matrix(gL)) : diagonal_matrix(gL);
    if (!core.defined()) return {Tensor()};
    return {matmul(matmul(V, to(core, V.dtype())), mH(V))};  // (gL alone gives a real core)
  }
  void release_saved() override {
    l_.release();
    v_.release();
  }
  autograd::SavedTensor l_, v_;
};

class EigBackward final : public autograd::Node {
 public:
  explicit EigBackward(bool complex_input) : complex_input_(complex_input) {}
  std::string name() const override { return "LinalgEigBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor L = l_.unpack(*this), V = v_.unpack(*this);
    const Tensor &gL = grads[0], &gV = grads[1];
    if (!gL.defined() && !gV.defined()) return {Tensor()};
    const Tensor VH = mH(V);
    Tensor core = zeros_like(V);
    if (gV.defined()) {
      const Tensor VHgV = matmul(VH, gV);
      const Tensor norm_term = matmul(VH, mul(V, unsqueeze(real(diagonal(VHgV, 0, -2, -1)), -2)));
      core = mul(div(sub(VHgV, norm_term), differences(conj(L))),
                 off_diagonal(L.size(-1), real_part_type(L.dtype()), L.device()));
    }
    if (gL.defined()) core = add(core, diagonal_matrix(gL));
    Tensor gA = linalg_solve(VH, matmul(core, VH));
    return {complex_input_ ? gA : real(gA)};
  }
  void release_saved() override {
    l_.release();
    v_.release();
  }
  bool complex_input_;
  autograd::SavedTensor l_, v_;
};

void check_not_nan(const Tensor& A) {
  if (!A.device().is_cpu() || A.numel() == 0) return;
  TP_CHECK_KIND(ErrorKind::LinAlg, !any(isnan(A)).item().to_bool(), "[linalg.svd] The algorithm ",
                "failed to converge because the input matrix contained non-finite values.");
}

struct Svd {
  Tensor U, S, Vh;
};

Svd svd(const char* op, const Tensor& A, bool full_matrices, bool compute_uv) {
  check_matrices(op, A);
  autograd::Record<SvdBackward> record({&A});
  // The gradient of the singular values needs the vectors.
  const bool vectors = compute_uv || record;
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  // gesdd refuses a NaN as an argument error; PyTorch reports it as a failure.
  check_not_nan(A);
  const Shape batch = batch_shape(A);
  const int64_t batches = count(batch);
  const bool full = full_matrices && compute_uv;
  Tensor a = column_major(A, batch);
  Tensor s = empty({batches, k}, real_value_type(A.dtype()), A.device());
  Tensor u = vectors ? empty_column_major(batches, m, full ? m : k, A) : Tensor();
  Tensor vh = vectors ? empty_column_major(batches, full ? n : k, n, A) : Tensor();
  Tensor info = zeros({batches}, ScalarType::Int32, A.device());
  backend(A.device()).svd(a, s, u, vh, info);
  if (vectors && k == 0) {  // LAPACK leaves them unset; PyTorch's are the identity
    u = column_major(eye(m, u.size(2), A.dtype(), A.device()), {batches});
    vh = column_major(eye(vh.size(1), n, A.dtype(), A.device()), {batches});
  }
  check_infos("linalg.svd", info, !batch.empty(), [](int code) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "singular values (error code: " +
           std::to_string(code) + ").";
  });
  Svd result{Tensor(), reshape(s, with_vector(batch, k)), Tensor()};
  if (vectors) {
    result.U = reshape(u, with_matrix(batch, m, u.size(2)));
    result.Vh = reshape(vh, with_matrix(batch, vh.size(1), n));
  }
  // Saved once they are outputs, so that each keeps its place among them.
  record.finish(result.U, result.S, result.Vh);
  if (record) {
    record->u_ = autograd::SavedTensor(result.U, true);
    record->s_ = autograd::SavedTensor(result.S, true);
    record->vh_ = autograd::SavedTensor(result.Vh, true);
  }
  if (!compute_uv) result.U = result.Vh = Tensor();
  return result;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  Svd r = svd("linalg.svd", A, full_matrices, true);
  return {r.U, r.S, r.Vh};
}

Tensor linalg_svdvals(const Tensor& A) { return svd("linalg.svdvals", A, false, false).S; }

std::pair<Tensor, Tensor> linalg_eigh(const Tensor& A, bool upper, bool compute_v) {
  const char* op = compute_v ? "linalg.eigh" : "linalg.eigvalsh";
  check_square(op, A);
  autograd::Record<EighBackward> record({&A});
  const bool vectors = compute_v || record;
  const Shape batch = batch_shape(A);
  const int64_t batches = count(batch), n = A.size(-1);
  Tensor a = column_major(A, batch);
  Tensor w = empty({batches, n}, real_value_type(A.dtype()), A.device());
  Tensor info = zeros({batches}, ScalarType::Int32, A.device());
  backend(A.device()).eigh(a, w, info, upper, vectors);
  check_infos("linalg.eigh", info, !batch.empty(), [](int code) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " +
           std::to_string(code) + ").";
  });
  Tensor L = reshape(w, with_vector(batch, n));
  Tensor V = vectors ? reshape(a, with_matrix(batch, n, n)) : Tensor();
  record.finish(L, V);
  if (record) {
    record->l_ = autograd::SavedTensor(L, true);
    record->v_ = autograd::SavedTensor(V, true);
  }
  return {L, compute_v ? V : Tensor()};
}

std::pair<Tensor, Tensor> linalg_eig(const Tensor& A, bool compute_v) {
  const char* op = compute_v ? "linalg.eig" : "linalg.eigvals";
  TP_CHECK(A.dim() >= 2, "[", op, "] The input tensor A must have at least 2 dimensions.");
  check_square("linalg.eig", A);
  TP_CHECK(is_floating_point(A.dtype()) || is_complex(A.dtype()), "[", op, "] Unknown Complex ScalarType for ",
           name(A.dtype()));
  TP_CHECK_KIND(ErrorKind::NotImplemented, A.dtype() != ScalarType::Float16 && A.dtype() != ScalarType::BFloat16,
                "[", op, "] \"linalg_eig_out_cpu\" not implemented for '", name(A.dtype()), "'");
  autograd::Record<EigBackward> record({&A}, is_complex(A.dtype()));
  const bool vectors = compute_v || record;
  const Shape batch = batch_shape(A);
  const int64_t batches = count(batch), n = A.size(-1);
  const ScalarType values_type = is_complex(A.dtype()) ? A.dtype() : complex_type_of(A.dtype());
  Tensor a = column_major(A, batch);
  // A matrix with an inf or NaN is refused where eigenvectors are asked for, and has NaN
  // eigenvalues otherwise, as in PyTorch; LAPACK never sees it.
  Tensor finite;
  if (A.device().is_cpu() && a.numel() > 0) {
    const Tensor elements = is_complex(a.dtype()) ? logical_and(isfinite(real(a)), isfinite(imag(a))) : isfinite(a);
    finite = all(elements, {1, 2});
    if (!all(finite).item().to_bool()) {
      TP_CHECK(!vectors, "[", op, "] input tensor should not contain infs or NaNs.");
      a = where(unsqueeze(unsqueeze(finite, 1), 2), a, zeros_like(a));
    } else {
      finite = Tensor();
    }
  }
  Tensor w = empty({batches, n}, values_type, A.device());
  Tensor v = vectors ? empty_column_major(batches, n, n, w) : Tensor();
  Tensor info = zeros({batches}, ScalarType::Int32, A.device());
  backend(A.device()).eig(a, w, v, info);
  check_infos(op, info, !batch.empty(), [](int code) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " +
           std::to_string(code) + ").";
  });
  if (finite.defined()) w = where(unsqueeze(finite, 1), w, full_like(w, std::nan("")));
  Tensor L = reshape(w, with_vector(batch, n));
  Tensor V = vectors ? reshape(v, with_matrix(batch, n, n)) : Tensor();
  record.finish(L, V);
  if (record) {
    record->l_ = autograd::SavedTensor(L, true);
    record->v_ = autograd::SavedTensor(V, true);
  }
  return {L, compute_v ? V : Tensor()};
}

}  // namespace tp

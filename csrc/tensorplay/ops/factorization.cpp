// Matrix factorizations (LU, Cholesky, QR) and the solves built on them, over the backend's LAPACK
// kernels (dispatch/backend.h), with their backward nodes. The kernels read and write column-major
// matrices, so these ops copy their inputs into that layout and return results in it, as PyTorch's
// do. Determinants, inverses and the rest of torch.linalg's solvers are composites of these
// (tensorplay/_composites/linalg.py).
//
// Derivatives (A = P L U; L L^H = A; X = A^{-1} B), real and complex, follow PyTorch's, written
// with public ops so that double backward works; ^H is the conjugate transpose (the transpose of a
// real matrix):
//   LU:         gA = P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}, for square A
//   Cholesky:   gA = herm(L^{-H} Phi(L^H gL) L^{-1}), Phi = the lower triangle with its diagonal
//               halved, herm(X) = (X + X^H) / 2
//   QR:         gA = [gQ + Q copyutl(gR R^H - Q^H gQ)] R^{-H} for m >= n (see qr_backward_tall); for
//               m < n, A = [X | Y] splits into a square QR and Y = Q R2
//   solves:     gB = A^{-H} g and gA = -gB X^H (left); gB = g A^{-H} and gA = -X^H gB (right),
//               gA kept to A's triangle for a triangular A, or carried to L and U for lu_solve.

#include <algorithm>
#include <string>

#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/matrix_batches.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

using namespace matrix_batches;

// PyTorch's checks of a system A X = B (left) or X A = B: A (named `coefficient`) square
// matrices, B matrices of A's dtype and of a matching size.
void check_system(const char* op, const Tensor& A, const Tensor& B, bool left, const char* coefficient = "A") {
  check_square(op, A, coefficient);
  check_matrices(op, B, "B");
  TP_CHECK(A.dtype() == B.dtype(), "[", op, "] Expected ", coefficient, " and B to have the same dtype, but found ",
           coefficient, " of type ", name(A.dtype()), " and B of type ", name(B.dtype()), " instead");
  const int64_t n = A.size(-1);
  TP_CHECK(left ? B.size(-2) == n : B.size(-1) == n, "[", op, "] Incompatible shapes of A and B for the equation ",
           left ? "AX = B (" : "XA = B (", n, "x", n, " and ", B.size(-2), "x", B.size(-1), ")");
}

// X of op(A) X = B (left) or X op(A) = B, B's matrices broadcast to `batch`: solve(x, adjoint)
// overwrites x, a column-major copy of B, with the solution of op(A) x = B, where op is the
// conjugate transpose when asked. X op(A) = B is op(A)^H X^H = B^H.
template <class Solve>
Tensor solve_for(const Tensor& B, IntArrayRef batch, bool left, bool adjoint, const Solve& solve) {
  Tensor x = column_major(left ? B : mH(B), batch);
  solve(x, left ? adjoint : !adjoint);
  x = reshape(x, with_matrix(batch, x.size(1), x.size(2)));
  return left ? x : mH(x);
}

// The pivots [count(from), n] of an LU batch, broadcast to `batch`: [count(batch), n].
Tensor broadcast_pivots(const Tensor& pivots, IntArrayRef from, IntArrayRef batch, int64_t n) {
  Shape sizes = with_matrix(from, 1, n), broadcast = with_matrix(batch, 1, n);
  return contiguous(reshape(expand(reshape(pivots, sizes), broadcast), {count(batch), n}));
}

// ---- LU ----

// From LAPACK's sequential row swaps, [..., rows] int64: row i of A is row perm[i] of L U, or
// (transposed) row i of L U is row perm[i] of A.
Tensor permutation_from_pivots(const Tensor& pivots, int64_t rows, bool transposed = false) {
  TP_CHECK(pivots.dim() >= 1 && pivots.dtype() == ScalarType::Int32, "[lu_unpack] expected pivots of at least one ",
           "dimension and dtype int32, got ", to_string(pivots.sizes()), " ", name(pivots.dtype()));
  TP_CHECK(rows >= 0, "[lu_unpack] expected a non-negative number of rows, got ", rows);
  Shape sizes(pivots.sizes().begin(), pivots.sizes().end() - 1);
  sizes.push_back(rows);
  if (pivots.device().is_meta()) return empty(sizes, ScalarType::Int64, pivots.device());  // no values to read
  const int64_t batches = count(IntArrayRef(sizes).first(sizes.size() - 1));               // (no -1: k may be 0)
  Tensor flat = contiguous(reshape(to(pivots, Device(DeviceType::CPU)), {batches, pivots.size(-1)}));
  const int64_t k = flat.size(1);
  Tensor perm = empty({batches, rows}, ScalarType::Int64);
  const int* piv = static_cast<const int*>(flat.data_ptr());
  int64_t* out = static_cast<int64_t*>(perm.data_ptr());
  for (int64_t b = 0; b < batches; ++b) {
    int64_t* p = out + b * rows;
    for (int64_t i = 0; i < rows; ++i) p[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = piv[b * k + i] - 1;
      TP_CHECK(j >= 0 && j < rows, "[lu_unpack] invalid pivot ", j + 1, " at position ", i + 1, " of ", rows, " rows");
      std::swap(p[i], p[j]);
    }
  }
  // (P^T A) holds A's rows in the order the swaps left them: A's row p[i] is row i of L U.
  if (transposed) return to(reshape(perm, sizes), pivots.device());
  Tensor inverse = empty({batches, rows}, ScalarType::Int64);
  int64_t* inv = static_cast<int64_t*>(inverse.data_ptr());
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < rows; ++i) inv[b * rows + out[b * rows + i]] = i;
  return to(reshape(inverse, sizes), pivots.device());
}

// The unit lower triangle L and the upper triangle U packed in a square LU.
std::pair<Tensor, Tensor> unpack_lu(const Tensor& lu) {
  return {add(triangle(lu, false, -1), eye(lu.size(-1), {}, lu.dtype(), lu.device())), triangle(lu, true)};
}

// P @ m (or P^T @ m) for the permutation of the pivots, m: [..., rows, cols].
Tensor permute_rows(const Tensor& m, const Tensor& pivots, bool transposed = false) {
  Tensor perm = unsqueeze(permutation_from_pivots(pivots, m.size(-2), transposed), -1);
  Shape sizes(m.sizes().begin(), m.sizes().end());
  return gather(m, -2, expand(perm, sizes));
}

class LuFactorBackward final : public autograd::Node {
 public:
  std::string name() const override { return "LinalgLuFactorExBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor lu = lu_.unpack(*this), piv = pivots_.unpack(*this);
    const Tensor& g = grads[0];
    auto [L, U] = unpack_lu(lu);
    Tensor phi = add(triangle(matmul(mH(L), triangle(g, false, -1)), false, -1),
                     triangle(matmul(triangle(g, true), mH(U)), true));
    // L^{-H} phi U^{-H}: a left solve with L^H (upper, unit diagonal), then a right one with U^H.
    Tensor left = linalg_solve_triangular(mH(L), phi, true, true, true);
    return {permute_rows(linalg_solve_triangular(mH(U), left, false, false, false), piv)};
  }
  void release_saved() override {
    lu_.release();
    pivots_.release();
  }
  autograd::SavedTensor lu_, pivots_;
};

// ---- Cholesky ----

class CholeskyBackward final : public autograd::Node {
 public:
  explicit CholeskyBackward(bool upper) : upper_(upper) {}
  std::string name() const override { return "LinalgCholeskyExBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor L = factor_.unpack(*this), gL = grads[0];
    if (upper_) {
      L = mH(L);
      gL = mH(gL);
    }
    Tensor product = matmul(mH(L), gL);
    Tensor phi = add(triangle(product, false, -1), mul(triangle(triangle(product, false), true), 0.5));
    // L^{-H} phi L^{-1}: a left solve with L^H, then a right one with L.
    Tensor gA = linalg_solve_triangular(L, linalg_solve_triangular(mH(L), phi, true, true, false), false, false, false);
    return {mul(add(gA, mH(gA)), 0.5)};
  }
  void release_saved() override { factor_.release(); }
  autograd::SavedTensor factor_;

 private:
  bool upper_;
};

// ---- solves ----

// The coefficient's gradient of a solve, from the right-hand side's gradient gB and the solution
// X: -gB X^H for op(A) X = B (left), -X^H gB for X op(A) = B.
Tensor coefficient_grad(const Tensor& gB, const Tensor& X, bool left) {
  return neg(left ? matmul(gB, mH(X)) : matmul(mH(X), gB));
}

// What a solve's backward reads: the coefficient A and the solution X.
class SolveNode : public autograd::Node {
 public:
  void release_saved() override {
    a_.release();
    x_.release();
  }
  autograd::SavedTensor a_, x_;
};

class SolveBackward final : public SolveNode {
 public:
  explicit SolveBackward(bool left) : left_(left) {}
  std::string name() const override { return "LinalgSolveExBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor A = a_.unpack(*this), X = x_.unpack(*this);
    Tensor gB = linalg_solve(mH(A), grads[0], left_);
    return {needs_input_grad(0) ? coefficient_grad(gB, X, left_) : Tensor(), gB};
  }

 private:
  bool left_;
};

class TriangularSolveBackward final : public SolveNode {
 public:
  TriangularSolveBackward(bool upper, bool left, bool unitriangular)
      : upper_(upper), left_(left), unitriangular_(unitriangular) {}
  std::string name() const override { return "LinalgSolveTriangularBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor A = a_.unpack(*this), X = x_.unpack(*this);
    Tensor gB = linalg_solve_triangular(mH(A), grads[0], !upper_, left_, unitriangular_);
    Tensor gA;
    if (needs_input_grad(0))
      gA = triangle(coefficient_grad(gB, X, left_), upper_, unitriangular_ ? (upper_ ? 1 : -1) : 0);
    return {gA, gB};
  }

 private:
  bool upper_, left_, unitriangular_;
};

// With respect to LU: X is a function of A = P L U, so A's gradient (as for linalg.solve) is
// carried to L and U: gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA).
class LuSolveBackward final : public autograd::Node {
 public:
  LuSolveBackward(bool left, bool adjoint) : left_(left), adjoint_(adjoint) {}
  std::string name() const override { return "LinalgLuSolveBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor lu = lu_.unpack(*this), piv = pivots_.unpack(*this);
    Tensor gB = linalg_lu_solve(lu, piv, grads[0], left_, !adjoint_);
    Tensor gLU;
    if (needs_input_grad(0)) {
      Tensor X = x_.unpack(*this);
      // With op(A) = A^H, A's gradient is the conjugate transpose of op(A)'s.
      Tensor gA = coefficient_grad(gB, X, left_);
      Tensor gPA = permute_rows(adjoint_ ? mH(gA) : gA, piv, true);
      auto [L, U] = unpack_lu(lu);
      gLU = add(triangle(matmul(gPA, mH(U)), false, -1), triangle(matmul(mH(L), gPA), true));
    }
    return {gLU, gB};
  }
  void release_saved() override {
    lu_.release();
    pivots_.release();
    x_.release();
  }
  autograd::SavedTensor lu_, pivots_, x_;

 private:
  bool left_, adjoint_;
};

// ---- LDL ----

// PyTorch defines no derivative for the LDL factorization and its solve: an output that reaches
// backward is an error there, named by the ATen op.
class NoDerivativeBackward final : public autograd::Node {
 public:
  explicit NoDerivativeBackward(std::string aten_op) : aten_op_(std::move(aten_op)) {}
  std::string name() const override { return "NotImplemented"; }
  TensorList apply(TensorList&&) override { TP_FAIL("derivative for aten::", aten_op_, " is not implemented"); }

 private:
  std::string aten_op_;
};

// ---- QR ----

class GeqrfBackward final : public autograd::Node {
 public:
  std::string name() const override { return "GeqrfBackward0"; }
  TensorList apply(TensorList&&) override {
    TP_NOT_IMPLEMENTED("[geqrf] the derivative for 'geqrf' is not implemented.");
  }
};

// gA of A = Q R with m >= n (Q: m x n, R: n x n): [gQ + Q copyutl(M)] R^{-H}, M = gR R^H - Q^H gQ,
// where copyutl(M) is M's strict upper triangle mirrored (conjugated) onto its lower one, with the
// real part of M's diagonal: R's diagonal is real, so the imaginary part there moves Q alone, and
// Q^H dQ is skew-Hermitian.
Tensor qr_backward_tall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor M;
  if (gR.defined()) M = matmul(gR, mH(R));
  if (gQ.defined()) M = M.defined() ? sub(M, matmul(mH(Q), gQ)) : neg(matmul(mH(Q), gQ));
  const Tensor strict_upper = triangle(M, true, 1);
  const Tensor diagonal_part = sub(triangle(M, true), strict_upper);
  Tensor b = matmul(Q, add(add(strict_upper, mH(strict_upper)), real(diagonal_part)));
  if (gQ.defined()) b = add(b, gQ);
  return linalg_solve_triangular(mH(R), b, false, false, false);  // b R^{-H}
}

class QrBackward final : public autograd::Node {
 public:
  explicit QrBackward(std::string mode) : mode_(std::move(mode)) {}
  std::string name() const override { return "LinalgQrBackward0"; }
  TensorList apply(TensorList&& grads) override {
    TP_CHECK(mode_ != "r", "[linalg.qr] The derivative of linalg.qr depends on Q, which is not computed when ",
             "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
    Tensor Q = q_.unpack(*this), R = r_.unpack(*this);
    const int64_t m = Q.size(-2), n = R.size(-1);
    TP_CHECK(mode_ != "complete" || m <= n, "[linalg.qr] The QR decomposition is not differentiable when ",
             "mode='complete' and nrows > ncols.");
    const Tensor &gQ = grads[0], &gR = grads[1];
    if (m >= n) return {qr_backward_tall(gQ, gR, Q, R)};
    // A = [X | Y] with X square: X = Q R1 and Y = Q R2, so Y's gradient is Q gR2 and R2 = Q^H Y
    // adds Y gR2^H (= Q R2 gR2^H) to Q's.
    Tensor R1 = narrow(R, -1, 0, m), R2 = narrow(R, -1, m, n - m);
    Tensor gR1 = gR.defined() ? narrow(gR, -1, 0, m) : Tensor(), gR2 = gR.defined() ? narrow(gR, -1, m, n - m) : Tensor();
    Tensor gQ1 = gQ, gY;
    if (gR2.defined()) {
      Tensor through_y = matmul(Q, matmul(R2, mH(gR2)));
      gQ1 = gQ1.defined() ? add(gQ1, through_y) : through_y;
      gY = matmul(Q, gR2);
    } else {
      gY = zeros(with_matrix(batch_shape(Q), m, n - m), Q.dtype(), Q.device());
    }
    return {cat({qr_backward_tall(gQ1, gR1, Q, R1), gY}, -1)};
  }
  void release_saved() override {
    q_.release();
    r_.release();
  }
  autograd::SavedTensor q_, r_;

 private:
  std::string mode_;
};

// The reflectors and their scales of each matrix's QR factorization: [count(batch), m, n]
// (column-major) and [count(batch), min(m, n)].
std::pair<Tensor, Tensor> householder_qr(const Tensor& A, IntArrayRef batch) {
  Tensor a = column_major(A, batch);
  Tensor tau = empty({count(batch), std::min(A.size(-2), A.size(-1))}, A.dtype(), A.device());
  backend(A.device()).qr_factor(a, tau);
  return {a, tau};
}

// B of linalg.solve taken as a vector: [..., n] where A is [..., n, n] (PyTorch's rule).
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (B.dim() == A.dim() - 1 && std::ranges::equal(B.sizes(), A.sizes().first(A.dim() - 1)));
}

}  // namespace

Tensor lu_permutation(const Tensor& pivots, int64_t rows) { return permutation_from_pivots(pivots, rows); }

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  const char* op = "linalg.lu_factor_ex";
  check_matrices(op, A);
  TP_CHECK(pivot, "[", op, "] LU without pivoting is not implemented on the CPU");
  const int64_t m = A.size(-2), n = A.size(-1);
  autograd::Record<LuFactorBackward> record({&A});
  TP_CHECK_KIND(ErrorKind::NotImplemented, !record || m == n, "[", op, "] the derivative of the LU factorization ",
                "of non-square matrices is not implemented; got ", m, " by ", n, " matrices");
  Shape batch = batch_shape(A);
  Tensor lu = column_major(A, batch);
  Tensor pivots = empty({count(batch), std::min(m, n)}, ScalarType::Int32, A.device());
  Tensor info = zeros({count(batch)}, ScalarType::Int32, A.device());
  backend(A.device()).lu_factor(lu, pivots, info);
  lu = reshape(lu, with_matrix(batch, m, n));
  Shape pivot_shape = batch;
  pivot_shape.push_back(std::min(m, n));
  pivots = reshape(pivots, pivot_shape);
  info = reshape(info, batch);
  if (check_errors)
    check_infos(
        op, info, !batch.empty(),
        [](int k) {
          return "U[" + std::to_string(k) + "," + std::to_string(k) +
                 "] is zero and using it on lu_solve would result " +
                 "in a division by zero. If you still want to perform the factorization, consider calling " +
                 "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)";
        },
        ErrorKind::Runtime);  // a RuntimeError in PyTorch too
  if (record) {
    record->lu_ = autograd::SavedTensor(lu, true);
    record->pivots_ = autograd::SavedTensor(pivots, false);
  }
  record.finish(lu);
  return {lu, pivots, info};
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_system(op, LU, B, left, "LU");
  TP_CHECK(pivots.dtype() == ScalarType::Int32, "[", op, "] pivots should be a Tensor of scalar type int32, got ",
           name(pivots.dtype()));
  const int64_t n = LU.size(-1);
  TP_CHECK(pivots.dim() == LU.dim() - 1 && pivots.size(-1) == n, "[", op, "] Expected pivots of shape ",
           to_string(LU.sizes().first(LU.dim() - 1)), ", got ", to_string(pivots.sizes()));
  autograd::Record<LuSolveBackward> record({&LU, &B}, left, adjoint);
  Shape batch = broadcast_shapes(op, batch_shape(LU), batch_shape(B));
  Tensor lu = column_major(LU, batch), piv = broadcast_pivots(pivots, batch_shape(LU), batch, n);
  Tensor x = solve_for(B, batch, left, adjoint,
                       [&](const Tensor& b, bool adjoint) { backend(LU.device()).lu_solve(lu, piv, b, adjoint); });
  if (record) {
    record->lu_ = autograd::SavedTensor(LU, false);
    record->pivots_ = autograd::SavedTensor(pivots, false);
    record->x_ = autograd::SavedTensor(x, true);
  }
  return record.finish(x);
}

// (hermitian matters for complex matrices only: a real symmetric matrix is Hermitian.)
std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors) {
  const char* op = check_errors ? "linalg.ldl_factor" : "linalg.ldl_factor_ex";
  check_square(op, A);
  autograd::Record<NoDerivativeBackward> record({&A}, "linalg_ldl_factor_ex");
  const Shape batch = batch_shape(A);
  const int64_t n = A.size(-1);
  Tensor ld = column_major(A, batch);
  Tensor pivots = empty({count(batch), n}, ScalarType::Int32, A.device());
  Tensor info = zeros({count(batch)}, ScalarType::Int32, A.device());
  backend(A.device()).ldl_factor(ld, pivots, info, hermitian);
  // LAPACK leaves A's strict upper triangle where it was; PyTorch returns zeros there.
  ld = column_major(triangle(reshape(ld, with_matrix(batch, n, n)), false), batch);
  ld = reshape(ld, with_matrix(batch, n, n));
  pivots = reshape(pivots, with_vector(batch, n));
  info = reshape(info, batch);
  if (check_errors)
    check_infos(op, info, !batch.empty(), [](int k) {
      return "D[" + std::to_string(k - 1) + ", " + std::to_string(k - 1) +
             "] is exactly zero: the factorization is complete, but D is singular and the factors cannot be used "
             "to solve a system";
    });
  record.finish(ld);
  return {ld, pivots, info};
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  const char* op = "linalg.ldl_solve";
  check_square(op, LD, "LD");
  TP_CHECK_INDEX(B.dim() >= 2, "[", op, "] B must have at least 2 dimensions (a batch of matrices), got ", B.dim());
  TP_CHECK(is_integral(pivots.dtype(), false), "[", op, "] Expected pivots to be integers. Got ", name(pivots.dtype()));
  const int64_t n = LD.size(-1);
  TP_CHECK(std::ranges::equal(pivots.sizes(), LD.sizes().first(LD.dim() - 1)), "[", op,
           "] Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
           to_string(pivots.sizes()), " instead");
  TP_CHECK(LD.dtype() == B.dtype(), "[", op, "] Expected B and LD to have the same dtype, but found B of type ",
           name(B.dtype()), " and LD of type ", name(LD.dtype()), " instead");
  TP_CHECK(B.size(-2) == n, "[", op, "] Incompatible matrix sizes: each LD matrix is ", n, " by ", n,
           " but each B matrix is ", B.size(-2), " by ", B.size(-1));
  autograd::Record<NoDerivativeBackward> record({&LD, &B}, "linalg_ldl_solve");
  const Shape batch = broadcast_shapes(op, batch_shape(LD), batch_shape(B));
  Tensor ld = column_major(LD, batch);
  Tensor piv = broadcast_pivots(to(pivots, ScalarType::Int32), batch_shape(LD), batch, n);
  Tensor x = solve_for(B, batch, true, false,
                       [&](const Tensor& b, bool) { backend(LD.device()).ldl_solve(ld, piv, b, hermitian); });
  return record.finish(x);
}

std::pair<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  const char* op = check_errors ? "linalg.solve" : "linalg.solve_ex";
  check_system(op, A, B.dim() == 1 ? unsqueeze(B, -1) : B, left);
  if (left && is_vector_rhs(A, B)) {
    auto [x, info] = linalg_solve_ex(A, unsqueeze(B, -1), left, check_errors);
    return {squeeze(x, {-1}), info};
  }
  if (B.dim() == 1) return linalg_solve_ex(A, unsqueeze(B, -1), left, check_errors);  // a column, as PyTorch
  const int64_t n = A.size(-1);
  autograd::Record<SolveBackward> record({&A, &B}, left);
  // A is factored once per matrix of its own batch; the factors are then broadcast to B's.
  const Shape a_batch = batch_shape(A), batch = broadcast_shapes(op, a_batch, batch_shape(B));
  Tensor lu = column_major(A, a_batch);
  Tensor pivots = empty({count(a_batch), n}, ScalarType::Int32, A.device());
  Tensor info = zeros({count(a_batch)}, ScalarType::Int32, A.device());
  Backend& be = backend(A.device());
  be.lu_factor(lu, pivots, info);
  if (check_errors)
    check_infos(op, info, false,
                [](int) { return std::string("The solver failed because the input matrix is singular."); });
  if (a_batch != batch) {
    lu = column_major(reshape(lu, with_matrix(a_batch, n, n)), batch);
    pivots = broadcast_pivots(pivots, a_batch, batch, n);
  }
  Tensor x =
      solve_for(B, batch, left, false, [&](const Tensor& b, bool adjoint) { be.lu_solve(lu, pivots, b, adjoint); });
  if (record) {
    record->a_ = autograd::SavedTensor(A, false);
    record->x_ = autograd::SavedTensor(x, true);
  }
  record.finish(x);
  return {x, reshape(info, a_batch)};
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) { return linalg_solve_ex(A, B, left, true).first; }

std::pair<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  const char* op = "linalg.cholesky";
  check_square(op, A);
  autograd::Record<CholeskyBackward> record({&A}, upper);
  Shape batch = batch_shape(A);
  const int64_t n = A.size(-1);
  Tensor factor = column_major(A, batch);
  Tensor info = zeros({count(batch)}, ScalarType::Int32, A.device());
  backend(A.device()).cholesky(factor, info, upper);
  // LAPACK leaves the other triangle as it found it.
  factor = triangle(reshape(factor, with_matrix(batch, n, n)), upper);
  info = reshape(info, batch);
  if (check_errors)
    check_infos(op, info, !batch.empty(), [](int k) {
      return "The factorization could not be completed because the input is not positive-definite (the leading "
             "minor of order " +
             std::to_string(k) + " is not positive-definite).";
    });
  if (record) record->factor_ = autograd::SavedTensor(factor, true);
  record.finish(factor);
  return {factor, info};
}

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_system(op, A, B, left);
  autograd::Record<TriangularSolveBackward> record({&A, &B}, upper, left, unitriangular);
  const Shape batch = broadcast_shapes(op, batch_shape(A), batch_shape(B));
  Tensor a = column_major(A, batch);
  Tensor x = solve_for(B, batch, left, false, [&](const Tensor& b, bool adjoint) {
    backend(A.device()).triangular_solve(a, b, upper, adjoint, unitriangular);
  });
  if (record) {
    record->a_ = autograd::SavedTensor(A, false);
    record->x_ = autograd::SavedTensor(x, true);
  }
  return record.finish(x);
}

std::pair<Tensor, Tensor> geqrf(const Tensor& A) {
  const char* op = "geqrf";
  check_matrices(op, A);
  autograd::Record<GeqrfBackward> record({&A});
  const Shape batch = batch_shape(A);
  auto [a, tau] = householder_qr(A, batch);
  a = reshape(a, with_matrix(batch, A.size(-2), A.size(-1)));
  tau = reshape(tau, with_vector(batch, tau.size(1)));
  record.finish(a, tau);
  return {a, tau};
}

std::pair<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode) {
  const char* op = "linalg.qr";
  check_matrices(op, A);
  TP_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "[", op, "] qr received unrecognized mode '", mode,
           "' but expected one of 'reduced' (default), 'r', or 'complete'");
  autograd::Record<QrBackward> record({&A}, std::string(mode));
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const Shape batch = batch_shape(A);
  auto [a, tau] = householder_qr(A, batch);
  const int64_t q_cols = mode == "complete" ? m : k;
  Tensor R = triangle(reshape(narrow(a, 1, 0, q_cols), with_matrix(batch, q_cols, n)), true);
  Tensor Q;
  if (mode != "r") {
    Tensor reflectors = narrow(a, 2, 0, std::min(n, q_cols));
    if (q_cols > n) reflectors = cat({reflectors, zeros({count(batch), m, q_cols - n}, A.dtype(), A.device())}, 2);
    Tensor q = column_major(reflectors, {count(batch)});
    backend(A.device()).qr_q(q, tau);
    Q = reshape(q, with_matrix(batch, m, q_cols));
  }
  if (mode == "r") {
    record.finish(R);  // not differentiable without Q: its node says so
    return {empty({0}, A.dtype(), A.device()), R};
  }
  record.finish(Q, R);
  if (record) {  // saved once they are outputs, so that each keeps its place among them
    record->q_ = autograd::SavedTensor(Q, true);
    record->r_ = autograd::SavedTensor(R, true);
  }
  return {Q, R};
}

}  // namespace tp

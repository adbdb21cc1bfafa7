#pragma once
// The CPU implementation of the kernel interface (dispatch/backend.h). Its methods are defined
// by family: copy.cpp, unary.cpp, binary.cpp, reduce.cpp, sort.cpp, gemm.cpp, indexing.cpp, conv.cpp,
// norm.cpp, pool.cpp, optim.cpp, rnn.cpp, lapack.cpp, fft.cpp, special.cpp, sparse.cpp, amp.cpp,
// random.cpp.

#include "tensorplay/dispatch/backend.h"

namespace tp::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();  // applies TP_CPU_CAPABILITY (cpu/simd/capability.h) before any kernel runs

  DataPtr allocate(size_t nbytes) override { return cpu_allocate(nbytes); }
  void copy(const Tensor& dst, const Tensor& src) override;
  void fill(const Tensor& dst, const Scalar& value) override;
  void arange(const Tensor& out, const Scalar& start, const Scalar& step) override;

  void unary(UnaryOp op, const Tensor& out, const Tensor& in, const UnaryParams& params) override;
  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) override;
  void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& b) override;
  void ternary(TernaryOp op, const Tensor& out, const Tensor& cond_or_self, const Tensor& a, const Tensor& b,
               const Scalar& value) override;

  void reduce(ReduceOp op, const Tensor& out, const Tensor& in, const std::vector<bool>& mask) override;
  void arg_reduce(ArgReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in,
                  int64_t dim) override;
  void scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) override;
  void sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool descending) override;
  void topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool largest,
            bool sorted) override;
  void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) override;
  void layer_norm(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, double eps) override;
  void sgd_momentum_step(const Tensor& param, const Tensor& grad, const Tensor& buf, double lr, double momentum,
                         double dampening, double weight_decay, bool nesterov, bool maximize) override;

  void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha,
            const Tensor& bias) override;

  void gather(const Tensor& out, const Tensor& src, int64_t dim, const Tensor& index) override;
  void scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               ScatterReduce reduce) override;
  void nll_targets(const Tensor& index, const Tensor& wts, const Tensor& target, const Tensor& weight,
                   int64_t classes, int64_t ignore_index) override;
  void index_gather(const Tensor& out, const Tensor& rows, const Tensor& offsets) override;
  void index_put(const Tensor& rows, const Tensor& offsets, const Tensor& values, bool accumulate) override;
  Tensor nonzero(const Tensor& in) override;

  void conv2d(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Window& w) override;
  void conv2d_input_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& weight, const Window& w) override;
  void conv2d_weight_grad(const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad_out, const Tensor& in,
                          const Window& w) override;

  void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in, const Window& w) override;
  void max_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& indices, const Window& w) override;
  void avg_pool2d(const Tensor& out, const Tensor& in, const Window& w, bool count_include_pad,
                  std::optional<int64_t> divisor) override;
  void avg_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Window& w, bool count_include_pad,
                       std::optional<int64_t> divisor) override;

  void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) override;
  void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint) override;
  void ldl_factor(const Tensor& a, const Tensor& pivots, const Tensor& info, bool hermitian) override;
  void ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian) override;
  void cholesky(const Tensor& a, const Tensor& info, bool upper) override;
  void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool adjoint, bool unitriangular) override;
  void qr_factor(const Tensor& a, const Tensor& tau) override;
  void qr_q(const Tensor& a, const Tensor& tau) override;
  void svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vh, const Tensor& info) override;
  void eigh(const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors) override;
  void eig(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) override;

  void sparse_rows_mm(const Tensor& out, const Tensor& row_offsets, const Tensor& cols, const Tensor& values,
                      const Tensor& b, bool adjoint) override;
  void special_function(SpecialFunction f, const Tensor& out, const Tensor& x, const Tensor& n) override;
  void fft_c2c(const Tensor& in, const Tensor& out, IntArrayRef dims, bool forward, double scale) override;
  void fft_r2c(const Tensor& in, const Tensor& out, IntArrayRef dims, double scale) override;
  void fft_c2r(const Tensor& in, const Tensor& out, IntArrayRef dims, double scale) override;

  void lstm_cell(const Tensor& gates, const Tensor& c_prev, const Tensor& c, const Tensor& h) override;
  void lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c, const Tensor& grad_h, const Tensor& gates,
                          const Tensor& c_prev, const Tensor& c) override;

  void unscale_and_check_finite(const Tensor& t, const Tensor& found_inf, const Tensor& inv_scale) override;

  void uniform(const Tensor& out, double low, double high, Generator& gen) override;
  void normal(const Tensor& out, double mean, double std, Generator& gen) override;
  void random_int(const Tensor& out, int64_t low, int64_t high, Generator& gen) override;
};

}  // namespace tp::cpu

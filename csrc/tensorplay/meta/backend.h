#pragma once
// The meta backend: tensors with sizes, strides and a dtype and no data. Ops check their
// arguments and allocate their outputs above the kernels, so on meta every op gives the shape,
// dtype and strides it gives on the CPU, and a kernel has nothing left to do. The one exception
// is an op whose output shape depends on the values (nonzero), which meta cannot know.

#include "tensorplay/dispatch/backend.h"

namespace tp::meta {

class MetaBackend final : public Backend {
 public:
  DataPtr allocate(size_t) override { return {}; }  // a meta storage has a size and no bytes
  void copy(const Tensor& dst, const Tensor&) override {
    if (!dst.device().is_meta()) TP_NOT_IMPLEMENTED("Cannot copy out of meta tensor; no data!");
  }
  void fill(const Tensor&, const Scalar&) override {}
  void arange(const Tensor&, const Scalar&, const Scalar&) override {}

  void unary(UnaryOp, const Tensor&, const Tensor&, const UnaryParams&) override {}
  void binary(BinaryOp, const Tensor&, const Tensor&, const Tensor&, const Scalar&) override {}
  void binary_scalar(BinaryOp, const Tensor&, const Tensor&, const Scalar&) override {}
  void ternary(TernaryOp, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Scalar&) override {}

  void reduce(ReduceOp, const Tensor&, const Tensor&, const std::vector<bool>&) override {}
  void arg_reduce(ArgReduceOp, const Tensor&, const Tensor&, const Tensor&, int64_t) override {}
  void scan(ScanOp, const Tensor&, const Tensor&, int64_t) override {}
  void sort(const Tensor&, const Tensor&, const Tensor&, int64_t, bool) override {}
  void topk(const Tensor&, const Tensor&, const Tensor&, int64_t, bool, bool) override {}
  void softmax(const Tensor&, const Tensor&, int64_t, bool) override {}
  void layer_norm(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double) override {}
  void sgd_momentum_step(const Tensor&, const Tensor&, const Tensor&, double, double, double, double, bool,
                         bool) override {}

  void gemm(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&, const Tensor&) override {}
  void lu_factor(const Tensor&, const Tensor&, const Tensor&) override {}
  void lu_solve(const Tensor&, const Tensor&, const Tensor&, bool) override {}
  void ldl_factor(const Tensor&, const Tensor&, const Tensor&, bool) override {}
  void ldl_solve(const Tensor&, const Tensor&, const Tensor&, bool) override {}
  void cholesky(const Tensor&, const Tensor&, bool) override {}
  void triangular_solve(const Tensor&, const Tensor&, bool, bool, bool) override {}
  void qr_factor(const Tensor&, const Tensor&) override {}
  void qr_q(const Tensor&, const Tensor&) override {}
  void svd(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {}
  void eigh(const Tensor&, const Tensor&, const Tensor&, bool, bool) override {}
  void eig(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {}
  void special_function(SpecialFunction, const Tensor&, const Tensor&, const Tensor&) override {}
  void fft_c2c(const Tensor&, const Tensor&, IntArrayRef, bool, double) override {}
  void sparse_rows_mm(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool) override {}
  void fft_r2c(const Tensor&, const Tensor&, IntArrayRef, double) override {}
  void fft_c2r(const Tensor&, const Tensor&, IntArrayRef, double) override {}
  void lstm_cell(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {}
  void lstm_cell_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&) override {}

  void gather(const Tensor&, const Tensor&, int64_t, const Tensor&) override {}
  void scatter(const Tensor&, int64_t, const Tensor&, const Tensor&, ScatterReduce) override {}
  void nll_targets(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t) override {}
  void index_gather(const Tensor&, const Tensor&, const Tensor&) override {}
  void index_put(const Tensor&, const Tensor&, const Tensor&, bool) override {}
  Tensor nonzero(const Tensor&) override {
    TP_NOT_IMPLEMENTED("[nonzero] the output's shape depends on the values, which a meta tensor does not have");
  }

  void conv2d(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Window&) override {}
  void conv2d_input_grad(const Tensor&, const Tensor&, const Tensor&, const Window&) override {}
  void conv2d_weight_grad(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Window&) override {}

  void max_pool2d(const Tensor&, const Tensor&, const Tensor&, const Window&) override {}
  void max_pool2d_grad(const Tensor&, const Tensor&, const Tensor&, const Window&) override {}
  void avg_pool2d(const Tensor&, const Tensor&, const Window&, bool, std::optional<int64_t>) override {}
  void avg_pool2d_grad(const Tensor&, const Tensor&, const Window&, bool, std::optional<int64_t>) override {}

  void unscale_and_check_finite(const Tensor&, const Tensor&, const Tensor&) override {}

  void uniform(const Tensor&, double, double, Generator&) override {}
  void normal(const Tensor&, double, double, Generator&) override {}
  void random_int(const Tensor&, int64_t, int64_t, Generator&) override {}
};

}  // namespace tp::meta

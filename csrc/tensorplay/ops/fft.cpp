// The discrete Fourier transforms under torch.fft: PyTorch's three primitives, over the backend's
// kernels (dispatch/backend.h), with their backward nodes. torch.fft's functions are composites of
// these (tensorplay/_composites/fft.py).
//
// Each is linear, so its gradient is its adjoint applied to the output's gradient (under PyTorch's
// convention for complex gradients), written with public ops so that double backward works:
//   c2c:  g_in = c2c(g, dims, normalization, !forward)
//   r2c:  g_in = real(c2c(g zero-padded back to the input's length along dims.back(), backward))
//   c2r:  g_in = r2c(g), its entries 1 .. n - n/2 - 1 along dims.back() doubled: each stands for
//         itself and its conjugate in the full spectrum.
// The normalization's factor is the same in a transform and its adjoint.

#include <algorithm>
#include <cmath>
#include <string>

#include "tensorplay/autograd/record.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/profiler/op_span.h"

namespace tp {

namespace {

// dims wrapped into [0, ndim), each once.
std::vector<int64_t> transform_dims(const char* op, const Tensor& t, IntArrayRef dims) {
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(op, d, t.dim());
    TP_CHECK(std::ranges::find(wrapped, w) == wrapped.end(), "[", op, "] FFT dims must be unique");
    wrapped.push_back(w);
  }
  return wrapped;
}

// The factor of a normalization mode for a signal of these sizes along dims.
double scale(const char* op, int64_t normalization, IntArrayRef sizes, IntArrayRef dims) {
  TP_CHECK(normalization >= 0 && normalization <= 2, "[", op, "] normalization must be 0 (none), 1 (by 1/sqrt(n)) ",
           "or 2 (by 1/n), got ", normalization);
  double n = 1;
  for (int64_t d : dims) {
    TP_CHECK(sizes[d] >= 1, "[", op, "] Invalid number of data points (", sizes[d], ") specified");
    n *= static_cast<double>(sizes[d]);
  }
  return normalization == 0 ? 1.0 : normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
}

class FftC2CBackward final : public autograd::Node {
 public:
  FftC2CBackward(std::vector<int64_t> dims, int64_t normalization, bool forward)
      : dims_(std::move(dims)), normalization_(normalization), forward_(forward) {}
  std::string name() const override { return "FftC2CBackward0"; }
  TensorList apply(TensorList&& grads) override { return {fft_c2c(grads[0], dims_, normalization_, !forward_)}; }

 private:
  std::vector<int64_t> dims_;
  int64_t normalization_;
  bool forward_;
};

class FftR2CBackward final : public autograd::Node {
 public:
  FftR2CBackward(std::vector<int64_t> dims, int64_t normalization, int64_t last_dim_size)
      : dims_(std::move(dims)), normalization_(normalization), last_dim_size_(last_dim_size) {}
  std::string name() const override { return "FftR2CBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    const int64_t last = dims_.back(), missing = last_dim_size_ - g.size(last);
    Tensor full = g;
    if (missing > 0) {
      Shape sizes(g.sizes().begin(), g.sizes().end());
      sizes[last] = missing;
      full = cat({g, zeros(sizes, g.dtype(), g.device())}, last);
    }
    return {real(fft_c2c(full, dims_, normalization_, false))};
  }

 private:
  std::vector<int64_t> dims_;
  int64_t normalization_, last_dim_size_;
};

class FftC2RBackward final : public autograd::Node {
 public:
  FftC2RBackward(std::vector<int64_t> dims, int64_t normalization)
      : dims_(std::move(dims)), normalization_(normalization) {}
  std::string name() const override { return "FftC2RBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    const int64_t last = dims_.back();
    Tensor half = fft_r2c(g, dims_, normalization_, true);
    const int64_t doubled = g.size(last) - half.size(last);
    if (doubled > 0) {
      // [1, 2, ..., 2, 1 ...] along the last transformed dim.
      Tensor weights = ones({half.size(last)}, real_part_type(half.dtype()), half.device());
      weights = add(weights, pad(ones({doubled}, weights.dtype(), weights.device()),
                                 {1, half.size(last) - 1 - doubled}));
      Shape shape(static_cast<size_t>(half.dim()), 1);
      shape[static_cast<size_t>(last)] = half.size(last);
      half = mul(half, reshape(weights, shape));
    }
    return {half};
  }

 private:
  std::vector<int64_t> dims_;
  int64_t normalization_;
};

}  // namespace

Tensor fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  const char* op = "_fft_c2c";
  TP_OP_SPAN(_fft_c2c, self);
  TP_CHECK(is_complex(self.dtype()), "[", op, "] expects a complex input tensor, but got ", name(self.dtype()));
  const auto dims = transform_dims(op, self, dim);
  const double factor = scale(op, normalization, self.sizes(), dims);
  autograd::Record<FftC2CBackward> record({&self}, dims, normalization, forward);
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  if (!dims.empty()) backend(self.device()).fft_c2c(self, out, dims, forward, factor);
  else copy_(out, self);
  return record.finish(out);
}

Tensor fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  const char* op = "_fft_r2c";
  TP_OP_SPAN(_fft_r2c, self);
  TP_CHECK(self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float64, "[", op,
           "] expects a float32 or float64 input tensor, but got ", name(self.dtype()));
  const auto dims = transform_dims(op, self, dim);
  TP_CHECK(!dims.empty(), "[", op, "] needs at least one dim to transform");
  // The full spectrum of a real signal is the c2c transform of the signal made complex, whose
  // gradient (the real part of the complex one) is the same as the half spectrum's.
  if (!onesided) return fft_c2c(to(self, complex_type_of(self.dtype())), dims, normalization, true);
  const double factor = scale(op, normalization, self.sizes(), dims);
  const int64_t last = dims.back();
  autograd::Record<FftR2CBackward> record({&self}, dims, normalization, self.size(last));
  Shape sizes(self.sizes().begin(), self.sizes().end());
  sizes[last] = sizes[last] / 2 + 1;
  Tensor out = empty(sizes, complex_type_of(self.dtype()), self.device());
  backend(self.device()).fft_r2c(self, out, dims, factor);
  return record.finish(out);
}

Tensor fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  const char* op = "_fft_c2r";
  TP_OP_SPAN(_fft_c2r, self);
  TP_CHECK(is_complex(self.dtype()), "[", op, "] expects a complex input tensor, but got ", name(self.dtype()));
  const auto dims = transform_dims(op, self, dim);
  TP_CHECK(!dims.empty(), "[", op, "] needs at least one dim to transform");
  TP_CHECK(last_dim_size >= 1, "[", op, "] Invalid number of data points (", last_dim_size, ") specified");
  const int64_t last = dims.back();
  TP_CHECK(self.size(last) == last_dim_size / 2 + 1, "[", op, "] expects ", last_dim_size / 2 + 1,
           " entries along dim ", last, " for an output of ", last_dim_size, ", got ", self.size(last));
  Shape sizes(self.sizes().begin(), self.sizes().end());
  sizes[last] = last_dim_size;
  const double factor = scale(op, normalization, sizes, dims);
  autograd::Record<FftC2RBackward> record({&self}, dims, normalization);
  Tensor out = empty(sizes, real_part_type(self.dtype()), self.device());
  backend(self.device()).fft_c2r(self, out, dims, factor);
  return record.finish(out);
}

}  // namespace tp

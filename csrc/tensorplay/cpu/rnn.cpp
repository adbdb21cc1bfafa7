// The LSTM cell's elementwise part fused into one pass per batch row: the four gate activations,
// the cell update and the output, and in backward all of their derivatives at once. Op by op the
// same step is ten kernels, each writing a row that the next reads back. float32 runs the SIMD
// activations (simd/transcendental.cpp); float64 (gradient checks) runs std::; bfloat16 and float16
// (an LSTM under autocast) widen a row to float32, run float32's code and round each result once.

#include <cmath>
#include <type_traits>
#include <vector>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/math.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

namespace {

void sigmoid_n(const float* x, float* y, int64_t n) { simd::sigmoid_row(x, y, n); }
void tanh_n(const float* x, float* y, int64_t n) { simd::tanh_row(x, y, n); }
void sigmoid_n(const double* x, double* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = math::sigmoid(x[j]);
}
void tanh_n(const double* x, double* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = std::tanh(x[j]);
}

template <class T>
void cell_row(T* gates, const T* c_prev, T* c, T* h, int64_t hidden) {
  sigmoid_n(gates, gates, 2 * hidden);  // the input and forget gates
  tanh_n(gates + 2 * hidden, gates + 2 * hidden, hidden);
  sigmoid_n(gates + 3 * hidden, gates + 3 * hidden, hidden);
  const T *i = gates, *f = gates + hidden, *g = gates + 2 * hidden, *o = gates + 3 * hidden;
  for (int64_t j = 0; j < hidden; ++j) c[j] = f[j] * c_prev[j] + i[j] * g[j];
  tanh_n(c, h, hidden);
  for (int64_t j = 0; j < hidden; ++j) h[j] = o[j] * h[j];
}

template <class T>
void cell_backward_row(T* grad_gates, T* grad_c, const T* grad_h, const T* gates, const T* c_prev, const T* c,
                       int64_t hidden) {
  const T *i = gates, *f = gates + hidden, *g = gates + 2 * hidden, *o = gates + 3 * hidden;
  // The output gate's slot holds tanh(c) until that gate's gradient replaces it, element by element.
  T* tanh_c = grad_gates + 3 * hidden;
  tanh_n(c, tanh_c, hidden);
  for (int64_t j = 0; j < hidden; ++j) {
    const T t = tanh_c[j];
    const T dc = grad_c[j] + grad_h[j] * o[j] * (T(1) - t * t);
    grad_gates[j] = dc * g[j] * i[j] * (T(1) - i[j]);
    grad_gates[hidden + j] = dc * c_prev[j] * f[j] * (T(1) - f[j]);
    grad_gates[2 * hidden + j] = dc * i[j] * (T(1) - g[j] * g[j]);
    grad_gates[3 * hidden + j] = grad_h[j] * t * o[j] * (T(1) - o[j]);
    grad_c[j] = dc * f[j];
  }
}

// A 16-bit row through float32's code: the inputs widened into scratch, the outputs rounded back.
template <class T>
  requires(sizeof(T) == 2)
void cell_row(T* gates, const T* c_prev, T* c, T* h, int64_t hidden) {
  thread_local std::vector<float> scratch;
  scratch.resize(7 * hidden);
  float *g = scratch.data(), *cp = g + 4 * hidden, *cn = cp + hidden, *hn = cn + hidden;
  simd::widen(gates, g, 4 * hidden);
  simd::widen(c_prev, cp, hidden);
  cell_row(g, cp, cn, hn, hidden);
  simd::round_to(g, gates, 4 * hidden);
  simd::round_to(cn, c, hidden);
  simd::round_to(hn, h, hidden);
}

template <class T>
  requires(sizeof(T) == 2)
void cell_backward_row(T* grad_gates, T* grad_c, const T* grad_h, const T* gates, const T* c_prev, const T* c,
                       int64_t hidden) {
  thread_local std::vector<float> scratch;
  scratch.resize(12 * hidden);
  float *dg = scratch.data(), *dc = dg + 4 * hidden, *dh = dc + hidden, *g = dh + hidden, *cp = g + 4 * hidden,
        *cn = cp + hidden;
  simd::widen(grad_c, dc, hidden);
  simd::widen(grad_h, dh, hidden);
  simd::widen(gates, g, 4 * hidden);
  simd::widen(c_prev, cp, hidden);
  simd::widen(c, cn, hidden);
  cell_backward_row(dg, dc, dh, g, cp, cn, hidden);
  simd::round_to(dg, grad_gates, 4 * hidden);
  simd::round_to(dc, grad_c, hidden);
}

template <class T>
T* data(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// Runs row(r) for each batch row r of an [n, 4 * hidden] gate tensor, across threads when large.
template <class Row>
void for_rows(const char* op, const Tensor& gates, int64_t hidden, const Row& row) {
  visit_dtype<DTypes::Floating>(op, gates.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, BFloat16> ||
                  std::is_same_v<T, Half>) {
      parallel_for(0, gates.size(0), std::max<int64_t>(1, kGrain / (4 * hidden)), [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) row(T{}, r);
      });
    } else {
      fail_unsupported_dtype(op, gates.dtype());
    }
  });
}

}  // namespace

void CpuBackend::lstm_cell(const Tensor& gates, const Tensor& c_prev, const Tensor& c, const Tensor& h) {
  const int64_t hidden = c.size(1);
  for_rows("lstm_cell (fused)", gates, hidden, [&](auto t, int64_t r) {
    using T = decltype(t);
    cell_row(data<T>(gates) + r * 4 * hidden, data<T>(c_prev) + r * hidden, data<T>(c) + r * hidden,
             data<T>(h) + r * hidden, hidden);
  });
}

void CpuBackend::lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c, const Tensor& grad_h,
                                    const Tensor& gates, const Tensor& c_prev, const Tensor& c) {
  const int64_t hidden = c.size(1);
  for_rows("lstm_cell_backward (fused)", gates, hidden, [&](auto t, int64_t r) {
    using T = decltype(t);
    cell_backward_row(data<T>(grad_gates) + r * 4 * hidden, data<T>(grad_c) + r * hidden, data<T>(grad_h) + r * hidden,
                      data<T>(gates) + r * 4 * hidden, data<T>(c_prev) + r * hidden, data<T>(c) + r * hidden, hidden);
  });
}

}  // namespace tp::cpu

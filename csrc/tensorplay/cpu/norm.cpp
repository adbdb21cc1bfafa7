// Layer normalisation: each row in one pass over memory (three over a row in cache), through the
// SIMD row kernel for float32 and, widened a row at a time, for the 16-bit floats.

#include <cmath>
#include <type_traits>
#include <vector>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

void CpuBackend::layer_norm(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                            double eps) {
  visit_dtype<DTypes::Floating>("layer_norm", in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    const int64_t rows = in.size(0), cols = in.size(1);
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    const M* w = weight.defined() ? static_cast<const M*>(weight.data_ptr()) : nullptr;
    const M* b = bias.defined() ? static_cast<const M*>(bias.data_ptr()) : nullptr;
    parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t r = lo; r < hi; ++r) simd::layer_norm_row(x + r * cols, y + r * cols, cols, w, b, float(eps));
      } else if constexpr (std::is_same_v<M, float>) {  // 16-bit rows, widened and rounded back
        std::vector<float> row(cols);
        for (int64_t r = lo; r < hi; ++r) {
          convert_n(x + r * cols, row.data(), cols);
          simd::layer_norm_row(row.data(), row.data(), cols, w, b, float(eps));
          convert_n(row.data(), y + r * cols, cols);
        }
      } else {  // float64: the same passes in scalar code
        for (int64_t r = lo; r < hi; ++r) {
          const T* xr = x + r * cols;
          M sum = 0, sq = 0;
          for (int64_t i = 0; i < cols; ++i) sum += xr[i];
          const M mean = sum / static_cast<M>(cols);
          for (int64_t i = 0; i < cols; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
          const M rstd = M(1) / std::sqrt(sq / static_cast<M>(cols) + eps);
          for (int64_t i = 0; i < cols; ++i) {
            M v = (xr[i] - mean) * rstd;
            if (w) v *= w[i];
            if (b) v += b[i];
            y[r * cols + i] = static_cast<T>(v);
          }
        }
      }
    });
  });
}

}  // namespace tp::cpu

// The product of a sparse matrix, in compressed rows, and a dense one (ops/sparse.cpp's mm). Rows
// are independent, so threads split them; each output row is summed in the accumulation type and
// written once.

#include <algorithm>
#include <vector>

#include "tensorplay/core/parallel.h"
#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/loop.h"

namespace tp::cpu {

void CpuBackend::sparse_rows_mm(const Tensor& out, const Tensor& row_offsets, const Tensor& cols, const Tensor& values,
                                const Tensor& b) {
  const int64_t rows = out.size(0), k = out.size(1);
  if (rows == 0 || k == 0) return;
  const int64_t* offsets = static_cast<const int64_t*>(row_offsets.data_ptr());
  const int64_t* col = static_cast<const int64_t*>(cols.data_ptr());
  visit_dtype<DTypes::AllAndComplex>("mm", values.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>) {
      fail_unsupported_dtype("mm", values.dtype());
    } else {
      using Acc = opmath_t<T>;
      const T* value = static_cast<const T*>(values.data_ptr());
      const T* dense = static_cast<const T*>(b.data_ptr());
      T* result = static_cast<T*>(out.data_ptr());
      const int64_t work_per_row = std::max<int64_t>(1, k * (values.numel() / rows + 1));
      parallel_for(0, rows, std::max<int64_t>(1, kGrain / work_per_row), [&](int64_t begin, int64_t end) {
        std::vector<Acc> sum(static_cast<size_t>(k));
        for (int64_t i = begin; i < end; ++i) {
          std::fill(sum.begin(), sum.end(), Acc(0));
          for (int64_t e = offsets[i]; e < offsets[i + 1]; ++e) {
            const Acc v = static_cast<Acc>(value[e]);
            const T* row = dense + col[e] * k;
            for (int64_t j = 0; j < k; ++j) sum[j] += v * static_cast<Acc>(row[j]);
          }
          T* target = result + i * k;
          for (int64_t j = 0; j < k; ++j) target[j] = static_cast<T>(sum[j]);
        }
      });
    }
  });
}

}  // namespace tp::cpu

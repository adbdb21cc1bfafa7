// Products of a sparse matrix, in compressed rows, and a dense one (ops/sparse.cpp's mm and its
// backward). A @ b: rows are independent, so threads split them, and each output row is summed in
// the accumulation type and written once. A^T @ b scatters each row's entries into the output rows
// of their columns, which two rows may share, so threads split the output's columns instead.

#include <algorithm>
#include <vector>

#include "tensorplay/core/parallel.h"
#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/loop.h"

namespace tp::cpu {

namespace {

template <class T>
void rows_mm(T* out, const int64_t* offsets, const int64_t* col, const T* value, const T* b, int64_t rows, int64_t k,
             int64_t nnz) {
  using Acc = opmath_t<T>;
  const int64_t work_per_row = std::max<int64_t>(1, k * (nnz / std::max<int64_t>(rows, 1) + 1));
  parallel_for(0, rows, std::max<int64_t>(1, kGrain / work_per_row), [&](int64_t begin, int64_t end) {
    std::vector<Acc> sum(static_cast<size_t>(k));
    for (int64_t i = begin; i < end; ++i) {
      std::fill(sum.begin(), sum.end(), Acc(0));
      for (int64_t e = offsets[i]; e < offsets[i + 1]; ++e) {
        const Acc v = static_cast<Acc>(value[e]);
        const T* row = b + col[e] * k;
        for (int64_t j = 0; j < k; ++j) sum[j] += v * static_cast<Acc>(row[j]);
      }
      T* target = out + i * k;
      for (int64_t j = 0; j < k; ++j) target[j] = static_cast<T>(sum[j]);
    }
  });
}

template <class T>
void transposed_rows_mm(T* out, const int64_t* offsets, const int64_t* col, const T* value, const T* b, int64_t rows,
                        int64_t out_rows, int64_t k, int64_t nnz) {
  using Acc = opmath_t<T>;
  parallel_for(0, k, std::max<int64_t>(1, kGrain / std::max<int64_t>(nnz, 1)), [&](int64_t begin, int64_t end) {
    const int64_t width = end - begin;
    std::vector<Acc> sum(static_cast<size_t>(out_rows * width), Acc(0));
    for (int64_t i = 0; i < rows; ++i) {
      const T* row = b + i * k + begin;
      for (int64_t e = offsets[i]; e < offsets[i + 1]; ++e) {
        const Acc v = static_cast<Acc>(value[e]);
        Acc* target = sum.data() + col[e] * width;
        for (int64_t j = 0; j < width; ++j) target[j] += v * static_cast<Acc>(row[j]);
      }
    }
    for (int64_t r = 0; r < out_rows; ++r)
      for (int64_t j = 0; j < width; ++j) out[r * k + begin + j] = static_cast<T>(sum[r * width + j]);
  });
}

}  // namespace

void CpuBackend::sparse_rows_mm(const Tensor& out, const Tensor& row_offsets, const Tensor& cols, const Tensor& values,
                                const Tensor& b, bool transpose) {
  const int64_t k = out.size(1), rows = row_offsets.numel() - 1;
  if (out.numel() == 0) return;
  const int64_t* offsets = static_cast<const int64_t*>(row_offsets.data_ptr());
  const int64_t* col = static_cast<const int64_t*>(cols.data_ptr());
  visit_dtype<DTypes::AllAndComplex>("mm", values.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>) {
      fail_unsupported_dtype("mm", values.dtype());
    } else {
      const T* value = static_cast<const T*>(values.data_ptr());
      const T* dense = static_cast<const T*>(b.data_ptr());
      T* result = static_cast<T*>(out.data_ptr());
      if (transpose)
        transposed_rows_mm(result, offsets, col, value, dense, rows, out.size(0), k, values.numel());
      else
        rows_mm(result, offsets, col, value, dense, rows, k, values.numel());
    }
  });
}

}  // namespace tp::cpu

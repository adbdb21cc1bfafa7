#pragma once
// Runs a kernel written for contiguous float32 rows (the Highway kernels of simd.h) over the rows
// of a strided loop, in float32 and in the 16-bit floats. Dense float32 rows go straight to the
// kernel; 16-bit or strided rows are converted into float32 blocks on the stack, a block at a
// time, and the results rounded back, so the kernel computes in float32 registers either way.

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"

namespace tp::cpu {

// The element types run_float_rows takes: float32 and the 16-bit floats.
template <class T>
concept FloatRowType = std::is_same_v<T, float> || is_reduced_float(scalar_type_of<T>());

// kernel(out, inputs, n) with out and inputs (N - 1 of them) contiguous float32 rows of n.
template <FloatRowType T, size_t N, class Kernel>
void run_float_rows(const StridedLoop<N>& loop, const Kernel& kernel) {
  loop.run([&kernel](auto p, auto s, int64_t n) {
    std::array<const float*, N - 1> inputs;
    if constexpr (std::is_same_v<T, float>) {
      if (std::ranges::all_of(s, [](int64_t stride) { return stride == sizeof(float); })) {
        for (size_t k = 1; k < N; ++k) inputs[k - 1] = reinterpret_cast<const float*>(p[k]);
        return kernel(reinterpret_cast<float*>(p[0]), inputs, n);
      }
    }
    constexpr int64_t kBlock = 512;
    float blocks[N][kBlock];
    for (int64_t begin = 0; begin < n; begin += kBlock) {
      const int64_t m = std::min(kBlock, n - begin);
      for (size_t k = 1; k < N; ++k) {
        const char* src = p[k] + begin * s[k];
        if (s[k] == sizeof(T)) {
          convert_n(reinterpret_cast<const T*>(src), blocks[k], m);
        } else {
          for (int64_t i = 0; i < m; ++i) blocks[k][i] = static_cast<float>(*reinterpret_cast<const T*>(src + i * s[k]));
        }
        inputs[k - 1] = blocks[k];
      }
      kernel(blocks[0], inputs, m);
      char* dst = p[0] + begin * s[0];
      if (s[0] == sizeof(T)) {
        convert_n(blocks[0], reinterpret_cast<T*>(dst), m);
      } else {
        for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(dst + i * s[0]) = static_cast<T>(blocks[0][i]);
      }
    }
  });
}

// Runs row(first, n) over [0, numel) in parallel chunks (first: the chunk's first element), when
// the tensors given share one dense layout (contiguous, or a permutation of it, as a transposed
// tensor and the output made like it): element i of each lies i items past its data pointer, so
// a kernel for dense rows covers the whole op. False, running nothing, otherwise.
template <class Row>
bool run_dense(std::initializer_list<const Tensor*> tensors, const Row& row) {
  const Tensor& first = **tensors.begin();
  const bool shared = std::ranges::all_of(tensors, [&](const Tensor* t) {
    return std::ranges::equal(t->sizes(), first.sizes()) && std::ranges::equal(t->strides(), first.strides());
  });
  if (!shared || !(first.is_contiguous() || is_dense_layout(first.sizes(), first.strides()))) return false;
  parallel_for(0, first.numel(), kGrain, [&](int64_t lo, int64_t hi) { row(lo, hi - lo); });
  return true;
}

}  // namespace tp::cpu

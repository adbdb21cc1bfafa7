#pragma once
// The strided loop under every elementwise CPU kernel.
//
// N operands share one shape (inputs already expanded to it, so broadcast dims have stride 0).
// The loop walks the dims in the operands' memory order, not their logical one (as PyTorch's
// TensorIterator does): ops keep their input's layout, and walking a transposed operand by its
// logical rows would read one element per cache line. Dims that are then contiguous for every
// operand are merged, and the loop hands the kernel one innermost row at a time: row(ptrs,
// strides, n) with byte pointers and byte strides, so the kernel can take a fast path when every
// stride is the item size (or 0 for a broadcast scalar). So a kernel must not depend on the order
// it sees elements in (scatter's repeated indices, whose winner PyTorch leaves unspecified,
// resolve in memory order).

#include <array>
#include <cstdint>

#include "tensorplay/core/parallel.h"
#include "tensorplay/core/small_vector.h"
#include "tensorplay/core/tensor.h"

namespace tp::cpu {

// Elements per thread below which splitting a loop costs more than it saves.
inline constexpr int64_t kGrain = 32768;

// Dims a loop keeps without allocating (more go to the heap).
inline constexpr size_t kInlineDims = 8;
template <class T>
using DimVector = SmallVector<T, kInlineDims>;

template <size_t N>
struct StridedLoop {
  using Ptrs = std::array<char*, N>;
  using Strides = std::array<int64_t, N>;

  DimVector<int64_t> shape;    // merged dims, outermost first
  DimVector<Strides> strides;  // per dim, the byte stride of each operand
  Ptrs base;

  explicit StridedLoop(const std::array<const Tensor*, N>& operands) {
    const Tensor& first = *operands[0];
    for (size_t k = 0; k < N; ++k) base[k] = static_cast<char*>(operands[k]->data_ptr());
    if (first.numel() == 0) {  // nothing to visit; an empty view's strides may not fit in bytes
      shape.push_back(0);
      strides.push_back({});
      return;
    }
    for (int64_t d : memory_order(operands)) {
      Strides s;
      for (size_t k = 0; k < N; ++k) s[k] = operands[k]->strides()[d] * operands[k]->itemsize();
      // Merge with the previous dim when that one steps exactly over this one for all operands.
      bool merge = !shape.empty();
      for (size_t k = 0; merge && k < N; ++k) merge = strides.back()[k] == s[k] * first.size(d);
      if (merge) {
        shape.back() *= first.size(d);
        strides.back() = s;
      } else {
        shape.push_back(first.size(d));
        strides.push_back(s);
      }
    }
  }

  // The dims of size above 1, outermost first: by the strides of the first operand that tells two
  // dims apart (the output, for most kernels), the logical order where none does (broadcast
  // strides of 0 tell nothing). An insertion sort, since "tells apart" is not a total order.
  static DimVector<int64_t> memory_order(const std::array<const Tensor*, N>& operands) {
    auto inner = [&](int64_t a, int64_t b) {  // whether dim a goes inside dim b
      for (const Tensor* t : operands) {
        const int64_t sa = t->stride(a), sb = t->stride(b);
        if (sa != 0 && sb != 0 && sa != sb) return sa < sb;
      }
      return false;
    };
    DimVector<int64_t> dims;
    for (int64_t d = 0; d < operands[0]->dim(); ++d) {
      if (operands[0]->size(d) == 1) continue;
      dims.push_back(d);
      for (size_t i = dims.size() - 1; i > 0 && inner(dims[i - 1], dims[i]); --i) std::swap(dims[i - 1], dims[i]);
    }
    return dims;
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }

  // Calls row(ptrs, inner_strides, n) for the rows covering elements [begin, end) in row-major order.
  template <class Row>
  void run_range(int64_t begin, int64_t end, const Row& row) const {
    if (shape.empty()) {  // a single element
      row(base, Strides{}, 1);
      return;
    }
    const int64_t ndim = static_cast<int64_t>(shape.size());
    const int64_t inner = shape.back();
    DimVector<int64_t> index(ndim, 0);
    int64_t rest = begin;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    while (begin < end) {
      Ptrs ptrs = base;
      for (int64_t d = 0; d < ndim; ++d)
        for (size_t k = 0; k < N; ++k) ptrs[k] += index[d] * strides[d][k];
      int64_t n = std::min(inner - index[ndim - 1], end - begin);
      row(ptrs, strides.back(), n);
      begin += n;
      index[ndim - 1] += n;
      for (int64_t d = ndim - 1; d > 0 && index[d] == shape[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

  // The whole loop, split across threads when it is large.
  template <class Row>
  void run(const Row& row, int64_t grain = kGrain) const {
    parallel_for(0, numel(), grain, [&](int64_t b, int64_t e) { run_range(b, e, row); });
  }
};

template <class... T>
StridedLoop<sizeof...(T)> strided_loop(const T&... operands) {
  return StridedLoop<sizeof...(T)>({&operands...});
}

}  // namespace tp::cpu

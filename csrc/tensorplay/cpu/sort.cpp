// Sorting and selection along one dim: each line is read out as (value, index) pairs, ordered,
// and its first k pairs written back.

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/dispatch/kernel_toolbox.h"

namespace tp::cpu {

namespace {

// a before b in ascending order, where NaN is above every number (and not above NaN).
template <class M>
bool ascending(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) return std::isnan(b) ? !std::isnan(a) : a < b;
  return a < b;
}

// Runs order(line, k) on each line of `in` along dim, a vector of its (value, index) pairs, and
// writes the first k pairs (k = values.size(dim)) to values and indices.
template <class Order>
void for_each_line(const char* op, const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
                   Order order) {
  visit_dtype(op, in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    Tensor src = kernel::contiguous(in);
    const int64_t n = in.dim() ? in.size(dim) : 1;
    const int64_t k = values.dim() ? values.size(dim) : 1;
    const int64_t inner = in.dim() ? numel(in.sizes().subspan(dim + 1)) : 1;
    const int64_t lines = n > 0 ? in.numel() / n : 0;
    const T* x = static_cast<const T*>(src.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
    parallel_for(0, lines, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      std::vector<std::pair<M, int64_t>> line(n);
      for (int64_t l = b; l < e; ++l) {
        const int64_t from = (l / inner) * n * inner + l % inner, to = (l / inner) * k * inner + l % inner;
        for (int64_t i = 0; i < n; ++i) line[i] = {static_cast<M>(x[from + i * inner]), i};
        order(line, k);
        for (int64_t i = 0; i < k; ++i) {
          v[to + i * inner] = x[from + line[i].second * inner];  // the element itself: -0.0 stays -0.0
          idx[to + i * inner] = line[i].second;
        }
      }
    });
  });
}

}  // namespace

void CpuBackend::sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool descending) {
  for_each_line("sort", values, indices, in, dim, [descending](auto& line, int64_t) {
    std::stable_sort(line.begin(), line.end(), [descending](const auto& a, const auto& b) {
      return descending ? ascending(b.first, a.first) : ascending(a.first, b.first);
    });
  });
}

// PyTorch's selection: a partial sort when k is small against the line, else the k-th element
// placed by nth_element and, when sorted, the k - 1 before it sorted.
void CpuBackend::topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool largest,
                      bool sorted) {
  for_each_line("topk", values, indices, in, dim, [largest, sorted](auto& line, int64_t k) {
    if (k == 0) return;
    auto before = [largest](const auto& a, const auto& b) {
      return largest ? ascending(b.first, a.first) : ascending(a.first, b.first);
    };
    const int64_t n = static_cast<int64_t>(line.size());
    if (k * 64 <= n) {
      std::partial_sort(line.begin(), line.begin() + k, line.end(), before);
      return;
    }
    std::nth_element(line.begin(), line.begin() + k - 1, line.end(), before);
    if (sorted) std::sort(line.begin(), line.begin() + k - 1, before);
  });
}

}  // namespace tp::cpu

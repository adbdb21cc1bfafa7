#include "tensorplay/core/shape.h"

#include <algorithm>
#include <numeric>

#include "tensorplay/core/error.h"

namespace tp {

// Sizes come from users: a product that overflows int64 is an error, not undefined behaviour.
int64_t numel(IntArrayRef sizes) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
  int64_t n = 1;
  for (int64_t s : sizes)
    TP_CHECK(!__builtin_mul_overflow(n, s, &n), "[tensor] the number of elements of sizes ", to_string(sizes),
             " overflows int64");
  return n;
}

Shape contiguous_strides(IntArrayRef sizes) {
  Shape strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    TP_CHECK(i == 0 || !__builtin_mul_overflow(stride, std::max<int64_t>(sizes[i], 1), &stride),
             "[tensor] the strides of sizes ", to_string(sizes), " overflow int64");
  }
  return strides;
}

std::optional<int64_t> storage_extent(IntArrayRef sizes, IntArrayRef strides) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t span = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) || __builtin_add_overflow(extent, span, &extent))
      return std::nullopt;
  }
  return extent;
}

Shape dense_strides_in_order(IntArrayRef sizes, IntArrayRef strides) {
  const auto n = static_cast<int64_t>(sizes.size());
  // order[0] is the innermost dim. Insertion sort from row-major order, moving a dim outwards
  // past another only where the strides (or, for equal strides, the sizes) say so.
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = n - 1 - i;
  auto outside = [&](int64_t a, int64_t b) {  // 1: a belongs outside b; -1: inside; 0: open
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] > strides[b] ? 1 : -1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (int64_t i = 1; i < n; ++i) {
    // The dim at `moving` passes inner dims it belongs outside of, and looks past those it has no
    // order with, until one belongs outside it.
    int64_t moving = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      const int c = outside(order[j], order[moving]);
      if (c < 0) break;
      if (c > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      }
    }
  }
  Shape result(n);
  int64_t step = 1;
  for (int64_t d : order) {
    result[d] = step;
    step *= std::max<int64_t>(sizes[d], 1);
  }
  return result;
}

bool is_dense_layout(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<size_t> dims(sizes.size());
  std::iota(dims.begin(), dims.end(), 0);
  std::ranges::stable_sort(dims, [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

std::string to_string(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  TP_CHECK_INDEX(dim >= -n && dim < n, "[", op, "] Dimension out of range (expected to be in range of [",
                 -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::vector<bool> dim_mask(const char* op, IntArrayRef dims, int64_t ndim) {
  std::vector<bool> mask(std::max<int64_t>(ndim, 1), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, ndim);
    TP_CHECK(!mask[w], "[", op, "] dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  mask.resize(ndim);
  return mask;
}

std::optional<Shape> try_broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (sa != sb && sa != 1 && sb != 1) return std::nullopt;
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

Shape broadcast_shapes(const char* op, IntArrayRef a, IntArrayRef b) {
  auto out = try_broadcast_shapes(a, b);
  TP_CHECK(out.has_value(), "[", op, "] shapes ", to_string(a), " and ", to_string(b), " cannot be broadcast together");
  return *out;
}

Shape infer_size(const char* op, IntArrayRef requested, int64_t total) {
  Shape out(requested.begin(), requested.end());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TP_CHECK(infer < 0, "[", op, "] only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      TP_CHECK(out[i] >= 0, "[", op, "] invalid shape dimension ", out[i]);
      TP_CHECK(!__builtin_mul_overflow(known, out[i], &known), "[", op, "] shape '", to_string(requested),
               "' is invalid for input of size ", total);
    }
  }
  if (infer >= 0) {
    TP_CHECK(known != 0 && total % known == 0, "[", op, "] shape '", to_string(requested),
             "' is invalid for input of size ", total);
    out[infer] = total / known;
  } else {
    TP_CHECK(known == total, "[", op, "] shape '", to_string(requested), "' is invalid for input of size ",
             total);
  }
  return out;
}

}  // namespace tp

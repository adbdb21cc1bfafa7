#pragma once
// Sizes, strides and dimension arithmetic shared by every op.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tp {

using Shape = std::vector<int64_t>;

// A non-owning view of ints: sizes, strides or dims, from a Shape, a span or a braced list
// (`empty({2, 3})`; the list lives until the end of the full expression).
class IntArrayRef : public std::span<const int64_t> {
 public:
  using span::span;
  IntArrayRef() = default;
  IntArrayRef(std::span<const int64_t> s) : span(s) {}
  IntArrayRef(const Shape& v) : span(v.data(), v.size()) {}
  IntArrayRef(std::initializer_list<int64_t> l) : span(l.begin(), l.size()) {}
  IntArrayRef subspan(size_t offset, size_t count = std::dynamic_extent) const {
    return IntArrayRef(span::subspan(offset, count));
  }
};

int64_t numel(IntArrayRef sizes);
// Row-major strides, in elements.
Shape contiguous_strides(IntArrayRef sizes);
// The elements a strided layout spans from its first one, 1 + sum((size - 1) * stride), or 0 when
// it holds none; nullopt when that overflows int64 (sizes and strides come from users).
std::optional<int64_t> storage_extent(IntArrayRef sizes, IntArrayRef strides);
// Whether strides lay sizes out densely without overlap: some permutation of a contiguous
// layout (a transposed matrix, a channels-last image), as PyTorch's is_non_overlapping_and_dense.
bool is_dense_layout(IntArrayRef sizes, IntArrayRef strides);
// Dense strides that keep the dims in the order their strides put them (innermost the smallest
// stride; dims whose order strides leave open, as a stride of 0 does, in row-major order): the
// layout PyTorch's preserve_format gives a copy of a tensor that is not dense.
Shape dense_strides_in_order(IntArrayRef sizes, IntArrayRef strides);
// "[2, 3]"
std::string to_string(IntArrayRef sizes);

// Maps a possibly negative dim into [0, ndim); out of range raises IndexError naming the op.
// A 0-dim tensor accepts dims -1 and 0, as in PyTorch.
int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim);
// Wraps each dim of a list and rejects repeats; an empty list means every dim.
std::vector<bool> dim_mask(const char* op, IntArrayRef dims, int64_t ndim);

// The broadcast of two shapes; incompatible shapes raise naming the op and both shapes.
Shape broadcast_shapes(const char* op, IntArrayRef a, IntArrayRef b);
// The same, with no shape for incompatible ones.
std::optional<Shape> try_broadcast_shapes(IntArrayRef a, IntArrayRef b);
// Resolves a single -1 in a requested view/reshape shape against numel.
Shape infer_size(const char* op, IntArrayRef requested, int64_t numel);

}  // namespace tp

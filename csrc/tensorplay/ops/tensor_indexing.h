#pragma once
// Indexing as LibTorch writes it: t.index({Slice(), 0}), t.index({"...", Slice(1, None, 2)}),
// t.index_put_({mask}, 0). The items are Python's index items (ints, slices, None, Ellipsis, bools,
// tensors); Python's __getitem__ and __setitem__ turn their index into these items and call the
// same Tensor::index and Tensor::index_put_ (defined in tensor_indexing.cpp).

#include <concepts>
#include <cstdint>
#include <optional>

#include "tensorplay/core/tensor.h"

namespace tp::indexing {

inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType final {
  explicit EllipsisIndexType() = default;
};
inline constexpr EllipsisIndexType Ellipsis{};

// Python's start:stop:step. A missing bound is the start or end of the dim; step must be positive.
class Slice {
 public:
  Slice(std::optional<int64_t> start = None, std::optional<int64_t> stop = None, std::optional<int64_t> step = None)
      : start_(start), stop_(stop), step_(step.value_or(1)) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

// One item of an index. An int or a 0-dim integer tensor selects (dropping the dim), a slice
// narrows, None inserts a dim of size 1, Ellipsis stands for the dims no other item names, a bool
// is a 0-dim mask, and a tensor indexes by position (integers) or by mask (bool or uint8, one dim
// of the tensor per dim of the mask).
class TensorIndex {
 public:
  enum class Kind { None, Ellipsis, Integer, Boolean, Slice, Tensor };

  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}
  // "..." is LibTorch's spelling of Ellipsis; any other string is an error.
  TensorIndex(const char* ellipsis);
  // Templates, so that every integer type converts without ambiguity and a bool never counts as one.
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  TensorIndex(T integer) : kind_(Kind::Integer), integer_(static_cast<int64_t>(integer)) {}
  template <std::same_as<bool> T>
  TensorIndex(T boolean) : kind_(Kind::Boolean), boolean_(boolean) {}
  TensorIndex(Slice slice) : kind_(Kind::Slice), slice_(slice) {}
  TensorIndex(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {}

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_ellipsis() const { return kind_ == Kind::Ellipsis; }
  bool is_integer() const { return kind_ == Kind::Integer; }
  bool is_boolean() const { return kind_ == Kind::Boolean; }
  bool is_slice() const { return kind_ == Kind::Slice; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace tp::indexing

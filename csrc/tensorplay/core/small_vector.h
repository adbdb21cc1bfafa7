#pragma once
// A vector that keeps its first N elements in itself, for the short lists of dims an op builds
// while it runs (a strided loop's merged dims): they fit in N for tensors of any usual rank, and
// then take no allocation, which on a 4-element op costs as much as the arithmetic. Past N the
// elements move to the heap. Only what those lists need: push_back, indexing, back, iteration.

#include <array>
#include <cstddef>
#include <vector>

namespace tp {

template <class T, size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  SmallVector(size_t count, const T& value) {
    for (size_t i = 0; i < count; ++i) push_back(value);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T* data() { return size_ <= N ? inline_.data() : heap_.data(); }
  const T* data() const { return size_ <= N ? inline_.data() : heap_.data(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void push_back(const T& value) {
    if (size_ < N) {
      inline_[size_] = value;
    } else {
      if (size_ == N) heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(value);
    }
    ++size_;
  }

 private:
  std::array<T, N> inline_;
  std::vector<T> heap_;  // all the elements, once there are more than N
  size_t size_ = 0;
};

}  // namespace tp

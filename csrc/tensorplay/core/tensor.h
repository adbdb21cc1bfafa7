#pragma once
// tp::Tensor: a cheap, shared handle to a TensorImpl. Copying a Tensor shares the data; ops are
// free functions in ops/ (tp::add, tp::matmul, ...); a few common ones are methods here too.

#include <optional>
#include <vector>

#include "tensorplay/core/memory_format.h"
#include "tensorplay/core/scalar.h"
#include "tensorplay/core/tensor_impl.h"

namespace tp {

class Tensor;
using TensorList = std::vector<Tensor>;
namespace indexing {
class TensorIndex;
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  // Same object (not: equal values).
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t itemsize() const { return tp::itemsize(dtype()); }
  int64_t nbytes() const { return numel() * itemsize(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  Layout layout() const { return impl_->layout(); }
  bool is_sparse() const { return impl_->layout() == Layout::SparseCoo; }
  bool is_contiguous(MemoryFormat format) const { return is_contiguous_as(sizes(), strides(), format); }
  bool is_floating_point() const { return tp::is_floating_point(dtype()); }

  void* data_ptr() const { return impl_->data(); }
  template <class T>
  T* data_ptr() const {
    TP_CHECK(dtype() == scalar_type_of<T>(), "[data_ptr] expected dtype ", name(scalar_type_of<T>()),
             " but the tensor has ", name(dtype()));
    return static_cast<T*>(impl_->data());
  }
  // Whether the tensor holds values (a meta tensor has none): ops check values only where it does.
  bool has_data() const { return !device().is_meta(); }
  // The value of a one-element tensor.
  Scalar item() const;
  template <class T>
  T item() const { return item().to<T>(); }

  uint32_t version() const { return impl_->storage()->version(); }
  void bump_version() const { impl_->storage()->bump_version(); }

  // Autograd (defined in autograd/variable.cpp).
  bool requires_grad() const;
  Tensor& set_requires_grad(bool requires_grad);
  bool is_leaf() const;
  Tensor grad() const;
  // Runs backward from this tensor (a scalar, or with `gradient` given).
  void backward(const Tensor& gradient = {}, bool retain_graph = false, bool create_graph = false) const;
  Tensor detach() const;

  // Common ops as methods, for C++ readers: the public, recording ops (kernels use
  // dispatch/kernel_toolbox.h instead).
  Tensor contiguous() const;
  Tensor to(ScalarType dtype) const;
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;

  // Indexing as LibTorch writes it, t.index({Slice(), 0}) for Python's t[:, 0]. The items, and these
  // methods, are defined in ops/tensor_indexing.h/.cpp (tensorplay.h includes them), so that core
  // does not depend on ops.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  // t[indices] = value in place, value broadcast (a number takes t's dtype); returns t.
  const Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value) const;
  const Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Scalar& value) const;

 private:
  intrusive_ptr<TensorImpl> impl_;
};

// A view of base's storage with the given geometry: no checks, no autograd history. View ops
// build on it; kernels use it for internal views (a reversed row, a restrided operand).
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t storage_offset);
// A view reading base's bytes as another dtype (view_as_real); sizes, strides and offset count its elements.
Tensor make_view(const Tensor& base, ScalarType dtype, Shape sizes, Shape strides, int64_t storage_offset);

}  // namespace tp

#pragma once
// What a tensor is: a strided window (sizes, strides, offset, dtype) onto a Storage, or a sparse
// COO tensor made of two such tensors.

#include <memory>

#include "tensorplay/core/scalar_type.h"
#include "tensorplay/core/shape.h"
#include "tensorplay/core/storage.h"

namespace tp {

// How a tensor's elements are stored: tensorplay.strided and tensorplay.sparse_coo.
enum class Layout : uint8_t { Strided, SparseCoo };

// What autograd keeps per tensor (autograd/meta.h); core only owns it.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, ScalarType dtype, Shape sizes, Shape strides, int64_t storage_offset);
  ~TensorImpl();

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  const Storage& storage() const { return storage_; }
  void* data() const {
    if (layout_ != Layout::Strided) [[unlikely]]
      refuse_sparse_data();
    return static_cast<char*>(storage_->data()) + storage_offset_ * itemsize(dtype_);
  }

  // A sparse COO tensor of the given sizes: its elements are `values` ([nnz, dense sizes...]) at
  // `indices` (int64 [sparse_dim, nnz]) along its first sparse_dim dims, and zero elsewhere (an
  // index may repeat: its values add up, until coalescing sums them). Its own storage is empty and
  // its strides are zero, so data() and views refuse it: an op without a sparse implementation
  // raises before it could read. `coalesced` promises sorted, unique indices.
  static intrusive_ptr<TensorImpl> sparse_coo(intrusive_ptr<TensorImpl> indices, intrusive_ptr<TensorImpl> values,
                                              Shape sizes, bool coalesced);
  Layout layout() const { return layout_; }
  const intrusive_ptr<TensorImpl>& sparse_indices() const { return sparse_indices_; }
  const intrusive_ptr<TensorImpl>& sparse_values() const { return sparse_values_; }
  bool is_coalesced() const { return coalesced_; }

  // The tensor this one is a view of (the root of a chain of views), or null. Autograd uses it to
  // rewrite the base's history when a view is written in place (Note [In-place on views]).
  const intrusive_ptr<TensorImpl>& view_base() const { return view_base_; }
  void set_view_base(intrusive_ptr<TensorImpl> base) { view_base_ = std::move(base); }

  // Makes this tensor show other's data (`x.data = y`): storage, dtype, geometry and layout (with a
  // sparse tensor's parts).
  void set_data(const TensorImpl& other);

  // In-place changes of the view itself (squeeze_, t_, as_strided_ ...).
  void set_sizes_and_strides(Shape sizes, Shape strides, int64_t storage_offset);

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> meta) { autograd_meta_ = std::move(meta); }
  // Made in inference mode: such a tensor may not be saved for backward later.
  bool is_inference() const { return is_inference_; }
  void set_inference(bool v) { is_inference_ = v; }

  // The Python object wrapping this tensor, while one exists (see python/bindings/tensor_caster.h).
  void* pyobj() const { return pyobj_; }
  void set_pyobj(void* obj) { pyobj_ = obj; }

 private:
  void refresh();
  [[noreturn]] void refuse_sparse_data() const;

  Storage storage_;
  ScalarType dtype_;
  Shape sizes_;
  Shape strides_;
  int64_t storage_offset_;
  int64_t numel_ = 0;
  bool is_contiguous_ = false;
  intrusive_ptr<TensorImpl> view_base_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  bool is_inference_ = false;
  void* pyobj_ = nullptr;
  Layout layout_ = Layout::Strided;
  intrusive_ptr<TensorImpl> sparse_indices_, sparse_values_;
  bool coalesced_ = false;
};

}  // namespace tp

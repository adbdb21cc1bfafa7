#include "tensorplay/core/tensor_impl.h"

namespace tp {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, Shape sizes, Shape strides, int64_t storage_offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      storage_offset_(storage_offset) {
  refresh();
}

TensorImpl::~TensorImpl() = default;

intrusive_ptr<TensorImpl> TensorImpl::sparse_coo(intrusive_ptr<TensorImpl> indices, intrusive_ptr<TensorImpl> values,
                                                 Shape sizes, bool coalesced) {
  const Device device = values->device();
  Shape strides(sizes.size(), 0);
  auto impl = intrusive_ptr<TensorImpl>::make(Storage::make(DataPtr(), 0, device), values->dtype(), std::move(sizes),
                                              std::move(strides), 0);
  impl->layout_ = Layout::SparseCoo;
  impl->sparse_indices_ = std::move(indices);
  impl->sparse_values_ = std::move(values);
  impl->coalesced_ = coalesced;
  return impl;
}

void TensorImpl::refuse_sparse_data() const {
  detail::fail(ErrorKind::NotImplemented, "[sparse_coo] this op has no implementation for sparse COO tensors (a ",
               to_string(sizes_), " tensor with ", sparse_values_->sizes()[0],
               " stored values here): Tensor.to_dense() gives the dense tensor to use instead");
}

void TensorImpl::set_data(const TensorImpl& other) {
  storage_ = other.storage_;
  dtype_ = other.dtype_;
  layout_ = other.layout_;
  sparse_indices_ = other.sparse_indices_;
  sparse_values_ = other.sparse_values_;
  coalesced_ = other.coalesced_;
  sizes_ = other.sizes_;
  strides_ = other.strides_;
  storage_offset_ = other.storage_offset_;
  refresh();
}

void TensorImpl::set_sizes_and_strides(Shape sizes, Shape strides, int64_t storage_offset) {
  // (A sparse tensor's sizes go with its indices: t_, squeeze_ or resize_ of one would leave them
  // pointing elsewhere.)
  if (layout_ != Layout::Strided)
    detail::fail(ErrorKind::NotImplemented, "[sparse_coo] a sparse COO tensor is not reshaped in place: the "
                 "out-of-place op (t(), transpose()) gives a new one");
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::refresh() {
  numel_ = 1;
  for (int64_t s : sizes_)
    TP_CHECK(!__builtin_mul_overflow(numel_, s, &numel_), "[tensor] a tensor of sizes ", to_string(sizes_),
             " has more elements than an int64 can count");
  // Contiguous: row-major, ignoring the strides of size-1 dims (as PyTorch does).
  is_contiguous_ = true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    // (Past int64 only sizes that hold no elements can reach: such a tensor is contiguous.)
    if (strides_[i] != expected || __builtin_mul_overflow(expected, sizes_[i], &expected)) {
      is_contiguous_ = numel_ == 0;
      break;
    }
  }
}

}  // namespace tp

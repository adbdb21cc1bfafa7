#include "tensorplay/core/tensor.h"

#include "tensorplay/dispatch/backend.h"
#include "tensorplay/dispatch/kernel_toolbox.h"
#include "tensorplay/ops/ops.h"

namespace tp {

// A 0-dim tensor has no size or stride to give (wrap_dim would accept 0 and -1 for it).
int64_t Tensor::size(int64_t d) const {
  TP_CHECK_INDEX(dim() > 0, "[size] dimension specified as ", d, " but tensor has no dimensions");
  return sizes()[wrap_dim("size", d, dim())];
}
int64_t Tensor::stride(int64_t d) const {
  TP_CHECK_INDEX(dim() > 0, "[stride] dimension specified as ", d, " but tensor has no dimensions");
  return strides()[wrap_dim("stride", d, dim())];
}

Scalar Tensor::item() const {
  TP_CHECK(numel() == 1, "[item] a Tensor with ", numel(), " elements cannot be converted to Scalar");
  TP_CHECK(!device().is_meta(), "Tensor.item() cannot be called on meta tensors");
  // The value is read on the host: a tensor elsewhere is copied there first.
  Tensor host = *this;
  if (!device().is_cpu()) {
    host = kernel::empty({}, dtype(), DeviceType::CPU);
    backend(device()).copy(host, make_view(*this, {}, {}, storage_offset()));  // its one element
  }
  return visit_dtype<DTypes::AllAndComplex>("item", dtype(), [&](auto t) -> Scalar {
    using T = decltype(t);
    return Scalar(*static_cast<const T*>(host.data_ptr()));
  });
}

Tensor Tensor::contiguous() const { return tp::contiguous(*this); }
Tensor Tensor::to(ScalarType dtype) const { return tp::to(*this, dtype); }
Tensor Tensor::view(IntArrayRef sizes) const { return tp::view(*this, sizes); }
Tensor Tensor::reshape(IntArrayRef sizes) const { return tp::reshape(*this, sizes); }

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t storage_offset) {
  return make_view(base, base.dtype(), std::move(sizes), std::move(strides), storage_offset);
}

Tensor make_view(const Tensor& base, ScalarType dtype, Shape sizes, Shape strides, int64_t storage_offset) {
  TP_CHECK_KIND(ErrorKind::NotImplemented, !base.is_sparse(),
                "[view] a sparse COO tensor has no strided elements to view: Tensor.to_dense() gives a dense tensor");
  auto view = intrusive_ptr<TensorImpl>::make(base.impl()->storage(), dtype, std::move(sizes),
                                              std::move(strides), storage_offset);
  const auto& root = base.impl()->view_base();
  view->set_view_base(root ? root : base.impl_ptr());
  return Tensor(std::move(view));
}

}  // namespace tp

#include "tensorplay/dispatch/kernel_toolbox.h"

#include <numeric>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/dispatch/backend.h"

namespace tp::kernel {

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  const auto nbytes = static_cast<size_t>(storage_extent(sizes, strides).value() * itemsize(dtype));
  device = device.with_index();
  auto impl = intrusive_ptr<TensorImpl>::make(Storage::make(backend(device).allocate(nbytes), nbytes, device), dtype,
                                              Shape(sizes.begin(), sizes.end()), Shape(strides.begin(), strides.end()),
                                              0);
  impl->set_inference(is_inference_mode_enabled());
  return Tensor(std::move(impl));
}

Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  return empty_strided(sizes, contiguous_strides(sizes), dtype, device);
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  Shape sizes(t.sizes().begin(), t.sizes().end());
  sizes[dim] = length;
  const int64_t offset = length ? t.storage_offset() + start * t.stride(dim) : t.storage_offset();
  return make_view(t, std::move(sizes), Shape(t.strides().begin(), t.strides().end()), offset);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  const int64_t offset = t.storage_offset() + index * t.stride(dim);
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(t, std::move(sizes), std::move(strides), offset);
}

Tensor permute(const Tensor& t, IntArrayRef order) {
  Shape sizes, strides;
  for (int64_t d : order) {
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}

Tensor movedim_last(const Tensor& t, int64_t dim) {
  if (t.dim() == 0) return t;
  Shape order(t.dim());
  std::iota(order.begin(), order.end(), 0);
  order.erase(order.begin() + dim);
  order.push_back(dim);
  return permute(t, order);
}

Tensor expand(const Tensor& t, IntArrayRef sizes) {
  const int64_t lead = static_cast<int64_t>(sizes.size()) - t.dim();
  Shape strides(sizes.size(), 0);
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1 || sizes[lead + d] == 1) strides[lead + d] = t.stride(d);
  return make_view(t, Shape(sizes.begin(), sizes.end()), std::move(strides), t.storage_offset());
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : to(t, t.dtype()); }

Tensor to(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype && t.is_contiguous()) return t;
  Tensor out = empty(t.sizes(), dtype, t.device());
  backend(t.device()).copy(out, t);
  return out;
}

}  // namespace tp::kernel

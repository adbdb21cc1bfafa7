#include "tensorplay/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tp {

Device common_device(const char* op, std::initializer_list<const Tensor*> operands) {
  auto is_number = [](const Tensor* t) { return t->dim() == 0 && t->device().is_cpu(); };
  auto first = std::ranges::find_if(operands, [&](const Tensor* t) { return !is_number(t); });
  const Device device = (first != operands.end() ? *first : *operands.begin())->device();
  for (const Tensor* t : operands)
    TP_CHECK(t->device() == device || is_number(t), "[", op, "] Expected all tensors to be on the same device, but "
             "found at least two devices, ", device.str(), " and ", t->device().str(), "!");
  return device;
}

Tensor elementwise_output(IntArrayRef shape, ScalarType dtype, const Tensor& like) {
  if (std::ranges::equal(shape, like.sizes())) return empty_like(like, dtype);
  return empty(shape, dtype, like.device());
}

void check_no_internal_overlap(const char* op, const Tensor& self) {
  TP_CHECK_KIND(ErrorKind::NotImplemented, !self.is_sparse(), "[", op, "] a sparse COO tensor is written in place "
                "only by mul_ and div_ with a number; the out-of-place op gives a new one");
  bool overlaps = false;
  for (int64_t d = 0; d < self.dim(); ++d) overlaps |= self.size(d) > 1 && self.stride(d) == 0;
  TP_CHECK(!overlaps || self.numel() == 0, "[", op, "] unsupported operation: more than one element of the ",
           "written-to tensor refers to a single memory location. Please clone() the tensor before performing ",
           "the operation.");
}

void check_inplace(const char* op, const Tensor& self, IntArrayRef shape, ScalarType result) {
  check_no_internal_overlap(op, self);
  TP_CHECK(can_cast(result, self.dtype()), "[", op, "] result type ", name(result),
           " can't be cast to the desired output type ", name(self.dtype()));
  TP_CHECK(std::ranges::equal(shape, self.sizes()), "[", op, "] output with shape ", to_string(self.sizes()),
           " doesn't match the broadcast shape ", to_string(shape));
}

// A fill value must be representable in the dtype (infinities and NaN in floating ones), as
// PyTorch checks: zeros(2, dtype=uint8).fill_(300) is an error, not 44.
void check_fits(const char* op, const Scalar& value, ScalarType dtype) {
  if (dtype == ScalarType::Bool || is_complex(dtype)) return;
  TP_CHECK(!value.is_complex() || value.to_complex().imag() == 0, "[", op, "] value cannot be converted to type ",
           name(dtype), " without overflow");
  double v = value.to_double();
  auto [lo, hi] = visit_dtype(op, dtype, [](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, Half>) return std::pair<double, double>{-65504.0, 65504.0};
    else if constexpr (std::is_same_v<T, BFloat16>) {
      double max = float(BFloat16::from_bits(0x7F7F));
      return std::pair<double, double>{-max, max};
    } else {
      return std::pair<double, double>{static_cast<double>(std::numeric_limits<T>::lowest()),
                                       static_cast<double>(std::numeric_limits<T>::max())};
    }
  });
  // An int wraps into an unsigned dtype from as low as -max, as C's conversion does (full(-1,
  // dtype=uint8) is 255), as in PyTorch.
  const int64_t i = value.is_floating_point() ? 0 : value.to_int();
  bool fits = is_floating_point(dtype)    ? !std::isfinite(v) || (v >= lo && v <= hi)
              : value.is_floating_point() ? std::isfinite(v) && v >= lo && v <= hi
                                          : (i >= lo && i <= hi) || (dtype == ScalarType::UInt8 && i < 0 && i >= -hi);
  TP_CHECK(fits, "[", op, "] value cannot be converted to type ", name(dtype), " without overflow");
}

void check_no_partial_overlap(const char* op, const Tensor& self, const Tensor& input) {
  if (input.impl()->storage() != self.impl()->storage() || input.impl() == self.impl()) return;
  if (!is_dense_layout(self.sizes(), self.strides()) || !is_dense_layout(input.sizes(), input.strides())) return;
  if (input.storage_offset() == self.storage_offset() && input.dtype() == self.dtype() &&
      std::ranges::equal(input.sizes(), self.sizes()) && std::ranges::equal(input.strides(), self.strides()))
    return;
  // Dense layouts span exactly their elements: [offset, offset + numel) in bytes.
  const int64_t a = self.storage_offset() * self.itemsize(), b = input.storage_offset() * input.itemsize();
  TP_CHECK(a + self.nbytes() <= b || b + input.nbytes() <= a || self.numel() == 0 || input.numel() == 0, "[", op,
           "] unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation.");
}

Tensor unaliased(const Tensor& input, const Tensor& out) {
  if (input.impl()->storage() != out.impl()->storage()) return input;
  bool identical = input.storage_offset() == out.storage_offset() && input.dtype() == out.dtype() &&
                   std::ranges::equal(input.strides(), out.strides()) && std::ranges::equal(input.sizes(), out.sizes());
  return identical ? input : clone(input);
}

}  // namespace tp

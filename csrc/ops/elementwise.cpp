#include "ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tp {

Tensor elementwise_output(IntArrayRef shape, ScalarType dtype, const Tensor& like) {
  if (std::ranges::equal(shape, like.sizes())) return empty_like(like, dtype);
  return empty(shape, dtype, like.device());
}

void check_no_internal_overlap(const char* op, const Tensor& self) {
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
  if (dtype == ScalarType::Bool) return;
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

Tensor unaliased(const Tensor& input, const Tensor& out) {
  if (input.impl()->storage() != out.impl()->storage()) return input;
  bool identical = input.storage_offset() == out.storage_offset() && input.dtype() == out.dtype() &&
                   std::ranges::equal(input.strides(), out.strides()) && std::ranges::equal(input.sizes(), out.sizes());
  return identical ? input : clone(input);
}

}  // namespace tp

#include "ops/elementwise.h"

#include <algorithm>

namespace tp {

Tensor elementwise_output(IntArrayRef shape, ScalarType dtype, const Tensor& like) {
  if (std::ranges::equal(shape, like.sizes())) return empty_like(like, dtype);
  return empty(shape, dtype, like.device());
}

void check_inplace(const char* op, const Tensor& self, IntArrayRef shape, ScalarType result) {
  TP_CHECK(can_cast(result, self.dtype()), "[", op, "] result type ", name(result),
           " can't be cast to the desired output type ", name(self.dtype()));
  TP_CHECK(std::ranges::equal(shape, self.sizes()), "[", op, "] output with shape ", to_string(self.sizes()),
           " doesn't match the broadcast shape ", to_string(shape));
}

Tensor unaliased(const Tensor& input, const Tensor& out) {
  if (input.impl()->storage() != out.impl()->storage()) return input;
  bool identical = input.storage_offset() == out.storage_offset() && input.dtype() == out.dtype() &&
                   std::ranges::equal(input.strides(), out.strides()) && std::ranges::equal(input.sizes(), out.sizes());
  return identical ? input : clone(input);
}

}  // namespace tp

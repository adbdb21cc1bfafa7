#pragma once
// The elementwise combination a reducing collective applies between two ranks' buffers, in the
// form Gloo calls it: out[i] = a[i] op b[i] for n elements.

#include <cstddef>
#include <string_view>

#include "tensorplay/core/scalar_type.h"
#include "tensorplay/distributed/reduce_op.h"

namespace tp::distributed {

using ReduceFunction = void (*)(void* out, const void* a, const void* b, size_t n);

// For the dtype the data travels in (16-bit floats travel as float32; AVG is SUM, then a division).
// An error naming collective when op does not apply to dtype (bitwise ops on floats, MIN on
// complex numbers, AVG on integers).
ReduceFunction reduce_function(std::string_view collective, ScalarType dtype, ReduceOp op);

}  // namespace tp::distributed

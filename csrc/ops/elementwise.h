#pragma once
// Shared normalisation for elementwise ops (unary.cpp, binary.cpp, indexing.cpp): output
// allocation and the checks of in-place writes.

#include "ops/ops.h"

namespace tp {

// A fresh output of the given shape and dtype, laid out like `like` when it has that shape.
Tensor elementwise_output(IntArrayRef shape, ScalarType dtype, const Tensor& like);

// An in-place op may write a result of `result` dtype and `shape` into self only when the dtype
// can be cast and the shape is self's own (no broadcasting of the output).
void check_inplace(const char* op, const Tensor& self, IntArrayRef shape, ScalarType result);

// A value written by fill_ or full must be representable in the dtype (infinities and NaN in
// floating ones): zeros(2, dtype=uint8).fill_(300) is an error, as in PyTorch, not 44.
void check_fits(const char* op, const Scalar& value, ScalarType dtype);

// Inputs that share memory with the output other than exactly are copied aside first, so an
// in-place op never reads an element it has already overwritten.
Tensor unaliased(const Tensor& input, const Tensor& out);

}  // namespace tp

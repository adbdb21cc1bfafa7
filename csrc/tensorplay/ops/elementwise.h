#pragma once
// Shared normalisation for elementwise ops (unary.cpp, binary.cpp, indexing.cpp): output
// allocation and the checks of in-place writes.

#include "tensorplay/ops/ops.h"

namespace tp {

// The device an op with these operands runs on: they must share one, except that 0-dim CPU
// tensors (numbers in tensor form) may join tensors of any device, as in PyTorch.
Device common_device(const char* op, std::initializer_list<const Tensor*> operands);

// A fresh output of the given shape and dtype, laid out like `like` when it has that shape.
Tensor elementwise_output(IntArrayRef shape, ScalarType dtype, const Tensor& like);

// A tensor whose elements share memory (a dim of size > 1 with stride 0, as expand makes) cannot
// be written: the result would depend on the order of the loop. PyTorch refuses it too.
void check_no_internal_overlap(const char* op, const Tensor& self);

// An in-place op may write a result of `result` dtype and `shape` into self only when the dtype
// can be cast and the shape is self's own (no broadcasting of the output).
void check_inplace(const char* op, const Tensor& self, IntArrayRef shape, ScalarType result);

// A number that an op converts to the dtype (fill_, full, scatter's and masked_fill's value, clamp's
// bounds) must be representable in it (infinities and NaN in floating ones):
// zeros(2, dtype=uint8).fill_(300) is an error, as in PyTorch, not 44.
void check_fits(const char* op, const Scalar& value, ScalarType dtype);

// An in-place op refuses an input that shares some, but not all, of the memory it writes, where
// both are laid out densely (a.t().add_(a)), as PyTorch does. Other overlaps, which PyTorch cannot
// tell apart cheaply and lets through, are made safe by unaliased() below.
void check_no_partial_overlap(const char* op, const Tensor& self, const Tensor& input);

// Inputs that share memory with the output other than exactly are copied aside first, so an
// in-place op never reads an element it has already overwritten.
Tensor unaliased(const Tensor& input, const Tensor& out);

}  // namespace tp

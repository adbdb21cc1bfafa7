#pragma once
// Tensors for kernels: allocation, views, contiguous copies and dtype conversion, below autograd
// and autocast.
//
// A kernel that needs a buffer, a view or a converted operand builds it from these, never from
// the public ops (ops/ops.h) or Tensor's op methods (contiguous, to, view, reshape): those record
// autograd history and obey autocast, which a kernel must not. Arguments are trusted: the op
// above has checked them, so nothing here checks again.

#include "tensorplay/core/tensor.h"

namespace tp::kernel {

// Fresh, uninitialised memory. Every tensor the library allocates comes from empty_strided.
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device);
Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device);

// Views of t's memory.
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor permute(const Tensor& t, IntArrayRef order);  // dim i of the view is dim order[i] of t
Tensor movedim_last(const Tensor& t, int64_t dim);   // t with dim moved to the end
Tensor expand(const Tensor& t, IntArrayRef sizes);   // t broadcast to sizes (its dims align right)

// t itself when it already is contiguous (and of dtype), else a contiguous copy.
Tensor contiguous(const Tensor& t);
Tensor to(const Tensor& t, ScalarType dtype);

}  // namespace tp::kernel

#pragma once
// Memory formats: the orders in which a tensor's elements may lie in memory. A channels-last image
// (N, C, H, W) keeps the C values of each pixel next to each other, the layout convolution
// kernels prefer; the sizes and the values are those of the contiguous tensor.

#include "tensorplay/core/shape.h"

namespace tp {

enum class MemoryFormat : uint8_t {
  Contiguous,      // row-major
  Preserve,        // the input's own layout where it is dense, row-major otherwise
  ChannelsLast,    // 4-D (N, C, H, W) stored as (N, H, W, C)
  ChannelsLast3d,  // 5-D (N, C, D, H, W) stored as (N, D, H, W, C)
};

// "channels_last", as PyTorch names them.
const char* name(MemoryFormat format);
// The strides that lay sizes out in format (not Preserve); a rank that does not fit the format
// raises naming the op.
Shape memory_format_strides(const char* op, IntArrayRef sizes, MemoryFormat format);
// Whether strides are those of format for sizes, dims of size 1 aside (not Preserve).
bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format);
// The format a dense layout is in (ChannelsLast(3d) or Contiguous), as PyTorch's
// suggest_memory_format reads it.
MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides);

}  // namespace tp

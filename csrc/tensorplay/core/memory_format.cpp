#include "tensorplay/core/memory_format.h"

#include <algorithm>

#include "tensorplay/core/error.h"

namespace tp {

namespace {

// The dims of a channels-last layout, innermost first: C, then the spatial dims from the last.
Shape channels_last_order(size_t rank) {
  Shape order{1};
  for (size_t d = rank - 1; d >= 2; --d) order.push_back(static_cast<int64_t>(d));
  order.push_back(0);
  return order;
}

size_t rank_of(MemoryFormat format) { return format == MemoryFormat::ChannelsLast ? 4 : 5; }

}  // namespace

const char* name(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::Preserve: return "preserve_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
  }
  return "?";
}

Shape memory_format_strides(const char* op, IntArrayRef sizes, MemoryFormat format) {
  TP_CHECK(format != MemoryFormat::Preserve, "[", op, "] preserve memory format is unsupported by the ", op,
           " operator");
  if (format == MemoryFormat::Contiguous) return contiguous_strides(sizes);
  const size_t rank = rank_of(format);
  TP_CHECK(sizes.size() == rank, "[", op, "] required rank ", rank, " tensor to use ", name(format), " format");
  Shape strides(rank);
  int64_t stride = 1;
  for (int64_t d : channels_last_order(rank)) {
    strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous) {
    if (numel(sizes) == 0) return true;
    int64_t expected = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] == 1) continue;
      if (strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
  if (sizes.size() != rank_of(format)) return false;
  int64_t expected = 1;
  for (int64_t d : channels_last_order(sizes.size())) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides) {
  for (MemoryFormat format : {MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d})
    if (sizes.size() == rank_of(format) && !is_contiguous_as(sizes, strides, MemoryFormat::Contiguous) &&
        is_contiguous_as(sizes, strides, format))
      return format;
  return MemoryFormat::Contiguous;
}

}  // namespace tp

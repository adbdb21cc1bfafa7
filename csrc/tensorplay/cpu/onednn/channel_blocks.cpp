#include "tensorplay/cpu/onednn/channel_blocks.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "tensorplay/core/parallel.h"
#include "tensorplay/cpu/onednn/plan.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

int64_t itemsize(dt type) { return static_cast<int64_t>(dnnl::memory::data_type_size(type)); }

// Runs slab(plain_offset, blocked_offset, count) in parallel over the slabs (image n, channel
// block b), with the byte offsets of the slab in the two layouts and how many of its channels are
// real (fewer than the block in a last, partial one).
template <class Slab>
void for_each_slab(const ChannelBlocks& s, const Slab& slab) {
  const int64_t blocks = (s.channels + s.block - 1) / s.block, bytes = s.plane * s.block * itemsize(s.blocked_type);
  constexpr int64_t kTaskBytes = 64 << 10;  // a task's share, at least
  const int64_t grain = std::max<int64_t>(1, kTaskBytes / std::max<int64_t>(bytes, 1));
  parallel_for(0, s.batch * blocks, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t n = i / blocks, first = i % blocks * s.block;
      slab((n * s.channels + first) * s.plane * itemsize(s.plain_type), i * bytes, std::min(s.block, s.channels - first));
    }
  });
}

template <class Bits>
void transpose(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  simd::transpose(static_cast<const Bits*>(src), src_stride, static_cast<Bits*>(dst), dst_stride, rows, cols);
}

void transpose(dt type, const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
               int64_t cols) {
  if (itemsize(type) == 2) transpose<uint16_t>(src, src_stride, dst, dst_stride, rows, cols);
  else transpose<uint32_t>(src, src_stride, dst, dst_stride, rows, cols);
}

// A slab's channels in float32 on their way between 16-bit rows and blocks: this thread's buffer.
float* slab_buffer(int64_t count) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < count) buffer.resize(count);
  return buffer.data();
}

}  // namespace

std::optional<ChannelBlocks> ChannelBlocks::between(const dnnl::memory::desc& plain,
                                                    const dnnl::memory::desc& blocked) {
  const dnnl::memory::dims dims = plain.dims();
  const dt plain_type = plain.data_type(), blocked_type = blocked.data_type();
  const bool widens = plain_type != blocked_type;
  if (widens && (blocked_type != dt::f32 || (plain_type != dt::bf16 && plain_type != dt::f16))) return std::nullopt;
  if (dims.size() != 4 || blocked.dims() != dims || (itemsize(plain_type) != 2 && itemsize(plain_type) != 4))
    return std::nullopt;
  if (plain != dnnl::memory::desc(dims, plain_type, tag::abcd)) return std::nullopt;
  // A pixel's block must fill a row of simd::transpose's blocks (32 bytes): bfloat16 in 8s would
  // go element by element, slower than oneDNN's reorder (and no CPU's oneDNN asks for it: AVX2
  // has no bfloat16 convolution).
  for (auto [format, block] : {std::pair(tag::aBcd16b, 16), std::pair(tag::aBcd8b, 8)})
    if (block * itemsize(blocked_type) >= 32 && blocked == dnnl::memory::desc(dims, blocked_type, format))
      return ChannelBlocks{dims[0], dims[1], dims[2] * dims[3], block, plain_type, blocked_type};
  return std::nullopt;
}

// plain [count, plane] rows -> blocked [plane, block] rows; a partial block's other channels are 0.
void ChannelBlocks::to_blocks(const void* plain, void* blocked) const {
  for_each_slab(*this, [&](int64_t plain_at, int64_t blocked_at, int64_t count) {
    const char* p = static_cast<const char*>(plain) + plain_at;
    char* q = static_cast<char*>(blocked) + blocked_at;
    if (count < block) std::memset(q, 0, plane * block * itemsize(blocked_type));
    if (plain_type != blocked_type) {
      float* widened = slab_buffer(count * plane);
      onednn::convert(p, plain_type, widened, blocked_type, count * plane);
      p = reinterpret_cast<const char*>(widened);
    }
    transpose(blocked_type, p, plane, q, block, plane, count);
  });
}

// blocked [plane, block] rows -> plain [count, plane] rows.
void ChannelBlocks::from_blocks(const void* blocked, void* plain) const {
  for_each_slab(*this, [&](int64_t plain_at, int64_t blocked_at, int64_t count) {
    const char* q = static_cast<const char*>(blocked) + blocked_at;
    char* p = static_cast<char*>(plain) + plain_at;
    if (plain_type == blocked_type) {
      transpose(blocked_type, q, block, p, plane, count, plane);
    } else {
      float* widened = slab_buffer(count * plane);
      transpose(blocked_type, q, block, widened, plane, count, plane);
      onednn::convert(widened, blocked_type, p, plain_type, count * plane);
    }
  });
}

}  // namespace tp::cpu

#pragma once
// oneDNN's convolutions run on channels in blocks (aBcd16b on AVX-512, aBcd8b on AVX2): the
// tensor [N, C, H, W] stored as [N, ceil(C / B), H, W, B], the channels past C zero. Going there
// from NCHW and back is a transposition of each [B, H * W] slab, which the SIMD blocks of
// simd::transpose do faster than oneDNN 2.6's generic reorder (`jit:uni`): bfloat16 in blocks of
// 16 about twice as fast, float32 as fast or a little faster (figures in BENCHMARKS.md).
//
// Where a CPU has no 16-bit convolution and runs it in float32 (conv.cpp), a relayout also
// converts: 16-bit NCHW rows widen into float32 blocks and float32 blocks round back into them,
// one slab at a time through a buffer that stays in cache. A separate conversion would write the
// whole float32 tensor to memory and read it back.

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <optional>

namespace tp::cpu {

struct ChannelBlocks {
  int64_t batch, channels, plane;  // N, C, H * W
  int64_t block;                   // B
  dnnl::memory::data_type plain_type, blocked_type;  // the same, or a 16-bit float and f32

  // The blocking from plain (dense NCHW) to blocked (the same dims as aBcd8b or aBcd16b, in
  // plain's dtype or, for a 16-bit plain, in f32), if the two are that; nullopt for any other pair
  // (oneDNN reorders those).
  static std::optional<ChannelBlocks> between(const dnnl::memory::desc& plain, const dnnl::memory::desc& blocked);

  void to_blocks(const void* plain, void* blocked) const;
  void from_blocks(const void* blocked, void* plain) const;
};

}  // namespace tp::cpu

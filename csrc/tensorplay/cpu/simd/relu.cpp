// relu and its gradient over contiguous float32 and bfloat16 rows in SIMD code, compiled by
// Highway for each x86 target and dispatched at run time (see simd/softmax.cpp). Each result is
// one of the inputs or zero, so bfloat16 rows are widened to float32 registers to be compared
// and narrowed back by dropping the low half of each lane, which is exact: no rounding.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/relu.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;

// 0 where x < 0, else x (so -0 and NaN stay, as in PyTorch).
template <class T>
void ReluRow(const T* x, T* y, int64_t n) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < n; i += lanes) {
    const size_t count = static_cast<size_t>(std::min(lanes, n - i));
    const V v = LoadRow(d, x + i, count);
    StoreRow(d, hn::IfThenZeroElse(hn::Lt(v, hn::Zero(d)), v), y + i, count);
  }
}

// 0 where y <= threshold, else g (so g where y is NaN).
template <class T>
void ThresholdBackwardRow(const T* g, const T* y, T* out, float threshold, int64_t n) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < n; i += lanes) {
    const size_t count = static_cast<size_t>(std::min(lanes, n - i));
    const V at_or_below = hn::VecFromMask(d, hn::Le(LoadRow(d, y + i, count), hn::Set(d, threshold)));
    StoreRow(d, hn::AndNot(at_or_below, LoadRow(d, g + i, count)), out + i, count);
  }
}

// float32 rows write through WriteRow, which streams the biggest outputs past the cache.
void ReluRowF32(const float* x, float* y, int64_t n) {
  const DF d;
  const auto relu = [&](V v) { return hn::IfThenZeroElse(hn::Lt(v, hn::Zero(d)), v); };
  WriteRow(
      d, y, n, x == y, [&](int64_t i) { return relu(hn::LoadU(d, x + i)); },
      [&](int64_t i, size_t count) { return relu(LoadFirst(d, x + i, count)); });
}
void ReluRowBF16(const uint16_t* x, uint16_t* y, int64_t n) { ReluRow(x, y, n); }
void ThresholdBackwardRowF32(const float* g, const float* y, float* out, float t, int64_t n) {
  ThresholdBackwardRow(g, y, out, t, n);
}
void ThresholdBackwardRowBF16(const uint16_t* g, const uint16_t* y, uint16_t* out, float t, int64_t n) {
  ThresholdBackwardRow(g, y, out, t, n);
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(ReluRowF32);
HWY_EXPORT(ReluRowBF16);
HWY_EXPORT(ThresholdBackwardRowF32);
HWY_EXPORT(ThresholdBackwardRowBF16);

void relu_row(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ReluRowF32)(x, y, n); }

void relu_row(const BFloat16* x, BFloat16* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ReluRowBF16)(reinterpret_cast<const uint16_t*>(x), reinterpret_cast<uint16_t*>(y), n);
}

void threshold_backward_row(const float* g, const float* y, float* out, float threshold, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ThresholdBackwardRowF32)(g, y, out, threshold, n);
}

void threshold_backward_row(const BFloat16* g, const BFloat16* y, BFloat16* out, float threshold, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ThresholdBackwardRowBF16)(reinterpret_cast<const uint16_t*>(g),
                                                 reinterpret_cast<const uint16_t*>(y), reinterpret_cast<uint16_t*>(out),
                                                 threshold, n);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

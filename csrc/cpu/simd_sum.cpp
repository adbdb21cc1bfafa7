// The sum of a contiguous float32 or bfloat16 row (in float32 lanes) in SIMD code, compiled by
// Highway for each x86 target and dispatched at run time (see simd_softmax.cpp).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd_sum.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <cstdint>

#include "cpu/simd-inl.h"
#include "cpu/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T>
float SumRow(const T* x, int64_t n) {
  const hn::ScalableTag<float> d;
  return SumOf(d, x, n, [](auto v) { return v; });
}

float SumRowF32(const float* x, int64_t n) { return SumRow(x, n); }
float SumRowBF16(const uint16_t* x, int64_t n) { return SumRow(x, n); }

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SumRowF32);
HWY_EXPORT(SumRowBF16);

float sum_row(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumRowF32)(x, n); }

float sum_row(const BFloat16* x, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(SumRowBF16)(reinterpret_cast<const uint16_t*>(x), n);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

// The sum of a contiguous float32 row in SIMD code, compiled by Highway for each x86 target and
// dispatched at run time (see simd_softmax.cpp).

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

float SumRow(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  return SumOf(d, x, n, [](auto v) { return v; }, [](float v) { return v; });
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SumRow);

float sum_row(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumRow)(x, n); }

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

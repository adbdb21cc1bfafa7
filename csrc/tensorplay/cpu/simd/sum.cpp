// Sums of contiguous float32 or bfloat16 rows (in float32 lanes) in SIMD code, compiled by
// Highway for each x86 target and dispatched at run time (see simd/softmax.cpp): a row's sum, and
// a row added into a row of sums (a sum over the leading dims, as a bias gradient's).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/sum.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

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

template <class T>
void AccumulateRow(float* acc, const T* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < n; i += lanes) {
    const size_t count = static_cast<size_t>(std::min(lanes, n - i));
    StoreFirst(hn::Add(LoadFirst(d, acc + i, count), LoadRow(d, x + i, count)), d, acc + i, count);
  }
}

void AccumulateRowF32(float* acc, const float* x, int64_t n) { AccumulateRow(acc, x, n); }
void AccumulateRowBF16(float* acc, const uint16_t* x, int64_t n) { AccumulateRow(acc, x, n); }

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SumRowF32);
HWY_EXPORT(SumRowBF16);
HWY_EXPORT(AccumulateRowF32);
HWY_EXPORT(AccumulateRowBF16);

float sum_row(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumRowF32)(x, n); }

float sum_row(const BFloat16* x, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(SumRowBF16)(reinterpret_cast<const uint16_t*>(x), n);
}

void accumulate_row(float* acc, const float* x, int64_t n) { HWY_DYNAMIC_DISPATCH(AccumulateRowF32)(acc, x, n); }

void accumulate_row(float* acc, const BFloat16* x, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AccumulateRowBF16)(acc, reinterpret_cast<const uint16_t*>(x), n);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

// softmax and log_softmax of a contiguous float32 or bfloat16 row in SIMD code, compiled by
// Highway for each x86 target (SSE4, AVX2, AVX-512, ...) and dispatched to the best one this CPU
// has at run time. This file is included once per target (HWY_TARGET_INCLUDE); the dispatcher is
// compiled once. A bfloat16 row is widened as it is loaded, into float32 results that
// simd::round_to then rounds (with AVX512-BF16's conversion where the CPU has it, which takes one
// instruction where Highway's code for AVX-512 takes ten).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/softmax.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;

// f(i, count) over a row of n lanes: whole vectors (count == lanes, which the compiler sees once f
// is inlined), then the last, partial one, if any.
template <class F>
HWY_INLINE void ForEachVector(int64_t n, int64_t lanes, const F& f) {
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) f(i, static_cast<size_t>(lanes));
  if (i < n) f(i, static_cast<size_t>(n - i));
}

// Three passes, as the scalar kernel: the max (and whether a NaN is there), the sum of exp(x -
// max) (each kept in y for softmax), then the scaling or the shift. ExpOf (simd-inl.h) is good to
// 1 ulp; a row holding a NaN or an infinite max goes back to the caller's scalar loop. The lanes
// of a partial vector past the row's end read and write nothing and take no part in the max or
// the sum.
template <class T>
bool SoftmaxRow(const T* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n, bool log) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));

  const V lowest = hn::Set(d, -std::numeric_limits<float>::infinity());
  V vmax = lowest;
  V nan = hn::Zero(d);  // all bits set in a lane that saw a NaN
  ForEachVector(n, lanes, [&](int64_t i, size_t count) {
    V v = LoadRow(d, x + i, count);
    if (count < hn::Lanes(d)) v = hn::IfThenElse(hn::FirstN(d, count), v, lowest);
    vmax = hn::Max(vmax, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));  // (Ne(v, v) is an ordered compare here: false)
  });
  const float max = hn::GetLane(hn::MaxOfLanes(d, vmax));
  if (!hn::AllFalse(d, hn::MaskFromVec(nan)) || !std::isfinite(max)) return false;

  const V shift = hn::Set(d, max);
  V vsum = hn::Zero(d);
  auto exp = [&](int64_t i, size_t count) {
    V e = ExpOf(d, hn::Sub(LoadRow(d, x + i, count), shift));
    if (count < hn::Lanes(d)) e = hn::IfThenElseZero(hn::FirstN(d, count), e);
    vsum = hn::Add(vsum, e);
    return e;
  };
  if (log) ForEachVector(n, lanes, [&](int64_t i, size_t count) { exp(i, count); });
  else ForEachVector(n, lanes, [&](int64_t i, size_t count) { StoreFirst(exp(i, count), d, y + i, count); });
  const float sum = hn::GetLane(hn::SumOfLanes(d, vsum));

  if (log) {  // (x - max) - log(sum): max + log(sum) would lose log(sum) next to a huge max
    const V vlog_sum = hn::Set(d, std::log(sum));
    ForEachVector(n, lanes, [&](int64_t i, size_t count) {
      StoreFirst(hn::Sub(hn::Sub(LoadRow(d, x + i, count), shift), vlog_sum), d, y + i, count);
    });
  } else {
    const V vscale = hn::Set(d, 1.0f / sum);
    ForEachVector(n, lanes, [&](int64_t i, size_t count) {
      StoreFirst(hn::Mul(LoadFirst(d, y + i, count), vscale), d, y + i, count);
    });
  }
  return true;
}

bool SoftmaxRowF32(const float* x, float* y, int64_t n, bool log) { return SoftmaxRow(x, y, n, log); }
bool SoftmaxRowBF16(const uint16_t* x, float* y, int64_t n, bool log) { return SoftmaxRow(x, y, n, log); }

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SoftmaxRowF32);
HWY_EXPORT(SoftmaxRowBF16);

bool softmax_row(const float* x, float* y, int64_t n, bool log) {
  return HWY_DYNAMIC_DISPATCH(SoftmaxRowF32)(x, y, n, log);
}

bool softmax_row(const BFloat16* x, BFloat16* y, float* scratch, int64_t n, bool log) {
  if (!HWY_DYNAMIC_DISPATCH(SoftmaxRowBF16)(reinterpret_cast<const uint16_t*>(x), scratch, n, log)) return false;
  round_to(scratch, y, n);
  return true;
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

// softmax and log_softmax of a contiguous float32 row in SIMD code, compiled by Highway for each
// x86 target (SSE4, AVX2, AVX-512, ...) and dispatched to the best one this CPU has at run time.
// This file is included once per target (HWY_TARGET_INCLUDE); the dispatcher is compiled once.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd_softmax.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Three passes, as the scalar kernel: the max (and whether a NaN is there), the sum of exp(x -
// max) (kept in y for softmax), then the scaling or the shift. Highway's Exp is exact to 1 ulp on
// the range it is given here (x - max <= 0), but not for NaN or infinities: a row with those goes
// back to the caller's scalar loop.
bool SoftmaxRow(const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n, bool log) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t body = n - n % lanes;

  V vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
  V nan = hn::Zero(d);  // all bits set in a lane that saw a NaN
  for (int64_t i = 0; i < body; i += lanes) {
    const V v = hn::LoadU(d, x + i);
    vmax = hn::Max(vmax, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));  // (Ne(v, v) is an ordered compare here: false)
  }
  float max = hn::GetLane(hn::MaxOfLanes(d, vmax));
  bool has_nan = !hn::AllFalse(d, hn::MaskFromVec(nan));
  for (int64_t i = body; i < n; ++i) {
    max = std::max(max, x[i]);
    has_nan |= std::isnan(x[i]);
  }
  if (has_nan || !std::isfinite(max)) return false;

  const V shift = hn::Set(d, max);
  V vsum = hn::Zero(d);
  for (int64_t i = 0; i < body; i += lanes) {
    const V e = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), shift));
    vsum = hn::Add(vsum, e);
    if (!log) hn::StoreU(e, d, y + i);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (int64_t i = body; i < n; ++i) {
    const float e = std::exp(x[i] - max);
    sum += e;
    if (!log) y[i] = e;
  }

  if (log) {  // (x - max) - log(sum): max + log(sum) would lose log(sum) next to a huge max
    const float log_sum = std::log(sum);
    const V vlog_sum = hn::Set(d, log_sum);
    for (int64_t i = 0; i < body; i += lanes)
      hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, x + i), shift), vlog_sum), d, y + i);
    for (int64_t i = body; i < n; ++i) y[i] = (x[i] - max) - log_sum;
  } else {
    const float scale = 1.0f / sum;
    const V vscale = hn::Set(d, scale);
    for (int64_t i = 0; i < body; i += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), vscale), d, y + i);
    for (int64_t i = body; i < n; ++i) y[i] *= scale;
  }
  return true;
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SoftmaxRow);

bool softmax_row(const float* x, float* y, int64_t n, bool log) {
  return HWY_DYNAMIC_DISPATCH(SoftmaxRow)(x, y, n, log);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

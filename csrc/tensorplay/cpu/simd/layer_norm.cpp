// layer_norm of a contiguous float32 row in SIMD code, compiled by Highway for each x86 target
// and dispatched to the best one this CPU has at run time (see simd/softmax.cpp).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/layer_norm.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <cmath>
#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Three passes over a row that stays in cache: the mean, the variance around it (two passes, not
// E[x^2] - E[x]^2, which cancels for rows far from zero), then y = (x - mean) rstd w + b. n >= 1.
void LayerNormRow(const float* x, float* y, int64_t n, const float* w, const float* b, float eps) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t body = n - n % lanes;

  // The mean as x[0] + mean(x - x[0]): summed as they are, the values of a row far from zero
  // would lose their differences to the rounding of a large sum.
  const float origin = x[0];
  const V vorigin = hn::Set(d, origin);
  const float sum = SumOf(d, x, n, [&](V v) { return hn::Sub(v, vorigin); });
  const float mean = origin + sum / static_cast<float>(n);
  const V vmean = hn::Set(d, mean);
  const float sq = SumOf(d, x, n, [&](V v) {
    const V c = hn::Sub(v, vmean);
    return hn::Mul(c, c);
  });
  const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);

  // (x - mean) rstd, not x rstd - mean rstd: for a row far from zero those two terms nearly cancel.
  const V scale = hn::Set(d, rstd);
  for (int64_t i = 0; i < body; i += lanes) {
    V v = hn::Mul(hn::Sub(hn::LoadU(d, x + i), vmean), scale);
    if (w) v = hn::Mul(v, hn::LoadU(d, w + i));
    if (b) v = hn::Add(v, hn::LoadU(d, b + i));
    hn::StoreU(v, d, y + i);
  }
  for (int64_t i = body; i < n; ++i) {
    float v = (x[i] - mean) * rstd;
    if (w) v *= w[i];
    if (b) v += b[i];
    y[i] = v;
  }
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(LayerNormRow);

void layer_norm_row(const float* x, float* y, int64_t n, const float* w, const float* b, float eps) {
  HWY_DYNAMIC_DISPATCH(LayerNormRow)(x, y, n, w, b, eps);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

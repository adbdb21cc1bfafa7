// gelu and its gradient over contiguous float32 rows in SIMD code, compiled by Highway for each
// x86 target and dispatched to the best one this CPU has at run time (see simd/softmax.cpp).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/gelu.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;  // 1 / sqrt(2 pi)
constexpr float kBeta = 0.79788456080286535588f;        // sqrt(2 / pi)
constexpr float kKappa = 0.044715f;

// erf(z) as z P(z^2) / Q(z^2), a rational fit on [0, 4] (its odd symmetry covers [-4, 0]); erf
// is +-1 in float32 beyond. The fit is good to 2.4e-8; float32 arithmetic puts the result within
// 3.6e-7 of float64's erf. PyTorch's vectorised erf (Abramowitz and Stegun's 7.1.26: 1.5e-7, plus
// its rounding) costs twice as much here: it needs exp(-z^2). A NaN z is lost to the clamp, but
// every caller multiplies by its x, which brings the NaN back.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Erf(D d, V z) {
  z = hn::Min(hn::Max(z, hn::Set(d, -4.0f)), hn::Set(d, 4.0f));
  const V s = hn::Mul(z, z);
  V p = hn::MulAdd(hn::Set(d, 1.9748009e-06f), s, hn::Set(d, 2.8804259e-04f));
  p = hn::MulAdd(p, s, hn::Set(d, 4.0037353e-03f));
  p = hn::MulAdd(p, s, hn::Set(d, 5.3467746e-02f));
  p = hn::MulAdd(p, s, hn::Set(d, 1.9625118e-01f));
  p = hn::MulAdd(p, s, hn::Set(d, 1.1283790f));
  V q = hn::MulAdd(hn::Set(d, 3.7480624e-05f), s, hn::Set(d, 1.2163802e-03f));
  q = hn::MulAdd(q, s, hn::Set(d, 1.5444599e-02f));
  q = hn::MulAdd(q, s, hn::Set(d, 1.1647731e-01f));
  q = hn::MulAdd(q, s, hn::Set(d, 5.0725423e-01f));
  q = hn::MulAdd(q, s, hn::Set(d, 1.0f));
  const V erf = hn::Div(hn::Mul(z, p), q);
  return hn::Min(hn::Max(erf, hn::Set(d, -1.0f)), hn::Set(d, 1.0f));
}

// tanh(sqrt(2/pi) (x + 0.044715 x^3)) and the derivative of its argument. The argument is clamped
// to +-9, where tanh is 1 in float32 already, so that infinities give +-1 as std::tanh does.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void TanhInner(D d, V x, V& t, V& slope) {
  const V x2 = hn::Mul(x, x);
  const V inner = hn::Mul(hn::Set(d, kBeta), hn::MulAdd(hn::Mul(hn::Set(d, kKappa), x2), x, x));
  t = hn::Tanh(d, hn::Min(hn::Max(inner, hn::Set(d, -9.0f)), hn::Set(d, 9.0f)));
  slope = hn::Mul(hn::Set(d, kBeta), hn::MulAdd(hn::Set(d, 3.0f * kKappa), x2, hn::Set(d, 1.0f)));
}

// 0.5 x (1 + erf(x / sqrt 2)), or 0.5 x (1 + tanh(u)), as one rounding of 0.5 x t + 0.5 x. Where
// that is 0 (x = -0, or a tail where t = -1) it takes x's sign, as PyTorch's product does.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Gelu(D d, V x, bool tanh) {
  const V half_x = hn::Mul(x, hn::Set(d, 0.5f));
  V t, slope;
  if (tanh) TanhInner(d, x, t, slope);
  else t = Erf(d, hn::Mul(x, hn::Set(d, kInvSqrt2)));
  return hn::CopySign(hn::MulAdd(half_x, t, half_x), x);
}

// g * gelu'(x): gelu' = cdf(x) + x pdf(x) of the standard normal distribution, or, for the tanh
// form, 0.5 (1 + t) + 0.5 x (1 - t^2) u'. pdf is 0 at +-inf (ExpOf gives 0 for -inf), so
// the gradient there is inf * 0, NaN, as in PyTorch.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V GeluBackward(D d, V g, V x, bool tanh) {
  const V half = hn::Set(d, 0.5f);
  if (tanh) {
    V t, slope;
    TanhInner(d, x, t, slope);
    const V left = hn::MulAdd(half, t, half);
    const V right = hn::Mul(hn::Mul(hn::Mul(half, x), hn::NegMulAdd(t, t, hn::Set(d, 1.0f))), slope);
    return hn::Mul(g, hn::Add(left, right));
  }
  const V cdf = hn::MulAdd(half, Erf(d, hn::Mul(x, hn::Set(d, kInvSqrt2))), half);
  const V pdf = hn::Mul(ExpOf(d, hn::Mul(hn::Mul(x, x), hn::Set(d, -0.5f))), hn::Set(d, kInvSqrt2Pi));
  return hn::Mul(g, hn::MulAdd(x, pdf, cdf));
}

void GeluRow(const float* x, float* y, int64_t n, bool tanh) {
  const hn::ScalableTag<float> d;
  MapRow(d, x, y, n, [&](auto v) { return Gelu(d, v, tanh); });
}

void GeluBackwardRow(const float* g, const float* x, float* out, int64_t n,
                     bool tanh) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(GeluBackward(d, hn::LoadU(d, g + i), hn::LoadU(d, x + i), tanh), d, out + i);
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    StoreFirst(GeluBackward(d, LoadFirst(d, g + i, rest), LoadFirst(d, x + i, rest), tanh), d, out + i, rest);
  }
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(GeluRow);
HWY_EXPORT(GeluBackwardRow);

void gelu_row(const float* x, float* y, int64_t n, bool tanh) { HWY_DYNAMIC_DISPATCH(GeluRow)(x, y, n, tanh); }

void gelu_backward_row(const float* g, const float* x, float* out, int64_t n, bool tanh) {
  HWY_DYNAMIC_DISPATCH(GeluBackwardRow)(g, x, out, n, tanh);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

// exp, log, tanh, sigmoid and silu over contiguous float32 rows in SIMD code, compiled by Highway
// for each x86 target and dispatched at run time (see simd/softmax.cpp). exp (ExpOf in
// simd-inl.h: Highway's on AVX2, its reduction and polynomial with AVX-512's scaling there) is good
// to 1 ULP and Highway's Log to 4 of the exact result inside their valid ranges (tanh is our own,
// to 1.3 ULP); outside them, each kernel gives what std:: gives
// (infinities, NaN), as PyTorch's vectorised kernels (Sleef, 1 ULP) do.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/transcendental.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;

// log(x). Highway's Log covers (0, FLT_MAX]; the rest as std::log: -inf at +-0, NaN below 0,
// +inf at +inf, NaN for NaN.
HWY_INLINE V LogOf(DF d, V x) {
  const V inf = hn::Inf(d);
  V r = hn::Log(d, x);
  r = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Neg(inf), r);
  r = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::NaN(d), r);
  r = hn::IfThenElse(hn::Eq(x, inf), inf, r);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// tanh(x) to about 1 ULP (Highway's Tanh is off by up to 3, enough to miss PyTorch's rounding
// of tanh(0.5)): on |x| <= 0.625, x + x^3 P(x^2) with P a least-squares fit of relative error
// 1.7e-10; beyond, 1 - 2 / (e^2|x| + 1) with x's sign, from Exp's 1 ULP. |x| is clamped to 10,
// where that is 1 in float32, so the infinities give +-1; a NaN stays NaN.
HWY_INLINE V TanhOf(DF d, V x) {
  const V a = hn::Min(hn::Abs(x), hn::Set(d, 10.0f));
  const V s = hn::Mul(a, a);
  V p = hn::MulAdd(hn::Set(d, 2.138216884e-03f), s, hn::Set(d, -8.171778738e-03f));
  p = hn::MulAdd(p, s, hn::Set(d, 2.169820558e-02f));
  p = hn::MulAdd(p, s, hn::Set(d, -5.394625215e-02f));
  p = hn::MulAdd(p, s, hn::Set(d, 1.333320134e-01f));
  p = hn::MulAdd(p, s, hn::Set(d, -3.333333066e-01f));
  const V small = hn::MulAdd(hn::Mul(a, s), p, a);
  const V one = hn::Set(d, 1.0f);
  const V large = hn::Sub(one, hn::Div(hn::Set(d, 2.0f), hn::Add(ExpOf(d, hn::Add(a, a)), one)));
  const V t = hn::CopySign(hn::IfThenElse(hn::Le(a, hn::Set(d, 0.625f)), small, large), x);
  return hn::IfThenElse(hn::IsNaN(x), x, t);
}

// 1 / (1 + e^-x), computed as PyTorch's vectorised sigmoid is (0 at -inf, 1 at +inf).
HWY_INLINE V SigmoidOf(DF d, V x) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(one, hn::Add(one, ExpOf(d, hn::Neg(x))));
}

void ExpRow(const float* x, float* y, int64_t n) {
  MapRow(DF(), x, y, n, [](V v) { return ExpOf(DF(), v); });
}
void LogRow(const float* x, float* y, int64_t n) {
  MapRow(DF(), x, y, n, [](V v) { return LogOf(DF(), v); });
}
void TanhRow(const float* x, float* y, int64_t n) {
  MapRow(DF(), x, y, n, [](V v) { return TanhOf(DF(), v); });
}
void SigmoidRow(const float* x, float* y, int64_t n) {
  MapRow(DF(), x, y, n, [](V v) { return SigmoidOf(DF(), v); });
}
// x / (1 + e^-x), as PyTorch's vectorised silu (NaN at -inf, where that is -inf / inf).
void SiluRow(const float* x, float* y, int64_t n) {
  MapRow(DF(), x, y, n, [](V v) {
    const DF d;
    return hn::Div(v, hn::Add(hn::Set(d, 1.0f), ExpOf(d, hn::Neg(v))));
  });
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(ExpRow);
HWY_EXPORT(LogRow);
HWY_EXPORT(TanhRow);
HWY_EXPORT(SigmoidRow);
HWY_EXPORT(SiluRow);

void exp_row(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ExpRow)(x, y, n); }
void log_row(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(LogRow)(x, y, n); }
void tanh_row(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(TanhRow)(x, y, n); }
void sigmoid_row(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SigmoidRow)(x, y, n); }
void silu_row(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SiluRow)(x, y, n); }

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

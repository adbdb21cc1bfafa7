// Conversions between bfloat16 and float32 rows in SIMD code, compiled by Highway for each x86
// target and dispatched at run time (see simd_softmax.cpp). They follow core/half.h exactly:
// widening is exact, rounding is to nearest even, and a NaN becomes the bfloat16 NaN 0xFFFF.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd_convert.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <cstdint>

#include "cpu/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void WidenBFloat16(const uint16_t* in, float* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du32;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du32, hn::LoadU(du16, in + i)))), df, out + i);
  for (; i < n; ++i) out[i] = BFloat16::from_bits(in[i]);
}

void RoundToBFloat16(const float* in, uint16_t* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du32;
  const hn::RebindToSigned<decltype(df)> di32;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto bits = hn::BitCast(du32, hn::LoadU(df, in + i));
    const auto nan = hn::Gt(hn::And(bits, hn::Set(du32, 0x7FFFFFFFu)), hn::Set(du32, 0x7F800000u));
    const auto to_even = hn::Add(hn::Set(du32, 0x7FFFu), hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u)));
    const auto rounded = hn::IfThenElse(nan, hn::Set(du32, 0xFFFFu), hn::ShiftRight<16>(hn::Add(bits, to_even)));
    hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di32, rounded)), du16, out + i);  // (lanes hold 0..0xFFFF)
  }
  for (; i < n; ++i) out[i] = BFloat16(in[i]).bits;
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(WidenBFloat16);
HWY_EXPORT(RoundToBFloat16);

void widen(const BFloat16* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(WidenBFloat16)(reinterpret_cast<const uint16_t*>(in), out, n);
}

void round_to(const float* in, BFloat16* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(RoundToBFloat16)(in, reinterpret_cast<uint16_t*>(out), n);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

// Conversions between the 16-bit floats and float32 rows in SIMD code, compiled by Highway for
// each x86 target and dispatched at run time (see simd/softmax.cpp). They follow core/half.h
// exactly: widening is exact, rounding is to nearest even, a NaN becomes the bfloat16 NaN 0xFFFF,
// and float16 converts as the F16C instructions do, which the AVX2 and AVX-512 targets have.
// Below AVX2, Highway emulates them (and truncates where F16C rounds), so float16 rows are
// converted one value at a time there. Rounding to bfloat16 takes AVX512-BF16's instruction where
// the CPU has it (round_to below).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/convert.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstdint>

#include "tensorplay/cpu/simd/capability.h"
#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = the lanes of widened(i) from i on, whole vectors, and scalar(i) for the rest.
template <class D, class Vector, class Scalar>
HWY_INLINE void WidenInto(D df, float* out, int64_t n, Vector widened, Scalar scalar) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  if (n * static_cast<int64_t>(sizeof(float)) >= simd::streamed_bytes()) {  // streamed, as in WriteRow
    for (; i < static_cast<int64_t>(BeforeAligned(df, out)); ++i) out[i] = scalar(i);
    for (; i + lanes <= n; i += lanes) hn::Stream(widened(i), df, out + i);
    hwy::FlushStream();
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(widened(i), df, out + i);
  for (; i < n; ++i) out[i] = scalar(i);
}

void WidenBFloat16(const uint16_t* in, float* out, int64_t n) {
  const hn::ScalableTag<float> df;
  WidenInto(
      df, out, n, [&](int64_t i) { return LoadRow(df, in + i, hn::Lanes(df)); },
      [&](int64_t i) { return float(BFloat16::from_bits(in[i])); });
}

void RoundToBFloat16(const float* in, uint16_t* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(RoundToBFloat16Bits(df, hn::LoadU(df, in + i)), du16, out + i);
  for (; i < n; ++i) out[i] = BFloat16(in[i]).bits;
}

void WidenHalf(const uint16_t* in, float* out, int64_t n) {
  auto scalar = [&](int64_t i) { return float(Half::from_bits(in[i])); };
#if HWY_TARGET <= HWY_AVX2
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  WidenInto(
      df, out, n,
      [&](int64_t i) { return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(in) + i)); },
      scalar);
#else
  for (int64_t i = 0; i < n; ++i) out[i] = scalar(i);
#endif
}

void RoundToHalf(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
#if HWY_TARGET <= HWY_AVX2
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, in + i)), dh, reinterpret_cast<hwy::float16_t*>(out) + i);
#endif
  for (; i < n; ++i) out[i] = Half(in[i]).bits;
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(WidenBFloat16);
HWY_EXPORT(RoundToBFloat16);
HWY_EXPORT(WidenHalf);
HWY_EXPORT(RoundToHalf);

void widen(const BFloat16* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(WidenBFloat16)(reinterpret_cast<const uint16_t*>(in), out, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// AVX512-BF16 rounds 16 floats in one instruction (vcvtneps2bf16) where the integer sequence of
// RoundToBFloat16Bits takes ten. It rounds as that sequence does, to nearest even, except that it
// flushes subnormals to zero and keeps a NaN's payload: a vector holding either goes the integer
// way, so the bits are the same whichever path a value takes.
__attribute__((target("avx512f,avx512dq,avx512bf16"))) void RoundToBFloat16Native(const float* in, uint16_t* out,
                                                                                  int64_t n) {
  constexpr int kNanOrSubnormal = 0x01 | 0x20 | 0x80;  // vfpclassps: quiet NaN, subnormal, signalling NaN
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(in + i);
    if (_mm512_fpclass_ps_mask(v, kNanOrSubnormal))
      HWY_DYNAMIC_DISPATCH(RoundToBFloat16)(in + i, out + i, 16);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
  }
  if (i < n) HWY_DYNAMIC_DISPATCH(RoundToBFloat16)(in + i, out + i, n - i);
}

// Whether the kernels may use it: this CPU has AVX512-BF16 and TP_CPU_CAPABILITY leaves AVX-512 on.
bool native_bfloat16_rounding() {
  static const bool native = __builtin_cpu_supports("avx512bf16") && cpu_capability() == "AVX512";
  return native;
}

}  // namespace
#endif

void round_to(const float* in, BFloat16* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (native_bfloat16_rounding()) return RoundToBFloat16Native(in, reinterpret_cast<uint16_t*>(out), n);
#endif
  HWY_DYNAMIC_DISPATCH(RoundToBFloat16)(in, reinterpret_cast<uint16_t*>(out), n);
}

void widen(const Half* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(WidenHalf)(reinterpret_cast<const uint16_t*>(in), out, n);
}

void round_to(const float* in, Half* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(RoundToHalf)(in, reinterpret_cast<uint16_t*>(out), n);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

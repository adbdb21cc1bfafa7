// +, -, * and / of float32 and bfloat16 rows in SIMD code, compiled by Highway for each x86 target
// and dispatched at run time (see simd/softmax.cpp). A bfloat16 lane is widened, computed in
// float32 and rounded once, as the block-at-a-time path of float_rows.h computes it, in one pass
// instead of three. float32 rows take AVX-512 or AVX2 code where the generic loop is the
// baseline's, and stream big outputs (WriteRow).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/arith.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;

// out = f(a, b) over n float32 values; b is a row, or (null) the value scalar in every lane.
template <class F>
HWY_INLINE void ArithRow(const float* a, const float* b, float scalar, float* out, int64_t n, const F& f) {
  const DF d;
  const V repeated = hn::Set(d, scalar);
  WriteRow(
      d, out, n, out == a || out == b, [&](int64_t i) { return f(hn::LoadU(d, a + i), b ? hn::LoadU(d, b + i) : repeated); },
      [&](int64_t i, size_t count) { return f(LoadFirst(d, a + i, count), b ? LoadFirst(d, b + i, count) : repeated); });
}

// The same over bfloat16 bits, each result rounded once.
template <class F>
HWY_INLINE void ArithRow(const uint16_t* a, const uint16_t* b, float scalar, uint16_t* out, int64_t n, const F& f) {
  const DF d;
  const hn::Rebind<uint16_t, DF> d16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const V repeated = hn::Set(d, scalar);
  for (int64_t i = 0; i < n; i += lanes) {
    const size_t count = static_cast<size_t>(std::min(lanes, n - i));
    const V x = LoadRow(d, a + i, count);
    const V y = b ? LoadRow(d, b + i, count) : repeated;
    StoreFirst(RoundToBFloat16Bits(d, f(x, y)), d16, out + i, count);
  }
}

// alpha scales b for + and - (a + alpha b: two roundings, as the scalar loop has them).
template <class T>
void ArithRowOf(simd::Arith op, const T* a, const T* b, float scalar, T* out, int64_t n, float alpha) {
  const V al = hn::Set(DF(), alpha);
  const bool scaled = alpha != 1.0f;
  switch (op) {
    case simd::Arith::Add:
      if (scaled) return ArithRow(a, b, scalar, out, n, [&](V x, V y) { return hn::Add(x, hn::Mul(al, y)); });
      return ArithRow(a, b, scalar, out, n, [](V x, V y) { return hn::Add(x, y); });
    case simd::Arith::Sub:
      if (scaled) return ArithRow(a, b, scalar, out, n, [&](V x, V y) { return hn::Sub(x, hn::Mul(al, y)); });
      return ArithRow(a, b, scalar, out, n, [](V x, V y) { return hn::Sub(x, y); });
    case simd::Arith::Mul: return ArithRow(a, b, scalar, out, n, [](V x, V y) { return hn::Mul(x, y); });
    case simd::Arith::Div: return ArithRow(a, b, scalar, out, n, [](V x, V y) { return hn::Div(x, y); });
  }
}

void ArithRowF32(simd::Arith op, const float* a, const float* b, float scalar, float* out, int64_t n) {
  ArithRowOf(op, a, b, scalar, out, n, 1.0f);
}
void ArithRowBF16(simd::Arith op, const uint16_t* a, const uint16_t* b, float scalar, uint16_t* out, int64_t n,
                  float alpha) {
  ArithRowOf(op, a, b, scalar, out, n, alpha);
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(ArithRowF32);
HWY_EXPORT(ArithRowBF16);

void arith_row(Arith op, const float* a, const float* b, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ArithRowF32)(op, a, b, 0.0f, out, n);
}

void arith_row(Arith op, const float* a, float b, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ArithRowF32)(op, a, nullptr, b, out, n);
}

void arith_row(Arith op, const BFloat16* a, const BFloat16* b, BFloat16* out, int64_t n, float alpha) {
  HWY_DYNAMIC_DISPATCH(ArithRowBF16)(op, reinterpret_cast<const uint16_t*>(a), reinterpret_cast<const uint16_t*>(b),
                                     0.0f, reinterpret_cast<uint16_t*>(out), n, alpha);
}

void arith_row(Arith op, const BFloat16* a, float b, BFloat16* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ArithRowBF16)(op, reinterpret_cast<const uint16_t*>(a), nullptr, b,
                                     reinterpret_cast<uint16_t*>(out), n, 1.0f);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

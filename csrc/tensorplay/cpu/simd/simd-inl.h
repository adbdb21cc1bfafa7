// Pieces shared by the Highway kernels (csrc/tensorplay/cpu/simd/*.cpp), compiled once per target like them:
// a file includes this after hwy/foreach_target.h. (The guard below is Highway's per-target one.)

#if defined(TP_CPU_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TP_CPU_SIMD_INL_H_
#undef TP_CPU_SIMD_INL_H_
#else
#define TP_CPU_SIMD_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// e^x for every float32 x: +inf from log(FLT_MAX) up, subnormals and then 0 below -87.3, NaN for
// NaN, to Highway's Exp's 1 ULP (the same range reduction and polynomial). Highway builds 2^n in
// two integer steps, to reach the subnormals; AVX-512's vscalefps multiplies by 2^n in one
// instruction and rounds the subnormals and the overflow as that product does, in fewer cycles a
// vector (figures in BENCHMARKS.md).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpOf(D d, V x) {
#if HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D()) * sizeof(hn::TFromD<D>) == 64) {
    const V clamped = hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 100.0f));  // (a NaN x: below)
    const V n = hn::Round(hn::Mul(clamped, hn::Set(d, 1.442695040888963407359924681f)));
    V r = hn::MulAdd(n, hn::Set(d, -0.693145751953125f), clamped);  // the two parts of -ln 2
    r = hn::MulAdd(n, hn::Set(d, -1.428606765330187045e-6f), r);
    const V p = hn::Add(hn::impl::ExpImpl<float>().ExpPoly(d, r), hn::Set(d, 1.0f));
    return hn::IfThenElse(hn::IsNaN(x), x, V{_mm512_scalef_ps(p.raw, n.raw)});
  }
#endif
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Exp(d, hn::Min(x, hn::Set(d, 100.0f))));
}

// Below AVX-512 Highway has masked loads and stores for 32- and 64-bit lanes only (AVX2's). A
// partial vector of 16-bit lanes built through the stack is slow, as a vector load cannot be
// forwarded from the narrow stores that wrote its lanes (a short row, such as an 11-wide plane, is
// all partial vector). On AVX2 such a vector goes as pairs of lanes, 32-bit lanes under a mask, and
// an odd last lane alone.
template <class D>
constexpr bool kPairsMasked = HWY_TARGET == HWY_AVX2 && sizeof(hn::TFromD<D>) == 2;

// The first count elements of p (count <= Lanes(d)), the other lanes 0, reading nothing past
// p + count. Highway's MaskedLoad does that with the masked loads of AVX-512 and AVX2 (in pairs
// above for 16-bit lanes); below, it loads the whole vector, from an aligned address at that.
template <class D>
HWY_INLINE hn::Vec<D> LoadFirst(D d, const hn::TFromD<D>* p, size_t count) {
  using T = hn::TFromD<D>;
  if (count == hn::Lanes(d)) return hn::LoadU(d, p);
  if constexpr (HWY_TARGET <= HWY_AVX3 || (HWY_TARGET == HWY_AVX2 && sizeof(T) >= 4)) {
    return hn::MaskedLoad(hn::FirstN(d, count), d, p);
  } else if constexpr (kPairsMasked<D>) {
    const hn::Repartition<uint32_t, D> d32;
    const auto pairs = hn::BitCast(d, hn::MaskedLoad(hn::FirstN(d32, count / 2), d32,
                                                      reinterpret_cast<const uint32_t*>(p)));
    if (count % 2 == 0) return pairs;
    const hn::RebindToSigned<D> di;
    const auto last = hn::RebindMask(d, hn::Eq(hn::Iota(di, 0), hn::Set(di, static_cast<int16_t>(count - 1))));
    return hn::IfThenElse(last, hn::Set(d, p[count - 1]), pairs);
  } else {
    HWY_ALIGN T lanes[hn::MaxLanes(d)] = {};
    std::copy_n(p, count, lanes);
    return hn::Load(d, lanes);
  }
}

// count (<= Lanes) values of a row as float32 lanes, the others 0: float32 itself, or bfloat16
// bits widened (exactly).
template <class D>
HWY_INLINE hn::Vec<D> LoadRow(D d, const float* p, size_t count) {
  return LoadFirst(d, p, count);
}
template <class D>
HWY_INLINE hn::Vec<D> LoadRow(D d, const uint16_t* p, size_t count) {
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToUnsigned<D> du32;
  return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du32, LoadFirst(d16, p, count))));
}

// float32 lanes rounded to bfloat16 bits as core/half.h rounds (to nearest even; a NaN becomes
// 0xFFFF), in 16-bit lanes.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, D>> RoundToBFloat16Bits(D /* d */, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du32;
  const hn::RebindToSigned<D> di32;
  const auto bits = hn::BitCast(du32, v);
  const auto nan = hn::RebindMask(du32, hn::IsNaN(v));  // one unordered compare, not an integer one
  const auto to_even = hn::Add(hn::Set(du32, 0x7FFFu), hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u)));
  const auto rounded = hn::IfThenElse(nan, hn::Set(du32, 0xFFFFu), hn::ShiftRight<16>(hn::Add(bits, to_even)));
  return hn::DemoteTo(hn::Rebind<uint16_t, D>(), hn::BitCast(di32, rounded));  // (lanes hold 0..0xFFFF)
}

// The first count lanes of v into p (count <= Lanes(d)), writing nothing past p + count: with
// masked stores where the target has them (see kPairsMasked), else through the stack.
template <class D>
HWY_INLINE void StoreFirst(hn::Vec<D> v, D d, hn::TFromD<D>* p, size_t count) {
  using T = hn::TFromD<D>;
  if (count == hn::Lanes(d)) {
    hn::StoreU(v, d, p);
  } else if constexpr (HWY_TARGET <= HWY_AVX3 || sizeof(T) >= 4) {
    hn::BlendedStore(v, hn::FirstN(d, count), d, p);
  } else if constexpr (kPairsMasked<D>) {
    const hn::Repartition<uint32_t, D> d32;
    hn::BlendedStore(hn::BitCast(d32, v), hn::FirstN(d32, count / 2), d32, reinterpret_cast<uint32_t*>(p));
    if (count % 2 != 0) p[count - 1] = hn::ExtractLane(v, count - 1);
  } else {
    HWY_ALIGN T lanes[hn::MaxLanes(d)];
    hn::Store(v, d, lanes);
    std::copy_n(lanes, count, p);
  }
}

// count float32 lanes back into a row as LoadRow read it: float32 itself, or the upper half of
// each lane as bfloat16 bits, which is exact for a lane that holds a bfloat16 value already (a
// selection: relu, the max pool's gradient), and truncates any other.
template <class D>
HWY_INLINE void StoreRow(D d, hn::Vec<D> v, float* p, size_t count) {
  StoreFirst(v, d, p, count);
}
template <class D>
HWY_INLINE void StoreRow(D /* d */, hn::Vec<D> v, uint16_t* p, size_t count) {
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToSigned<D> di32;
  const hn::RebindToUnsigned<D> du32;
  StoreFirst(hn::DemoteTo(d16, hn::BitCast(di32, hn::ShiftRight<16>(hn::BitCast(du32, v)))), d16, p, count);
}

// How many elements of p come before its first vector-aligned one (0 to Lanes - 1).
template <class D>
HWY_INLINE size_t BeforeAligned(D d, const hn::TFromD<D>* p) {
  const size_t bytes = hn::Lanes(d) * sizeof(hn::TFromD<D>);
  return (bytes - reinterpret_cast<uintptr_t>(p) % bytes) % bytes / sizeof(hn::TFromD<D>);
}

// out[i] = the lanes of whole(i) for each whole vector of a row of n floats, then of part(i, count)
// for the count lanes left (the others written nothing). An output of simd::streamed_bytes() and
// more is streamed (non-temporal stores) from its first vector-aligned element on, its head a part
// too, unless it is one of the inputs (in_place): their lines are in the cache already, and
// streamed stores to those make the op slower (figures in BENCHMARKS.md; the bound: see
// streamed_stores.cpp).
template <class D, class Whole, class Part>
HWY_INLINE void WriteRow(D d, float* out, int64_t n, bool in_place, const Whole& whole, const Part& part) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (!in_place && n * static_cast<int64_t>(sizeof(float)) >= simd::streamed_bytes()) {
    const size_t head = BeforeAligned(d, out);
    StoreFirst(part(0, head), d, out, head);
    for (i = static_cast<int64_t>(head); i + lanes <= n; i += lanes) hn::Stream(whole(i), d, out + i);
    hwy::FlushStream();
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(whole(i), d, out + i);
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    StoreFirst(part(i, rest), d, out + i, rest);
  }
}

// y[i] = f(x[i]) over a row of n floats (lanes past its end read and write nothing). y may be x.
template <class D, class F>
HWY_INLINE void MapRow(D d, const float* x, float* y, int64_t n, const F& f) {
  WriteRow(
      d, y, n, x == y, [&](int64_t i) { return f(hn::LoadU(d, x + i)); },
      [&](int64_t i, size_t count) { return f(LoadFirst(d, x + i, count)); });
}

// The sum of f(x[i]) over a row of float32 or bfloat16 bits, in four independent vector
// accumulators (with one, each add would wait for the one before it); the tail is one masked
// vector, whose lanes past the row add nothing whatever f makes of them.
template <class D, class T, class F>
HWY_INLINE float SumOf(D d, const T* x, int64_t n, const F& f) {
  using V = hn::Vec<D>;
  const size_t lanes = hn::Lanes(d);
  const int64_t step = static_cast<int64_t>(lanes);
  V acc0 = hn::Zero(d), acc1 = hn::Zero(d), acc2 = hn::Zero(d), acc3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * step <= n; i += 4 * step) {
    acc0 = hn::Add(acc0, f(LoadRow(d, x + i, lanes)));
    acc1 = hn::Add(acc1, f(LoadRow(d, x + i + step, lanes)));
    acc2 = hn::Add(acc2, f(LoadRow(d, x + i + 2 * step, lanes)));
    acc3 = hn::Add(acc3, f(LoadRow(d, x + i + 3 * step, lanes)));
  }
  for (; i + step <= n; i += step) acc1 = hn::Add(acc1, f(LoadRow(d, x + i, lanes)));
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    acc2 = hn::Add(acc2, hn::IfThenElseZero(hn::FirstN(d, rest), f(LoadRow(d, x + i, rest))));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3))));
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TP_CPU_SIMD_INL_H_

// argmax and argmin of contiguous float32 and bfloat16 rows in SIMD code, compiled by Highway for
// each x86 target and dispatched at run time (see simd/softmax.cpp). PyTorch's answer is the
// first position of the largest (smallest) value, or of the first NaN: one pass finds the
// extreme value and whether the row holds a NaN, a second the first position that has it.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/argmax.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;

// The first position in x[0, n) whose lane satisfies match(v), or -1.
template <class T, class Match>
HWY_INLINE int64_t FirstWhere(DF d, const T* x, int64_t n, const Match& match) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < n; i += lanes) {
    const size_t count = static_cast<size_t>(std::min(lanes, n - i));
    const intptr_t at = hn::FindFirstTrue(d, hn::And(match(LoadRow(d, x + i, count)), hn::FirstN(d, count)));
    if (at >= 0) return i + at;
  }
  return -1;
}

template <class T>
int64_t ArgExtremumRow(const T* x, int64_t n, bool is_max) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Lanes past the row hold the value that never wins.
  const V pad = hn::Set(d, is_max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
  V extreme = pad;
  auto nan = hn::Ne(pad, pad);  // all false
  for (int64_t i = 0; i < n; i += lanes) {
    const size_t count = static_cast<size_t>(std::min(lanes, n - i));
    const V v = hn::IfThenElse(hn::FirstN(d, count), LoadRow(d, x + i, count), pad);
    nan = hn::Or(nan, hn::IsNaN(v));
    extreme = is_max ? hn::Max(extreme, v) : hn::Min(extreme, v);
  }
  if (!hn::AllFalse(d, nan)) return FirstWhere(d, x, n, [](V v) { return hn::IsNaN(v); });
  const V target = is_max ? hn::MaxOfLanes(d, extreme) : hn::MinOfLanes(d, extreme);
  return FirstWhere(d, x, n, [&](V v) { return hn::Eq(v, target); });
}

int64_t ArgExtremumRowF32(const float* x, int64_t n, bool is_max) { return ArgExtremumRow(x, n, is_max); }
int64_t ArgExtremumRowBF16(const uint16_t* x, int64_t n, bool is_max) { return ArgExtremumRow(x, n, is_max); }

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(ArgExtremumRowF32);
HWY_EXPORT(ArgExtremumRowBF16);

int64_t arg_extremum_row(const float* x, int64_t n, bool is_max) {
  return HWY_DYNAMIC_DISPATCH(ArgExtremumRowF32)(x, n, is_max);
}

int64_t arg_extremum_row(const BFloat16* x, int64_t n, bool is_max) {
  return HWY_DYNAMIC_DISPATCH(ArgExtremumRowBF16)(reinterpret_cast<const uint16_t*>(x), n, is_max);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

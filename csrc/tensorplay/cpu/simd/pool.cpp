// The 2x2 max pool with stride 2 (VGG's, LeNet's, the demo CNN's) and its gradient over float32
// and bfloat16 planes, in SIMD code, compiled by Highway for each x86 target and dispatched at run
// time (see simd/softmax.cpp). Forward, one output row at a time, a vector of outputs at a time:
// the two input rows are loaded and split into even and odd columns, and each window's four
// candidates are taken in row-major order, a larger value or a NaN replacing the best so far, as
// CpuBackend::max_pool2d defines. Backward, one input row at a time. Every value either way is a
// copy of an input, so bfloat16 ones go through float32 lanes and back exactly.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/pool.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Columns [from, width) of a row of the gradient (see MaxPool2x2BackwardRow) one at a time.
template <class T, class I>
void MaxPool2x2BackwardColumns(const T* g, const I* at, int64_t base, int64_t n, int64_t from, int64_t width, T* row) {
  for (int64_t x = from; x < width; ++x) row[x] = x < 2 * n && at[x / 2] == base + x ? g[x / 2] : T(0);
}

#if HWY_TARGET == HWY_SCALAR
inline float Value(float x) { return x; }
inline float Value(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

// The baseline build's one-lane target has no lane shuffles: one window at a time.
template <class T, class I>
void MaxPool2x2Row(const T* top, int64_t width, int64_t row, int64_t n, T* best, I* best_at) {
  for (int64_t q = 0; q < n; ++q) {
    const int64_t offsets[4] = {2 * q, 2 * q + 1, width + 2 * q, width + 2 * q + 1};
    float v = Value(top[offsets[0]]);
    int64_t at = offsets[0];
    for (int64_t o : offsets) {
      const float x = Value(top[o]);
      const bool take = x > v || x != x;
      v = take ? x : v;
      at = take ? o : at;
    }
    best[q] = top[at];
    best_at[q] = static_cast<I>(row + at);
  }
}

template <class T, class I>
void MaxPool2x2BackwardRow(const T* g, const I* at, int64_t base, int64_t n, int64_t width, T* row) {
  MaxPool2x2BackwardColumns(g, at, base, n, 0, width, row);
}
#else
// The even and odd elements of x[0, 2 count), count <= Lanes(d), as float32 lanes; lanes past
// count hold 0.
template <class D, class T, class V = hn::Vec<D>>
HWY_INLINE void LoadPairs(D d, const T* x, size_t count, V& even, V& odd) {
  const size_t lanes = hn::Lanes(d), m = 2 * count;
  const V lo = LoadRow(d, x, std::min(m, lanes));
  const V hi = m > lanes ? LoadRow(d, x + lanes, m - lanes) : hn::Zero(d);
  even = hn::ConcatEven(d, hi, lo);
  odd = hn::ConcatOdd(d, hi, lo);
}

// A vector of windows at a time. Below AVX-512 a partial vector of 16-bit lanes costs more than a
// whole one (see kPairsMasked): there a row of at least a vector's windows ends with the whole
// vector of its last windows, which computes some of them again, to the same values (faster on
// AVX2 than a partial vector, even in pairs: figures in BENCHMARKS.md).
template <class T, class I>
void MaxPool2x2Row(const T* top, int64_t width, int64_t row, int64_t n, T* best, I* best_at) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Half<decltype(di)> dh;
  const hn::Repartition<int64_t, decltype(di)> d64;
  const size_t lanes = hn::Lanes(d);
  const T* bottom = top + width;
  auto windows = [&](int64_t q, size_t count) {  // [q, q + count), count <= lanes
    hn::Vec<decltype(d)> a, b, c, e;
    LoadPairs(d, top + 2 * q, count, a, b);
    LoadPairs(d, bottom + 2 * q, count, c, e);
    // Plane positions fit int32 (the caller checks): the first candidate of window q + lane.
    const auto first = hn::Add(hn::Set(di, static_cast<int32_t>(row + 2 * q)), hn::ShiftLeft<1>(hn::Iota(di, 0)));
    auto v = a;
    auto at = first;
    auto consider = [&](hn::Vec<decltype(d)> x, int32_t offset) {
      const auto take = hn::Or(hn::Gt(x, v), hn::IsNaN(x));
      v = hn::IfThenElse(take, x, v);
      at = hn::IfThenElse(hn::RebindMask(di, take), hn::Add(first, hn::Set(di, offset)), at);
    };
    consider(b, 1);
    consider(c, static_cast<int32_t>(width));
    consider(e, static_cast<int32_t>(width + 1));
    StoreRow(d, v, best + q, count);
    if constexpr (std::is_same_v<I, int32_t>) {
      StoreFirst(at, di, best_at + q, count);
    } else {
      const auto low = hn::PromoteTo(d64, hn::LowerHalf(dh, at)), high = hn::PromoteTo(d64, hn::UpperHalf(dh, at));
      const size_t half = lanes / 2;
      StoreFirst(low, d64, best_at + q, std::min(count, half));
      if (count > half) StoreFirst(high, d64, best_at + q + half, count - half);
    }
  };
  const int64_t step = static_cast<int64_t>(lanes);
  constexpr bool partial_vectors = HWY_TARGET <= HWY_AVX3 || sizeof(T) == 4;
  if (partial_vectors || n < step) {
    for (int64_t q = 0; q < n; q += step) windows(q, static_cast<size_t>(std::min(step, n - q)));
    return;
  }
  int64_t q = 0;
  for (; q + step <= n; q += step) windows(q, lanes);
  if (q < n) windows(n - step, lanes);
}

// One input row of the gradient (row, at plane position base; either row of the windows [0, n)):
// each element is its window's gradient g[q] where the window's maximum, at[q], lies there, else
// 0; the columns past the last window are 0 too. A vector of columns at a time, which holds half
// as many windows: their gradients and positions are loaded once and each lane duplicated. Each
// value is a copy of a gradient, so bfloat16 ones go through float32 lanes and back exactly. Below
// AVX2 a partial vector of 16-bit lanes goes through the stack, which costs more than its few
// columns: there the columns after the last whole vector go one at a time. (On AVX2, in pairs, the
// partial vector is faster than one column at a time.)
template <class T, class I>
void MaxPool2x2BackwardRow(const T* g, const I* at, int64_t base, int64_t n, int64_t width, T* row) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Half<decltype(d)> half;
  const hn::Half<decltype(di)> half_i;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto column = hn::Iota(di, 0);
  const auto each_twice = hn::ShiftRight<1>(column);  // 0 0 1 1 2 2 ...
  // int64 positions as int32 pairs (little-endian; positions fit int32): the low halves 0 0 2 2 ...
  const auto low_halves = hn::IndicesFromVec(di, hn::And(column, hn::Set(di, ~1)));
  constexpr bool partial_vectors = HWY_TARGET <= HWY_AVX2 || sizeof(T) == 4;
  const int64_t vectors_end = partial_vectors ? width : 2 * n / lanes * lanes;
  int64_t x0 = 0;
  for (; x0 < vectors_end; x0 += lanes) {
    const int64_t q0 = x0 / 2;
    const auto windows = static_cast<size_t>(std::clamp<int64_t>(n - q0, 0, lanes / 2));  // half a vector
    const auto gv = hn::ZeroExtendVector(d, LoadRow(half, g + q0, windows));
    hn::Vec<decltype(di)> window_at;  // each column's window's maximum
    if constexpr (std::is_same_v<I, int32_t>) {
      const auto positions = hn::ZeroExtendVector(di, LoadFirst(half_i, at + q0, windows));
      window_at = hn::TableLookupLanes(positions, hn::IndicesFromVec(di, each_twice));
    } else {
      window_at = hn::TableLookupLanes(LoadFirst(di, reinterpret_cast<const int32_t*>(at + q0), 2 * windows),
                                       low_halves);
    }
    // A column past the windows meets a zero gradient (and a position that is not 0: x0 > 0).
    const auto position = hn::Add(hn::Set(di, static_cast<int32_t>(base + x0)), column);
    const auto here = hn::RebindMask(d, hn::Eq(window_at, position));
    const auto v = hn::IfThenElseZero(here, hn::TableLookupLanes(gv, hn::IndicesFromVec(d, each_twice)));
    StoreRow(d, v, row + x0, static_cast<size_t>(std::min(lanes, width - x0)));
  }
  MaxPool2x2BackwardColumns(g, at, base, n, x0, width, row);
}

#endif  // HWY_TARGET == HWY_SCALAR

// The exported instances (HWY_EXPORT takes plain functions, not templates): float32 and bfloat16
// rows with int32 or int64 positions, and their gradients.
void MaxPool2x2RowF32I32(const float* top, int64_t width, int64_t row, int64_t n, float* best, int32_t* at) {
  MaxPool2x2Row(top, width, row, n, best, at);
}
void MaxPool2x2RowF32I64(const float* top, int64_t width, int64_t row, int64_t n, float* best, int64_t* at) {
  MaxPool2x2Row(top, width, row, n, best, at);
}
void MaxPool2x2RowBF16I32(const uint16_t* top, int64_t width, int64_t row, int64_t n, uint16_t* best, int32_t* at) {
  MaxPool2x2Row(top, width, row, n, best, at);
}
void MaxPool2x2RowBF16I64(const uint16_t* top, int64_t width, int64_t row, int64_t n, uint16_t* best, int64_t* at) {
  MaxPool2x2Row(top, width, row, n, best, at);
}
void MaxPool2x2BackwardRowF32I32(const float* g, const int32_t* at, int64_t base, int64_t n, int64_t width,
                                 float* row) {
  MaxPool2x2BackwardRow(g, at, base, n, width, row);
}
void MaxPool2x2BackwardRowF32I64(const float* g, const int64_t* at, int64_t base, int64_t n, int64_t width,
                                 float* row) {
  MaxPool2x2BackwardRow(g, at, base, n, width, row);
}
void MaxPool2x2BackwardRowBF16I32(const uint16_t* g, const int32_t* at, int64_t base, int64_t n, int64_t width,
                                  uint16_t* row) {
  MaxPool2x2BackwardRow(g, at, base, n, width, row);
}
void MaxPool2x2BackwardRowBF16I64(const uint16_t* g, const int64_t* at, int64_t base, int64_t n, int64_t width,
                                  uint16_t* row) {
  MaxPool2x2BackwardRow(g, at, base, n, width, row);
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(MaxPool2x2RowF32I32);
HWY_EXPORT(MaxPool2x2RowF32I64);
HWY_EXPORT(MaxPool2x2RowBF16I32);
HWY_EXPORT(MaxPool2x2RowBF16I64);
HWY_EXPORT(MaxPool2x2BackwardRowF32I32);
HWY_EXPORT(MaxPool2x2BackwardRowF32I64);
HWY_EXPORT(MaxPool2x2BackwardRowBF16I32);
HWY_EXPORT(MaxPool2x2BackwardRowBF16I64);

void max_pool_2x2_row(const float* top, int64_t width, int64_t row, int64_t n, float* best, int32_t* best_at) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2RowF32I32)(top, width, row, n, best, best_at);
}

void max_pool_2x2_row(const float* top, int64_t width, int64_t row, int64_t n, float* best, int64_t* best_at) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2RowF32I64)(top, width, row, n, best, best_at);
}

void max_pool_2x2_row(const BFloat16* top, int64_t width, int64_t row, int64_t n, BFloat16* best, int32_t* best_at) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2RowBF16I32)(reinterpret_cast<const uint16_t*>(top), width, row, n,
                                             reinterpret_cast<uint16_t*>(best), best_at);
}

void max_pool_2x2_row(const BFloat16* top, int64_t width, int64_t row, int64_t n, BFloat16* best, int64_t* best_at) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2RowBF16I64)(reinterpret_cast<const uint16_t*>(top), width, row, n,
                                             reinterpret_cast<uint16_t*>(best), best_at);
}

void max_pool_2x2_backward_row(const float* g, const int32_t* at, int64_t base, int64_t n, int64_t width, float* row) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2BackwardRowF32I32)(g, at, base, n, width, row);
}

void max_pool_2x2_backward_row(const float* g, const int64_t* at, int64_t base, int64_t n, int64_t width, float* row) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2BackwardRowF32I64)(g, at, base, n, width, row);
}

void max_pool_2x2_backward_row(const BFloat16* g, const int32_t* at, int64_t base, int64_t n, int64_t width,
                               BFloat16* row) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2BackwardRowBF16I32)(reinterpret_cast<const uint16_t*>(g), at, base, n, width,
                                                      reinterpret_cast<uint16_t*>(row));
}

void max_pool_2x2_backward_row(const BFloat16* g, const int64_t* at, int64_t base, int64_t n, int64_t width,
                               BFloat16* row) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2BackwardRowBF16I64)(reinterpret_cast<const uint16_t*>(g), at, base, n, width,
                                                      reinterpret_cast<uint16_t*>(row));
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

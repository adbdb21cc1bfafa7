// Transposition of 2- and 4-byte matrices (x.t().contiguous(), a GEMM operand laid out as rows)
// in blocks of 16x16 and 8x8 held in AVX2 registers, compiled by Highway for each x86 target and
// dispatched at run time (see simd/softmax.cpp). A block is 16 (8) loads of 32 bytes, four (three)
// rounds of interleaving lanes, and 16 (8) stores: a fifth of a cycle per element, where a copy
// one element at a time takes one. Highway 1.0 has no transpose of its own and its interleaves
// work within 128-bit blocks on every target, so the blocks use AVX2's own (at the edges of the
// matrix, on a copy of the partial block); below AVX2 elements are copied one by one.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/transpose.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tensorplay/cpu/simd/simd.h"

#if HWY_TARGET <= HWY_AVX2
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {

// dst[i][j] = src[j][i] for i < rows, j < cols: the elements one by one.
template <class T>
void TransposeScalar(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * dst_stride + j] = src[j * src_stride + i];
}

#if HWY_TARGET <= HWY_AVX2

// The 16x16 block of 16-bit elements at src into dst (rows 32 bytes each).
void Transpose16x16(const uint16_t* src, int64_t src_stride, uint16_t* dst, int64_t dst_stride) {
  __m256i r[16], t[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k * src_stride));
  // Each round interleaves pairs of rows at twice the width of the last: 16-, 32- and 64-bit
  // lanes within each 128-bit half, then the halves themselves.
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm256_unpacklo_epi16(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_epi16(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {
    for (int h = 0; h < 2; ++h) {
      r[k + h] = _mm256_unpacklo_epi32(t[k + h], t[k + h + 2]);
      r[k + h + 2] = _mm256_unpackhi_epi32(t[k + h], t[k + h + 2]);
    }
  }
  for (int k = 0; k < 16; k += 8) {
    for (int h = 0; h < 4; ++h) {
      t[k + h] = _mm256_unpacklo_epi64(r[k + h], r[k + h + 4]);
      t[k + h + 4] = _mm256_unpackhi_epi64(r[k + h], r[k + h + 4]);
    }
  }
  // t[k] now holds, in each 128-bit half, 8 elements of one output row: output row
  // (k % 8 -> position in the 8 rows of a half) comes from rows 0-7 (t[k]) and 8-15 (t[k + 8]).
  static constexpr int kRow[8] = {0, 4, 2, 6, 1, 5, 3, 7};  // the output row t[k]'s low half holds
  for (int k = 0; k < 8; ++k) {
    const int row = kRow[k];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + row * dst_stride),
                        _mm256_permute2x128_si256(t[k], t[k + 8], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (row + 8) * dst_stride),
                        _mm256_permute2x128_si256(t[k], t[k + 8], 0x31));
  }
}

// The 8x8 block of 32-bit elements at src into dst (rows 32 bytes each).
void Transpose8x8(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + k * src_stride));
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    for (int h = 0; h < 2; ++h) {
      r[k + h] = _mm256_shuffle_ps(t[k + h], t[k + h + 2], 0x44);      // 64-bit lanes 0 of each
      r[k + h + 2] = _mm256_shuffle_ps(t[k + h], t[k + h + 2], 0xEE);  // 64-bit lanes 1 of each
    }
  }
  static constexpr int kRow[4] = {0, 2, 1, 3};  // the output row r[k]'s low half holds
  for (int k = 0; k < 4; ++k) {
    const int row = kRow[k];
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + row * dst_stride), _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + (row + 4) * dst_stride),
                     _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
}

#endif  // HWY_TARGET <= HWY_AVX2

// A partial block at an edge of the matrix (rows or cols under Size) through a whole one on the
// stack: its source rows are copied in (zeros after them), transposed, and the rows that belong to
// dst copied out, since the block itself would read and write past the matrix.
template <int Size, class T, void (*kBlock)(const T*, int64_t, T*, int64_t)>
void TransposePartial(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  alignas(32) T in[Size * Size] = {}, out[Size * Size];
  for (int64_t j = 0; j < cols; ++j) std::memcpy(in + j * Size, src + j * src_stride, rows * sizeof(T));
  kBlock(in, Size, out, Size);
  for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * dst_stride, out + i * Size, cols * sizeof(T));
}

// The matrix in blocks of Size x Size elements through kBlock (a template argument, so that it is
// inlined), the partial ones at its edges through TransposePartial.
template <int Size, class T, void (*kBlock)(const T*, int64_t, T*, int64_t)>
void TransposeBlocks(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; i += Size) {
    for (int64_t j = 0; j < cols; j += Size) {
      const T* from = src + j * src_stride + i;
      T* to = dst + i * dst_stride + j;
      if (i + Size <= rows && j + Size <= cols) kBlock(from, src_stride, to, dst_stride);
      else TransposePartial<Size, T, kBlock>(from, src_stride, to, dst_stride, std::min<int64_t>(Size, rows - i),
                                             std::min<int64_t>(Size, cols - j));
    }
  }
}

void Transpose16(const uint16_t* src, int64_t src_stride, uint16_t* dst, int64_t dst_stride, int64_t rows,
                 int64_t cols) {
#if HWY_TARGET <= HWY_AVX2
  TransposeBlocks<16, uint16_t, Transpose16x16>(src, src_stride, dst, dst_stride, rows, cols);
#else
  TransposeScalar(src, src_stride, dst, dst_stride, rows, cols);
#endif
}

void Transpose32(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows,
                 int64_t cols) {
#if HWY_TARGET <= HWY_AVX2
  TransposeBlocks<8, uint32_t, Transpose8x8>(src, src_stride, dst, dst_stride, rows, cols);
#else
  TransposeScalar(src, src_stride, dst, dst_stride, rows, cols);
#endif
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(Transpose16);
HWY_EXPORT(Transpose32);

void transpose(const uint16_t* src, int64_t src_stride, uint16_t* dst, int64_t dst_stride, int64_t rows,
               int64_t cols) {
  HWY_DYNAMIC_DISPATCH(Transpose16)(src, src_stride, dst, dst_stride, rows, cols);
}

void transpose(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows,
               int64_t cols) {
  HWY_DYNAMIC_DISPATCH(Transpose32)(src, src_stride, dst, dst_stride, rows, cols);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

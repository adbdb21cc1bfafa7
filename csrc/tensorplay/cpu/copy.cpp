// Copies with dtype conversion, fills, and arange.

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <type_traits>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

namespace {

template <class To, class From>
void convert_row(char* dst, const char* src, int64_t dst_stride, int64_t src_stride, int64_t n) {
  if (dst_stride == sizeof(To) && src_stride == sizeof(From)) {
    convert_n(reinterpret_cast<const From*>(src), reinterpret_cast<To*>(dst), n);
  } else if (src_stride == 0) {
    To v = convert<To>(*reinterpret_cast<const From*>(src));
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<To*>(dst + i * dst_stride) = v;
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<To*>(dst + i * dst_stride) = convert<To>(*reinterpret_cast<const From*>(src + i * src_stride));
  }
}

// Whether the copy transposes: dst's rows (the loop's last dim) run across src's, which lie along
// the dim before (x.t().contiguous(), NCHW to NHWC). Walked row by row, such a copy reads src one
// element per cache line; copy_tiles keeps a tile of both in cache instead.
bool transposes(const StridedLoop<2>& loop, int64_t dst_size, int64_t src_size) {
  const size_t dims = loop.shape.size();
  return dims >= 2 && loop.strides[dims - 1][0] == dst_size && loop.strides[dims - 2][1] == src_size &&
         loop.strides[dims - 1][1] != src_size;
}

// The loop's matrices (its last two dims; the dims before them count the planes), each cut into
// row_parts parts: run calls part(dst, src, i) with the plane's base pointers for each part i of
// each plane, in parallel.
struct Matrices {
  const StridedLoop<2>& loop;
  int64_t rows, cols, planes = 1;
  explicit Matrices(const StridedLoop<2>& l) : loop(l) {
    const size_t dims = loop.shape.size();
    rows = loop.shape[dims - 2];
    cols = loop.shape[dims - 1];
    for (size_t d = 0; d + 2 < dims; ++d) planes *= loop.shape[d];
  }
  // row_parts parts per matrix, at least grain elements a task.
  template <class F>
  void run(int64_t row_parts, F part) const {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, rows / row_parts * cols));
    parallel_for(0, planes * row_parts, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        char* dst = loop.base[0];
        const char* src = loop.base[1];
        for (int64_t d = static_cast<int64_t>(loop.shape.size()) - 3, plane = t / row_parts; d >= 0; --d) {
          const int64_t at = plane % loop.shape[d];
          plane /= loop.shape[d];
          dst += at * loop.strides[d][0];
          src += at * loop.strides[d][1];
        }
        part(dst, src, t % row_parts);
      }
    });
  }
};

template <class To, class From>
void copy_tiles(const StridedLoop<2>& loop) {
  // Tiles 32 bytes of src wide: rows a power of two apart share L1's sets, and the lines of a
  // wider tile evict one another.
  constexpr int64_t kTile = std::max<int64_t>(8, 32 / sizeof(From));
  const Matrices matrices(loop);
  const size_t dims = loop.shape.size();
  const auto& row_step = loop.strides[dims - 2];
  const int64_t src_col_step = loop.strides[dims - 1][1], rows = matrices.rows, cols = matrices.cols;
  matrices.run((rows + kTile - 1) / kTile, [&](char* dst, const char* src, int64_t tile) {
    const int64_t first_row = tile * kTile, last_row = std::min(rows, first_row + kTile);
    for (int64_t first_col = 0; first_col < cols; first_col += kTile) {
      const int64_t last_col = std::min(cols, first_col + kTile);
      for (int64_t i = first_row; i < last_row; ++i) {
        To* out = reinterpret_cast<To*>(dst + i * row_step[0]);
        const char* in = src + i * row_step[1];
        for (int64_t j = first_col; j < last_col; ++j)
          out[j] = convert<To>(*reinterpret_cast<const From*>(in + j * src_col_step));
      }
    }
  });
}

// A transposing copy within one dtype of 2 or 4 bytes, in SIMD blocks (simd::transpose), strips
// of 64 rows a task.
template <class Bits>
void copy_transposed(const StridedLoop<2>& loop) {
  constexpr int64_t kStrip = 64;
  const Matrices matrices(loop);
  const size_t dims = loop.shape.size();
  constexpr auto size = static_cast<int64_t>(sizeof(Bits));  // signed: flip's views walk backwards
  const int64_t dst_stride = loop.strides[dims - 2][0] / size, src_stride = loop.strides[dims - 1][1] / size;
  matrices.run((matrices.rows + kStrip - 1) / kStrip, [&](char* dst, const char* src, int64_t strip) {
    const int64_t first = strip * kStrip, rows = std::min(kStrip, matrices.rows - first);
    simd::transpose(reinterpret_cast<const Bits*>(src) + first, src_stride,
                    reinterpret_cast<Bits*>(dst) + first * dst_stride, dst_stride, rows, matrices.cols);
  });
}

}  // namespace

void CpuBackend::copy(const Tensor& dst, const Tensor& src) {
  auto loop = strided_loop(dst, src);
  if (dst.dtype() == src.dtype()) {
    const int64_t size = dst.itemsize();
    if (loop.shape.size() <= 1 && (loop.shape.empty() || (loop.strides[0][0] == size && loop.strides[0][1] == size))) {
      char* d = loop.base[0];
      const char* s = loop.base[1];
      parallel_for(0, loop.numel() * size, kGrain * 8, [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, e - b); });
      return;
    }
  }
  const bool tiles = transposes(loop, dst.itemsize(), src.itemsize());
  visit_dtype<DTypes::AllAndComplex>("copy_", dst.dtype(), [&](auto to) {
    visit_dtype<DTypes::AllAndComplex>("copy_", src.dtype(), [&](auto from) {
      using To = decltype(to);
      using From = decltype(from);
      if (tiles) {
        if constexpr (std::is_same_v<To, From> && (sizeof(To) == 2 || sizeof(To) == 4))
          return copy_transposed<std::conditional_t<sizeof(To) == 2, uint16_t, uint32_t>>(loop);
        else
          return copy_tiles<To, From>(loop);
      }
      loop.run([](auto p, auto s, int64_t n) { convert_row<To, From>(p[0], p[1], s[0], s[1], n); });
    });
  });
}

void CpuBackend::fill(const Tensor& dst, const Scalar& value) {
  visit_dtype<DTypes::AllAndComplex>("fill_", dst.dtype(), [&](auto t) {
    using T = decltype(t);
    const T v = value.to<T>();
    // Zeros (the common fill) are memset's, which stores whole vectors (not so -0.0).
    const bool zero_bits = std::ranges::all_of(std::bit_cast<std::array<unsigned char, sizeof(T)>>(v),
                                               [](unsigned char b) { return b == 0; });
    strided_loop(dst).run([v, zero_bits](auto p, auto s, int64_t n) {
      if (s[0] == sizeof(T) && zero_bits) {
        std::memset(p[0], 0, static_cast<size_t>(n) * sizeof(T));
      } else if (s[0] == sizeof(T)) {
        T* d = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) d[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

void CpuBackend::arange(const Tensor& out, const Scalar& start, const Scalar& step) {
  visit_dtype<DTypes::Numeric>("arange", out.dtype(), [&](auto t) {
    using T = decltype(t);
    T* data = static_cast<T*>(out.data_ptr());
    const int64_t stride = out.dim() ? out.stride(0) : 1;
    // Accumulate in int64 for integer ranges and in double otherwise, as PyTorch does.
    auto fill = [&](auto a, auto d) {
      parallel_for(0, out.numel(), kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) data[i * stride] = convert<T>(a + d * static_cast<decltype(a)>(i));
      });
    };
    if (std::is_integral_v<T> && !start.is_floating_point() && !step.is_floating_point())
      fill(start.to_int(), step.to_int());
    else
      fill(start.to_double(), step.to_double());
  });
}

}  // namespace tp::cpu

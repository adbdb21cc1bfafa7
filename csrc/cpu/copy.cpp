// Copies with dtype conversion, fills, and arange.

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "cpu/backend.h"
#include "cpu/convert.h"
#include "cpu/loop.h"

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
  visit_dtype("copy_", dst.dtype(), [&](auto to) {
    visit_dtype("copy_", src.dtype(), [&](auto from) {
      using To = decltype(to);
      using From = decltype(from);
      loop.run([](auto p, auto s, int64_t n) { convert_row<To, From>(p[0], p[1], s[0], s[1], n); });
    });
  });
}

void CpuBackend::fill(const Tensor& dst, const Scalar& value) {
  visit_dtype("fill_", dst.dtype(), [&](auto t) {
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

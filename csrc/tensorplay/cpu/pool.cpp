// 2-D max and average pooling over contiguous NCHW tensors, one (n, c) plane per task.

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

namespace {

struct Planes {
  int64_t planes, H, W, P, Q;
  Planes(const Tensor& in, const Tensor& out)
      : planes(in.size(0) * in.size(1)), H(in.size(2)), W(in.size(3)), P(out.size(2)), Q(out.size(3)) {}
};

// PyTorch's average-pool window: clipped to the padded input for its size when padding counts,
// and to the real input for the elements summed.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
  AvgWindow(int64_t p, int64_t q, const Planes& d, const Window& w, bool count_include_pad, std::optional<int64_t> divisor_override) {
    h0 = p * w.stride[0] - w.padding[0];
    w0 = q * w.stride[1] - w.padding[1];
    h1 = std::min(h0 + w.kernel[0], d.H + w.padding[0]);
    w1 = std::min(w0 + w.kernel[1], d.W + w.padding[1]);
    const int64_t padded = (h1 - h0) * (w1 - w0);
    h0 = std::max<int64_t>(h0, 0);
    w0 = std::max<int64_t>(w0, 0);
    h1 = std::min(h1, d.H);
    w1 = std::min(w1, d.W);
    divisor = divisor_override ? *divisor_override : count_include_pad ? padded : (h1 - h0) * (w1 - w0);
  }
};

// One kernel position over windows [first, last) of an output row: window q reads x[offset + q *
// step] and takes it when it is larger or NaN. Without branches (the data decide, so a branch
// would mispredict half the time), with kStep a constant where it is known (0: use step), and
// with the positions in I, int32 where the plane allows: float values and int32 positions have
// the same lanes, and the compiler vectorises the loop.
template <int64_t kStep, class M, class I>
void max_row(const M* __restrict x, I offset, int64_t step, int64_t first, int64_t last, M* __restrict best,
             I* __restrict best_at) {
  if constexpr (kStep != 0) step = kStep;
  for (int64_t q = first; q < last; ++q) {
    const I at = static_cast<I>(offset + q * step);
    const M v = x[at];
    const bool take = (v > best[q]) | (v != v);
    best[q] = take ? v : best[q];
    best_at[q] = take ? at : best_at[q];
  }
}

// The windows of output row p, one kernel position at a time (see CpuBackend::max_pool2d).
template <class I, class M>
void max_pool_row(const M* x, int64_t p, const Planes& d, const Window& w,
                  const std::vector<std::pair<int64_t, int64_t>>& columns, M* best, I* best_at) {
  const auto [kh, kw] = w.kernel;
  const auto [sh, sw] = w.stride;
  const auto [ph, pw] = w.padding;
  const auto [dh, dw] = w.dilation;
  int64_t h_first = p * sh - ph;
  while (h_first < 0) h_first += dh;
  for (int64_t q = 0; q < d.Q; ++q) {
    int64_t c_first = q * sw - pw;
    while (c_first < 0) c_first += dw;
    best[q] = -std::numeric_limits<M>::infinity();
    best_at[q] = static_cast<I>(h_first * d.W + c_first);
  }
  for (int64_t r = 0; r < kh; ++r) {
    const int64_t h = p * sh - ph + r * dh;
    if (h < 0 || h >= d.H) continue;
    for (int64_t s = 0; s < kw; ++s) {
      const I offset = static_cast<I>(h * d.W - pw + s * dw);  // of column 0's window
      const auto [first, last] = columns[s];
      if (sw == 2)  // the common pool
        max_row<2>(x, offset, sw, first, last, best, best_at);
      else
        max_row<0>(x, offset, sw, first, last, best, best_at);
    }
  }
}

// Whether the windows tile the plane: kernel == stride, no padding or dilation, and no window
// sticking out of the input (ceil_mode's last one may). Each input element then lies in at most
// one window (the ones past the last window in none).
bool windows_tile(const Window& w, const Planes& d) {
  return w.kernel == w.stride && w.padding == std::array<int64_t, 2>{0, 0} &&
         w.dilation == std::array<int64_t, 2>{1, 1} && d.P * w.kernel[0] <= d.H && d.Q * w.kernel[1] <= d.W;
}

// Whether the SIMD rows of simd/pool.cpp run: the 2x2 pool with stride 2, tiling the plane, whose
// positions fit int32.
bool simd_2x2(const Window& w, const Planes& d) {
  return windows_tile(w, d) && w.kernel == std::array<int64_t, 2>{2, 2} &&
         d.H * d.W <= std::numeric_limits<int32_t>::max();
}

// A plane of T in the compute type M: the plane itself where they agree, else widened into buf.
template <class T, class M>
const M* widened(const T* x, int64_t n, std::vector<M>& buf) {
  if constexpr (std::is_same_v<T, M>) {
    return x;
  } else {
    buf.resize(n);
    convert_n(x, buf.data(), n);
    return buf.data();
  }
}

// One input row of a tiled plane's gradient, at plane position `base`, inside windows [0, n) of
// width kw: each element is its window's gradient g[q] where the window's maximum lies there
// (at[q]), else 0. (The 2x2 pool has a SIMD row of its own.)
template <class M, class I>
void tile_row(M* row, const M* g, const I* at, int64_t base, int64_t kw, int64_t n) {
  std::fill(row, row + n * kw, M(0));
  for (int64_t q = 0; q < n; ++q) {
    const int64_t where = at[q] - base - q * kw;  // in [0, kw) when the maximum is in this row
    if (where >= 0 && where < kw) row[q * kw + where] = g[q];
  }
}

// The max pool's positions: int64 (what max_pool2d's return_indices gives), or int32 where only
// its gradient reads them (half the memory traffic, for planes whose positions fit).
template <class F>
void visit_positions(const Tensor& indices, const Planes& d, const F& f) {
  if (indices.dtype() == ScalarType::Int64) return f(int64_t{});
  TP_CHECK(indices.dtype() == ScalarType::Int32 && d.H * d.W <= std::numeric_limits<int32_t>::max(),
           "[max_pool2d] positions must be int64, or int32 for planes of under 2^31 elements");
  f(int32_t{});
}

}  // namespace

// One output row at a time: for each kernel position (r, s), one pass over the row's windows that
// holds that position inside the input, so the inner loop has no bounds checks. Each window still
// sees its elements in row-major order: the first maximum wins a tie, and a NaN wins over numbers
// (the last NaN, as PyTorch's kernel keeps). A window starts at -inf and at its first element, as
// in PyTorch, so a window of -infs points at its first. The 2x2 pool with stride 2 runs the SIMD
// row (simd/pool.cpp) on float32 and bfloat16 planes whose positions fit int32. Other 16-bit
// planes are widened to float first and their maxima rounded back, which is exact.
void CpuBackend::max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in, const Window& w) {
  visit_dtype<DTypes::Floating>("max_pool2d", in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    const Planes d(in, out);
    // The output columns whose window column s lies inside the input: [first, last).
    std::vector<std::pair<int64_t, int64_t>> columns(w.kernel[1]);
    for (int64_t s = 0; s < w.kernel[1]; ++s) {
      auto col = [&](int64_t q) { return q * w.stride[1] - w.padding[1] + s * w.dilation[1]; };
      int64_t first = 0, last = d.Q;
      while (first < d.Q && col(first) < 0) ++first;
      while (last > first && col(last - 1) >= d.W) --last;
      columns[s] = {first, last};
    }
    const bool small_planes = d.H * d.W <= std::numeric_limits<int32_t>::max();
    const bool simd = simd_2x2(w, d);
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    visit_positions(indices, d, [&](auto position) {
      using I = decltype(position);
      I* idx = static_cast<I*>(indices.data_ptr());
      parallel_for(0, d.planes, 1, [&](int64_t lo, int64_t hi) {
        std::vector<M> wide, plane_out(std::is_same_v<T, M> ? 0 : d.P * d.Q);
        // int64 positions are found as int32 where they fit (see max_row) and widened.
        const bool narrow = std::is_same_v<I, int64_t> && small_planes;
        std::vector<int32_t> at32(narrow ? d.Q : 0);
        for (int64_t plane = lo; plane < hi; ++plane) {
          const T* xp = x + plane * d.H * d.W;
          T* yp = y + plane * d.P * d.Q;
          I* ip = idx + plane * d.P * d.Q;
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
            if (simd) {
              for (int64_t p = 0; p < d.P; ++p)
                simd::max_pool_2x2_row(xp + 2 * p * d.W, d.W, 2 * p * d.W, d.Q, yp + p * d.Q, ip + p * d.Q);
              continue;
            }
          }
          const M* src = widened(xp, d.H * d.W, wide);
          M* out = std::is_same_v<T, M> ? reinterpret_cast<M*>(yp) : plane_out.data();  // rounded at the end
          for (int64_t p = 0; p < d.P; ++p) {
            M* best = out + p * d.Q;
            if (narrow) {
              max_pool_row(src, p, d, w, columns, best, at32.data());
              std::copy(at32.begin(), at32.end(), ip + p * d.Q);
            } else {
              max_pool_row(src, p, d, w, columns, best, ip + p * d.Q);
            }
          }
          if constexpr (!std::is_same_v<T, M>) convert_n(out, yp, d.P * d.Q);
        }
      });
    });
  });
}

namespace {

// Where the windows tile the plane, each input element gets its window's gradient or 0 and is
// written once, in order; otherwise the plane is zeroed and each window adds its gradient at its
// maximum's position. The 2x2 SIMD rows work in float32 and bfloat16 alike (each value is a copy
// of a gradient); other 16-bit planes are computed in float and rounded back (exactly: each value
// is one of the gradients, or a sum rounded to T already).
template <class T, class I>
void max_pool2d_grad_planes(const Tensor& grad_in, const Tensor& grad_out, const I* idx, const Window& w) {
  using M = opmath_t<T>;
  const Planes d(grad_in, grad_out);
  const T* g = static_cast<const T*>(grad_out.data_ptr());
  T* gx = static_cast<T*>(grad_in.data_ptr());
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
    if (simd_2x2(w, d)) {
      parallel_for(0, d.planes * d.H, std::max<int64_t>(1, kGrain / d.W), [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {  // input row h of a plane
          const int64_t plane = r / d.H, h = r % d.H, p = h / 2, at = (plane * d.P + p) * d.Q;
          T* row = gx + r * d.W;
          if (p >= d.P) std::fill(row, row + d.W, T(0.0f));  // below the last window
          else simd::max_pool_2x2_backward_row(g + at, idx + at, h * d.W, d.Q, d.W, row);
        }
      });
      return;
    }
  }
  const bool tiles = windows_tile(w, d);
  const auto [kh, kw] = w.kernel;
  parallel_for(0, d.planes, 1, [&](int64_t lo, int64_t hi) {
    std::vector<M> wide_g, wide_out(std::is_same_v<T, M> ? 0 : d.H * d.W);
    for (int64_t plane = lo; plane < hi; ++plane) {
      const M* gp = widened(g + plane * d.P * d.Q, d.P * d.Q, wide_g);
      const I* ip = idx + plane * d.P * d.Q;
      M* out = std::is_same_v<T, M> ? reinterpret_cast<M*>(gx + plane * d.H * d.W) : wide_out.data();
      if (tiles) {
        for (int64_t h = 0; h < d.H; ++h) {
          M* row = out + h * d.W;
          const int64_t p = h / kh;
          if (p >= d.P) {  // below the last window
            std::fill(row, row + d.W, M(0));
            continue;
          }
          tile_row(row, gp + p * d.Q, ip + p * d.Q, h * d.W, kw, d.Q);
          std::fill(row + d.Q * kw, row + d.W, M(0));
        }
      } else {
        // Each sum rounded to T, as PyTorch's kernel adds in the gradient's dtype.
        std::fill(out, out + d.H * d.W, M(0));
        for (int64_t o = 0; o < d.P * d.Q; ++o)
          if (ip[o] >= 0) out[ip[o]] = static_cast<M>(static_cast<T>(out[ip[o]] + gp[o]));
      }
      if constexpr (!std::is_same_v<T, M>) convert_n(out, gx + plane * d.H * d.W, d.H * d.W);
    }
  });
}

}  // namespace

void CpuBackend::max_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& indices,
                                 const Window& w) {
  visit_dtype<DTypes::Floating>("max_pool2d", grad_in.dtype(), [&](auto t) {
    visit_positions(indices, Planes(grad_in, grad_out), [&](auto position) {
      using I = decltype(position);
      max_pool2d_grad_planes<decltype(t)>(grad_in, grad_out, static_cast<const I*>(indices.data_ptr()), w);
    });
  });
}

void CpuBackend::avg_pool2d(const Tensor& out, const Tensor& in, const Window& w, bool count_include_pad,
                            std::optional<int64_t> divisor) {
  visit_dtype<DTypes::Floating>("avg_pool2d", in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    const Planes d(in, out);
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    parallel_for(0, d.planes, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t plane = lo; plane < hi; ++plane) {
        const T* xp = x + plane * d.H * d.W;
        for (int64_t p = 0; p < d.P; ++p)
          for (int64_t q = 0; q < d.Q; ++q) {
            const AvgWindow win(p, q, d, w, count_include_pad, divisor);
            M sum = 0;
            for (int64_t h = win.h0; h < win.h1; ++h)
              for (int64_t c = win.w0; c < win.w1; ++c) sum += static_cast<M>(xp[h * d.W + c]);
            y[(plane * d.P + p) * d.Q + q] = static_cast<T>(sum / static_cast<M>(win.divisor));
          }
      }
    });
  });
}

void CpuBackend::avg_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Window& w, bool count_include_pad,
                                 std::optional<int64_t> divisor) {
  visit_dtype<DTypes::Floating>("avg_pool2d", grad_in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    const Planes d(grad_in, grad_out);
    const T* g = static_cast<const T*>(grad_out.data_ptr());
    T* gx = static_cast<T*>(grad_in.data_ptr());
    parallel_for(0, d.planes, 1, [&](int64_t lo, int64_t hi) {
      std::vector<M> acc(d.H * d.W);
      for (int64_t plane = lo; plane < hi; ++plane) {
        std::fill(acc.begin(), acc.end(), M(0));
        for (int64_t p = 0; p < d.P; ++p)
          for (int64_t q = 0; q < d.Q; ++q) {
            const AvgWindow win(p, q, d, w, count_include_pad, divisor);
            const M share = static_cast<M>(g[(plane * d.P + p) * d.Q + q]) / static_cast<M>(win.divisor);
            for (int64_t h = win.h0; h < win.h1; ++h)
              for (int64_t c = win.w0; c < win.w1; ++c) acc[h * d.W + c] += share;
          }
        for (int64_t i = 0; i < d.H * d.W; ++i) gx[plane * d.H * d.W + i] = static_cast<T>(acc[i]);
      }
    });
  });
}

}  // namespace tp::cpu

// 2-D max and average pooling over contiguous NCHW tensors, one (n, c) plane per task.

#include <cmath>
#include <limits>

#include "cpu/backend.h"
#include "cpu/loop.h"

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

}  // namespace

void CpuBackend::max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in, const Window& w) {
  visit_dtype<DTypes::Floating>("max_pool2d", in.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    const Planes d(in, out);
    const T* x = static_cast<const T*>(in.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
    parallel_for(0, d.planes, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t plane = lo; plane < hi; ++plane) {
        const T* xp = x + plane * d.H * d.W;
        for (int64_t p = 0; p < d.P; ++p)
          for (int64_t q = 0; q < d.Q; ++q) {
            M best = -std::numeric_limits<M>::infinity();
            int64_t best_at = -1;
            for (int64_t r = 0; r < w.kernel[0]; ++r) {
              const int64_t h = p * w.stride[0] - w.padding[0] + r * w.dilation[0];
              if (h < 0 || h >= d.H) continue;
              for (int64_t s = 0; s < w.kernel[1]; ++s) {
                const int64_t c = q * w.stride[1] - w.padding[1] + s * w.dilation[1];
                if (c < 0 || c >= d.W) continue;
                const M v = static_cast<M>(xp[h * d.W + c]);
                if (best_at < 0 || v > best || std::isnan(v)) {  // NaN wins, as in PyTorch
                  best = v;
                  best_at = h * d.W + c;
                  if (std::isnan(v)) break;
                }
              }
              if (std::isnan(best)) break;
            }
            const int64_t o = (plane * d.P + p) * d.Q + q;
            y[o] = static_cast<T>(best);
            idx[o] = best_at;
          }
      }
    });
  });
}

void CpuBackend::max_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& indices) {
  fill(grad_in, 0);
  visit_dtype<DTypes::Floating>("max_pool2d", grad_in.dtype(), [&](auto t) {
    using T = decltype(t);
    const Planes d(grad_in, grad_out);
    const T* g = static_cast<const T*>(grad_out.data_ptr());
    const int64_t* idx = static_cast<const int64_t*>(indices.data_ptr());
    T* gx = static_cast<T*>(grad_in.data_ptr());
    parallel_for(0, d.planes, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t plane = lo; plane < hi; ++plane)
        for (int64_t i = 0; i < d.P * d.Q; ++i) {
          const int64_t o = plane * d.P * d.Q + i;
          if (idx[o] < 0) continue;
          T& dst = gx[plane * d.H * d.W + idx[o]];
          dst = static_cast<T>(static_cast<opmath_t<T>>(dst) + static_cast<opmath_t<T>>(g[o]));
        }
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

// Optimizer updates fused into one pass over a parameter's tensors. The op-by-op update reads and
// writes the momentum buffer twice and the parameter once more; fused, each is read and written
// once, which is what a memory-bound step costs. float32 runs the SIMD kernel (simd/sgd.cpp);
// float64 (gradient checks) the same sequence one element at a time.

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

void CpuBackend::sgd_momentum_step(const Tensor& param, const Tensor& grad, const Tensor& buf, double lr,
                                   double momentum, double dampening, double weight_decay, bool nesterov,
                                   bool maximize) {
  visit_dtype<DTypes::Floating>("sgd", param.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) {
      const simd::SgdMomentum o{static_cast<float>(weight_decay), static_cast<float>(momentum),
                                static_cast<float>(1 - dampening), static_cast<float>(-lr), nesterov, maximize};
      float* p = static_cast<float*>(param.data_ptr());
      const float* g = static_cast<const float*>(grad.data_ptr());
      float* b = static_cast<float*>(buf.data_ptr());
      parallel_for(0, param.numel(), kGrain,
                   [&](int64_t lo, int64_t hi) { simd::sgd_momentum_row(p + lo, g + lo, b + lo, hi - lo, o); });
    } else if constexpr (std::is_same_v<T, double>) {
      T* p = static_cast<T*>(param.data_ptr());
      const T* g = static_cast<const T*>(grad.data_ptr());
      T* b = static_cast<T*>(buf.data_ptr());
      // Each number as the op it stands for holds it: in the parameter's dtype.
      const T decay = static_cast<T>(weight_decay), mu = static_cast<T>(momentum);
      const T keep = static_cast<T>(1 - dampening), step = static_cast<T>(-lr);
      parallel_for(0, param.numel(), kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          T d = maximize ? -g[i] : g[i];
          if (weight_decay != 0) d = d + decay * p[i];
          T velocity = b[i] * mu;
          velocity = velocity + keep * d;
          b[i] = velocity;
          d = nesterov ? d + mu * velocity : velocity;
          p[i] = p[i] + step * d;
        }
      });
    } else {
      fail_unsupported_dtype("sgd (fused)", param.dtype());
    }
  });
}

}  // namespace tp::cpu

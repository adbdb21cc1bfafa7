// The grad scaler's kernel: unscale gradients and look for inf/NaN in one pass over memory.

#include <atomic>
#include <cmath>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/loop.h"

namespace tp::cpu {

void CpuBackend::unscale_and_check_finite(const Tensor& t, const Tensor& found_inf, const Tensor& inv_scale) {
  const float inv = *inv_scale.data_ptr<float>();
  std::atomic<bool> found{false};
  visit_dtype<DTypes::Floating>("_amp_foreach_non_finite_check_and_unscale_", t.dtype(), [&]<class T>(T) {
    using Math = opmath_t<T>;
    StridedLoop<1>({&t}).run([&](const auto& ptrs, const auto& strides, int64_t n) {
      bool row_found = false;
      auto visit = [&](T& x) {
        const Math v = static_cast<Math>(x);
        row_found |= !std::isfinite(v);
        x = static_cast<T>(v * static_cast<Math>(inv));
      };
      if (strides[0] == sizeof(T)) {  // the usual case: a contiguous gradient, which vectorises
        T* x = reinterpret_cast<T*>(ptrs[0]);
        for (int64_t i = 0; i < n; ++i) visit(x[i]);
      } else {
        char* p = ptrs[0];
        for (int64_t i = 0; i < n; ++i, p += strides[0]) visit(*reinterpret_cast<T*>(p));
      }
      if (row_found) found.store(true, std::memory_order_relaxed);
    });
  });
  if (found.load()) *found_inf.data_ptr<float>() = 1.0f;
}

}  // namespace tp::cpu

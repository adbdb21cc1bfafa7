// SGD's momentum step over contiguous float32 rows in SIMD code, compiled by Highway for each x86
// target and dispatched at run time (see simd/softmax.cpp). Each product and sum is rounded on its
// own, in the order of the op sequence it fuses (CpuBackend::sgd_momentum_step), so the fused step
// gives the same numbers; CMakeLists.txt compiles this file with -ffp-contract=off so that the
// compiler does not fuse them into FMAs either.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/sgd.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <cstdint>

#include "tensorplay/cpu/simd/simd-inl.h"
#include "tensorplay/cpu/simd/simd.h"

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V = hn::Vec<D>>
HWY_INLINE void Step(D d, V& p, V g, V& b, const simd::SgdMomentum& o) {
  V grad = o.maximize ? hn::Neg(g) : g;
  if (o.weight_decay != 0) grad = hn::Add(grad, hn::Mul(hn::Set(d, o.weight_decay), p));
  b = hn::Add(hn::Mul(b, hn::Set(d, o.momentum)), hn::Mul(hn::Set(d, o.keep), grad));
  const V direction = o.nesterov ? hn::Add(grad, hn::Mul(hn::Set(d, o.momentum), b)) : b;
  p = hn::Add(p, hn::Mul(hn::Set(d, o.step), direction));
}

void SgdMomentumRow(float* param, const float* grad, float* buf, int64_t n, const simd::SgdMomentum& o) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto p = hn::LoadU(d, param + i), b = hn::LoadU(d, buf + i);
    Step(d, p, hn::LoadU(d, grad + i), b, o);
    hn::StoreU(p, d, param + i);
    hn::StoreU(b, d, buf + i);
  }
  if (i < n) {  // the tail, through one masked vector (lanes past it read and write nothing)
    const size_t rest = static_cast<size_t>(n - i);
    auto p = LoadFirst(d, param + i, rest), b = LoadFirst(d, buf + i, rest);
    Step(d, p, LoadFirst(d, grad + i, rest), b, o);
    StoreFirst(p, d, param + i, rest);
    StoreFirst(b, d, buf + i, rest);
  }
}

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tp::cpu::simd {

HWY_EXPORT(SgdMomentumRow);

void sgd_momentum_row(float* param, const float* grad, float* buf, int64_t n, const SgdMomentum& o) {
  HWY_DYNAMIC_DISPATCH(SgdMomentumRow)(param, grad, buf, n, o);
}

}  // namespace tp::cpu::simd
#endif  // HWY_ONCE

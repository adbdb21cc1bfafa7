#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tensorplay/cpu/simd/capability.cpp"
#include <hwy/foreach_target.h>  // (before highway.h)

#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace tp::cpu::HWY_NAMESPACE {

// The target this copy is compiled for: the copy that dispatch picks says what every kernel runs.
int64_t CompiledTarget() { return HWY_TARGET; }

}  // namespace tp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include "tensorplay/core/error.h"
#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/simd/capability.h"

namespace tp::cpu {

namespace {

constexpr int64_t kAvx512Targets = HWY_AVX3 | HWY_AVX3_DL;

HWY_EXPORT(CompiledTarget);

}  // namespace

void apply_cpu_capability() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* value = std::getenv("TP_CPU_CAPABILITY");
    if (!value || !*value) return;
    const std::string_view cap(value);
    if (cap == "avx512") return;
    TP_CHECK_VALUE(cap == "avx2" || cap == "default", "TP_CPU_CAPABILITY: expected one of default, avx2, avx512, got '",
                   cap, "'");
    const bool avx2 = cap == "avx2";
    // Highway 1.0.3's SupportedTargets() detects the CPU afresh on each call and points dispatch at
    // every target it finds, disabled ones included: DisableTargets alone held only until the next
    // call. Pinning the allowed set makes later calls return it without touching dispatch.
    hwy::DisableTargets(avx2 ? kAvx512Targets : kAvx512Targets | HWY_AVX2);
    hwy::SetSupportedTargetsForTest(hwy::SupportedTargets());
    TP_CHECK(dnnl::set_max_cpu_isa(avx2 ? dnnl::cpu_isa::avx2 : dnnl::cpu_isa::sse41) == dnnl::status::success,
             "TP_CPU_CAPABILITY: oneDNN has run a kernel already, too late to cap it");
  });
}

CpuBackend::CpuBackend() { apply_cpu_capability(); }

std::string cpu_capability() {
  apply_cpu_capability();
  const int64_t target = HWY_DYNAMIC_DISPATCH(CompiledTarget)();
  if (target & kAvx512Targets) return "AVX512";
  if (target == HWY_AVX2) return "AVX2";
  return "DEFAULT";
}

}  // namespace tp::cpu
#endif  // HWY_ONCE

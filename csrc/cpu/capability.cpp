#include "cpu/capability.h"

#include <hwy/targets.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include "core/error.h"
#include "cpu/backend.h"

namespace tp::cpu {

namespace {

constexpr int64_t kAvx512Targets = HWY_AVX3 | HWY_AVX3_DL;

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
    hwy::DisableTargets(avx2 ? kAvx512Targets : kAvx512Targets | HWY_AVX2);
    TP_CHECK(dnnl::set_max_cpu_isa(avx2 ? dnnl::cpu_isa::avx2 : dnnl::cpu_isa::sse41) == dnnl::status::success,
             "TP_CPU_CAPABILITY: oneDNN has run a kernel already, too late to cap it");
  });
}

CpuBackend::CpuBackend() { apply_cpu_capability(); }

std::string cpu_capability() {
  apply_cpu_capability();
  const int64_t targets = hwy::SupportedTargets();
  if (targets & kAvx512Targets) return "AVX512";
  if (targets & HWY_AVX2) return "AVX2";
  return "DEFAULT";
}

}  // namespace tp::cpu

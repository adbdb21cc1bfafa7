#include "tensorplay/autograd/anomaly_mode.h"

#include <atomic>

namespace tp::autograd {

namespace {
std::atomic<bool> enabled{false};
std::atomic<bool> check_nan{true};
AnomalyHooks hooks;
}  // namespace

bool is_anomaly_enabled() { return enabled.load(std::memory_order_relaxed); }
bool is_anomaly_check_nan_enabled() { return check_nan.load(std::memory_order_relaxed); }

void set_anomaly_enabled(bool on, bool nan_checks) {
  enabled.store(on);
  check_nan.store(nan_checks);
}

void set_anomaly_hooks(AnomalyHooks h) { hooks = h; }

std::string anomaly_forward_stack() {
  return is_anomaly_enabled() && hooks.forward_stack ? hooks.forward_stack() : std::string();
}

void report_anomaly(const std::string& node_name, const std::string& forward_stack) {
  if (!hooks.report) return;
  hooks.report("Error detected in " + node_name + ". Traceback of forward call that caused the error:\n" +
               forward_stack);
}

}  // namespace tp::autograd

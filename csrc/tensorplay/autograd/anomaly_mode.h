#pragma once
// Anomaly detection (torch.autograd.detect_anomaly): while it is on, each node remembers the stack
// of the forward call that made it, and backward checks what every node returns. A node that fails,
// or (with check_nan) returns a NaN gradient, is reported with that stack before the error goes on.
// The mode is global, as in PyTorch, not per thread.
//
// The stack and the report are the embedding language's: the Python bindings install both hooks.
// Without them (C++ alone) the checks still run and the stack is empty.

#include <string>

namespace tp::autograd {

bool is_anomaly_enabled();
bool is_anomaly_check_nan_enabled();
void set_anomaly_enabled(bool enabled, bool check_nan = true);

struct AnomalyHooks {
  std::string (*forward_stack)() = nullptr;              // the current call stack, formatted
  void (*report)(const std::string& message) = nullptr;  // emits a warning
};
void set_anomaly_hooks(AnomalyHooks hooks);

// The stack to keep in a node made now ("" unless anomaly detection is on).
std::string anomaly_forward_stack();
// Reports the failure of a node's backward, naming it, with the stack of its forward call.
void report_anomaly(const std::string& node_name, const std::string& forward_stack);

}  // namespace tp::autograd

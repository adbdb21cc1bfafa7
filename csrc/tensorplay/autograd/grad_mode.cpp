#include "tensorplay/autograd/grad_mode.h"

namespace tp {

namespace {
thread_local bool grad_enabled = true;
thread_local bool inference_mode = false;
}  // namespace

bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool enabled) { grad_enabled = enabled; }
bool is_inference_mode_enabled() { return inference_mode; }
void set_inference_mode(bool enabled) { inference_mode = enabled; }

InferenceModeGuard::InferenceModeGuard(bool enabled)
    : previous_inference_(inference_mode), previous_grad_(grad_enabled) {
  inference_mode = enabled;
  if (enabled) grad_enabled = false;
}

InferenceModeGuard::~InferenceModeGuard() {
  inference_mode = previous_inference_;
  grad_enabled = previous_grad_;
}

}  // namespace tp

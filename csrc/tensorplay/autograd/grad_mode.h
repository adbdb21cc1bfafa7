#pragma once
// Whether ops record the graph: thread-local, like every autograd mode.

namespace tp {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Sets grad mode for a scope and restores the previous one.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

struct NoGradGuard : GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

// Inference mode: no graph is recorded and tensors made inside are marked as inference tensors,
// which may not be saved for a backward pass later.
bool is_inference_mode_enabled();
void set_inference_mode(bool enabled);  // the flag alone; InferenceModeGuard also turns grad off

class InferenceModeGuard {
 public:
  explicit InferenceModeGuard(bool enabled = true);
  ~InferenceModeGuard();
  InferenceModeGuard(const InferenceModeGuard&) = delete;
  InferenceModeGuard& operator=(const InferenceModeGuard&) = delete;

 private:
  bool previous_inference_;
  bool previous_grad_;
};

}  // namespace tp

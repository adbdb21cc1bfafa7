#include "autograd/node.h"

#include <algorithm>

namespace tp::autograd {

namespace {
// Later nodes run first when several are ready, as in PyTorch.
thread_local uint64_t next_sequence_nr = 0;
std::atomic<int> next_hook_id{0};
}  // namespace

Node::Node() : sequence_nr_(next_sequence_nr++) {}

uint32_t Node::add_output(const Tensor& output) {
  outputs_.push_back({Shape(output.sizes().begin(), output.sizes().end()), output.dtype(), output.device()});
  return static_cast<uint32_t>(outputs_.size() - 1);
}

int Node::add_pre_hook(uint32_t output_nr, GradHook hook) {
  int id = next_hook_id++;
  pre_hooks_.push_back({id, output_nr, std::move(hook)});
  return id;
}

void Node::remove_pre_hook(int id) {
  std::erase_if(pre_hooks_, [id](const PreHook& h) { return h.id == id; });
}

void Node::run_pre_hooks(TensorList& grads) const {
  for (const PreHook& h : pre_hooks_) {
    if (h.output_nr >= grads.size() || !grads[h.output_nr].defined()) continue;
    Tensor replaced = h.hook(grads[h.output_nr]);
    if (replaced.defined()) grads[h.output_nr] = std::move(replaced);
  }
}

}  // namespace tp::autograd

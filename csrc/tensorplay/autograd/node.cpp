#include "tensorplay/autograd/node.h"

#include "tensorplay/autograd/anomaly_mode.h"

namespace tp::autograd {

namespace {
// Later nodes run first when several are ready, as in PyTorch.
thread_local uint64_t next_sequence_nr = 0;

// The nodes waiting to be freed on this thread, and whether a release_node() below us frees them.
thread_local std::vector<std::shared_ptr<Node>> pending_release;
thread_local bool releasing = false;
}  // namespace

Node::Node() : sequence_nr_(next_sequence_nr++), forward_stack_(anomaly_forward_stack()) {}

Node::~Node() {
  for (Edge& e : next_edges_)
    if (e.function) release_node(std::move(e.function));
}

void release_node(std::shared_ptr<Node>&& node) {
  pending_release.push_back(std::move(node));
  if (releasing) return;  // the loop below, further up this thread's stack, frees it
  releasing = true;
  while (!pending_release.empty()) {
    std::shared_ptr<Node> last = std::move(pending_release.back());
    pending_release.pop_back();
    last.reset();  // may run ~Node, which only queues the nodes it owned
  }
  releasing = false;
}

uint32_t Node::add_output(const Tensor& output) {
  outputs_.push_back({Shape(output.sizes().begin(), output.sizes().end()), output.dtype(), output.device()});
  return static_cast<uint32_t>(outputs_.size() - 1);
}

void Node::run_pre_hooks(TensorList& grads) const {
  for (const HookList<PreHook>* list : {&pre_hooks_, &retain_grad_hooks_}) {
    auto hooks = list->snapshot();
    if (!hooks) continue;
    for (const auto& [id, h] : *hooks) {
      if (h.output_nr >= grads.size() || !grads[h.output_nr].defined()) continue;
      grads[h.output_nr] = run_hook(h.hook, grads[h.output_nr]);
    }
  }
}

}  // namespace tp::autograd

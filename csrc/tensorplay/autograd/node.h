#pragma once
// The backward graph. Every differentiable op that runs while an input requires grad records a
// Node: its backward formula, the tensors that formula needs (SavedTensor), and one Edge per
// input pointing at the node that produced that input (or at the AccumulateGrad of a leaf).
// The engine (engine.h) walks these edges from the loss back to the leaves.

#include <memory>
#include <string>
#include <vector>

#include "tensorplay/autograd/hooks.h"
#include "tensorplay/core/tensor.h"

namespace tp::autograd {

class Node;

// Where a gradient goes: input `input_nr` of `function`. An invalid edge means "not needed".
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

// The shape, dtype and device that a gradient flowing into a node must have: those of the
// forward output it belongs to. The engine reduces broadcast gradients and casts dtypes to match.
struct GradMeta {
  Shape shape;
  ScalarType dtype;
  Device device;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch's name for the node: "MulBackward0".
  virtual std::string name() const = 0;
  // grads[i] is the gradient of forward output i (undefined when it got none); returns one
  // gradient per next edge (undefined where the edge is invalid or the gradient is zero).
  virtual TensorList apply(TensorList&& grads) = 0;
  // Frees saved tensors once a backward pass without retain_graph is done with the node.
  virtual void release_saved() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  void set_next_edges(std::vector<Edge> edges) { next_edges_ = std::move(edges); }
  bool needs_input_grad(size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }
  uint64_t sequence_nr() const { return sequence_nr_; }
  // The stack of the forward call that made the node, kept while anomaly detection is on.
  const std::string& forward_stack() const { return forward_stack_; }

 protected:
  // Makes the node run before every other ready one (AccumulateGrad, as in PyTorch).
  void run_first() { sequence_nr_ = UINT64_MAX; }

 public:

  // Registers a forward output; returns its index.
  uint32_t add_output(const Tensor& output);
  size_t num_outputs() const { return outputs_.size(); }
  const GradMeta& output_meta(size_t i) const { return outputs_[i]; }

  // Hooks on the gradient of one output, run before apply (register_hook on a non-leaf), and
  // before the gradient is returned where autograd.grad asks for it.
  int add_pre_hook(uint32_t output_nr, GradHook hook) { return pre_hooks_.add({output_nr, std::move(hook)}); }
  void remove_pre_hook(int id) { pre_hooks_.remove(id); }
  // retain_grad's hooks, which run after the others (they keep the gradient the hooks made).
  int add_retain_grad_hook(uint32_t output_nr, GradHook hook) {
    return retain_grad_hooks_.add({output_nr, std::move(hook)});
  }
  void remove_retain_grad_hook(int id) { retain_grad_hooks_.remove(id); }
  virtual void run_pre_hooks(TensorList& grads) const;

 private:
  struct PreHook {
    uint32_t output_nr;
    GradHook hook;
  };
  std::vector<Edge> next_edges_;
  std::vector<GradMeta> outputs_;
  HookList<PreHook> pre_hooks_, retain_grad_hooks_;
  uint64_t sequence_nr_;
  std::string forward_stack_;
};

// Note [Freeing deep graphs]: a node owns the nodes its edges lead to, so dropping the last
// reference to a chain of N nodes (an RNN unrolled over a long sequence, a running sum in a
// loop) would run N nested destructors and overflow the stack. Nodes, and the tensors that own
// nodes, hand them to release_node() instead, which frees them one after another on this thread.
void release_node(std::shared_ptr<Node>&& node);

}  // namespace tp::autograd

#pragma once
// Autograd's view of a tensor: whether it requires grad, its gradient, the node that made it,
// and how in-place writes and views rewrite the graph.

#include "tensorplay/autograd/meta.h"
#include "tensorplay/autograd/node.h"

namespace tp::autograd {

AutogradMeta* meta(const Tensor& t);          // null when autograd never touched t
AutogradMeta& ensure_meta(const Tensor& t);

bool requires_grad(const Tensor& t);
// Only leaves may change the flag, and only floating tensors may require grad.
void set_requires_grad(const Tensor& t, bool requires_grad);
bool is_leaf(const Tensor& t);
std::shared_ptr<Node> grad_fn(const Tensor& t);
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& grad);
// What Module.zero_grad and Optimizer.zero_grad do to each parameter: drop its grad (set_to_none)
// or zero it in place, detached from any graph that computed it.
void zero_grad(const Tensor& t, bool set_to_none);

// Where the gradient of t goes: its grad_fn's output, the AccumulateGrad of a leaf that requires
// grad, or nowhere.
Edge gradient_edge(const Tensor& t);
// Makes `node` the history of `output` (a fresh op result) and returns the output.
const Tensor& set_history(const Tensor& output, const std::shared_ptr<Node>& node);

// A new tensor sharing t's data with no history.
Tensor detach(const Tensor& t);
void detach_(const Tensor& t);
void retain_grad(const Tensor& t);
// Puts retain_grad's hook on t's current history (after retain_grad and after an in-place write).
void attach_retained_grad(AutogradMeta& m);

// In-place ops: when grad mode is on and self or an input requires grad, the op runs out of
// place, its result is written into self, and self (or, for a view, its base) takes the result's
// history. Leaves that require grad may not be written in place while grad mode is on.
bool records_inplace(const Tensor& self, std::initializer_list<const Tensor*> inputs);
const Tensor& assign_inplace(const Tensor& self, const Tensor& result, std::string_view op);

// Leaf nodes: accumulate the incoming gradient into the tensor's .grad.
//
// The gradient layout contract: a leaf's first .grad has the leaf's strides when the leaf is
// dense (a transposed or channels-last parameter included), and is row-major otherwise, so that
// optimizers walk .grad and the parameter in the same order. An incoming gradient that nothing
// else holds becomes .grad itself when it obeys the contract, or whenever the contract is
// relaxed (enforce_grad_layout_policy(False), per thread); otherwise .grad is a copy laid out so.
bool is_grad_layout_enforced();
void set_grad_layout_enforced(bool enforced);

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "tensorplay::autograd::AccumulateGrad"; }
  // The leaf's own hooks (register_hook on a leaf) are this node's pre-hooks.
  void run_pre_hooks(TensorList& grads) const override;
  TensorList apply(TensorList&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// The history of a tensor overwritten in place by values that do not depend on anything that
// requires grad (fill_, zero_, copy_ from a constant): its old value gets a zero gradient.
class OverwriteBackward final : public Node {
 public:
  OverwriteBackward(std::string name, Edge old_value) : name_(std::move(name)) {
    if (old_value.valid()) set_next_edges({std::move(old_value)});
  }
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override;

 private:
  std::string name_;
};

}  // namespace tp::autograd

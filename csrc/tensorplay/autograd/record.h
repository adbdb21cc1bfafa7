#pragma once
// Layer 2 of the dispatcher (Note [Dispatcher layers] in ARCHITECTURE.md): how an op records
// itself. A primitive op reads:
//
//   Tensor exp(const Tensor& self) {
//     autograd::Record<UnaryBackward> record({&self}, kExp);   // records only if self requires grad
//     Tensor result = ...forward...;                            // runs with grad mode off
//     if (record) record->result = SavedTensor(result, true);
//     return record.finish(result);                             // result's history is the node
//   }
//
// Composite ops (written with other ops) do not record anything of their own.

#include <initializer_list>
#include <optional>
#include <span>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/autograd/variable.h"

namespace tp::autograd {

// Whether an op with these inputs records a node: grad mode is on and one of them requires grad.
inline bool must_record(std::span<const Tensor* const> inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t && t->defined() && requires_grad(*t)) return true;
  return false;
}

template <class N>
class Record {
 public:
  // Inputs that cannot have a gradient may be passed as null.
  template <class... Args>
  explicit Record(std::initializer_list<const Tensor*> inputs, Args&&... args)
      : Record(std::span<const Tensor* const>(inputs.begin(), inputs.size()), std::forward<Args>(args)...) {}

  template <class... Args>
  explicit Record(std::span<const Tensor* const> inputs, Args&&... args) {
    if (!must_record(inputs)) return;
    node_ = std::make_shared<N>(std::forward<Args>(args)...);
    std::vector<Edge> edges;
    edges.reserve(inputs.size());
    for (const Tensor* t : inputs) edges.push_back(t && t->defined() ? gradient_edge(*t) : Edge{});
    node_->set_next_edges(std::move(edges));
    no_grad_.emplace(false);  // the forward below must not record its own pieces
  }

  explicit operator bool() const { return node_ != nullptr; }
  N* operator->() const { return node_.get(); }
  const std::shared_ptr<N>& node() const { return node_; }

  // Makes the node the history of each of the op's outputs (output i is the node's output i).
  const TensorList& finish_all(const TensorList& outputs) {
    if (node_) {
      no_grad_.reset();
      for (const Tensor& out : outputs) set_history(out, node_);
    }
    return outputs;
  }

  // Makes the node the history of the op's output(s); pass only differentiable outputs.
  template <class... Outputs>
  Tensor finish(const Tensor& output, const Outputs&... more) {
    if (node_) {
      no_grad_.reset();
      set_history(output, node_);
      (set_history(more, node_), ...);
    }
    return output;
  }

 private:
  std::shared_ptr<N> node_;
  std::optional<GradModeGuard> no_grad_;
};

}  // namespace tp::autograd

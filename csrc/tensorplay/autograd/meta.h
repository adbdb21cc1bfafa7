#pragma once
// What autograd knows about one tensor.

#include <functional>
#include <memory>
#include <mutex>

#include "tensorplay/autograd/hooks.h"
#include "tensorplay/autograd/node.h"

namespace tp::autograd {

// The .grad of a non-leaf that called retain_grad(), filled by a hook on its grad_fn (the node
// is held weakly: it owns the hook, which owns this).
struct RetainedGrad {
  std::mutex mutex;
  Tensor grad;
  std::weak_ptr<Node> node;
  int hook_id = -1;
};

struct AutogradMeta final : AutogradMetaInterface {
  ~AutogradMeta() override;  // hands grad_fn to release_node (Note [Freeing deep graphs])

  bool requires_grad = false;  // a leaf whose gradient the user asked for
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  uint32_t output_nr = 0;         // which output of grad_fn this tensor is
  uint32_t history_version = 0;   // the tensor's version when grad_fn was set (see refresh_view_history)
  std::weak_ptr<Node> grad_accumulator;
  std::shared_ptr<RetainedGrad> retained;  // set by retain_grad() on a non-leaf
  // Hooks of a leaf, run by its AccumulateGrad: before accumulating, and after. A post-accumulate
  // hook is given the leaf (or what the hook before it returned) and must return nothing.
  HookList<GradHook> leaf_hooks;
  HookList<GradHook> post_accumulate_hooks;
  std::mutex mutex;  // guards grad while gradients accumulate
};

}  // namespace tp::autograd

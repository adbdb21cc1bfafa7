#pragma once
// Hooks on gradients: tensor hooks (register_hook), post-accumulate hooks, retain_grad's slot.
//
// Note [Hooks changed while they run]: a hook may register or remove hooks, on its own tensor
// too, and other threads may do so while a backward pass runs through the tensor. A pass
// therefore runs a snapshot of the list taken when it reaches the tensor: a hook added meanwhile
// runs from the next pass on, and a hook removed meanwhile still runs in this one (as in PyTorch).

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tensorplay/core/tensor.h"

namespace tp::autograd {

// A hook on a gradient. It returns a replacement of the same shape, dtype and device, or an
// undefined tensor to keep the gradient as it is.
struct GradHook {
  std::string name;  // for errors: a Python hook's __name__
  std::function<Tensor(const Tensor&)> fn;
};

// Runs `hook` on `grad` and returns the gradient that goes on; a replacement of another shape,
// dtype or device is an error naming the hook, as in PyTorch.
Tensor run_hook(const GradHook& hook, const Tensor& grad);

// Hooks in registration order, each with the id that removes it.
template <class Hook>
class HookList {
 public:
  using Entries = std::vector<std::pair<int, Hook>>;

  int add(Hook hook) {
    static std::atomic<int> next_id{0};
    int id = next_id++;
    std::lock_guard lock(mutex_);
    writable().emplace_back(id, std::move(hook));
    size_ = entries_->size();
    return id;
  }

  void remove(int id) {
    std::lock_guard lock(mutex_);
    if (!entries_) return;
    std::erase_if(writable(), [id](const auto& entry) { return entry.first == id; });
    size_ = entries_->size();
  }

  bool empty() const { return size_ == 0; }

  // The hooks as they are now (null when there are none); later changes leave it as it is.
  std::shared_ptr<const Entries> snapshot() const {
    if (empty()) return nullptr;
    std::lock_guard lock(mutex_);
    return entries_;
  }

 private:
  // The list to change: in place unless a snapshot of it is being run, else a copy.
  Entries& writable() {
    if (!entries_) entries_ = std::make_shared<Entries>();
    else if (entries_.use_count() > 1) entries_ = std::make_shared<Entries>(*entries_);
    return *entries_;
  }

  mutable std::mutex mutex_;
  std::shared_ptr<Entries> entries_;
  std::atomic<size_t> size_{0};
};

}  // namespace tp::autograd

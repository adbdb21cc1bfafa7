#pragma once
// tp::nn::Module, the C++ counterpart of tensorplay.nn.Module, written the way LibTorch writes it:
// a module registers its parameters, buffers and submodules by name in its constructor, and the
// rest (parameters(), state_dict(), train/eval, to(dtype)) walks what was registered, in
// registration order, with Python's dotted names ("features.0.weight").
//
// A module class FooImpl is used through its holder Foo (TP_MODULE(Foo)), a shared handle:
// `Linear fc(784, 10); fc(x); fc->weight`. Copies of a holder share the module, as Python names do.

#include <concepts>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorplay/core/arg.h"
#include "tensorplay/core/tensor.h"

namespace tp::nn {

// name -> tensor in a module's order: the state a module saves and loads (and what Python's
// state_dict() holds, key for key).
using StateDict = std::vector<std::pair<std::string, Tensor>>;

template <typename Impl>
class ModuleHolder;

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  // Modules are shared by handle; copying one would silently split its parameters.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name without namespaces and "Impl" ("Linear"), for messages.
  std::string name() const;

  // requires_grad is set on the tensor itself, as nn.Parameter does. An undefined tensor registers
  // nothing (a Linear without bias), as Python's `register_parameter("bias", None)` leaves it out
  // of parameters().
  Tensor register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(std::string name, Tensor tensor);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }
  // A holder (Linear, Sequential, ...), returned as given.
  template <typename Holder>
    requires requires(const Holder& h) { h.ptr(); }
  Holder register_module(std::string name, Holder holder) {
    add_child(std::move(name), holder.ptr());
    return holder;
  }

  std::vector<Tensor> parameters(bool recurse = true) const;
  StateDict named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  StateDict named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }

  // Each module's parameters, then its buffers, then its children's, as Python orders them.
  StateDict state_dict() const;
  // Copies each tensor into the one of the same name (no graph is recorded). strict: every key
  // must match, as in Python; a shape mismatch is an error either way.
  void load_state_dict(const StateDict& state, bool strict = true);

  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Converts floating-point parameters and buffers in place: each keeps its handle (an optimizer
  // holding it sees the new data), as Python's Module.to keeps each Parameter object.
  void to(ScalarType dtype);
  void to(Device device);

  void zero_grad(bool set_to_none = true);

 private:
  void add_child(std::string name, std::shared_ptr<Module> child);
  void check_new_name(const std::string& name, const char* what) const;
  void collect(StateDict& out, const std::string& prefix, bool params, bool buffers, bool recurse) const;
  template <typename F>
  void for_each_tensor(F&& f);

  StateDict parameters_;
  StateDict buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// A shared handle to a FooImpl: `holder->member`, `holder(args...)` calls forward. Constructing a
// holder constructs its module from the arguments; `Foo foo{nullptr}` is an empty holder, for a
// member assigned in the owner's constructor.
template <typename Impl>
class ModuleHolder {
 public:
  ModuleHolder()
    requires std::default_initializable<Impl>
      : impl_(std::make_shared<Impl>()) {}
  ModuleHolder(std::nullptr_t) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  template <typename... Args>
    requires(sizeof...(Args) > 0 && std::constructible_from<Impl, Args...>)
  explicit ModuleHolder(Args&&... args) : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    TP_CHECK(impl_, "accessing an empty module holder (constructed from nullptr)");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return !impl_; }

  template <typename... Args>
  auto operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace tp::nn

// Declares the holder `Name` of `NameImpl`, as LibTorch's TORCH_MODULE does.
#define TP_MODULE(Name)                                     \
  class Name : public ::tp::nn::ModuleHolder<Name##Impl> {  \
   public:                                                  \
    using ::tp::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

#pragma once
// nn.Sequential (modules applied in order, named "0", "1", ...) and nn.Functional (a function as a
// module, for the activations between layers: `Sequential(Linear(4, 8), Functional(tp::relu))`).

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tensorplay/nn/module.h"

namespace tp::nn {

class FunctionalImpl : public Module {
 public:
  explicit FunctionalImpl(std::function<Tensor(const Tensor&)> function) : function_(std::move(function)) {}
  Tensor forward(const Tensor& input) { return function_(input); }

 private:
  std::function<Tensor(const Tensor&)> function_;
};
TP_MODULE(Functional);

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <typename... Modules>
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Any holder whose module maps one tensor to one tensor.
  template <typename M>
  void push_back(ModuleHolder<M> holder) {
    push_back(std::to_string(size()), std::move(holder));
  }
  template <typename M>
  void push_back(std::string name, ModuleHolder<M> holder) {
    register_module(std::move(name), holder);
    forwards_.push_back([module = holder.ptr()](const Tensor& x) { return module->forward(x); });
  }
  size_t size() const { return forwards_.size(); }
  Tensor forward(const Tensor& input);

 private:
  std::vector<std::function<Tensor(const Tensor&)>> forwards_;
};
TP_MODULE(Sequential);

}  // namespace tp::nn

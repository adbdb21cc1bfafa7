#include "tensorplay/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <typeinfo>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/autograd/variable.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn {

std::string Module::name() const {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(typeid(*this).name(), nullptr, nullptr, &status),
                                                   std::free);
  std::string full = status == 0 ? demangled.get() : typeid(*this).name();
  const size_t colon = full.rfind(':');
  std::string name = colon == std::string::npos ? full : full.substr(colon + 1);
  if (name.size() > 4 && name.ends_with("Impl")) name.resize(name.size() - 4);
  return name;
}

void Module::check_new_name(const std::string& key, const char* what) const {
  TP_CHECK_VALUE(!key.empty(), name(), ": ", what, " name can't be empty string \"\"");
  TP_CHECK_VALUE(key.find('.') == std::string::npos, name(), ": ", what, " name can't contain \".\", got \"", key,
                 "\"");
  auto taken = [&](const auto& items) {
    return std::any_of(items.begin(), items.end(), [&](const auto& item) { return item.first == key; });
  };
  TP_CHECK_VALUE(!taken(parameters_) && !taken(buffers_) && !taken(children_), name(), ": attribute '", key,
                 "' already exists");
}

Tensor Module::register_parameter(std::string key, Tensor tensor, bool requires_grad) {
  check_new_name(key, "parameter");
  if (!tensor.defined()) return tensor;
  tensor.set_requires_grad(requires_grad);
  parameters_.emplace_back(std::move(key), tensor);
  return tensor;
}

Tensor Module::register_buffer(std::string key, Tensor tensor) {
  check_new_name(key, "buffer");
  if (tensor.defined()) buffers_.emplace_back(std::move(key), tensor);
  return tensor;
}

void Module::add_child(std::string key, std::shared_ptr<Module> child) {
  check_new_name(key, "module");
  TP_CHECK_VALUE(child, name(), ": register_module(\"", key, "\") was given an empty module");
  children_.emplace_back(std::move(key), std::move(child));
}

void Module::collect(StateDict& out, const std::string& prefix, bool params, bool buffers, bool recurse) const {
  if (params)
    for (const auto& [key, t] : parameters_) out.emplace_back(prefix + key, t);
  if (buffers)
    for (const auto& [key, t] : buffers_) out.emplace_back(prefix + key, t);
  if (!recurse) return;
  for (const auto& [key, child] : children_) child->collect(out, prefix + key + ".", params, buffers, true);
}

// Python's named_parameters() yields a tensor shared by two modules once, under its first name.
static StateDict without_repeats(StateDict all) {
  std::set<const TensorImpl*> seen;
  StateDict out;
  for (auto& item : all)
    if (seen.insert(item.second.impl()).second) out.push_back(std::move(item));
  return out;
}

StateDict Module::named_parameters(bool recurse) const {
  StateDict out;
  collect(out, "", true, false, recurse);
  return without_repeats(std::move(out));
}

StateDict Module::named_buffers(bool recurse) const {
  StateDict out;
  collect(out, "", false, true, recurse);
  return without_repeats(std::move(out));
}

static std::vector<Tensor> tensors_of(const StateDict& named) {
  std::vector<Tensor> out;
  out.reserve(named.size());
  for (const auto& item : named) out.push_back(item.second);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return tensors_of(named_parameters(recurse)); }
std::vector<Tensor> Module::buffers(bool recurse) const { return tensors_of(named_buffers(recurse)); }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& item : children_) out.push_back(item.second);
  return out;
}

StateDict Module::state_dict() const {
  StateDict out;
  collect(out, "", true, true, true);
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  std::map<std::string_view, const Tensor*> given;
  for (const auto& [key, t] : state) given.emplace(key, &t);
  const StateDict own = state_dict();
  std::set<std::string_view> own_keys;
  std::vector<std::string> missing, unexpected;
  for (const auto& [key, t] : own) {
    own_keys.insert(key);
    auto it = given.find(key);
    if (it == given.end()) {
      missing.push_back(key);
      continue;
    }
    TP_CHECK(std::ranges::equal(it->second->sizes(), t.sizes()), "Error(s) in loading state_dict for ", name(),
             ": size mismatch for ", key, ": copying a param with shape torch.Size(", to_string(it->second->sizes()),
             ") from checkpoint, the shape in current model is torch.Size(", to_string(t.sizes()), ").");
  }
  for (const auto& [key, t] : state)
    if (!own_keys.contains(key)) unexpected.push_back(key);
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::ostringstream message;
    message << "Error(s) in loading state_dict for " << name() << ":";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      message << "\n\t" << what << " key(s) in state_dict: ";
      for (size_t i = 0; i < keys.size(); ++i) message << (i ? ", \"" : "\"") << keys[i] << "\"";
      message << ".";
    };
    list("Unexpected", unexpected);
    list("Missing", missing);
    TP_FAIL(message.str());
  }
  NoGradGuard no_grad;
  for (const auto& [key, t] : own)
    if (auto it = given.find(key); it != given.end()) copy_(t, *it->second);
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& item : children_) item.second->train(on);
}

template <typename F>
void Module::for_each_tensor(F&& f) {
  for (auto& item : parameters_) f(item.second);
  for (auto& item : buffers_) f(item.second);
  for (auto& item : children_) item.second->for_each_tensor(f);
}

// The data moves under the same handle: set_data swaps what the TensorImpl holds, so whoever holds
// the tensor (an optimizer, the caller) sees the converted values, and a parameter stays a leaf.
static void replace_data(const Tensor& t, const Tensor& converted) {
  if (!converted.is_same(t)) t.impl()->set_data(*converted.impl());
}

void Module::to(ScalarType dtype) {
  TP_CHECK_TYPE(is_floating_point(dtype), name(),
                ".to only accepts floating point dtypes, but got desired dtype=", tp::name(dtype));
  NoGradGuard no_grad;
  for_each_tensor([&](const Tensor& t) {
    if (t.is_floating_point()) replace_data(t, tp::to(t, dtype));
  });
}

void Module::to(Device device) {
  NoGradGuard no_grad;
  for_each_tensor([&](const Tensor& t) { replace_data(t, tp::to(t, device)); });
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) autograd::zero_grad(p, set_to_none);
}

}  // namespace tp::nn

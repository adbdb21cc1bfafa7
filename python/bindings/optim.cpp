// tensorplay._C._optim: the optimizer steps (csrc/tensorplay/ops/optim.h). State tensors travel as lists
// with None for "not created yet"; the updated lists come back.

#include <nanobind/stl/tuple.h>

#include "bindings.h"
#include "tensorplay/ops/optim.h"

namespace tp::python {

namespace {

TensorList optional_list(const std::vector<std::optional<Tensor>>& list) {
  TensorList out;
  for (const auto& t : list) out.push_back(t.value_or(Tensor()));
  return out;
}

std::vector<std::optional<Tensor>> to_optional(const TensorList& list) {
  std::vector<std::optional<Tensor>> out;
  for (const Tensor& t : list) out.push_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
  return out;
}

using States = std::vector<std::optional<Tensor>>;

}  // namespace

void init_optim(nb::module_& m) {
  nb::module_ o = m.def_submodule("_optim", "Optimizer steps over a parameter group");
  o.def("sgd", [](const TensorList& params, const TensorList& grads, const States& bufs, double lr, double momentum,
                  double dampening, double weight_decay, bool nesterov, bool maximize) {
    TensorList b = optional_list(bufs);
    optim::sgd_step(params, grads, b, {lr, momentum, dampening, weight_decay, nesterov, maximize});
    return to_optional(b);
  }, "params"_a, "grads"_a, "momentum_buffers"_a, "lr"_a, "momentum"_a, "dampening"_a, "weight_decay"_a, "nesterov"_a,
        "maximize"_a, release_gil());
  o.def("adam", [](const TensorList& params, const TensorList& grads, const States& m1, const States& m2,
                   const States& m2max, const std::vector<int64_t>& steps, double lr, double beta1, double beta2,
                   double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled) {
    TensorList a = optional_list(m1), b = optional_list(m2), c = optional_list(m2max);
    optim::adam_step(params, grads, a, b, c, steps, {lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled});
    return std::make_tuple(to_optional(a), to_optional(b), to_optional(c));
  }, "params"_a, "grads"_a, "exp_avgs"_a, "exp_avg_sqs"_a, "max_exp_avg_sqs"_a, "steps"_a, "lr"_a, "beta1"_a,
        "beta2"_a, "eps"_a, "weight_decay"_a, "amsgrad"_a, "maximize"_a, "decoupled_weight_decay"_a, release_gil());
  o.def("rmsprop", [](const TensorList& params, const TensorList& grads, const States& sq, const States& ga,
                      const States& mb, double lr, double alpha, double eps, double weight_decay, double momentum,
                      bool centered, bool maximize) {
    TensorList a = optional_list(sq), b = optional_list(ga), c = optional_list(mb);
    optim::rmsprop_step(params, grads, a, b, c, {lr, alpha, eps, weight_decay, momentum, centered, maximize});
    return std::make_tuple(to_optional(a), to_optional(b), to_optional(c));
  }, "params"_a, "grads"_a, "square_avgs"_a, "grad_avgs"_a, "momentum_buffers"_a, "lr"_a, "alpha"_a, "eps"_a,
        "weight_decay"_a, "momentum"_a, "centered"_a, "maximize"_a, release_gil());
  o.def("adagrad", [](const TensorList& params, const TensorList& grads, const States& sums,
                      const std::vector<int64_t>& steps, double lr, double lr_decay, double weight_decay, double eps,
                      bool maximize) {
    TensorList s = optional_list(sums);
    optim::adagrad_step(params, grads, s, steps, {lr, lr_decay, weight_decay, eps, maximize});
    return to_optional(s);
  }, "params"_a, "grads"_a, "state_sums"_a, "steps"_a, "lr"_a, "lr_decay"_a, "weight_decay"_a, "eps"_a, "maximize"_a,
        release_gil());
}

}  // namespace tp::python

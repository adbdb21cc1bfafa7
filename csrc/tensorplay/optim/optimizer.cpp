#include "tensorplay/optim/optimizer.h"

#include "tensorplay/autograd/variable.h"
#include "tensorplay/ops/ops.h"

namespace tp::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  TP_CHECK_VALUE(!params_.empty(), "optimizer got an empty parameter list");
  for (const Tensor& p : params_) {
    TP_CHECK_VALUE(p.defined(), "optimizer got an undefined tensor among its parameters");
    TP_CHECK_VALUE(p.is_leaf(), "can't optimize a non-leaf Tensor");
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (const Tensor& p : params_) autograd::zero_grad(p, set_to_none);
}

std::vector<size_t> Optimizer::with_grads() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].grad().defined()) out.push_back(i);
  return out;
}

}  // namespace tp::optim

#include "tensorplay/optim/sgd.h"

#include "tensorplay/ops/optim.h"

namespace tp::optim {

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options_)
    : Optimizer(std::move(params)), options(options_), momentum_buffers_(params_.size()) {
  TP_CHECK_VALUE(options.lr() >= 0, "Invalid learning rate: ", options.lr());
  TP_CHECK_VALUE(options.momentum() >= 0, "Invalid momentum value: ", options.momentum());
  TP_CHECK_VALUE(options.weight_decay() >= 0, "Invalid weight_decay value: ", options.weight_decay());
  TP_CHECK_VALUE(!options.nesterov() || (options.momentum() > 0 && options.dampening() == 0),
                 "Nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  TensorList params, grads, buffers;
  const std::vector<size_t> active = with_grads();
  for (size_t i : active) {
    params.push_back(params_[i]);
    grads.push_back(params_[i].grad());
    buffers.push_back(momentum_buffers_[i]);
  }
  sgd_step(params, grads, buffers,
           {.lr = options.lr(),
            .momentum = options.momentum(),
            .dampening = options.dampening(),
            .weight_decay = options.weight_decay(),
            .nesterov = options.nesterov(),
            .maximize = options.maximize()});
  for (size_t k = 0; k < active.size(); ++k) momentum_buffers_[active[k]] = buffers[k];
}

}  // namespace tp::optim

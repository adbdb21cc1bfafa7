#pragma once
// SGD with momentum, dampening, Nesterov momentum and weight decay, as torch.optim.SGD.

#include "tensorplay/optim/optimizer.h"

namespace tp::optim {

struct SGDOptions {
  SGDOptions(double lr) : lr_(lr) {}
  TP_ARG(double, lr);
  TP_ARG(double, momentum) = 0;
  TP_ARG(double, dampening) = 0;
  TP_ARG(double, weight_decay) = 0;
  TP_ARG(bool, nesterov) = false;
  TP_ARG(bool, maximize) = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  void step() override;

  SGDOptions options;

 private:
  std::vector<Tensor> momentum_buffers_;  // one per parameter, made on its first step
};

}  // namespace tp::optim

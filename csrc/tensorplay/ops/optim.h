#pragma once
// Optimizer steps over a whole parameter group, with PyTorch's update rules. Each runs in C++
// over every parameter (no Python per parameter), without recording a graph, and updates the
// optimizer state tensors in place; a state tensor passed undefined is created.

#include "tensorplay/core/tensor.h"

namespace tp::optim {

struct SGDStepOptions {
  double lr, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};
// momentum_buffers[i] belongs to params[i].
void sgd_step(const TensorList& params, const TensorList& grads, TensorList& momentum_buffers, const SGDStepOptions& o);

struct AdamStepOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
  bool decoupled_weight_decay = false;  // AdamW
};
// steps[i] counts the updates params[i] has had (including this one).
void adam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
               TensorList& max_exp_avg_sqs, const std::vector<int64_t>& steps, const AdamStepOptions& o);

struct RMSpropStepOptions {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};
void rmsprop_step(const TensorList& params, const TensorList& grads, TensorList& square_avgs, TensorList& grad_avgs,
                  TensorList& momentum_buffers, const RMSpropStepOptions& o);

struct AdagradStepOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, eps = 1e-10;
  bool maximize = false;
};
void adagrad_step(const TensorList& params, const TensorList& grads, TensorList& state_sums,
                  const std::vector<int64_t>& steps, const AdagradStepOptions& o);

}  // namespace tp::optim

#include "tensorplay/optim/adam.h"

#include "tensorplay/ops/optim.h"

namespace tp::optim {

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options_, bool decoupled_weight_decay)
    : Optimizer(std::move(params)),
      options(options_),
      decoupled_weight_decay_(decoupled_weight_decay),
      exp_avgs_(params_.size()),
      exp_avg_sqs_(params_.size()),
      max_exp_avg_sqs_(params_.size()),
      steps_(params_.size(), 0) {
  const auto [beta1, beta2] = options.betas();
  TP_CHECK_VALUE(options.lr() >= 0, "Invalid learning rate: ", options.lr());
  TP_CHECK_VALUE(options.eps() >= 0, "Invalid epsilon value: ", options.eps());
  TP_CHECK_VALUE(beta1 >= 0 && beta1 < 1, "Invalid beta parameter at index 0: ", beta1);
  TP_CHECK_VALUE(beta2 >= 0 && beta2 < 1, "Invalid beta parameter at index 1: ", beta2);
  TP_CHECK_VALUE(options.weight_decay() >= 0, "Invalid weight_decay value: ", options.weight_decay());
}

void Adam::step() {
  TensorList params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
  std::vector<int64_t> steps;
  const std::vector<size_t> active = with_grads();
  for (size_t i : active) {
    params.push_back(params_[i]);
    grads.push_back(params_[i].grad());
    exp_avgs.push_back(exp_avgs_[i]);
    exp_avg_sqs.push_back(exp_avg_sqs_[i]);
    max_exp_avg_sqs.push_back(max_exp_avg_sqs_[i]);
    steps.push_back(++steps_[i]);
  }
  adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
            {.lr = options.lr(),
             .beta1 = options.betas().first,
             .beta2 = options.betas().second,
             .eps = options.eps(),
             .weight_decay = options.weight_decay(),
             .amsgrad = options.amsgrad(),
             .maximize = options.maximize(),
             .decoupled_weight_decay = decoupled_weight_decay_});
  for (size_t k = 0; k < active.size(); ++k) {
    exp_avgs_[active[k]] = exp_avgs[k];
    exp_avg_sqs_[active[k]] = exp_avg_sqs[k];
    max_exp_avg_sqs_[active[k]] = max_exp_avg_sqs[k];
  }
}

}  // namespace tp::optim

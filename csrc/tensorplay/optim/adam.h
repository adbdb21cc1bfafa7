#pragma once
// Adam and AdamW (Adam with decoupled weight decay), as torch.optim.Adam and torch.optim.AdamW.

#include <cstdint>
#include <utility>

#include "tensorplay/optim/optimizer.h"

namespace tp::optim {

// (beta1, beta2): the decay rates of the first and second moment estimates.
using Betas = std::pair<double, double>;

struct AdamOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  TP_ARG(double, lr);
  TP_ARG(Betas, betas) = { 0.9, 0.999 };
  TP_ARG(double, eps) = 1e-8;
  TP_ARG(double, weight_decay) = 0;
  TP_ARG(bool, amsgrad) = false;
  TP_ARG(bool, maximize) = false;
};

// AdamW's options differ only in the default weight decay, 1e-2.
struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(1e-2); }
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {}) : Adam(std::move(params), options, false) {}
  void step() override;

  AdamOptions options;

 protected:
  Adam(std::vector<Tensor> params, const AdamOptions& options, bool decoupled_weight_decay);

 private:
  bool decoupled_weight_decay_;
  // Per parameter: the moment estimates (made on its first step) and how many steps it has had.
  std::vector<Tensor> exp_avgs_, exp_avg_sqs_, max_exp_avg_sqs_;
  std::vector<int64_t> steps_;
};

class AdamW : public Adam {
 public:
  // Chained setters return AdamOptions&: an AdamWOptions chain keeps AdamW's default weight decay.
  AdamW(std::vector<Tensor> params, const AdamOptions& options = AdamWOptions())
      : Adam(std::move(params), options, true) {}
};

}  // namespace tp::optim

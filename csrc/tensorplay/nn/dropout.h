#pragma once
// nn.Dropout: zeroes each element with probability p while training (scaling the rest by
// 1 / (1 - p)); the identity in eval mode.

#include "tensorplay/nn/module.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  TP_ARG(double, p);
};

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {}) : options(options) {
    TP_CHECK_VALUE(options.p() >= 0 && options.p() <= 1, "dropout probability has to be between 0 and 1, but got ",
                   options.p());
  }
  Tensor forward(const Tensor& input) { return dropout(input, options.p(), is_training()); }

  DropoutOptions options;
};
TP_MODULE(Dropout);

}  // namespace tp::nn

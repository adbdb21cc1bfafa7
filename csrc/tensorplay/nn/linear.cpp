#include "tensorplay/nn/linear.h"

#include <cmath>

#include "tensorplay/nn/init.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn {

LinearImpl::LinearImpl(const LinearOptions& options_) : options(options_) {
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = weight.size(1);
    const double bound = fan_in > 0 ? 1 / std::sqrt(double(fan_in)) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  return linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

}  // namespace tp::nn

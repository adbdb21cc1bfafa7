#include "tensorplay/nn/conv.h"

#include <cmath>

#include "tensorplay/nn/init.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn {

Size2::Size2(std::initializer_list<int64_t> each) : values_{} {
  TP_CHECK_VALUE(each.size() == 2, "expected 2 values (one per spatial dimension), got ", each.size());
  values_ = {each.begin()[0], each.begin()[1]};
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_) : options(options_) {
  const int64_t groups = options.groups();
  TP_CHECK_VALUE(groups > 0, "groups must be a positive integer");
  TP_CHECK_VALUE(options.in_channels() % groups == 0, "in_channels must be divisible by groups");
  TP_CHECK_VALUE(options.out_channels() % groups == 0, "out_channels must be divisible by groups");
  weight = register_parameter("weight", empty({options.out_channels(), options.in_channels() / groups,
                                               options.kernel_size()[0], options.kernel_size()[1]}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_channels()}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::fan_in_and_fan_out(weight).first;
    if (fan_in != 0) init::uniform_(bias, -1 / std::sqrt(double(fan_in)), 1 / std::sqrt(double(fan_in)));
  }
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return conv2d(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, options.stride(),
                options.padding(), options.dilation(), options.groups());
}

}  // namespace tp::nn

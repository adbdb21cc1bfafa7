#pragma once
// nn.Linear: y = x W^T + b, W of shape [out_features, in_features].

#include "tensorplay/nn/module.h"

namespace tp::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  TP_ARG(int64_t, in_features);
  TP_ARG(int64_t, out_features);
  TP_ARG(bool, bias) = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  // Draws the weights as tensorplay.nn.Linear does (Kaiming-uniform weight, uniform bias).
  void reset_parameters();
  Tensor forward(const Tensor& input);

  LinearOptions options;
  Tensor weight, bias;  // bias undefined without one
};
TP_MODULE(Linear);

}  // namespace tp::nn

#include "tensorplay/nn/container.h"

namespace tp::nn {

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& forward : forwards_) x = forward(x);
  return x;
}

}  // namespace tp::nn

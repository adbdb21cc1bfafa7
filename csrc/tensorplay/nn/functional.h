#pragma once
// tp::nn::functional, LibTorch's torch::nn::functional: the ops modules are made of, by the names
// torch.nn.functional gives them (`namespace F = tp::nn::functional;`). They are the tp:: ops
// themselves, so autograd and autocast treat a functional call and a module alike.

#include "tensorplay/ops/ops.h"

namespace tp::nn::functional {

using tp::adaptive_avg_pool2d;
using tp::avg_pool2d;
using tp::batch_norm;
using tp::binary_cross_entropy;
using tp::binary_cross_entropy_with_logits;
using tp::conv1d;
using tp::conv2d;
using tp::conv_transpose2d;
using tp::cross_entropy;
using tp::dropout;
using tp::embedding;
using tp::gelu;
using tp::group_norm;
using tp::l1_loss;
using tp::layer_norm;
using tp::linear;
using tp::log_softmax;
using tp::max_pool2d;
using tp::mse_loss;
using tp::nll_loss;
using tp::one_hot;
using tp::relu;
using tp::sigmoid;
using tp::silu;
using tp::softmax;
using tp::softplus;
using tp::tanh;

}  // namespace tp::nn::functional

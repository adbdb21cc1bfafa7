#include "tensorplay/nn/normalization.h"

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/nn/init.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn {

static std::optional<Tensor> optional(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNorm2dOptions& options_) : options(options_) {
  const int64_t n = options.num_features();
  if (options.affine()) {
    weight = register_parameter("weight", empty({n}));
    bias = register_parameter("bias", empty({n}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({n}));
    running_var = register_buffer("running_var", ones({n}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros(IntArrayRef(), ScalarType::Int64));
  }
  reset_parameters();
}

void BatchNorm2dImpl::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  zero_(running_mean);
  fill_(running_var, 1);
  zero_(num_batches_tracked);
}

void BatchNorm2dImpl::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& input) {
  TP_CHECK_VALUE(input.dim() == 4, "expected 4D input (got ", input.dim(), "D input)");
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    add_(num_batches_tracked, 1);
    if (!options.momentum()) factor = 1.0 / num_batches_tracked.item<double>();
  }
  // Batch statistics while training, or whenever there are no running estimates to use.
  const bool use_batch_stats = is_training() || !options.track_running_stats();
  return batch_norm(input, optional(running_mean), optional(running_var), optional(weight), optional(bias),
                    use_batch_stats, factor, options.eps());
}

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_) : options(options_) {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", tp::empty(options.normalized_shape()));
    if (options.bias()) bias = register_parameter("bias", tp::empty(options.normalized_shape()));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options.normalized_shape(), optional(weight), optional(bias), options.eps());
}

}  // namespace tp::nn

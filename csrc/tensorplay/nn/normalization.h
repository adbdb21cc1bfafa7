#pragma once
// nn.BatchNorm2d (statistics over N, H, W per channel; running estimates in buffers) and
// nn.LayerNorm (statistics over the trailing normalized_shape).

#include <vector>

#include "tensorplay/nn/module.h"

namespace tp::nn {

struct BatchNorm2dOptions {
  BatchNorm2dOptions(int64_t num_features) : num_features_(num_features) {}
  TP_ARG(int64_t, num_features);
  TP_ARG(double, eps) = 1e-5;
  // Weight of each batch in the running estimates; nullopt: their cumulative average, as
  // Python's momentum=None.
  TP_ARG(std::optional<double>, momentum) = 0.1;
  TP_ARG(bool, affine) = true;
  TP_ARG(bool, track_running_stats) = true;
};

class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNorm2dOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNorm2dOptions& options);
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);

  BatchNorm2dOptions options;
  Tensor weight, bias;                                    // with affine
  Tensor running_mean, running_var, num_batches_tracked;  // with track_running_stats
};
TP_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  TP_ARG(std::vector<int64_t>, normalized_shape);
  TP_ARG(double, eps) = 1e-5;
  TP_ARG(bool, elementwise_affine) = true;
  TP_ARG(bool, bias) = true;
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input);

  LayerNormOptions options;
  Tensor weight, bias;
};
TP_MODULE(LayerNorm);

}  // namespace tp::nn

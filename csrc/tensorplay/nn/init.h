#pragma once
// Parameter initialisation as tensorplay.nn.init does it, drawing from the same generator in the
// same order, so that a C++ module built after tp::manual_seed(s) has the weights the Python
// module built after tensorplay.manual_seed(s) has.

#include <string_view>
#include <utility>

#include "tensorplay/core/tensor.h"

namespace tp::nn::init {

// (fan_in, fan_out) of a weight of 2 or more dimensions: [out, in, *kernel].
std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& weight);
double calculate_gain(std::string_view nonlinearity, double param = 0.01);
// All draw without recording a graph and return the tensor.
Tensor uniform_(const Tensor& t, double from = 0, double to = 1);
Tensor normal_(const Tensor& t, double mean = 0, double std = 1);
Tensor constant_(const Tensor& t, double value);
Tensor ones_(const Tensor& t);
Tensor zeros_(const Tensor& t);
Tensor kaiming_uniform_(const Tensor& t, double a = 0, std::string_view mode = "fan_in",
                        std::string_view nonlinearity = "leaky_relu");
Tensor xavier_uniform_(const Tensor& t, double gain = 1);

}  // namespace tp::nn::init

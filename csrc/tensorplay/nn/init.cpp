#include "tensorplay/nn/init.h"

#include <cmath>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/ops/ops.h"

namespace tp::nn::init {

std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& weight) {
  TP_CHECK_VALUE(weight.dim() >= 2, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < weight.dim(); ++d) receptive *= weight.size(d);
  return {weight.size(1) * receptive, weight.size(0) * receptive};
}

double calculate_gain(std::string_view nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity.starts_with("conv")) return 1;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4;
  TP_CHECK_VALUE(false, "Unsupported nonlinearity ", nonlinearity);
  return 0;
}

Tensor uniform_(const Tensor& t, double from, double to) {
  NoGradGuard no_grad;
  return tp::uniform_(t, from, to);
}

Tensor normal_(const Tensor& t, double mean, double std) {
  NoGradGuard no_grad;
  return tp::normal_(t, mean, std);
}

Tensor constant_(const Tensor& t, double value) {
  NoGradGuard no_grad;
  return fill_(t, value);
}

Tensor ones_(const Tensor& t) { return constant_(t, 1); }
Tensor zeros_(const Tensor& t) { return constant_(t, 0); }

Tensor kaiming_uniform_(const Tensor& t, double a, std::string_view mode, std::string_view nonlinearity) {
  if (t.numel() == 0) return t;
  TP_CHECK_VALUE(mode == "fan_in" || mode == "fan_out", "Mode ", mode,
                 " not supported, please use one of ['fan_in', 'fan_out']");
  auto [fan_in, fan_out] = fan_in_and_fan_out(t);
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(double(mode == "fan_in" ? fan_in : fan_out));
  const double bound = std::sqrt(3.0) * std;
  return init::uniform_(t, -bound, bound);
}

Tensor xavier_uniform_(const Tensor& t, double gain) {
  auto [fan_in, fan_out] = fan_in_and_fan_out(t);
  const double a = gain * std::sqrt(6.0 / double(fan_in + fan_out));
  return init::uniform_(t, -a, a);
}

}  // namespace tp::nn::init

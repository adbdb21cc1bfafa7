#pragma once
// nn.Conv2d over NCHW images, weights [out_channels, in_channels / groups, kH, kW].

#include <array>
#include <initializer_list>

#include "tensorplay/nn/module.h"

namespace tp::nn {

// A size per spatial dimension, given once for both (`3`) or each (`{3, 5}`), as LibTorch's
// ExpandingArray<2>.
class Size2 {
 public:
  Size2(int64_t both) : values_{both, both} {}
  Size2(std::initializer_list<int64_t> each);
  operator IntArrayRef() const { return IntArrayRef(values_.data(), values_.size()); }
  int64_t operator[](size_t i) const { return values_[i]; }

 private:
  std::array<int64_t, 2> values_;
};

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  TP_ARG(int64_t, in_channels);
  TP_ARG(int64_t, out_channels);
  TP_ARG(Size2, kernel_size);
  TP_ARG(Size2, stride) = 1;
  TP_ARG(Size2, padding) = 0;
  TP_ARG(Size2, dilation) = 1;
  TP_ARG(int64_t, groups) = 1;
  TP_ARG(bool, bias) = true;
};

class Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input);

  Conv2dOptions options;
  Tensor weight, bias;
};
TP_MODULE(Conv2d);

}  // namespace tp::nn

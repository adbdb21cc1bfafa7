// Convolution and pooling over NCHW tensors, with their backward nodes. conv1d is conv2d over a
// height of 1. The kernels are in cpu/conv.cpp and cpu/pool.cpp.
//
// Sizes: N batch, C channels, (H, W) input, (P, Q) output, (R, S) kernel.

#include <limits>
#include <tuple>
#include <utility>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

// Two values per spatial dim from 1 or 2 given (stride=2 means (2, 2)).
std::array<int64_t, 2> pair(const char* op, const char* what, IntArrayRef v) {
  TP_CHECK(v.size() == 1 || v.size() == 2, "[", op, "] expected ", what,
           " to be a single integer value or a list of "
           "2 values to match the convolution dimensions, but got ",
           what, "=", to_string(v));
  return v.size() == 1 ? std::array<int64_t, 2>{v[0], v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

Window conv_window(const char* op, const Tensor& weight, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                   int64_t groups) {
  Window w;
  w.kernel = {weight.size(2), weight.size(3)};
  w.stride = pair(op, "stride", stride);
  w.padding = pair(op, "padding", padding);
  w.dilation = pair(op, "dilation", dilation);
  w.groups = groups;
  for (int d = 0; d < 2; ++d) {
    TP_CHECK(w.stride[d] > 0, "[", op, "] non-positive stride is not supported");
    TP_CHECK(w.padding[d] >= 0, "[", op, "] negative padding is not supported");
    TP_CHECK(w.dilation[d] > 0, "[", op, "] dilation should be greater than zero");
  }
  TP_CHECK(groups > 0, "[", op, "] non-positive groups is not supported");
  return w;
}

// Double backward through these gradients is not implemented; a node that says so keeps it from
// being silently wrong.
class UnsupportedBackward final : public autograd::Node {
 public:
  explicit UnsupportedBackward(const char* op) : op_(op) {}
  std::string name() const override { return std::string(op_) + "DoubleBackward"; }
  TensorList apply(TensorList&&) override {
    TP_NOT_IMPLEMENTED("[", op_, "] double backward (create_graph=True through this gradient) is not supported");
  }

 private:
  const char* op_;
};

// The backend's gradient kernels as tensors; recorded so that differentiating them fails loudly.
Tensor input_grad(const char* op, const Tensor& grad_out, const Tensor& weight, IntArrayRef input_sizes,
                  const Window& w) {
  autograd::Record<UnsupportedBackward> record({&grad_out, &weight}, op);
  Tensor g = grad_out.contiguous(), k = weight.contiguous();
  Tensor out = empty(input_sizes, g.dtype(), g.device());
  backend(g.device()).conv2d_input_grad(out, g, k, w);
  return record.finish(out);
}

// The weight's gradient and, where with_bias, the bias's (grad_out summed over batch and space),
// which the kernel sums in the same pass over grad_out.
std::pair<Tensor, Tensor> weight_grad(const char* op, const Tensor& grad_out, const Tensor& input,
                                      IntArrayRef weight_sizes, const Window& w, bool with_bias) {
  autograd::Record<UnsupportedBackward> record({&grad_out, &input}, op);
  Tensor g = grad_out.contiguous(), x = input.contiguous();
  Tensor gk = empty(weight_sizes, g.dtype(), g.device());
  Tensor gb = with_bias ? empty({g.size(1)}, g.dtype(), g.device()) : Tensor();
  backend(g.device()).conv2d_weight_grad(gk, gb, g, x, w);
  if (with_bias) record.finish(gk, gb);
  else record.finish(gk);
  return {gk, gb};
}

// d conv2d(x, k) + b: the transposed convolution of g for x, the weight gradient for k, and g
// summed over batch and space for b. conv_transpose2d swaps the roles of its input and output.
class ConvolutionBackward final : public autograd::Node {
 public:
  ConvolutionBackward(const Window& w, bool transposed) : w_(w), transposed_(transposed) {}
  std::string name() const override { return "ConvolutionBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    Tensor x = input.unpack(*this), k = weight.unpack(*this);
    Tensor gx, gk, gb;
    if (!transposed_) {
      if (needs_input_grad(0)) gx = input_grad("conv2d", g, k, x.sizes(), w_);
      if (needs_input_grad(1)) std::tie(gk, gb) = weight_grad("conv2d", g, x, k.sizes(), w_, needs_input_grad(2));
    } else {
      if (needs_input_grad(0)) gx = conv2d(g, k, {}, w_.stride, w_.padding, w_.dilation, w_.groups);
      if (needs_input_grad(1)) gk = weight_grad("conv_transpose2d", x, g, k.sizes(), w_, false).first;
    }
    if (needs_input_grad(2) && !gb.defined()) gb = sum(g, {0, 2, 3});
    return {gx, gk, gb};
  }
  void release_saved() override {
    input.release();
    weight.release();
  }
  autograd::SavedTensor input, weight;

 private:
  Window w_;
  bool transposed_;
};

void check_conv(const char* op, const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  TP_CHECK(weight.dim() == 4, "[", op, "] expected a 4-D weight, got weight of size ", to_string(weight.sizes()));
  TP_CHECK(x.dtype() == weight.dtype(), "[", op, "] Input type (", name(x.dtype()), ") and weight type (",
           name(weight.dtype()), ") should be the same");
  TP_CHECK(!bias || bias->dtype() == x.dtype(), "[", op, "] Input type (", name(x.dtype()), ") and bias type (",
           name(bias->dtype()), ") should be the same");
  TP_CHECK(is_floating_point(x.dtype()), "[", op, "] expected a floating point input, got ", name(x.dtype()));
}

// Runs a batched op on an unbatched (C, H, W) input by adding and removing the batch dim.
template <class F>
Tensor batched(const Tensor& x, const char* op, const F& f) {
  TP_CHECK(x.dim() == 3 || x.dim() == 4, "[", op, "] Expected 3D (unbatched) or 4D (batched) input to ", op,
           ", but got input of size: ", to_string(x.sizes()));
  return x.dim() == 3 ? squeeze(f(unsqueeze(x, 0)), {0}) : f(x);
}

// The 1-D convolutions run as 2-D ones over a height of 1: a 1-D argument v becomes {height, v}.
Shape as_2d(const char* op, const char* what, IntArrayRef v, int64_t height) {
  TP_CHECK(v.size() == 1, "[", op, "] expected ", what, " to be a single integer value, got ", to_string(v));
  return Shape{height, v[0]};
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  TP_OP_ENTRY(conv2d, input, weight, bias, stride, padding, dilation, groups);
  check_conv("conv2d", input, weight, bias);
  Window w = conv_window("conv2d", weight, stride, padding, dilation, groups);
  return batched(input, "conv2d", [&](const Tensor& x) {
    const int64_t C = x.size(1), O = weight.size(0);
    TP_CHECK(O % groups == 0, "[conv2d] expected out_channels (", O, ") to be divisible by groups (", groups, ")");
    TP_CHECK(C == weight.size(1) * groups, "[conv2d] Given groups=", groups, ", weight of size ",
             to_string(weight.sizes()), ", expected input", to_string(x.sizes()), " to have ", weight.size(1) * groups,
             " channels, but got ", C, " channels instead");
    TP_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == O), "[conv2d] expected bias of size [", O, "], got ",
             to_string(bias->sizes()));
    Shape out_shape{x.size(0), O, 0, 0};
    for (int d = 0; d < 2; ++d) {
      const int64_t padded = x.size(2 + d) + 2 * w.padding[d], extent = w.dilation[d] * (w.kernel[d] - 1) + 1;
      TP_CHECK(padded >= extent, "[conv2d] Calculated padded input size per channel: (", x.size(2) + 2 * w.padding[0],
               " x ", x.size(3) + 2 * w.padding[1], "). Kernel size: (", w.kernel[0], " x ", w.kernel[1],
               "). Kernel size can't be greater than actual input size");
      out_shape[2 + d] = (padded - extent) / w.stride[d] + 1;
    }
    const Tensor& b = bias ? *bias : Tensor();
    autograd::Record<ConvolutionBackward> record({&x, &weight, bias ? &b : nullptr}, w, false);
    Tensor xc = x.contiguous(), kc = weight.contiguous(), bc = bias ? bias->contiguous() : Tensor();
    Tensor out = empty(out_shape, x.dtype(), x.device());
    backend(x.device()).conv2d(out, xc, kc, bc, w);
    record.finish(out);
    if (record) {
      record->input = autograd::SavedTensor(x, false);
      record->weight = autograd::SavedTensor(weight, false);
    }
    return out;
  });
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  TP_OP_ENTRY(conv1d, input, weight, bias, stride, padding, dilation, groups);
  TP_CHECK(input.dim() == 2 || input.dim() == 3,
           "[conv1d] Expected 2D (unbatched) or 3D (batched) input to conv1d, "
           "but got input of size: ",
           to_string(input.sizes()));
  TP_CHECK(weight.dim() == 3, "[conv1d] expected a 3-D weight, got weight of size ", to_string(weight.sizes()));
  Tensor out = conv2d(unsqueeze(input, -2), unsqueeze(weight, 2), bias, as_2d("conv1d", "stride", stride, 1),
                      as_2d("conv1d", "padding", padding, 0), as_2d("conv1d", "dilation", dilation, 1), groups);
  return squeeze(out, {-2});
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  TP_OP_ENTRY(conv_transpose1d, input, weight, bias, stride, padding, output_padding, groups, dilation);
  TP_CHECK(input.dim() == 2 || input.dim() == 3,
           "[conv_transpose1d] Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, "
           "but got input of size: ",
           to_string(input.sizes()));
  TP_CHECK(weight.dim() == 3, "[conv_transpose1d] expected a 3-D weight, got weight of size ",
           to_string(weight.sizes()));
  const char* op = "conv_transpose1d";
  Tensor out = conv_transpose2d(unsqueeze(input, -2), unsqueeze(weight, 2), bias, as_2d(op, "stride", stride, 1),
                                as_2d(op, "padding", padding, 0), as_2d(op, "output_padding", output_padding, 0),
                                groups, as_2d(op, "dilation", dilation, 1));
  return squeeze(out, {-2});
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  TP_OP_ENTRY(conv_transpose2d, input, weight, bias, stride, padding, output_padding, groups, dilation);
  check_conv("conv_transpose2d", input, weight, bias);
  Window w = conv_window("conv_transpose2d", weight, stride, padding, dilation, groups);
  auto extra = pair("conv_transpose2d", "output_padding", output_padding);
  TP_CHECK(weight.size(0) % groups == 0, "[conv_transpose2d] Given groups=", groups,
           ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
           to_string(weight.sizes()), " instead");
  return batched(input, "conv_transpose2d", [&](const Tensor& x) {
    const int64_t C = x.size(1), O = weight.size(1) * groups;
    TP_CHECK(C == weight.size(0), "[conv_transpose2d] Given transposed=1, weight of size ", to_string(weight.sizes()),
             ", expected input", to_string(x.sizes()), " to have ", weight.size(0), " channels, but got ", C,
             " channels instead");
    Shape out_shape{x.size(0), O, 0, 0};
    for (int d = 0; d < 2; ++d) {
      TP_CHECK(extra[d] >= 0 && (extra[d] < w.stride[d] || extra[d] < w.dilation[d]),
               "[conv_transpose2d] output "
               "padding must be smaller than either stride or dilation, but got output_padding=",
               to_string(output_padding));
      out_shape[2 + d] =
          (x.size(2 + d) - 1) * w.stride[d] - 2 * w.padding[d] + w.dilation[d] * (w.kernel[d] - 1) + extra[d] + 1;
      TP_CHECK(out_shape[2 + d] > 0, "[conv_transpose2d] the computed output size ", to_string(out_shape),
               " is too small");
    }
    TP_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == O), "[conv_transpose2d] expected bias of size [", O,
             "], got ", to_string(bias->sizes()));
    const Tensor& b = bias ? *bias : Tensor();
    autograd::Record<ConvolutionBackward> record({&x, &weight, bias ? &b : nullptr}, w, true);
    Tensor out = empty(out_shape, x.dtype(), x.device());
    backend(x.device()).conv2d_input_grad(out, x.contiguous(), weight.contiguous(), w);
    if (bias) add_(out, view(*bias, {1, O, 1, 1}));
    record.finish(out);
    if (record) {
      record->input = autograd::SavedTensor(x, false);
      record->weight = autograd::SavedTensor(weight, false);
    }
    return out;
  });
}

// ---- pooling ----

namespace {

// PyTorch's pooled size, with ceil_mode's rule that the last window starts inside the input.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  int64_t numerator = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Window pool_window(const char* op, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation) {
  Window w;
  w.kernel = pair(op, "kernel_size", kernel);
  w.stride = stride.empty() ? w.kernel : pair(op, "stride", stride);
  w.padding = pair(op, "padding", padding);
  w.dilation = pair(op, "dilation", dilation);
  for (int d = 0; d < 2; ++d) {
    TP_CHECK(w.kernel[d] > 0, "[", op,
             "] kernel size should be greater than zero, but got kernel_size=", to_string(kernel));
    TP_CHECK(w.stride[d] > 0, "[", op, "] stride should be greater than zero, but got stride=", to_string(stride));
    TP_CHECK(w.dilation[d] > 0, "[", op, "] dilation should be greater than zero");
    TP_CHECK(w.padding[d] >= 0 && w.padding[d] <= (w.dilation[d] * (w.kernel[d] - 1) + 1) / 2, "[", op,
             "] pad should be at most half of effective kernel size, but got pad=", w.padding[d],
             ", kernel_size=", w.kernel[d], " and dilation=", w.dilation[d]);
  }
  return w;
}

Shape pooled_shape(const char* op, const Tensor& x, const Window& w, bool ceil_mode) {
  Shape shape{x.size(0), x.size(1), 0, 0};
  for (int d = 0; d < 2; ++d)
    shape[2 + d] = pooled_size(x.size(2 + d), w.kernel[d], w.padding[d], w.stride[d], w.dilation[d], ceil_mode);
  TP_CHECK(shape[2] >= 1 && shape[3] >= 1, "[", op, "] Given input size: (", x.size(1), "x", x.size(2), "x", x.size(3),
           "). Calculated output size: (", x.size(1), "x", shape[2], "x", shape[3], "). Output size is too small");
  return shape;
}

class MaxPoolBackward final : public autograd::Node {
 public:
  MaxPoolBackward(const Tensor& input, const Window& w) : sizes_(input.sizes().begin(), input.sizes().end()), w_(w) {}
  std::string name() const override { return "MaxPool2DWithIndicesBackward0"; }
  TensorList apply(TensorList&& grads) override {
    autograd::Record<UnsupportedBackward> record({&grads[0]}, "max_pool2d");
    Tensor out = empty(sizes_, grads[0].dtype(), grads[0].device());
    backend(out.device()).max_pool2d_grad(out, grads[0].contiguous(), indices, w_);
    return {record.finish(out)};
  }
  Tensor indices;

 private:
  Shape sizes_;
  Window w_;
};

class AvgPoolBackward final : public autograd::Node {
 public:
  AvgPoolBackward(const Tensor& input, const Window& w, bool count_include_pad, std::optional<int64_t> divisor)
      : sizes_(input.sizes().begin(), input.sizes().end()),
        w_(w),
        count_include_pad_(count_include_pad),
        divisor_(divisor) {}
  std::string name() const override { return "AvgPool2DBackward0"; }
  TensorList apply(TensorList&& grads) override {
    autograd::Record<UnsupportedBackward> record({&grads[0]}, "avg_pool2d");
    Tensor out = empty(sizes_, grads[0].dtype(), grads[0].device());
    backend(out.device()).avg_pool2d_grad(out, grads[0].contiguous(), w_, count_include_pad_, divisor_);
    return {record.finish(out)};
  }

 private:
  Shape sizes_;
  Window w_;
  bool count_include_pad_;
  std::optional<int64_t> divisor_;
};

}  // namespace

namespace {

// The max pool and the positions of its maxima in their planes: int64 as return_indices gives them,
// or int32 where only the gradient reads them and the planes' positions fit (half the bytes to
// write, keep and read back: on the demo CNN's first pool, 5.5 MB per step).
std::pair<Tensor, Tensor> max_pool2d_positions(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                               IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                               bool int64_positions) {
  TP_CHECK(is_floating_point(input.dtype()), "[max_pool2d] expected a floating point input, got ", name(input.dtype()));
  Window w = pool_window("max_pool2d", kernel_size, stride, padding, dilation);
  Tensor indices;
  Tensor out = batched(input, "max_pool2d", [&](const Tensor& x) {
    autograd::Record<MaxPoolBackward> record({&x}, x, w);
    Shape shape = pooled_shape("max_pool2d", x, w, ceil_mode);
    Tensor y = empty(shape, x.dtype(), x.device());
    const bool int32 = !int64_positions && x.size(2) * x.size(3) <= std::numeric_limits<int32_t>::max();
    indices = empty(shape, int32 ? ScalarType::Int32 : ScalarType::Int64, x.device());
    backend(x.device()).max_pool2d(y, indices, x.contiguous(), w);
    if (record) record->indices = indices;
    return record.finish(y);
  });
  if (input.dim() == 3) indices = squeeze(indices, {0});
  return {out, indices};
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return max_pool2d_positions(input, kernel_size, stride, padding, dilation, ceil_mode, true);
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  TP_OP_ENTRY(max_pool2d, input, kernel_size, stride, padding, dilation, ceil_mode);
  return max_pool2d_positions(input, kernel_size, stride, padding, dilation, ceil_mode, false).first;
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  TP_OP_ENTRY(avg_pool2d, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  TP_CHECK(is_floating_point(input.dtype()), "[avg_pool2d] expected a floating point input, got ", name(input.dtype()));
  TP_CHECK(!divisor_override || *divisor_override != 0, "[avg_pool2d] divisor must be not zero");
  Window w = pool_window("avg_pool2d", kernel_size, stride, padding, {1});
  return batched(input, "avg_pool2d", [&](const Tensor& x) {
    autograd::Record<AvgPoolBackward> record({&x}, x, w, count_include_pad, divisor_override);
    Tensor y = empty(pooled_shape("avg_pool2d", x, w, ceil_mode), x.dtype(), x.device());
    backend(x.device()).avg_pool2d(y, x.contiguous(), w, count_include_pad, divisor_override);
    return record.finish(y);
  });
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  TP_OP_ENTRY(adaptive_avg_pool2d, input, output_size);
  auto size = pair("adaptive_avg_pool2d", "output_size", output_size);
  TP_CHECK(input.dim() == 3 || input.dim() == 4, "[adaptive_avg_pool2d] Expected 3D or 4D tensor, but got ",
           to_string(input.sizes()));
  TP_CHECK(size[0] > 0 && size[1] > 0, "[adaptive_avg_pool2d] output size must be positive, got ",
           to_string(output_size));
  const int64_t H = input.size(-2), W = input.size(-1);
  // Output cell i averages input [floor(i * in / out), ceil((i + 1) * in / out)): as matrices,
  // out = A_h @ x @ A_w^T, which is a product (fast and differentiable) rather than a loop.
  auto averaging = [&](int64_t in, int64_t out) {
    Tensor a = zeros({out, in}, input.dtype(), input.device());
    for (int64_t i = 0; i < out; ++i) {
      int64_t lo = (i * in) / out, hi = ((i + 1) * in + out - 1) / out;
      fill_(narrow(select(a, 0, i), 0, lo, hi - lo), 1.0 / static_cast<double>(hi - lo));
    }
    return a;
  };
  if (H % size[0] == 0 && W % size[1] == 0)
    return avg_pool2d(input, {H / size[0], W / size[1]}, {H / size[0], W / size[1]}, {0}, false, true, std::nullopt);
  return matmul(matmul(averaging(H, size[0]), input), transpose(averaging(W, size[1]), 0, 1));
}

}  // namespace tp

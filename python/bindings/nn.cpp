// tensorplay._C._nn: the neural-network ops with C++-shaped signatures. tensorplay.nn.functional
// gives them PyTorch's (defaults, int-or-pair arguments, 'same' padding).

#include <nanobind/stl/array.h>

#include "bindings.h"

namespace tp::python {

void init_nn(nb::module_& m) {
  nb::module_ nn = m.def_submodule("_nn", "Neural-network ops (see tensorplay.nn.functional)");
  auto g = release_gil();
  using OT = std::optional<Tensor>;
  nn.def("conv2d", &conv2d, "input"_a, "weight"_a, "bias"_a.none(), "stride"_a, "padding"_a, "dilation"_a, "groups"_a, g);
  nn.def("conv1d", &conv1d, "input"_a, "weight"_a, "bias"_a.none(), "stride"_a, "padding"_a, "dilation"_a, "groups"_a, g);
  nn.def("conv_transpose1d", &conv_transpose1d, "input"_a, "weight"_a, "bias"_a.none(), "stride"_a, "padding"_a,
         "output_padding"_a, "groups"_a, "dilation"_a, g);
  nn.def("conv_transpose2d", &conv_transpose2d, "input"_a, "weight"_a, "bias"_a.none(), "stride"_a, "padding"_a,
         "output_padding"_a, "groups"_a, "dilation"_a, g);
  nn.def("max_pool2d_with_indices", &max_pool2d_with_indices, "input"_a, "kernel_size"_a, "stride"_a, "padding"_a,
         "dilation"_a, "ceil_mode"_a, g);
  nn.def("max_pool2d", &max_pool2d, "input"_a, "kernel_size"_a, "stride"_a, "padding"_a, "dilation"_a, "ceil_mode"_a,
         g);
  nn.def("avg_pool2d", &avg_pool2d, "input"_a, "kernel_size"_a, "stride"_a, "padding"_a, "ceil_mode"_a,
         "count_include_pad"_a, "divisor_override"_a.none(), g);
  nn.def("adaptive_avg_pool2d", &adaptive_avg_pool2d, "input"_a, "output_size"_a, g);
  nn.def("linear", &linear, "input"_a, "weight"_a, "bias"_a.none() = nb::none(), g);
  nn.def("bilinear", &bilinear, "input1"_a, "input2"_a, "weight"_a, "bias"_a.none() = nb::none(), g);
  nn.def("dropout", [](const Tensor& x, double p, bool training) { return dropout(x, p, training); }, "input"_a, "p"_a,
         "training"_a, g);
  nn.def("batch_norm", &batch_norm, "input"_a, "running_mean"_a.none(), "running_var"_a.none(), "weight"_a.none(),
         "bias"_a.none(), "training"_a, "momentum"_a, "eps"_a, g);
  nn.def("layer_norm", &layer_norm, "input"_a, "normalized_shape"_a, "weight"_a.none(), "bias"_a.none(), "eps"_a, g);
  nn.def("group_norm", &group_norm, "input"_a, "num_groups"_a, "weight"_a.none(), "bias"_a.none(), "eps"_a, g);
  nn.def("embedding", &embedding, "input"_a, "weight"_a, "padding_idx"_a.none(), "sparse"_a = false, g);
  nn.def("one_hot", &one_hot, "input"_a, "num_classes"_a, g);
  nn.def("pad", &pad, "input"_a, "pad"_a, "mode"_a, "value"_a, g);
  nn.def("prelu", &prelu, "input"_a, "weight"_a, g);
  nn.def("interpolate", &interpolate, "input"_a, "size"_a, "scale_factor"_a.none(), "mode"_a, "align_corners"_a, g);
  nn.def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, const OT& mask, double p,
                                            bool causal, std::optional<double> scale) {
    return scaled_dot_product_attention(q, k, v, mask, p, causal, scale);
  }, "query"_a, "key"_a, "value"_a, "attn_mask"_a.none(), "dropout_p"_a, "is_causal"_a, "scale"_a.none(), g);
  nn.def("mse_loss", &mse_loss, "input"_a, "target"_a, "reduction"_a, g);
  nn.def("l1_loss", &l1_loss, "input"_a, "target"_a, "reduction"_a, g);
  nn.def("smooth_l1_loss", &smooth_l1_loss, "input"_a, "target"_a, "reduction"_a, "beta"_a, g);
  nn.def("huber_loss", &huber_loss, "input"_a, "target"_a, "reduction"_a, "delta"_a, g);
  nn.def("nll_loss", &nll_loss, "input"_a, "target"_a, "weight"_a.none(), "reduction"_a, "ignore_index"_a, g);
  nn.def("cross_entropy", &cross_entropy, "input"_a, "target"_a, "weight"_a.none(), "reduction"_a, "ignore_index"_a,
         "label_smoothing"_a, g);
  nn.def("binary_cross_entropy", &binary_cross_entropy, "input"_a, "target"_a, "weight"_a.none(), "reduction"_a, g);
  nn.def("binary_cross_entropy_with_logits", &binary_cross_entropy_with_logits, "input"_a, "target"_a,
         "weight"_a.none(), "pos_weight"_a.none(), "reduction"_a, g);
  nn.def("kl_div", &kl_div, "input"_a, "target"_a, "reduction"_a, "log_target"_a, g);
}

}  // namespace tp::python

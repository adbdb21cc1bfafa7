// Neural-network ops: linear layers, normalisation, dropout, embedding, padding, resizing and
// attention. All but embedding and layer_norm are composites: their gradients come from the ops
// they are written with. They are ops of their own (not Python) so that autocast can give each a
// policy.

#include <cmath>
#include <limits>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  TP_OP_ENTRY(linear, input, weight, bias);
  TP_CHECK(weight.dim() == 2, "[linear] expected a 2-D weight, got ", to_string(weight.sizes()));
  TP_CHECK(input.dim() >= 1, "[linear] expected an input with at least 1 dim");
  TP_CHECK(input.size(-1) == weight.size(1), "[linear] input of shape ", to_string(input.sizes()),
           " and weight of shape ", to_string(weight.sizes()), " cannot be multiplied (", input.size(-1), " vs ",
           weight.size(1), " features)");
  if (bias && input.dim() == 2) return addmm(*bias, input, t(weight));
  Tensor out = matmul(input, t(weight));
  return bias ? add(out, *bias) : out;
}

Tensor prelu(const Tensor& input, const Tensor& weight) {
  TP_OP_ENTRY(prelu, input, weight);
  TP_CHECK(input.dtype() == weight.dtype(), "[prelu] Type promoting not supported: input is ", name(input.dtype()),
           " and weight is ", name(weight.dtype()));
  TP_CHECK(weight.dim() <= 1, "[prelu] Expected `weight` to be a scalar or 1D tensor, but got: ndim = ", weight.dim());
  const int64_t channels = input.dim() >= 2 ? input.size(1) : 1;
  TP_CHECK(weight.numel() == 1 || weight.numel() == channels,
           "[prelu] Mismatch of parameter numbers and input channel "
           "size. Found parameter numbers = ",
           weight.numel(), " and channel size = ", channels, ".");
  // One slope per channel: shape [C, 1, 1, ...] broadcasts over dim 1 and beyond.
  Shape shape(std::max<int64_t>(input.dim() - 1, 0), 1);
  if (!shape.empty()) shape[0] = weight.numel();
  Tensor slope = weight.numel() == 1 ? reshape(weight, {}) : reshape(weight, shape);
  return where(gt(input, 0), input, mul(slope, input));
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const std::optional<Tensor>& bias) {
  TP_OP_ENTRY(bilinear, x1, x2, weight, bias);
  TP_CHECK(weight.dim() == 3, "[bilinear] expected a 3-D weight, got ", to_string(weight.sizes()));
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  TP_CHECK(x1.dim() >= 1 && x1.size(-1) == in1 && x2.dim() >= 1 && x2.size(-1) == in2, "[bilinear] input1 of shape ",
           to_string(x1.sizes()), " and input2 of shape ", to_string(x2.sizes()), " do not match weight ",
           to_string(weight.sizes()));
  // y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j]: first (x1 @ W_i)[n, o, j], then sum over j with x2.
  Tensor a = reshape(x1, {-1, in1});
  Tensor b = reshape(x2, {-1, in2});
  Tensor w = reshape(permute(weight, {1, 0, 2}), {in1, out * in2});
  Tensor y = sum(mul(reshape(mm(a, w), {-1, out, in2}), unsqueeze(b, 1)), {-1});
  if (bias) y = add(y, *bias);
  Shape shape(x1.sizes().begin(), x1.sizes().end() - 1);
  shape.push_back(out);
  return reshape(y, shape);
}

Tensor dropout(const Tensor& input, double p, bool training, Generator* gen) {
  TP_OP_ENTRY(dropout, input, p, training, gen);
  TP_CHECK_VALUE(p >= 0 && p <= 1, "[dropout] dropout probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0) return input;
  if (p == 1) return mul(input, zeros_like(input));
  // The mask is built in the input's dtype, as PyTorch builds it: kept elements scaled by
  // 1 / (1 - p) rounded to that dtype, and an integer input refused by the in-place division.
  Tensor keep = lt(
      rand(input.sizes(), is_floating_point(input.dtype()) ? input.dtype() : get_default_dtype(), input.device(), gen),
      1 - p);
  Tensor mask = to(keep, input.dtype());
  return mul(input, div_(mask, 1 - p));
}

namespace {

// The dims a batch or group norm reduces: all but the channel dim (1).
Shape all_but_channels(const Tensor& x) {
  Shape dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

// A per-channel vector [C] shaped to broadcast against [N, C, *].
Tensor per_channel(const Tensor& v, int64_t ndim) {
  Shape shape(ndim, 1);
  shape[1] = v.numel();
  return reshape(v, shape);
}

}  // namespace

namespace {

// The norms' parameters share the input's dtype, except that a 16-bit input may come with
// float32 parameters: the usual case under autocast, where a bfloat16 activation meets a norm
// whose weights stay float32. The output keeps the input's dtype (PyTorch's rule on CPU).
void check_norm_params(const char* op, const Tensor& input, std::initializer_list<const std::optional<Tensor>*> params) {
  for (const std::optional<Tensor>* p : params) {
    if (!*p || (*p)->dtype() == input.dtype()) continue;
    if (is_reduced_float(input.dtype()))
      TP_CHECK((*p)->dtype() == ScalarType::Float32, "[", op, "] mixed dtype (CPU): expect parameter to have scalar "
               "type of Float or ", name(input.dtype()), ", got ", name((*p)->dtype()));
    else
      TP_FAIL("[", op, "] mixed dtype (CPU): all inputs must share same datatype, got input of dtype ",
              name(input.dtype()), " and a parameter of dtype ", name((*p)->dtype()));
  }
}

// 16-bit inputs are normalised in float32 and rounded once at the end.
Tensor compute_input(const Tensor& input) {
  return is_reduced_float(input.dtype()) ? to(input, ScalarType::Float32) : input;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, bool training, double momentum, double eps) {
  TP_OP_ENTRY(batch_norm, input, running_mean, running_var, weight, bias, training, momentum, eps);
  TP_CHECK(input.dim() >= 2, "[batch_norm] expected an input with at least 2 dims (N, C, ...), got ",
           to_string(input.sizes()));
  const int64_t C = input.size(1);
  for (const auto* v : {&running_mean, &running_var, &weight, &bias})
    TP_CHECK(!*v || (*v)->numel() == C, "[batch_norm] running stats, weight and bias must have ", C, " elements, got ",
             to_string((*v)->sizes()));
  check_norm_params("batch_norm", input, {&running_mean, &running_var, &weight, &bias});
  Shape dims = all_but_channels(input);
  Tensor x = compute_input(input);
  Tensor mean, var;
  if (training) {
    const int64_t count = C ? input.numel() / C : 0;
    TP_CHECK_VALUE(count != 1, "[batch_norm] Expected more than 1 value per channel when training, got input size ",
                   to_string(input.sizes()));
    if (count == 0) {  // an empty batch: nothing to normalise, no statistics to update (as in PyTorch)
      mean = zeros({C}, x.dtype(), x.device());
      var = ones({C}, x.dtype(), x.device());
    } else {
      mean = tp::mean(x, dims);
      var = tp::var(x, dims, 0);  // normalise with the biased variance
    }
    if (running_mean && running_var && count > 0) {
      NoGradGuard no_grad;  // the running statistics are buffers, not part of the graph
      Tensor unbiased = mul(var.detach(), static_cast<double>(count) / static_cast<double>(count - 1));
      lerp_(*running_mean, to(mean.detach(), running_mean->dtype()), momentum);
      lerp_(*running_var, to(unbiased, running_var->dtype()), momentum);
    }
  } else {
    TP_CHECK(running_mean && running_var,
             "[batch_norm] running_mean and running_var must be defined in evaluation mode");
    mean = to(*running_mean, x.dtype());
    var = to(*running_var, x.dtype());
  }
  Tensor out = mul(sub(x, per_channel(mean, input.dim())), per_channel(rsqrt(add(var, eps)), input.dim()));
  if (weight) out = mul(out, per_channel(*weight, input.dim()));
  if (bias) out = add(out, per_channel(*bias, input.dim()));
  return to(out, input.dtype());
}

namespace {

// layer_norm's backward, written with ops so that it is differentiable itself (a gradient penalty
// takes the gradient of a gradient). The statistics are recomputed from the saved input: two row
// reductions, which keeps the forward a single kernel that saves nothing of its own.
class LayerNormBackward final : public autograd::Node {
 public:
  LayerNormBackward(Shape normalized, Shape batch, double eps)
      : normalized_(std::move(normalized)), batch_(std::move(batch)), eps_(eps) {}
  std::string name() const override { return "NativeLayerNormBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor g = compute_input(grads[0]);
    Tensor x = compute_input(input.unpack(*this));
    Tensor centered = sub(x, mean(x, normalized_, true));
    Tensor rstd = rsqrt(add(mean(mul(centered, centered), normalized_, true), eps_));
    Tensor normalized = mul(centered, rstd);
    Tensor g_normalized = has_weight ? mul(g, weight.unpack(*this)) : g;
    Tensor grad_input;
    if (needs_input_grad(0)) {  // rstd (g_hat - mean(g_hat) - x_hat mean(g_hat x_hat))
      Tensor centered_grad = sub(g_normalized, mean(g_normalized, normalized_, true));
      grad_input = mul(rstd, sub(centered_grad, mul(normalized, mean(mul(g_normalized, normalized), normalized_, true))));
    }
    // (An empty dim list would sum everything: without batch dims there is nothing to sum.)
    auto over_batch = [&](const Tensor& t) { return batch_.empty() ? t : sum(t, batch_); };
    return {grad_input, needs_input_grad(1) ? over_batch(mul(g, normalized)) : Tensor(),
            needs_input_grad(2) ? over_batch(g) : Tensor()};
  }
  void release_saved() override {
    input.release();
    weight.release();
  }
  autograd::SavedTensor input, weight;
  bool has_weight = false;

 private:
  Shape normalized_, batch_;
  double eps_;
};

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  TP_OP_ENTRY(layer_norm, input, normalized_shape, weight, bias, eps);
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool fits = k >= 1 && k <= input.dim();
  for (int64_t i = 0; fits && i < k; ++i) fits = input.size(input.dim() - k + i) == normalized_shape[i];
  TP_CHECK(fits, "[layer_norm] Given normalized_shape=", to_string(normalized_shape),
           ", expected input with shape [*, ", to_string(normalized_shape).substr(1), ", but got input of size",
           to_string(input.sizes()));
  check_norm_params("layer_norm", input, {&weight, &bias});
  if (!is_floating_point(input.dtype())) fail_unsupported_dtype("layer_norm", input.dtype());  // as PyTorch's kernel
  Shape normalized, batch;
  for (int64_t d = 0; d < input.dim(); ++d) (d < input.dim() - k ? batch : normalized).push_back(d);
  autograd::Record<LayerNormBackward> record({&input, weight ? &*weight : nullptr, bias ? &*bias : nullptr},
                                             normalized, batch, eps);
  const int64_t cols = numel(normalized_shape), rows = cols ? input.numel() / cols : 0;
  Tensor out = empty(input.sizes(), input.dtype(), input.device());
  if (out.numel() > 0) {
    // The kernel's parameters: contiguous rows in the compute dtype (float32 for 16-bit inputs).
    const ScalarType compute = is_reduced_float(input.dtype()) ? ScalarType::Float32 : input.dtype();
    auto param = [&](const std::optional<Tensor>& p) {
      return p ? reshape(to(*p, compute), {cols}).contiguous() : Tensor();
    };
    backend(input.device()).layer_norm(reshape(out, {rows, cols}), reshape(input, {rows, cols}).contiguous(),
                                       param(weight), param(bias), eps);
  }
  if (record) {
    record->input = autograd::SavedTensor(input, false);
    if (weight) record->weight = autograd::SavedTensor(*weight, false);
    record->has_weight = weight.has_value();
  }
  return record.finish(out);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  TP_OP_ENTRY(group_norm, input, num_groups, weight, bias, eps);
  TP_CHECK(input.dim() >= 2, "[group_norm] Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  TP_CHECK(num_groups > 0 && C % num_groups == 0,
           "[group_norm] Expected number of channels in input to be divisible "
           "by num_groups, but got input of shape ",
           to_string(input.sizes()), " and num_groups=", num_groups);
  check_norm_params("group_norm", input, {&weight, &bias});
  Tensor grouped = reshape(compute_input(input), {N, num_groups, -1});
  Tensor centered = sub(grouped, mean(grouped, {2}, true));
  Tensor out = reshape(mul(centered, rsqrt(add(mean(mul(centered, centered), {2}, true), eps))), input.sizes());
  if (weight) out = mul(out, per_channel(*weight, input.dim()));
  if (bias) out = add(out, per_channel(*bias, input.dim()));
  return to(out, input.dtype());
}

namespace {

// Embedding rows are picked by index; their gradients are summed back into the rows they came
// from, except the padding row, which never learns. A sparse gradient keeps one entry per lookup
// (summed when coalesced), so an optimizer can update just those rows.
class EmbeddingBackward final : public autograd::Node {
 public:
  EmbeddingBackward(const Tensor& weight, Tensor indices, std::optional<int64_t> padding_idx, bool sparse)
      : rows_(weight.size(0)),
        cols_(weight.size(1)),
        indices_(std::move(indices)),
        padding_idx_(padding_idx),
        sparse_(sparse) {}
  std::string name() const override { return "EmbeddingBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor g = reshape(grads[0], {-1, cols_});
    Tensor idx = reshape(indices_, {-1});
    if (sparse_) {
      if (padding_idx_) {
        Tensor kept = select(nonzero(ne(idx, *padding_idx_)), 1, 0);
        idx = index_select(idx, 0, kept);
        g = index_select(g, 0, kept);
      }
      return {sparse_coo_tensor_unsafe(unsqueeze(idx, 0), g, {rows_, cols_}, false)};
    }
    if (padding_idx_) g = masked_fill(g, unsqueeze(eq(idx, *padding_idx_), 1), 0.0);
    return {index_put(zeros({rows_, cols_}, g.dtype(), g.device()), {idx}, g, true)};
  }

 private:
  int64_t rows_, cols_;
  Tensor indices_;
  std::optional<int64_t> padding_idx_;
  bool sparse_;
};

}  // namespace

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx, bool sparse) {
  TP_OP_ENTRY(embedding, input, weight, padding_idx, sparse);
  TP_CHECK(weight.dim() == 2, "[embedding] 'weight' must be 2-D, got ", to_string(weight.sizes()));
  TP_CHECK(input.dtype() == ScalarType::Int64 || input.dtype() == ScalarType::Int32,
           "[embedding] Expected tensor for "
           "argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
           name(input.dtype()), " instead");
  std::optional<int64_t> pad;
  if (padding_idx) {
    TP_CHECK(*padding_idx >= -weight.size(0) && *padding_idx < weight.size(0),
             "[embedding] padding_idx must be "
             "within num_embeddings");
    pad = *padding_idx < 0 ? *padding_idx + weight.size(0) : *padding_idx;
  }
  Tensor idx = to(input, ScalarType::Int64);
  if (idx.numel() && idx.has_data()) {
    int64_t lo = amin(idx).item<int64_t>(), hi = amax(idx).item<int64_t>();
    TP_CHECK_INDEX(lo >= 0 && hi < weight.size(0), "[embedding] index out of range in self (index ", lo < 0 ? lo : hi,
                   ", num_embeddings ", weight.size(0), ")");
  }
  autograd::Record<EmbeddingBackward> record({&weight}, weight, idx, pad, sparse);
  Tensor rows = index_select(weight, 0, reshape(idx, {-1}));
  Shape shape(input.sizes().begin(), input.sizes().end());
  shape.push_back(weight.size(1));
  return record.finish(reshape(rows, shape));
}

Tensor one_hot(const Tensor& input, int64_t num_classes) {
  TP_CHECK(input.dtype() == ScalarType::Int64,
           "[one_hot] one_hot is only applicable to index tensor of type int64, "
           "got ",
           name(input.dtype()));
  if (num_classes < 0) {
    TP_CHECK(input.numel() > 0, "[one_hot] Can not infer total number of classes from empty tensor.");
    num_classes = amax(input).item<int64_t>() + 1;
  }
  if (input.numel() && input.has_data()) {
    TP_CHECK(amin(input).item<int64_t>() >= 0, "[one_hot] Class values must be non-negative.");
    TP_CHECK(amax(input).item<int64_t>() < num_classes, "[one_hot] Class values must be smaller than num_classes.");
  }
  Shape shape(input.sizes().begin(), input.sizes().end());
  shape.push_back(num_classes);
  return scatter(zeros(shape, ScalarType::Int64, input.device()), -1, unsqueeze(input, -1), 1);
}

namespace {

// Index of the element each padded position copies, for reflect and replicate padding.
Tensor source_positions(const char* mode, int64_t size, int64_t before, int64_t after, Device device) {
  Tensor pos = arange(-before, size + after, 1, ScalarType::Int64, device);
  if (std::string_view(mode) == "replicate") return clamp(pos, Scalar(0), Scalar(size - 1));
  // reflect: ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ...
  Tensor left = abs(pos);
  return rsub(abs(sub(left, size - 1)), size - 1);
}

}  // namespace

namespace {

void check_padding(const Tensor& input, IntArrayRef padding) {
  TP_CHECK(padding.size() % 2 == 0, "[pad] Padding length must be divisible by 2");
  TP_CHECK(static_cast<int64_t>(padding.size()) / 2 <= input.dim(),
           "[pad] Padding length should be less than or "
           "equal to two times the input dimension but got padding length ",
           padding.size(), " and input of dimension ", input.dim());
}

// Reflect and replicate padding gather each padded position from a source position.
Tensor gather_pad(const char* mode, const Tensor& input, IntArrayRef padding) {
  check_padding(input, padding);
  Tensor out = input;
  // padding lists the last dim first: (left, right, top, bottom, ...).
  for (size_t i = 0; i < padding.size() / 2; ++i) {
    const int64_t dim = input.dim() - 1 - static_cast<int64_t>(i), before = padding[2 * i], after = padding[2 * i + 1];
    const int64_t size = out.size(dim);
    TP_CHECK(before >= 0 && after >= 0, "[pad] negative padding is only supported in constant mode");
    if (mode == std::string_view("reflect"))
      TP_CHECK(before < size && after < size,
               "[pad] Padding size should be less than the corresponding input "
               "dimension, but got: padding (",
               before, ", ", after, ") at dimension ", dim, " of input ", to_string(input.sizes()));
    else
      TP_CHECK(size > 0, "[pad] cannot replicate-pad an empty dimension");
    out = index_select(out, dim, source_positions(mode, size, before, after, out.device()));
  }
  return out;
}

}  // namespace

Tensor constant_pad_nd(const Tensor& input, IntArrayRef padding, double value) {
  TP_OP_ENTRY(constant_pad_nd, input, padding, value);
  check_padding(input, padding);
  Tensor out = input;
  for (size_t i = 0; i < padding.size() / 2; ++i) {
    const int64_t dim = input.dim() - 1 - static_cast<int64_t>(i), before = padding[2 * i], after = padding[2 * i + 1];
    const int64_t size = out.size(dim);
    // Negative padding crops; positive padding concatenates blocks of the fill value.
    if (before < 0 || after < 0) {
      int64_t start = std::max<int64_t>(-before, 0), stop = size - std::max<int64_t>(-after, 0);
      TP_CHECK(stop >= start, "[pad] the padding crops dim ", dim, " of size ", size, " to a negative size");
      out = narrow(out, dim, start, stop - start);
    }
    TensorList parts;
    auto block = [&](int64_t n) {
      Shape shape(out.sizes().begin(), out.sizes().end());
      shape[dim] = n;
      return full(shape, value, out.dtype(), out.device());
    };
    if (before > 0) parts.push_back(block(before));
    parts.push_back(out);
    if (after > 0) parts.push_back(block(after));
    if (parts.size() > 1) out = cat(parts, dim);
  }
  return out;
}

Tensor reflection_pad(const Tensor& input, IntArrayRef padding) {
  TP_OP_ENTRY(reflection_pad, input, padding);
  return gather_pad("reflect", input, padding);
}

Tensor replication_pad(const Tensor& input, IntArrayRef padding) {
  TP_OP_ENTRY(replication_pad, input, padding);
  return gather_pad("replicate", input, padding);
}

Tensor pad(const Tensor& input, IntArrayRef padding, std::string_view mode, double value) {
  if (mode == "constant") return constant_pad_nd(input, padding, value);
  if (mode == "reflect") return reflection_pad(input, padding);
  if (mode == "replicate") return replication_pad(input, padding);
  detail::fail(ErrorKind::Value, "[pad] Unrecognised padding mode ", mode);
}

namespace {

// Source coordinates of each output position along one dim, as PyTorch computes them.
Tensor source_coords(int64_t in, int64_t out, std::optional<double> scale, bool align_corners, Device device) {
  Tensor dst = arange(0, out, 1, ScalarType::Float64, device);
  if (align_corners) return out > 1 ? mul(dst, static_cast<double>(in - 1) / (out - 1)) : zeros_like(dst);
  double ratio = scale ? 1.0 / *scale : static_cast<double>(in) / out;
  return clamp(sub(mul(add(dst, 0.5), ratio), 0.5), Scalar(0.0), std::nullopt);
}

}  // namespace

Tensor interpolate(const Tensor& input, IntArrayRef size, std::optional<std::array<double, 2>> scale_factor,
                   std::string_view mode, bool align_corners) {
  TP_OP_ENTRY(interpolate, input, size, scale_factor, mode, align_corners);
  TP_CHECK(input.dim() == 4, "[interpolate] expected a 4-D (N, C, H, W) input, got ", to_string(input.sizes()));
  TP_CHECK(size.size() == 2, "[interpolate] expected an output size of 2 values, got ", to_string(size));
  TP_CHECK_VALUE(mode == "nearest" || mode == "bilinear", "[interpolate] unsupported mode '", mode,
                 "'; supported: nearest, bilinear");
  Tensor out = input;
  for (int d = 0; d < 2; ++d) {
    const int64_t dim = 2 + d, in = input.size(dim), n = size[d];
    TP_CHECK(n > 0, "[interpolate] output size must be positive, got ", to_string(size));
    std::optional<double> scale = scale_factor ? std::optional<double>((*scale_factor)[d]) : std::nullopt;
    if (mode == "nearest") {
      double ratio = scale ? 1.0 / *scale : static_cast<double>(in) / n;
      Tensor src =
          clamp(floor(mul(arange(0, n, 1, ScalarType::Float64, input.device()), ratio)), Scalar(0), Scalar(in - 1));
      out = index_select(out, dim, to(src, ScalarType::Int64));
    } else {
      Tensor src = source_coords(in, n, scale, align_corners, input.device());
      Tensor lo = clamp(floor(src), Scalar(0), Scalar(in - 1));
      Tensor hi = clamp(add(lo, 1), Scalar(0), Scalar(in - 1));
      Tensor frac = to(sub(src, lo), out.dtype());
      Shape shape(4, 1);
      shape[dim] = n;
      Tensor a = index_select(out, dim, to(lo, ScalarType::Int64));
      Tensor b = index_select(out, dim, to(hi, ScalarType::Int64));
      out = add(a, mul(sub(b, a), reshape(frac, shape)));
    }
  }
  return out;
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, Generator* gen) {
  TP_OP_ENTRY(scaled_dot_product_attention, q, k, v, attn_mask, dropout_p, is_causal, scale, gen);
  TP_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2,
           "[scaled_dot_product_attention] expected query, key and "
           "value with at least 2 dims");
  TP_CHECK(!(is_causal && attn_mask),
           "[scaled_dot_product_attention] _scaled_dot_product_attention: Explicit "
           "attn_mask should not be set when is_causal=True");
  const int64_t L = q.size(-2), S = k.size(-2);
  double factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  Tensor scores = mul(matmul(q, transpose(k, -2, -1)), factor);
  if (is_causal) {
    Tensor future = gt(unsqueeze(arange(0, S, 1, ScalarType::Int64, q.device()), 0),
                       unsqueeze(arange(0, L, 1, ScalarType::Int64, q.device()), 1));
    scores = masked_fill(scores, future, -std::numeric_limits<double>::infinity());
  }
  if (attn_mask) {
    if (attn_mask->dtype() == ScalarType::Bool)
      scores = masked_fill(scores, logical_not(*attn_mask), -std::numeric_limits<double>::infinity());
    else
      scores = add(scores, *attn_mask);
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0) weights = dropout(weights, dropout_p, true, gen);
  return matmul(weights, v);
}

}  // namespace tp

// Loss functions, composites of other ops (nll_loss reads its targets in one kernel). `reduction`
// is "mean", "sum" or "none", as in PyTorch.

#include <cmath>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/autograd/variable.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

Tensor reduce_loss(const char* op, const Tensor& loss, std::string_view reduction) {
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum(loss);
  TP_CHECK_VALUE(reduction == "mean", "[", op, "] ", reduction, " is not a valid value for reduction");
  return mean(loss);
}

// total / count for a mean over weighted items. When every item is ignored (count 0) the loss is
// NaN, as 0/0 is in PyTorch, but its gradient is zero rather than NaN: the division is by 1 and
// the NaN is added as a constant.
Tensor weighted_mean(const Tensor& total, const Tensor& count) {
  Tensor none = eq(count, 0);
  Tensor nan_if_none = to(where(none, std::nan(""), 0.0), total.dtype());
  return add(div(total, where(none, 1.0, count)), nan_if_none);
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  TP_CHECK_VALUE(std::ranges::equal(input.sizes(), target.sizes()), "[", op, "] Using a target size (",
                 to_string(target.sizes()), ") that is different to the input size (", to_string(input.sizes()),
                 ") is likely to lead to incorrect results; the sizes must match");
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction) {
  TP_OP_ENTRY(mse_loss, input, target, reduction);
  broadcast_shapes("mse_loss", input.sizes(), target.sizes());
  Tensor d = sub(input, target);
  return reduce_loss("mse_loss", mul(d, d), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction) {
  TP_OP_ENTRY(l1_loss, input, target, reduction);
  broadcast_shapes("l1_loss", input.sizes(), target.sizes());
  return reduce_loss("l1_loss", abs(sub(input, target)), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction, double beta) {
  TP_OP_ENTRY(smooth_l1_loss, input, target, reduction, beta);
  TP_CHECK(beta >= 0, "[smooth_l1_loss] smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = abs(sub(input, target));
  Tensor loss = where(lt(d, beta), div(mul(mul(d, d), 0.5), beta), sub(d, 0.5 * beta));
  return reduce_loss("smooth_l1_loss", loss, reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, std::string_view reduction, double delta) {
  TP_OP_ENTRY(huber_loss, input, target, reduction, delta);
  TP_CHECK(delta > 0, "[huber_loss] huber_loss does not support non-positive values for delta.");
  Tensor d = abs(sub(input, target));
  Tensor loss = where(le(d, delta), mul(mul(d, d), 0.5), mul(sub(d, 0.5 * delta), delta));
  return reduce_loss("huber_loss", loss, reduction);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                std::string_view reduction, int64_t ignore_index) {
  TP_OP_ENTRY(nll_loss, input, target, weight, reduction, ignore_index);
  // input: [N, C] or [N, C, d1, ...] (or [C] unbatched); target: the class of each item.
  TP_CHECK(input.dim() >= 1, "[nll_loss] input tensor should be 1D or more");
  TP_CHECK(
      target.dtype() == ScalarType::Int64 || target.dtype() == ScalarType::Int32 || target.dtype() == ScalarType::UInt8,
      "[nll_loss] expected target of dtype int64, got ", name(target.dtype()));
  const bool unbatched = input.dim() == 1;
  Tensor x = unbatched ? unsqueeze(input, 0) : input;
  Tensor y = to(unbatched ? unsqueeze(target, 0) : target, ScalarType::Int64);
  const int64_t C = x.size(1);
  Shape expected(x.sizes().begin(), x.sizes().end());
  expected.erase(expected.begin() + 1);
  TP_CHECK_VALUE(std::ranges::equal(y.sizes(), expected), "[nll_loss] Expected target of shape ", to_string(expected),
                 " for input of shape ", to_string(input.sizes()), ", got target of shape ", to_string(target.sizes()));
  TP_CHECK(!weight || weight->dtype() == input.dtype(), "[nll_loss] expected weight of dtype ", name(input.dtype()),
           " (the input's), got ", name(weight->dtype()));
  TP_CHECK(!weight || weight->numel() == C, "[nll_loss] weight tensor should be defined either for all ", C,
           " classes or no classes but got weight tensor of shape: ", to_string(weight->sizes()));
  TP_CHECK(!weight || !is_grad_enabled() || !autograd::requires_grad(*weight),
           "[nll_loss] The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. "
           "This input cannot have requires_grad True.");
  // Each item's class (0 where ignored) and weight (0 where ignored), in one pass over the targets.
  Tensor safe = empty(y.sizes(), ScalarType::Int64, x.device()), w = empty(y.sizes(), x.dtype(), x.device());
  backend(x.device()).nll_targets(safe, w, y.contiguous(), weight ? weight->contiguous() : Tensor(), C,
                                  ignore_index);
  Tensor picked = squeeze(gather(x, 1, unsqueeze(safe, 1)), {1});
  Tensor loss = neg(mul(picked, w));
  if (reduction == "none") return unbatched ? squeeze(loss, {0}) : loss;
  if (reduction == "sum") return sum(loss);
  TP_CHECK_VALUE(reduction == "mean", "[nll_loss] ", reduction, " is not a valid value for reduction");
  return weighted_mean(sum(loss), sum(w));
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                     std::string_view reduction, int64_t ignore_index, double label_smoothing) {
  TP_OP_ENTRY(cross_entropy, input, target, weight, reduction, ignore_index, label_smoothing);
  TP_CHECK(label_smoothing >= 0 && label_smoothing <= 1,
           "[cross_entropy] label_smoothing must be between 0.0 and "
           "1.0. Got: ",
           label_smoothing);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  Tensor logp = log_softmax(input, class_dim);
  // A weight broadcast against [N, C, ...].
  auto class_weight = [&]() {
    Shape shape(input.dim(), 1);
    shape[class_dim] = C;
    return reshape(*weight, shape);
  };
  if (is_floating_point(target.dtype())) {
    // Class probabilities: -sum_c w_c t_c log p_c per item, averaged over items.
    check_same_shape("cross_entropy", input, target);
    Tensor t = label_smoothing > 0 ? add(mul(target, 1 - label_smoothing), label_smoothing / C) : target;
    Tensor terms = mul(logp, t);
    if (weight) terms = mul(terms, class_weight());
    Tensor loss = neg(sum(terms, {class_dim}));
    if (reduction == "mean") return div(sum(loss), static_cast<double>(input.numel() / std::max<int64_t>(C, 1)));
    return reduce_loss("cross_entropy", loss, reduction);
  }
  Tensor nll = nll_loss(logp, target, weight, reduction, ignore_index);
  if (label_smoothing == 0) return nll;
  // Label smoothing mixes in the loss against the uniform distribution over classes.
  Tensor ignored = eq(target, ignore_index);
  Tensor smooth = neg(sum(weight ? mul(logp, class_weight()) : logp, {class_dim}));
  smooth = masked_fill(smooth, ignored, 0.0);
  Tensor ret;
  if (reduction == "none") {
    ret = smooth;
  } else if (reduction == "sum") {
    ret = sum(smooth);
  } else {
    Tensor kept = logical_not(ignored);
    Tensor denominator = weight ? sum(index_select(*weight, 0, reshape(tp::index(target, {kept}), {-1})))
                                : to(sum(kept), smooth.dtype());
    ret = weighted_mean(sum(smooth), denominator);
  }
  return add(mul(nll, 1 - label_smoothing), mul(ret, label_smoothing / C));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                            std::string_view reduction) {
  TP_OP_ENTRY(binary_cross_entropy, input, target, weight, reduction);
  check_same_shape("binary_cross_entropy", input, target);
  TP_CHECK(target.dtype() == input.dtype() && (!weight || weight->dtype() == input.dtype()),
           "[binary_cross_entropy] expected target and weight of dtype ", name(input.dtype()), " (the input's), got ",
           name(target.dtype()), weight ? " and " + std::string(name(weight->dtype())) : std::string());
  if (input.numel() && input.has_data()) {
    TP_CHECK(amin(input).item<double>() >= 0 && amax(input).item<double>() <= 1,
             "[binary_cross_entropy] all elements "
             "of input should be between 0 and 1");
  }
  // PyTorch clamps the logs at -100 so that a saturated prediction gives a finite loss.
  Tensor log_p = clamp(log(input), Scalar(-100.0), std::nullopt);
  Tensor log_q = clamp(log(rsub(input, 1)), Scalar(-100.0), std::nullopt);
  Tensor loss = neg(add(mul(target, log_p), mul(rsub(target, 1), log_q)));
  if (weight) loss = mul(loss, *weight);
  return reduce_loss("binary_cross_entropy", loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, std::string_view reduction) {
  TP_OP_ENTRY(binary_cross_entropy_with_logits, input, target, weight, pos_weight, reduction);
  check_same_shape("binary_cross_entropy_with_logits", input, target);
  // log(1 + exp(-x)) written so that it cannot overflow: max(-x, 0) + log1p(exp(-|x|)).
  Tensor softplus_neg = add(clamp(neg(input), Scalar(0.0), std::nullopt), log1p(exp(neg(abs(input)))));
  Tensor loss;
  if (pos_weight) {
    Tensor log_weight = add(mul(sub(*pos_weight, 1), target), 1);
    loss = add(mul(rsub(target, 1), input), mul(log_weight, softplus_neg));
  } else {
    loss = add(mul(rsub(target, 1), input), softplus_neg);
  }
  if (weight) loss = mul(loss, *weight);
  return reduce_loss("binary_cross_entropy_with_logits", loss, reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction, bool log_target) {
  TP_OP_ENTRY(kl_div, input, target, reduction, log_target);
  Tensor loss;
  if (log_target) {
    loss = mul(exp(target), sub(target, input));
  } else {
    // target * (log(target) - input), with 0 where target is 0 (xlogy).
    Tensor xlogy = where(eq(target, 0), 0.0, mul(target, log(target)));
    loss = sub(xlogy, mul(target, input));
  }
  if (reduction == "batchmean")
    return input.dim() == 0 ? sum(loss) : div(sum(loss), static_cast<double>(input.size(0)));
  return reduce_loss("kl_div", loss, reduction);
}

}  // namespace tp

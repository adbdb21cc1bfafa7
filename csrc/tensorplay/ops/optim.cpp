// Optimizer update rules (torch.optim's, step for step), written with in-place ops; SGD's momentum
// step runs as one fused pass where its tensors allow (sgd_momentum_step in dispatch/backend.h).

#include "tensorplay/ops/optim.h"

#include <algorithm>
#include <cmath>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp::optim {

namespace {

// The gradient an update follows: negated to maximise, with L2 weight decay folded in.
Tensor effective_grad(const Tensor& param, const Tensor& grad, bool maximize, double weight_decay) {
  Tensor g = maximize ? neg(grad) : grad;
  return weight_decay != 0 ? add(g, param, weight_decay) : g;
}

void check_lists(const char* op, const TensorList& params, const TensorList& grads) {
  TP_CHECK(params.size() == grads.size(), "[", op, "] got ", params.size(), " parameters and ", grads.size(),
           " gradients");
}

// Whether one parameter's momentum step can run as the backend's single pass: a buffer from an
// earlier step, and parameter, gradient and buffer dense in one dtype that pass handles.
bool fusable(const Tensor& param, const Tensor& grad, const Tensor& buf) {
  const ScalarType dtype = param.dtype();
  return buf.defined() && (dtype == ScalarType::Float32 || dtype == ScalarType::Float64) &&
         grad.dtype() == dtype && buf.dtype() == dtype && param.device() == grad.device() &&
         param.device() == buf.device() && param.is_contiguous() && grad.is_contiguous() && buf.is_contiguous() &&
         std::ranges::equal(param.sizes(), grad.sizes()) && std::ranges::equal(param.sizes(), buf.sizes());
}

}  // namespace

void sgd_step(const TensorList& params, const TensorList& grads, TensorList& momentum_buffers, const SGDStepOptions& o) {
  check_lists("sgd", params, grads);
  NoGradGuard no_grad;
  momentum_buffers.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (o.momentum != 0 && fusable(params[i], grads[i], momentum_buffers[i])) {
      backend(params[i].device())
          .sgd_momentum_step(params[i], grads[i], momentum_buffers[i], o.lr, o.momentum, o.dampening, o.weight_decay,
                             o.nesterov, o.maximize);
      params[i].bump_version();
      momentum_buffers[i].bump_version();
      continue;
    }
    Tensor d = effective_grad(params[i], grads[i], o.maximize, o.weight_decay);
    if (o.momentum != 0) {
      Tensor& buf = momentum_buffers[i];
      if (!buf.defined()) {
        buf = clone(d);
      } else {
        mul_(buf, o.momentum);
        add_(buf, d, 1 - o.dampening);
      }
      d = o.nesterov ? add(d, buf, o.momentum) : buf;
    }
    add_(params[i], d, -o.lr);
  }
}

void adam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
               TensorList& max_exp_avg_sqs, const std::vector<int64_t>& steps, const AdamStepOptions& o) {
  check_lists("adam", params, grads);
  NoGradGuard no_grad;
  for (TensorList* state : {&exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs}) state->resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    Tensor g = effective_grad(p, grads[i], o.maximize, o.decoupled_weight_decay ? 0 : o.weight_decay);
    if (o.decoupled_weight_decay && o.weight_decay != 0) mul_(p, 1 - o.lr * o.weight_decay);
    if (!exp_avgs[i].defined()) exp_avgs[i] = zeros_like(p);
    if (!exp_avg_sqs[i].defined()) exp_avg_sqs[i] = zeros_like(p);
    lerp_(exp_avgs[i], g, 1 - o.beta1);
    mul_(exp_avg_sqs[i], o.beta2);
    addcmul_(exp_avg_sqs[i], g, g, 1 - o.beta2);
    const double step = static_cast<double>(steps[i]);
    const double bias_correction1 = 1 - std::pow(o.beta1, step);
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(o.beta2, step));
    Tensor second = exp_avg_sqs[i];
    if (o.amsgrad) {
      if (!max_exp_avg_sqs[i].defined()) max_exp_avg_sqs[i] = zeros_like(p);
      copy_(max_exp_avg_sqs[i], maximum(max_exp_avg_sqs[i], exp_avg_sqs[i]));
      second = max_exp_avg_sqs[i];
    }
    Tensor denom = add(div(sqrt(second), bias_correction2_sqrt), o.eps);
    addcdiv_(p, exp_avgs[i], denom, -o.lr / bias_correction1);
  }
}

void rmsprop_step(const TensorList& params, const TensorList& grads, TensorList& square_avgs, TensorList& grad_avgs,
                  TensorList& momentum_buffers, const RMSpropStepOptions& o) {
  check_lists("rmsprop", params, grads);
  NoGradGuard no_grad;
  for (TensorList* state : {&square_avgs, &grad_avgs, &momentum_buffers}) state->resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    Tensor g = effective_grad(p, grads[i], o.maximize, o.weight_decay);
    if (!square_avgs[i].defined()) square_avgs[i] = zeros_like(p);
    mul_(square_avgs[i], o.alpha);
    addcmul_(square_avgs[i], g, g, 1 - o.alpha);
    Tensor avg;
    if (o.centered) {
      if (!grad_avgs[i].defined()) grad_avgs[i] = zeros_like(p);
      lerp_(grad_avgs[i], g, 1 - o.alpha);
      avg = sqrt(addcmul(square_avgs[i], grad_avgs[i], grad_avgs[i], -1));
    } else {
      avg = sqrt(square_avgs[i]);
    }
    avg = add(avg, o.eps);
    if (o.momentum > 0) {
      if (!momentum_buffers[i].defined()) momentum_buffers[i] = zeros_like(p);
      mul_(momentum_buffers[i], o.momentum);
      addcdiv_(momentum_buffers[i], g, avg);
      add_(p, momentum_buffers[i], -o.lr);
    } else {
      addcdiv_(p, g, avg, -o.lr);
    }
  }
}

void adagrad_step(const TensorList& params, const TensorList& grads, TensorList& state_sums,
                  const std::vector<int64_t>& steps, const AdagradStepOptions& o) {
  check_lists("adagrad", params, grads);
  NoGradGuard no_grad;
  state_sums.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    Tensor g = effective_grad(p, grads[i], o.maximize, o.weight_decay);
    const double clr = o.lr / (1 + static_cast<double>(steps[i] - 1) * o.lr_decay);
    if (!state_sums[i].defined()) state_sums[i] = zeros_like(p);
    addcmul_(state_sums[i], g, g, 1);
    addcdiv_(p, g, add(sqrt(state_sums[i]), o.eps), -clr);
  }
}

}  // namespace tp::optim

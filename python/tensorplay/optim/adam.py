"""Adam and AdamW (amsgrad, maximize, weight decay coupled or decoupled)."""

from tensorplay._C import _optim
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim.optimizer import Optimizer


class Adam(Optimizer):
    _sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads = self._params_with_grads(group)
            steps = self._advance_steps(params)
            beta1, beta2 = group["betas"]
            # Groups saved before they carried the flag fall back to this optimizer's default.
            decoupled = group.get("decoupled_weight_decay", self.defaults["decoupled_weight_decay"])
            m1, m2, m2max = _optim.adam(params, grads, self._state_list(params, "exp_avg"),
                                        self._state_list(params, "exp_avg_sq"),
                                        self._state_list(params, "max_exp_avg_sq"), steps, group["lr"], beta1, beta2,
                                        group["eps"], group["weight_decay"], group["amsgrad"], group["maximize"],
                                        decoupled)
            self._store(params, "exp_avg", m1)
            self._store(params, "exp_avg_sq", m2)
            if group["amsgrad"]:
                self._store(params, "max_exp_avg_sq", m2max)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (applied to the parameter, not added to the gradient)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

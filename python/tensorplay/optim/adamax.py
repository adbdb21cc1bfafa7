"""Adamax: Adam with the infinity norm of past gradients in place of the second moment."""

from tensorplay import _C
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim import _python_steps as ps
from tensorplay.optim.optimizer import Optimizer


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        ps.check_lr(lr)
        ps.check_non_negative("epsilon", eps)
        ps.check_betas(betas)
        ps.check_non_negative("weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @staticmethod
    def _init_state(p, state):
        state["step"] = ps.scalar_state(0.0)
        state["exp_avg"] = _C.zeros_like(p)
        state["exp_inf"] = _C.zeros_like(p)

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = ps.scalar_lr(group["lr"]), group["eps"]
            for param, grad, state in ps.params_and_grads(self, group, self._init_state):
                step = self._advance_steps([param])[0]
                grad = ps.effective_grad(param, grad, group["maximize"], group["weight_decay"])
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_inf.mul_(beta2)
                exp_inf.copy_(_C.maximum(exp_inf, grad.abs().add_(eps)))
                param.addcdiv_(exp_avg, exp_inf, value=-lr / (1 - beta1 ** step))
        return loss

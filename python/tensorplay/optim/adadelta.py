"""Adadelta: step sizes from running averages of squared gradients and squared updates."""

from tensorplay import _C
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim import _python_steps as ps
from tensorplay.optim.optimizer import Optimizer


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        ps.check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        ps.check_non_negative("epsilon", eps)
        ps.check_non_negative("weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    @staticmethod
    def _init_state(p, state):
        state["step"] = ps.scalar_state(0.0)
        state["square_avg"] = _C.zeros_like(p)
        state["acc_delta"] = _C.zeros_like(p)

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps = ps.scalar_lr(group["lr"]), group["rho"], group["eps"]
            for param, grad, state in ps.params_and_grads(self, group, self._init_state):
                self._advance_steps([param])
                grad = ps.effective_grad(param, grad, group["maximize"], group["weight_decay"])
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                param.add_(delta, alpha=-lr)
        return loss

"""NAdam: Adam with Nesterov momentum and a momentum schedule (momentum_decay)."""

from tensorplay import _C
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim import _python_steps as ps
from tensorplay.optim.optimizer import Optimizer


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        ps.check_lr(lr)
        ps.check_non_negative("epsilon", eps)
        ps.check_betas(betas)
        ps.check_non_negative("weight_decay", weight_decay)
        ps.check_non_negative("momentum_decay", momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    @staticmethod
    def _init_state(p, state):
        state["step"] = ps.scalar_state(0.0)
        state["mu_product"] = ps.scalar_state(1.0)
        state["exp_avg"] = _C.zeros_like(p)
        state["exp_avg_sq"] = _C.zeros_like(p)

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = ps.scalar_lr(group["lr"]), group["eps"]
            psi = group["momentum_decay"]
            for param, grad, state in ps.params_and_grads(self, group, self._init_state):
                step = self._advance_steps([param])[0]
                grad = ps.decayed_grad(param, grad, group, lr)
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
                # mu_product is a float32 tensor: its rounding is part of the update, as in torch.
                mu_product = state["mu_product"]
                mu_product.mul_(mu)
                mu_product = mu_product.item()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(1 - beta2 ** step).sqrt().add_(eps)
                param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))
        return loss

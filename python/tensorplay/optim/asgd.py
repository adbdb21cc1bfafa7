"""ASGD: averaged stochastic gradient descent (the running average is kept in state['ax'])."""

from tensorplay import _C
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim import _python_steps as ps
from tensorplay.optim.optimizer import Optimizer


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        ps.check_lr(lr)
        ps.check_non_negative("weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = ps.scalar_lr(group["lr"]), group["lambd"], group["alpha"], group["t0"]

            def init(p, state):
                state["step"] = ps.scalar_state(0.0)
                state["eta"] = ps.scalar_state(lr)
                state["mu"] = ps.scalar_state(1.0)
                state["ax"] = _C.zeros_like(p)

            for param, grad, state in ps.params_and_grads(self, group, init):
                step = self._advance_steps([param])[0]
                grad = ps.effective_grad(param, grad, group["maximize"], group["weight_decay"])
                # eta and mu are float32 tensors, so their values are rounded to float32 as in torch.
                eta = state["eta"].item()
                param.mul_(1 - lambd * eta)
                param.add_(grad, alpha=-eta)
                ax, mu = state["ax"], state["mu"]
                if mu.item() != 1:
                    ax.add_(param.sub(ax).mul_(mu))
                else:
                    ax.copy_(param)
                state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
                mu.fill_(1 / max(1, step - t0))
        return loss

"""Rprop: per-element step sizes grown or shrunk by the sign agreement of successive gradients."""

from tensorplay import _C
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim import _python_steps as ps
from tensorplay.optim.optimizer import Optimizer


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        ps.check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            lr = ps.scalar_lr(group["lr"])

            def init(p, state):
                state["step"] = ps.scalar_state(0.0)
                state["prev"] = _C.zeros_like(p)
                state["step_size"] = _C.full_like(p, lr)

            for param, grad, state in ps.params_and_grads(self, group, init):
                self._advance_steps([param])
                if group["maximize"]:
                    grad = grad.neg()
                prev, step_size = state["prev"], state["step_size"]
                agreement = grad.mul(prev).sign()
                factor = _C.where(agreement.gt(0), _C.full_like(agreement, etaplus),
                                  _C.where(agreement.lt(0), _C.full_like(agreement, etaminus),
                                           _C.ones_like(agreement)))
                step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                # Where the gradient changed sign, this step leaves the element alone and forgets it.
                grad = _C.where(agreement.lt(0), _C.zeros_like(grad), grad)
                param.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss

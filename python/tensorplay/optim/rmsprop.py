"""RMSprop (centered, momentum, weight decay, maximize)."""

from tensorplay._C import _optim
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim.optimizer import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads = self._params_with_grads(group)
            self._advance_steps(params)
            sq, ga, mb = _optim.rmsprop(params, grads, self._state_list(params, "square_avg"),
                                        self._state_list(params, "grad_avg"),
                                        self._state_list(params, "momentum_buffer"), group["lr"], group["alpha"],
                                        group["eps"], group["weight_decay"], group["momentum"], group["centered"],
                                        group["maximize"])
            self._store(params, "square_avg", sq)
            if group["centered"]:
                self._store(params, "grad_avg", ga)
            if group["momentum"] > 0:
                self._store(params, "momentum_buffer", mb)
        return loss

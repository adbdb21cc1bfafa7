"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize, for dense gradients
(one fused step per group) and sparse ones (an embedding's: the rows they touch)."""

from tensorplay._C import _optim
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim.optimizer import Optimizer, required


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads = self._params_with_grads(group, self._sparse_step)
            buffers = _optim.sgd(params, grads, self._state_list(params, "momentum_buffer"), group["lr"],
                                 group["momentum"], group["dampening"], group["weight_decay"], group["nesterov"],
                                 group["maximize"])
            if group["momentum"] != 0:
                self._store(params, "momentum_buffer", buffers)
        return loss

    def _sparse_step(self, param, grad, group):
        """The step for a sparse gradient. Its momentum buffer is dense (PyTorch's is a sparse tensor
        that gathers every row ever touched): the same numbers, in memory that does not grow."""
        if group["weight_decay"] != 0:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        if group["maximize"]:
            grad = -grad
        lr, momentum = group["lr"], group["momentum"]
        if momentum == 0:
            param.add_(grad, alpha=-lr)  # only the rows the gradient touches
            return
        buf = self.state[param].get("momentum_buffer")
        if buf is None:
            buf = grad.to_dense()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
        self.state[param]["momentum_buffer"] = buf
        param.add_(grad.to_dense().add_(buf, alpha=momentum) if group["nesterov"] else buf, alpha=-lr)

"""SparseAdam: Adam for sparse gradients (an embedding's with sparse=True). Only the rows a
gradient touches move: their moments and values are updated, the others stay as they are, which is
what makes it cheap for large embeddings and where it differs from Adam."""

import math

from tensorplay._C import Tensor
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim.optimizer import Optimizer


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas[:2]):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            if any(p.grad is not None and not p.grad.is_sparse for p in group["params"]):
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, p.grad.coalesce(), group)
        return loss

    def _update(self, param, grad, group):
        state = self.state[param]
        if not state:
            state["step"] = 0
            state["exp_avg"] = param.new_zeros(param.shape)
            state["exp_avg_sq"] = param.new_zeros(param.shape)
        state["step"] += 1
        g = grad._values()
        if g.numel() == 0:
            return
        if group["maximize"]:
            g = -g
        rows = tuple(grad._indices())  # unique, as the gradient is coalesced
        beta1, beta2 = group["betas"]
        # Each moment moves a fraction (1 - beta) of the way to its new value, at these rows only.
        exp_avg = state["exp_avg"][rows].lerp_(g, 1 - beta1)
        exp_avg_sq = state["exp_avg_sq"][rows].lerp_(g * g, 1 - beta2)
        state["exp_avg"].index_put_(rows, exp_avg)
        state["exp_avg_sq"].index_put_(rows, exp_avg_sq)
        step = state["step"]
        step_size = group["lr"] * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param.index_put_(rows, exp_avg / (exp_avg_sq.sqrt() + group["eps"]) * -step_size, accumulate=True)

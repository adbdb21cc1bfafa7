"""Adagrad (learning-rate decay, weight decay, initial accumulator, maximize), for dense gradients
(one fused step per group) and sparse ones (an embedding's: the rows they touch)."""

from tensorplay import _C
from tensorplay._C import _optim
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim.optimizer import Optimizer


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay), ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value), ("epsilon value", eps)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        # The accumulators start at initial_accumulator_value when the optimizer is made.
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = _C.zeros((), dtype=_C.float32)
                self.state[p]["sum"] = _C.full_like(p, group["initial_accumulator_value"])

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads = self._params_with_grads(group, self._sparse_step)
            steps = self._advance_steps(params)
            sums = _optim.adagrad(params, grads, self._state_list(params, "sum"), steps, group["lr"],
                                  group["lr_decay"], group["weight_decay"], group["eps"], group["maximize"])
            self._store(params, "sum", sums)
        return loss

    def _sparse_step(self, param, grad, group):
        """The step for a sparse gradient: the rows it touches (unique, as it is coalesced) add its
        square to their sums and move by it over their square roots."""
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        grad = grad.coalesce()
        state = self.state[param]
        state["step"] += 1
        g = -grad._values() if group["maximize"] else grad._values()
        rows = tuple(grad._indices())
        total = state["sum"][rows] + g * g
        state["sum"].index_put_(rows, total)
        lr = group["lr"] / (1 + (state["step"].item() - 1) * group["lr_decay"])
        param.index_put_(rows, g / (total.sqrt() + group["eps"]) * -lr, accumulate=True)

"""Adafactor: Adam-like steps whose second moment of a matrix is kept factored, as row and column
means of the squared gradient, with a relative step size and update clipping."""

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._dtypes import finfo
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.optim import _python_steps as ps
from tensorplay.optim.optimizer import Optimizer


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    @staticmethod
    def _init_state(p, state):
        state["step"] = ps.scalar_state(0.0)
        grad = p.grad
        if grad.dim() > 1:
            # Row means keep the last axis as 1, column means the second to last.
            row_shape, col_shape = list(grad.shape), list(grad.shape)
            row_shape[-1] = 1
            col_shape[-2] = 1
            state["row_var"] = grad.new_zeros(row_shape)
            state["col_var"] = grad.new_zeros(col_shape)
        else:
            state["variance"] = _C.zeros_like(grad)

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, d, weight_decay = ps.scalar_lr(group["lr"]), group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for param, grad, state in ps.params_and_grads(self, group, self._init_state):
                if group["maximize"]:
                    grad = grad.neg()
                if eps1 is None:
                    eps1 = finfo(param.dtype).eps
                step = self._advance_steps([param])[0]
                one_minus_beta2_t = step ** group["beta2_decay"]
                rho_t = min(lr, 1 / (step ** 0.5))
                # The step is relative to the parameter's RMS (at least eps2).
                alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
                if weight_decay != 0:
                    param.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2_t)
                    col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2_t)
                    # Rank-1 reconstruction of the second moment from its row and column means.
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    variance.lerp_(grad * grad, one_minus_beta2_t)
                    var_estimate = variance.clone()
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                param.add_(update, alpha=-alpha / denom)
        return loss

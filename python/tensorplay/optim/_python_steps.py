"""Shared pieces of the optimizers whose steps are written in Python with in-place tensor ops
(Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD)."""

from tensorplay import _C


def check_lr(lr):
    if isinstance(lr, _C.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_betas(betas):
    for i, beta in enumerate(betas[:2]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_non_negative(name, value):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def scalar_lr(lr):
    return float(lr.item()) if isinstance(lr, _C.Tensor) else lr


def scalar_state(value):
    """A 0-dim float32 tensor, as torch keeps step counters and other per-parameter scalars."""
    out = _C.zeros((), dtype=_C.float32)
    out.fill_(value)
    return out


def params_and_grads(optimizer, group, init):
    """The group's parameters that have gradients, each with its state dict; `init(p, state)`
    fills a parameter's state the first time it is updated."""
    out = []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = optimizer.state[p]
        if len(state) == 0:
            init(p, state)
        out.append((p, p.grad, state))
    return out


def effective_grad(param, grad, maximize, weight_decay):
    if maximize:
        grad = grad.neg()
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    return grad


def decayed_grad(param, grad, group, lr):
    """The gradient with weight decay applied: decoupled (AdamW's way, shrinking the parameter)
    where the group asks for it, else added to the gradient (NAdam, RAdam)."""
    wd = group["weight_decay"]
    if wd != 0 and group["decoupled_weight_decay"]:
        param.mul_(1 - lr * wd)
        return effective_grad(param, grad, group["maximize"], 0)
    return effective_grad(param, grad, group["maximize"], wd)

"""Stochastic Weight Averaging and Exponential Moving Average, as in torch.optim.swa_utils.

AveragedModel keeps a copy of a model whose parameters (and, with use_buffers, buffers) are a
running average of the model's; SWALR anneals the learning rate to a fixed SWA value; update_bn
recomputes BatchNorm statistics for the averaged weights with one pass over the data.

The averages follow torch's arithmetic: on the CPU the default SWA update is
``avg + (new - avg) / (n + 1)`` per tensor, so the averages equal torch's bit for bit; the
``*_multi_avg_fn`` functions use ``lerp_`` where torch uses ``_foreach_lerp_``.
"""

import itertools
import math
from copy import deepcopy

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._tensor import tensor
from tensorplay.autograd.grad_mode import no_grad
from tensorplay.nn.modules.module import Module
from tensorplay.nn.modules.normalization import _BatchNorm
from tensorplay.optim.lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

# Device types on which torch's default SWA update goes through the multi-tensor (foreach) path.
_FOREACH_DEVICE_TYPES = ("cuda",)

_INTEGER_ADDCDIV_ERROR = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes."
)


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update over lists of tensors: ema = decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            # lerp is for floating types only; integers take the weighted sum, truncated by copy_.
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place equal-weight average over lists of tensors, given how many models are already in it."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point():
            weight = 1 / (num_averaged + 1)
            if isinstance(weight, Tensor):
                weight = weight.item()
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
            return
        # torch's integer path fails in addcdiv_ (tensor count) or in add_ with a float alpha (int
        # count); the same errors keep a program that relies on it from diverging silently.
        if isinstance(num_averaged, Tensor):
            raise RuntimeError(_INTEGER_ADDCDIV_ERROR)
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An EMA update of one tensor, returned rather than applied: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """An equal-weight average of one tensor, returned rather than applied."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged, current):
    """Pairs of lists keyed by (device, dtype) of the averaged tensors, in order of first appearance."""
    groups = {}
    for p_avg, p_model in zip(averaged, current):
        pair = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
        pair[0].append(p_avg)
        pair[1].append(p_model)
    return groups


class AveragedModel(Module):
    """A deep copy of `model` (moved to `device` if given) whose parameters are a running average
    of `model`'s, updated by update_parameters(). The average is equal-weight (SWA) unless `avg_fn`
    (one tensor at a time, returning the new average) or `multi_avg_fn` (lists of tensors, updated
    in place) is given. With `use_buffers`, buffers are averaged too; otherwise they are copied from
    `model` on every update. The first update copies `model`'s values; `n_averaged` counts updates.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_C.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params, model_params = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(self_params, model_params):
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model)
            if first:
                p_avg.detach().copy_(p_model)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for (device, _), (avg_list, cur_list) in _group_by_device_and_dtype(averaged, current).items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_list, cur_list, n_averaged)
                    elif device.type in _FOREACH_DEVICE_TYPES:
                        get_swa_multi_avg_fn()(avg_list, cur_list, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_avg, p_model in zip(avg_list, cur_list, strict=True):
                            p_avg.copy_(avg_fn(p_avg, p_model, n_averaged))
            else:
                for p_avg, p_model in zip(averaged, current, strict=True):
                    p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged.to(p_avg.device)))

        if not self.use_buffers:
            # Buffers are not averaged, so they follow the source model.
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recomputes the running statistics of every BatchNorm in `model` with one pass over `loader`
    (batches are tensors, or lists/tuples whose first element is the input). The statistics are reset
    and accumulated as a cumulative average (momentum None); momenta and training mode are restored."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return

    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its current value to `swa_lr` (one value, or one per
    group) over `anneal_epochs` steps, by cosine ("cos") or linear ("linear") interpolation, then
    holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # The current lr is the previous step's interpolation; recover the lr the annealing started
        # from, then interpolate one step further. This keeps the schedule chainable with others.
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Every attribute except the optimizer and the annealing function (rebuilt on load)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

"""GradScaler: loss scaling for float16 training.

float16 gradients underflow to zero when they are small. The scaler multiplies the loss by a
large factor before backward, so gradients are scaled up too, then divides them back before the
optimizer steps. If any gradient came out inf or NaN, the step is skipped and the scale shrinks;
after ``growth_interval`` clean steps in a row it grows again.

    scaler = tensorplay.amp.GradScaler("cpu")
    for input, target in data:
        optimizer.zero_grad()
        with tensorplay.autocast("cpu", dtype=tensorplay.float16):
            loss = loss_fn(model(input), target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)   # unscales; skips the step on inf/NaN
        scaler.update()

The unscale-and-check and the scale update are two fused C++ ops
(``tensorplay._amp_foreach_non_finite_check_and_unscale_`` and ``tensorplay._amp_update_scale_``).
"""

import warnings
from collections import defaultdict
from enum import Enum

from tensorplay import _C

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales the loss, unscales gradients, skips steps with inf/NaN gradients and adapts the scale.

    Args:
        device (str): where the scale lives, "cuda" (PyTorch's default) or "cpu".
        init_scale (float): the first scale. Default: 2.**16.
        growth_factor (float): the scale's factor after ``growth_interval`` clean steps (> 1).
        backoff_factor (float): the scale's factor after a step with inf/NaN gradients (< 1).
        growth_interval (int): clean steps in a row before the scale grows.
        enabled (bool): when False every method is a no-op (``step`` just steps).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if not isinstance(device, str):
            raise TypeError(f"GradScaler: expected device to be a str, got {type(device).__name__}")
        _C.device(device)  # a malformed device string raises here
        self._device = device.split(":")[0]
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            from tensorplay import cuda

            if not cuda.is_available():
                warnings.warn("tensorplay.amp.GradScaler is enabled, but CUDA is not available. Disabling.",
                              stacklevel=2)
                self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError(f"GradScaler: the growth factor must be > 1.0, got {growth_factor}")
            if not backoff_factor < 1.0:
                raise ValueError(f"GradScaler: the backoff factor must be < 1.0, got {backoff_factor}")
            self._init_scale = init_scale
            self._scale = None  # a float32 tensor on the device, made by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None  # int32: clean steps since the scale last changed
            self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _check_scale_initialized(self, funcname):
        if self._scale is None:
            raise RuntimeError(f"GradScaler.{funcname}() was called before scale(); scale the loss with "
                               "scaler.scale(loss) earlier in the iteration.")

    def _lazy_init(self, device):
        self._scale = _C.full((), self._init_scale, dtype=_C.float32, device=device)
        self._growth_tracker = _C.full((), self._init_growth_tracker, dtype=_C.int32, device=device)

    def scale(self, outputs):
        """Multiplies a tensor (or the tensors in a list, tuple or other iterable) by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply(value):
            if isinstance(value, _C.Tensor):
                if self._scale is None:
                    self._lazy_init(value.device)
                return value * self._scale.to(device=value.device)
            if isinstance(value, (list, tuple)):
                scaled = [apply(v) for v in value]
                return type(value)(scaled) if isinstance(value, list) else tuple(scaled)
            if hasattr(value, "__iter__"):
                return map(apply, value)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Unscales the optimizer's gradients with one fused op per (device, dtype) group and
        returns the found_inf flag of each device."""
        groups = defaultdict(lambda: defaultdict(list))
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if not allow_fp16 and param.grad.dtype == _C.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                groups[str(param.grad.device)][param.grad.dtype].append(param.grad)
        per_device = {}
        for device, by_dtype in groups.items():
            device_found_inf = found_inf.to(device=device, copy=True) if str(found_inf.device) != device else found_inf
            device_inv_scale = inv_scale.to(device=device)
            for grads in by_dtype.values():
                _C._amp_foreach_non_finite_check_and_unscale_(grads, device_found_inf, device_inv_scale)
            per_device[device] = device_found_inf
        return per_device

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale in place (for clipping them before
        ``step``). Called by ``step`` when you do not call it yourself."""
        if not self._enabled:
            return
        self._check_scale_initialized("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _C.full((), 0.0, dtype=_C.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless ``unscale_`` did) and steps the optimizer, unless a
        gradient holds inf or NaN: then the step is skipped and no parameter changes."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_initialized("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise RuntimeError("No inf checks were recorded for this optimizer: it has no gradients.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Adapts the scale after the iteration's steps, or sets it to ``new_scale``."""
        if not self._enabled:
            return
        self._check_scale_initialized("update")
        if new_scale is not None:
            if isinstance(new_scale, (int, float)) and not isinstance(new_scale, bool):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element tensorplay.Tensor of dtype float32 with "
                          "requires_grad=False.")
                if (not isinstance(new_scale, _C.Tensor) or new_scale.numel() != 1 or new_scale.requires_grad
                        or new_scale.dtype != _C.float32):
                    raise ValueError(reason)
                self._scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [found_inf.to(device=self._scale.device)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if not found_infs:
                raise RuntimeError("No inf checks were recorded prior to update().")
            found_inf = found_infs[0]
            for other in found_infs[1:]:
                found_inf = found_inf + other
            _C._amp_update_scale_(self._scale, self._growth_tracker, found_inf, self._growth_factor,
                                  self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    # ---- the scale and the factors ----
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float):
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float):
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int):
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()

    def is_enabled(self) -> bool:
        return self._enabled

    # ---- checkpoints ----
    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if self._per_optimizer_states:
                raise RuntimeError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                   "or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

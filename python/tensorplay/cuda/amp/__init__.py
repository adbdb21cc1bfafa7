"""tensorplay.cuda.amp: PyTorch's older spellings, kept for compatibility; each warns and points
to tensorplay.amp."""

import functools
import warnings

from tensorplay import _C
from tensorplay import amp as _amp

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def _deprecated(old, new):
    warnings.warn(f"`tensorplay.cuda.amp.{old}(args...)` is deprecated. Please use `tensorplay.amp.{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_amp.autocast):
    """Deprecated: use ``tensorplay.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype=_C.float16, cache_enabled: bool = True):
        _deprecated("autocast", "autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """Deprecated: use ``tensorplay.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        _deprecated("GradScaler", "GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: use ``tensorplay.amp.custom_fwd(device_type="cuda", ...)``."""
    _deprecated("custom_fwd", "custom_fwd(args..., device_type='cuda')")
    if fwd is None:
        return functools.partial(_amp.custom_fwd, device_type="cuda", cast_inputs=cast_inputs)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """Deprecated: use ``tensorplay.amp.custom_bwd(device_type="cuda")``."""
    _deprecated("custom_bwd", "custom_bwd(args..., device_type='cuda')")
    if bwd is None:
        return functools.partial(_amp.custom_bwd, device_type="cuda")
    return _amp.custom_bwd(bwd, device_type="cuda")

"""tensorplay.cpu.amp: PyTorch's older spellings, kept for compatibility; each warns and points
to tensorplay.amp."""

import warnings

from tensorplay import _C
from tensorplay import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """Deprecated: use ``tensorplay.amp.autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype=_C.bfloat16, cache_enabled: bool = True):
        warnings.warn("`tensorplay.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`tensorplay.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """Deprecated: use ``tensorplay.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`tensorplay.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`tensorplay.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)

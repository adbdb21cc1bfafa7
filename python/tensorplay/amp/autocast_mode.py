"""tensorplay.autocast: regions of a script that run in mixed precision.

Under autocast each op runs in the dtype its policy gives (see ``tensorplay.amp.policy_table``):
matmuls and convolutions in the lower-precision dtype, accuracy-sensitive ops in float32, and
multi-input ops in the widest of their inputs' dtypes. The casting itself happens in C++, in the
top layer of the dispatcher (csrc/tensorplay/amp/autocast.h); this module only opens and closes regions.
"""

import collections.abc
import functools
import threading
import warnings

from tensorplay import _C

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_SUPPORTED_DTYPES = (_C.bfloat16, _C.float16)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports ``device_type`` ('cpu' and 'cuda' do)."""
    if not isinstance(device_type, str):
        raise TypeError(f"is_autocast_available: expected device_type to be a str, got {type(device_type).__name__}")
    return _C.is_autocast_available(device_type)


def _check_device_type(device_type, caller):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if not _C.is_autocast_available(device_type):
        raise RuntimeError(
            f"{caller}: unsupported device_type '{device_type}'; autocast supports 'cpu' and 'cuda' "
            "(the type of a tensorplay.device, as in tensor.device.type)"
        )


class autocast:
    r"""Runs a region in mixed precision, as a context manager or a decorator.

    Args:
        device_type (str): 'cpu' or 'cuda', as in ``tensor.device.type``.
        dtype (tensorplay.dtype, optional): the lower-precision dtype. Default: the device's
            ``get_autocast_dtype`` (bfloat16 on CPU, float16 on CUDA).
        enabled (bool): whether autocast is on in the region. Default: True.
        cache_enabled (bool, optional): whether casts of weights are cached in the region.
            Default: inherited from the enclosing region (True at top level).

    Example::

        with tensorplay.autocast(device_type="cpu"):
            output = model(input)          # linear layers run in bfloat16
            loss = loss_fn(output, target)  # the loss in float32
        loss.backward()                     # outside the region

    Regions nest; each exit restores exactly the state its entry saw. The state is per thread:
    a new thread starts with autocast off.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        _check_device_type(device_type, "tensorplay.autocast")
        if dtype is not None and not isinstance(dtype, _C.dtype):
            raise TypeError(f"tensorplay.autocast: expected dtype to be a tensorplay.dtype or None, got "
                            f"{type(dtype).__name__}")
        if not isinstance(enabled, bool):
            raise TypeError(f"tensorplay.autocast: expected enabled to be a bool, got {type(enabled).__name__}")
        if cache_enabled is not None and not isinstance(cache_enabled, bool):
            raise TypeError(f"tensorplay.autocast: expected cache_enabled to be a bool or None, got "
                            f"{type(cache_enabled).__name__}")
        self.device = device_type
        self.fast_dtype = _C.get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = cache_enabled
        if enabled:
            from tensorplay import cuda

            if device_type == "cuda" and not cuda.is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in _SUPPORTED_DTYPES:
                name = device_type.upper()
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                    f"{name} Autocast only supports dtypes of tensorplay.bfloat16, tensorplay.float16 currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled
        # Regions entered and not yet left, per thread: one instance may be entered again (a
        # decorated recursive function) or from several threads (a decorated method). A dict
        # keyed by thread, since a threading.local costs far more to create between two training
        # steps than on its own, enough to be a large part of autocast's cost in a step (figures
        # in BENCHMARKS.md).
        self._open = {}

    def __enter__(self):
        dtype = self.fast_dtype if self.fast_dtype.is_floating_point else None
        region = _C._amp._enter_region(self.device, dtype, self._enabled, self._cache_enabled)
        self._open.setdefault(threading.get_ident(), []).append(region)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        thread = threading.get_ident()
        if thread not in self._open:
            # Left in another thread than the one that entered it: as in PyTorch, this thread
            # takes the state saved at the latest entry, and the entering thread keeps its own.
            thread = next(reversed(self._open))
        regions = self._open[thread]
        _C._amp._exit_region(regions.pop())
        if not regions:
            del self._open[thread]
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean to use "
                "autocast as a context manager? For example:\n"
                "    with tensorplay.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast

    def __repr__(self):
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, enabled={self._enabled}, "
                f"cache_enabled={self._cache_enabled})")


def _cast(value, device_type, dtype):
    """Casts the floating tensors in value (nested in lists, tuples and dicts) that live on
    device_type to dtype; float64 and everything else pass through."""
    if isinstance(value, _C.Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype != _C.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        casted = (_cast(v, device_type, dtype) for v in value)
        return list(casted) if isinstance(value, list) else tuple(casted) if isinstance(value, tuple) else value
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates the forward of a custom ``autograd.Function`` so that its backward (decorated
    with ``custom_bwd``) runs under the autocast state forward saw.

    With ``cast_inputs`` set, forward runs with autocast off and its floating inputs cast to
    ``cast_inputs`` when called inside an enabled region.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._autocast_dtype = _C.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _C.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not _C.is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates the backward of a custom ``autograd.Function`` (see ``custom_fwd``): backward runs
    under the autocast state of its forward, whichever thread runs it."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._autocast_dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd

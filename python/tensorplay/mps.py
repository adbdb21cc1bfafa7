"""tensorplay.mps, as torch.mps answers off macOS: Apple's Metal backend is not built, so there is no
device. ``is_available()`` is False, ``device_count()`` 0 and ``manual_seed`` does nothing (it is called
for every backend by code that seeds everything); the rest raises PyTorch's RuntimeError."""

import os

from tensorplay import _C

__all__ = ["compile_shader", "load_metallib", "device_count", "get_rng_state", "manual_seed", "seed", "set_rng_state",
           "synchronize", "empty_cache", "set_per_process_memory_fraction", "current_allocated_memory",
           "driver_allocated_memory", "Event", "recommended_max_memory", "is_available"]


def _unbuilt(operation):
    raise RuntimeError(f"Cannot execute {operation}() without MPS backend.")


def is_available():
    return False


def device_count():
    return 0


def synchronize():
    _unbuilt("deviceSynchronize")


def get_rng_state(device="mps"):
    _unbuilt("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    new_state.clone(memory_format=_C.contiguous_format)
    _unbuilt("getDefaultGenerator")


def manual_seed(seed):
    """Seeds the MPS generator: without MPS, returns at once (before looking at the seed), as in PyTorch."""


def seed():
    _unbuilt("getDefaultGenerator")


def empty_cache():
    _unbuilt("emptyCache")


def set_per_process_memory_fraction(fraction):
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 2:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
    _unbuilt("setMemoryFraction")


def current_allocated_memory():
    _unbuilt("getCurrentAllocatedMemory")


def driver_allocated_memory():
    _unbuilt("getDriverAllocatedMemory")


def recommended_max_memory():
    _unbuilt("getRecommendedMaxMemory")


def compile_shader(source):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    if not isinstance(source, (bytes, bytearray, str, os.PathLike)):
        raise TypeError(f"expected bytes or path, got {type(source).__name__}")
    raise RuntimeError("MPS is not available")


class Event:
    """A marker in the MPS stream, for timing and synchronising; none can be made without MPS."""

    def __init__(self, enable_timing=False):
        _unbuilt("acquireEvent")

"""tensorplay.accelerator, as torch.accelerator answers in PyTorch's CPU wheel: the device-agnostic
face of the current accelerator (CUDA, MPS, XPU, ...), of which this build has none.

``is_available()`` is False, ``current_accelerator()`` None and ``device_count()`` 0, so a program can
choose its device with them; every call about the accelerator's devices, streams or memory raises
PyTorch's RuntimeError, "Cannot access accelerator device when none is available.", including
``synchronize()`` and ``empty_cache()``, which torch.cuda's CPU build also refuses or skips.

>>> device = tensorplay.accelerator.current_accelerator() or tensorplay.device("cpu")
>>> device
device(type='cpu')
"""

import warnings

from tensorplay import _C

__all__ = [
    "Graph", "current_accelerator", "current_device_idx", "current_device_index", "get_device_capability",
    "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache", "get_memory_info",
    "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
    "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]


def _no_accelerator(*args):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _device_index(device, optional=False):
    """The index a device argument names, as PyTorch parses it: an int as it is; a device (or
    string) must be of the current accelerator's type, and there is none."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        raise RuntimeError("Accelerator expected")
    if not optional:
        raise ValueError(f"Expected a tensorplay.device with a specified index or an integer, but got:{device}")
    return current_device_index()


# ---- Which accelerator ----

def current_accelerator(check_available=False):
    """The device type of the accelerator this build was made for, or None: there is none."""
    return None


def is_available():
    return False


def device_count():
    return 0


# ---- Its devices ----

def current_device_index():
    _no_accelerator()


def current_device_idx():
    """Deprecated: current_device_index."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Makes `device` the current device of the accelerator; a negative index is a no-op."""
    if _device_index(device) >= 0:
        _no_accelerator()


def set_device_idx(device, /):
    """Deprecated: set_device_index."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


class device_index:
    """Makes device `device` the current one for the block; None switches nothing, and is the only
    index that can be entered here."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _no_accelerator()

    def __exit__(self, *exc_info):
        return None


def get_device_capability(device=None, /):
    _no_accelerator(_device_index(device, optional=True))


def synchronize(device=None, /):
    """Waits for the device's kernels: there is no device, so it raises, as in PyTorch's CPU wheel."""
    _no_accelerator(_device_index(device, optional=True))


# ---- Its streams and graphs ----

def current_stream(device=None, /):
    _no_accelerator(_device_index(device, optional=True))


def set_stream(stream):
    """Makes `stream` (a tensorplay.Stream) current. This build has no stream type, so any argument is
    the wrong one, as PyTorch's binding reports it."""
    raise TypeError("_accelerator_setStream(): incompatible function arguments. The following argument types are "
                    f"supported:\n    1. (arg0: tensorplay.Stream) -> None\n\nInvoked with: {stream!r}")


class Graph:
    """A captured sequence of the accelerator's kernels, to replay. There is no accelerator, so none
    can be made."""

    def __new__(cls, keep_graph=False, *, pool=None, capture_error_mode="default"):
        _no_accelerator()


# ---- Its memory ----

def empty_cache():
    """Releases the accelerator allocator's cached blocks: raises, as there is no allocator to ask."""
    _no_accelerator()


def empty_host_cache():
    _no_accelerator()


def memory_stats(device_index=None, /):
    _no_accelerator()


def memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /):
    _no_accelerator()


def reset_peak_memory_stats(device_index=None, /):
    _no_accelerator()


def get_memory_info(device_index=None, /):
    _no_accelerator(_device_index(device_index, optional=True))

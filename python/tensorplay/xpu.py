"""tensorplay.xpu, as torch.xpu answers in PyTorch's CPU wheel: Intel GPUs (XPU) are not supported by
this build, so no device is ever available.

``is_available()`` is False, ``device_count()`` 0, the memory counters 0, seeding does nothing; calls
that need a device raise PyTorch's ``AssertionError: Torch not compiled with XPU enabled`` or, for
the classes, its RuntimeError. Unlike torch.cuda, entering ``xpu.device(...)`` raises for any index,
as in PyTorch."""

import contextlib

from tensorplay import _C
from tensorplay._unbuilt import (device_count, is_available, is_bf16_supported, is_tf32_supported,
                                 manual_seed, manual_seed_all, max_memory_allocated, max_memory_reserved,
                                 memory_allocated, memory_reserved, memory_stats, memory_stats_as_nested_dict)
from tensorplay._unbuilt import device_index as _parse_device_index
from tensorplay._unbuilt import missing_binding as _missing_binding

__all__ = [
    "Event", "Stream", "StreamContext", "XPUPluggableAllocator", "XPUGraph", "can_device_access_peer",
    "change_current_allocator", "clock_rate", "current_device", "current_stream", "default_generators", "device",
    "device_of", "device_count", "device_memory_used", "empty_cache", "get_arch_list", "get_device_capability",
    "get_device_name", "get_device_properties", "get_gencode_flags", "get_per_process_memory_fraction",
    "get_rng_state", "get_rng_state_all", "get_stream_from_external", "graph", "graph_pool_handle", "init",
    "initial_seed", "is_available", "is_bf16_supported", "is_current_stream_capturing", "is_initialized",
    "is_tf32_supported", "make_graphed_callables", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved", "memory_snapshot", "memory_stats",
    "memory_stats_as_nested_dict", "memory_usage", "MemPool", "power_draw", "use_mem_pool",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "seed", "seed_all", "set_device",
    "set_per_process_memory_fraction", "set_rng_state", "set_rng_state_all", "set_stream", "stream", "synchronize",
    "temperature", "utilization",
]

default_generators = ()  # one generator per device


def _lazy_init():
    raise AssertionError("Torch not compiled with XPU enabled")


def _device_index(device, optional=False):
    return _parse_device_index(device, optional, kind="xpu", context=globals()["device"])


def _dummy(name):
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


# ---- What the build has ----

def is_initialized():
    return False


def init():
    _lazy_init()


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


# ---- Devices ----

def _exchange_device(index):
    raise NotImplementedError("PyTorch was compiled without XPU support")


class device:
    """Makes device `device` the current one for the block: raises on entry for any index."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, type, value, traceback):
        self.idx = _exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Makes the device of `obj` the current one (-1 for one not on an XPU)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_xpu else -1)


def set_device(device):
    _lazy_init()


def current_device():
    _lazy_init()


def synchronize(device=None):
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def can_device_access_peer(device, peer):
    _lazy_init()


def _import_pyzes():
    """Level Zero Sysman's Python package, which PyTorch reads a device's sensors through."""
    try:
        import pyzes  # noqa: F401
    except ImportError:
        raise ImportError("pyzes is required; install it with 'pip install pyzes'.") from None
    raise RuntimeError("Failed to enumerate devices via Level Zero Sysman.")


def device_memory_used(device=None):
    _import_pyzes()


def memory_usage(device=None):
    _import_pyzes()


def utilization(device=None):
    _import_pyzes()


def temperature(device=None):
    _import_pyzes()


def power_draw(device=None):
    _import_pyzes()


def clock_rate(device=None):
    _import_pyzes()


# ---- Streams and graphs ----

class Stream:
    """A queue of kernels on one XPU; none can be made."""

    def __new__(cls, device=None, priority=0, **kwargs):
        _dummy(cls.__name__)


class Event:
    """A marker in an XPU stream; none can be made."""

    def __new__(cls, enable_timing=False):
        _dummy(cls.__name__)


class StreamContext:
    """Makes `stream` the current one for the block: a no-op with no device."""

    def __init__(self, stream):
        self.stream = stream
        self.idx = -1
        self.src_prev_stream = None
        self.dst_prev_stream = None

    def __enter__(self):
        return None

    def __exit__(self, type, value, traceback):
        return None


def stream(stream):
    return StreamContext(stream)


def set_stream(stream):
    """Makes `stream` current; None is a no-op."""
    if stream is None:
        return
    _lazy_init()


def current_stream(device=None):
    _lazy_init()


def get_stream_from_external(data_ptr, device=None):
    _lazy_init()


class XPUGraph:
    """A captured sequence of XPU kernels; none can be made."""

    def __new__(cls, keep_graph=False):
        _dummy(cls.__name__)


class graph:
    """Captures the block's kernels into `xpu_graph` on a side stream, made first: the error here."""

    default_capture_stream = None

    def __init__(self, xpu_graph, pool=None, stream=None, capture_error_mode="global"):
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        self.xpu_graph = xpu_graph


def graph_pool_handle():
    _dummy("_xpu_graph_pool_handle")


def is_current_stream_capturing():
    _dummy("_xpu_isCurrentStreamCapturing")


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    if _C.is_autocast_enabled() and _C.is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching. Please set "
                           "`cache_enabled=False`.")
    XPUGraph()


# ---- Generators: none to seed ----

def get_rng_state(device="xpu"):
    _lazy_init()


def get_rng_state_all():
    return []


def set_rng_state(new_state, device="xpu"):
    new_state.clone(memory_format=_C.contiguous_format)


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def seed():
    """Seeds the current XPU's generator non-deterministically: there is none."""


def seed_all():
    """Seeds every XPU's generator non-deterministically: there are none."""


def initial_seed():
    _lazy_init()


# ---- Memory: read only once the XPU runtime has started, which it never does ----

def empty_cache():
    """Returns the cached XPU blocks to the driver: there are none."""


def memory_snapshot(mempool_id=None):
    return []


def reset_peak_memory_stats(device=None):
    _device_index(device, optional=True)
    _missing_binding("_xpu_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device=None):
    _device_index(device, optional=True)
    _missing_binding("_xpu_resetAccumulatedMemoryStats")


def mem_get_info(device=None):
    _lazy_init()


def get_per_process_memory_fraction(device=None):
    _lazy_init()


def set_per_process_memory_fraction(fraction, device=None):
    _lazy_init()


class XPUPluggableAllocator:
    """An allocator loaded from a shared library's alloc and free functions; the library is loaded
    and the functions found, as in PyTorch, and making an XPU allocator of them is the error."""

    def __init__(self, path_to_lib_file, alloc_fn_name, free_fn_name):
        import ctypes

        library = ctypes.CDLL(path_to_lib_file)
        if not hasattr(library, alloc_fn_name) or not hasattr(library, free_fn_name):
            raise RuntimeError("Failed to load allocator symbols from the shared library.")
        _missing_binding("_xpu_customAllocator")


def change_current_allocator(allocator):
    _missing_binding("_xpu_changeCurrentAllocator")


class MemPool:
    """A pool of the XPU allocator's memory; none can be made."""

    def __new__(cls, allocator=None, use_on_oom=False, no_split=False):
        _dummy(cls.__name__)


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    current_device() if device is None else _device_index(device)
    _missing_binding("_xpu_beginAllocateCurrentThreadToPool")
    yield

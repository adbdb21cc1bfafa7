"""The CUDA allocator's statistics and controls, as torch.cuda.memory in a build without CUDA.

PyTorch reads the counters only once CUDA has started, which it never does here: the counters are
0 and the statistics empty, for any device argument. Calls that change the allocator either do
nothing (``empty_cache``, ``caching_allocator_enable``) or raise PyTorch's error. tensorplay's own
allocator is the CPU's: its counters are in tensorplay.cpu."""

import collections
import contextlib
import warnings

from tensorplay._unbuilt import (device_index, lazy_init, max_memory_allocated, max_memory_reserved,
                                 memory_allocated, memory_reserved, memory_stats, memory_stats_as_nested_dict,
                                 missing_binding)

__all__ = [
    "caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_enable", "caching_allocator_disabled",
    "set_per_process_memory_fraction", "get_per_process_memory_fraction", "empty_cache", "memory_stats",
    "memory_stats_as_nested_dict", "reset_accumulated_memory_stats", "reset_peak_memory_stats", "host_memory_stats",
    "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached", "memory_snapshot",
    "memory_summary", "list_gpu_processes", "mem_get_info", "get_allocator_backend", "CUDAPluggableAllocator",
    "change_current_allocator", "MemPool", "use_mem_pool",
]


def _current_device():
    from tensorplay.cuda import current_device

    return current_device()


# ---- Counters ----

def memory_cached(device=None):
    """Deprecated: memory_reserved."""
    warnings.warn("`tensorplay.cuda.memory_cached` has been renamed to `tensorplay.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device=device)


def max_memory_cached(device=None):
    """Deprecated: max_memory_reserved."""
    warnings.warn("`tensorplay.cuda.max_memory_cached` has been renamed to `tensorplay.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device=device)


def host_memory_stats():
    """The pinned host allocator's statistics: pinned memory belongs to CUDA, so there are none."""
    return collections.OrderedDict()


def host_memory_stats_as_nested_dict():
    return {}


def reset_peak_memory_stats(device=None):
    device_index(device, optional=True)
    missing_binding("_cuda_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device=None):
    device_index(device, optional=True)
    missing_binding("_cuda_resetAccumulatedMemoryStats")


def reset_max_memory_allocated(device=None):
    warnings.warn("tensorplay.cuda.reset_max_memory_allocated now calls tensorplay.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device=None):
    warnings.warn("tensorplay.cuda.reset_max_memory_cached now calls tensorplay.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def reset_accumulated_host_memory_stats():
    missing_binding("_cuda_resetAccumulatedHostMemoryStats")


def reset_peak_host_memory_stats():
    missing_binding("_cuda_resetPeakHostMemoryStats")


def memory_snapshot(mempool_id=None, include_traces=True):
    missing_binding("_cuda_memorySnapshot")


def memory_summary(device=None, abbreviated=False):
    """A table of the allocator's statistics. PyTorch's CPU wheel fails on its empty statistics with
    a KeyError; so does this."""
    device_index(device, optional=True)
    raise KeyError("allocated_bytes.all.current")


def list_gpu_processes(device=None):
    """A printout of the processes using the GPU, read through NVML (the nvidia-ml-py package)."""
    try:
        import pynvml  # noqa: F401
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    return "cuda driver can't be loaded, is cuda enabled?"


def mem_get_info(device=None):
    if device is None:
        _current_device()
    device_index(device, optional=True)
    lazy_init()


# ---- Controls ----

def empty_cache():
    """Returns the cached GPU blocks to the driver: there are none."""


def caching_allocator_enable(value=True):
    """Switches the caching allocator on or off once CUDA has started, which it never does."""


@contextlib.contextmanager
def caching_allocator_disabled():
    missing_binding("_cuda_cudaCachingAllocator_is_enabled")
    yield


def caching_allocator_alloc(size, device=None, stream=None):
    from tensorplay.cuda import Stream, current_stream
    from tensorplay.cuda import device as device_context

    if device is None:
        device = _current_device()
    device = device_index(device)
    if stream is None:
        stream = current_stream(device)
    if isinstance(stream, Stream):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError("Invalid type for stream argument, must be `tensorplay.cuda.Stream` or `int` representing a "
                        "pointer to an existing stream")
    with device_context(device):
        missing_binding("_cuda_cudaCachingAllocator_raw_alloc")


def caching_allocator_delete(mem_ptr):
    missing_binding("_cuda_cudaCachingAllocator_raw_delete")


def set_per_process_memory_fraction(fraction, device=None):
    lazy_init()


def get_per_process_memory_fraction(device=None):
    lazy_init()


def get_allocator_backend():
    missing_binding("_cuda_getAllocatorBackend")


class CUDAPluggableAllocator:
    """An allocator loaded from a shared library's alloc and free functions. The library is loaded
    and the functions found, as in PyTorch; making a CUDA allocator of them is the error."""

    def __init__(self, path_to_so_file, alloc_fn_name, free_fn_name):
        import ctypes

        library = ctypes.CDLL(path_to_so_file)
        getattr(library, alloc_fn_name), getattr(library, free_fn_name)  # noqa: B018
        missing_binding("_cuda_customAllocator")


def change_current_allocator(allocator):
    missing_binding("_cuda_changeCurrentAllocator")


class MemPool:
    """A pool of the caching allocator's memory. There is no CUDA allocator, so none can be made."""

    def __new__(cls, allocator=None, use_on_oom=False, no_split=False):
        raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    _current_device() if device is None else device_index(device)
    pool.id  # noqa: B018  (read as PyTorch reads it)
    raise RuntimeError("Tried to instantiate dummy base class _cuda_beginAllocateCurrentThreadToPool")
    yield

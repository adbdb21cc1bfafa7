"""tensorplay.cpu: CPU-specific pieces, as in torch.cpu, and the CPU allocator's statistics with
the names torch.cuda gives its own (tensorplay caches freed CPU blocks for reuse, as PyTorch's
CUDA allocator does)."""

from tensorplay import _C
from tensorplay.cpu import amp

__all__ = ["amp", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "memory_reserved",
           "memory_stats", "empty_cache"]


def memory_stats():
    """The allocator's counters: allocated_bytes, peak_allocated_bytes, cached_bytes, allocations,
    cache_hits."""
    return _C._cpu_memory_stats()


def memory_allocated():
    """Bytes held by live tensors (each block rounded up to its size class)."""
    return memory_stats()["allocated_bytes"]


def max_memory_allocated():
    """The most memory_allocated() has been since the start or the last reset_peak_memory_stats()."""
    return memory_stats()["peak_allocated_bytes"]


def memory_reserved():
    """Bytes held by live tensors plus freed blocks kept for reuse."""
    stats = memory_stats()
    return stats["allocated_bytes"] + stats["cached_bytes"]


def reset_peak_memory_stats():
    _C._cpu_reset_peak_memory_stats()


def empty_cache():
    """Returns the freed blocks kept for reuse to the system."""
    _C._cpu_empty_cache()

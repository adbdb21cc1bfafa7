"""NVIDIA's tracing annotations (NVTX), as torch.cuda.nvtx in a build without CUDA: every call
raises PyTorch's RuntimeError, since the NVTX library comes with CUDA."""

import contextlib

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def _unbuilt(*args, **kwargs):
    raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")


range_push = range_pop = range_start = range_end = mark = _unbuilt


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """Brackets the block with range_push(msg.format(*args, **kwargs)) and range_pop()."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()

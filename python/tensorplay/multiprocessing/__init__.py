"""tensorplay.multiprocessing: Python's multiprocessing, with tensors that travel between processes
through shared memory (reductions.py), as torch.multiprocessing has it."""

import multiprocessing as _multiprocessing
from multiprocessing import *  # noqa: F401,F403

from tensorplay.multiprocessing.reductions import init_reductions
from tensorplay.multiprocessing.spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, spawn,
                                              start_processes)

__all__ = ["get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies", "init_reductions",
           "spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]
__all__ += _multiprocessing.__all__

# Memory is shared as file descriptors (memfds): tensorplay has that strategy only. "file_system"
# (PyTorch's named files in /dev/shm, for systems short of descriptors) is accepted and shares the
# same way.
_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"set_sharing_strategy: unknown strategy {new_strategy!r}; expected one of "
                         f"{sorted(_STRATEGIES)}")
    _strategy = new_strategy


def get_all_sharing_strategies():
    return set(_STRATEGIES)


init_reductions()

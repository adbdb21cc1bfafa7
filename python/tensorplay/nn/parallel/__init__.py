"""tensorplay.nn.parallel: DataParallel, for code written for several devices, run in this one process."""

from tensorplay.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]

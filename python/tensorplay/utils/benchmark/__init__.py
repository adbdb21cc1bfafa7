"""tensorplay.utils.benchmark: Timer and Measurement, as torch.utils.benchmark's, for timing a
statement: ``Timer(stmt, setup, globals=...).blocked_autorange()`` returns a Measurement with the
per-run times, their median, mean and interquartile range, printed as PyTorch prints it.

>>> from tensorplay.utils.benchmark import Timer
>>> m = Timer("x.sum()", setup="x = tensorplay.ones(1000)").blocked_autorange(min_run_time=0.01)
>>> m.median > 0
True

Compare (PyTorch's table of many measurements) is not provided."""

from tensorplay.utils.benchmark.measurement import Measurement, TaskSpec, select_unit
from tensorplay.utils.benchmark.timer import Language, Timer, timer

__all__ = ["Language", "Measurement", "TaskSpec", "Timer", "select_unit", "timer"]

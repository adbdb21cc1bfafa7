"""Timer, as torch.utils.benchmark.Timer for Python statements: it runs `stmt` with timeit, with the
thread count set to `num_threads` while timing, and returns Measurements.

- timeit(number): one run of `number` executions, after a warm-up of number // 100;
- blocked_autorange(min_run_time): picks a block size (executions per run) large enough that the
  timer's overhead is negligible, then runs blocks until `min_run_time` seconds have passed;
- adaptive_autorange(threshold): runs blocks until the interquartile range is below `threshold`
  of the median (after at least four runs and `min_run_time`), or `max_run_time` passes."""

import enum
import textwrap
import time
import timeit as _timeit

import numpy as np

from tensorplay import _C
from tensorplay.utils.benchmark.measurement import Measurement, TaskSpec

__all__ = ["Language", "Timer", "timer"]

timer = time.perf_counter  # the clock; with no GPU there is no device to synchronise first


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _dedent(code):
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """Times `stmt` after running `setup`, both Python source, with `globals` (tensorplay is given as
    ``torch`` and ``tensorplay`` unless `globals` names them). `label`, `sub_label`, `description`
    and `env` only describe the measurement."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        import tensorplay

        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise ValueError("tensorplay.utils.benchmark times Python statements only: C++ timing needs "
                             "PyTorch's C++ toolchain")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", tensorplay)
        self._globals.setdefault("tensorplay", tensorplay)
        stmt, setup = _dedent(stmt), _dedent(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def _run_with_threads(self, fn):
        previous = _C.get_num_threads()
        _C.set_num_threads(self._task_spec.num_threads)
        try:
            return fn()
        finally:
            _C.set_num_threads(previous)

    def timeit(self, number=1000000):
        def measure():
            self._timeit(max(int(number // 100), 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number)], task_spec=self._task_spec)

        return self._run_with_threads(measure)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time):
        """The fewest executions per run (a power of ten) that make the timer's overhead at most
        1e-4 of a run lasting at least min_run_time / 1000, capped by min_run_time and 2**31."""
        def estimate():
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

        return self._run_with_threads(estimate)

    def _measure(self, number, can_stop, min_run_time, max_run_time=None, callback=None):
        def loop():
            times, total, stop = [], 0.0, False
            while total < min_run_time or not stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                stop = can_stop(times)
                if max_run_time and total > max_run_time:
                    break
            return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

        return self._run_with_threads(loop)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        number = self._block_size(min_run_time)
        return self._measure(number, lambda times: True, min_run_time, callback=callback)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        number = self._block_size(0.05)

        def confident(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)

        return self._measure(number, confident, min_run_time, max_run_time, callback)

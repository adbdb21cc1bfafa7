"""What a Timer measured: TaskSpec (what was timed) and Measurement (the times), with PyTorch's
statistics and printout."""

import collections
import dataclasses
import math
import textwrap

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: below this the timer's own noise dominates
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """The statement timed, its setup, and the labels that describe it."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the statement, if it is one line) and the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup in ("pass", ""):
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self):
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections)


def select_unit(t):
    """The unit ("ns", "us", "ms" or "s") to show `t` seconds in, and its size in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


@dataclasses.dataclass(repr=False)
class Measurement:
    """`raw_times` are the seconds each of several runs of `number_per_run` executions took;
    `times` are per execution. The statistics are over `times`; the task's fields (label, stmt,
    num_threads, ...) read through."""

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __getattr__(self, name):
        if name in TaskSpec.__dataclass_fields__:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def _stats(self):
        """The sorted times and their median, mean and quartiles (linear interpolation)."""
        times = np.sort(np.array(self.times, dtype=np.float64))
        p25, median, p75 = np.quantile(times, [0.25, 0.5, 0.75])
        return times, float(median), float(times.mean()), float(p25), float(p75)

    @property
    def median(self):
        return self._stats[1]

    @property
    def mean(self):
        return self._stats[2]

    @property
    def iqr(self):
        _, _, _, p25, p75 = self._stats
        return p75 - p25

    @property
    def significant_figures(self):
        """How many digits of the median the spread of the middle half of the times supports (1 to 4)."""
        times, median = self._stats[:2]
        middle = times[len(times) // 4:math.ceil(3 * len(times) / 4)]
        interval = max(1.645 * float(middle.std()) / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(math.floor(math.log10(median / interval)), 1), _MAX_SIGNIFICANT_FIGURES)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def _warnings(self):
        if not self.raw_times:
            return ()
        for threshold, meaning in ((_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                                   (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                return (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median "
                        f"measurement.\n           {meaning}",)
        return ()

    @property
    def has_warnings(self):
        return bool(self._warnings)

    @property
    def title(self):
        return self.task_spec.title

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        n = len(self.raw_times)
        times, median, _, p25, p75 = self._stats
        unit, scale = select_unit(median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {(p75 - p25) / scale:.2f} {unit} ({p25 / scale:.2f} to {p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines.extend(self._warnings)
        return "\n".join(lines)

    @staticmethod
    def merge(measurements):
        """One Measurement per task, holding the per-execution times of all that task's measurements."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=task) for task, times in grouped.items()]

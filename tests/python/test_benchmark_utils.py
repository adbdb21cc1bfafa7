"""tensorplay.utils.benchmark: Measurement's statistics and printout equal torch.utils.benchmark's on
the same raw times, and Timer's methods measure as PyTorch's do (block sizes, run counts, stopping
rules)."""

import re

import pytest
import torch.utils.benchmark as torch_benchmark

import tensorplay
from tensorplay.utils import benchmark

RAW_TIMES = {
    "one": [2.5e-5],
    "two": [1.0e-3, 1.2e-3],
    "steady": [1.00e-6, 1.01e-6, 0.99e-6, 1.02e-6, 1.00e-6, 0.98e-6],
    "noisy": [1e-3, 3e-3, 1.5e-3, 8e-3, 1.1e-3],
    "seconds": [3.0, 3.5, 2.9, 3.1],
}
SPECS = [dict(stmt="x + 1", setup="x = 1"),
         dict(stmt="y = f(x)\nz = y * 2", setup="import math\nx = 3", label="two lines", description="desc"),
         dict(stmt="x.sum()", setup="pass", label="sum", sub_label="1000", num_threads=4, env="env1")]


def measurements(times, spec):
    ours = benchmark.Measurement(number_per_run=10, raw_times=list(times), task_spec=benchmark.TaskSpec(**spec))
    theirs = torch_benchmark.Measurement(number_per_run=10, raw_times=list(times),
                                         task_spec=torch_benchmark.utils.common.TaskSpec(**spec))
    return ours, theirs


@pytest.mark.parametrize("spec", SPECS, ids=["one_line", "two_lines", "labelled"])
@pytest.mark.parametrize("times", RAW_TIMES.values(), ids=RAW_TIMES.keys())
def test_measurement_as_torch(times, spec):
    ours, theirs = measurements(times, spec)
    assert ours.times == theirs.times
    for name in ("median", "mean", "iqr"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12), name
    for name in ("significant_figures", "has_warnings", "title", "env", "as_row_name", "label", "stmt",
                 "num_threads"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.meets_confidence(0.05) == theirs.meets_confidence(0.05)
    assert repr(ours).splitlines()[1:] == repr(theirs).splitlines()[1:]  # the first line is object.__repr__


def test_merge_as_torch():
    ours = [measurements(times, SPECS[i % 2])[0] for i, times in enumerate(RAW_TIMES.values())]
    theirs = [measurements(times, SPECS[i % 2])[1] for i, times in enumerate(RAW_TIMES.values())]
    merged, their_merged = benchmark.Measurement.merge(ours), torch_benchmark.Measurement.merge(theirs)
    assert [(m.stmt, m.times) for m in merged] == [(m.stmt, m.times) for m in their_merged]


def test_select_unit():
    for t in (3e-9, 3e-8, 4e-6, 5e-4, 2e-2, 7.0, 120.0):
        assert benchmark.select_unit(t) == torch_benchmark.select_unit(t)


def test_timeit():
    timer = benchmark.Timer("x + 1", setup="x = 1", label="add", sub_label="int", description="plain")
    m = timer.timeit(1000)
    assert m.number_per_run == 1000 and len(m.raw_times) == 1 and m.times[0] == m.raw_times[0] / 1000
    assert repr(m).splitlines()[1:4] == ["add: int", "plain", "setup: x = 1"]
    assert repr(m).splitlines()[-1] == "  1 measurement, 1000 runs , 1 thread"


def test_blocked_autorange_runs_for_min_run_time():
    calls = []
    m = benchmark.Timer("x.sum()", setup="x = torch.ones(100)").blocked_autorange(
        callback=lambda number, seconds: calls.append((number, seconds)), min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and len(calls) == len(m.raw_times)
    assert m.number_per_run in [10 ** k for k in range(10)] and all(n == m.number_per_run for n, _ in calls)
    assert m.median > 0 and "measurements" in repr(m)


def test_adaptive_autorange_stops_when_confident_or_out_of_time():
    m = benchmark.Timer("sum(range(20))").adaptive_autorange(threshold=0.5, min_run_time=0.01, max_run_time=2.0)
    assert len(m.raw_times) > 3 or sum(m.raw_times) > 2.0
    assert m.meets_confidence(0.5) or sum(m.raw_times) > 2.0


def test_globals_setup_and_threads(restore_threads):
    tensorplay.set_num_threads(3)
    seen = []
    timer = benchmark.Timer("seen.append(tensorplay.get_num_threads())", globals={"seen": seen}, num_threads=1)
    timer.timeit(5)
    assert set(seen) == {1} and tensorplay.get_num_threads() == 3
    multi_line = benchmark.Timer("""
        y = x * 2
        y += 1
    """, setup="""
        x = 3
    """)
    assert multi_line.timeit(10).stmt == "y = x * 2\ny += 1"


@pytest.mark.parametrize("kwargs, error", [
    (dict(stmt=lambda: None), "Currently only a `str` stmt is supported."),
    (dict(global_setup="int x;"), "global_setup is C++ only"),
    (dict(language="fortran"), "Invalid language `fortran`."),
])
def test_timer_errors_as_torch(kwargs, error):
    for module in (torch_benchmark, benchmark):
        with pytest.raises(ValueError, match=re.escape(error)):
            module.Timer(**kwargs)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        benchmark.Timer().repeat()

"""Case 4: eager overhead, what a small op costs from Python when the arithmetic is nothing:
microseconds per `a + b` on 4-element float32 tensors (binding, dispatch, allocation). Then the
autocast layer's own cost on an op it does not cast: the same `a + b` inside
`autocast("cpu")` minus outside it. Both are timed in alternating blocks so that drift of a busy
machine hits them alike."""

import statistics
import time

from benchmarks.cases.common import load
from benchmarks.report import Row, check

TITLE = "4. Eager overhead"

AUTOCAST_TARGET_US = 0.2
OVERHEAD_TARGET = 0.5


def children(quick):
    return [{"calls": 20_000 if quick else 100_000, "blocks": 10}]


def _us_per_call(a, b, calls):
    start = time.perf_counter()
    for _ in range(calls):
        a + b
    return (time.perf_counter() - start) / calls * 1e6


def run(lib_name, params):
    lib = load(lib_name, params)
    a, b = lib.randn(4), lib.randn(4)
    calls = params["calls"] // params["blocks"]
    _us_per_call(a, b, calls)  # warm-up
    outside, inside = [], []
    for _ in range(params["blocks"]):
        outside.append(_us_per_call(a, b, calls))
        with lib.autocast("cpu"):
            inside.append(_us_per_call(a, b, calls))
    plain = statistics.median(outside)
    return {"add": plain, "autocast cost": statistics.median(inside) - plain}


def rows(results, machine):
    add = Row("eager `a + b`, 4 float32 elements", "us/op", *results["add"], kind="cost",
              target=f"ratio <= {OVERHEAD_TARGET}")
    add.met = check(add.ratio, lambda r: r <= OVERHEAD_TARGET)
    tp, torch = results["autocast cost"]
    cost = Row("autocast's added cost on `a + b` (not cast)", "us/op", tp, torch,
               target=f"< {AUTOCAST_TARGET_US} us", met=check(tp, lambda us: us < AUTOCAST_TARGET_US))
    return [add, cost]

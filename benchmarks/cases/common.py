"""What every case needs inside its child process: the library it measures, a timer, and the
process's peak resident memory. Imports neither library at module level, so a child holds only
the one it measures."""

import importlib
import resource
import statistics
import time

LIBS = ("tensorplay", "torch")


def load(lib_name, params):
    """The library measured (tensorplay or torch, never both), set to params["threads"] intra-op
    threads (the driver also sets OMP_NUM_THREADS in the child's environment)."""
    if lib_name not in LIBS:
        raise ValueError(f"unknown library {lib_name!r}, expected one of {LIBS}")
    lib = importlib.import_module(lib_name)
    lib.set_num_threads(params.get("threads", 1))
    return lib


def seconds_per_call(fn, min_time=0.5, min_calls=3, max_time=None, warmup=1):
    """Median seconds of one call of fn: `warmup` untimed calls (allocator caches, oneDNN
    primitives), then calls timed one by one until at least `min_calls` ran and `min_time` passed.
    Past `max_time`, one timed call is enough (for calls that take seconds each)."""
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start
        if (len(times) >= min_calls and elapsed >= min_time) or (max_time is not None and elapsed >= max_time):
            return statistics.median(times)


def seconds_per_call_alternating(fns, min_time=0.5, blocks=6, warmup=1, prepare=None):
    """Median seconds of one call of each of fns, timed in `blocks` rounds that run each fn in turn
    (the order reversed every other round) for at least min_time / blocks: a busy machine's drift
    then hits them alike, where one after the other the first could get a quiet minute and the
    second a loaded one. Each fn runs at least once per round; prepare[i], if given, runs untimed
    before each of fns[i]'s turns (to set its thread count, say)."""
    prepare = prepare or [lambda: None] * len(fns)
    for setup, fn in zip(prepare, fns):
        setup()
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for block in range(blocks):
        order = range(len(fns)) if block % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            prepare[i]()
            start = time.perf_counter()
            while True:
                t0 = time.perf_counter()
                fns[i]()
                times[i].append(time.perf_counter() - t0)
                if time.perf_counter() - start >= min_time / blocks:
                    break
    return [statistics.median(t) for t in times]


def peak_rss_mb():
    """The most resident memory this process has held so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

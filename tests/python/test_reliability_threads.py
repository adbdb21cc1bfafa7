"""Autocast under thread stress: 16 threads enter and leave many nested autocast regions with their
own dtypes and flags, all running linear/matmul on one shared float32 weight (and one of their
own) plus backward. Autocast state and the weight cache are per thread, so each thread must see
exactly what its own regions imply, whatever the others do meanwhile:

- the state (is_autocast_enabled, get_autocast_dtype, is_autocast_cache_enabled) after every
  enter and exit;
- output dtypes, and values within the autocast dtype's rounding of a float64 recomputation (a
  cast of another dtype or of stale weights is far outside that);
- the cache hits the trace records for each linear, against a model of the documented cache rules
  kept by the thread (keyed by weight and dtype, dropped on in-place change and on the outermost
  exit): a hit handed over from another thread's cache shows up as an unexpected hit;
- float32 gradients on the float32 weights, within rounding of their exact values.

TP_STRESS_REGIONS sets the regions per thread (`make stress` runs 10,000); the default is a short
budget for the test suite."""

import os
import random
import sys
import threading
import traceback

import numpy as np
import pytest

import tensorplay as tp
import tensorplay.nn.functional as F

THREADS = 16
REGIONS = int(os.environ.get("TP_STRESS_REGIONS", "100"))
bf16, f16, f32 = tp.bfloat16, tp.float16, tp.float32
# Unit roundoff of each compute dtype, for the error bound of a dot product computed in it.
EPS = {bf16: 2.0**-8, f16: 2.0**-11, f32: 2.0**-23}
BATCH, IN, OUT = 4, 16, 8


def state():
    return tp.is_autocast_enabled("cpu"), tp.get_autocast_dtype("cpu"), tp.is_autocast_cache_enabled()


class Expected:
    """What a thread's own regions imply: the state stack and the cache's keys."""

    def __init__(self):
        self.stack = [(False, bf16, True)]
        self.cached = set()

    def enter(self, dtype, enabled, cache_enabled):
        _, current_dtype, current_cache = self.stack[-1]
        self.stack.append((enabled, current_dtype if dtype is None else dtype,
                           current_cache if cache_enabled is None else cache_enabled))

    def exit(self):
        self.stack.pop()
        if len(self.stack) == 1:
            self.cached.clear()

    @property
    def state(self):
        return self.stack[-1]

    @property
    def compute_dtype(self):
        enabled, dtype, _ = self.stack[-1]
        return dtype if enabled else f32

    def hits(self, weight):
        """The cache hits a linear on weight gets now, updating the cache as the region would."""
        enabled, dtype, cache_enabled = self.stack[-1]
        if not (enabled and cache_enabled):
            return 0
        if (weight, dtype) in self.cached:
            return 1
        self.cached.add((weight, dtype))
        return 0

    def changed(self, weight):
        self.cached = {key for key in self.cached if key[0] != weight}


def numpy64(t):
    return t.detach().float().numpy().astype(np.float64)


def check_output(y, x64, w, dtype, what):
    assert y.dtype == dtype, f"{what}: dtype {y.dtype}, expected {dtype}"
    w64 = numpy64(w)
    exact = x64 @ w64.T
    # Two input roundings per product and one output rounding, each at most EPS/2 relative (x > 0).
    bound = 2 * EPS[dtype] * (x64 @ np.abs(w64).T) + 1e-6
    error = np.abs(numpy64(y) - exact)
    assert (error <= bound).all(), f"{what}: off by {error.max():.3g} (bound {bound.max():.3g}) in {dtype}"


def check_weight_grad(grad, x64, dtype, what):
    """The gradient of sum(linear(x, w)) with respect to w: every row is x summed over the batch,
    computed in the region's dtype and handed back in float32."""
    assert grad is not None and grad.dtype == f32, f"{what}: gradient {grad if grad is None else grad.dtype}"
    exact = x64.sum(0)
    bound = 2 * BATCH * EPS[dtype] * x64.max() + 1e-6
    error = np.abs(numpy64(grad) - exact)
    assert (error <= bound).all(), f"{what}: gradient off by {error.max():.3g} (bound {bound:.3g}) in {dtype}"


def traced_linear(x, x64, w, expected, name, what):
    with tp.amp.trace() as t:
        y = F.linear(x, w)
    hits = [e.cache_hits for e in t.entries if e.op == "linear"]
    want = expected.hits(name)
    assert sum(hits) == want, f"{what}: {sum(hits)} cache hits on the {name} weight, expected {want}"
    check_output(y, x64, w, expected.compute_dtype, what)
    return y


def random_region(rng, nested):
    """(dtype, enabled, cache_enabled) for autocast; an inner region may inherit dtype and cache."""
    dtype = rng.choice([bf16, f16, None] if nested else [bf16, f16])
    return dtype, rng.random() < 0.8, rng.choice([True, False, None])


def work(index, shared, regions, start, errors):
    rng = random.Random(index)
    data = np.random.default_rng(index)
    # Positive inputs: a stale weight (changed by 0.25 everywhere) moves every output by >= 2,
    # far past the rounding bound.
    x = tp.tensor(data.uniform(0.5, 1.0, (BATCH, IN)).astype(np.float32))
    x64 = numpy64(x)
    own = tp.tensor(data.uniform(-1, 1, (OUT, IN)).astype(np.float32), requires_grad=True)
    expected = Expected()
    region = -1
    try:
        start.wait()
        for region in range(regions):
            where = f"thread {index}, region {region}"
            dtype, enabled, cache_enabled = random_region(rng, nested=False)
            grad_shared = None
            with tp.autocast("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled):
                expected.enter(dtype, enabled, cache_enabled)
                assert state() == expected.state, f"{where}: state {state()}, expected {expected.state}"
                outer_dtype = expected.compute_dtype

                y_shared = traced_linear(x, x64, shared, expected, "shared", f"{where}, shared")
                again = traced_linear(x, x64, shared, expected, "shared", f"{where}, shared again")
                assert again.equal(y_shared), f"{where}: the same linear twice gave different values"
                check_output(x @ shared.t(), x64, shared, outer_dtype, f"{where}, matmul")

                traced_linear(x, x64, own, expected, "own", f"{where}, own")
                with tp.no_grad():
                    own.add_(0.25 if region % 2 else -0.25)  # the cached cast is stale now
                expected.changed("own")
                y_own = traced_linear(x, x64, own, expected, "own", f"{where}, own after an in-place change")

                inner = random_region(rng, nested=True)
                with tp.autocast("cpu", dtype=inner[0], enabled=inner[1], cache_enabled=inner[2]):
                    expected.enter(*inner)
                    assert state() == expected.state, f"{where}: inner state {state()}, expected {expected.state}"
                    y_inner = traced_linear(x, x64, shared, expected, "shared", f"{where}, inner")
                    inner_dtype = expected.compute_dtype
                expected.exit()
                assert state() == expected.state, f"{where}: state after the inner region {state()}"

                if rng.random() < 0.5:  # backward inside the region
                    (grad_shared,) = tp.autograd.grad(y_shared.float().sum(), [shared])
            if grad_shared is None:  # backward after the region
                (grad_shared,) = tp.autograd.grad(y_shared.float().sum(), [shared])
            expected.exit()
            assert state() == expected.state, f"{where}: state after the region {state()}"
            check_weight_grad(grad_shared, x64, outer_dtype, f"{where}, shared")
            (grad_inner,) = tp.autograd.grad(y_inner.float().sum(), [shared])
            check_weight_grad(grad_inner, x64, inner_dtype, f"{where}, inner")
            own.grad = None
            y_own.float().sum().backward()
            check_weight_grad(own.grad, x64, outer_dtype, f"{where}, own")
    except BaseException:  # noqa: BLE001  (reported by the main thread)
        errors.append(f"thread {index}, region {region}:\n{traceback.format_exc()}")
        start.abort()


@pytest.fixture
def frequent_thread_switches():
    """Switch threads every 0.1 ms instead of every 5 ms, so regions interleave at many more points."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(before)


def test_threads_in_nested_autocast_regions_see_only_their_own_state_and_casts(frequent_thread_switches):
    shared = tp.tensor(np.random.default_rng(100).uniform(-1, 1, (OUT, IN)).astype(np.float32), requires_grad=True)
    before = shared.detach().clone()
    start = threading.Barrier(THREADS)
    errors = []
    threads = [threading.Thread(target=work, args=(i, shared, REGIONS, start, errors)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(600, REGIONS * 0.5))
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, f"{len(errors)} thread(s) failed; the first:\n{errors[0]}"
    assert state() == (False, bf16, True)
    assert tp._C._amp._cache_size() == 0
    assert shared.grad is None and shared.equal(before)  # autograd.grad accumulates nothing

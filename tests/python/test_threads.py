"""Intra-op threads (set_num_threads) and Python threads running tensorplay ops at the same time."""

import threading
import time

import numpy as np
import pytest
import torch

import tensorplay as tp


def test_get_num_threads_is_positive():
    assert isinstance(tp.get_num_threads(), int)
    assert tp.get_num_threads() >= 1


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_set_num_threads(n, restore_threads):
    tp.set_num_threads(n)
    assert tp.get_num_threads() == n


@pytest.mark.parametrize("n", [0, -1])
def test_set_num_threads_rejects_non_positive(n, restore_threads):
    with pytest.raises(RuntimeError):
        torch.set_num_threads(n)
    with pytest.raises(RuntimeError):
        tp.set_num_threads(n)


RNG = np.random.default_rng(7)
FLOATS = RNG.standard_normal(3_000_001).astype(np.float32)  # odd length: the last chunk is ragged
INTS = RNG.integers(-10 ** 9, 10 ** 9, 3_000_001)
MATRIX_A = RNG.standard_normal((300, 257)).astype(np.float32)
MATRIX_B = RNG.standard_normal((257, 311)).astype(np.float32)
GRID = RNG.standard_normal((1001, 999)).astype(np.float32)

# name -> (computation, whether thread counts must agree bit for bit)
COMPUTATIONS = {
    "sum_float32": (lambda: tp.from_numpy(FLOATS).sum(), False),
    "mean_float32": (lambda: tp.from_numpy(FLOATS).mean(), False),
    "sum_dim1": (lambda: tp.from_numpy(GRID).sum(dim=1), False),
    "sum_dim0": (lambda: tp.from_numpy(GRID).sum(dim=0), False),
    "sum_int64": (lambda: tp.from_numpy(INTS).sum(), True),
    "max_argmax": (lambda: tp.stack([tp.from_numpy(FLOATS).max(), tp.from_numpy(FLOATS).argmax().float()]), True),
    "matmul": (lambda: tp.from_numpy(MATRIX_A) @ tp.from_numpy(MATRIX_B), False),
    "exp": (lambda: tp.from_numpy(FLOATS).exp(), True),
    "add_mul": (lambda: tp.from_numpy(FLOATS) * 3 + tp.from_numpy(FLOATS), True),
    "to_bfloat16": (lambda: tp.from_numpy(FLOATS).to(tp.bfloat16).float(), True),
    "transpose_contiguous": (lambda: tp.from_numpy(GRID).t().contiguous(), True),
    "softmax": (lambda: tp.softmax(tp.from_numpy(GRID), dim=1), False),
    "cumsum_int": (lambda: tp.from_numpy(INTS).cumsum(0), True),
}

# The same computations in float64 NumPy, the reference for the tolerant ones.
REFERENCES = {
    "sum_float32": lambda: FLOATS.astype(np.float64).sum(),
    "mean_float32": lambda: FLOATS.astype(np.float64).mean(),
    "sum_dim1": lambda: GRID.astype(np.float64).sum(axis=1),
    "sum_dim0": lambda: GRID.astype(np.float64).sum(axis=0),
    "matmul": lambda: MATRIX_A.astype(np.float64) @ MATRIX_B.astype(np.float64),
    "softmax": lambda: torch.softmax(torch.from_numpy(GRID).double(), dim=1).numpy(),
}


def _numpy(t):
    return np.array(t.numpy(), dtype=np.float64)


@pytest.mark.parametrize("name", list(COMPUTATIONS))
def test_one_and_two_threads_agree(name, restore_threads):
    compute, exact = COMPUTATIONS[name]
    tp.set_num_threads(1)
    one = _numpy(compute())
    tp.set_num_threads(2)
    two = _numpy(compute())
    if exact:
        np.testing.assert_array_equal(one, two)
    else:
        np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-4)
    if name in REFERENCES:
        np.testing.assert_allclose(two, REFERENCES[name](), rtol=1e-4, atol=1e-3)


def test_int64_sum_is_exact():
    assert tp.from_numpy(INTS).sum().item() == int(INTS.sum())


# ---- Python threads ----

def _work(seed):
    """A mix of ops on tensors private to one thread; returns everything it computed, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    a = tp.from_numpy(rng.standard_normal((128, 96)).astype(np.float32))
    b = tp.from_numpy(rng.standard_normal((96, 64)).astype(np.float32))
    x = tp.from_numpy(rng.integers(-1000, 1000, 200_000))
    # A convolution reorders its operands into oneDNN's blocked layouts through buffers of the call's own.
    image = tp.from_numpy(rng.standard_normal((4, 3, 12, 12)).astype(np.float32))
    kernel, bias = (tp.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in ((16, 3, 3, 3), (16,)))
    product = a @ b
    return [_numpy(product), _numpy(tp.nn.functional.conv2d(image, kernel, bias)), _numpy(product.sum(dim=0)),
            _numpy((a.exp() * 2 - a).t().contiguous()),
            _numpy(x.sum()), _numpy((x * 3) // 7), _numpy(tp.cat([a, a * 2])[::3]), _numpy(x.to(tp.int32).cumsum(0))]


def test_python_threads_running_ops_concurrently_get_correct_results():
    seeds = list(range(8))
    expected = {seed: _work(seed) for seed in seeds}
    results, errors = {}, []

    def worker(seed):
        try:
            for _ in range(10):
                results[seed] = _work(seed)
                for got, want in zip(results[seed], expected[seed]):
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        except Exception as e:  # reported by the main thread
            errors.append((seed, e))

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert not errors, errors[0]
    assert set(results) == set(seeds)


def test_python_threads_writing_disjoint_views_of_one_tensor():
    shared = tp.zeros(8, 100_000)

    def worker(row):
        for _ in range(20):
            shared[row].add_(1)
            shared[row].mul_(1)

    threads = [threading.Thread(target=worker, args=(row,)) for row in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    np.testing.assert_array_equal(shared.numpy(), np.full((8, 100_000), 20.0, dtype=np.float32))


# Each takes 0.04 s or more on one thread, long enough to see a stall. (softmax's SIMD rows take
# 12 ms for these 20M floats on Zen 4: along dim 0 the rows are strided, and it takes 0.25 s.)
LONG_OPS = {
    "matmul": lambda a, x: a @ a,
    "sin": lambda a, x: x.sin(),
    "pow": lambda a, x: x.pow(2.5),
    "pow_operator": lambda a, x: x ** 2.5,  # Python's operators release it for large operands only
    "softmax": lambda a, x: tp.softmax(x.view(4000, 5000), dim=0),
}


@pytest.mark.parametrize("name", list(LONG_OPS))
def test_kernel_releases_the_gil(name, restore_threads):
    # While one long op runs in a worker thread, the main thread must keep running Python code. If the op held the
    # GIL the main thread would stall for the whole op, leaving one gap as long as the op in its timestamps.
    tp.set_num_threads(1)
    a = tp.rand(2048, 2048)
    x = tp.rand(20_000_000)
    op = LONG_OPS[name]
    op(a, x)  # warm up
    window = {}
    done = threading.Event()

    def worker():
        window["start"] = time.perf_counter()
        op(a, x)
        window["end"] = time.perf_counter()
        done.set()

    stamps = []
    thread = threading.Thread(target=worker)
    thread.start()
    while not done.is_set():
        stamps.append(time.perf_counter())
    thread.join()
    start, end = window["start"], window["end"]
    inside = [start] + [s for s in stamps if start < s < end] + [end]
    longest_stall = max(b - a for a, b in zip(inside, inside[1:]))
    assert end - start > 0.02, "the op is too short to tell"
    assert longest_stall < 0.5 * (end - start), \
        f"the main thread stalled {longest_stall * 1e3:.1f} ms of the op's {(end - start) * 1e3:.1f} ms"

"""tensorplay.save to a path, killed with SIGKILL at random moments. save writes a temporary file in
the same directory and renames it into place, so whenever the process dies the path must hold one
complete checkpoint: the one before the interrupted save or the one it was writing, never a mix or
a prefix. A kill skips save's clean-up, so the temporary file of the interrupted save stays behind
(hidden, with a random name); later saves and loads must not be affected by such leftovers.

test_serialization.py covers the same promise for exceptions raised midway through a save."""

import io
import os
import random
import re
import signal
import subprocess
import sys
import time

import numpy as np

import tensorplay as tp

# Four tensors of 1.5M float32 each: 24 MB, tens of milliseconds a save, so kills land mid-write.
LARGE_TENSORS = 4
LARGE_NUMEL = 1_500_000

# The child saves a small checkpoint, says "ready", then saves large checkpoints to the same path
# in a loop, printing each step once its save has returned.
CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from test_reliability_saves import large_checkpoint, small_checkpoint
import tensorplay as tp
path, trial = sys.argv[2], int(sys.argv[3])
tp.save(small_checkpoint(trial), path)
print("ready", flush=True)
step = 0
while True:
    step += 1
    tp.save(large_checkpoint(trial, step), path)
    print(step, flush=True)
"""

_LARGE_CACHE = {}


def small_checkpoint(trial):
    return {"trial": trial, "step": 0, "w": tp.arange(10).float() + trial}


def large_checkpoint(trial, step):
    """Distinct values in every tensor and trial, so a file mixing two saves can't pass for one."""
    if trial not in _LARGE_CACHE:
        _LARGE_CACHE[trial] = [tp.arange(LARGE_NUMEL).float() * (i + 1) + trial for i in range(LARGE_TENSORS)]
    return {"trial": trial, "step": step, "layers": _LARGE_CACHE[trial],
            "marker": tp.full((1000,), float(step)), "lr": 0.1 / step}


def assert_same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, tp.Tensor):
        assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        assert np.array_equal(a.numpy(), b.numpy())
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    else:
        assert a == b


def size_of(obj):
    buffer = io.BytesIO()
    tp.save(obj, buffer)
    return len(buffer.getvalue())


def temporary_files(directory, name):
    pattern = re.compile(rf"\.{re.escape(name)}\.[0-9a-f]{{32}}\.tmp")
    names = sorted(os.listdir(directory))
    assert all(n == name or pattern.fullmatch(n) for n in names), f"unexpected files: {names}"
    return {n for n in names if n != name}


def size_or_zero(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:  # renamed into place meanwhile
        return 0


def kill_while_saving(path, trial, rng, mid_write):
    """Starts a saving child and kills it: mid_write, once the file it is writing has some but not
    all of its bytes; otherwise after a random delay. Returns the steps the child reported saved."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, os.path.dirname(__file__), str(path), str(trial)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n", child.stderr.read()
        if mid_write:
            full = size_of(large_checkpoint(trial, 1))
            before = temporary_files(path.parent, path.name)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                # Whichever file the child is writing (a new temporary one, or the path itself if
                # save were not atomic) is past its header and not yet half done.
                names = (temporary_files(path.parent, path.name) - before) | {path.name}
                if any(4096 < size_or_zero(path.parent / n) < full // 2 for n in names):
                    break
            else:
                raise AssertionError("no write in progress seen")
        else:
            time.sleep(rng.uniform(0, 0.4))
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, err  # killed, not dead of an error of its own
    return [int(line) for line in out.split()]


def test_save_killed_at_random_moments_leaves_one_complete_checkpoint(tmp_path):
    path = tmp_path / "ckpt.tp"
    rng = random.Random(20240601)
    partial_leftovers = 0
    # Alternating kinds of kill: random moments, and moments chosen to fall inside a write.
    for trial, mid_write in enumerate([True, False, True, False, False]):
        leftovers_before = temporary_files(tmp_path, path.name)
        steps = kill_while_saving(path, trial, rng, mid_write)
        last = steps[-1] if steps else 0

        # The path holds the last completed save or the one that was being renamed into place.
        loaded = tp.load(path)
        assert loaded["trial"] == trial
        assert loaded["step"] in (last, last + 1), (loaded["step"], last)
        expected = small_checkpoint(trial) if loaded["step"] == 0 else large_checkpoint(trial, loaded["step"])
        assert_same(expected, loaded)
        assert os.path.getsize(path) == size_of(expected)

        # At most the interrupted save's own temporary file is new; earlier ones are untouched.
        leftovers = temporary_files(tmp_path, path.name)
        assert leftovers_before <= leftovers and len(leftovers - leftovers_before) <= 1
        for name in leftovers - leftovers_before:
            try:
                tp.load(tmp_path / name)
            except (ValueError, RuntimeError):  # a partial archive is a RuntimeError, as in PyTorch
                partial_leftovers += 1
        _LARGE_CACHE.pop(trial, None)
    # The kills did interrupt writes: otherwise this test would prove nothing.
    assert partial_leftovers >= 1

    # Leftover temporary files confuse neither a later save nor a later load.
    leftovers = temporary_files(tmp_path, path.name)
    final = {"final": tp.ones(3), "step": 99}
    tp.save(final, path)
    assert_same(final, tp.load(path))
    assert temporary_files(tmp_path, path.name) == leftovers

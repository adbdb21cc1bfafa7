"""Case 12: distributed data-parallel training on one machine, Gloo over loopback. The child starts
its ranks as processes of benchmarks/cases/distributed_worker.py (one library each, one thread
each, OMP_NUM_THREADS=1), on 127.0.0.1 with a free port, and reads rank 0's figures:

- all_reduce (sum) of a float32 tensor between 2 ranks, 4 KiB to 64 MiB: GB/s, the tensor's
  bytes over the seconds of one call (the median of 5 blocks of calls, after warm-up);
- one DistributedDataParallel training step of the benchmark MLP (benchmarks/cases/models.py:
  zero_grad, forward, cross-entropy, backward, SGD with momentum), batch 256 per rank, 2 ranks x 1
  thread: ms, the median over the steps after warm-up;
- throughput scaling: samples/s of those 2 ranks (both ranks' samples) over samples/s of the
  plain step (the same model not wrapped in DDP) in 1 process x 1 thread, batch 256: what a second
  rank buys, DDP's own cost included;
- the DDP step again with fp16_compress_hook (gradients on the wire in float16; PyTorch's
  bf16_compress_hook refuses Gloo, its fp16 one runs).
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.cases.distributed_worker import BATCH
from benchmarks.report import Row, check

TITLE = "12. Distributed data parallel, Gloo on loopback, one thread per rank"

ROOT = Path(__file__).resolve().parents[2]
SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20)
# Ratio targets against PyTorch: all_reduce at least as fast, the DDP step at most 0.9 of its time.
ALL_REDUCE_TARGET = 1.0
STEP_TARGET = 0.9
SCALING_TARGET = 1.7  # 2 ranks' samples/s over 1 rank's, tensorplay's own
COMPRESS_HOOK = "fp16_compress_hook"
# One launch of the ranks ends after this; a rank that fails ends the others at once.
LAUNCH_TIMEOUT_S = 300


def children(quick):
    if quick:
        return [{"task": "all_reduce", "sizes": list(SIZES), "min_time": 0.05, "blocks": 3},
                {"task": "training", "warmup": 3, "min_time": 0.2},
                {"task": "training", "warmup": 3, "min_time": 0.2, "comm_hook": COMPRESS_HOOK}]
    return [{"task": "all_reduce", "sizes": list(SIZES), "min_time": 1.0, "blocks": 5},
            {"task": "training", "warmup": 10, "min_time": 2.0},
            {"task": "training", "warmup": 10, "min_time": 2.0, "comm_hook": COMPRESS_HOOK}]


def run(lib_name, params):
    if params["task"] == "all_reduce" or "comm_hook" in params:
        return launch(lib_name, 2, params)
    return {**launch(lib_name, 1, params), **launch(lib_name, 2, params)}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(lib_name, world_size, params):
    """Runs world_size ranks of the worker and returns rank 0's figures; raises with the error of
    the first rank that failed (the others are killed, so none waits on it until its timeout)."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE=str(world_size),
               OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    cmd = [sys.executable, "-m", "benchmarks.cases.distributed_worker", lib_name, json.dumps(params)]
    # Files, not pipes: a rank that writes much to stderr must not block while we wait on another.
    outs = [tempfile.TemporaryFile(mode="w+") for _ in range(world_size)]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=dict(env, RANK=str(rank)), stdout=out, stderr=subprocess.STDOUT)
             for rank, out in enumerate(outs)]
    deadline, timed_out, killed = time.monotonic() + LAUNCH_TIMEOUT_S, False, set()
    try:
        while any(p.poll() is None for p in procs) and not any(p.returncode for p in procs):
            timed_out = time.monotonic() > deadline
            if timed_out:
                break
            time.sleep(0.05)
    finally:
        for rank, p in enumerate(procs):
            if p.poll() is None:
                p.kill()
                p.wait()
                killed.add(rank)
    texts = []
    for out in outs:
        out.seek(0)
        texts.append(out.read())
        out.close()
    if timed_out:
        raise RuntimeError(f"{lib_name}, {world_size} ranks: timed out after {LAUNCH_TIMEOUT_S} s")
    for rank, (p, text) in enumerate(zip(procs, texts)):
        if p.returncode and rank not in killed:
            lines = text.strip().splitlines()
            raise RuntimeError(f"{lib_name} rank {rank} of {world_size}: "
                               + (lines[-1] if lines else f"exit status {p.returncode}"))
    lines = [line for line in texts[0].splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{lib_name} rank 0 of {world_size}: no figures")
    return json.loads(lines[-1])


def _size(nbytes):
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def rows(results, machine):
    out = []
    for nbytes in SIZES:
        row = Row(f"all_reduce float32, 2 ranks, {_size(nbytes)}", "GB/s", *results[f"all_reduce {nbytes}"],
                  kind="rate", target=f"ratio <= {ALL_REDUCE_TARGET}")
        row.met = check(row.ratio, lambda r: r <= ALL_REDUCE_TARGET)
        out.append(row)
    one, two = results["step ms 1"], results["step ms 2"]
    step = Row(f"MLP, batch {BATCH} per rank: DDP step, 2 ranks x 1 thread", "ms", *two, kind="cost",
               target=f"ratio <= {STEP_TARGET}")
    step.met = check(step.ratio, lambda r: r <= STEP_TARGET)
    out.append(step)
    rate_one, rate_two = ([BATCH * world * 1e3 / ms if ms else None for ms in step_ms]
                          for world, step_ms in ((1, one), (2, two)))
    out.append(Row(f"MLP, batch {BATCH}: plain step, 1 process x 1 thread", "samples/s", *rate_one, kind="rate"))
    out.append(Row(f"MLP, batch {BATCH} per rank: DDP, 2 ranks x 1 thread", "samples/s", *rate_two, kind="rate"))
    speedup = Row("MLP: 2 ranks' samples/s over 1 process's", "x",
                  *(r2 / r1 if r1 and r2 else None for r1, r2 in zip(rate_one, rate_two)),
                  target=f">= {SCALING_TARGET}x")
    speedup.met = check(speedup.tp, lambda x: x >= SCALING_TARGET)
    out.append(speedup)
    out.append(Row(f"MLP, batch {BATCH} per rank: DDP step with {COMPRESS_HOOK}, 2 ranks x 1 thread", "ms",
                   *results[f"step ms 2 {COMPRESS_HOOK}"], kind="cost"))
    return out

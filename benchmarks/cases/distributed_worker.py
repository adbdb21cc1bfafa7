"""One rank of the distributed case (benchmarks/cases/distributed.py starts them):
`python -m benchmarks.cases.distributed_worker <lib> <json params>`, with MASTER_ADDR, MASTER_PORT,
RANK and WORLD_SIZE in the environment. Imports one library only, as `lib`, on one thread; joins
a Gloo group through env://; rank 0 prints its figures as one JSON line.

params["task"] is "all_reduce" (GB/s by size) or "training" (ms per step of the benchmark MLP:
under DistributedDataParallel when the world has 2 ranks or more, with params["comm_hook"] (a
name in ddp_comm_hooks.default_hooks) when given; plain in a world of 1, whose group only agrees
the step count)."""

import importlib
import json
import statistics
import sys
import time
from datetime import timedelta

from benchmarks.cases import models
from benchmarks.cases.common import load

BATCH = 256  # per rank
# Long enough for a 64 MiB all-reduce on a loaded machine, short enough that a stuck rank ends.
GROUP_TIMEOUT = timedelta(seconds=120)


def agreed_count(lib, dist, seconds_per_call, min_time, lowest=1):
    """How many calls fill min_time, by rank 0's estimate: every rank must run as many
    collectives as the others, so rank 0 decides and broadcasts."""
    count = lib.tensor([max(lowest, int(min_time / seconds_per_call))], dtype=lib.int64)
    dist.broadcast(count, src=0)
    return int(count.item())


def all_reduce(lib, dist, params):
    """GB/s of all_reduce (sum) by tensor size: bytes of the tensor / seconds per call, the median
    of `blocks` blocks of calls that each start after a barrier."""
    figures = {}
    for nbytes in params["sizes"]:
        t = lib.zeros(nbytes // 4)  # float32 zeros: the repeated sums stay zero
        dist.all_reduce(t)  # warm-up: the connections' buffers, the pages
        t0 = time.perf_counter()
        for _ in range(2):
            dist.all_reduce(t)
        block_time = params["min_time"] / params["blocks"]
        calls = agreed_count(lib, dist, (time.perf_counter() - t0) / 2, block_time)
        per_call = []
        for _ in range(params["blocks"]):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(calls):
                dist.all_reduce(t)
            per_call.append((time.perf_counter() - t0) / calls)
            # Two calls can be far off (one slow thread wake-up more or less): each block sets the next.
            calls = agreed_count(lib, dist, per_call[-1], block_time)
        figures[f"all_reduce {nbytes}"] = nbytes / statistics.median(per_call) / 1e9
    return figures


def training(lib, dist, world_size, rank, params):
    """Median ms of one step (zero_grad, forward, cross-entropy, backward, SGD with momentum) of
    the MLP on this rank's batch of 256, after warm-up (which covers DDP's bucket rebuild)."""
    lib.manual_seed(0)
    model = models.mlp(lib)
    hook = params.get("comm_hook")
    if world_size > 1:
        model = lib.nn.parallel.DistributedDataParallel(model)
        if hook:
            model.register_comm_hook(None, getattr(default_hooks(lib), hook))
    step = models.training_step(lib, model, use_autocast=False)
    x, y = models.random_batch(lib, "mlp", BATCH, seed=rank)
    for _ in range(params["warmup"]):
        step(x, y)
    t0 = time.perf_counter()
    step(x, y)
    steps = agreed_count(lib, dist, time.perf_counter() - t0, params["min_time"], lowest=5)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step(x, y)
        times.append(time.perf_counter() - t0)
    return {f"step ms {world_size}" + (f" {hook}" if hook else ""): statistics.median(times) * 1e3}


def default_hooks(lib):
    return importlib.import_module(lib.__name__ + ".distributed.algorithms.ddp_comm_hooks.default_hooks")


def main():
    lib_name, params = sys.argv[1], json.loads(sys.argv[2])
    lib = load(lib_name, {"threads": 1})
    dist = lib.distributed
    dist.init_process_group("gloo", init_method="env://", timeout=GROUP_TIMEOUT)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if params["task"] == "all_reduce":
        figures = all_reduce(lib, dist, params)
    else:
        figures = training(lib, dist, world_size, rank, params)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()

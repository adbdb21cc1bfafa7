"""DistributedDataParallel: two ranks, each training on its half of every batch, end with the
parameters of one process trained on the whole batch (SGD, Adam, autocast with GradScaler, no_sync
accumulation, unused parameters, 16-bit communication hooks); buckets as PyTorch's DDP makes them."""

import json

import numpy as np
import pytest

import tensorplay as tp
import tensorplay.distributed as dist
from distributed_helpers import launch

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="tensorplay was built without Gloo")

# What every scenario trains: a small MLP, 5 steps, batches of 8 split 4 + 4 between the ranks.
COMMON = """
import json
import tensorplay as tp
from tensorplay.nn.parallel import DistributedDataParallel as DDP
from tensorplay.distributed.algorithms.ddp_comm_hooks import default_hooks

class Net(tp.nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.fc1, self.fc2 = tp.nn.Linear(8, 32), tp.nn.Linear(32, 4)
        self.extra = tp.nn.Linear(32, 4) if extra else None

    def forward(self, x, use_extra=False):
        h = tp.relu(self.fc1(x))
        return self.fc2(h) + (self.extra(h) if use_extra else 0)

def batches(steps=5):
    g = tp.Generator().manual_seed(1)
    return [(tp.randn(8, 8, generator=g), tp.randn(8, 4, generator=g)) for _ in range(steps)]

def make(extra=False):
    tp.manual_seed(0)
    return Net(extra)

def train(model, optimizer_name, rank, world, wrap=None, autocast=False, accumulate=1, use_extra=lambda s: False,
          steps=5):
    forward = wrap(model) if wrap else model
    opt = (tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer_name == "sgd"
           else tp.optim.Adam(model.parameters(), lr=0.01))
    scaler = tp.amp.GradScaler("cpu", init_scale=256.0) if autocast else None
    share = 8 // world
    data = batches(steps * accumulate)
    for step in range(steps):
        opt.zero_grad()
        for micro in range(accumulate):
            x, y = data[step * accumulate + micro]
            x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
            sync = micro == accumulate - 1 or wrap is None
            context = forward.no_sync() if not sync else __import__("contextlib").nullcontext()
            with context:
                with tp.autocast("cpu", enabled=autocast):
                    loss = tp.nn.functional.mse_loss(forward(x, use_extra(step)), y)
                (scaler.scale(loss) if scaler else loss).backward()
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
    return {name: p.detach().tolist() for name, p in model.named_parameters()}
"""

SCENARIOS = {
    "sgd": dict(optimizer_name="sgd"),
    "adam": dict(optimizer_name="adam"),
    "sgd_autocast": dict(optimizer_name="sgd", autocast=True),
    "adam_no_sync": dict(optimizer_name="adam", accumulate=2),
}


def run_scenarios(tmp_path, body, world=2, env=None):
    results = launch(tmp_path, COMMON + body, world, env=env)
    for code, out, err in results:
        assert code == 0, err
    return [json.loads(out.splitlines()[-1]) for _, out, _ in results]


def one_process(**options):
    namespace = {}
    exec(COMMON, namespace)  # noqa: S102  (the same code the ranks run, in this process, on the whole batch)
    return namespace["train"](namespace["make"](options.pop("extra", False)), rank=0, world=1, **options)


def assert_close(theirs, ours, tolerance, scenario=""):
    assert theirs.keys() == ours.keys()
    for name in theirs:
        np.testing.assert_allclose(np.array(ours[name]), np.array(theirs[name]), rtol=tolerance, atol=tolerance,
                                   err_msg=f"{scenario} {name}")


def test_two_ranks_train_as_one_process_on_the_whole_batch(tmp_path):
    body = f"""
tp.distributed.init_process_group("gloo")
scenarios = {SCENARIOS!r}
print(json.dumps({{name: train(make(), rank=rank, world=world, wrap=DDP, **options)
                  for name, options in scenarios.items()}}))
"""
    ranks = run_scenarios(tmp_path, body)
    assert ranks[0] == ranks[1]  # the ranks' parameters agree exactly
    for name, options in SCENARIOS.items():
        # Under autocast each half's weight gradient is a bfloat16 product, rounded before the halves
        # are averaged: bfloat16's tolerance. Otherwise only the order of float32 sums differs.
        assert_close(one_process(**options), ranks[0][name], 1e-2 if options.get("autocast") else 1e-5, name)


def test_unused_parameters(tmp_path):
    body = """
tp.distributed.init_process_group("gloo")
result = {}
# Used on even steps only: found and skipped with find_unused_parameters.
result["found"] = train(make(True), "sgd", rank, world, wrap=lambda m: DDP(m, find_unused_parameters=True),
                        use_extra=lambda step: step % 2 == 0)
# Without the flag, the next forward says which parameters got no gradient.
model = DDP(make(True))
model(tp.randn(4, 8)).sum().backward()
try:
    model(tp.randn(4, 8))
except RuntimeError as error:
    result["error"] = str(error)
print(json.dumps(result))
"""
    ranks = run_scenarios(tmp_path, body)
    reference = one_process(optimizer_name="sgd", extra=True, use_extra=lambda step: step % 2 == 0)
    assert_close(reference, ranks[0]["found"], 1e-5)
    error = ranks[1]["error"]
    assert error.startswith("Expected to have finished reduction in the prior iteration before starting a new one.")
    assert "Parameter indices which did not receive grad for rank 1: 4 5" in error
    assert "Parameters which did not receive grad: extra.weight, extra.bias" in error


def test_compression_hooks_stay_within_16_bit_tolerance(tmp_path):
    body = """
tp.distributed.init_process_group("gloo")
def hooked(hook):
    def wrap(model):
        ddp = DDP(model)
        ddp.register_comm_hook(None, hook)
        return ddp
    return wrap
print(json.dumps({"plain": train(make(), "sgd", rank, world, wrap=DDP),
                  "bf16": train(make(), "sgd", rank, world, wrap=hooked(default_hooks.bf16_compress_hook)),
                  "fp16": train(make(), "sgd", rank, world, wrap=hooked(default_hooks.fp16_compress_hook)),
                  "allreduce": train(make(), "sgd", rank, world, wrap=hooked(default_hooks.allreduce_hook))}))
"""
    ranks = run_scenarios(tmp_path, body)
    plain = ranks[0]["plain"]
    assert ranks[0]["allreduce"] == plain
    assert_close(plain, ranks[0]["bf16"], 2e-2)
    assert_close(plain, ranks[0]["fp16"], 2e-3)
    assert ranks[0]["bf16"] != plain  # the gradients did travel in 16 bits


def test_construction_checks_and_broadcasts(tmp_path):
    body = """
tp.distributed.init_process_group("gloo")
tp.manual_seed(rank)  # different weights on each rank: DDP takes rank 0's
model = tp.nn.Sequential(tp.nn.Linear(4, 3), tp.nn.BatchNorm1d(3))
model[1].running_mean.fill_(float(rank))
ddp = DDP(model)
result = {"weight": model[0].weight.tolist(), "running_mean": model[1].running_mean.tolist(),
          "keys": list(ddp.state_dict())[:2], "module": ddp.module is model}
try:
    DDP(tp.nn.Linear(4, 3 + rank))
except RuntimeError as error:
    result["error"] = str(error)
print(json.dumps(result))
"""
    ranks = run_scenarios(tmp_path, body)
    assert ranks[0]["weight"] == ranks[1]["weight"]
    assert ranks[1]["running_mean"] == [0.0, 0.0, 0.0]
    assert ranks[0]["keys"] == ["module.0.weight", "module.0.bias"] and ranks[0]["module"]
    for result in ranks:
        assert result["error"] == ("DistributedDataParallel: the ranks' modules differ: parameter 'weight' is "
                                   "tensorplay.float32[3, 4] on rank 0 but 'weight' is tensorplay.float32[4, 4] on "
                                   "rank 1")


def test_buckets_are_pytorchs(tmp_path):
    """The same module under torch's DDP and ours, one rank each: the same bucket sizes at
    construction and after the rebuild at the second iteration (mixed dtypes, a 1 MiB first bucket)."""
    body = """
import os
import torch

def build(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = lib.nn.Linear(300, 600), lib.nn.Linear(600, 200).double()
            self.c, self.d = lib.nn.Linear(200, 300), lib.nn.Linear(300, 10)

        def forward(self, x):
            return self.d(self.c(self.b(self.a(x).double()).float()))
    return Net()

store = os.environ["STORE"]
torch.distributed.init_process_group("gloo", init_method=f"file://{store}_torch", rank=0, world_size=1)
tp.distributed.init_process_group("gloo", init_method=f"file://{store}_tp", rank=0, world_size=1)
result = {}
for cap in [0.25, 1, 25]:
    for name, lib, wrap in [("torch", torch, torch.nn.parallel.DistributedDataParallel), ("tp", tp, DDP)]:
        model = wrap(build(lib), bucket_cap_mb=cap)
        sizes = [model._get_ddp_logging_data()["bucket_sizes"]]
        for _ in range(2):
            model(lib.randn(2, 300)).sum().backward()
        sizes.append(model._get_ddp_logging_data()["bucket_sizes"])
        result[f"{name} {cap}"] = sizes
print(json.dumps(result))
"""
    [result] = run_scenarios(tmp_path, body, world=1, env={"STORE": str(tmp_path / "store")})
    for cap in [0.25, 1, 25]:
        assert result[f"tp {cap}"] == result[f"torch {cap}"], cap


def test_bucket_assignment_is_pytorchs():
    """tensorplay.distributed._compute_bucket_assignment_by_size against torch's on random tensors of
    mixed dtypes and sizes, with and without an explicit order."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    dtypes = [("float32", 4), ("float64", 8), ("float16", 2), ("int64", 8)]
    for _ in range(500):
        n = int(rng.integers(1, 13))
        kinds = [dtypes[int(k)] for k in rng.integers(0, int(rng.integers(1, 5)), n)]
        sizes = rng.integers(0, 60, n)
        limits = sorted(int(v) for v in rng.choice(np.arange(1, 400), int(rng.integers(1, 4)), replace=False))
        order = [int(i) for i in rng.permutation(n)] if rng.random() < 0.5 else []
        theirs = torch.distributed._compute_bucket_assignment_by_size(
            [torch.empty(int(s), dtype=getattr(torch, k)) for s, (k, _) in zip(sizes, kinds)], limits, [False] * n,
            order)
        ours = dist._compute_bucket_assignment_by_size(
            [tp.empty(int(s), dtype=getattr(tp, k)) for s, (k, _) in zip(sizes, kinds)], limits, [], order)
        assert (ours[0], ours[1]) == (list(theirs[0]), list(theirs[1])), (sizes, kinds, limits, order)


def test_gradient_as_bucket_view(tmp_path):
    body = """
tp.distributed.init_process_group("gloo")
viewed = lambda m: DDP(m, gradient_as_bucket_view=True)
result = {"plain": train(make(), "sgd", rank, world, wrap=DDP), "view": train(make(), "sgd", rank, world, wrap=viewed)}
model = viewed(make())
model(tp.randn(4, 8)).sum().backward()
bucket = model._buckets[0]
result["is_view"] = all(p.grad.data_ptr() == v.data_ptr() for p, v in zip(bucket.params, bucket.views))
print(json.dumps(result))
"""
    ranks = run_scenarios(tmp_path, body)
    assert ranks[0]["view"] == ranks[0]["plain"] and ranks[0]["is_view"]


def test_the_launcher_names_a_rank_killed_mid_training(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(COMMON + """
import os, signal
tp.distributed.init_process_group("gloo")
rank, world = tp.distributed.get_rank(), tp.distributed.get_world_size()
model = DDP(make())
for step in range(100):
    if step == 3 and rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    model(tp.randn(4, 8)).sum().backward()
""")
    result = subprocess.run([sys.executable, "-m", "tensorplay.distributed.run", "--nproc-per-node", "2",
                             "--shutdown-timeout", "5", str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "rank 1 (local_rank 1) was killed by signal SIGKILL" in result.stderr


def test_buckets_start_during_backward_and_results_do_not_depend_on_it(tmp_path):
    """With small buckets, every bucket but the last starts its all-reduce before backward's last
    gradient; without the overlap, all start after it; the parameters are the same."""
    body = """
tp.distributed.init_process_group("gloo")
models = {}
def small_buckets(overlap):
    def wrap(model):
        models[overlap] = ddp = DDP(model, bucket_cap_mb=0.0005)
        ddp._overlap = overlap
        return ddp
    return wrap
result = {"overlap": train(make(), "sgd", rank, world, wrap=small_buckets(True)),
          "serial": train(make(), "sgd", rank, world, wrap=small_buckets(False))}
for overlap, model in models.items():
    events = [name for name, _ in model._timeline]
    result[f"events {overlap}"] = events
print(json.dumps(result))
"""
    ranks = run_scenarios(tmp_path, body)
    assert ranks[0]["overlap"] == ranks[0]["serial"]
    overlapped, serial = ranks[0]["events True"], ranks[0]["events False"]
    last = "backward's last gradient"
    assert len(serial) == len(overlapped) >= 5  # forward, two buckets or more, the last gradient, the end
    assert overlapped.index(last) == len(overlapped) - 3  # only the last bucket starts after it
    assert serial.index(last) == 1

"""Case 11: feeding and checkpointing a training loop. A small CNN trained from a DataLoader whose
dataset applies a per-sample transform in NumPy (normalise, random crop after padding, flip, a few
passes of arithmetic), with num_workers 0 and 2: images/s. And loading a 100 MB state dict that the
same library saved in PyTorch's checkpoint format, read and mapped (mmap=True): seconds."""

import os
import tempfile
import time

import numpy as np

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.report import Row

TITLE = "11. Data pipeline and checkpoints, one intra-op thread"

IMAGES, BATCH = 2048, 64
WORKERS = (0, 2)


def children(quick):
    return [{"images": 512 if quick else IMAGES}]


def _dataset(lib, data):
    from importlib import import_module
    Dataset = import_module(f"{lib.__name__}.utils.data").Dataset

    class Transformed(Dataset):
        def __init__(self, images):
            self.images = images

        def __len__(self):
            return len(self.images)

        def __getitem__(self, i):
            image = (self.images[i] - 0.5) / 0.25
            image = np.pad(image, 2)[i % 4: i % 4 + 28, (3 * i) % 4: (3 * i) % 4 + 28]
            if i % 2:
                image = image[:, ::-1]
            for _ in range(20):  # the arithmetic of a heavier augmentation
                image = np.tanh(image) * 1.01
            return lib.from_numpy(np.ascontiguousarray(image, dtype=np.float32)).unsqueeze(0), i % 10

    return Transformed(data)


def _train(lib, loader):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    start, seen = time.perf_counter(), 0
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        seen += x.shape[0]
    return seen / (time.perf_counter() - start)


def run(lib_name, params):
    lib = load(lib_name, params)
    DataLoader = __import__(f"{lib_name}.utils.data", fromlist=["DataLoader"]).DataLoader
    images = np.random.default_rng(0).random((params["images"], 28, 28), dtype=np.float32)
    figures = {}
    for workers in WORKERS:
        loader = DataLoader(_dataset(lib, images), batch_size=BATCH, shuffle=True, num_workers=workers)
        _train(lib, loader)  # warm: the processes, the allocator, the kernels' plans
        figures[f"train workers={workers}"] = _train(lib, loader)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "state.pt")
        state = {f"layer{i}.weight": lib.randn(1024, 1024) for i in range(25)}  # 25 x 4 MB
        lib.save(state, path)
        del state
        figures["load"] = seconds_per_call(lambda: lib.load(path), min_time=1.0)
        figures["load mmap"] = seconds_per_call(lambda: lib.load(path, mmap=True), min_time=0.5)
    return figures


def rows(results, machine):
    out = [Row(f"CNN trained from a DataLoader, per-sample NumPy transform, num_workers={w}", "images/s",
               *results[f"train workers={w}"], kind="rate") for w in WORKERS]
    out.append(Row("load a 100 MB state dict (PyTorch's format)", "s", *results["load"], kind="cost"))
    out.append(Row("  the same with mmap=True", "s", *results["load mmap"], kind="cost"))
    return out

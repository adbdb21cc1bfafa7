"""Case 6: one epoch of Fashion-MNIST with the MLP at batch 128 (the seed's loop, SGD with
momentum), in float32 and under autocast, one thread: seconds for the 60,000 training images and
the test accuracy on the 10,000 test images after it. Both libraries get the same normalised
images in the same shuffled order, read here with NumPy so that the PyTorch child never imports
tensorplay."""

import gzip
import os
import time

import numpy as np

from benchmarks.cases import models
from benchmarks.cases.common import load
from benchmarks.report import Row

TITLE = "6. One epoch of Fashion-MNIST"

DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 128
MEAN, STD = 0.2860, 0.3530  # of the training images, scaled to [0, 1]


def children(quick):
    if quick:  # a tenth of the data, both modes in one process
        return [{"modes": ["float32", "autocast"], "limit": 6000}]
    # The slowest case (PyTorch's emulated bfloat16 steps): two rounds are enough.
    return [{"modes": [mode], "limit": None, "repeats": 2} for mode in ("float32", "autocast")]


def read_idx(name):
    """The array in a gzipped IDX file of the dataset: images (N, 28, 28) or labels (N,), uint8.
    The header is 4 magic bytes then one 4-byte size per dim (the fourth magic byte is the dim count)."""
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _split(prefix, limit):
    images = read_idx(f"{prefix}-images-idx3-ubyte.gz")[:limit]
    labels = read_idx(f"{prefix}-labels-idx1-ubyte.gz")[:limit]
    return ((images.reshape(len(images), -1) / 255 - MEAN) / STD).astype(np.float32), labels.astype(np.int64)


def run(lib_name, params):
    lib = load(lib_name, params)
    train_x, train_y = _split("train", params["limit"])
    test_x, test_y = _split("t10k", params["limit"])
    order = np.random.default_rng(0).permutation(len(train_x))
    x, y = lib.from_numpy(train_x[order]), lib.from_numpy(train_y[order])
    figures = {}
    for mode in params["modes"]:
        seconds, accuracy = _epoch(lib, x, y, test_x, test_y, use_autocast=mode == "autocast")
        figures.update({f"epoch {mode}": seconds, f"accuracy {mode}": accuracy, "images": len(x)})
    return figures


def _epoch(lib, x, y, test_x, test_y, use_autocast):
    """Seconds for one pass over (x, y) from fresh weights, and the test accuracy after it, in %."""
    lib.manual_seed(0)
    model = models.mlp(lib)
    step = models.training_step(lib, model, use_autocast, lr=0.01)
    start = time.perf_counter()
    for i in range(0, len(x), BATCH):
        step(x[i:i + BATCH], y[i:i + BATCH])
    seconds = time.perf_counter() - start

    correct = 0
    with lib.no_grad(), lib.autocast("cpu", enabled=use_autocast):
        for i in range(0, len(test_x), 1000):
            logits = model(lib.from_numpy(test_x[i:i + 1000]))
            correct += int((logits.argmax(-1) == lib.from_numpy(test_y[i:i + 1000])).sum().item())
    return seconds, 100 * correct / len(test_x)


def rows(results, machine):
    out, images = [], int(results["images"][0] or 60000)
    for mode in ("float32", "autocast"):
        out.append(Row(f"Fashion-MNIST epoch ({images} images), MLP batch {BATCH}, {mode}, 1 thread", "s",
                       *results[f"epoch {mode}"], kind="cost"))
        out.append(Row(f"  test accuracy after it, {mode}", "%", *results[f"accuracy {mode}"]))
    return out

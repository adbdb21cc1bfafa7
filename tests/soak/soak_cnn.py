"""Soak test: many training steps of a small CNN under CPU autocast, watching resident memory. A leak
per step (a graph kept alive, a cache entry never freed, a buffer never returned) is invisible in a
short test and shows here as steady growth of RSS.

    .venv/bin/python tests/soak/soak_cnn.py [--steps 10000] [--sample-every 200] [--tolerance-mb 8]
                                            [--batch 16] [--threads N]      (or TP_SOAK_STEPS=N)

Samples VmRSS from /proc/self/status every --sample-every steps, prints first/last/max, and exits
with status 1 if, after the warm-up (the first --warmup steps, default a tenth), RSS rises more than
--tolerance-mb above its value at the end of the warm-up. `make soak` runs the full length;
tests/python/test_reliability_soak.py runs a short one.

It lives with the tests rather than in benchmarks/ because it passes or fails; it doesn't time
anything.
"""

import argparse
import os
import sys

import numpy as np

import tensorplay as tp
import tensorplay.nn as nn
import tensorplay.nn.functional as F

# N = batch, C = channels, H = W = image side. Input N x 1 x 16 x 16, ten classes.
SIDE, CLASSES = 16, 10


class SmallCNN(nn.Module):
    """(conv 3x3 - relu - maxpool 2) x 2, then linear: 1x16x16 -> 8x8x8 -> 16x4x4 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * (SIDE // 4) ** 2, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.reshape(x.shape[0], -1))


def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def batches(count, size, seed):
    """A fixed synthetic data set: an image's class is the row band that is brightest, except for
    a third of the labels, which are random, so the loss keeps the gradients busy for long."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        images = rng.uniform(0, 1, (size, 1, SIDE, SIDE)).astype(np.float32)
        labels = rng.integers(0, CLASSES, size)
        for i, label in enumerate(labels):
            row = label * SIDE // CLASSES
            images[i, 0, row:row + 2] += 1.0
        noisy = rng.random(size) < 1 / 3
        labels[noisy] = rng.integers(0, CLASSES, noisy.sum())
        out.append((tp.tensor(images), tp.tensor(labels)))
    return out


def train(steps, sample_every, batch=16, seed=0, leak=False, log=print):
    """Trains for steps steps; returns [(step, rss_kb)] sampled after step 0 and every sample_every
    steps, and the first and last losses. leak keeps every step's loss and graph alive, which is
    what the check must catch."""
    tp.manual_seed(seed)
    model = SmallCNN()
    optimizer = tp.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    data = batches(32, batch, seed)
    kept, samples, losses = [], [], []
    for step in range(steps):
        x, y = data[step % len(data)]
        optimizer.zero_grad()
        with tp.autocast("cpu"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if leak:
            kept.append(loss)
        if step == 0 or (step + 1) % sample_every == 0 or step == steps - 1:
            losses.append(loss.item())
            samples.append((step + 1, rss_kb()))
            log(f"step {step + 1:6d}  loss {losses[-1]:.4f}  rss {samples[-1][1] / 1024:8.1f} MiB")
    return samples, losses[0], losses[-1]


def growth_after_warmup(samples, warmup):
    """(baseline, peak) in KiB: RSS at the first sample at or past warmup steps, and the most it
    reached after that."""
    after = [rss for step, rss in samples if step >= warmup]
    if len(after) < 2:
        raise ValueError(f"soak: fewer than two RSS samples after the warm-up of {warmup} steps")
    return after[0], max(after[1:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=int(os.environ.get("TP_SOAK_STEPS", "10000")))
    parser.add_argument("--sample-every", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=None, help="steps before the baseline (default: steps / 10)")
    parser.add_argument("--tolerance-mb", type=float, default=8.0)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads (default: tensorplay's)")
    parser.add_argument("--leak", action="store_true", help=argparse.SUPPRESS)  # to test the check itself
    args = parser.parse_args(argv)
    warmup = args.warmup if args.warmup is not None else args.steps // 10
    if args.threads is not None:
        tp.set_num_threads(args.threads)

    samples, first_loss, last_loss = train(args.steps, args.sample_every, args.batch, leak=args.leak)
    baseline, peak = growth_after_warmup(samples, warmup)
    rss = [r for _, r in samples]
    growth_mb = (peak - baseline) / 1024
    print(f"soak: {args.steps} steps of batch {args.batch} on {tp.get_num_threads()} intra-op thread(s), "
          f"loss {first_loss:.4f} -> {last_loss:.4f}; RSS MiB first {rss[0] / 1024:.1f}, after warm-up ({warmup} "
          f"steps) {baseline / 1024:.1f}, last {rss[-1] / 1024:.1f}, max {max(rss) / 1024:.1f}; growth after warm-up "
          f"{growth_mb:+.1f} MiB (tolerance {args.tolerance_mb} MiB)")
    if growth_mb > args.tolerance_mb:
        print("soak: FAIL: resident memory grew after the warm-up", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

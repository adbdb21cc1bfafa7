"""Train a small CNN on Fashion-MNIST under autocast, and see what mixed precision buys.

    python examples/fashion_mnist.py                 # train under autocast (bfloat16 on cpu)
    python examples/fashion_mnist.py --compare       # float32 and autocast from the same seed
    python examples/fashion_mnist.py --eval-only --checkpoint fashion_mnist.tp

The training loop is PyTorch's autocast recipe, unchanged: zero_grad, then the forward pass and
the loss inside `tensorplay.autocast(device_type=...)`, then backward and the optimizer step
outside it. The model and the optimizer stay in float32; autocast runs the convolutions and the
linear layers in bfloat16 (float16 on cuda) and the loss in float32.
"""

import argparse
import os
import sys
import time

import tensorplay
import tensorplay.nn as nn
import tensorplay.nn.functional as F
from tensorplay.utils.data import DataLoader, TensorDataset
from tensorplay.utils.data.datasets import FashionMNIST

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
# The training set's pixel mean and standard deviation (of values scaled to [0, 1]).
MEAN, STD = 0.2860, 0.3530


class Net(nn.Module):
    """Two conv + pool blocks and two linear layers: 28x28 -> 26 -> 13 -> 11 -> 5, 64 channels."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.fc1 = nn.Linear(64 * 5 * 5, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default=DEFAULT_DATA, help="directory with the four Fashion-MNIST IDX files (.gz or not)")
    p.add_argument("--epochs", type=int, default=3, help="passes over the 60,000 training images")
    p.add_argument("--batch-size", type=int, default=128, help="images per optimizer step")
    p.add_argument("--optimizer", choices=["adam", "sgd"], default="adam", help="Adam, or SGD with momentum 0.9")
    p.add_argument("--lr", type=float, default=None, help="learning rate (default: 1e-3 for adam, 0.05 for sgd)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="where the model trains")
    p.add_argument("--dtype", choices=["bfloat16", "float16"], default=None,
                   help="autocast's lower-precision dtype (default: bfloat16 on cpu, float16 on cuda)")
    p.add_argument("--no-amp", action="store_true", help="train in float32, without autocast")
    p.add_argument("--compare", action="store_true",
                   help="train twice from the same seed, float32 and autocast, and compare them")
    p.add_argument("--threads", type=int, default=None, help="intra-op threads (default: one per core)")
    p.add_argument("--seed", type=int, default=0, help="seed for the initial weights and the shuffling")
    p.add_argument("--checkpoint", default="fashion_mnist.tp", help="where the trained weights are saved")
    p.add_argument("--eval-only", action="store_true", help="load --checkpoint and report its test accuracy")
    p.add_argument("--plot", default="fashion_mnist_loss.png", help="where --compare saves its loss curves")
    p.add_argument("--limit", type=int, default=None,
                   help="use only the first LIMIT training and test images (a quick smoke run)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (for logs)")
    return p.parse_args(argv)


def load_data(args):
    """Both splits, normalised once up front: (N, 1, 28, 28) float32 images and int64 labels."""
    def split(train):
        ds = FashionMNIST(args.data, train=train)
        images, labels = ds.data, ds.targets
        if args.limit is not None:
            images, labels = images[:args.limit], labels[:args.limit]
        images = (images.float().unsqueeze(1) / 255 - MEAN) / STD
        return TensorDataset(images, labels)
    return split(True), split(False)


def amp_dtype(args):
    if args.dtype is not None:
        return getattr(tensorplay, args.dtype)
    return tensorplay.get_autocast_dtype(args.device)


def evaluate(model, test_set, args, use_amp):
    model.eval()
    correct = 0
    with tensorplay.no_grad(), tensorplay.autocast(args.device, dtype=amp_dtype(args), enabled=use_amp):
        for images, labels in DataLoader(test_set, batch_size=1000):
            output = model(images.to(args.device))
            correct += int((output.argmax(1) == labels.to(args.device)).sum())
    model.train()
    return correct / len(test_set)


def progress(iterable, args, desc):
    if args.no_progress:
        return iterable
    from tqdm import tqdm
    return tqdm(iterable, desc=desc, unit="batch", leave=True, dynamic_ncols=True)


def train(args, train_set, test_set, use_amp, label):
    """Trains a fresh model from args.seed; returns it and what happened, epoch by epoch."""
    tensorplay.manual_seed(args.seed)
    model = Net().to(args.device)
    lr = args.lr if args.lr is not None else (1e-3 if args.optimizer == "adam" else 0.05)
    if args.optimizer == "adam":
        optimizer = tensorplay.optim.Adam(model.parameters(), lr=lr)
    else:
        optimizer = tensorplay.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                        generator=tensorplay.Generator().manual_seed(args.seed))
    dtype = amp_dtype(args)
    history = {"label": label, "losses": [], "epoch_seconds": [], "accuracy": [], "peak_bytes": 0}
    for epoch in range(1, args.epochs + 1):
        tensorplay.cpu.reset_peak_memory_stats()  # the peak of the training steps, not of evaluation
        bar = progress(loader, args, f"{label} epoch {epoch}/{args.epochs}")
        start, seen, running = time.perf_counter(), 0, None
        for images, labels in bar:
            images, labels = images.to(args.device), labels.to(args.device)
            optimizer.zero_grad()
            with tensorplay.autocast(device_type=args.device, dtype=dtype, enabled=use_amp):
                output = model(images)
                loss = F.cross_entropy(output, labels)
            loss.backward()
            optimizer.step()
            value = loss.item()
            history["losses"].append(value)
            running = value if running is None else 0.95 * running + 0.05 * value
            seen += len(images)
            if not args.no_progress:
                bar.set_postfix(loss=f"{running:.3f}", img_per_s=f"{seen / (time.perf_counter() - start):,.0f}")
        history["epoch_seconds"].append(time.perf_counter() - start)
        history["peak_bytes"] = max(history["peak_bytes"], tensorplay.cpu.max_memory_allocated())
        history["accuracy"].append(evaluate(model, test_set, args, use_amp))
        print(f"{label} epoch {epoch}: test accuracy {100 * history['accuracy'][-1]:.2f}%, "
              f"{len(train_set) / history['epoch_seconds'][-1]:,.0f} images/s", flush=True)
    return model, history


def report(runs, train_size):
    header = f"{'':22}" + "".join(f"{h['label']:>19}" for h in runs)
    rows = [
        ("time per epoch (s)", [f"{sum(h['epoch_seconds']) / len(h['epoch_seconds']):.1f}" for h in runs]),
        ("images/s", [f"{train_size * len(h['epoch_seconds']) / sum(h['epoch_seconds']):,.0f}" for h in runs]),
        ("peak memory (MB)", [f"{h['peak_bytes'] / 2**20:.1f}" for h in runs]),
        ("final training loss", [f"{sum(h['losses'][-50:]) / len(h['losses'][-50:]):.4f}" for h in runs]),
        ("test accuracy (%)", [f"{100 * h['accuracy'][-1]:.2f}" for h in runs]),
    ]
    print()
    print(header)
    for name, values in rows:
        print(f"{name:22}" + "".join(f"{v:>19}" for v in values))


def plot(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for h in runs:
        losses, window = h["losses"], 20
        smooth = [sum(losses[max(0, i - window + 1):i + 1]) / len(losses[max(0, i - window + 1):i + 1])
                  for i in range(len(losses))]
        ax.plot(smooth, label=h["label"])
    ax.set_xlabel("step")
    ax.set_ylabel(f"training loss (mean of {window} steps)")
    ax.set_title("Fashion-MNIST CNN: float32 and autocast from the same seed")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"loss curves saved to {os.path.abspath(path)}")


def main(argv=None):
    args = parse_args(argv)
    if args.device == "cuda" and not tensorplay.cuda.is_available():
        sys.exit("fashion_mnist: --device cuda needs a CUDA build of tensorplay and a GPU; "
                 "this one has none. Use --device cpu.")
    if args.threads is not None:
        tensorplay.set_num_threads(args.threads)
    try:
        train_set, test_set = load_data(args)
    except (RuntimeError, ValueError) as e:
        sys.exit(f"fashion_mnist: cannot read the dataset: {e}")
    precision = f"autocast {amp_dtype(args)}".replace("tensorplay.", "")

    if args.eval_only:
        model = Net().to(args.device)
        model.load_state_dict(tensorplay.load(args.checkpoint))
        accuracy = evaluate(model, test_set, args, use_amp=not args.no_amp)
        print(f"{args.checkpoint}: test accuracy {100 * accuracy:.2f}% on {len(test_set)} images")
        return

    print(f"Fashion-MNIST: {len(train_set)} training and {len(test_set)} test images, {args.device}, "
          f"{tensorplay.get_num_threads()} threads, {args.optimizer}, batch {args.batch_size}")
    configs = [("float32", False), (precision, True)] if args.compare else \
              [("float32" if args.no_amp else precision, not args.no_amp)]
    runs = []
    for label, use_amp in configs:
        model, history = train(args, train_set, test_set, use_amp, label)
        runs.append(history)
    tensorplay.save(model.state_dict(), args.checkpoint)
    print(f"weights saved to {os.path.abspath(args.checkpoint)} "
          f"(check them: python {sys.argv[0]} --eval-only --checkpoint {args.checkpoint})")
    if args.compare:
        report(runs, len(train_set))
        plot(runs, args.plot)


if __name__ == "__main__":
    main()

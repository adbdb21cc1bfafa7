"""Train the Fashion-MNIST CNN of fashion_mnist.py on several processes with DistributedDataParallel,
under autocast, started by the launcher:

    python -m tensorplay.distributed.run --nproc-per-node 2 examples/ddp_fashion_mnist.py

Each process trains on its own share of every epoch (DistributedSampler) with batches of
batch-size / world-size images, so that one step of the job sees batch-size images, as one step of
the one-process example does; DDP averages the gradients across the processes during backward. The
training loop is the reference page's, unchanged: only the model is wrapped and the loader sampled.
"""

import argparse
import sys
import time

import tensorplay
import tensorplay.distributed as dist
import tensorplay.nn.functional as F
from fashion_mnist import DEFAULT_DATA, Net, load_data
from tensorplay.nn.parallel import DistributedDataParallel as DDP
from tensorplay.utils.data import DataLoader
from tensorplay.utils.data.distributed import DistributedSampler


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default=DEFAULT_DATA, help="directory with the four Fashion-MNIST IDX files")
    p.add_argument("--epochs", type=int, default=3, help="passes over the 60,000 training images")
    p.add_argument("--batch-size", type=int, default=128, help="images per optimizer step, all processes together")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=0, help="seed for the initial weights and the shuffling")
    p.add_argument("--limit", type=int, default=None, help="use only the first LIMIT images (a quick run)")
    p.add_argument("--expect-accuracy", type=float, default=None,
                   help="exit with status 1 when the final test accuracy is below this fraction")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        sys.exit(f"ddp_fashion_mnist: --batch-size {args.batch_size} does not split among {world} processes")
    train_set, test_set = load_data(args)

    tensorplay.manual_seed(args.seed)
    model = DDP(Net())
    optimizer = tensorplay.optim.Adam(model.parameters(), lr=args.lr)
    sampler = DistributedSampler(train_set, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler)
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        for images, labels in loader:
            optimizer.zero_grad()
            with tensorplay.autocast(device_type="cpu"):
                output = model(images)
                loss = F.cross_entropy(output, labels)
            loss.backward()
            optimizer.step()
        seconds = time.perf_counter() - start
        accuracy = evaluate(model.module, test_set)
        if rank == 0:
            print(f"epoch {epoch}: test accuracy {100 * accuracy:.2f}%, {len(train_set) / seconds:,.0f} images/s "
                  f"({world} processes)", flush=True)
    dist.destroy_process_group()
    if args.expect_accuracy is not None and accuracy < args.expect_accuracy:
        sys.exit(f"ddp_fashion_mnist: test accuracy {accuracy:.4f} is below {args.expect_accuracy}")


def evaluate(model, test_set):
    """Every process holds the same weights, so each computes the same accuracy on the whole test set."""
    model.eval()
    correct = 0
    with tensorplay.no_grad(), tensorplay.autocast("cpu"):
        for images, labels in DataLoader(test_set, batch_size=1000):
            correct += int((model(images).argmax(1) == labels).sum())
    model.train()
    return correct / len(test_set)


if __name__ == "__main__":
    main()

"""The training step of an MLP in float32 and under CPU autocast (bfloat16), in tensorplay and in
PyTorch on the same machine.

    .venv/bin/python benchmarks/autocast_mlp.py [--batch 256] [--hidden 1024] [--steps 20]

Prints milliseconds per step (median of --repeats runs of --steps steps) and the ratios that
matter: autocast against float32 within each library, and tensorplay against PyTorch. bfloat16
pays off on CPUs with native bfloat16 instructions (AVX512-BF16 or AMX); the script prints
whether this CPU has them.
"""

import argparse
import statistics
import time

import numpy as np
import torch

import tensorplay


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def make_mlp(lib, sizes, weights):
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
        linear = lib.nn.Linear(fan_in, fan_out)
        with lib.no_grad():
            linear.weight.copy_(lib.tensor(weights[i][0]) if lib is tensorplay else torch.from_numpy(weights[i][0]))
            linear.bias.copy_(lib.tensor(weights[i][1]) if lib is tensorplay else torch.from_numpy(weights[i][1]))
        layers.append(linear)
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def step_time(lib, model, x, y, use_autocast, steps, repeats):
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        with lib.autocast("cpu", enabled=use_autocast):
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(3):
        step()  # warm up: allocator, primitive caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - start) / steps * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="0: the libraries' defaults")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        tensorplay.set_num_threads(args.threads)

    sizes = [784, args.hidden, args.hidden, 10]
    rng = np.random.default_rng(0)
    weights = [((rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
               for i, o in zip(sizes, sizes[1:])]
    x = rng.standard_normal((args.batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, 10, args.batch)

    flags = cpu_flags()
    native_bf16 = bool(flags & {"avx512_bf16", "amx_bf16"})
    print(f"MLP {' -> '.join(map(str, sizes))}, batch {args.batch}, threads: tensorplay "
          f"{tensorplay.get_num_threads()}, torch {torch.get_num_threads()}")
    print(f"CPU: avx2={'avx2' in flags} avx512f={'avx512f' in flags} native bfloat16={native_bf16}")

    results = {}
    for name, lib, xs, ys in (("tensorplay", tensorplay, tensorplay.tensor(x), tensorplay.tensor(y)),
                              ("torch", torch, torch.from_numpy(x), torch.from_numpy(y))):
        for mode, use_autocast in (("float32", False), ("autocast", True)):
            model = make_mlp(lib, sizes, weights)
            results[name, mode] = step_time(lib, model, xs, ys, use_autocast, args.steps, args.repeats)

    print(f"\n{'':12}{'float32 ms':>12}{'autocast ms':>13}{'autocast/float32':>18}")
    for name in ("tensorplay", "torch"):
        f32, amp = results[name, "float32"], results[name, "autocast"]
        print(f"{name:12}{f32:12.2f}{amp:13.2f}{amp / f32:18.2f}")
    print(f"\ntensorplay / torch:  float32 {results['tensorplay', 'float32'] / results['torch', 'float32']:.2f}"
          f"   autocast {results['tensorplay', 'autocast'] / results['torch', 'autocast']:.2f}"
          "   (below 1: tensorplay is faster)")


if __name__ == "__main__":
    main()

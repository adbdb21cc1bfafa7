"""Mutation fuzzing of the IDX reader behind the MNIST-family datasets: a corrupted file must
read into exactly the array its (possibly mutated) header describes, or raise ValueError naming
the file. Nothing else: no other exception type, no hang, no large allocation.

    .venv/bin/python tests/fuzz/fuzz_idx.py [--cases N] [--seed S]

Each case takes a valid images or labels file (plain or gzipped), applies one to three seeded
mutations (bit flips, byte overwrites in the header, truncation, appended garbage, dims forged to
huge or zero sizes, a changed type or rank byte, a corrupted gzip stream) and reads it. The
address space is capped at startup, so a forged size that got allocated fails as a MemoryError
instead of swapping. Exit status 0 when every case passed; otherwise the first failure is printed
with its case number, which reproduces it.
"""

import argparse
import gzip
import os
import random
import resource
import signal
import sys
import tempfile

import numpy as np

from tensorplay.utils.data.datasets import read_idx

ADDRESS_SPACE_HEADROOM = 1 << 30
CASE_TIMEOUT_S = 10


class Failure(Exception):
    """read_idx broke its contract on one input."""


def idx_bytes(array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.tobytes()


def seeds():
    rng = np.random.default_rng(0)
    return {"images": (idx_bytes(rng.integers(0, 256, (6, 28, 28), dtype=np.uint8)), 3),
            "labels": (idx_bytes(rng.integers(0, 10, 6, dtype=np.uint8)), 1)}


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.choice(["flip", "overwrite", "truncate", "append", "dims", "type", "rank"])
    if kind == "flip" and data:
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    elif kind == "overwrite" and data:
        i = rng.randrange(min(len(data), 24))
        data[i] = rng.randrange(256)
    elif kind == "truncate":
        del data[rng.randrange(len(data) + 1):]
    elif kind == "append":
        data += bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 4096])))
    elif kind == "dims" and len(data) >= 8:
        rank = min(data[3], (len(data) - 4) // 4)
        if rank:
            d = rng.randrange(rank)
            value = rng.choice([0, 1, 27, 29, 2**16, 2**31, 2**32 - 1])
            data[4 + 4 * d:8 + 4 * d] = value.to_bytes(4, "big")
    elif kind == "type" and len(data) >= 3:
        data[2] = rng.choice([0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x00, 0xFF])
    elif kind == "rank" and len(data) >= 4:
        data[3] = rng.choice([0, 1, 2, 3, 4, 200, 255])
    return bytes(data)


def expected_array(data, ndim):
    """What a correct reader returns for data, parsed independently; None if it must raise."""
    if len(data) < 4 or data[:3] != b"\0\0\x08" or data[3] != ndim or len(data) < 4 + 4 * ndim:
        return None
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    body = data[4 + 4 * ndim:]
    if len(body) != int(np.prod(shape, dtype=object)):
        return None
    return np.frombuffer(body, dtype=np.uint8).reshape(shape)


def run_case(case, seed, directory):
    rng = random.Random(f"{seed}:{case}")
    name, (data, ndim) = rng.choice(sorted(seeds().items()))
    for _ in range(rng.randint(1, 3)):
        data = mutate(data, rng)
    gz = rng.random() < 0.3
    path = os.path.join(directory, f"{name}.idx" + (".gz" if gz else ""))
    payload = gzip.compress(data) if gz else data
    if gz and rng.random() < 0.3:  # corrupt the compressed stream itself
        payload = bytearray(payload)
        payload[rng.randrange(10, len(payload))] ^= 0xFF
        payload = bytes(payload)
        data = None  # whatever it decompresses to, if anything
    with open(path, "wb") as f:
        f.write(payload)
    try:
        got = read_idx(path, ndim=ndim)
    except ValueError as e:
        if not str(e).startswith(path):
            raise Failure(f"case {case} ({name}): ValueError not naming the file: {e}") from e
        if data is not None and expected_array(data, ndim) is not None:
            raise Failure(f"case {case} ({name}): a valid file was rejected: {e}") from e
        return "rejected"
    except MemoryError as e:
        raise Failure(f"case {case} ({name}): allocated without bound (MemoryError)") from e
    except Exception as e:
        raise Failure(f"case {case} ({name}): {type(e).__name__} instead of ValueError: {e}") from e
    want = expected_array(data, ndim) if data is not None else got
    if want is None or want.shape != got.shape or got.dtype != np.uint8 or not np.array_equal(want, got):
        raise Failure(f"case {case} ({name}): read an array of shape {got.shape} that its header does not describe")
    return "read"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=int(os.environ.get("TP_FUZZ_CASES", 1000)))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + ADDRESS_SPACE_HEADROOM, resource.RLIM_INFINITY))

    def hang(*_):
        raise Failure("a case ran longer than its timeout")

    signal.signal(signal.SIGALRM, hang)
    counts = {"read": 0, "rejected": 0}
    with tempfile.TemporaryDirectory() as directory:
        for case in range(args.cases):
            signal.alarm(CASE_TIMEOUT_S)
            try:
                counts[run_case(case, args.seed, directory)] += 1
            except Failure as e:
                print(f"fuzz_idx: FAILED (seed {args.seed}): {e}", file=sys.stderr)
                return 1
            finally:
                signal.alarm(0)
    print(f"fuzz_idx: {args.cases} cases (seed {args.seed}): {counts['read']} read as their headers say, "
          f"{counts['rejected']} rejected with ValueError")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fuzzing of strided views against PyTorch, with extreme sizes, strides and offsets: a chain of
view ops must give tensorplay the view PyTorch gives, or fail at the op where PyTorch fails, with
an exception of the same class. Nothing else: no crash, no hang, no silent success or failure.

    .venv/bin/python tests/fuzz/fuzz_strides.py [--cases N] [--seed S]     (or TP_FUZZ_CASES=N)

Each case views a small tensor (float32, float64, int64, bfloat16 or bool, 0-64 elements;
contiguous, transposed, a strided slice or expanded) through one to four of as_strided, view,
reshape, expand, expand_as, narrow, select, slicing, unsqueeze, squeeze, transpose, permute, t,
flatten, unflatten, unfold, diagonal, movedim, split, chunk and unbind. Arguments are mostly
ordinary, now and then 0, 1, -1, 2**31-1, 2**31, 2**32, 2**61, 2**62, 2**63-1, -2**63 or an int
past int64. A view that results is compared exactly: dtype, shape, strides, storage offset and
(up to 2**22 elements) the values of .contiguous() and .clone(). Where PyTorch's answer is an
accident, not a contract, tensorplay's is accepted: see "torch's accidents", each rule as narrow
as its accident.

Cases run in worker processes with a capped address space (a size that slips past the checks
fails as a MemoryError instead of swapping); a crash or a hang fails the case, and a new worker
goes on after it. Generation is derandomized: case N of seed S is the same on every run. Exit
status 0 when every case passed; otherwise the first failure is printed with its case number,
seed and a Python expression that reproduces it. The last line gives the number of cases tried.
"""

import argparse
import collections
import functools
import json
import math
import os
import queue
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field

import torch

import tensorplay as tp

CASE_TIMEOUT_S = 20
STARTUP_TIMEOUT_S = 300  # importing torch and tensorplay on a loaded machine, or under ASan
ADDRESS_SPACE_HEADROOM = 2 << 30  # reading views of up to MAX_READ elements in both libraries
MAX_LISTED = 4096        # results with up to this many elements and rows are compared with tolist
MAX_READ = 1 << 22       # the values of larger views (expanded to huge sizes) are not read

DTYPES = ["float32", "float64", "int64", "bfloat16", "bool"]
EDGES = [0, 1, -1]
EXTREMES = [2**31 - 1, 2**31, 2**32, 2**61, 2**62, 2**63 - 1, -2**63]
BEYOND_INT64 = [2**63, 2**64]
KINDS = (OverflowError, IndexError, ValueError, TypeError, RuntimeError)


class Failure(Exception):
    """tensorplay and torch disagree on a case."""


# ---------------------------------------------------------------- cases

@dataclass
class Op:
    name: str
    args: tuple
    pick: int = None  # the part of a split, chunk or unbind that the chain goes on with

    def text(self):
        if self.name == "getitem":
            call = "[" + ", ".join(fmt(i) for i in self.args) + "]"
        elif self.name == "expand_as":
            call = f".expand_as(tp.zeros(()).expand({fmt(self.args[0])}))"
        else:
            call = f".{self.name}({', '.join(fmt(a) for a in self.args)})"
        return call + (f"[{self.pick}]" if self.pick is not None else "")


@dataclass
class Case:
    number: int
    dtype: str
    storage: int    # the base is arange(storage) in dtype, viewed by the first base_len ops
    ops: list
    base_len: int

    def text(self):
        base = f"(tp.arange({self.storage}) % 3 == 0)" if self.dtype == "bool" else \
            f"tp.arange({self.storage}).to(tp.{self.dtype})"
        return base + "".join(op.text() for op in self.ops)


def fmt(v):
    """v as Python source, with ints at or near large powers of two written as such."""
    if isinstance(v, tuple):
        return "(" + ", ".join(fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, slice):
        return ":".join("" if x is None else fmt(x) for x in (v.start, v.stop, v.step))
    if isinstance(v, int) and abs(v) >= 2**30:
        k = round(math.log2(abs(v)))
        return {2**k: f"2**{k}", 2**k - 1: f"2**{k}-1", -2**k: f"-2**{k}"}.get(v, str(v))
    return "..." if v is Ellipsis else repr(v)


class Drawer:
    """Draws an op's arguments: ordinary values, each replaced at rate p by an edge or an extreme."""

    def __init__(self, rng):
        self.rng = rng
        self.p = 0.0

    def maybe(self, value):
        if self.rng.random() >= self.p:
            return value
        roll = self.rng.random()
        return self.rng.choice(EDGES if roll < 0.3 else EXTREMES if roll < 0.96 else BEYOND_INT64)

    def int(self, lo, hi):
        return self.maybe(self.rng.randint(lo, hi))

    def dim(self, ndim):
        return self.int(-max(ndim, 1) - 1, max(ndim, 1))  # one past either end now and then

    def shape(self, numel, rank=None):
        """A shape of numel elements (its small factors spread over the dims), a -1 now and then."""
        rank = self.rng.randint(0, 4) if rank is None else rank
        dims = [1] * rank
        for factor in small_factors(numel) if rank else []:
            dims[self.rng.randrange(rank)] *= factor
        if rank and self.rng.random() < 0.3:
            dims[self.rng.randrange(rank)] = -1
        return tuple(self.maybe(s) for s in dims)

    def args(self, values):
        """The values as star args or as one tuple: both forms are parsed."""
        values = tuple(values)
        return values if self.rng.random() < 0.7 else (values,)


def small_factors(n):
    """n's prime factors below 64 and what is left of n; [0] for 0."""
    factors = [0] if n == 0 else []
    for p in range(2, 64):
        while n > 1 and n % p == 0:
            factors.append(p)
            n //= p
    return factors + ([n] if n > 1 else [])


def draw_base(rng, number):
    """A case with its base: a tensor of 0-64 elements, contiguous or not, made by valid ops."""
    shape = [rng.choice([0, 1, 1, 2, 3, 4, 5]) for _ in range(rng.choice([0, 1, 1, 2, 2, 3]))]
    while math.prod(shape) > 64:
        shape[shape.index(max(shape))] -= 1
    layout = rng.choice(["contiguous"] + ["slice", "expand"] * bool(shape) + ["transpose"] * (len(shape) >= 2))
    stored, ops = list(shape), []
    if layout == "transpose":
        a, b = rng.sample(range(len(shape)), 2)
        stored[a], stored[b] = shape[b], shape[a]
        ops.append(Op("transpose", (a, b)))
    elif layout == "slice":
        dim, step, begin = rng.randrange(len(shape)), rng.randint(2, 3), rng.randint(0, 2)
        stored[dim] = begin + shape[dim] * step
        ops.append(Op("getitem", (slice(None),) * dim + (slice(begin, stored[dim], step),)))
    elif layout == "expand":
        stored = [1 if rng.random() < 0.6 else s for s in shape]
        ops.append(Op("expand", tuple(shape)))
    ops.insert(0, Op("reshape", (tuple(stored),)))
    return Case(number, rng.choice(DTYPES), math.prod(stored), ops, len(ops))


def draw_args(d, name, x):
    """Arguments of view op `name` for torch tensor x."""
    rng, shape, ndim = d.rng, tuple(x.shape), x.dim()
    dim, other = d.dim(ndim), d.dim(ndim)
    size = shape[dim] if -ndim <= dim < ndim else 3  # of the dim drawn, for the bounds around it
    if name == "as_strided":
        sizes = tuple(d.int(0, 4) for _ in range(rng.randint(0, 4)))
        strides = tuple(d.int(0, 4) for _ in range(len(sizes) + (rng.random() < 0.05)))
        storage = x.untyped_storage().nbytes() // x.element_size()
        return (sizes, strides) + ((d.int(0, storage),) if rng.random() < 0.6 else ())
    if name in ("view", "reshape"):
        return d.args(d.shape(x.numel()))
    if name in ("expand", "expand_as"):
        new = tuple(d.int(0, 4) for _ in range(rng.choice([0, 0, 1, 2])))
        sizes = new + tuple(d.maybe(d.int(0, 5) if s == 1 and rng.random() < 0.5 else s) for s in shape)
        if name == "expand_as":  # the shape of another tensor, which cannot be negative
            return (tuple(max(s, 0) for s in sizes),)
        return d.args(-1 if rng.random() < 0.2 else s for s in sizes)
    if name == "getitem":
        return tuple(draw_index(d, s) for s in (shape + (3,))[:rng.randint(1, ndim + 1)])  # one too many now and then
    if name == "permute":
        return d.args(d.maybe(i - ndim if rng.random() < 0.3 else i) for i in rng.sample(range(ndim), ndim))
    if name == "narrow":
        begin = d.int(-size - 1, size + 1)
        return dim, begin, d.int(0, max(0, size - begin) + 1)
    if name == "select":
        return dim, d.int(-size - 1, size)
    if name == "unflatten":
        return dim, d.shape(size, rng.randint(1, 3))
    if name == "split":  # a size or a list of sizes
        return (d.shape(size, rng.randint(1, 3)) if rng.random() < 0.3 else d.int(0, size + 1)), dim
    if name == "unfold":
        return dim, d.int(0, size + 1), d.int(1, 3)
    if name == "diagonal":
        return d.int(-3, 3), dim, other
    if name == "chunk":
        return d.int(1, 4), dim
    if name == "unsqueeze":
        return (d.int(-ndim - 2, ndim + 1),)
    if name == "flatten":
        return (dim, other)[:rng.randint(0, 2)]
    return {"transpose": (dim, other), "movedim": (dim, other), "squeeze": (dim,), "unbind": (dim,), "t": ()}[name]


def draw_index(d, size):
    roll = d.rng.random()
    if roll < 0.7:
        begin, end = (None if d.rng.random() < 0.3 else d.int(-size - 2, size + 2) for _ in range(2))
        return slice(begin, end, None if d.rng.random() < 0.4 else d.maybe(d.rng.choice([1, 2, 3, 7])))
    if roll < 0.85:
        return d.int(-size, max(size - 1, 0))
    return None if roll < 0.95 else Ellipsis


# tensorplay has no Tensor.unfold yet: it is fuzzed once it has.
VIEW_OPS = ["as_strided", "as_strided", "view", "reshape", "expand", "expand_as", "narrow", "select", "getitem",
            "getitem", "unsqueeze", "squeeze", "transpose", "permute", "t", "flatten", "unflatten", "diagonal",
            "movedim", "split", "chunk", "unbind"] + ["unfold"] * hasattr(tp.Tensor, "unfold")


def draw_case(number, seed):
    """Case `number` of `seed`: a base and a chain of view ops, drawn while running it in torch, so
    that each op's arguments fit the tensor it applies to. The chain ends at an op torch refuses."""
    rng = random.Random(f"{seed}:{number}")
    case = draw_base(rng, number)
    d = Drawer(rng)
    x = start(torch, case)
    for op in case.ops:
        x = apply(torch, x, op)
    for _ in range(rng.randint(1, 4)):
        d.p = rng.choice([0.0, 0.0, 0.0, 0.1, 0.3, 0.6])
        name = rng.choice(VIEW_OPS)
        pick = rng.choice([0, -1]) if name in ("split", "chunk", "unbind") else None
        case.ops.append(Op(name, draw_args(d, name, x), pick))
        try:
            x = apply(torch, x, case.ops[-1])
        except Exception:  # noqa: BLE001  (whatever torch raised, the ops after it would not run)
            break
        if min(x.shape, default=0) < 0:  # one of torch's accidents (below): nothing valid to go on with
            break
    return case


# ---------------------------------------------------------------- running a case

def start(m, case):
    x = m.arange(case.storage)
    return x % 3 == 0 if case.dtype == "bool" else x.to(getattr(m, case.dtype))


def apply(m, x, op):
    if op.name == "getitem":
        y = x[op.args]
    elif op.name == "expand_as":
        y = x.expand_as(m.zeros(()).expand(*op.args))
    else:
        y = getattr(x, op.name)(*op.args)
    return y if op.pick is None else y[op.pick]


@dataclass
class Outcome:
    step: int = 0          # the op that raised; len(ops) for the reads after them
    error: Exception = None
    seen: list = None      # what was read of the result
    shapes: list = field(default_factory=list)  # the shape after each op

    def says(self, lib, case):
        if self.error is None:
            return f"{lib} returned a view: " + ", ".join(f"{name} {v}" for name, v in zip(READS[1:4], self.seen[1:4]))
        where = case.ops[self.step].text() if self.step < len(case.ops) else "reading the result"
        message = (str(self.error).strip() or " ").splitlines()[0][:300]
        return f"{lib} raised {type(self.error).__name__} at {where}: {message}"


def run_case(m, case, hook=None):
    """Runs case in library m; hook(case, op, call) runs each op of the chain (to inject faults)."""
    outcome = Outcome()
    try:
        x = start(m, case)
        for outcome.step, op in enumerate(case.ops):
            call = functools.partial(apply, m, x, op)
            x = hook(case, op, call) if hook and outcome.step >= case.base_len else call()
            outcome.shapes.append(tuple(x.shape))
        outcome.step = len(case.ops)
        outcome.seen = read(x)
    except Exception as e:  # noqa: BLE001  (compared with torch's, whatever it is)
        outcome.error = e
    return outcome


READS = ["dtype", "shape", "strides", "storage offset", "values", "values of .clone()"]


def read(x):
    shape = tuple(x.shape)
    seen = [str(x.dtype).rsplit(".", 1)[-1], shape, tuple(x.stride()), x.storage_offset()]
    if math.prod(shape) <= MAX_READ:
        seen += [values(x.contiguous()), values(x.clone())]  # clone's strides are its own choice
    return seen


def values(t):
    shape = tuple(t.shape)
    rows = sum(math.prod(shape[:k]) for k in range(1, len(shape)))  # the lists tolist makes, empty ones too
    if math.prod(shape) + rows <= MAX_LISTED:
        return shape, t.tolist()
    return shape, t.double().sum().item()  # exact: the values are small integers


def kind(e):
    return next((k for k in KINDS if isinstance(e, k)), None)


def check(case, hook=None):
    """Runs case in both libraries: "ok" (a view) or "raised" when tensorplay agrees with torch;
    otherwise raises Failure."""
    want, got = run_case(torch, case), run_case(tp, case, hook)
    if isinstance(want.error, SystemError) and want.error.__cause__ is not None:
        # Once torch has warned "Truncating the start/stop/step of slice", x[-2**63:-1:0] warns
        # again with its ValueError for the zero step pending, which Python turns into a
        # SystemError caused by that ValueError: the error torch meant.
        want.error = want.error.__cause__
    if want.error is None and got.error is None and want.seen == got.seen:
        return "ok"
    if want.error is not None and got.error is not None and want.step == got.step and \
            kind(want.error) is kind(got.error) is not None:
        return "raised"
    if torch_accident(case, want, got):
        return "raised"
    if chunk_size_overflows(case, want):
        return "ok"
    if want.error is None and got.error is None:
        raise Failure("the views differ: " + "; ".join(f"{name}: torch {str(a)[:300]}, tensorplay {str(b)[:300]}"
                                                       for name, a, b in zip(READS, want.seen, got.seen) if a != b))
    if want.error is not None and (want.step < case.base_len or kind(want.error) is None):
        raise Failure(f"bad case: {want.says('torch', case)}")
    raise Failure(f"{want.says('torch', case)}\n{got.says('tensorplay', case)}")


# ---------------------------------------------------------------- torch's accidents

def torch_accident(case, want, got):
    """Whether tensorplay's error is right where torch's answer differs only by an accident."""
    if got.error is None or got.step >= len(case.ops):
        return False
    op, error = case.ops[got.step], got.error
    if type(error) is RuntimeError and got.step < len(want.shapes) and unrepresentable(op, want.shapes[got.step]):
        return True
    # torch takes x[..., ...] for x[...]; NumPy and tensorplay refuse more than one ellipsis.
    if op.name == "getitem" and op.args.count(Ellipsis) > 1 and type(error) is IndexError:
        return True
    if want.error is None or want.step != got.step:
        return False
    # Two wrong arguments: torch's split checks the split sizes before the dim, tensorplay the dim first.
    if op.name == "split" and kind(want.error) is RuntimeError and type(error) is IndexError and \
            negative_size_and_bad_dim(op.args, len(want.shapes[got.step - 1])):
        return True
    # Out of memory making a list of 2**31 views (unbind, chunk): torch says RuntimeError, tensorplay MemoryError.
    if type(error) is MemoryError and re.search(r"bad_alloc|max_size\(\)", str(want.error)):
        return True
    # Python ints past int64 are refused by torch's argument parser with a class of its choosing
    # (OverflowError, ValueError, TypeError or RuntimeError, by the op and the argument): there,
    # any of the classes a view op may raise will do.
    return kind(error) is not None and (kind(want.error) is OverflowError or beyond_int64(op.args))


def chunk_size_overflows(case, want):
    """torch's chunk computes its pieces' size as (size + chunks - 1) / chunks in int64, which
    overflows for chunks near 2**63: torch raises where the pieces exist (tensorplay returns them),
    so the rest of the chain has nothing to be compared with."""
    if type(want.error) is not RuntimeError or not 0 < want.step < len(case.ops):
        return False
    op = case.ops[want.step]
    if op.name != "chunk":
        return False
    chunks, dim = op.args
    shape = want.shapes[want.step - 1]
    return -len(shape) <= dim < len(shape) and shape[dim] + chunks - 1 > 2**63 - 1


def negative_size_and_bad_dim(split_args, ndim):
    sizes, dim = split_args
    return min(sizes if isinstance(sizes, tuple) else (sizes,), default=0) < 0 and not -ndim <= dim < ndim


def unrepresentable(op, shape):
    """Whether torch's view of `shape`, made by op, is one only an accident of torch's lets through."""
    # Negative sizes, which expand and as_strided let through in some dims when another size is 0:
    # torch.zeros(1).expand(0, -2, 1) has size [0, -2, 1].
    if min(shape, default=0) < 0:
        return True
    # 0 elements, but sizes whose running product passes 2**63-1 before reaching the 0: torch counts
    # in uint64 (c10::safe_multiply_u64), so torch.empty(2**61, 4, 0) succeeds where
    # torch.empty(2**62, 4, 0) raises; tensorplay counts in int64.
    if 0 in shape and overflows(shape):
        return True
    # Contiguous strides that overflow int64, which view, reshape and unflatten compute unchecked
    # for views of 0 elements: torch.zeros(0).view(0, 2**62, 4) has a stride of 2**64 wrapped to
    # 0, where torch.empty(0, 2**62, 4) raises "Stride calculation overflowed".
    return op.name in ("view", "reshape", "unflatten") and overflows([max(s, 1) for s in reversed(shape[1:])])


def overflows(sizes):
    """Whether the running product of sizes passes 2**63-1."""
    product = 1
    for size in sizes:
        product *= size
        if product > 2**63 - 1:
            return True
    return False


def beyond_int64(value):
    if isinstance(value, (tuple, list)):
        return any(beyond_int64(v) for v in value)
    if isinstance(value, slice):
        return beyond_int64((value.start, value.stop, value.step))
    return isinstance(value, int) and not -2**63 <= value < 2**63


# ---------------------------------------------------------------- workers

def inject_crash_and_hang(case, op, call):
    """A fault injected into tensorplay for the tests of the workers: case 1 crashes, case 2 hangs."""
    if case.number == 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    if case.number == 2:
        time.sleep(3600)
    return call()


def cap_address_space():
    with open("/proc/self/status") as f:
        size_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    limit = size_kb * 1024 + ADDRESS_SPACE_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))


def worker(first, cases, seed, hook):
    """Runs cases first..cases-1, printing "ready", then a JSON line for each case: its outcome,
    or its failure and the expression that reproduces it."""
    torch.ones(1000, 1000).sum()  # start both libraries' intra-op threads before the cap, so that
    tp.ones(1000, 1000).sum()     # their stacks are counted
    cap_address_space()
    print(json.dumps("ready"), flush=True)
    for number in range(first, cases):
        case = draw_case(number, seed)
        try:
            event = {"outcome": check(case, hook)}
        except Failure as e:
            event = {"failure": f"{e}\n  x = {case.text()}"}
        except Exception:  # noqa: BLE001  (the harness broke: a failure too)
            event = {"failure": f"harness error:\n{traceback.format_exc()[-1500:]}\n  x = {case.text()}"}
        print(json.dumps(event), flush=True)


@dataclass
class Result:
    tried: int = 0
    outcomes: collections.Counter = field(default_factory=collections.Counter)  # "ok", "raised"
    failures: list = field(default_factory=list)  # (case number, message), in case order


def run(cases, seed=0, timeout=CASE_TIMEOUT_S, crash_and_hang=False):
    """Runs cases 0..cases-1 of seed in worker processes, a new one after each crash or hang."""
    result = Result()
    first = 0
    while first < cases:
        first = run_worker(first, cases, seed, timeout, crash_and_hang, result)
    return result


def run_worker(first, cases, seed, timeout, crash_and_hang, result):
    """Runs a worker from case `first` on; returns the case after the last one it got through."""
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--first", str(first), "--cases", str(cases),
               "--seed", str(seed)] + ["--crash-and-hang"] * crash_and_hang
    with tempfile.TemporaryFile() as stderr, \
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True) as proc:
        events = queue.Queue()
        threading.Thread(target=lambda: [events.put(json.loads(line)) for line in proc.stdout] + [events.put(None)],
                         daemon=True).start()
        if next_event(events, STARTUP_TIMEOUT_S) != "ready":
            raise RuntimeError(f"fuzz_strides: a worker did not start:\n{stop(proc, stderr)}")
        for number in range(first, cases):
            event = next_event(events, timeout)
            result.tried += 1
            if event is None or event == "hang":
                tail = stop(proc, stderr)
                what = f"hung (silent for {timeout} s)" if event else f"crashed ({exit_text(proc.returncode)})"
                result.failures.append((number, f"tensorplay {what}\n  x = {draw_case(number, seed).text()}\n{tail}"))
                return number + 1
            if "outcome" in event:
                result.outcomes[event["outcome"]] += 1
            else:
                result.failures.append((number, event["failure"]))
    if proc.returncode:  # a crash at exit, after the last case
        result.failures.append((cases - 1, f"the worker ended with {exit_text(proc.returncode)} after its last case"))
    return cases


def next_event(events, timeout):
    """The worker's next line, decoded; None when it exited, "hang" when it was silent too long."""
    try:
        return events.get(timeout=timeout)
    except queue.Empty:
        return "hang"


def stop(proc, stderr):
    """Kills the worker; returns the end of what it wrote to stderr."""
    proc.kill()
    proc.wait()
    stderr.seek(0)
    return stderr.read().decode(errors="replace")[-2000:]


def exit_text(code):
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=int(os.environ.get("TP_FUZZ_CASES", "3000")))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--crash-and-hang", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.first, args.cases, args.seed, inject_crash_and_hang if args.crash_and_hang else None)
        return 0
    result = run(args.cases, args.seed)
    for i, (number, message) in enumerate(result.failures):
        print(f"FAIL: case {number} (seed {args.seed}): {message}" if i == 0 else
              f"also failed: case {number}: {message.splitlines()[0]}", file=sys.stderr)
    print(f"fuzz_strides: {result.tried} cases, seed {args.seed}: {result.outcomes['ok']} views matched torch's, "
          f"{result.outcomes['raised']} refused like torch, {len(result.failures)} failed")
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())

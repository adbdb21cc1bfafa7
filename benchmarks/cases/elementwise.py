"""Case 2: memory-bound elementwise ops on 16M elements, one thread: add, mul, relu, gelu and the
float32 <-> bfloat16 casts, each allocating its output (`a + b`, `a.to(bfloat16)`) and in place
(`a.add_(b)`, `out.copy_(a)`; gelu has no in-place form). The figure is GB/s counting every
byte read and written once; the baseline is a plain memcpy (numpy.copyto) of the same bytes in
the same child, so that the table says how close each op comes to what the memory system can do.
"""

import numpy as np

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.report import Row, check

TITLE = "2. Elementwise ops, one thread, against memcpy"

CASTS = (("float32", "bfloat16"), ("bfloat16", "float32"))
ALLOCATING_TARGET = 0.80


def children(quick):
    return [{"numel": 1 << 22, "min_time": 0.05} if quick else {"numel": 1 << 24, "min_time": 0.3}]


def run(lib_name, params):
    lib = load(lib_name, params)
    n = params["numel"]
    # The in-place ops write into c, so that a keeps its normal values for the allocating ones.
    a, b, c, ones = lib.randn(n), lib.randn(n), lib.randn(n), lib.ones(n)
    f32, bf16 = 4 * n, 2 * n
    ops = {
        "add": (lambda: a + b, 3 * f32), "add_": (lambda: c.add_(b), 3 * f32),
        # Multiplying in place by ones keeps the values away from overflow and denormals.
        "mul": (lambda: a * b, 3 * f32), "mul_": (lambda: c.mul_(ones), 3 * f32),
        "relu": (lambda: a.relu(), 2 * f32), "relu_": (lambda: c.relu_(), 2 * f32),
        "gelu": (lambda: lib.nn.functional.gelu(a), 2 * f32),
    }
    for src, dst in CASTS:
        x = lib.randn(n).to(getattr(lib, src))
        out = lib.empty(n, dtype=getattr(lib, dst))
        ops[f"{src}->{dst}"] = (lambda x=x, dst=getattr(lib, dst): x.to(dst), f32 + bf16)
        ops[f"{src}->{dst}_"] = (lambda x=x, out=out: out.copy_(x), f32 + bf16)

    figures, memcpy = {}, {}
    for name, (fn, nbytes) in ops.items():
        figures[name] = nbytes / seconds_per_call(fn, min_time=params["min_time"]) / 1e9
        if nbytes not in memcpy:
            # A copy of nbytes / 2 bytes reads and writes nbytes (the untimed first copy faults in
            # the destination's pages).
            src, dst = np.ones(nbytes // 2, np.uint8), np.zeros(nbytes // 2, np.uint8)
            memcpy[nbytes] = nbytes / seconds_per_call(lambda: np.copyto(dst, src), min_time=params["min_time"]) / 1e9
        figures[f"memcpy {name}"] = memcpy[nbytes]
    figures["numel"] = n
    return figures


def rows(results, machine):
    out, size = [], f"{int(results['numel'][0] or 0) >> 20}M"
    for name in [key for key in results if key != "numel" and not key.startswith("memcpy")]:
        in_place = name.endswith("_")
        row = Row(f"{name.rstrip('_')}, {size} elements, {'in place' if in_place else 'allocating'}", "GB/s",
                  *results[name], kind="rate")
        # Each library's GB/s over the memcpy measured in its own child.
        tp_share, torch_share = (v / copy if v and copy else None
                                 for v, copy in zip(results[name], results[f"memcpy {name}"]))
        row.tp_note, row.torch_note = (f"{share:.0%} memcpy" if share else "" for share in (tp_share, torch_share))
        if not in_place:
            row.target = f">= {ALLOCATING_TARGET:.0%} of memcpy"
            row.met = check(tp_share, lambda share: share >= ALLOCATING_TARGET)
        out.append(row)
    tp, torch = results["memcpy add"]
    out.append(Row("memcpy (numpy.copyto) of add's bytes", "GB/s", tp, torch))
    return out

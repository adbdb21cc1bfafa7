"""Case 10: complex tensors, one thread. Rotary position embeddings as open LLM code writes them
(the query viewed as complex pairs, times a complex64 table of unit rotations, viewed back as real),
forward and backward, at (batch 4, sequence 256, heads 8, head dim 64); a complex64 matrix product
(256 x 256) and a complex sum. tensorplay computes complex ops with real ops on the parts
(csrc/tensorplay/ops/complex.cpp); PyTorch has complex kernels. Milliseconds per call."""

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.report import Row

TITLE = "10. Complex numbers, one thread"

FIGURES = ("rotary forward", "rotary forward+backward", "matmul complex64 256x256", "sum complex64 1M")


def children(quick):
    return [{"min_time": 0.05 if quick else 0.3}]


def run(lib_name, params):
    lib = load(lib_name, params)
    batch, seq, heads, dim = 4, 256, 8, 64
    freqs = 1.0 / (10000.0 ** (lib.arange(0, dim, 2).float() / dim))
    angles = lib.outer(lib.arange(seq).float(), freqs)
    rotations = lib.polar(lib.ones_like(angles), angles).reshape(1, seq, 1, dim // 2)
    q = lib.randn(batch, seq, heads, dim)
    q_grad = q.clone().requires_grad_()

    def rotary(x):
        pairs = lib.view_as_complex(x.reshape(batch, seq, heads, dim // 2, 2))
        return lib.view_as_real(pairs * rotations).flatten(3)

    def rotary_backward():
        rotary(q_grad).sum().backward()

    a = lib.randn(256, 256, dtype=lib.complex64)
    b = lib.randn(256, 256, dtype=lib.complex64)
    z = lib.randn(1 << 20, dtype=lib.complex64)
    fns = {"rotary forward": lambda: rotary(q), "rotary forward+backward": rotary_backward,
           "matmul complex64 256x256": lambda: a @ b, "sum complex64 1M": lambda: z.sum()}
    return {name: seconds_per_call(fn, min_time=params["min_time"]) * 1e3 for name, fn in fns.items()}


def rows(results, machine):
    return [Row(name, "ms", *results[name], kind="cost") for name in FIGURES]

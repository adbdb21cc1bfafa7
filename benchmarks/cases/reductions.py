"""Case 3: the row-wise ops of a transformer block and a classifier head, over the last dim of a
(4096, 1024) tensor in float32 and bfloat16, one thread: softmax, log_softmax, layer_norm
(no affine weights), sum and max (values and indices). Milliseconds per call."""

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.report import Row

TITLE = "3. Row-wise ops over the last dim, one thread"

OPS = ("softmax", "log_softmax", "layer_norm", "sum", "max")


def children(quick):
    return [{"shape": [1024, 1024], "min_time": 0.05} if quick else {"shape": [4096, 1024], "min_time": 0.3}]


def run(lib_name, params):
    lib = load(lib_name, params)
    F = lib.nn.functional
    figures = {}
    for dtype in ("float32", "bfloat16"):
        x = lib.randn(*params["shape"]).to(getattr(lib, dtype))
        ops = {"softmax": lambda: x.softmax(-1), "log_softmax": lambda: x.log_softmax(-1),
               "layer_norm": lambda: F.layer_norm(x, x.shape[-1:]), "sum": lambda: x.sum(-1),
               "max": lambda: x.max(-1)}
        for name, fn in ops.items():
            figures[f"{name} {dtype}"] = seconds_per_call(fn, min_time=params["min_time"]) * 1e3
    figures["shape"] = "x".join(map(str, params["shape"]))
    return figures


def rows(results, machine):
    shape = results["shape"][0] or "?"
    return [Row(f"{name}, {dtype} ({shape})", "ms", *results[f"{name} {dtype}"], kind="cost")
            for dtype in ("float32", "bfloat16") for name in OPS]

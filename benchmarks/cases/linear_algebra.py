"""Case 9: the LAPACK-backed decompositions and solves, one thread, forward only: a (256, 256)
float64 matrix and a batch of 256 (32, 32) float32 matrices. Both libraries call a LAPACK (OpenBLAS
here, PyTorch's own build there), so the figures show what each adds around it: copies into
column-major batches, checks, and the per-matrix calls. Milliseconds per call."""

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.report import Row

TITLE = "9. Linear algebra, one thread"

OPS = ("solve", "cholesky", "qr", "svd", "eigh", "det")
SHAPES = {"float64 256x256": ((256, 256), "float64"), "float32 256 x 32x32": ((256, 32, 32), "float32")}


def children(quick):
    return [{"min_time": 0.05 if quick else 0.3}]


def run(lib_name, params):
    lib = load(lib_name, params)
    figures = {}
    for label, (shape, dtype) in SHAPES.items():
        n = shape[-1]
        a = (lib.randn(*shape) + n * lib.eye(n)).to(getattr(lib, dtype))
        spd = a @ a.mT
        b = lib.randn(*shape[:-1], 4).to(a.dtype)
        ops = {"solve": lambda: lib.linalg.solve(a, b), "cholesky": lambda: lib.linalg.cholesky(spd),
               "qr": lambda: lib.linalg.qr(a), "svd": lambda: lib.linalg.svd(a, full_matrices=False),
               "eigh": lambda: lib.linalg.eigh(spd), "det": lambda: lib.linalg.det(a)}
        for name, fn in ops.items():
            figures[f"{name} {label}"] = seconds_per_call(fn, min_time=params["min_time"]) * 1e3
    return figures


def rows(results, machine):
    return [Row(f"{name}, {label}", "ms", *results[f"{name} {label}"], kind="cost") for label in SHAPES
            for name in OPS]

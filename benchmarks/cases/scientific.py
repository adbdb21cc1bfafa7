"""Case 13: scientific computing (issue 29), one thread, forward only: batched solve, Cholesky and
SVD of 256 float32 matrices of 64 x 64 (LAPACK: OpenBLAS here, PyTorch's MKL there), and the
discrete Fourier transforms (pocketfft here, MKL there): a 2**20-point rfft, its inverse, and a
batch of 256 complex transforms of 1024 points; and a graph network's sparse @ dense product (a
coalesced adjacency of 10,000 nodes and 100,000 edges times 64 features per node), forward, and
forward and backward with gradients for the dense features. Milliseconds per call."""

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.report import Row, check

TITLE = "13. Scientific computing, one thread"

FIGURES = ("solve 256 x 64x64 float32", "cholesky 256 x 64x64 float32", "svd 256 x 64x64 float32",
           "rfft 2^20 float32", "irfft 2^20 float32", "rfft 2^20 float64", "fft 256 x 1024 complex64",
           "sparse mm 10k nodes, 100k edges, 64 features", "sparse mm with backward")


# Issue 29's targets: each at most PyTorch's time.
TARGETED = ("solve 256 x 64x64 float32", "cholesky 256 x 64x64 float32", "svd 256 x 64x64 float32",
            "rfft 2^20 float32", "sparse mm 10k nodes, 100k edges, 64 features")


def children(quick):
    return [{"min_time": 0.05 if quick else 0.5}]


def run(lib_name, params):
    lib = load(lib_name, params)
    lib.manual_seed(0)
    a = lib.randn(256, 64, 64) + 64 * lib.eye(64)
    spd = a @ a.mT
    b = lib.randn(256, 64, 4)
    signal = lib.randn(2 ** 20)
    spectrum = lib.fft.rfft(signal)
    signal64 = signal.double()
    batch = lib.randn(256, 1024, dtype=lib.complex64)
    edges = lib.randint(0, 10000, (2, 100000))
    adjacency = lib.sparse_coo_tensor(edges, lib.rand(100000), (10000, 10000)).coalesce()
    features = lib.randn(10000, 64, requires_grad=True)

    def sparse_mm_with_backward():
        lib.sparse.mm(adjacency, features).sum().backward()
        features.grad = None

    calls = {
        "solve 256 x 64x64 float32": lambda: lib.linalg.solve(a, b),
        "cholesky 256 x 64x64 float32": lambda: lib.linalg.cholesky(spd),
        "svd 256 x 64x64 float32": lambda: lib.linalg.svd(a, full_matrices=False),
        "rfft 2^20 float32": lambda: lib.fft.rfft(signal),
        "irfft 2^20 float32": lambda: lib.fft.irfft(spectrum, n=2 ** 20),
        "rfft 2^20 float64": lambda: lib.fft.rfft(signal64),
        "fft 256 x 1024 complex64": lambda: lib.fft.fft(batch),
        "sparse mm 10k nodes, 100k edges, 64 features": lambda: lib.sparse.mm(adjacency, features.detach()),
        "sparse mm with backward": sparse_mm_with_backward,
    }
    return {name: seconds_per_call(fn, min_time=params["min_time"]) * 1e3 for name, fn in calls.items()}


def rows(results, machine):
    out = []
    for name in FIGURES:
        row = Row(name, "ms", *results[name], kind="cost")
        if name in TARGETED:
            row.target = "ratio <= 1"
            row.met = check(row.ratio, lambda r: r <= 1)
        out.append(row)
    return out

"""torch.__config__: how this build was made and what it runs on (csrc/tensorplay/cpu/build_info.h)."""

import os
import warnings

from tensorplay import _C

__all__ = ["show", "parallel_info"]


def _openmp(date):
    versions = {201511: "4.5", 201811: "5.0", 202011: "5.1", 202111: "5.2"}
    return f"OpenMP {date}" + (f" (a.k.a. OpenMP {versions[date]})" if date in versions else "")


def _blas(info):
    build = "its OpenMP build" if info["blas_openmp"] else "NOT its OpenMP build: its threads are its own"
    return f"{info['blas'].strip()} ({build})"


def show():
    """The compiler, OpenMP and the libraries the kernels run on, as torch.__config__.show()
    lists PyTorch's."""
    info = _C._build_info()
    lines = [
        "tensorplay built with:",
        f"  - {info['compiler']}",
        f"  - C++ Version: {info['cxx_standard']}",
        f"  - {_openmp(info['openmp'])}",
        f"  - BLAS and LAPACK: {_blas(info)}",
        f"  - oneDNN v{info['onednn']}",
        f"  - Highway {info['highway']}",
        "  - FFT: pocketfft (C++ header-only)",
        f"  - CPU capability usage: {_C._cpu_capability()}",
        f"  - Build settings: USE_CUDA=0, USE_GLOO={'ON' if info['gloo'] else 'OFF'}, USE_OPENMP=ON",
    ]
    return "\n".join(lines) + "\n"


def parallel_info():
    """The thread pools and the variables that size them, as torch.__config__.parallel_info()
    gives PyTorch's."""
    import tensorplay

    info = _C._build_info()
    lines = [
        "tensorplay/Parallel:",
        f"\ttensorplay.get_num_threads() : {tensorplay.get_num_threads()}",
        f"\ttensorplay.get_num_interop_threads() : {tensorplay.get_num_interop_threads()}",
        _openmp(info["openmp"]),
        f"\tomp_get_max_threads() : {_C._openmp_max_threads()}",
        info["blas"].strip(),
        f"\topenblas_get_num_threads() : {_C._blas_num_threads()}",
        f"oneDNN v{info['onednn']}",
        f"std::thread::hardware_concurrency() : {os.cpu_count()}",
        "Environment variables:",
    ]
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        lines.append(f"\t{name} : {os.environ.get(name, '[not set]')}")
    lines.append("tensorplay parallel backend: OpenMP")
    return "\n".join(lines) + "\n"


def _check_blas(info=None):
    """Run at import: linear algebra expects OpenBLAS's OpenMP build, whose threads are the OpenMP
    pool that every other kernel uses. Another build (the pthreads one, picked by the system's
    alternatives or LD_LIBRARY_PATH) computes the same results, but its own threads compete with
    the pool's for the cores: say so once."""
    info = _C._build_info() if info is None else info
    if not info["blas_openmp"]:
        warnings.warn(f"tensorplay: the OpenBLAS loaded is not its OpenMP build ({info['blas'].strip()}): its "
                      "threads will compete with tensorplay's OpenMP pool for the cores. Install "
                      "libopenblas0-openmp, or make it the system's libopenblas.so.0.", RuntimeWarning, stacklevel=3)


"""tensorplay.__config__: what the build runs on, and the import-time check that OpenBLAS is its
OpenMP build (csrc/tensorplay/cpu/build_info.h)."""

import subprocess
import sys
import warnings

import pytest

import tensorplay as tp


def test_show_names_the_libraries_the_kernels_run_on():
    text = tp.__config__.show()
    assert text.startswith("tensorplay built with:\n") and text.endswith("\n")
    assert "BLAS and LAPACK: OpenBLAS" in text and "its OpenMP build" in text
    assert "oneDNN v" in text and "OpenMP 20" in text and "C++ Version: 2020" in text
    assert f"CPU capability usage: {tp.backends.cpu.get_cpu_capability()}" in text


def test_parallel_info_reports_the_thread_settings():
    previous = tp.get_num_threads()
    try:
        tp.set_num_threads(1)
        text = tp.__config__.parallel_info()
        assert "tensorplay.get_num_threads() : 1" in text
        assert "omp_get_max_threads() : 1" in text  # (the pool is OpenMP's)
    finally:
        tp.set_num_threads(previous)
    assert "OMP_NUM_THREADS" in text and text.endswith("tensorplay parallel backend: OpenMP\n")


def test_this_build_runs_on_openblas_openmp_and_imports_without_a_warning():
    assert tp._C._build_info()["blas_openmp"]
    result = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", "import tensorplay"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_another_openblas_build_is_named_in_a_warning():
    info = dict(tp._C._build_info(), blas_openmp=False, blas="OpenBLAS 0.3.21 NO_AFFINITY USE_PTHREAD HASWELL")
    with pytest.warns(RuntimeWarning, match="not its OpenMP build .OpenBLAS 0.3.21 NO_AFFINITY USE_PTHREAD"):
        tp.__config__._check_blas(info)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.__config__._check_blas()  # this build's: no warning

"""TP_CPU_CAPABILITY and tensorplay.backends.cpu.get_cpu_capability (as PyTorch's
ATEN_CPU_CAPABILITY and torch.backends.cpu.get_cpu_capability). The kernel tests below run again
in child processes capped at AVX2 and at the baseline, so that the code a CPU without AVX-512
runs (oneDNN's AVX2 kernels, bfloat16 products and convolutions emulated in float32, Highway's
AVX2 and SSE4 code) is tested on any machine, whatever this one has."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tensorplay as tp

HERE = Path(__file__).resolve().parent

# The tests of the kernels that run different code per instruction set.
KERNEL_TESTS = [
    "test_gemm_layouts.py",
    "test_conv_layouts.py",
    "test_nn_functional.py::test_max_pool2d_picks_the_window_element_torch_picks",
    "test_nn_functional.py::test_max_pool2d_gradient_reaches_the_element_torch_picks",
    "test_nn_functional.py::test_gelu_and_its_gradient_match_torch_over_the_whole_range",
    "test_nn_functional.py::test_gelu_of_a_view_at_an_odd_offset",
    "test_nn_functional.py::test_relu_and_its_gradient_match_torch_on_special_values",
    "test_nn_functional.py::test_softmax_rows_with_nan_inf_and_huge_values_match_torch",
    "test_dtypes.py::test_low_precision_to_float32_every_pattern",
    "test_dtypes.py::test_low_precision_to_float32_of_a_large_tensor_matches_a_small_one",
    "test_dtypes.py::test_float32_to_low_precision_random_non_nan",
    "test_optim.py",
    "test_elementwise_layouts.py",
    "test_transcendental.py",
    "test_arg_extremum.py",
    "test_arith_rows.py",
    "test_transpose.py",
    "test_leading_sums.py",
]


def run_python(code, capability):
    env = dict(os.environ, TP_CPU_CAPABILITY=capability)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_capability_is_one_of_torchs_names():
    assert tp.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")


@pytest.mark.parametrize("capability,expected", [("avx2", {"AVX2", "DEFAULT"}), ("default", {"DEFAULT"}),
                                                 ("avx512", {"AVX512", "AVX2", "DEFAULT"})])
def test_the_cap_lowers_the_capability_never_raises_it(capability, expected):
    result = run_python("import tensorplay as tp; print(tp.backends.cpu.get_cpu_capability())", capability)
    assert result.returncode == 0, result.stderr
    got = result.stdout.strip()
    assert got in expected
    if capability == "avx512":
        assert got == tp.backends.cpu.get_cpu_capability() or "TP_CPU_CAPABILITY" in os.environ


@pytest.mark.parametrize("capability,expected", [("avx2", {"AVX2", "DEFAULT"}), ("default", {"DEFAULT"})])
def test_the_cap_holds_after_kernels_of_every_kind_ran(capability, expected):
    # The capability is the target the kernels dispatch to. bfloat16 rounding asks for the capability
    # itself (to choose AVX512-BF16's instruction), which once pointed the kernels back at AVX-512.
    code = ("import tensorplay as tp\n"
            "x = tp.randn(4096)\n"
            "y = x.to(tp.bfloat16).relu().float().softmax(0).sum()\n"
            "print(tp.backends.cpu.get_cpu_capability())")
    result = run_python(code, capability)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in expected


def test_an_unknown_capability_is_a_value_error_naming_the_variable():
    result = run_python("import tensorplay as tp\ntry:\n    tp.ones(2) + 1\nexcept ValueError as e:\n    print(e)",
                        "avx1024")
    assert result.returncode == 0, result.stderr
    assert "TP_CPU_CAPABILITY" in result.stdout and "avx1024" in result.stdout


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_kernels_under_a_capped_capability(capability):
    env = dict(os.environ, TP_CPU_CAPABILITY=capability)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                             *(str(HERE / t) for t in KERNEL_TESTS)],
                            capture_output=True, text=True, env=env, timeout=600, cwd=HERE)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]

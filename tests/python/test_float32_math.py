"""float32 matmuls and convolutions through bfloat16 products (torch.set_float32_matmul_precision
("medium"), torch.backends.mkldnn.{matmul,conv}.fp32_precision = "bf16"): within bfloat16's
tolerance of the exact result; matmuls take it exactly where the CPU multiplies bfloat16 natively
and are exact elsewhere; exact again after "highest"."""

import pytest

import tensorplay as tp

# oneDNN takes the bfloat16 form where the CPU has AVX512-BF16 (or AMX) and the kernels may use
# AVX-512 (TP_CPU_CAPABILITY can cap them).
with open("/proc/cpuinfo") as f:
    _FLAGS = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
NATIVE_BF16 = "avx512_bf16" in _FLAGS and tp.backends.cpu.get_cpu_capability() == "AVX512"


@pytest.fixture(autouse=True)
def restore_precision():
    yield
    tp.set_float32_matmul_precision("highest")
    tp.backends.mkldnn.conv.fp32_precision = "none"


def bfloat16_bound(exact_magnitudes):
    # Each operand rounded to 8 significant bits: a relative error of 2^-8 per factor, on each term.
    return 2 * 2.0 ** -8 * exact_magnitudes + 1e-6


def test_medium_matmuls_multiply_in_bfloat16_where_the_cpu_can():
    tp.manual_seed(0)
    a, b = tp.randn(256, 512), tp.randn(512, 128)
    exact = tp.mm(a, b)
    magnitudes = tp.mm(a.abs(), b.abs())
    tp.set_float32_matmul_precision("medium")
    assert tp.get_float32_matmul_precision() == "medium"
    medium = tp.mm(a, b)
    assert medium.dtype == tp.float32
    assert bool(((medium - exact).abs() <= bfloat16_bound(magnitudes)).all())
    assert bool((medium != exact).any()) == NATIVE_BF16
    linear = tp.nn.functional.linear(a, b.t())
    assert bool((linear != exact).any()) == NATIVE_BF16
    tp.set_float32_matmul_precision("highest")
    assert tp.equal(tp.mm(a, b), exact)


def test_high_precision_is_exact_on_the_cpu():
    # "high" asks for TF32, which CPUs do not have: PyTorch's CPU path computes exactly too.
    a, b = tp.randn(64, 64), tp.randn(64, 64)
    exact = tp.mm(a, b)
    tp.set_float32_matmul_precision("high")
    assert tp.equal(tp.mm(a, b), exact)


def test_bf16_convolutions_follow_mkldnns_conv_precision():
    tp.manual_seed(0)
    x, w = tp.randn(2, 16, 12, 12), tp.randn(32, 16, 3, 3)
    exact = tp.nn.functional.conv2d(x, w, padding=1)
    magnitudes = tp.nn.functional.conv2d(x.abs(), w.abs(), padding=1)
    tp.set_float32_matmul_precision("medium")  # matmuls only: convolutions stay exact
    assert tp.equal(tp.nn.functional.conv2d(x, w, padding=1), exact)
    tp.backends.mkldnn.conv.fp32_precision = "bf16"
    fast = tp.nn.functional.conv2d(x, w, padding=1)
    # (oneDNN chooses whether a convolution takes the bfloat16 form: only the tolerance is certain)
    assert bool(((fast - exact).abs() <= bfloat16_bound(magnitudes)).all())
    tp.backends.mkldnn.conv.fp32_precision = "ieee"
    assert tp.equal(tp.nn.functional.conv2d(x, w, padding=1), exact)


def test_gradients_follow_the_same_precision():
    tp.manual_seed(0)
    a = tp.randn(128, 256, requires_grad=True)
    b = tp.randn(256, 64)
    tp.mm(a, b).sum().backward()
    exact = a.grad.clone()
    a.grad = None
    tp.set_float32_matmul_precision("medium")
    tp.mm(a, b).sum().backward()
    bound = bfloat16_bound(tp.mm(tp.ones(128, 64), b.abs().t()))
    assert bool(((a.grad - exact).abs() <= bound).all())

"""torch.fft beyond the op table (op_table_fft.py): argument errors against PyTorch's, out=, autocast,
empty batches and long or prime-length signals against NumPy, batches split across threads, and the
backward nodes' names and second derivatives."""

import numpy as np
import pytest
import torch

import tensorplay
from tensorplay.autograd import gradcheck, gradgradcheck


def both(expr):
    """expr's outcome in each library: ('ok', dtype name, shape) or (exception type, message)."""
    outcomes = []
    for lib in (torch, tensorplay):
        env = {"T": lib, "x": lib.arange(8.0), "m": lib.ones(2, 4), "z": lib.ones(3, 4, dtype=lib.complex64)}
        try:
            r = eval(expr, env)
            outcomes.append(("ok", str(r.dtype).split(".")[-1], tuple(r.shape)))
        except Exception as e:  # noqa: BLE001 (the outcome is compared)
            outcomes.append((type(e), str(e)))
    return outcomes


@pytest.mark.parametrize("expr", [
    "T.fft.fft(x, norm='bad')", "T.fft.ifft(x, norm=1)", "T.fft.fft(x, n=0)", "T.fft.fft(x, n=-1)",
    "T.fft.fft(x, n=2.5)", "T.fft.fft([1.0, 2.0])", "T.fft.fft(x, dim=1.0)", "T.fft.fft(x, dim=3)",
    "T.fft.fft(T.tensor(1.0))", "T.fft.fft(T.ones(0))", "T.fft.rfft(z)", "T.fft.ihfft(z)", "T.fft.rfftn(z)",
    "T.fft.ihfftn(z)", "T.fft.rfft2(z[0])", "T.fft.ihfft2(z[0])", "T.fft.fftn(x, s=(2, 2))",
    "T.fft.fftn(m, s=(2, 2), dim=(0,))", "T.fft.fftn(m, dim=(0, 0))", "T.fft.fftn(m, s=(0, 2))",
    "T.fft.fftn(x.half(), s=(0,))", "T.fft.irfftn(x.half(), s=(1,))", "T.fft.fft(x.half(), n=0)",
    "T.fft.irfft(z, n=0)", "T.fft.irfft(T.ones(1, dtype=T.complex64))", "T.fft.rfftn(T.tensor(1.0))",
    "T.fft.irfftn(T.tensor(1.0))", "T.fft.rfftn(m, s=(0, -1))", "T.fft.irfftn(z, s=(2, 0))",
    "T.fft.fftn(T.tensor(1.0))", "T.fft.fftshift(T.tensor(1.0))", "T.fft.fftshift(m, dim=5)",
    "T.fft.fftfreq(5, dtype=T.int64)", "T.fft.fftfreq(5, dtype=T.complex64)", "T.fft.fftfreq(-1)",
    "T.fft.fft(x, out=T.empty(8))", "T.fft.irfft(z, out=T.empty(6, dtype=T.complex64))",
    "T.fft.irfft(z, out=T.empty(6, dtype=T.int64))", "T.fft.fftfreq(4, out=T.empty(4, dtype=T.int64))",
])
def test_errors_and_results_match_pytorch(expr):
    theirs, ours = both(expr)
    assert ours[0] == theirs[0], (theirs, ours)
    if ours[0] == "ok":
        assert ours == theirs
    else:  # the same words, and the function named
        assert theirs[1].split(" (Triggered")[0] in ours[1], (theirs, ours)
        assert expr.split("(")[0].split(".", 1)[1] in ours[1] or "fftfreq" in ours[1], ours


def test_out_takes_the_results_kind_in_any_precision():
    x = tensorplay.randn(8, dtype=tensorplay.float64)
    out = tensorplay.empty(8, dtype=tensorplay.complex64)
    result = tensorplay.fft.fft(x, out=out)
    assert result is out and out.dtype == tensorplay.complex64
    np.testing.assert_allclose(out.numpy(), np.fft.fft(x.numpy()), rtol=1e-5, atol=1e-5)
    real = tensorplay.empty(0)
    tensorplay.fft.irfft(tensorplay.fft.rfft(x), n=8, out=real)
    np.testing.assert_allclose(real.numpy(), x.numpy(), rtol=1e-5, atol=1e-5)
    freq = tensorplay.fft.fftfreq(4, out=tensorplay.empty(4, dtype=tensorplay.float64))
    assert freq.dtype == tensorplay.float64 and freq.tolist() == [0.0, 0.25, -0.5, -0.25]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_runs_transforms_in_float32(dtype):
    """PyTorch lists the transforms on the CPU's float32 list: 16-bit inputs are computed in float32
    (outside the region they are refused)."""
    x = tensorplay.randn(4, 16).to(getattr(tensorplay, dtype))
    with pytest.raises(RuntimeError, match="Unsupported dtype"):
        tensorplay.fft.rfft(x)
    with tensorplay.autocast("cpu", dtype=getattr(tensorplay, dtype)):
        spectrum = tensorplay.fft.rfft(x)
        back = tensorplay.fft.irfft(spectrum, n=16)
    assert spectrum.dtype == tensorplay.complex64 and back.dtype == tensorplay.float32
    expected = torch.fft.rfft(torch.from_numpy(x.float().numpy()))
    np.testing.assert_allclose(spectrum.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, shape, kwargs", [
    ("fft", (0, 4), {}), ("rfft", (0, 6), {}), ("irfft", (3, 0, 5), {"axis": -1}), ("fftn", (0, 3, 4), {"axes": (1, 2)}),
    ("rfftn", (2, 0, 4), {"axes": (0, 2)}),
])
def test_empty_batches_give_empty_results(name, shape, kwargs):
    """NumPy's answer (torch's MKL transforms raise on an empty batch)."""
    x = np.zeros(shape, np.complex64 if name == "irfft" else np.float32)
    ours = getattr(tensorplay.fft, name)(tensorplay.from_numpy(x), **{"dim": v for v in kwargs.values()})
    assert tuple(ours.shape) == getattr(np.fft, name)(x, **kwargs).shape


@pytest.mark.parametrize("n", [2 ** 16, 3 ** 9, 100_003, 65_537 * 2])
def test_long_and_prime_lengths_against_numpy(n):
    """pocketfft's radices and, for large prime factors, Bluestein's algorithm: float64 to ~1e-12."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    ours = tensorplay.fft.rfft(tensorplay.from_numpy(x)).numpy()
    expected = np.fft.rfft(x)
    assert np.abs(ours - expected).max() <= 1e-9 * np.abs(expected).max()
    back = tensorplay.fft.irfft(tensorplay.from_numpy(expected), n=n).numpy()
    np.testing.assert_allclose(back, x, atol=1e-10)


def test_batches_split_across_threads_match_one_thread():
    """Large batches are cut along a dim the transform leaves alone, one piece per thread; strided
    and transposed batches included."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((64, 48, 33)) + 1j * rng.standard_normal((64, 48, 33))
    x = tensorplay.from_numpy(base)
    cases = [lambda t: tensorplay.fft.fft(t, dim=1), lambda t: tensorplay.fft.fftn(t.transpose(0, 2), dim=(0, 2)),
             lambda t: tensorplay.fft.rfft(t.real, dim=0), lambda t: tensorplay.fft.irfft(t[:, ::2], dim=1)]
    expected = [np.fft.fft(base, axis=1), np.fft.fftn(base.transpose(2, 1, 0), axes=(0, 2)),
                np.fft.rfft(base.real, axis=0), np.fft.irfft(base[:, ::2], axis=1)]
    threads = tensorplay.get_num_threads()
    try:
        for n in (1, 2, 3):
            tensorplay.set_num_threads(n)
            for case, want in zip(cases, expected):
                np.testing.assert_allclose(case(x).numpy(), want, rtol=1e-10, atol=1e-10)
    finally:
        tensorplay.set_num_threads(threads)


def test_backward_nodes_have_pytorchs_names():
    x = tensorplay.randn(4, 6, requires_grad=True)
    assert tensorplay.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    assert tensorplay.fft.irfft(tensorplay.fft.rfft(x)).grad_fn.name() == "FftC2RBackward0"
    assert tensorplay.fft.fft(x.to(tensorplay.complex64)).grad_fn.name() == "FftC2CBackward0"


@pytest.mark.parametrize("fn", [
    lambda t: tensorplay.fft.rfft(t.real, n=9, norm="ortho"),
    lambda t: tensorplay.fft.irfft(t, n=7),
    lambda t: tensorplay.fft.hfft(t, norm="forward"),
    lambda t: tensorplay.fft.fft2(t),
    lambda t: tensorplay.fft.ihfftn(t.real, s=(3, 5)),
    lambda t: tensorplay.fft.hfftn(t, dim=(1, 0)),
])
def test_second_derivatives(fn):
    z = tensorplay.randn(3, 4, dtype=tensorplay.complex128, requires_grad=True)
    assert gradcheck(fn, (z,))
    assert gradgradcheck(fn, (z,))


def test_stft_then_istft_gives_the_signal_back():
    """The round trip with a window whose squared overlap never vanishes (PyTorch's promise)."""
    signal = tensorplay.randn(3, 1000, dtype=tensorplay.float64)
    window = tensorplay.hann_window(64, dtype=tensorplay.float64)
    spectra = tensorplay.stft(signal, 64, 16, window=window, return_complex=True)
    assert tuple(spectra.shape) == (3, 33, 63)
    back = tensorplay.istft(spectra, 64, 16, window=window, length=1000)
    np.testing.assert_allclose(back.numpy(), signal.numpy(), atol=1e-12)


def test_stft_warns_and_refuses_as_pytorch_does():
    x = tensorplay.randn(100)
    with pytest.warns(UserWarning, match="A window was not provided"):
        tensorplay.stft(x, 16, return_complex=True)
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
        tensorplay.stft(x, 16, window=tensorplay.ones(16))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        pairs = tensorplay.stft(x, 16, window=tensorplay.ones(16), return_complex=False)
    assert tuple(pairs.shape) == (9, 26, 2)
    with pytest.raises(RuntimeError, match="window overlap add"):
        tensorplay.istft(tensorplay.stft(x, 16, window=tensorplay.ones(16), return_complex=True), 16, 4, 4,
                         window=tensorplay.tensor([0.0, 1.0, 1.0, 0.0]), center=False)
    with pytest.warns(UserWarning, match="padded with zeros in the tail"):
        spectra = tensorplay.stft(x, 16, window=tensorplay.ones(16), return_complex=True)
        assert tensorplay.istft(spectra, 16, window=tensorplay.ones(16), length=130).shape == (130,)

"""Op-table rows of torch.fft (tensorplay/fft.py) and of stft and istft (tensorplay/_composites/stft.py): every transform in real, complex, integer and
16-bit inputs (the last refused, as PyTorch's CPU transforms refuse them), with signals cut and
padded (n, s), each normalization, dims in any order, strided and empty inputs; the sample
frequencies and the shifts. (An empty batch is tested against NumPy in test_fft.py: torch's MKL
transforms refuse it.)

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both; the rows that run in complex dtypes get the
complex gradient checks too)."""

from op_table import COMPLEX_DTYPES, Op, S

TRANSFORM_DTYPES = ("float32", "float64", "int64", "bfloat16") + COMPLEX_DTYPES
# (a complex input, which they refuse, is tested in test_fft.py)
REAL_INPUT_DTYPES = ("float32", "float64", "int64", "float16")


def fft_row(name, samples, dtypes=TRANSFORM_DTYPES):
    # torch's results of a real input to ifft, ihfft, ... are lazily conjugated views: resolved.
    return Op(f"fft.{name}", samples, dtypes, method=False,
              fn=lambda m, *args, **kw: resolve(getattr(m.fft, name)(*args, **kw)))


def resolve(t):
    return t.resolve_conj() if t.is_complex() else t


def one_dim_samples(mk):
    """A batch of signals along the last dim (or dim 0), cut or padded by n, in each normalization."""
    samples = [
        S("2d", mk((3, 8))),
        S("odd", mk((4, 7)), dim=0),
        S("n_padded", mk((3, 5)), n=8),
        S("n_cut", mk((6, 3)), 4, 0),
        S("ortho", mk((2, 6)), norm="ortho"),
        S("forward", mk((2, 9)), norm="forward"),
        S("backward", mk((5,)), norm="backward"),
        S("prime", mk((2, 13)), norm="ortho"),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((6, 4))), S("0dim", mk(()))]
    return samples


def n_dim_samples(mk):
    """Transforms over several dims: all of them, the last len(s), given ones in any order."""
    samples = [
        S("3d", mk((2, 3, 4))),
        S("s", mk((2, 3, 4)), s=(4, 6)),
        S("s_dim", mk((3, 2, 5)), s=(5, -1), dim=(0, 2), norm="ortho"),
        S("dim_order", mk((3, 4, 5)), dim=(2, 0), norm="forward"),
        S("one_dim", mk((2, 3, 4)), dim=(1,)),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((2, 5, 4)))]
    return samples


def two_dim_samples(mk):
    samples = [
        S("2d", mk((4, 6))),
        S("batch", mk((2, 3, 5)), norm="ortho"),
        S("s", mk((3, 4)), s=(5, 3)),
        S("dims", mk((3, 2, 4)), dim=(0, 2), norm="forward"),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((2, 5, 4))), S("1d", mk((4,)))]
    return samples


def shift_samples(mk):
    samples = [S("3d", mk((3, 4, 5))), S("dim1", mk((3, 5)), dim=1), S("dims", mk((4, 3, 2)), dim=(0, -1))]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((4, 3))), S("0dim", mk(()))]
    return samples


def frequencies(name):
    """fftfreq and rfftfreq take no tensor: each sample's n and d, in the dtype and on the device of a
    sample tensor."""
    def samples(mk):
        return [S("odd", mk((1,)), 5), S("even", mk((1,)), 6, 0.25), S("one", mk((1,)), 1),
                S("spacing", mk((1,)), 7, 0.1), S("zero_spacing", mk((1,)), 4, 0.0)]
    return Op(f"fft.{name}", samples, ("float32", "float64", "bfloat16", "int64"), method=False,
              fn=lambda m, t, *args, **kw: getattr(m.fft, name)(*args, dtype=t.dtype, device=t.device, **kw))


def stft_samples(mk):
    """Signals [L] and [B, L] with a positive window (one as long as n_fft, one shorter, so padded),
    centred with each padding mode or not, hops, normalization, both sides of the spectrum."""
    window = mk((16,), domain=(0.5, 1.5))
    samples = [
        S("window", mk((2, 64)), 16, window=window, return_complex=True),
        S("1d_hop5", mk((50,)), 16, 5, window=window, return_complex=True),
        S("short_window", mk((2, 40)), 16, 4, 10, window=mk((10,), domain=(0.5, 1.5)), return_complex=True),
        S("not_centred", mk((2, 40)), 16, window=window, center=False, return_complex=True),
        S("aligned", mk((2, 40)), 16, 4, 10, window=mk((10,), domain=(0.5, 1.5)), center=False,
          align_to_window=True, return_complex=True),
        S("constant_pad_normalized", mk((30,)), 8, pad_mode="constant", normalized=True,
          window=mk((8,), domain=(0.5, 1.5)), return_complex=True),
        S("circular_two_sided", mk((2, 30)), 8, pad_mode="circular", onesided=False,
          window=mk((8,), domain=(0.5, 1.5)), return_complex=True),
        S("replicate_real_pairs", mk((2, 30)), 8, pad_mode="replicate", window=mk((8,), domain=(0.5, 1.5)),
          return_complex=False),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((40, 2)), 16, window=window, return_complex=True),
                    S("3d", mk((2, 2, 40)), 16, window=window, return_complex=True)]
    return samples


def istft_samples(mk):
    """Spectra as stft makes them ([(B,) n_fft // 2 + 1 or n_fft, frames]) with positive windows."""
    window = mk((16,), domain=(0.5, 1.5), dtype="float64" if mk.dtype == "complex128" else "float32")
    samples = [
        S("small", mk((5, 4)), 8, 2, window=mk((8,), domain=(0.5, 1.5), dtype=window.dtype.name)),
        S("window", mk((2, 9, 13)), 16, window=window),
        S("1d_length", mk((9, 13)), 16, window=window, length=40),
        S("longer", mk((9, 13)), 16, window=window, length=70),
        S("hop8", mk((2, 9, 7)), 16, 8, window=window, normalized=True),
        S("two_sided_complex", mk((16, 13)), 16, window=window, onesided=False, return_complex=True),
        S("not_centred", mk((9, 13)), 16, window=window, center=False),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((13, 9)), 16, window=window)]
    return samples


ROWS = [
    fft_row("fft", one_dim_samples),
    fft_row("ifft", one_dim_samples),
    fft_row("rfft", one_dim_samples, REAL_INPUT_DTYPES),
    fft_row("irfft", one_dim_samples),
    fft_row("hfft", one_dim_samples),
    fft_row("ihfft", one_dim_samples, REAL_INPUT_DTYPES),
    fft_row("fftn", n_dim_samples),
    fft_row("ifftn", n_dim_samples),
    fft_row("rfftn", n_dim_samples, REAL_INPUT_DTYPES),
    fft_row("irfftn", n_dim_samples),
    fft_row("hfftn", n_dim_samples),
    fft_row("ihfftn", n_dim_samples, REAL_INPUT_DTYPES),
    fft_row("fft2", two_dim_samples),
    fft_row("ifft2", two_dim_samples),
    fft_row("rfft2", two_dim_samples, REAL_INPUT_DTYPES),
    fft_row("irfft2", two_dim_samples),
    fft_row("hfft2", two_dim_samples),
    fft_row("ihfft2", two_dim_samples, REAL_INPUT_DTYPES),
    fft_row("fftshift", shift_samples, ("float32", "int64", "bool", "complex64")),
    fft_row("ifftshift", shift_samples, ("float32", "int64", "bool", "complex64")),
    frequencies("fftfreq"),
    frequencies("rfftfreq"),
    Op("stft", stft_samples, ("float32", "float64", "bfloat16", "int64") + COMPLEX_DTYPES),
    Op("istft", istft_samples, ("float32",) + COMPLEX_DTYPES),
]

GRADIENT_LABELS = """
    fft.fft fft.ifft fft.rfft fft.irfft fft.hfft fft.ihfft fft.fftn fft.ifftn fft.rfftn fft.irfftn fft.hfftn
    fft.ihfftn fft.fft2 fft.ifft2 fft.rfft2 fft.irfft2 fft.hfft2 fft.ihfft2 fft.fftshift fft.ifftshift stft
""".split()
COMPLEX_ONLY_GRADIENT_LABELS = ["istft"]

NOT_DIFFERENTIABLE = {
    "fft.fftfreq": "a factory: it has no tensor input",
    "fft.rfftfreq": "a factory: it has no tensor input",
}

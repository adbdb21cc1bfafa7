"""The short-time Fourier transform and its inverse (torch.stft, torch.istft).

Both are composites of torch.fft's transforms (tensorplay/fft.py, on the kernels of
csrc/tensorplay/ops/fft.cpp): stft cuts the signal into overlapping frames (a strided view), weights
each by the window and transforms it; istft transforms the frames back, weights them by the window
again, adds the overlapping frames up (nn.functional.fold) and divides by the sum of the squared
windows that overlap at each sample. Gradients follow from the parts."""

import warnings

import tensorplay
from tensorplay import _C
from tensorplay.amp.composite_casts import float32_inputs
from tensorplay.nn._functional._checks import _named

__all__ = ["stft", "istft"]
METHODS = ["stft", "istft"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _full_window(op, window, win_length, n_fft, dtype, device):
    """The window, ones where none is given, centred in n_fft samples with zeros on both sides."""
    if window is None:
        window = tensorplay.ones(win_length, dtype=dtype, device=device)
    elif window.dim() != 1 or window.size(0) != win_length:
        if op == "stft":
            raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but "
                               f"got window with size {list(window.shape)}")
        raise RuntimeError("istft: Invalid window shape. window has to be 1D and length of `win_length`")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = tensorplay.constant_pad_nd(window, [left, n_fft - win_length - left])
    return window


def _lengths(n_fft, hop_length, win_length):
    return (n_fft // 4 if hop_length is None else hop_length), (n_fft if win_length is None else win_length)


@_named("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The Fourier transforms of the window-weighted frames of n_fft samples every hop_length samples
    of a signal [L] or a batch of them [B, L]: [(B,) n_fft // 2 + 1 (onesided) or n_fft, frames]."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    input, window = float32_inputs(input, window)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=3)
    if center:
        if align_to_window is not None:
            raise RuntimeError("stft: align_to_window should only be set when center = false")
        if pad_mode not in _PAD_MODES:
            raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
        # Padded as a batch of one channel each, the form nn.functional.pad's modes take.
        shape = list(input.shape)
        padded = tensorplay.nn.functional.pad(input.reshape([1] * (3 - input.dim()) + shape),
                                              [n_fft // 2, n_fft // 2], pad_mode)
        input = padded.reshape(padded.shape[len(padded.shape) - len(shape):])
    hop_length, win_length = _lengths(n_fft, hop_length, win_length)
    if input.dim() not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("stft: expected a tensor of floating point or complex values")
    complex_result = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_result:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=3)
    length = input.size(-1)
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    window = _full_window("stft", window, win_length, n_fft, input.dtype if not input.is_complex() else
                          input.real.dtype, input.device)
    if align_to_window:
        # Each frame starts where its window does: the signal gets the window's zero padding on both
        # sides, whose samples the window zeroes.
        left = (n_fft - win_length) // 2
        input = tensorplay.constant_pad_nd(input, [left, n_fft - win_length - left])
    frames = input.unfold(-1, n_fft, hop_length) * window  # [(B,) frames, n_fft]
    onesided = (not complex_result) if onesided is None else onesided
    if onesided and complex_result:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spectra = tensorplay.fft.rfft(frames, norm=norm) if onesided else tensorplay.fft.fft(frames, norm=norm)
    spectra = spectra.transpose(-1, -2)
    return spectra if return_complex else tensorplay.view_as_real(spectra)


def _overlap_add(frames, hop_length, length):
    """The sum of frames [C, n_frames, n_fft] laid hop_length apart: [C, length]."""
    if frames.is_complex():
        return tensorplay.complex(_overlap_add(frames.real, hop_length, length),
                                  _overlap_add(frames.imag, hop_length, length))
    n_fft = frames.size(-1)
    summed = tensorplay.nn.functional.fold(frames.transpose(1, 2), (1, length), (1, n_fft), stride=(1, hop_length))
    return summed.reshape(frames.size(0), length)


@_named("istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The signal whose stft (with the same arguments) is input: each frame transformed back,
    weighted by the window, overlapped and added, and divided by the window's squared overlap."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    hop_length, win_length = _lengths(n_fft, hop_length, win_length)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=3)
    if input.numel() == 0:
        raise RuntimeError("istft input tensor cannot be empty")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft requires a 2D or 3D complex tensor, but got a {input.dim()}D tensor")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    fft_size, n_frames = input.size(-2), input.size(-1)
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError("istft expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError("istft expected 0 < win_length <= n_fft")
    window = _full_window("istft", window, win_length, n_fft, input.real.dtype, input.device)
    batched = input.dim() == 3
    spectra = (input if batched else input.unsqueeze(0)).transpose(1, 2)  # [C, n_frames, freq]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = tensorplay.fft.ifft(spectra, norm=norm)
    else:
        if window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        frames = tensorplay.fft.irfft(spectra[..., :n_fft // 2 + 1], n=n_fft, norm=norm)
    expected_length = n_fft + hop_length * (n_frames - 1)
    signal = _overlap_add(frames * window, hop_length, expected_length)
    envelope = _overlap_add((window * window).expand(1, n_frames, n_fft), hop_length, expected_length)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else expected_length - n_fft // 2 if center else expected_length
    stop = min(end, expected_length)
    signal, envelope = signal[:, start:stop], envelope[:, start:stop]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: 1 (the window's squared overlap is zero at some sample: "
                           "the frames do not cover the signal)")
    signal = signal / envelope
    if end > expected_length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=3)
        signal = tensorplay.constant_pad_nd(signal, [0, end - expected_length])
    return signal if batched else signal.squeeze(0)

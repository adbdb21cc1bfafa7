"""tensorplay.fft: PyTorch's discrete Fourier transforms (torch.fft).

Every transform here is a composite of three primitives that have kernels (pocketfft) and
gradients, in csrc/tensorplay/ops/fft.cpp: _fft_c2c (complex to complex), _fft_r2c (a real signal to
the half of its spectrum that determines the rest) and _fft_c2r (such a half spectrum back to a real
signal). What this module adds is PyTorch's argument handling: each signal cut or padded with zeros
to the length asked for (n, s), the dims, the normalization (norm), dtype promotion and out=.

Under autocast on the CPU the transforms run in float32, as PyTorch lists them (all but the 2-d and
n-d Hermitian ones, which its list lacks: their 16-bit inputs are refused there too)."""

import functools
import inspect
import math
import numbers
import operator

import tensorplay
from tensorplay import _C
from tensorplay._composites._forms import write_out
from tensorplay._dtypes import aten_name
from tensorplay.amp.composite_casts import in_float32
from tensorplay.nn._functional._checks import _named

__all__ = ["Tensor", "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

Tensor = _C.Tensor  # (torch.fft re-exports it)

# The primitives' normalization modes: no factor, 1/sqrt(n), 1/n.
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _normalization(norm, forward):
    """norm names which direction carries the 1/n factor ("backward", the default: the inverse one;
    "forward"; "ortho": both 1/sqrt(n)); the mode of a transform in this direction."""
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"argument 'norm' must be str, not {type(norm).__name__}")
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex):
    """x in a dtype the transforms take: integers and bool become the default float dtype, the
    16-bit floats are refused (PyTorch's CPU kernels have no half-precision transform)."""
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(tensorplay.get_default_dtype())
    if x.dtype not in (tensorplay.float32, tensorplay.float64, tensorplay.complex64, tensorplay.complex128):
        raise RuntimeError(f"Unsupported dtype {aten_name(x.dtype)}")
    if require_complex and not x.is_complex():
        x = x.to(tensorplay.complex128 if x.dtype == tensorplay.float64 else tensorplay.complex64)
    return x


def _require_real(op, x, wording="a real input tensor"):
    if isinstance(x, _C.Tensor) and x.is_complex():
        raise RuntimeError(f"{op} expects {wording}, but got {aten_name(x.dtype)}")


def _wrap(dim, ndim):
    dim = _index(dim, "dim")
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _as_int(value):
    """value as an int, where it is one (bool is not), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _index(value, what):
    index = _as_int(value)
    if index is None:
        raise TypeError(f"argument '{what}' must be int, not {_type_name(value)}")
    return index


def _check_length(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """x cut or padded with zeros at the end of each of dims to the size given for it."""
    for d, n in zip(dims, sizes):
        if x.size(d) > n:
            x = x.narrow(d, 0, n)
        elif x.size(d) < n:
            padding = [0, 0] * (x.dim() - 1 - d) + [0, n - x.size(d)]
            x = tensorplay.constant_pad_nd(x, padding)
    return x


def _signal(x, n, dim):
    """The one dim of a 1-d transform and its signal length."""
    dim = _wrap(dim, x.dim())
    n = x.size(dim) if n is None else _index(n, "n")
    _check_length(n)
    return dim, n


def _shape_and_dims(x, s, dim):
    """The dims of an n-d transform and the signal's size along each: dim (every dim, or the last
    len(s) when s is given), s (x's own sizes where absent or -1). PyTorch checks these before the
    dtype."""
    dims = None
    if dim is not None:
        dims = [_wrap(d, x.dim()) for d in ([dim] if _as_int(dim) is not None else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        dims = list(range(x.dim())) if dims is None else dims
        return [x.size(d) for d in dims], dims
    s = [_index(n, "s") for n in s]
    if dims is None:
        if len(s) > x.dim():
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.dim()} dimensions.")
        dims = list(range(x.dim() - len(s), x.dim()))
    elif len(s) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    shape = [x.size(d) if n == -1 else n for n, d in zip(s, dims)]
    for n in shape:
        _check_length(n)
    return shape, dims


def _half_spectrum_shape(op, x, s, dim):
    """The shape and dims of a transform whose input is a half spectrum (irfftn, hfftn), and the
    length of the real signal along the last dim: s's last entry, or 2 (m - 1) for the m entries x
    has there."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    last_size = 2 * (x.size(dims[-1]) - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_length(last_size)
    shape[-1] = last_size // 2 + 1
    return shape, dims, last_size


def _type_name(value):
    return type(value).__name__


def _parsed(binding, fn):
    """fn with its arguments' types checked first, as PyTorch's argument parser checks them, and its
    errors worded as that parser's ("fft_fft(): argument 'n' must be int, not float")."""
    signature = inspect.signature(fn)

    def is_int(v):  # what has __index__ (an integer 0-dim tensor too), as PyTorch's parser takes it
        return _as_int(v) is not None

    def is_ints(v):
        return is_int(v) or (isinstance(v, (tuple, list)) and all(is_int(i) for i in v))

    @functools.wraps(fn)
    def op(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{binding}(): {e}") from None
        for name, value in bound.arguments.items():
            if name == "input" and not isinstance(value, _C.Tensor):
                raise TypeError(f"{binding}(): argument 'input' (position 1) must be Tensor, not {_type_name(value)}")
            if value is None or name == "input":
                continue
            if name == "norm" and not isinstance(value, str):
                raise TypeError(f"{binding}(): argument 'norm' must be str, not {_type_name(value)}")
            if name == "n" and not is_int(value):
                raise TypeError(f"{binding}(): argument 'n' must be int, not {_type_name(value)}")
            if name == "d" and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise TypeError(f"{binding}(): argument 'd' must be float, not {_type_name(value)}")
            if name in ("s", "dim") and not is_ints(value):
                kind = "int" if binding in _ONE_DIM and name == "dim" else "tuple of ints"
                raise TypeError(f"{binding}(): argument '{name}' must be {kind}, not {_type_name(value)}")
        return fn(*args, **kwargs)
    return op


_ONE_DIM = {"fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_hfft", "fft_ihfft"}


def _transform(fn=None, *, autocast=True):
    """fn as torch.fft's function of its name: float32 under autocast (where PyTorch lists it),
    errors naming it, out= (of the result's kind, complex or real, and any precision)."""
    if fn is None:
        return lambda fn: _transform(fn, autocast=autocast)
    name = fn.__name__
    body = _named(f"fft.{name}")(_parsed(f"fft_{name}", in_float32(fn) if autocast else fn))

    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        result = body(*args, **kwargs)
        if out is None:
            return result
        if isinstance(out, _C.Tensor):
            if result.is_complex() and not out.is_complex():
                raise RuntimeError(f"[fft.{name}] {name} expects a complex output tensor, but got "
                                   f"{aten_name(out.dtype)}")
            if not result.is_complex() and not out.is_floating_point():
                raise RuntimeError(f"[fft.{name}] {name} expects a floating point output tensor, but got "
                                   f"{aten_name(out.dtype)}")
        return write_out(f"fft.{name}", out, result.to(out.dtype) if isinstance(out, _C.Tensor) else result)
    return op


# ---- complex transforms (a real input is made complex) ----

def _c2c(x, n, dim, norm, forward):
    x = _promote(x, require_complex=True)
    dim, n = _signal(x, n, dim)
    return _C._fft_c2c(_resize(x, [dim], [n]), [dim], _normalization(norm, forward), forward)


def _c2c_n(x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = _promote(x, require_complex=True)
    return _C._fft_c2c(_resize(x, dims, shape), dims, _normalization(norm, forward), forward)


@_transform
def fft(input, n=None, dim=-1, norm=None):
    return _c2c(input, n, dim, norm, True)


@_transform
def ifft(input, n=None, dim=-1, norm=None):
    return _c2c(input, n, dim, norm, False)


@_transform
def fftn(input, s=None, dim=None, norm=None):
    return _c2c_n(input, s, dim, norm, True)


@_transform
def ifftn(input, s=None, dim=None, norm=None):
    return _c2c_n(input, s, dim, norm, False)


@_transform
def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c_n(input, s, dim, norm, True)


@_transform
def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c_n(input, s, dim, norm, False)


# ---- real signals and their half spectra ----

@_transform
def rfft(input, n=None, dim=-1, norm=None):
    _require_real("rfft", input)
    x = _promote(input, require_complex=False)
    dim, n = _signal(x, n, dim)
    return _C._fft_r2c(_resize(x, [dim], [n]), [dim], _normalization(norm, True), True)


def _rfftn(op, input, s, dim, norm):
    _require_real(op, input, "a real-valued input tensor")
    shape, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    x = _promote(input, require_complex=False)
    return _C._fft_r2c(_resize(x, dims, shape), dims, _normalization(norm, True), True)


@_transform
def rfftn(input, s=None, dim=None, norm=None):
    return _rfftn("rfftn", input, s, dim, norm)


@_transform
def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _rfftn("rfftn", input, s, dim, norm)


def _c2r(x, n, dim, norm, forward):
    """irfft (forward False) and hfft (forward True: the backward transform of the conjugate)."""
    x = _promote(x, require_complex=True)
    dim = _wrap(dim, x.dim())
    n = 2 * (x.size(dim) - 1) if n is None else _index(n, "n")
    _check_length(n)
    x = _resize(x, [dim], [n // 2 + 1])
    return _C._fft_c2r(x.conj() if forward else x, [dim], _normalization(norm, forward), n)


@_transform
def irfft(input, n=None, dim=-1, norm=None):
    return _c2r(input, n, dim, norm, False)


@_transform
def hfft(input, n=None, dim=-1, norm=None):
    return _c2r(input, n, dim, norm, True)


def _irfftn(op, input, s, dim, norm):
    shape, dims, last_size = _half_spectrum_shape(op, input, s, dim)
    x = _promote(input, require_complex=True)
    return _C._fft_c2r(_resize(x, dims, shape), dims, _normalization(norm, False), last_size)


@_transform
def irfftn(input, s=None, dim=None, norm=None):
    return _irfftn("irfftn", input, s, dim, norm)


@_transform
def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _irfftn("irfftn", input, s, dim, norm)


@_transform
def ihfft(input, n=None, dim=-1, norm=None):
    _require_real("ihfft", input)
    x = _promote(input, require_complex=False)
    dim, n = _signal(x, n, dim)
    return _C._fft_r2c(_resize(x, [dim], [n]), [dim], _normalization(norm, False), True).conj()


def _hfftn(op, input, s, dim, norm):
    """The real transform of a Hermitian-symmetric signal given by its half: the complex forward
    transforms over all dims but the last, then the conjugate's backward transform to a real signal."""
    shape, dims, last_size = _half_spectrum_shape(op, input, s, dim)
    x = _promote(input, require_complex=True)
    mode = _normalization(norm, True)
    x = _resize(x, dims, shape)
    if len(dims) > 1:
        x = _C._fft_c2c(x, dims[:-1], mode, True)
    return _C._fft_c2r(x.conj(), dims[-1:], mode, last_size)


@_transform(autocast=False)
def hfftn(input, s=None, dim=None, norm=None):
    return _hfftn("hfftn", input, s, dim, norm)


@_transform(autocast=False)
def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _hfftn("hfftn", input, s, dim, norm)


def _ihfftn(op, input, s, dim, norm):
    """The inverse of hfftn: the conjugated half spectrum of the real transform over the last dim,
    then the complex backward transforms over the others."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    if input.is_complex():
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {aten_name(input.dtype)}")
    x = _promote(input, require_complex=False)
    mode = _normalization(norm, False)
    x = _C._fft_r2c(_resize(x, dims, shape), dims[-1:], mode, True).conj()
    return _C._fft_c2c(x, dims[:-1], mode, False) if len(dims) > 1 else x


@_transform(autocast=False)
def ihfftn(input, s=None, dim=None, norm=None):
    return _ihfftn("ihfftn", input, s, dim, norm)


@_transform(autocast=False)
def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _ihfftn("ihfftn", input, s, dim, norm)


# ---- sample frequencies and shifts ----

def _frequencies(op, k, n, d, out, requires_grad):
    """The frequencies k / (n d), as PyTorch computes them (k times 1 / (n d))."""
    scale = 1.0 / (n * d) if n * d != 0 else math.copysign(math.inf, n * d)
    result = (k * scale).requires_grad_(requires_grad)
    return result if out is None else write_out(f"fft.{op}", out, result)


def _frequency_dtype(op, n, dtype, out):
    """The result's dtype: dtype, else out's, else the default; complex ones are refused as
    PyTorch's arange refuses them."""
    if n < 0:
        raise RuntimeError(f"[fft.{op}] Trying to create tensor with negative dimension {n}: [{n}]")
    if dtype is None:
        dtype = out.dtype if isinstance(out, _C.Tensor) else tensorplay.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{op} requires a floating point or complex dtype")
    if dtype.is_complex:
        raise NotImplementedError(f"[fft.{op}] \"arange_cpu\" not implemented for '{aten_name(dtype)}'")
    return dtype


def _factory(fn):
    """fn as torch.fft's factory of its name: arguments checked and errors named as the transforms'."""
    return _named(f"fft.{fn.__name__}")(_parsed(f"fft_{fn.__name__}", fn))


@_factory
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point transform, in cycles per unit of the spacing d: 0, 1, ...,
    then the negative ones, -(n // 2), ..., -1, each over n d."""
    n = _index(n, "n")
    dtype = _frequency_dtype("fftfreq", n, dtype, out)
    k = tensorplay.arange(n, dtype=dtype, device=device)
    k = tensorplay.where(k < (n + 1) // 2, k, k - n)
    return _frequencies("fftfreq", k, n, d, out, requires_grad)


@_factory
def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's n // 2 + 1 outputs for an n-point signal."""
    n = _index(n, "n")
    dtype = _frequency_dtype("rfftfreq", n, dtype, out)
    k = tensorplay.arange(n // 2 + 1, dtype=dtype, device=device)
    return _frequencies("rfftfreq", k, n, d, out, requires_grad)


def _shift(op, input, dim, half):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [_wrap(d, input.dim()) for d in ([dim] if _as_int(dim) is not None else dim)]
    return tensorplay.roll(input, [half(input.size(d)) for d in dims], dims)


@_named("fft.fftshift")
def fftshift(input, dim=None):
    """The zero frequency moved to the middle of each of dims (all by default)."""
    return _shift("fftshift", input, dim, lambda n: n // 2)


@_named("fft.ifftshift")
def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    return _shift("ifftshift", input, dim, lambda n: (n + 1) // 2)

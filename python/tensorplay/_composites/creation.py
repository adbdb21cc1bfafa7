"""The creation functions of the torch namespace that are not kernels of their own: the signal windows
(hann, hamming, blackman, bartlett, kaiser), logspace, the deprecated inclusive range, fill and the
torch-level fill_/zero_, empty_permuted and Tensor.new_empty_strided, and the constructors that take
memory from Python objects: frombuffer (the buffer protocol), asarray (tensors, NumPy arrays,
buffers, sequences, scalars; sharing memory where PyTorch shares it) and from_file (a memory-mapped file).

Each computes with the same ops, in the same dtypes and order, as PyTorch's CPU kernels, so that
16-bit results round as PyTorch's do."""

import errno
import math
import numbers
import os
import stat
import warnings

import ml_dtypes
import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._dtypes import aten_name
from tensorplay.amp.composite_casts import outside_autocast
from tensorplay._composites.state import warn_once
from tensorplay._dtypes import finfo, iinfo
from tensorplay._tensor import from_numpy, tensor as _tensor
from tensorplay._composites.tensor_api import layout as _layout, strided as _strided

__all__ = [
    "asarray", "bartlett_window", "blackman_window", "empty_permuted", "fill", "fill_", "from_file", "frombuffer",
    "hamming_window", "hann_window", "kaiser_window", "logspace", "range", "zero_",
]
METHODS = ["new_empty_strided"]


def _type(value):
    return type(value).__name__


def _check_int(op, name, value, position=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{op}(): argument '{name}'{where} must be int, not {_type(value)}")


def _check_bool(op, name, value, position):
    if not isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be bool, not {_type(value)}")


def _check_float(op, name, value, position):
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be float, not {_type(value)}")
    return float(value)


# ---- Signal windows ----

def _const(value, like):
    """value as a 0-dim tensor of like's dtype: PyTorch's window kernels round their constants to the
    window's dtype before computing with them, which shows in 16-bit windows."""
    return _C.full((), value, dtype=like.dtype, device=like.device)


def _window(op, window_length, periodic, dtype, layout, device, requires_grad, values):
    """The window of window_length points that values(positions) gives for its symmetric form, whose
    positions are 0, 1, ..., n-1 in the window's dtype. A periodic window is the symmetric one of one
    point more, without its last point."""
    _check_int(op, "window_length", window_length, 1)
    _check_bool(op, "periodic", periodic, 2)
    dtype = dtype or _C.get_default_dtype()
    if window_length < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length={window_length}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        window = _C.ones(window_length, dtype=dtype, layout=layout, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        window = values(_C.arange(n, dtype=dtype, device=device, layout=layout))[:window_length]
    return window.requires_grad_(requires_grad)


@outside_autocast
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    alpha = _check_float("hamming_window", "alpha", alpha, 3)
    beta = _check_float("hamming_window", "beta", beta, 4)

    def values(n):
        phase = n * _const(math.pi * 2.0 / (n.size(0) - 1), n)
        return _C.cos(phase) * _const(-beta, n) + _const(alpha, n)
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad, values)


@outside_autocast
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    _check_int("hann_window", "window_length", window_length, 1)
    _check_bool("hann_window", "periodic", periodic, 2)
    try:
        return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, layout=layout, device=device,
                              requires_grad=requires_grad)
    except RuntimeError as e:  # the errors name the op that was called
        raise RuntimeError(str(e).replace("hamming_window", "hann_window")) from None


@outside_autocast
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def values(n):
        phase = n * _const(math.pi / (n.size(0) - 1), n)
        return (_C.cos(phase * 4) * _const(0.08, n) - _C.cos(phase * 2) * _const(0.5, n)) + _const(0.42, n)
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad, values)


@outside_autocast
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def values(n):
        rising = n * _const(2.0 / (n.size(0) - 1), n)
        first_half = ((n.size(0) - 1) >> 1) + 1
        return _C.cat([rising[:first_half], 2 - rising[first_half:]])
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad, values)


# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on [8, inf), from the
# Cephes Math Library, as PyTorch's i0 uses them.
_I0_SMALL = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1,
)
_I0_LARGE = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1,
)


def _chebyshev(x, coefficients):
    b0, b1, b2 = _C.full_like(x, coefficients[0]), _C.zeros_like(x), None
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + _const(c, x)
    return (b0 - b2) * 0.5


def _i0(x):
    """The modified Bessel function of the first kind of order 0, elementwise, for x >= 0."""
    small = _C.exp(x) * _chebyshev(x / 2 - 2, _I0_SMALL)
    large = _C.exp(x) * _chebyshev(_const(32.0, x) / x - 2, _I0_LARGE) / _C.sqrt(x)
    return _C.where(x <= 8, small, large)


@outside_autocast
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    beta = _check_float("kaiser_window", "beta", beta, 3)

    def values(n):
        # 16-bit windows are computed in float32 and rounded once, as PyTorch's kernel does.
        x = n.float() if n.dtype in (_C.float16, _C.bfloat16) else n
        centre = _const((n.size(0) - 1) / 2.0, x)
        offset = (x - centre) / centre
        scaled = _const(beta, x)
        return (_i0(scaled * _C.sqrt(_C.abs(1 - offset * offset))) / _i0(scaled)).to(n.dtype)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad, values)


# ---- Ranges ----

def _scalar(op, name, value, position):
    """A bound given as a number or a 0-dim tensor, as a number."""
    if isinstance(value, Tensor) and value.dim() == 0:
        return value.item()
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Number, not {_type(value)}")
    return value


# PyTorch's C++ names of the types that its checked scalar conversions report.
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint8": "uint8_t"}


def _checked(value, dtype):
    """value, which must fit in dtype (infinities and NaN fit a float), as PyTorch converts scalars."""
    name = str(dtype).removeprefix("tensorplay.")
    if dtype.is_floating_point:
        fits = not math.isfinite(value) or abs(value) <= finfo(dtype).max
    else:
        info = iinfo(dtype)
        fits = math.isfinite(value) and info.min <= value <= info.max
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES[name]} without overflow")
    return value


def _result_dtype(op, dtype, out):
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {_type(out)}")
    if out is None:
        return dtype or _C.get_default_dtype()
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(f"dtype {aten_name(dtype)} does not match dtype of out parameter ({aten_name(out.dtype)})")
    return out.dtype


def _into(op, result, out, requires_grad):
    """result as the op returns it: a new tensor, or written into out, which takes its size silently
    (these ops resize out without PyTorch's usual warning)."""
    if out is None:
        return result.requires_grad_(requires_grad)
    if out.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    return out.copy_(result)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    for name, bound in (("start", start), ("end", end)):
        if isinstance(bound, Tensor) and bound.dim() != 0:
            raise RuntimeError(f"logspace only supports 0-dimensional start and end tensors, but got {name} with "
                               f"{bound.dim()} dimension(s).")
    start = _scalar("logspace", "start", start, 1)
    end = _scalar("logspace", "end", end, 2)
    _check_int("logspace", "steps", steps, 3)
    base = _check_float("logspace", "base", base, 4)
    dtype = _result_dtype("logspace", dtype, out)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    device = out.device if out is not None and device is None else device
    if steps <= 1:
        result = _C.full((steps,), base ** float(start), dtype=_C.float64, device=device, layout=layout).to(dtype)
        return _into("logspace", result, out, requires_grad)
    if dtype == _C.bool:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    # PyTorch rounds start and end to the dtype, then steps in float64 from both ends towards the middle.
    first = _C.scalar_tensor(_checked(start, dtype), dtype=dtype)
    last = _C.scalar_tensor(_checked(end, dtype), dtype=dtype)
    span = (last - first).item() if dtype.is_floating_point else last.item() - first.item()
    step = span / (steps - 1)
    index = _C.arange(steps, dtype=_C.float64, device=device, layout=layout)
    exponent = _C.where(index < steps // 2, first.item() + step * index, last.item() - step * (steps - 1 - index))
    return _into("logspace", _C.pow(base, exponent).to(dtype), out, requires_grad)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
          requires_grad=False):
    """The values from start to end inclusive, step apart (deprecated, as in PyTorch: use arange)."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    start = _scalar("range", "start", start, 1)
    end = _scalar("range", "end", end, 2)
    step = _scalar("range", "step", step, 3)
    dtype = _result_dtype("range", dtype, out)
    if dtype == _C.bool:
        raise NotImplementedError("\"range_cpu\" not implemented for 'Bool'")
    device = out.device if out is not None and device is None else device
    # PyTorch counts and steps in the dtype's accumulation type: float64 for float32 and float64,
    # float32 for the 16-bit floats, int64 (the bounds and step truncated) for the integers.
    if dtype.is_floating_point:
        compute = _C.float32 if dtype in (_C.float16, _C.bfloat16) else _C.float64
    else:
        compute = _C.int64
    start, end, step = (_checked(v, compute) for v in (start, end, step))
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if compute == _C.float32:
        start, end, step = (float(np.float32(v)) for v in (start, end, step))
    elif compute == _C.float64:
        start, end, step = float(start), float(end), float(step)
    else:
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if compute == _C.float32:
        size = int(np.float32(np.float32(end) - np.float32(start)) / np.float32(step) + np.float32(1))
    elif compute == _C.float64:
        size = int((end - start) / step + 1)
    else:
        size = (end - start) // step + 1
    if size > iinfo(_C.int64).max:
        raise RuntimeError(f"range: {size} elements are too many for a tensor")
    index = _C.arange(size, dtype=compute, device=device, layout=layout)
    return _into("range", (index * step + start).to(dtype), out, requires_grad)


# ---- Filling ----

def fill(input, value):
    """A tensor like input, every element value. Its gradient flows to value (a tensor), not to input."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fill(): argument 'input' (position 1) must be Tensor, not {_type(input)}")
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"fill(): argument 'value' (position 2) must be Tensor or Number, not {_type(value)}")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
        # A where() rather than fill_, so that the gradient reaches value (summed) as well as input (zeros).
        everywhere = _C.ones_like(input, dtype=_C.bool)
        return _C.where(everywhere, value.to(device=input.device, dtype=input.dtype), input)
    # A clone keeps input in the graph, so that its gradient is zeros rather than missing, as in PyTorch.
    return input.clone().fill_(value)


def fill_(input, value):
    if not isinstance(input, Tensor):
        raise TypeError(f"fill_(): argument 'input' (position 1) must be Tensor, not {_type(input)}")
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"fill_(): argument 'value' (position 2) must be Tensor or Number, not {_type(value)}")
    return input.fill_(value)


def zero_(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"zero_(): argument 'input' (position 1) must be Tensor, not {_type(input)}")
    return input.zero_()


# ---- Uninitialised tensors with a chosen memory layout ----

def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of the given size whose dims lie in memory in the order physical_layout
    gives, outermost first (physical_layout (0, 1, ..., n-1) is contiguous)."""
    size, physical_layout = tuple(size), tuple(physical_layout)
    rank = len(size)
    if len(physical_layout) != rank:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {rank} is not equal to len(physical_layout) = {len(physical_layout)}")
    inverse = [0] * rank
    seen = set()
    for i, dim in enumerate(physical_layout):
        if not 0 <= dim < rank:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {rank - 1}, but got {dim} at "
                               f"index {i}).  NB: negative dims not currently supported; file an issue if you want "
                               "it.")
        if dim in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(dim)
        inverse[dim] = i
    physical = _C.empty([size[d] for d in physical_layout], dtype=dtype, layout=layout, device=device)
    return physical.permute(inverse).requires_grad_(requires_grad)


def new_empty_strided(input, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                      pin_memory=False):
    """An uninitialised tensor of the given size and strides, with input's dtype and device unless given."""
    return _C.empty_strided(size, stride, dtype=dtype or input.dtype, device=device or input.device,
                            requires_grad=requires_grad, layout=layout)


# ---- Tensors over the memory of Python objects ----

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def _numpy_dtype(dtype):
    if dtype == _C.bfloat16:
        return _BFLOAT16
    return np.dtype(str(dtype).removeprefix("tensorplay."))


def _share(array):
    """A tensor over array's memory; a copy where the memory is not aligned for the dtype, which
    tensorplay's kernels need (from_numpy warns then)."""
    if array.flags.aligned:
        if array.dtype == _BFLOAT16:
            return _C._from_numpy(array.view(np.uint16), _C.bfloat16)
        return _C._from_numpy(array)
    return from_numpy(array)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of an object that implements the buffer protocol (bytearray,
    array.array, memoryview, mmap, ...): count elements of dtype from byte offset on (count -1: all).
    Writes to either are seen by the other."""
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"frombuffer(): argument 'dtype' must be torch.dtype, not {_type(dtype)}")
    _check_int("frombuffer", "count", count)
    _check_int("frombuffer", "offset", offset)
    return _frombuffer(buffer, dtype, count, offset, warn_readonly=True).requires_grad_(requires_grad)


def _frombuffer(buffer, dtype, count, offset, warn_readonly):
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    length = view.nbytes
    element_size = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % element_size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({element_size})")
        count = (length - offset) // element_size
    elif offset + count * element_size > length:
        raise ValueError(f"requested buffer length ({count} * {element_size} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({length} bytes)")
    if view.readonly and warn_readonly:
        warn_once("frombuffer", "The given buffer is not writable, and tensorplay does not support non-writable "
                  "tensors. This means you can write to the underlying (supposedly non-writable) buffer using the "
                  "tensor. You may want to copy the buffer to protect its data or make it writable before "
                  "converting it to a tensor. This type of warning will be suppressed for the rest of this "
                  "program.", stacklevel=3)
    raw = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * element_size, offset=offset)
    return _share(raw.view(_numpy_dtype(dtype)))


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-D CPU tensor of size elements of dtype over the first bytes of a memory-mapped file.

    shared=True maps the file read-write and shared, so that writes to the tensor reach the file (and
    other mappings of it); the file is created if missing and grown, with zeros, if smaller than the
    tensor. Otherwise (False or None) the file is opened read-only and mapped copy-on-write: it must
    hold size elements, and writes to the tensor stay in this process. size 0 maps nothing."""
    if isinstance(filename, bytes):
        filename = os.fsdecode(filename)
    if not isinstance(filename, str):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {_type(filename)}")
    if shared is not None:
        _check_bool("from_file", "shared", shared, 2)
    if size is None:
        size = 0
    _check_int("from_file", "size", size)
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"from_file(): argument 'dtype' must be torch.dtype, not {_type(dtype)}")
    if layout is not None and not isinstance(layout, _layout):
        raise TypeError(f"from_file(): argument 'layout' must be torch.layout, not {_type(layout)}")
    for name, flag in (("pin_memory", pin_memory), ("requires_grad", requires_grad)):
        if not isinstance(flag, bool):
            raise TypeError(f"from_file(): argument '{name}' must be bool, not {_type(flag)}")
    if device is not None and _C.device(device).type != "cpu":
        _C.empty(0, device=device)  # refused where this build has no kernels for the device (CUDA)
        raise NotImplementedError(f"from_file: a tensor over a file is a CPU tensor, not a {_C.device(device).type} "
                                  f"one")
    if layout is not None and layout is not _strided:
        raise NotImplementedError(f"from_file: tensorplay makes strided tensors only, not {layout}")
    if pin_memory:
        raise RuntimeError("tensors constructed from a file cannot be pinned")
    dtype = dtype or _C.get_default_dtype()
    if size == 0:
        return _C.empty(0, dtype=dtype).requires_grad_(requires_grad)
    nbytes = size * dtype.itemsize
    mapped = _map_file(filename, shared, nbytes)
    return _share(mapped.view(_numpy_dtype(dtype))).requires_grad_(requires_grad)


def _map_file(filename, shared, nbytes):
    """nbytes of the file as a uint8 NumPy memmap: shared read-write, or copy-on-write. The errors are
    PyTorch's (its MapAllocator's), with the C library's text for errno."""
    try:
        fd = os.open(filename, os.O_RDWR | os.O_CREAT if shared else os.O_RDONLY, 0o600)
    except OSError as e:
        raise RuntimeError(f"unable to open file <{filename}> in {'read-write' if shared else 'read-only'} mode: "
                           f"{e.strerror} ({e.errno})") from None
    try:
        length = os.fstat(fd).st_size
        if nbytes > length:
            if not shared:
                raise RuntimeError(f"file <{filename}> size <{length}> is smaller than the required mapping size "
                                   f"<{nbytes}>")
            os.ftruncate(fd, nbytes)  # the file grows with zeros
        failure = errno.ENOMEM if nbytes < 0 else errno.ENODEV if stat.S_ISDIR(os.fstat(fd).st_mode) else None
        if failure is not None:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: {os.strerror(failure)} "
                               f"({failure})")
        with open(fd, "r+b" if shared else "rb", closefd=False) as file:
            # The mapping keeps the file open for as long as the array (and the tensor over it) lives.
            return np.memmap(file, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
    finally:
        os.close(fd)


def _is_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _device_differs(device, tensor):
    return device is not None and _C.device(device) != tensor.device


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """obj as a tensor, sharing its memory where it can: a tensor itself, a NumPy array or an object with
    the buffer protocol are aliased unless copy=True or dtype/device differ (copy=False makes that an
    error); sequences and scalars are always copied. requires_grad None keeps a tensor's own flag."""
    if isinstance(obj, np.ndarray):
        if any(s < 0 for s in obj.strides):
            raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                             "strides are not currently supported. (You can probably work around this by making a "
                             "copy of your array  with array.copy().) ")
        # from_numpy's warning about a read-only array is for the alias only: held back until it is one.
        with warnings.catch_warnings(record=True) as held:
            warnings.simplefilter("always")
            source = from_numpy(obj)
    elif isinstance(obj, Tensor):
        source, held = obj, []
    else:
        return _asarray_copy(obj, dtype, device, copy, requires_grad)
    wrong_device = _device_differs(device, source)
    wrong_dtype = dtype is not None and dtype != source.dtype
    if copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            result = source.to(device=device, dtype=dtype, copy=True)
        else:
            result = source.clone()
    else:
        if wrong_device:
            raise ValueError(f"can't alias tensor from device '{source.device}' to '{_C.device(device)}'.")
        if wrong_dtype:
            raise ValueError(f"can't alias tensor with dtype '{aten_name(source.dtype)}' into dtype "
                             f"'{aten_name(dtype)}'.")
        for w in held:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        result = source
    if requires_grad is None:
        if result is obj and obj.is_leaf and obj.requires_grad:
            warn_once("asarray", "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
                      "instead of False. Pass requires_grad=False explicitly to get the old behavior and silence "
                      "this warning.", stacklevel=2)
    elif result.is_leaf:
        result.requires_grad_(requires_grad)
    elif not requires_grad:
        result = result.detach()
    return result


def _asarray_copy(obj, dtype, device, copy, requires_grad):
    """asarray of an object that is neither a tensor nor a NumPy array."""
    if _is_buffer(obj) and not isinstance(obj, np.generic):
        result = _frombuffer(obj, dtype or _C.get_default_dtype(), -1, 0, warn_readonly=False)
        if copy:
            result = result.clone()
        if device is not None:
            result = result.to(device)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = _tensor(obj, dtype=dtype, device=device)
    return result.requires_grad_(bool(requires_grad))

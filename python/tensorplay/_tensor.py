"""Tensor construction from Python data and NumPy, and the Tensor methods written in Python."""

import builtins
import collections.abc
import numbers
import warnings

import ml_dtypes
import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._tensor_str import tensor_repr

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array (ml_dtypes.bfloat16 arrays included)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not ndarray.dtype.isnative:
        raise TypeError("from_numpy: the array must be in native byte order")
    if not ndarray.flags.aligned:
        # Kernels read elements through typed pointers, which must be aligned: such an array
        # (a view into a byte buffer at an odd offset) is copied instead of shared.
        warnings.warn("The given NumPy array is not aligned for its dtype; tensorplay copied it, so writes to the "
                      "tensor will not reach the array.", UserWarning, stacklevel=2)
        ndarray = ndarray.copy()
    elif not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and tensorplay does not support non-writable tensors. "
                      "This means writing to this tensor will result in undefined behavior. You may want to copy "
                      "the array to protect its data or make it writable before converting it to a tensor.",
                      UserWarning, stacklevel=2)
    if ndarray.dtype == _BFLOAT16:
        return _C._from_numpy(ndarray.view(np.uint16), _C.bfloat16)
    return _C._from_numpy(ndarray)


_NUMPY_TO_DTYPE = {
    np.dtype(np.bool_): _C.bool, np.dtype(np.uint8): _C.uint8, np.dtype(np.int8): _C.int8,
    np.dtype(np.int16): _C.int16, np.dtype(np.int32): _C.int32, np.dtype(np.int64): _C.int64,
    np.dtype(np.float16): _C.float16, np.dtype(np.float32): _C.float32, np.dtype(np.float64): _C.float64,
    _BFLOAT16: _C.bfloat16, np.dtype(np.complex64): _C.complex64, np.dtype(np.complex128): _C.complex128,
}


_NUMPY_DTYPE_OF = {dtype: array_dtype for array_dtype, dtype in _NUMPY_TO_DTYPE.items()}


def _numpy_dtype(dtype):
    if dtype in _NUMPY_TO_DTYPE:
        return _NUMPY_TO_DTYPE[dtype]
    if dtype.kind == "u":
        return _C.int64  # tensorplay has no uint16/32/64
    raise TypeError(f"tensor(): can't convert NumPy data of dtype {dtype}")


def _scan(data, dim=0):
    """The shape and dtype PyTorch infers for data: Python floats are the default dtype, ints
    int64, bools bool; NumPy values keep their dtype; nested sequences must be rectangular."""
    if isinstance(data, (np.ndarray, np.generic)):
        return tuple(np.shape(data)), _numpy_dtype(data.dtype)
    if isinstance(data, Tensor):
        return tuple(data.shape), data.dtype
    if isinstance(data, builtins.bool):
        return (), _C.bool
    if isinstance(data, numbers.Integral):
        return (), _C.int64
    if isinstance(data, numbers.Real):
        return (), _C.get_default_dtype()
    if isinstance(data, numbers.Complex):
        return (), _C.get_default_dtype().to_complex()
    if isinstance(data, (str, bytes)):
        raise TypeError(f"tensor(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, (list, tuple)):
        if not isinstance(data, collections.abc.Sequence):
            raise RuntimeError(f"tensor(): Could not infer dtype of {type(data).__name__}")
        data = list(data)
    if not data:
        return (0,), _C.get_default_dtype()
    items = [_scan(x, dim + 1) for x in data]
    shape, dtype = items[0]
    for item_shape, item_dtype in items[1:]:
        if (item_shape == ()) != (shape == ()):
            raise TypeError(f"tensor(): expected a sequence at dim {dim + 1}, not a number, or the other way round")
        if item_shape != shape:
            raise ValueError(f"expected sequence of length {shape[0]} at dim {dim + 1} (got {item_shape[0]})")
        dtype = _C.promote_types(dtype, item_dtype)
    return (len(data),) + shape, dtype


def _wide_array(data, dtype):
    """data as a NumPy array wide enough to convert exactly into dtype."""
    if isinstance(data, np.ndarray):
        return data
    wide = (np.complex128 if dtype.is_complex else np.float64 if dtype.is_floating_point
            else np.bool_ if dtype == _C.bool else np.int64)
    try:
        return np.asarray(data, dtype=wide)
    except OverflowError as e:
        raise RuntimeError(f"tensor(): Overflow when unpacking long: {e}") from None


def _check_fits(array, dtype):
    """Python numbers must fit an integral dtype they are converted to, as PyTorch checks them
    (NumPy data is cast like NumPy casts, without the check): ints may wrap around an unsigned
    dtype from below (-1 is 255 in uint8), floats must lie within its range."""
    if dtype.is_floating_point or dtype.is_complex or dtype == _C.bool or array.size == 0:
        return
    info = np.iinfo(_NUMPY_DTYPE_OF[dtype])
    if array.dtype.kind == "f":
        fits = np.isfinite(array).all() and array.min() >= info.min and array.max() <= info.max
    else:
        low = -info.max if info.min == 0 else info.min
        fits = array.min() >= low and array.max() <= info.max
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {str(dtype).split('.')[-1]} without overflow")


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of data: a number, nested lists/tuples, an array or a tensor.

    Python floats become the default dtype (float32), ints int64 and bools bool; NumPy arrays and
    scalars keep their dtype.
    """
    if device is None:
        device = _C.get_default_device()
    if isinstance(data, Tensor):
        out = data.detach().clone()
        return out.to(device=device, dtype=dtype).requires_grad_(requires_grad)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        out = _C.stack([tensor(x) for x in data])
        return out.to(device=device, dtype=dtype).requires_grad_(requires_grad)
    if isinstance(data, np.ndarray) and any(s < 0 for s in data.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array with array.copy().)")
    _, inferred = _scan(data)
    array = _wide_array(data, inferred)
    if dtype is not None and not isinstance(data, np.ndarray):
        _check_fits(array, dtype)
    if array.dtype.kind == "u" and array.dtype != np.uint8:
        array = array.astype(np.int64)
    out = from_numpy(array if array.flags.c_contiguous else array.copy(order="C")).clone()
    return out.to(device=device, dtype=dtype or inferred).requires_grad_(requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but reuses data's memory when it is already a tensor or a NumPy array of the right dtype."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and dtype is None and device is None:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def equal(input, other):
    """True when both tensors have the same shape and equal elements (NaN is never equal)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
    return input.shape == other.shape and bool((input == other).all())


def result_type(tensor1, tensor2):
    return _C._result_type(tensor1, tensor2)


# ---- Tensor methods written in Python ----

def _numpy(self, *, force=False):
    if self.requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    array = self.detach()._numpy()
    return array.view(ml_dtypes.bfloat16) if self.dtype == _C.bfloat16 else array


def _empty_lists(shape):
    return [] if shape[0] == 0 else [_empty_lists(shape[1:]) for _ in range(shape[0])]


def _tolist(self):
    if self.numel() == 0 and self.dim() > 0:  # NumPy refuses shapes like (0, 2**62)
        return _empty_lists(tuple(self.shape))
    array = _numpy(self.detach().cpu().contiguous())
    if self.dtype in (_C.bfloat16, _C.float16):
        array = array.astype(np.float64)
    return array.tolist()


def _array(self, dtype=None, copy=None):
    array = _numpy(self)
    return array if dtype is None else array.astype(dtype)


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _format(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _contains(self, element):
    if isinstance(element, (Tensor, numbers.Number)):
        return builtins.bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to the leaves and accumulates it in their .grad."""
    from tensorplay import autograd
    autograd.backward(self, gradient, retain_graph, create_graph, inputs)


def _grad_fn(self):
    from tensorplay.autograd.graph import wrap
    return wrap(self._grad_fn)


Tensor.backward = _backward
Tensor.grad_fn = property(_grad_fn)
Tensor.numpy = _numpy
Tensor.tolist = _tolist
Tensor.__array__ = _array
Tensor.__iter__ = _iter
Tensor.__format__ = _format
Tensor.__contains__ = _contains
Tensor.__repr__ = tensor_repr
Tensor.new_tensor = _new_tensor
Tensor.equal = equal
Tensor.__array_priority__ = 1000  # numpy defers to Tensor's reflected operators

_C._set_tensor_factory(tensor)

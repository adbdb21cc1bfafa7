"""Tensor construction from Python data and NumPy, and the Tensor methods written in Python."""

import builtins
import numbers

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
    if ndarray.dtype == _BFLOAT16:
        return _C._from_numpy(ndarray.view(np.uint16)).view(_C.bfloat16)
    if not ndarray.dtype.isnative:
        raise TypeError("from_numpy: the array must be in native byte order")
    return _C._from_numpy(ndarray)


def _infer_array(data):
    """NumPy's reading of nested Python data, with PyTorch's dtype inference on top."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        return _C.stack([tensor(x) for x in data])
    try:
        array = np.asarray(data)
    except (ValueError, OverflowError) as e:
        raise ValueError(f"tensor: could not convert data to a tensor: {e}") from None
    if array.dtype == object:
        raise TypeError(f"tensor: could not infer dtype of {type(data).__name__} data")
    return array


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of data: a number, nested lists/tuples, an array or a tensor.

    Python floats become the default dtype (float32), ints int64, bools bool.
    """
    if requires_grad:
        raise RuntimeError("tensor: requires_grad=True needs autograd, which tensorplay does not have yet")
    if isinstance(data, Tensor):
        out = data.clone()
        return out.to(device=device, dtype=dtype) if (dtype or device) else out
    array = _infer_array(data)
    if isinstance(array, Tensor):
        return array.to(device=device, dtype=dtype) if (dtype or device) else array
    if array.dtype.kind == "f" and array.dtype != _BFLOAT16 and not isinstance(data, np.ndarray):
        target = dtype or _C.get_default_dtype()  # Python floats become the default dtype
    else:
        target = dtype
    if array.dtype.kind in "iu" and array.dtype not in (np.uint8, np.int8, np.int16, np.int32, np.int64):
        array = array.astype(np.int64)
    if array.dtype.kind == "i" and not isinstance(data, np.ndarray):
        array = array.astype(np.int64)
    out = from_numpy(array if array.flags.c_contiguous else array.copy(order="C")).clone()
    if target is not None or device is not None:
        out = out.to(device=device, dtype=target)
    return out


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


def result_type(tensor1, tensor2):
    return _C._result_type(tensor1, tensor2)


# ---- Tensor methods written in Python ----

def _numpy(self, *, force=False):
    array = self._numpy()
    return array.view(ml_dtypes.bfloat16) if self.dtype == _C.bfloat16 else array


def _tolist(self):
    array = _numpy(self.contiguous())
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


Tensor.numpy = _numpy
Tensor.tolist = _tolist
Tensor.__array__ = _array
Tensor.__iter__ = _iter
Tensor.__format__ = _format
Tensor.__contains__ = _contains
Tensor.__repr__ = tensor_repr
Tensor.new_tensor = _new_tensor
Tensor.__array_priority__ = 1000  # numpy defers to Tensor's reflected operators

_C._set_tensor_factory(tensor)

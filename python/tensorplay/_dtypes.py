"""finfo and iinfo: the numeric limits of each dtype, as in PyTorch."""

import ml_dtypes
import numpy as np

from tensorplay import _C

_NUMPY_FLOAT = {
    _C.float16: np.float16,
    _C.float32: np.float32,
    _C.float64: np.float64,
    _C.bfloat16: ml_dtypes.bfloat16,
}
_NUMPY_INT = {
    _C.uint8: np.uint8,
    _C.int8: np.int8,
    _C.int16: np.int16,
    _C.int32: np.int32,
    _C.int64: np.int64,
}


class finfo:
    """Limits of a floating dtype: bits, eps, max, min, tiny (smallest_normal), resolution."""

    def __init__(self, type=None):
        type = _C.get_default_dtype() if type is None else type
        if getattr(type, "is_complex", False):  # the limits of its parts, as in PyTorch
            type = type.to_real()
        if type not in _NUMPY_FLOAT:
            raise TypeError(f"finfo: expected a floating point dtype, got {type}")
        info = ml_dtypes.finfo(_NUMPY_FLOAT[type])
        self.dtype = str(type).split(".")[-1]
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: bits, min, max."""

    def __init__(self, type):
        if type not in _NUMPY_INT:
            raise TypeError(f"iinfo: expected an integer dtype, got {type}")
        info = np.iinfo(_NUMPY_INT[type])
        self.dtype = str(type).split(".")[-1]
        self.bits = int(info.bits)
        self.min = int(info.min)
        self.max = int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# PyTorch's C++ names of the dtypes, which its errors print: ATen's ScalarType names ('Long', in
# "not implemented for 'Long'") and the C++ types of the elements ('long int', 'c10::Half').
_ATEN_NAMES = {_C.bool: "Bool", _C.uint8: "Byte", _C.int8: "Char", _C.int16: "Short", _C.int32: "Int",
               _C.int64: "Long", _C.float16: "Half", _C.bfloat16: "BFloat16", _C.float32: "Float",
               _C.float64: "Double", _C.complex64: "ComplexFloat", _C.complex128: "ComplexDouble"}
_CPP_NAMES = {_C.bool: "bool", _C.uint8: "unsigned char", _C.int8: "signed char", _C.int16: "short int",
              _C.int32: "int", _C.int64: "long int", _C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16",
              _C.float32: "float", _C.float64: "double", _C.complex64: "c10::complex<float>",
              _C.complex128: "c10::complex<double>"}


def aten_name(dtype):
    """The dtype as ATen names it: 'Float', 'Long', 'BFloat16'."""
    return _ATEN_NAMES[dtype]


def cpp_type_name(dtype):
    """The C++ type of the dtype's elements, as PyTorch's type-mismatch errors print it: 'float', 'long int'."""
    return _CPP_NAMES[dtype]

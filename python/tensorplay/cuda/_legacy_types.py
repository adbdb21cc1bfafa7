"""The typed tensor and storage classes of torch.cuda (torch.cuda.FloatTensor, torch.cuda.FloatStorage,
...), as PyTorch's CPU wheel has them: they exist, so isinstance checks and annotations work (no
tensor is ever an instance), and constructing one raises PyTorch's error."""

from tensorplay import _C
from tensorplay._legacy_constructors import _TensorType
from tensorplay._unbuilt import lazy_init
from tensorplay.storage import _warn_typed_storage

_TENSOR_DTYPES = {"FloatTensor": _C.float32, "DoubleTensor": _C.float64, "HalfTensor": _C.float16,
                  "BFloat16Tensor": _C.bfloat16, "ByteTensor": _C.uint8, "CharTensor": _C.int8,
                  "ShortTensor": _C.int16, "IntTensor": _C.int32, "LongTensor": _C.int64, "BoolTensor": _C.bool}
_STORAGE_DTYPES = {"FloatStorage": _C.float32, "DoubleStorage": _C.float64, "HalfStorage": _C.float16,
                   "BFloat16Storage": _C.bfloat16, "ByteStorage": _C.uint8, "CharStorage": _C.int8,
                   "ShortStorage": _C.int16, "IntStorage": _C.int32, "LongStorage": _C.int64, "BoolStorage": _C.bool,
                   "ComplexFloatStorage": _C.complex64, "ComplexDoubleStorage": _C.complex128}

__all__ = [*_TENSOR_DTYPES, *_STORAGE_DTYPES]


class _CudaTensorType(_TensorType):
    """The metaclass of tensorplay.cuda.FloatTensor and its kind: a tensor of its dtype on a GPU."""

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type tensorplay.cuda.{cls.__name__} not available. Torch not compiled with CUDA enabled.")

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and obj.device.type == "cuda"

    def __repr__(cls):
        return f"<class 'tensorplay.cuda.{cls.__name__}'>"


class _CudaStorageType(type):
    """The metaclass of tensorplay.cuda.FloatStorage and its kind: constructing one starts CUDA."""

    @property
    def dtype(cls):
        _warn_typed_storage()
        return cls._dtype

    def __call__(cls, *args, **kwargs):
        _warn_typed_storage()
        lazy_init()


for _name, _dtype in _TENSOR_DTYPES.items():
    globals()[_name] = _CudaTensorType(_name, (), {"dtype": _dtype, "is_cuda": True, "is_sparse": False,
                                                   "__module__": "tensorplay.cuda"})
for _name, _dtype in _STORAGE_DTYPES.items():
    globals()[_name] = _CudaStorageType(_name, (), {"_dtype": _dtype, "is_cuda": True, "is_sparse": False,
                                                    "__module__": "tensorplay.cuda"})
del _name, _dtype

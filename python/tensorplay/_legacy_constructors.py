"""The constructors of PyTorch's first API, which programs still use: `torch.Tensor(2, 3)` (an
uninitialised tensor of those sizes), `torch.Tensor([1, 2])` (a copy of the data), and the typed
tensor classes `torch.FloatTensor`, `torch.LongTensor`, ... which construct tensors of their dtype
and answer isinstance() by dtype."""

import numbers

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._size import Size

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor"]


def _is_sizes(args):
    return all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args) or (
        len(args) == 1 and isinstance(args[0], Size))


def _construct(dtype, args, size, device):
    """What torch.Tensor(*args) / torch.<Type>Tensor(*args) builds, in dtype."""
    from tensorplay._tensor import tensor

    if size is not None:
        if args:
            raise TypeError("new(): received both positional arguments and size=")
        args = tuple(size)
    if not args:
        return _C.empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].detach()  # an alias of the data, as torch.Tensor(t) gives
    if _is_sizes(args):
        return _C.empty(*(args[0] if isinstance(args[0], Size) else args), dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], (str, bytes)):
        return tensor(args[0], dtype=dtype, device=device)
    raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of type "
                    f"{type(next(a for a in args if not isinstance(a, numbers.Integral))).__name__}")


def _tensor_new(cls, *args, size=None, device=None):
    """Tensor.__new__: the tensor of the default dtype that torch.Tensor(*args) builds, as an
    instance of cls (a subclass that defines no __new__ of its own gets one of its own type)."""
    t = _construct(_C.get_default_dtype(), args, size, device)
    return t if cls is Tensor else Tensor._make_subclass(cls, t)


class _TensorType(type):
    """The metaclass of the typed tensor classes: calling one constructs a tensor of its dtype, and
    isinstance(t, LongTensor) is whether t is an int64 tensor on the CPU."""

    def __call__(cls, *args, size=None, device=None):
        return _construct(cls.dtype, args, size, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'tensorplay.{cls.__name__}'>"


def _typed(name, dtype):
    return _TensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__module__": "tensorplay"})


FloatTensor = _typed("FloatTensor", _C.float32)
DoubleTensor = _typed("DoubleTensor", _C.float64)
HalfTensor = _typed("HalfTensor", _C.float16)
BFloat16Tensor = _typed("BFloat16Tensor", _C.bfloat16)
ByteTensor = _typed("ByteTensor", _C.uint8)
CharTensor = _typed("CharTensor", _C.int8)
ShortTensor = _typed("ShortTensor", _C.int16)
IntTensor = _typed("IntTensor", _C.int32)
LongTensor = _typed("LongTensor", _C.int64)
BoolTensor = _typed("BoolTensor", _C.bool)

_C._set_legacy_constructor(_tensor_new)

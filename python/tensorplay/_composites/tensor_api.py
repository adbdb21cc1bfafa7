"""The Tensor API that is not an op: how a tensor describes itself (type(), layout, dim_order, name, and
the is_* flags of the backends, layouts and features tensorplay does not have), the matrix views
(H, mH, mT, T, adjoint), conjugation (computed, never a lazy view), the real and imag views, the legacy constructor
new(), Python callables applied elementwise (apply_, map_, map2_), subclass views (as_subclass), the
CUDA-only memory calls that a CPU build refuses (pin_memory, record_stream), the copies to devices tensorplay
has no kernels for (xpu, ipu, mtia), what a quantized tensor answers that a dense one answers too
(dequantize), and the functions PyTorch removed but still names, to say
what replaces them (eig, lstsq, solve, symeig, matrix_rank, reinforce)."""

import builtins
import collections.abc
import itertools
import operator
import warnings

import ml_dtypes
import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._composites._forms import write_out
from tensorplay._dtypes import aten_name
from tensorplay._composites.state import warn_once
from tensorplay._size import Size
from tensorplay._tensor import tensor as _tensor
from tensorplay.autograd.function import Function
from tensorplay.nn._functional._checks import _named

__all__ = [
    "adjoint", "conj", "conj_physical", "dequantize", "eig", "is_complex", "is_conj", "is_neg", "jagged", "layout",
    "lstsq", "matrix_rank", "resolve_conj", "resolve_neg", "solve", "sparse_bsc", "sparse_bsr", "sparse_coo",
    "sparse_csc", "sparse_csr", "strided", "symeig"
]
METHODS = [
    "H", "T", "adjoint", "apply_", "as_subclass", "conj", "conj_physical", "conj_physical_", "const_data_ptr",
    "dequantize", "dim_order", "ipu", "is_complex", "is_conj", "is_ipu", "is_maia", "is_mkldnn", "is_mps",
    "is_mtia", "is_neg", "is_nested", "is_pinned", "is_quantized", "is_set_to",
    "is_sparse_csr", "is_vulkan", "is_xla", "is_xpu", "mH", "mT", "map2_", "map_", "module_load", "mtia", "name", "new",
    "pin_memory", "record_stream", "reinforce", "resolve_conj", "resolve_neg", "type",
    "volatile", "real", "imag", "xpu"
]
# Bound below, by hand: Tensor.layout (this module's `layout` is the type, tensorplay.layout), and Tensor.eig,
# lstsq, solve and symeig (the methods take other arguments than the torch functions of those names).


def _class_name(value):
    # This module defines type() (Tensor.type), so the builtin is not reached by that name here.
    return value.__class__.__name__


def _check_tensor(op, value, name="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {_class_name(value)}")


# ---- layouts ----

class layout:
    """How a tensor's elements are stored: strided (dense) or sparse_coo (docs/sparse.md). The
    compressed sparse and the jagged layouts are PyTorch's names, for code that compares against them."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'tensorplay.layout' instances")

    def __repr__(self):
        return f"tensorplay.{self._name}"

    def __reduce__(self):
        # Pickled by name, so that unpickling gives back the one object (as for dtypes).
        return self._name


layout.__module__ = "tensorplay"


def _layout(name):
    value = object.__new__(layout)
    object.__setattr__(value, "_name", name)
    return value


strided = _layout("strided")
sparse_coo = _layout("sparse_coo")
sparse_csr = _layout("sparse_csr")
sparse_csc = _layout("sparse_csc")
sparse_bsr = _layout("sparse_bsr")
sparse_bsc = _layout("sparse_bsc")
jagged = _layout("jagged")

Tensor.layout = property(lambda self: sparse_coo if self.is_sparse else strided,
                         doc="The tensor's layout: tensorplay.strided, or tensorplay.sparse_coo for a sparse tensor.")


def _never(what):
    return property(lambda self: False, doc=f"Whether the tensor is {what}: tensorplay has none, so never.")


is_mps = _never("on an Apple GPU (MPS)")
is_xpu = _never("on an Intel GPU (XPU)")
is_ipu = _never("on a Graphcore IPU")
is_xla = _never("on an XLA device")
is_mtia = _never("on an MTIA device")
is_maia = _never("on a MAIA device")
is_vulkan = _never("on a Vulkan device")
is_mkldnn = _never("in oneDNN's (MKL-DNN's) opaque layout")
is_quantized = _never("quantized")
is_sparse_csr = _never("sparse (CSR)")
is_nested = _never("a nested tensor")

name = property(lambda self: None, doc="Always None: PyTorch names tensors only inside its graph tracers, "
                                       "which tensorplay does not have.")


# ---- how a tensor describes itself ----

def _legacy_type_name(dtype, device):
    place = "" if device.type == "cpu" else f"{device.type}."
    return f"tensorplay.{place}{aten_name(dtype)}Tensor"


_LEGACY_DTYPES = {aten_name(d) + "Tensor": d for d in (
    _C.float32, _C.float64, _C.float16, _C.bfloat16, _C.int8, _C.int16, _C.int32, _C.int64, _C.uint8, _C.bool,
    _C.complex64, _C.complex128)}


def _parse_legacy_type(name):
    """The (device, dtype) of a legacy type name: 'torch.DoubleTensor', 'torch.cuda.FloatTensor' (or
    'tensorplay.' ones, as type() prints them), or 'torch.Tensor' for the default dtype on the CPU."""
    for package in ("torch.", "tensorplay."):
        if name.startswith(package):
            rest = name[len(package):]
            device, _, kind = rest.rpartition(".")
            if device in ("", "cuda"):
                dtype = _C.get_default_dtype() if kind == "Tensor" else _LEGACY_DTYPES.get(kind)
                if dtype is not None:
                    return _C.device(device or "cpu"), dtype
    raise ValueError(f"invalid type: '{name}'")


def type(input, dtype=None, non_blocking=False, **kwargs):
    """The tensor's legacy type name ('tensorplay.FloatTensor') when dtype is None; otherwise the tensor
    cast to dtype: a dtype, a legacy type name (which names the device too) or the class Tensor (the
    default dtype). The tensor itself is returned when it already is of that type."""
    memory_format = kwargs.pop("memory_format", None)
    non_blocking = kwargs.pop("async", non_blocking)  # the deprecated spelling
    if kwargs:
        raise TypeError(f"type() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not isinstance(non_blocking, bool):
        raise TypeError(f"type(): argument 'non_blocking' (position 2) must be bool, not {_class_name(non_blocking)}")
    if dtype is None:
        return _legacy_type_name(input.dtype, input.device)
    if isinstance(dtype, bytes):
        dtype = dtype.decode()
    if isinstance(dtype, str):
        device, dtype = _parse_legacy_type(dtype)
    elif isinstance(dtype, _C.dtype):
        device = input.device
    elif dtype is Tensor:
        device, dtype = _C.device("cpu"), _C.get_default_dtype()
    elif isinstance(dtype, builtins.type):
        # The legacy typed classes (tensorplay.FloatTensor, ...) name a dtype on the CPU.
        if not isinstance(getattr(dtype, "dtype", None), _C.dtype):
            raise ValueError(f"invalid type: '{dtype.__name__}'")
        device, dtype = _C.device("cpu"), dtype.dtype
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    options = {} if memory_format is None else {"memory_format": memory_format}
    return input.to(device=device, dtype=dtype, non_blocking=non_blocking, **options)


def const_data_ptr(input):
    """The address of the tensor's first element (data_ptr(), for code that only reads through it)."""
    return input.data_ptr()


def is_set_to(input, tensor):
    """Whether both tensors are the same view of the same memory: one storage, offset, sizes and strides."""
    _check_tensor("is_set_to", tensor, "tensor")
    if input.is_meta or tensor.is_meta:
        raise NotImplementedError("is_set_to(): meta tensors have no storage to compare")
    return (_storage_address(input) == _storage_address(tensor) and input.storage_offset() == tensor.storage_offset()
            and input.shape == tensor.shape and input.stride() == tensor.stride())


def _storage_address(t):
    # Every storage, empty ones included, has an address of its own while it lives.
    return t.data_ptr() - t.storage_offset() * t.element_size()


def is_pinned(input, device=None):
    """Whether the tensor is in page-locked memory, for fast copies to an accelerator: never, in a
    build without one."""
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this argument.",
                      DeprecationWarning, stacklevel=2)
        _C.device(device)
    return False


def pin_memory(input, device=None):
    """Refused, as PyTorch refuses it without an accelerator: pinned memory exists for copies to one."""
    if not input.is_cpu:
        raise RuntimeError(f"pin_memory(): cannot pin '{input.type()}' only dense CPU tensors can be pinned")
    if device is not None:
        kind = _C.device(device).type
        if kind in ("cpu", "meta"):
            raise RuntimeError(f"pin_memory(): {kind.upper()} device type not an accelerator.")
    raise RuntimeError("pin_memory(): Cannot access accelerator device when none is available.")


def record_stream(input, s):
    """Refused on the CPU, as in PyTorch: streams order the work of an accelerator."""
    raise RuntimeError(f"record_stream(): unknown parameter type {_class_name(s)}: tensorplay has no streams")


def _volatile_get(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _volatile_set(self, value=None):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=2)


volatile = property(_volatile_get, _volatile_set, _volatile_set,
                    doc="Removed (always False, with a warning): use `with tensorplay.no_grad():`.")


def module_load(input, other, assign=False):
    """How load_state_dict turns the state dict's value other into the one that replaces input (a
    parameter or buffer) when it swaps them: other itself if assign, else input with other's values."""
    if assign:
        return other.detach()
    return input.copy_(other).detach()


def dim_order(input, *, ambiguity_check=False):
    """The order in which the tensor's dims lie in memory, outermost first: (0, 1, 2, 3) for a contiguous
    4-D tensor, (0, 2, 3, 1) for a channels-last one.

    Size-1 dims and equal strides make more than one order valid; then ambiguity_check=True raises, and a
    list of memory formats raises unless the tensor is in exactly one of them."""
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if not isinstance(ambiguity_check, (bool, list)) or not all(isinstance(f, _C.memory_format) for f in formats):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    check = ambiguity_check is True or isinstance(ambiguity_check, list)
    sizes, strides = input.shape, input.stride()
    ambiguous = 1 in sizes or any(a == b for a, b in itertools.pairwise(strides))
    if check and ambiguous and sum(input.is_contiguous(memory_format=f) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    order, unordered = _dims_by_stride(sizes, strides, input.is_contiguous(),
                                       input.is_contiguous(memory_format=_C.channels_last))
    if check and unordered:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(order)


def _dims_by_stride(sizes, strides, contiguous, channels_last):
    """The dims from outermost to innermost in memory, and whether some pair of neighbours could not be
    ordered by their strides: PyTorch's compute_elementwise_output_logical_to_physical_perm."""
    ndim = len(sizes)
    if ndim <= 1:
        return list(range(ndim)), False
    if contiguous and not channels_last:
        return list(range(ndim)), False
    if channels_last and not contiguous:
        return [0, *range(2, ndim), 1], False

    def at_least(a, b):
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def compare(a, b):
        """1 when dim a is inner to dim b, -1 when outer, 0 when their strides cannot tell."""
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] == strides[b]:
            return 0 if at_least(sizes[b], sizes[a]) else 1
        if at_least(strides[b], strides[a]):
            return -1
        return 1 if at_least(strides[a], strides[b]) else 0

    # An insertion sort from the innermost dim out, which leaves dims that cannot be told apart in place.
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        moving = i
        for j in reversed(range(i)):
            order = compare(perm[j], perm[moving])
            if order > 0:
                perm[j], perm[moving] = perm[moving], perm[j]
                moving = j
            elif order < 0:
                break
    unordered = any(compare(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1))
    return list(reversed(perm)), unordered


# ---- matrix views ----

def _warn_once(message):
    # PyTorch gives these deprecation warnings once a process (TORCH_WARN_ONCE), not once a call site.
    warn_once(message, message, stacklevel=3)


def _T(self):
    if self.dim() == 0:
        _warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    elif self.dim() != 2:
        _warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                   "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
                   "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return self.permute(tuple(reversed(range(self.dim()))))


def _matrix_transpose(self, op, zero_dim_warning):
    if self.dim() == 0:
        _warn_once(zero_dim_warning)
        return self
    if self.dim() == 1:
        raise RuntimeError(f"{op} is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return self.transpose(-2, -1)


def _mT(self):
    return _matrix_transpose(self, "tensor.mT", "Tensor.mT is deprecated on 0-D tensors. This function is the "
                                                "identity in these cases.")


def _mH(self):
    return _C._conj(_matrix_transpose(self, "tensor.mH", "Tensor.mH is deprecated on 0-D tensors. Consider using "
                                                          "x.conj()."))


def _H(self):
    if self.dim() == 0:
        _warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        return _C._conj(self)
    if self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{hint}")
    return _C._conj(self.transpose(0, 1))


T = property(_T, doc="The tensor with its dims reversed (for a matrix, its transpose).")
mT = property(_mT, doc="The transpose of each matrix in the batch (the last two dims swapped).")
mH = property(_mH, doc="The conjugate transpose of each matrix in the batch: on real tensors, mT.")
H = property(_H, doc="The conjugate transpose of a matrix: on real tensors, its transpose.")


def adjoint(input):
    """The conjugate transpose of each matrix in the batch: on real tensors, a view with the last two dims
    swapped."""
    _check_tensor("adjoint", input)
    return _C._conj(_matrix_transpose(input, "tensor.adjoint()",
                                      "adjoint() is deprecated on 0-D tensors. Consider using x.conj()."))


# ---- complex numbers: conjugation, real and imag ----

def is_complex(input):
    """Whether the tensor's dtype is a complex one."""
    _check_tensor("is_complex", input)
    return input.dtype.is_complex


def is_conj(input):
    """Whether the tensor is a lazily conjugated view. tensorplay computes conjugates, so none is."""
    _check_tensor("is_conj", input)
    return False


def is_neg(input):
    """Whether the tensor is a lazily negated view (of a conjugated complex one): only complex tensors can be."""
    _check_tensor("is_neg", input)
    return False


def conj(input):
    """The complex conjugate. PyTorch returns a lazy view; tensorplay computes it (so writes to it do not
    reach input). A real tensor is its own conjugate, and is returned."""
    _check_tensor("conj", input)
    return _C._conj(input)


def resolve_conj(input):
    """input with a lazy conjugation carried out: tensorplay's conjugates are computed, so input is returned."""
    _check_tensor("resolve_conj", input)
    return input


def resolve_neg(input):
    """input with a lazy negation carried out: a real tensor has none, and is returned."""
    _check_tensor("resolve_neg", input)
    return input


def conj_physical(input, *, out=None):
    """The complex conjugate, computed: a real tensor is its own conjugate, and is returned. out must have
    input's dtype (PyTorch's kernel writes it without casting)."""
    _check_tensor("conj_physical", input)
    input = _C._conj(input)
    if out is None:
        return input
    if isinstance(out, Tensor) and out.dtype != input.dtype:
        raise RuntimeError(f"conj_physical(): Found dtype {aten_name(out.dtype)} but expected "
                           f"{aten_name(input.dtype)}")
    return write_out("conj_physical", out, input)


@_named("conj_physical_")
def conj_physical_(input):
    """In-place conj_physical(): on a real tensor it changes no value, but it is a write all the same
    (PyTorch's checks on in-place ops apply, and the version counter moves)."""
    return input.copy_(_C._conj(input))


def _real(self):
    return _C.real(self)


def _set_real(self, value):
    _C.real(self).copy_(value)


def _imag(self):
    return _C.imag(self)


def _set_imag(self, value):
    _C.imag(self).copy_(value)


real = property(_real, _set_real, doc="The real part, a view (of a real tensor: the tensor itself).")
imag = property(_imag, _set_imag, doc="The imaginary part of a complex tensor, a view.")


# ---- new tensors ----

_NEW_SIGNATURES = (" * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n"
                   " * (tuple of ints size, *, torch.device device = None)\n"
                   " * (object data, *, torch.device device = None)\n")


def _is_size_entry(value):
    """Whether value can be a dim of a size: an int (not a bool) or an integer scalar."""
    if isinstance(value, Tensor):
        return value.dim() == 0 and not value.is_floating_point() and value.dtype != _C.bool
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _invalid_new(args, kwargs):
    got = [_class_name(a) for a in args] + [f"{key}={_class_name(value)}" for key, value in kwargs.items()]
    return TypeError(f"new() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                     f"one of:\n{_NEW_SIGNATURES}")


def _new_form(args):
    """Which of new()'s signatures positional args call: 'empty', 'other', 'size' or 'data'."""
    if not args:
        return "empty"
    if isinstance(args[0], Tensor):
        if len(args) > 1:
            raise _invalid_new(args, {})
        return "other"
    if _is_size_entry(args[0]) or (len(args) == 1 and isinstance(args[0], Size)):
        return "size"
    if len(args) > 1:
        raise _invalid_new(args, {})
    return "data"


@_named("new")
def new(input, *args, device=None, **kwargs):
    """PyTorch's legacy constructor: a tensor of input's dtype and device, from sizes (new(2, 3), left
    uninitialised), data (new([1, 2]), copied and cast), another tensor of the same dtype and device (an
    alias of its memory), or nothing (an empty tensor)."""
    if kwargs:
        if args or len(kwargs) > 1 or not kwargs.keys() <= {"other", "size", "data"}:
            raise _invalid_new(args, kwargs)
        [(form, value)] = kwargs.items()
        if form == "size" and not isinstance(value, collections.abc.Sequence):
            raise _invalid_new(args, kwargs)
        sizes = value
    else:
        form = _new_form(args)
        value = args[0] if args else None
        sizes = value if isinstance(value, Size) else args
    if form == "other":
        return _alias_of(input, value, device)
    if device is not None and _C.device(device).type != input.device.type:
        raise RuntimeError(f"new(): legacy constructor expects device type: {input.device.type} but device type: "
                           f"{_C.device(device).type} was passed")
    if form == "empty":
        return _C.empty(0, dtype=input.dtype, device=input.device)
    if form == "data":
        return _new_from_data(input, value)
    for position, size in enumerate(sizes, 1):
        if not _is_size_entry(size):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {position} with error "
                            f"\"type must be tuple of ints,but got {_class_name(size)}\"")
    return _C.empty([operator.index(s) for s in sizes], dtype=input.dtype, device=input.device)


def _alias_of(input, other, device):
    if device is not None:
        raise RuntimeError("new(): Legacy tensor new of the form tensor.new(tensor, device=device) is not "
                           "supported.  Use torch.as_tensor(...) instead.")
    if other.dtype != input.dtype or other.device != input.device:
        raise TypeError(f"new(): expected a tensor of dtype {input.dtype} on {input.device} (got dtype "
                        f"{other.dtype} on {other.device})")
    return other.view_as(other)


def _new_from_data(input, data):
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{_class_name(data)}'")
    if not isinstance(data, (collections.abc.Sequence, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {_class_name(data)})")
    return _tensor(data, dtype=input.dtype, device=input.device)


def as_subclass(input, cls):
    """input as an instance of cls, a subclass of Tensor: a view of its memory that autograd sees as a
    view of input (gradients flow back through it)."""
    if not isinstance(cls, builtins.type):
        raise TypeError(f"cls must be a type (got {_class_name(cls)})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    view = input.view_as(input)
    view.__class__ = cls
    return view


# ---- Python callables, elementwise ----

def apply_(input, callable, /):
    """Replaces each element x of the tensor with callable(x), called with a Python number, in order
    (CPU tensors only; slow: one Python call an element). A meta tensor has no elements, and is returned."""
    return _map("apply_", input, (), callable)


def map_(input, other, callable):
    """Replaces each element x of the tensor with callable(x, y), y the element of other (broadcast to the
    tensor's shape) at the same place. other must have the tensor's dtype and device."""
    _check_tensor("map_", other, "other")
    return _map("map_", input, ((other, "'other'"),), callable)


def map2_(input, x, y, callable):
    """Replaces each element e of the tensor with callable(e, a, b), a and b the elements of x and y (both
    broadcast to the tensor's shape) at the same place. x and y must have the tensor's dtype and device."""
    _check_tensor("map2_", x, "x")
    _check_tensor("map2_", y, "y", position=2)
    return _map("map2_", input, ((x, "argument 'x'"), (y, "argument 'y'")), callable)


def _map(op, input, others, fn):
    if input.requires_grad or any(t.requires_grad for t, _ in others):
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    for other, name in others:
        if other.dtype != input.dtype or other.device != input.device:
            raise TypeError(f"{op}: expected {input.type()} for {name} (got {other.type()})")
    if input.is_meta:
        return input
    target = _writable_array(input)
    # Shape errors name the op that was called, not the expand inside it.
    expand = _named(op)(Tensor.expand)
    sources = [_writable_array(expand(other, input.shape)) for other, _ in others]
    store = _STORES.get(input.dtype, _store_float)
    # Element by element through the tensor's own memory, as PyTorch does: when elements share memory
    # (an expanded tensor), a later one sees what an earlier call wrote.
    with np.errstate(over="ignore"):  # out-of-range floats round to inf, as a C cast does
        for index in np.ndindex(target.shape):
            value = fn(target[index].item(), *(source[index].item() for source in sources))
            target[index] = store(value, input.dtype)
    return input


def _writable_array(t):
    """A NumPy view of t's memory, with t's strides."""
    array = t.detach()._numpy()
    return array.view(ml_dtypes.bfloat16) if t.dtype == _C.bfloat16 else array


def _as_float(value):
    """value as a Python float, as CPython's PyFloat_AsDouble takes it (__float__, else __index__)."""
    if hasattr(value.__class__, "__float__"):
        return value.__float__()
    if hasattr(value.__class__, "__index__"):
        return float(value.__index__())
    raise TypeError(f"must be real number, not {_class_name(value)}")


def _as_int64(value):
    integer = operator.index(value)
    if not -2**63 <= integer < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return integer


def _store_float(value, dtype):
    return _as_float(value)


def _store_integer(value, dtype):
    """value as an element of an integer dtype, refused when out of its range as PyTorch's checked_convert
    refuses it: floats are truncated; ints unpack as int64 first, and unsigned dtypes wrap negative ones
    down to -max."""
    info = np.iinfo(_NUMPY_INTEGERS[dtype])
    if isinstance(value, float):
        if value != value or not info.min <= value <= info.max + (dtype == _C.int64):
            raise RuntimeError(f"value cannot be converted to type {_dtype_name(dtype)} without overflow")
        return _wrap(int(value), info)
    integer = _as_int64(value)
    low = -info.max if info.min == 0 else info.min
    if not low <= integer <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_dtype_name(dtype)} without overflow")
    return _wrap(integer, info)


def _wrap(integer, info):
    span = info.max - info.min + 1
    return (integer - info.min) % span + info.min


def _store_bool(value, dtype):
    if isinstance(value, float):
        return value != 0
    return operator.index(value) != 0


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


_NUMPY_INTEGERS = {_C.uint8: np.uint8, _C.int8: np.int8, _C.int16: np.int16, _C.int32: np.int32, _C.int64: np.int64}
_STORES = {**{d: _store_integer for d in _NUMPY_INTEGERS}, _C.bool: _store_bool}


# ---- copies to devices tensorplay has no kernels for ----

def _to_device_without_kernels(kind, error):
    """Tensor.<kind>(): a copy to a device of that type, which this build cannot make. The arguments are
    checked as PyTorch checks them, and then error, the kind of exception PyTorch's CPU build raises, is
    raised saying that tensorplay was built without the device."""

    def copy_to(input, device=None, non_blocking=False, memory_format=_C.preserve_format):
        if isinstance(device, bool) or not (device is None or isinstance(device, (int, str, _C.device))):
            raise TypeError(f"{kind}(): argument 'device' (position 1) must be torch.device, not "
                            f"{_class_name(device)}")
        if not isinstance(non_blocking, bool):
            raise TypeError(f"{kind}(): argument 'non_blocking' must be bool, not {_class_name(non_blocking)}")
        if not isinstance(memory_format, _C.memory_format):
            raise TypeError(f"{kind}(): argument 'memory_format' must be torch.memory_format, not "
                            f"{_class_name(memory_format)}")
        if isinstance(device, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if isinstance(device, str) and device.partition(":")[0] != kind:
            _C.device(device)  # a string that names no device is refused as tensorplay.device refuses it
        if isinstance(device, _C.device) or isinstance(device, str) and device.partition(":")[0] != kind:
            raise RuntimeError(f"Invalid device, must be {'MTIA' if kind == 'mtia' else kind} device")
        raise error(f"tensorplay was built without {kind.upper()} support")

    copy_to.__name__ = copy_to.__qualname__ = kind
    copy_to.__doc__ = (f"A copy on the {kind.upper()} device: refused, as PyTorch's CPU build refuses it (tensorplay "
                       f"has no {kind.upper()} kernels).")
    return copy_to


xpu = _to_device_without_kernels("xpu", AssertionError)
ipu = _to_device_without_kernels("ipu", RuntimeError)
mtia = _to_device_without_kernels("mtia", AssertionError)


class _NoDerivative(Function):
    """An op that PyTorch defines no derivative for: backward through it is an error."""

    @staticmethod
    def forward(ctx, result, input, op):
        ctx.op = op
        return result

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for {ctx.op} is not implemented")


def dequantize(input):
    """A quantized tensor's values as float32. A tensor that is not quantized (every tensorplay tensor)
    is cast to float32, as PyTorch casts it: a float32 tensor is returned itself, and the cast has no
    derivative (backward through it is an error)."""
    if isinstance(input, (tuple, list)) and all(isinstance(t, Tensor) for t in input):
        raise NotImplementedError("dequantize(): a sequence of tensors is dequantized only when they are quantized, "
                                  "and tensorplay has no quantized tensors")
    if not isinstance(input, Tensor):
        raise TypeError(f"dequantize() received an invalid combination of arguments - got ({_class_name(input)}), but "
                        f"expected one of:\n * (Tensor input)\n * (tuple of Tensors tensors)\n")
    if input.is_meta:
        raise NotImplementedError("dequantize: there is no meta kernel for it")
    if input.dtype == _C.float32:
        return input
    result = input.detach().to(_C.float32)
    if input.requires_grad and _C.is_grad_enabled():
        return _NoDerivative.apply(result, input, "dequantize")
    return result


# ---- functions PyTorch removed, whose names say what replaces them ----

def _removed_since_1_9(text):
    return RuntimeError("This function was deprecated since version 1.9 and is now removed. " + text)


_EIG_REMOVED = ("`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
                "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
                "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
                "L_complex, V_complex = torch.linalg.eig(A)")
_LSTSQ_REMOVED = ("`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
                  "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
                  "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
                  "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
                  "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
                  "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = "
                  "torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, "
                  "B).solution")
_SOLVE_REMOVED = ("`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
                  "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
                  "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, "
                  "A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
_SYMEIG_REMOVED = ("The default behavior has changed from using the upper triangular portion of the matrix by default "
                   "to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced "
                   "with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
                   "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' "
                   "if upper else 'L')")


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.eig and eigvals, which replace it."""
    raise _removed_since_1_9(_EIG_REMOVED)


def lstsq(input, A, *, out=None):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.lstsq, which replaces it."""
    raise _removed_since_1_9(_LSTSQ_REMOVED)


def solve(input, A, *, out=None):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.solve, which replaces it."""
    raise _removed_since_1_9(_SOLVE_REMOVED)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.eigh and eigvalsh, which replace it."""
    raise _removed_since_1_9(_SYMEIG_REMOVED)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.matrix_rank, which replaces it."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                       "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                       "`torch.linalg.matrix_rank()` to 'hermitian'.")


def _method(name, function):
    function.__name__, function.__qualname__ = name, f"Tensor.{name}"
    setattr(Tensor, name, function)


def _eig_method(self, eigenvectors=False):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.eig and eigvals, which replace it."""
    raise _removed_since_1_9(_EIG_REMOVED)


def _lstsq_method(self, other):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.lstsq, which replaces it."""
    raise _removed_since_1_9(_LSTSQ_REMOVED)


def _solve_method(self, other):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.solve, which replaces it."""
    raise _removed_since_1_9(_SOLVE_REMOVED)


def _symeig_method(self, eigenvectors=False):
    """Removed from PyTorch (since 1.9): raises, naming torch.linalg.eigh and eigvalsh, which replace it."""
    raise _removed_since_1_9(_SYMEIG_REMOVED)


_method("eig", _eig_method)
_method("lstsq", _lstsq_method)
_method("solve", _solve_method)
_method("symeig", _symeig_method)


def reinforce(input, reward):
    """Removed from PyTorch (with stochastic Variables): raises, showing the torch.distributions code that
    replaces it."""
    raise RuntimeError("\n".join([
        "reinforce() was removed.", "Use torch.distributions instead.",
        "See https://pytorch.org/docs/main/distributions.html", "", "Instead of:", "",
        "probs = policy_network(state)", "action = probs.multinomial()", "next_state, reward = env.step(action)",
        "action.reinforce(reward)", "action.backward()", "", "Use:", "", "probs = policy_network(state)",
        "# NOTE: categorical is equivalent to what used to be called multinomial",
        "m = torch.distributions.Categorical(probs)", "action = m.sample()", "next_state, reward = env.step(action)",
        "loss = -m.log_prob(action) * reward", "loss.backward()", ""]))


reinforce.__qualname__ = "Tensor.reinforce"  # as Python names it in argument errors, like PyTorch's (a Python method)

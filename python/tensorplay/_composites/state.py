"""The global state functions of the torch namespace: print options, determinism, float32 matmul
precision, threads, the default tensor type, warn-always, denormal flushing, the legacy per-device
autocast functions, the predicates about tensors and objects (typename, is_nonzero, get_device, ...), and
torch.cond, the branch on a predicate that PyTorch can compile, run eagerly.

Flags that no tensorplay kernel reads yet (determinism, matmul precision, interop threads) are kept
as state with PyTorch's checks, so that programs that set and read them run unchanged."""

import builtins
import collections
import numbers
import os
import warnings

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._tensor_str import set_printoptions
from tensorplay.backends import _fp32_precision

__all__ = [
    "are_deterministic_algorithms_enabled", "cond", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
    "get_autocast_ipu_dtype", "get_autocast_xla_dtype", "get_deterministic_debug_mode", "get_device",
    "get_float32_matmul_precision", "get_num_interop_threads", "init_num_threads", "is_autocast_cpu_enabled",
    "is_autocast_ipu_enabled", "is_autocast_xla_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "is_distributed", "is_inference", "is_nonzero", "is_same_size", "is_signed", "is_storage",
    "is_vulkan_available", "is_warn_always_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
    "set_autocast_gpu_dtype", "set_autocast_ipu_dtype", "set_autocast_ipu_enabled", "set_autocast_xla_dtype",
    "set_autocast_xla_enabled", "set_default_tensor_type", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_flush_denormal", "set_num_interop_threads", "set_printoptions",
    "set_warn_always", "typename", "use_deterministic_algorithms",
]
METHODS = ["get_device", "is_distributed", "is_nonzero", "is_same_size", "is_signed"]


def _type(value):
    return type(value).__name__


def _check_bool(op, name, value, position=None):
    if not isinstance(value, bool):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{op}(): argument '{name}'{where} must be bool, not {_type(value)}")


def _check_tensor(op, name, value, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {_type(value)}")


# ---- Warnings that show once per program, unless set_warn_always(True) ----

_warn_always = False
_warned = set()


def set_warn_always(b, /):
    """True: the warnings that tensorplay gives once per program are given every time."""
    global _warn_always
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {_type(b)}")
    _warn_always = b


def is_warn_always_enabled():
    return _warn_always


def warn_once(key, message, category=UserWarning, stacklevel=2):
    """Warns the first time key comes up in this program, or every time under set_warn_always(True)."""
    if _warn_always or key not in _warned:
        _warned.add(key)
        warnings.warn(message, category, stacklevel=stacklevel + 1)


# ---- Determinism (no kernel reads it yet: every tensorplay CPU kernel is deterministic) ----

_deterministic = False
_deterministic_warn_only = False


def use_deterministic_algorithms(mode, *, warn_only=False):
    global _deterministic, _deterministic_warn_only
    _check_bool("use_deterministic_algorithms", "mode", mode, 1)
    _check_bool("use_deterministic_algorithms", "warn_only", warn_only)
    _deterministic, _deterministic_warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic_warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": deterministic, warning about the rest; 2 / "error": deterministic."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode():
    if not _deterministic:
        return 0
    return 1 if _deterministic_warn_only else 2


# ---- float32 matmul precision ("medium": float32 matmuls multiply in bfloat16 where the CPU can) ----
# It is one view of the table behind tensorplay.backends' fp32_precision and allow_tf32 flags
# (backends/_fp32_precision.py), which PyTorch keeps in step with it.

_MATMUL_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision):
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {_type(precision)}")
    if precision not in _MATMUL_PRECISIONS:
        # PyTorch's wording, to the letter (its missing space included).
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _fp32_precision.set_float32_matmul_precision(precision)


def get_float32_matmul_precision():
    return _fp32_precision.float32_matmul_precision()


# ---- Threads ----

_interop_threads = None  # unset: the default, which PyTorch takes from the intra-op default


def get_num_interop_threads():
    return _interop_threads or os.cpu_count() or 1


def set_num_interop_threads(num_threads):
    """Sets the size of the inter-op pool, once per program and before it is used (as PyTorch
    requires). tensorplay runs ops one at a time, so the number is recorded and reported back."""
    global _interop_threads
    if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {_type(num_threads)}")
    if num_threads <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop_threads = builtins.int(num_threads)


def init_num_threads():
    """Gives the calling thread the intra-op thread count: OpenMP keeps it per thread, and a thread
    started after set_num_threads() would otherwise run its ops with OpenMP's default."""
    _C.set_num_threads(_C.get_num_threads())


def set_flush_denormal(mode):
    """Whether denormal floats are flushed to zero. tensorplay cannot switch the CPU's flush mode, so
    this returns False, as PyTorch does on CPUs without the feature."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {_type(mode)}")
    return False


# ---- The default tensor type (deprecated) ----

_FLOAT_TENSOR_TYPES = {"DoubleTensor": _C.float64, "FloatTensor": _C.float32, "HalfTensor": _C.float16,
                       "BFloat16Tensor": _C.bfloat16}
_INTEGRAL_TENSOR_TYPES = ("ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor")


def set_default_tensor_type(t, /):
    """Makes the floating point tensor type t (e.g. "torch.DoubleTensor") the default: it sets the
    default dtype. Deprecated, as in PyTorch: use set_default_dtype and set_default_device."""
    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module in ("torch.cuda", "tensorplay.cuda"):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        package = t.split(".")[0]
        if package not in ("torch", "tensorplay"):
            raise ModuleNotFoundError(f"No module named '{package}'")
        if module not in ("torch", "tensorplay") or (name not in _FLOAT_TENSOR_TYPES
                                                            and name not in _INTEGRAL_TENSOR_TYPES):
            raise AttributeError(f"module '{module or name}' has no attribute '{name}'")
    else:
        name = getattr(t, "__name__", None) if isinstance(t, type) else None
        if name not in _FLOAT_TENSOR_TYPES and name not in _INTEGRAL_TENSOR_TYPES:
            raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if name not in _FLOAT_TENSOR_TYPES:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(_FLOAT_TENSOR_TYPES[name])


# ---- Predicates about tensors and objects ----

def typename(obj, /):
    """The fully qualified name of obj's type; a tensor's type() name, e.g. "torch.FloatTensor"."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


_STORAGE_CLASSES = tuple(getattr(_C, name) for name in ("UntypedStorage", "TypedStorage") if hasattr(_C, name))


def is_storage(obj, /):
    """Whether obj is a storage object (tensorplay's storages, where it has them)."""
    return type(obj) in _STORAGE_CLASSES


def is_nonzero(input):
    """The truth of a one-element tensor."""
    _check_tensor("is_nonzero", "input", input, 1)
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


def is_same_size(input, other):
    _check_tensor("is_same_size", "input", input, 1)
    _check_tensor("is_same_size", "other", other, 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """Whether input's dtype holds negative numbers (every dtype but uint8 and bool)."""
    _check_tensor("is_signed", "input", input, 1)
    return input.dtype not in (_C.uint8, _C.bool)


def is_inference(input):
    _check_tensor("is_inference", "input", input, 1)
    return input.is_inference()


def is_distributed(input):
    """Always False: tensorplay has no distributed tensors."""
    _check_tensor("is_distributed", "input", input, 1)
    return False


def get_device(input):
    """The index of input's CUDA device; -1 for CPU (and meta) tensors."""
    _check_tensor("get_device", "input", input, 1)
    device = input.device
    return (device.index or 0) if device.type == "cuda" else -1


def is_vulkan_available():
    return False


# ---- The legacy per-device autocast functions (deprecated in PyTorch, with these warnings) ----

def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _check_dtype(dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {_type(dtype)})")


def _check_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {_type(enabled)})")


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _C.get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _C.get_autocast_dtype("cuda")


def set_autocast_cpu_dtype(dtype):
    _check_dtype(dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _C.set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _check_dtype(dtype)
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _C.set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _C.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _check_enabled(enabled)
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _C.set_autocast_enabled("cpu", enabled)


# tensorplay has no IPU or XLA backend, so nothing reads their autocast state: it is kept here, with
# PyTorch's defaults, for programs that set and read it.
_other_autocast = {"ipu": [False, _C.float16], "xla": [False, _C.bfloat16]}


def get_autocast_ipu_dtype():
    _deprecated("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return _other_autocast["ipu"][1]


def get_autocast_xla_dtype():
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return _other_autocast["xla"][1]


def set_autocast_ipu_dtype(dtype):
    _check_dtype(dtype)
    _deprecated("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    _other_autocast["ipu"][1] = dtype


def set_autocast_xla_dtype(dtype):
    _check_dtype(dtype)
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    _other_autocast["xla"][1] = dtype


def is_autocast_ipu_enabled():
    _deprecated("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return _other_autocast["ipu"][0]


def is_autocast_xla_enabled():
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return _other_autocast["xla"][0]


def set_autocast_ipu_enabled(enabled):
    _check_enabled(enabled)
    _deprecated("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    _other_autocast["ipu"][0] = enabled


def set_autocast_xla_enabled(enabled):
    _check_enabled(enabled)
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    _other_autocast["xla"][0] = enabled


# ---- torch.cond, eagerly ----

def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred, else false_fn(*operands): an if-statement that torch.compile can
    capture. pred is a Python bool, int or float (the branch is then simply called) or a tensor of one
    element; operands a tuple or list whose leaves, through nested tuples, lists and dicts, are tensors.

    With a tensor pred PyTorch compiles both branches, and so refuses outputs other than tensors and
    ints and, while gradients are recorded, branches that change their operands in place or return one
    of them (or a view of it, or one tensor twice). tensorplay runs only the branch pred picks, and
    refuses the same of it; it cannot check, as compiling does, that the other branch returns the same
    structure of tensors (with the same dtypes) or that a branch returns no tensor it closes over. An
    error inside the branch is raised as it is, where PyTorch wraps it in its compiler's error."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    inputs = _leaves(operands) if isinstance(operands, (tuple, list)) else None
    if inputs is None or not all(isinstance(leaf, Tensor) for leaf in inputs):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    branch = true_fn if pred.item() else false_fn
    # Branches may change their operands, and return them, where no gradient is recorded.
    recording = _C.is_grad_enabled()
    versions = [t._version for t in inputs]
    result = branch(*operands)
    if recording and any(t._version != version for t, version in zip(inputs, versions)):
        raise RuntimeError("cond: a branch changed an operand in place (higher order ops do not support input "
                           "mutation while gradients are recorded)")
    outputs = _leaves(result)
    for leaf in outputs:
        if not isinstance(leaf, Tensor) and (isinstance(leaf, bool) or not isinstance(leaf, int)):
            raise RuntimeError(f"cond: a branch's outputs must be tensors or ints, but got {_type(leaf)}")
    if recording:
        seen = {_storage_of(t) for t in inputs if not t.is_meta}
        for t in outputs:
            if isinstance(t, Tensor) and not t.is_meta:
                if _storage_of(t) in seen:
                    raise RuntimeError("cond: a branch returned an operand, a view of one, or one tensor twice "
                                       "(higher order ops do not support aliasing): return a clone() instead")
                seen.add(_storage_of(t))
    return result


def _leaves(tree):
    """The leaves of nested tuples, lists, deques and dicts (PyTorch's pytree containers), in order."""
    if isinstance(tree, (tuple, list, collections.deque)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for item in tree.values() for leaf in _leaves(item)]
    return [tree]


def _storage_of(t):
    # Every storage, empty ones included, has an address of its own while it lives.
    return t.data_ptr() - t.storage_offset() * t.element_size()

"""tensorplay.backends.cuda: the CUDA libraries' flags (cuBLAS, cuFFT, cuSOLVER, the attention kernels),
as torch.backends.cuda in a build without CUDA.

``is_built()`` is False. The flags keep PyTorch's defaults, checks and errors and are state only:
``matmul.allow_tf32`` and ``matmul.fp32_precision`` share PyTorch's table with
tensorplay.set_float32_matmul_precision (see backends/_fp32_precision.py), and the
scaled-dot-product-attention switches (``enable_flash_sdp``, ...) choose among CUDA kernels that this
build does not have; tensorplay's attention always runs its one CPU implementation.

>>> tensorplay.backends.cuda.matmul.allow_tf32 = True
>>> tensorplay.get_float32_matmul_precision()
'high'
"""

import contextlib
import enum
import warnings

from tensorplay.backends import _fp32_precision as _precision
from tensorplay._unbuilt import device_index as _device_index
from tensorplay._unbuilt import missing_binding as _missing_binding

__all__ = [
    "is_built", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCache", "cuFFTPlanCacheManager", "cuBLASModule",
    "preferred_linalg_library", "preferred_blas_library", "cublas_workspace_size", "cublaslt_workspace_size",
    "blas_workspace_size", "preferred_rocm_fa_library", "is_ck_sdpa_available", "cufft_plan_cache", "matmul",
    "SDPAParams", "enable_cudnn_sdp", "cudnn_sdp_enabled", "enable_flash_sdp", "flash_sdp_enabled",
    "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "math_sdp_enabled", "enable_math_sdp",
    "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed", "is_flash_attention_available",
    "can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention", "sdp_kernel",
]


def is_built():
    """Whether this build has CUDA support (whether or not a GPU is present): it has not."""
    return False


# ---- cuFFT's plan caches, one per device: there are no devices ----

class cuFFTPlanCacheAttrContextProp:
    """An attribute of one device's plan cache; a str setter is the error a read-only one raises."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self.getter(obj.device_index)

    def __set__(self, obj, val):
        if isinstance(self.setter, str):
            raise RuntimeError(self.setter)
        self.setter(obj.device_index, val)


def _no_cufft(*args):
    raise RuntimeError(
        "Cannot access cuFFT plan cache without ATen_cuda library. PyTorch splits its backend into two shared "
        "libraries: a CPU library and a CUDA library; this error has occurred because you are trying to use some "
        "CUDA functionality, but the CUDA library has not been loaded by the dynamic linker for some reason.  The "
        "CUDA library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA library! One common "
        "culprit is a lack of -Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
        "library dependencies if you don't depend on any of their symbols.  You can check if this has occurred by "
        "using ldd on your binary to see if there is a dependency on *_cuda.so library.")


class cuFFTPlanCache:
    """The cuFFT plan cache of device `device_index`: its size, max_size and clear()."""

    def __init__(self, device_index):
        self.device_index = device_index

    size = cuFFTPlanCacheAttrContextProp(
        _no_cufft, ".size is a read-only property showing the number of plans currently in the cache. To change the "
                   "cache capacity, set cufft_plan_cache.max_size.")
    max_size = cuFFTPlanCacheAttrContextProp(_no_cufft, _no_cufft)

    def clear(self):
        return _no_cufft(self.device_index)


class cuFFTPlanCacheManager:
    """All devices' plan caches: cufft_plan_cache[i] is device i's, and cufft_plan_cache.max_size the
    current device's."""

    __initialized = False

    def __init__(self):
        self.caches = []
        self.__initialized = True

    def __getitem__(self, device):
        index = _device_index(device)
        raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < 0, but got device with index {index}")

    def __getattr__(self, name):
        from tensorplay.cuda import current_device

        if name.startswith("__"):  # introspection (hasattr(obj, "__wrapped__")), not a cache attribute
            raise AttributeError(name)
        return getattr(self[current_device()], name)

    def __setattr__(self, name, value):
        if self.__initialized:
            from tensorplay.cuda import current_device

            return setattr(self[current_device()], name, value)
        return super().__setattr__(name, value)


cufft_plan_cache = cuFFTPlanCacheManager()


# ---- cuBLAS ----

_reductions = {"fp16": (True, True), "bf16": (True, True)}  # (allow reduced precision, allow split-k)
_fp16_accumulation = False


class cuBLASModule:
    """``tensorplay.backends.cuda.matmul``: cuBLAS's flags for matmuls."""

    @staticmethod
    def _parse_reduction_setting(value, attr_name):
        def ensure_bool(obj, which):
            if isinstance(obj, bool):
                return obj
            raise TypeError(f"{attr_name} expects a bool for {which}, but got {type(obj)!r}")

        if isinstance(value, bool):
            return value, True
        if isinstance(value, (list, tuple)):
            if not value:
                raise TypeError(f"{attr_name} expects at least one boolean argument")
            if len(value) > 2:
                raise TypeError(f"{attr_name} expects at most two boolean arguments")
            allow = ensure_bool(value[0], "allow_reduced_precision")
            return allow, True if len(value) == 1 else ensure_bool(value[1], "allow_splitk")
        raise TypeError(f"{attr_name} expects a bool or a tuple/list of bools, but got {type(value)!r}")

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _precision.allow_tf32_cublas()
        for dtype in ("fp16", "bf16"):
            if name == f"allow_{dtype}_reduced_precision_reduction":
                return _reductions[dtype][0]
            if name == f"allow_{dtype}_reduced_precision_reduction_split_k":
                return _reductions[dtype][1]
        if name == "allow_fp16_accumulation":
            return _fp16_accumulation
        if name == "fp32_precision":
            return _precision.get("cuda", "matmul")
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        global _fp16_accumulation
        if name == "allow_tf32":
            return _precision.set_allow_tf32_cublas(value)
        for dtype in ("fp16", "bf16"):
            if name == f"allow_{dtype}_reduced_precision_reduction":
                allow, splitk = self._parse_reduction_setting(value, name)
                if allow and not splitk:
                    raise RuntimeError("allow_splitk=False is not supported when reduced precision reductions are "
                                       "enabled")
                _reductions[dtype] = (allow, splitk)
                return None
        if name == "allow_fp16_accumulation":
            _precision.check_bool("set_allow_fp16_accumulation_cublas", value)
            _fp16_accumulation = value
            return None
        if name == "fp32_precision":
            return _precision.set("cuda", "matmul", value)
        raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


# ---- Which library runs linear algebra, BLAS and flash attention ----

class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


class _ROCmFABackend(enum.Enum):
    Default = 0
    AOTriton = 1
    Ck = 2


_LINALG_BACKENDS = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver,
                    "magma": _LinalgBackend.Magma}
_BLAS_BACKENDS = {"default": _BlasBackend.Default, "cublas": _BlasBackend.Cublas, "hipblas": _BlasBackend.Cublas,
                  "cublaslt": _BlasBackend.Cublaslt, "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
_ROCM_FA_BACKENDS = {"default": _ROCmFABackend.Default, "aotriton": _ROCmFABackend.AOTriton,
                     "ck": _ROCmFABackend.Ck}
_preferred = {"linalg": _LinalgBackend.Default, "blas": _BlasBackend.Default, "rocm_fa": _ROCmFABackend.Default}


def _choose(backend, choices, wrong_type):
    """The backend a preferred_*_library argument names: None, one of `choices`' names, or a member."""
    if backend is None:
        return None
    if isinstance(backend, str):
        if backend not in choices:
            raise RuntimeError(f"Unknown input value. Choose from: {', '.join(choices)}.")
        return choices[backend]
    if isinstance(backend, type(next(iter(choices.values())))):
        return backend
    raise wrong_type


def preferred_linalg_library(backend=None):
    """The library CUDA linear algebra prefers: "default", "cusolver" or "magma" to set it, None to
    read it. This build has neither library; PyTorch records the choice before it refuses it."""
    chosen = _choose(backend, _LINALG_BACKENDS, RuntimeError("Unknown input value type."))
    if chosen is not None:
        _preferred["linalg"] = chosen
        if chosen is _LinalgBackend.Cusolver:
            raise RuntimeError("Cannot set preferred backend to cuSOLVER if PyTorch has not been compiled with "
                               "cuSOLVER.")
        if chosen is _LinalgBackend.Magma:
            raise RuntimeError("Cannot set preferred backend to MAGMA if PyTorch has not been compiled with MAGMA.")
    return _preferred["linalg"]


def preferred_blas_library(backend=None):
    """The library CUDA matmuls prefer: "cublas", "cublaslt", "ck" or "default" (cuBLAS)."""
    chosen = _choose(backend, _BLAS_BACKENDS, RuntimeError("Unknown input value type."))
    if chosen is _BlasBackend.Cublaslt:
        raise RuntimeError("Cannot set preferred backend to cuBLASLt if PyTorch has not been compiled with cuBLASLt.")
    if chosen is not None:
        _preferred["blas"] = chosen
    if _preferred["blas"] is _BlasBackend.Default:
        _preferred["blas"] = _BlasBackend.Cublas
    return _preferred["blas"]


def preferred_rocm_fa_library(backend=None):
    """[ROCm] The flash attention library: "default", "aotriton" or "ck"."""
    chosen = _choose(backend, _ROCM_FA_BACKENDS,
                     ValueError(f"Unknown input value. Choose from: {', '.join(_ROCM_FA_BACKENDS)}."))
    if chosen is not None:
        _preferred["rocm_fa"] = chosen
    return _preferred["rocm_fa"]


def cublas_workspace_size(size=None):
    if size is not None:
        _missing_binding("_cuda_setCublasWorkspaceSize")
    _missing_binding("_cuda_getCublasWorkspaceSize")


def cublaslt_workspace_size(size=None):
    if size is not None:
        _missing_binding("_cuda_setCublasLtWorkspaceSize")
    _missing_binding("_cuda_getCublasLtWorkspaceSize")


def blas_workspace_size(size=None, backend=None):
    """The workspace size of `backend` (default: the preferred one), set first if `size` is given."""
    if backend is None:
        resolved = preferred_blas_library()
    elif isinstance(backend, str):
        if backend not in _BLAS_BACKENDS:
            raise RuntimeError(f"Unknown backend string. Choose from: {', '.join(_BLAS_BACKENDS)}.")
        resolved = _BLAS_BACKENDS[backend]
    elif isinstance(backend, _BlasBackend):
        resolved = backend
    else:
        raise RuntimeError("Unknown backend type.")
    if resolved is _BlasBackend.Default:
        resolved = _BlasBackend.Cublas
    if resolved is _BlasBackend.Ck:
        raise RuntimeError("CK backend does not use a workspace.")
    if resolved is _BlasBackend.Cublaslt:
        return cublaslt_workspace_size(size)
    return cublas_workspace_size(size)


# ---- Scaled dot product attention's CUDA kernels ----

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "fp16_bf16_reduction_math": False}


def _set_sdp(kind, setter, enabled, stray=""):
    if not isinstance(enabled, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {stray}{type(enabled).__name__}")
    _sdp[kind] = enabled


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _set_sdp("flash", "set_sdp_use_math", enabled)  # PyTorch's message names the math setter for all but cuDNN


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _set_sdp("mem_efficient", "set_sdp_use_math", enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _set_sdp("math", "set_sdp_use_math", enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _set_sdp("cudnn", "set_sdp_use_cudnn", enabled, "%s")  # PyTorch's message has a stray "%s"


def allow_fp16_bf16_reduction_math_sdp(enabled):
    _set_sdp("fp16_bf16_reduction_math", "set_sdp_use_math", enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    return _sdp["fp16_bf16_reduction_math"]


def is_flash_attention_available():
    return False


def is_ck_sdpa_available():
    return False


class SDPAParams:
    """The inputs of one scaled_dot_product_attention call, for the can_use_* checks."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


def _can_use(binding, params, debug):
    if not isinstance(params, SDPAParams) or not isinstance(debug, bool):
        raise TypeError(f"{binding}(): incompatible function arguments. The following argument types are supported:\n"
                        f"    1. (arg0: tensorplay._C._SDPAParams, arg1: bool) -> bool\n\n"
                        f"Invoked with: {params!r}, {debug!r}")
    return False


def can_use_flash_attention(params, debug=False):
    """Whether FlashAttention could run this call: it is a CUDA kernel, so no."""
    return _can_use("_can_use_flash_attention", params, debug)


def can_use_efficient_attention(params, debug=False):
    return _can_use("_can_use_mem_efficient_attention", params, debug)


def can_use_cudnn_attention(params, debug=False):
    return _can_use("_can_use_cudnn_attention", params, debug)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated: enables the named attention kernels for the block, disables the others, then
    restores them."""
    warnings.warn("`tensorplay.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will "
                  "be removed. Please see `tensorplay.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=3)
    previous = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                cudnn=bool(enable_cudnn))
    try:
        yield {}
    finally:
        _sdp.update(previous)

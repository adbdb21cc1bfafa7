"""tensorplay.cuda, as torch.cuda answers in PyTorch's CPU wheel: this build has no CUDA backend, so no
device is ever available.

Every name a program may touch exists and gives PyTorch's answer: the queries a program asks before
choosing a device answer (``is_available()`` is False, ``device_count()`` 0, the memory counters 0),
the calls that are safe without a GPU do nothing (``manual_seed_all``, ``empty_cache``, ``set_device(-1)``,
``stream(None)``), and the calls that need a GPU raise the error PyTorch's CPU wheel raises, mostly
``AssertionError: Torch not compiled with CUDA enabled``. ``synchronize()`` is one of the latter, as in
PyTorch: a script calls it behind ``is_available()``.

>>> tensorplay.cuda.is_available(), tensorplay.cuda.device_count()
(False, 0)
>>> tensorplay.cuda.manual_seed_all(0)  # nothing to seed
"""

from tensorplay._unbuilt import device_count, is_available, is_bf16_supported, is_tf32_supported
from tensorplay._unbuilt import device_index as _device_index
from tensorplay._unbuilt import lazy_init as _lazy_init
from tensorplay._unbuilt import missing_binding as _missing_binding

has_half = True
has_magma = False
default_generators = ()  # one generator per device


class OutOfMemoryError(RuntimeError):
    """What an allocation on a GPU raises when the device is full; programs name it in except clauses."""


class AcceleratorError(RuntimeError):
    """An error the CUDA runtime reports; programs name it in except clauses."""


class DeferredCudaCallError(Exception):
    """A call queued until CUDA starts, which failed when it did."""


class cudaStatus:
    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


class CudaError(RuntimeError):
    """An error code of the CUDA runtime, named by the runtime, which this build does not have."""

    def __init__(self, code):
        raise AttributeError("'NoneType' object has no attribute 'cudaGetErrorString'")


def check_error(res):
    """Raises CudaError for a CUDA runtime call's result: there is no runtime to name the code."""
    raise AttributeError("'NoneType' object has no attribute 'cudaError'")


# ---- What the build has ----

def get_arch_list():
    """The CUDA architectures the kernels were compiled for: none."""
    return []


def get_gencode_flags():
    return ""


def is_initialized():
    """Whether CUDA has started: it never does."""
    return False


def init():
    _lazy_init()


def cudart():
    _lazy_init()


# ---- Devices ----

def _exchange_device(index):
    """Makes device `index` the current one and returns the previous; a negative index selects
    none and returns -1."""
    if index < 0:
        return -1
    raise RuntimeError("PyTorch was compiled without CUDA support")


class device:
    """Makes device `device` the current one for the block. A negative index selects none and does
    nothing; any other raises on entry, since there is no device to select.

    >>> with tensorplay.cuda.device(-1):
    ...     pass
    """

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, type, value, traceback):
        self.idx = _exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Makes the device of `obj` (a tensor or storage) the current one; a no-op for one on the CPU."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def set_device(device):
    """Makes `device` the current device. A negative index is a no-op, as in PyTorch."""
    index = _device_index(device)
    if index >= 0:
        _missing_binding("_cuda_setDevice")


def current_device():
    _lazy_init()


def synchronize(device=None):
    """Waits for the device's kernels: needs a device, so it raises, as in PyTorch's CPU wheel."""
    _lazy_init()


def ipc_collect():
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def can_device_access_peer(device, peer_device):
    _lazy_init()


def current_blas_handle():
    _lazy_init()


def current_solver_handle():
    _lazy_init()


def set_sync_debug_mode(debug_mode):
    _lazy_init()


def get_sync_debug_mode():
    _lazy_init()


# ---- NVML's readings of a device (PyTorch reads them through the nvidia-ml-py package) ----

def _nvml_handle():
    try:
        import pynvml  # noqa: F401
    except ImportError as error:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.") from error
    raise RuntimeError("cuda driver can't be loaded, is cuda enabled?")


def device_memory_used(device=None):
    _nvml_handle()


def memory_usage(device=None):
    _nvml_handle()


def utilization(device=None):
    _nvml_handle()


def temperature(device=None):
    _nvml_handle()


def power_draw(device=None):
    _nvml_handle()


def clock_rate(device=None):
    _nvml_handle()


# ---- Streams ----

class StreamContext:
    """Makes `stream` the current one for the block. A no-op for None and, with no device to run
    streams on, for every stream, as in PyTorch's CPU wheel."""

    def __init__(self, stream):
        self.stream = stream
        self.idx = -1  # the current device's index: there is none
        self.src_prev_stream = None
        self.dst_prev_stream = None

    def __enter__(self):
        return None

    def __exit__(self, type, value, traceback):
        return None


def stream(stream):
    """``with tensorplay.cuda.stream(s):`` runs the block on stream s: see StreamContext."""
    return StreamContext(stream)


def set_stream(stream):
    """Makes `stream` the current stream; None is a no-op."""
    if stream is None:
        return
    stream.stream_id, stream.device_index, stream.device_type  # noqa: B018  (read as PyTorch reads them)
    _missing_binding("_cuda_setStream")


def current_stream(device=None):
    _lazy_init()


def default_stream(device=None):
    _lazy_init()


def get_stream_from_external(data_ptr, device=None):
    _lazy_init()


from tensorplay.cuda import amp, graphs, memory, nvtx, random, streams  # noqa: E402
from tensorplay.cuda.green_contexts import GreenContext  # noqa: E402
from tensorplay.cuda._legacy_types import *  # noqa: E402,F401,F403
from tensorplay.cuda._legacy_types import __all__ as _legacy_types  # noqa: E402
from tensorplay.cuda.graphs import *  # noqa: E402,F401,F403
from tensorplay.cuda.memory import *  # noqa: E402,F401,F403
from tensorplay.cuda.random import *  # noqa: E402,F401,F403
from tensorplay.cuda.streams import Event, ExternalStream, Stream  # noqa: E402

__all__ = [
    "AcceleratorError", "CudaError", "DeferredCudaCallError", "Event", "ExternalStream", "GreenContext",
    "OutOfMemoryError",
    "Stream", "StreamContext", "amp", "can_device_access_peer", "check_error", "clock_rate", "cudaStatus", "cudart",
    "current_blas_handle", "current_device", "current_solver_handle", "current_stream", "default_generators",
    "default_stream", "device", "device_count", "device_memory_used", "device_of", "get_arch_list",
    "get_device_capability", "get_device_name", "get_device_properties", "get_gencode_flags",
    "get_stream_from_external", "get_sync_debug_mode", "graphs", "has_half", "has_magma", "init", "ipc_collect",
    "is_available", "is_bf16_supported", "is_initialized", "is_tf32_supported", "memory", "memory_usage", "nvtx",
    "power_draw", "random", "set_device", "set_stream", "set_sync_debug_mode", "stream", "streams", "synchronize",
    "temperature", "utilization", *_legacy_types, *graphs.__all__, *memory.__all__, *random.__all__,
]

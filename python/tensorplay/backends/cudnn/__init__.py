"""tensorplay.backends.cudnn: cuDNN's flags, as torch.backends.cudnn in a build without cuDNN.

``is_available()`` is False and ``version()`` None; the flags (enabled, benchmark, deterministic,
allow_tf32, ...) keep PyTorch's defaults and checks, and are state only: nothing in this build runs
on cuDNN. ``deterministic`` is cuDNN's own flag, apart from tensorplay.use_deterministic_algorithms().

>>> tensorplay.backends.cudnn.benchmark = True
>>> with tensorplay.backends.cudnn.flags(enabled=False):
...     tensorplay.backends.cudnn.enabled
False
"""

import contextlib

from tensorplay import _C
from tensorplay.backends import ContextProp, _allow_nonbracketed_mutation, _flag_module, _FP32Precision
from tensorplay.backends import _fp32_precision as _precision
from tensorplay.backends.cudnn import rnn

CUDNN_TENSOR_DTYPES = {_C.float16, _C.float32, _C.float64}
_DEPTHWISE_KERNELS = ("auto", "cudnn", "native")

_flags = {"enabled": True, "benchmark": False, "deterministic": False, "depthwise_kernel": "auto"}


def version():
    """cuDNN's version as an int, or None without cuDNN."""
    return None


def is_available():
    return False


def is_acceptable(tensor):
    """Whether cuDNN would run an op on `tensor`: only a CUDA tensor of a cuDNN dtype with cuDNN
    enabled, which this build never has."""
    return False


def _set_enabled(value):
    _precision.check_bool("set_enabled_cudnn", value)
    _flags["enabled"] = value


def _set_benchmark(value):
    _precision.check_bool("set_benchmark_cudnn", value)
    _flags["benchmark"] = value


def _set_deterministic(value):
    _precision.check_bool("set_deterministic_cudnn", value)
    _flags["deterministic"] = value


def _set_depthwise_kernel(value):
    if not isinstance(value, str):
        raise RuntimeError(f"set_cudnn_depthwise_kernel expects a string, but got {type(value).__name__}")
    if value not in _DEPTHWISE_KERNELS:
        raise RuntimeError(f"Unknown cuDNN depthwise kernel mode: {value}. Expected one of: auto, cudnn, native")
    _flags["depthwise_kernel"] = value


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none", _depthwise_kernel=None):
    """Sets the flags given (None leaves one as it is) and returns the previous ones in this order;
    the benchmark limit exists only with cuDNN, so it is None and not set."""
    orig_flags = (_flags["enabled"], _flags["benchmark"], None, _flags["deterministic"], _precision.allow_tf32_cudnn(),
                  _precision.get("cuda", "all"), _flags["depthwise_kernel"])
    if _enabled is not None:
        _set_enabled(_enabled)
    if _benchmark is not None:
        _set_benchmark(_benchmark)
    if _deterministic is not None:
        _set_deterministic(_deterministic)
    if _allow_tf32 is not None:
        _precision.set_allow_tf32_cudnn(_allow_tf32)
    if _fp32_precision is not None:
        _precision.set("cuda", "all", _fp32_precision)
    if _depthwise_kernel is not None:
        _set_depthwise_kernel(_depthwise_kernel)
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Runs the block with these flags (PyTorch's defaults for a test: cuDNN off), then restores them."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
                               depthwise_kernel)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


benchmark_limit = None  # how many algorithms benchmark mode tries; a flag only with cuDNN
conv = _FP32Precision("cuda", "conv")

_flag_module(
    __name__,
    enabled=ContextProp(lambda: _flags["enabled"], _set_enabled),
    deterministic=ContextProp(lambda: _flags["deterministic"], _set_deterministic),
    benchmark=ContextProp(lambda: _flags["benchmark"], _set_benchmark),
    allow_tf32=ContextProp(_precision.allow_tf32_cudnn, _precision.set_allow_tf32_cudnn),
    fp32_precision=ContextProp(lambda: _precision.get("cuda", "all"),
                               lambda value: _precision.set("cuda", "all", value)),
    depthwise_kernel=ContextProp(lambda: _flags["depthwise_kernel"], _set_depthwise_kernel),
)

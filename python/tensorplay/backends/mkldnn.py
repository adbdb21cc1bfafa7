"""tensorplay.backends.mkldnn: oneDNN's (formerly MKL-DNN's) flags, as torch.backends.mkldnn.

tensorplay's CPU matmuls and convolutions run on oneDNN, so ``is_available()`` is True as in PyTorch's
CPU wheel. The flags keep PyTorch's defaults and checks; no kernel reads them yet (oneDNN is always
used, deterministically, in float32 for float32), so they are state for programs that set them."""

import contextlib
import warnings

from tensorplay.backends import ContextProp, _allow_nonbracketed_mutation, _flag_module, _FP32Precision
from tensorplay.backends import _fp32_precision as _precision

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

_flags = {"enabled": True, "deterministic": False}


def is_available():
    """Whether this build uses oneDNN: it does."""
    return True


def is_acl_available():
    """Whether oneDNN was built with the Arm Compute Library: not here."""
    return False


class verbose:
    """``with verbose(VERBOSE_ON):`` makes oneDNN print each primitive it runs in the block. tensorplay
    cannot switch oneDNN's verbosity at run time (set DNNL_VERBOSE=1 before starting instead), so
    entering with any level but VERBOSE_OFF fails as PyTorch's does when oneDNN refuses."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        if self.level == VERBOSE_OFF:
            return None
        raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to disable this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False


def _set_enabled(value):
    _precision.check_bool("set_enabled_mkldnn", value)
    _flags["enabled"] = value


def _set_deterministic(value):
    _precision.check_bool("set_deterministic_mkldnn", value)
    _flags["deterministic"] = value


def _set_allow_tf32(value):
    _precision.check_bool("_set_onednn_allow_tf32", value)
    warnings.warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. The current Torch version does not "
                  "have Intel GPU Support.", UserWarning, stacklevel=3)


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Sets the flags given (None leaves one as it is); returns the previous ones for flags() to restore."""
    orig_flags = (_flags["enabled"], _flags["deterministic"], None, _precision.get("mkldnn", "all"))
    if _enabled is not None:
        _set_enabled(_enabled)
    if _deterministic is not None:
        _set_deterministic(_deterministic)
    if _allow_tf32 is not None:
        _set_allow_tf32(_allow_tf32)
    if _fp32_precision is not None:
        _precision.set("mkldnn", "all", _fp32_precision)
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


matmul = _FP32Precision("mkldnn", "matmul")
conv = _FP32Precision("mkldnn", "conv")
rnn = _FP32Precision("mkldnn", "rnn")

_flag_module(
    __name__,
    enabled=ContextProp(lambda: _flags["enabled"], _set_enabled),
    deterministic=ContextProp(lambda: _flags["deterministic"], _set_deterministic),
    allow_tf32=ContextProp(lambda: None, _set_allow_tf32),  # oneDNN's TF32 is an Intel GPU flag: None on CPUs
    # PyTorch reads oneDNN's own setting but writes the generic one; so does this.
    fp32_precision=ContextProp(lambda: _precision.get("mkldnn", "all"),
                               lambda value: _precision.set("generic", "all", value)),
)

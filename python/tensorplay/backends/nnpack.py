"""tensorplay.backends.nnpack, as torch.backends.nnpack: tensorplay is not built with NNPACK (its
convolutions run on oneDNN), so ``is_available()`` is False where PyTorch's x86 wheel says True; the
enabled flag is kept with PyTorch's checks."""

import contextlib

from tensorplay.backends import _allow_nonbracketed_mutation
from tensorplay.backends._fp32_precision import check_bool

__all__ = ["is_available", "flags", "set_flags"]

_nnpack_enabled = True


def is_available():
    return False


def set_flags(_enabled):
    """Sets whether NNPACK is enabled; returns the previous setting as a tuple."""
    global _nnpack_enabled
    orig_flags = (_nnpack_enabled,)
    check_bool("set_enabled_NNPACK", _enabled)
    _nnpack_enabled = _enabled
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False):
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(orig_flags[0])

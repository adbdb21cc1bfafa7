"""tensorplay.backends.mps, as torch.backends.mps off macOS: Apple's Metal backend is not built."""

from tensorplay._unbuilt import missing_binding as _missing_binding

__all__ = ["get_core_count", "get_name", "is_built", "is_available", "is_macos13_or_newer", "is_macos_or_newer"]


def is_built():
    return False


def is_available():
    return False


def is_macos_or_newer(major, minor):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


def is_macos13_or_newer(minor=0):
    return is_macos_or_newer(13, minor)


def get_name():
    _missing_binding("_mps_get_name")


def get_core_count():
    _missing_binding("_mps_get_core_count")

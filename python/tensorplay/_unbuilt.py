"""What the device modules' functions (tensorplay.cuda, tensorplay.xpu) run into in this build, which
has neither device. PyTorch's CPU wheel answers their calls from the same three places, so they are
written once here:

- lazy_init: a call that needs the device's runtime initialises it first, which fails with
  PyTorch's AssertionError ("Torch not compiled with CUDA enabled");
- missing_binding: a few calls skip that and reach for a C++ binding the CPU wheel lacks, which is
  PyTorch's AttributeError naming the binding;
- device_index: a device argument is parsed first, with PyTorch's errors.

The answers that need no device at all (availability, the allocator's counters, seeding) are the
same in every such module, and are written once here too."""

import collections

from tensorplay import _C


def lazy_init(backend="CUDA"):
    raise AssertionError(f"Torch not compiled with {backend} enabled")


def missing_binding(name):
    raise AttributeError(f"module 'tensorplay._C' has no attribute '{name}'")


def device_index(device, optional=False, allow_cpu=False, *, kind="cuda", context=None):
    """The index a device argument names: an int as it is, -1 for the CPU where allowed, the index
    of a `context` (the module's device context manager), and for None or a device of `kind` without
    an index, when optional, the current device's, which is None when no device exists (PyTorch's
    answer, which later comparisons with it then trip over)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if allow_cpu:
            if device.type not in (kind, "cpu"):
                raise ValueError(f"Expected a {kind} or cpu device, but got: {device}")
        elif device.type != kind:
            raise ValueError(f"Expected a {kind} device, but got: {device}")
    if context is None and kind == "cuda":
        from tensorplay.cuda import device as context
    if context is not None and isinstance(device, context):
        return device.idx
    index = None
    if isinstance(device, _C.device):
        index = -1 if device.type == "cpu" else device.index
    if index is None and not optional:
        raise ValueError(f"Expected a tensorplay.device with a specified index or an integer, but got:{device}")
    return index


# ---- The answers of a device module whose device this build does not have ----

def is_available():
    return False


def device_count():
    return 0


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def memory_stats(device=None):
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def manual_seed(seed):
    """Seeds the current device's generator: there is none, so only the seed is checked (int(seed))."""
    int(seed)


def manual_seed_all(seed):
    """Seeds every device's generator: there are none, so only the seed is checked (int(seed))."""
    int(seed)

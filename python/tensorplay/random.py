"""The default generator's seed and state, as torch.random: manual_seed, seed, initial_seed,
get_rng_state / set_rng_state, and fork_rng to run a block without disturbing the stream.

This build has only the CPU generator, so there are no device generators to seed or fork."""

import contextlib
import os

from tensorplay import _C

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]

_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64


def get_rng_state():
    """The default generator's state, as a uint8 tensor to pass to ``set_rng_state``."""
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    """Restores a state returned by ``get_rng_state``."""
    _C.default_generator.set_state(new_state)


def manual_seed(seed):
    """Seeds the default generator and returns it. The seed may be anything int() takes, with a value in
    [-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]; a negative one means 0xffff_ffff_ffff_ffff + seed + 1,
    as in PyTorch."""
    seed = int(seed)
    if not _INT64_MIN <= seed < _UINT64_END:
        raise ValueError("Overflow when unpacking long long")
    # The generator takes a signed 64-bit seed and keeps its bits as unsigned, so the seeds above
    # the signed range are passed as the negative numbers with the same bits.
    return _C.default_generator.manual_seed(seed - _UINT64_END if seed > (1 << 63) - 1 else seed)


def seed():
    """Seeds the default generator with a non-deterministic 64-bit number, and returns that number."""
    new_seed = int.from_bytes(os.urandom(8), "little")
    manual_seed(new_seed)
    return new_seed


def initial_seed():
    """The seed the default generator was last seeded with."""
    return _C.default_generator.initial_seed()


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Runs the block, then puts the default generator back in the state it had before, so that the
    block's draws do not shift the rest of the program's. enabled=False runs the block unforked.

    devices names accelerator devices whose generators to fork too; this build has none, so any
    named is an error, as in a PyTorch built without CUDA."""
    if device_type == "meta":
        yield
        return
    device_type = device_type or "cuda"
    if device_type != "cuda":
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a module by "
                           "`torch._register_device_module`.")
    if not enabled:
        yield
        return
    if devices is not None and list(devices):
        raise AssertionError("Torch not compiled with CUDA enabled")
    cpu_rng_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)


def thread_safe_generator():
    """The generator of the DataLoader thread worker this runs in, or None outside one, which makes the
    random functions use the default generator. Loading runs in the main process only, so it is None."""
    return None

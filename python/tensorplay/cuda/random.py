"""The CUDA generators' seeds and states, as torch.cuda.random in a build without CUDA: there are no
generators. Seeding is safe to call and does nothing (PyTorch queues it for a CUDA start that never
comes), setting a state checks its arguments and does nothing, and reading a state or seed raises
PyTorch's AssertionError."""

from tensorplay import _C
from tensorplay._unbuilt import lazy_init, manual_seed, manual_seed_all

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


def get_rng_state(device="cuda"):
    lazy_init()


def get_rng_state_all():
    """One state per device: an empty list."""
    return []


def set_rng_state(new_state, device="cuda"):
    # PyTorch copies the state for the generator it would set once CUDA starts.
    new_state.clone(memory_format=_C.contiguous_format)
    if isinstance(device, str):
        _C.device(device)
    elif isinstance(device, int):
        _C.device("cuda", device)


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def seed():
    """Seeds the current GPU's generator non-deterministically: there is none."""


def seed_all():
    """Seeds every GPU's generator non-deterministically: there are none."""


def initial_seed():
    lazy_init()

"""The default generator's state, as torch.get_rng_state / torch.set_rng_state."""

from tensorplay import _C

__all__ = ["get_rng_state", "set_rng_state"]


def get_rng_state():
    """The default generator's state, as a uint8 tensor to pass to ``set_rng_state``."""
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    """Restores a state returned by ``get_rng_state``."""
    _C.default_generator.set_state(new_state)

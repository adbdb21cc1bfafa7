"""tensorplay.backends.opt_einsum, as torch.backends.opt_einsum without the opt_einsum package.

tensorplay's einsum contracts its operands left to right and never asks opt_einsum for a better
order, so ``is_available()`` is False even where the package is installed; ``enabled`` is False and
``strategy`` None. As in PyTorch, set_flags() and flags() refuse to turn it on, while assigning the
attributes directly sets them unchecked."""

import contextlib

from tensorplay.backends import _allow_nonbracketed_mutation

enabled = False
strategy = None


def is_available():
    return False


def get_opt_einsum():
    """The opt_einsum package einsum uses: none."""
    return None


def _set_enabled(_enabled):
    global enabled
    if not is_available() and _enabled:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {_enabled} will not reap the benefits of "
            "calculating an optimal path for einsum. tensorplay.einsum will fall back to contracting from left to "
            "right. To enable this optimal path calculation, please install opt-einsum.")
    enabled = _enabled


def _set_strategy(_strategy):
    raise ValueError(
        f"opt_einsum is not available, so setting `strategy` to {_strategy} will not be meaningful. tensorplay.einsum "
        "will bypass path calculation and simply contract from left to right. Please install opt_einsum or unset "
        "`strategy`.")


def set_flags(_enabled=None, _strategy=None):
    orig_flags = (enabled, None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig_flags


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled, strategy)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)

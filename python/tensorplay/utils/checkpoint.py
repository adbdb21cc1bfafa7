"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping its intermediate activations; backward runs
it again to get them. The recomputation runs under the autocast state and grad mode of the
original forward, and with the random state it started from, so dropout masks and autocast
dtypes match what forward used (PyTorch issue 71124: a recomputation outside autocast would
compute in float32 and save tensors of the wrong dtype).
"""

import warnings

from tensorplay import _C
from tensorplay.autograd import backward as _run_backward
from tensorplay.autograd.function import Function
from tensorplay.autograd.grad_mode import enable_grad
from tensorplay.random import get_rng_state, set_rng_state

__all__ = ["checkpoint"]

_DEVICE_TYPES = ("cpu", "cuda")


def _autocast_state():
    """What each device type's autocast looks like now, to enter again in backward."""
    return {d: (_C.is_autocast_enabled(d), _C.get_autocast_dtype(d)) for d in _DEVICE_TYPES}, \
        _C.is_autocast_cache_enabled()


class _Recompute:
    """Enters every device type's autocast as forward saw it."""

    def __init__(self, state):
        per_device, self.cache_enabled = state
        self.regions = [(d, enabled, dtype) for d, (enabled, dtype) in per_device.items()]
        self.open = []

    def __enter__(self):
        for device, enabled, dtype in self.regions:
            self.open.append(_C._amp._enter_region(device, dtype, enabled, self.cache_enabled))

    def __exit__(self, *exc):
        while self.open:
            _C._amp._exit_region(self.open.pop())
        return False


class _CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, _requires_grad, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.autocast_state = _autocast_state()
        if preserve_rng_state:
            ctx.rng_state = get_rng_state()
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        ctx.inputs = [None if isinstance(a, _C.Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, _C.Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            detached = t.detach()
            detached.requires_grad_(t.requires_grad)
            inputs[i] = detached
        rng_now = get_rng_state() if ctx.preserve_rng_state else None
        if ctx.preserve_rng_state:
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad(), _Recompute(ctx.autocast_state):
                outputs = ctx.run_function(*inputs)
        finally:
            if rng_now is not None:
                set_rng_state(rng_now)
        if isinstance(outputs, _C.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, _C.Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _run_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(inputs[i].grad if isinstance(inputs[i], _C.Tensor) else None
                                    for i in range(len(inputs)))


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """Runs ``function(*args)`` without saving its activations; backward recomputes them.

    Parameters used inside ``function`` receive their gradients (in ``.grad``) when backward
    recomputes it, even when no input requires grad. ``use_reentrant`` should be passed
    explicitly, as PyTorch asks; both values are accepted and behave the same here.
    """
    if use_reentrant is None:
        warnings.warn("tensorplay.utils.checkpoint: the use_reentrant parameter should be passed explicitly; "
                      "use_reentrant=False is recommended.", stacklevel=2)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    # A tensor that requires grad, so that backward reaches the recomputation even when no input
    # requires grad (the parameters inside `function` are inputs the Function cannot see).
    requires_grad = _C.empty((0,), requires_grad=True)
    return _CheckpointFunction.apply(function, preserve_rng_state, requires_grad, *args)

"""Autocast for ops written in Python as composites.

A composite's parts cast by their own policies, which is right for most. An op that PyTorch lists
on autocast's lower-precision or float32 list as a whole casts its inputs once on entry instead,
with these, so that all of it runs in the dtype its policy names (its parts then see inputs that
are already in that dtype)."""

import functools

import tensorplay

_REDUCED_FLOATS = (tensorplay.bfloat16, tensorplay.float16)


def _autocast_dtype(t):
    """The enabled autocast region's dtype for t's device, or None outside one."""
    device = t.device.type
    if tensorplay.is_autocast_available(device) and tensorplay.is_autocast_enabled(device):
        return tensorplay.get_autocast_dtype(device)
    return None


def lower_precision_inputs(*tensors):
    """The op is on autocast's lower-precision list: inside an autocast region its floating inputs are
    cast to the region's dtype."""
    def cast(t):
        if isinstance(t, tensorplay.Tensor) and t.is_floating_point():
            dtype = _autocast_dtype(t)
            if dtype is not None:
                return t.to(dtype)
        return t
    return [cast(t) for t in tensors]


def float32_inputs(*tensors):
    """The op is on autocast's float32 list: inside an autocast region its 16-bit floating inputs are
    computed in float32."""
    def cast(t):
        if isinstance(t, tensorplay.Tensor) and t.dtype in _REDUCED_FLOATS and _autocast_dtype(t) is not None:
            return t.float()
        return t
    return [cast(t) for t in tensors]


def outside_autocast(fn):
    """fn is an op PyTorch runs as one kernel that is on none of autocast's lists: it computes in
    its inputs' dtypes even inside an autocast region, so the ops it is made of must not cast
    either (a matmul inside `inner`, a `where` inside a window function)."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        with tensorplay.autocast("cpu", enabled=False):
            return fn(*args, **kwargs)
    return op


def in_float32(fn):
    """fn is an op on autocast's float32 list that PyTorch runs as one kernel: inside an autocast
    region its 16-bit floating tensor arguments are cast to float32 on entry, and its parts then run
    as outside the region."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        args = float32_inputs(*args)
        kwargs = dict(zip(kwargs, float32_inputs(*kwargs.values())))
        with tensorplay.autocast("cpu", enabled=False):
            return fn(*args, **kwargs)
    return op

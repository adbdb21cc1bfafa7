"""make_tensor: random test tensors of a given shape and dtype, with PyTorch's value ranges and validation."""

import collections.abc
import math
import warnings

import tensorplay as tp
from tensorplay import _C
from tensorplay._dtypes import finfo, iinfo

_INTEGRAL_TYPES = (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)
_FLOATING_TYPES = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _interval(dtype, low, high, *, lowest, highest, default_low, default_high):
    """[low, high) from the user's bounds (None meaning the dtype family's default), validated and clamped into
    [lowest, highest); for bool and integers, as the integer bounds randint takes."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING_TYPES:
        warnings.warn("Passing `low==high` to `tensorplay.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `tensorplay.full(...)` instead.",
                      FutureWarning, stacklevel=4)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype in _FLOATING_TYPES:
        return low, high
    # low is rounded up so that no value falls below it; high too, because randint excludes it.
    return math.ceil(low), math.ceil(high)


def _random_values(shape, dtype, device, low, high):
    if dtype == _C.bool:
        low, high = _interval(dtype, low, high, lowest=0, highest=2, default_low=0, default_high=2)
        return tp.randint(low, high, shape, dtype=dtype, device=device)
    if dtype in _INTEGRAL_TYPES:
        info = iinfo(dtype)
        # randint takes its bounds as int64, so int64's largest value cannot be drawn: it stays an exclusive bound.
        highest = info.max if dtype == _C.int64 else info.max + 1
        low, high = _interval(dtype, low, high, lowest=info.min, highest=highest, default_low=-9, default_high=10)
        return tp.randint(low, high, shape, dtype=dtype, device=device)
    if dtype in _FLOATING_TYPES:
        info = finfo(dtype)
        low, high = _interval(dtype, low, high, lowest=info.min, highest=info.max, default_low=-9, default_high=9)
        values = tp.empty(shape, dtype=dtype, device=device)
        # uniform_ needs high - low to be finite in the dtype; wider ranges are drawn at half scale and doubled.
        if high - low >= info.max:
            return values.uniform_(low / 2, high / 2).mul_(2)
        return values.uniform_(low, high)
    if isinstance(dtype, _C.dtype) and dtype.is_complex:  # each part drawn as its real dtype's values are
        parts = dtype.to_real()
        return tp.complex(_random_values(shape, parts, device, low, high), _random_values(shape, parts, device, low, high))
    raise TypeError(f"The requested dtype '{dtype}' is not supported by tensorplay.testing.make_tensor().")


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of the given shape, dtype and device with values drawn uniformly from [low, high).

    low and high default per dtype: bool [0, 2), uint8 [0, 10), signed integers [-9, 10), floating [-9, 9); given
    bounds are clamped to the dtype's finite range. noncontiguous gives a strided view (for more than one element),
    memory_format a copy in that format; the two exclude each other. exclude_zero replaces zeros with 1 for bool and
    integers, with finfo(dtype).tiny for floating dtypes. requires_grad is for floating dtypes only.
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got {noncontiguous=} and {memory_format=}")
    if requires_grad and (dtype == _C.bool or dtype in _INTEGRAL_TYPES):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")

    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # Twice the values along the last dimension, every second one kept: starting at 1 also catches code that
        # ignores the storage offset.
        result = _random_values((*shape[:-1], 2 * shape[-1]), dtype, device, low, high)[..., 1::2]
    else:
        result = _random_values(shape, dtype, device, low, high)
        if memory_format is not None:
            result = result.clone(memory_format=memory_format)

    if exclude_zero:
        result[result == 0] = 1 if dtype not in _FLOATING_TYPES and not dtype.is_complex else finfo(dtype).tiny
    if dtype in _FLOATING_TYPES or dtype.is_complex:
        result.requires_grad = requires_grad
    return result

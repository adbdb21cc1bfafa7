"""assert_close and the deprecated assert_allclose: tensors, numbers and nested containers of them compared within
tolerances, with PyTorch's rules and failure messages.

A comparison runs in two passes, as PyTorch's does: the first walks both inputs together and turns every pair of
leaves into a check, failing at once on a structural problem (lengths, keys, types, tolerance arguments); the second
runs the checks and raises the first mismatch. So a malformed input is reported even when an earlier leaf differs.
"""

import cmath
import collections.abc
import contextlib
import functools
import warnings

import numpy as np

import tensorplay as tp
from tensorplay import _C

# {dtype: (rtol, atol)}; any other dtype (integers, bool) is compared exactly.
_DTYPE_PRECISIONS = {
    _C.float16: (1e-3, 1e-5),
    _C.bfloat16: (1.6e-2, 1e-5),
    _C.float32: (1.3e-6, 1e-5),
    _C.float64: (1e-7, 1e-7),
    _C.complex64: (1.3e-6, 1e-5),
    _C.complex128: (1e-7, 1e-7),
}

# The looser table of the deprecated assert_allclose; bfloat16 is absent from it in PyTorch too.
_ALLCLOSE_PRECISIONS = {
    _C.float16: (1e-3, 1e-3),
    _C.float32: (1e-4, 1e-5),
    _C.float64: (1e-5, 1e-8),
}

# Python numbers take the tolerances of the dtype they become as tensors.
_NUMBER_DTYPES = {int: _C.int64, float: _C.float64, complex: _C.complex128}


def _item(path):
    """The path to a leaf the way the messages spell it: [0]['weight']."""
    return "".join(str([key]) for key in path)


class _Mismatch(Exception):
    """A failed check: the exception type the user gets, its message and the path to the failing leaf."""

    def __init__(self, error_type, message, path=()):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.path = path

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.error_type(msg)
        message = self.message
        if self.path:
            message += f"\n\nThe failure occurred for item {_item(self.path)}"
        return self.error_type(msg(message) if callable(msg) else message)


def _default_tolerances(*dtypes, precisions=_DTYPE_PRECISIONS):
    """The loosest (rtol, atol) over the dtypes."""
    rtols, atols = zip(*(precisions.get(dtype, (0.0, 0.0)) for dtype in dtypes))
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol, path):
    # Both or neither: atol=0 alone would still pass values within the default rtol, which surprises.
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    return _default_tolerances(*dtypes)


def _mismatch_message(*, identifier, extra, abs_diff, abs_index, atol, rel_diff, rel_index, rtol):
    """PyTorch's layout: a header, the extra line(s), then the greatest differences with their allowance."""
    exact = rtol == 0 and atol == 0

    def difference_line(kind, diff, index, tolerance):
        if index is None:
            line = f"{kind.title()} difference: {diff}"
        else:
            line = f"Greatest {kind} difference: {diff} at index {index}"
        return line if exact else f"{line} (up to {tolerance} allowed)"

    return "\n".join((
        f"{identifier} are not {'equal' if exact else 'close'}!",
        "",
        extra,
        difference_line("absolute", abs_diff, abs_index, atol),
        difference_line("relative", rel_diff, rel_index, rtol),
    ))


def _scalar_mismatch_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(identifier="Scalars", extra=f"Expected {expected} but got {actual}.",
                             abs_diff=abs_diff, abs_index=None, atol=atol,
                             rel_diff=rel_diff, rel_index=None, rtol=rtol)


def _unravel(flat_index, shape):
    index = []
    for size in reversed(shape):
        flat_index, position = divmod(flat_index, size)
        index.append(position)
    return tuple(reversed(index))


def _greatest(diff, matches):
    """Largest diff among the mismatched elements (a NaN wins) and its flat index."""
    diff[matches] = 0
    value, index = tp.max(diff, 0)
    return value.item(), int(index)


def _tensor_mismatch_message(actual, expected, matches, rtol, atol):
    shape = tuple(matches.shape)
    total = matches.numel()
    mismatched = total - int(tp.sum(matches))
    actual, expected, matches = actual.flatten(), expected.flatten(), matches.flatten()
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        # Differences of integers and bools are taken in int64, where they cannot wrap around.
        actual, expected = actual.to(_C.int64), expected.to(_C.int64)
    abs_diff = tp.abs(actual - expected)
    rel_diff = abs_diff / tp.abs(expected)
    abs_value, abs_at = _greatest(abs_diff, matches)
    rel_value, rel_at = _greatest(rel_diff, matches)
    return _mismatch_message(identifier="Tensor-likes",
                             extra=f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})",
                             abs_diff=abs_value, abs_index=_unravel(abs_at, shape), atol=atol,
                             rel_diff=rel_value, rel_index=_unravel(rel_at, shape), rtol=rtol)


def _compare_none(actual, expected, path):
    if actual is not None or expected is not None:
        raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)


def _compare_bools(actual, expected, path):
    if actual is not expected:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", path)


def _numbers_close(actual, expected, rtol, atol, equal_nan):
    if actual == expected:
        return True
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return True
    abs_diff = abs(actual - expected)
    return cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected)


def _compare_numbers(actual, expected, path, *, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
    if not _numbers_close(actual, expected, rtol, atol, equal_nan):
        raise _Mismatch(AssertionError, _scalar_mismatch_message(actual, expected, rtol, atol), path)


def _number_check(actual, expected, path, options):
    actual, expected = (value.item() if isinstance(value, np.number) else value for value in (actual, expected))
    for value in (actual, expected):
        # A bool paired with a number lands here (bool is an int to Python) but has no number dtype; PyTorch fails
        # on such a pair with a RuntimeError as well.
        if type(value) not in _NUMBER_DTYPES:
            where = f" at item {_item(path)}" if path else ""
            raise RuntimeError(f"Cannot compare {type(actual).__name__}(): {actual} with "
                               f"{type(expected).__name__}(): {expected}{where}: "
                               f"{type(value).__name__} is not one of int, float and complex")
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)]],
                             options["rtol"], options["atol"], path)
    return functools.partial(_compare_numbers, actual, expected, path, rtol=rtol, atol=atol,
                             equal_nan=options["equal_nan"], check_dtype=options["check_dtype"])


def _attribute_mismatch(name, actual, expected, path):
    return _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {actual} != {expected}.", path)


def _compare_attributes(actual, expected, path, *, check_device, check_dtype, check_stride):
    # Every tensorplay tensor is strided, so there is no layout to compare and every pair has strides.
    if actual.shape != expected.shape:
        raise _attribute_mismatch("shape", actual.shape, expected.shape, path)
    if check_stride and actual.stride() != expected.stride():
        raise _attribute_mismatch("stride()", actual.stride(), expected.stride(), path)
    if check_device and actual.device != expected.device:
        raise _attribute_mismatch("device", actual.device, expected.device, path)
    if check_dtype and actual.dtype != expected.dtype:
        raise _attribute_mismatch("dtype", actual.dtype, expected.dtype, path)


def _equalize(actual, expected):
    """Brings the two tensors to one device and one dtype, the way unchecked differences are compared."""
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        dtype = tp.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    return actual, expected


def _compare_tensors(actual, expected, path, *, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    _compare_attributes(actual, expected, path, check_device=check_device, check_dtype=check_dtype,
                        check_stride=check_stride)
    if "meta" in (actual.device.type, expected.device.type):
        return  # meta tensors have attributes but no values
    actual, expected = _equalize(actual, expected)
    matches = tp.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(tp.all(matches)):
        return
    if actual.dim() == 0:
        message = _scalar_mismatch_message(actual.item(), expected.item(), rtol, atol)
    else:
        message = _tensor_mismatch_message(actual, expected, matches, rtol, atol)
    raise _Mismatch(AssertionError, message, path)


def _as_tensors(actual, expected, allow_subclasses):
    """Both inputs as tensors, or None when they are not a pair of tensor-likes of related types."""
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not allow_subclasses and type(actual) is not type(expected)):
        return None
    try:
        return tuple(value if isinstance(value, tp.Tensor) else tp.as_tensor(value) for value in (actual, expected))
    except (TypeError, ValueError, RuntimeError):
        return None


def _tensor_check(actual, expected, path, options):
    rtol, atol = _tolerances([actual.dtype, expected.dtype], options["rtol"], options["atol"], path)
    return functools.partial(_compare_tensors, actual, expected, path, rtol=rtol, atol=atol,
                             equal_nan=options["equal_nan"], check_device=options["check_device"],
                             check_dtype=options["check_dtype"], check_stride=options["check_stride"])


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


def _is_number(value):
    return isinstance(value, (int, float, complex, np.number))


def _leaf_check(actual, expected, path, options):
    """The check for one pair of leaves, chosen in PyTorch's order: None, bools, numbers, tensor-likes."""
    if actual is None or expected is None:
        return functools.partial(_compare_none, actual, expected, path)
    if _is_bool(actual) and _is_bool(expected):
        return functools.partial(_compare_bools, bool(actual), bool(expected), path)
    if _is_number(actual) and _is_number(expected):
        return _number_check(actual, expected, path, options)
    tensors = _as_tensors(actual, expected, options["allow_subclasses"])
    if tensors is not None:
        return _tensor_check(*tensors, path, options)
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                               f"and {type(expected)}.", path)


def _is_sequence(value):
    # A str is a sequence of strs, each again a sequence: recursing into one would never end.
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def _checks(actual, expected, path, options):
    """One check per pair of leaves of the two (possibly nested) inputs; raises _Mismatch on a structural
    difference."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        return [check for index in range(len(actual))
                for check in _checks(actual[index], expected[index], (*path, index), options)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys, expected_keys = set(actual.keys()), set(expected.keys())
        if keys != expected_keys:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(expected_keys - keys)}\n"
                                            f"Additional keys in the actual mapping: {sorted(keys - expected_keys)}",
                            path)
        # Sorted when the keys allow it, so that the first failure reported does not depend on insertion order.
        with contextlib.suppress(TypeError):
            keys = sorted(keys)
        return [check for key in keys for check in _checks(actual[key], expected[key], (*path, key), options)]
    return [_leaf_check(actual, expected, path, options)]


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts that actual and expected are close: |actual - expected| <= atol + rtol * |expected| elementwise.

    Inputs may be tensors, numpy arrays, Python numbers and bools, None, or sequences and mappings of them, compared
    leaf by leaf. rtol and atol are both given or both omitted; omitted, they default per dtype (the loosest of the
    two dtypes). Tensors must also agree in shape and, unless told otherwise, in device and dtype (and in strides when
    check_stride). msg replaces the failure message of a value mismatch, or, as a callable, rewrites it.
    check_layout is accepted for PyTorch's signature: tensorplay tensors are all strided.
    """
    __tracebackhide__ = True
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
               "check_device": check_device, "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        checks = _checks(actual, expected, (), options)
    except _Mismatch as mismatch:
        # PyTorch applies msg only to failures of the comparison itself, not to malformed inputs.
        raise mismatch.to_error() from None
    for check in checks:
        try:
            check()
        except _Mismatch as mismatch:
            raise mismatch.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: assert_close with looser default tolerances, NaNs equal and dtypes free to differ."""
    __tracebackhide__ = True
    warnings.warn("`tensorplay.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `tensorplay.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, tp.Tensor):
        actual = tp.tensor(actual)
    if not isinstance(expected, tp.Tensor):
        expected = tp.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _default_tolerances(actual.dtype, expected.dtype, precisions=_ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)

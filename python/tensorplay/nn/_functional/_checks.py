"""Argument checks worded as PyTorch's bindings word them, and errors renamed to the op the caller
called: shared by the families of nn.functional that are built on other ops."""

import functools
import re

from tensorplay import _C
from tensorplay._dtypes import aten_name

_RENAMED = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)


def _aten_name(dtype):
    """The dtype as PyTorch's kernel errors name it ('Long', 'Half', ...)."""
    return aten_name(dtype)


def _names(message, name):
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) is not None


def _named(name, kinds=_RENAMED):
    """Errors of these kinds raised inside the op (by the ops it is built on) name it, as PyTorch's do."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except kinds as e:
                message = str(e)
                if _names(message, name):
                    raise
                message = re.sub(r"^\[[\w.]+\] ", "", message)
                try:
                    renamed = type(e)(f"[{name}] {message}")
                except Exception:
                    raise e from None
                raise renamed.with_traceback(e.__traceback__) from None
        return wrapper
    return decorate


def _tensor_arg(op, name, position, value, optional=False):
    if optional and value is None:
        return
    if not isinstance(value, _C.Tensor):
        kind = "Tensor" + ("?" if optional else "")
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be {kind}, not {type(value).__name__}")


def _bool_arg(op, name, position, value):
    if not isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be bool, not {type(value).__name__}")
    return value

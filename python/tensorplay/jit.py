"""tensorplay.jit: the TorchScript names that eager code touches, for a build without TorchScript.

The predicates answer as in eager PyTorch (``is_scripting()`` and ``is_tracing()`` are False), the
decorators that only annotate a function for the TorchScript compiler (``ignore``, ``unused``,
``export``, ``script_if_tracing``) return it as it is, and ``annotate`` returns its value. Compiling,
tracing, saving or loading TorchScript raises NotImplementedError: run the model directly, which is
what tensorplay always does (tensorplay.compile returns it unchanged)."""

import warnings

__all__ = ["Error", "ScriptFunction", "ScriptModule", "annotate", "export", "freeze", "ignore", "interface",
           "is_scripting", "is_tracing", "load", "save", "script", "script_if_tracing", "trace", "trace_module",
           "unused"]

_NO_TORCHSCRIPT = ("tensorplay has no TorchScript compiler: run the function or module directly (it runs eagerly), "
                   "or save its state_dict with tensorplay.save")


def _unsupported(name):
    raise NotImplementedError(f"tensorplay.jit.{name}: {_NO_TORCHSCRIPT}")


class Error(RuntimeError):
    """An error TorchScript raises in a scripted function."""


class ScriptModule:
    """The type of a scripted module: none exists here, so isinstance(m, ScriptModule) is False."""

    def __new__(cls, *args, **kwargs):
        _unsupported("ScriptModule")


class ScriptFunction:
    """The type of a scripted function: none exists here."""

    def __new__(cls, *args, **kwargs):
        _unsupported("ScriptFunction")


def is_scripting():
    """Whether this runs as TorchScript: never."""
    return False


def is_tracing():
    """Whether this runs under tensorplay.jit.trace: never."""
    return False


def ignore(drop=False, **kwargs):
    """``@ignore`` or ``@ignore(drop=True)``: leaves a function to Python when scripting; returns it.
    drop=True (or drop_on_export=True) is deprecated for unused, with PyTorch's warning."""
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @tensorplay.jit.ignore must be a bool or a function but got {drop}")
    if kwargs.pop("drop_on_export", None):
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function call "
                      "on compilation. Use tensorplay.jit.unused now. {}", FutureWarning, stacklevel=2)
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on compilation. "
                      "Use tensorplay.jit.unused now. {}", FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """Marks a function the TorchScript compiler should skip: returns it."""
    return fn


def export(fn):
    """Marks a method the TorchScript compiler should compile: returns it."""
    return fn


def interface(obj):
    """Marks a class as a TorchScript interface: returns it."""
    return obj


def script_if_tracing(fn):
    """Scripts `fn` only when called under tracing, which never happens: returns it."""
    return fn


def annotate(the_type, the_value):
    """Tells TorchScript the type of `the_value`: returns the value."""
    return the_value


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    _unsupported("script")


def trace(func, example_inputs=None, *args, **kwargs):
    _unsupported("trace")


def trace_module(mod, inputs, *args, **kwargs):
    _unsupported("trace_module")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    _unsupported("freeze")


def save(m, f, _extra_files=None):
    _unsupported("save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _unsupported("load")

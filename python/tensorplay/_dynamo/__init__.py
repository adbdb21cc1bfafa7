"""tensorplay._dynamo, the names of torch._dynamo that programs call, for a build without a graph
compiler: the decorators return what they are given, the dynamic-shape marks do nothing, and
``optimize(backend)`` returns a decorator that leaves the function as it is (see tensorplay.compile)."""

from tensorplay._dynamo import config
from tensorplay.compiler import (InvalidBackend, _check_backend, _notice, allow_in_graph,  # noqa: F401
                                 assume_constant_result, disable, is_compiling, list_backends, reset)

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph", "graph_break",
           "is_compiling", "list_backends", "mark_dynamic", "maybe_mark_dynamic", "mark_static",
           "mark_static_address", "optimize", "reset"]


def disallow_in_graph(fn):
    """Keeps the compiler from putting `fn` in a graph: returned as it is."""
    return fn


def graph_break():
    """Ends the compiled graph here: there is none."""


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):  # noqa: A002  (PyTorch's names)
    """Marks dimension `index` of `t` as varying between calls, so that the compiler does not
    specialise on it; with no compiler, nothing to do."""


def maybe_mark_dynamic(t, index):
    """Hints that dimension `index` of `t` varies between calls; with no compiler, nothing to do."""


def mark_static(t, index=None):
    """Marks `t` (or one dimension) as fixed between calls; with no compiler, nothing to do."""


def mark_static_address(t, guard=True):
    """Marks `t`'s memory as fixed between calls (for CUDA graphs); with no compiler, nothing to do."""


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None, guard_filter_fn=None,
             disable=False, dynamic=None, **kwargs):
    """The older spelling of compile: returns a decorator that returns the function as it is."""
    _check_backend(backend)

    def decorate(fn):
        if not disable:
            _notice()
        return fn

    return decorate

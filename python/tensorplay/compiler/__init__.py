"""tensorplay.compile and tensorplay.compiler, for a build without a graph compiler.

``tensorplay.compile(model)`` checks its arguments as torch.compile does and returns `model` itself,
which then runs eagerly, op by op, with the same results; the first call in a process warns once
that nothing was compiled. It works as a decorator with and without arguments. Unlike PyTorch, a
module comes back as itself rather than wrapped in an OptimizedModule, so its state_dict keys carry
no ``_orig_mod.`` prefix.

The tensorplay.compiler functions that programs call around compiled code answer as they do
outside a compiled region: ``is_compiling()`` is False, and ``disable``, ``allow_in_graph`` and the
other decorators return the function they are given.

>>> @tensorplay.compile(mode="max-autotune")  # doctest: +SKIP
... def step(x):
...     return x.sin() + 1
"""

import warnings

__all__ = ["compile", "reset", "allow_in_graph", "assume_constant_result", "list_backends", "disable",
           "set_default_backend", "get_default_backend", "cudagraph_mark_step_begin", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "nested_compile_region"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# torch.compile's backends by name, with the tags list_backends() leaves out by default.
_BACKENDS = {
    **{name: () for name in ("cudagraphs", "inductor", "openxla", "tvm")},
    **{name: ("debug",) for name in (
        "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
        "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
        "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "eager", "eager_debug", "eager_noexcept",
        "invoke_subgraph", "non_leaf_compile_error_TESTING_ONLY", "pre_dispatch_eager",
        "relu_accuracy_error_TESTING_ONLY", "relu_compile_error_TESTING_ONLY", "relu_runtime_error_TESTING_ONLY",
        "ts")},
    "openxla_eval": ("experimental",),
}
_default_backend = "inductor"
_warned = False


class InvalidBackend(RuntimeError):
    """A compile backend that is neither a known name nor a callable."""


def _notice():
    """Says once per process that compiling changes nothing here, so nobody waits for a speedup."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("tensorplay.compile: tensorplay has no graph compiler yet; the model is returned unchanged and "
                      "runs eagerly", UserWarning, stacklevel=3)


def _check_backend(backend):
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `tensorplay._dynamo.list_backends()` for available "
                             "backends.")


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, name=None,
            disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):  # noqa: A001
    """torch.compile's signature and checks; returns `model` unchanged, to run eagerly. Without a
    model it returns a decorator that compiles the function it decorates."""
    if model is None:
        def decorate(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return decorate
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    backend = _default_backend if backend is None else backend
    if backend == "inductor" and mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    _check_backend(backend)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if not disable:
        _notice()
    return model


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names compile() accepts (every one runs the model eagerly here), without those
    tagged with one of `exclude_tags`."""
    exclude = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKENDS.items() if not exclude & set(tags))


def get_default_backend():
    return _default_backend


def set_default_backend(backend):
    """The backend compile() uses when given none (None: "inductor")."""
    global _default_backend
    backend = "inductor" if backend is None else backend
    _check_backend(backend)
    _default_backend = backend


def reset():
    """Forgets compiled code and guards: there are none."""


def is_compiling():
    """Whether this runs inside a compiled region: never."""
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Keeps `fn` from being compiled: it is returned as it is, since nothing is compiled."""
    if fn is None:
        return lambda fn: fn
    return fn


def allow_in_graph(fn):
    """Lets the compiler put `fn` in a graph as one node: returned as it is."""
    return fn


def assume_constant_result(fn):
    """Lets the compiler treat `fn`'s result as a constant: returned as it is."""
    return fn


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Marks `fn` as a region compiled once and reused: returned as it is."""
    if fn is None:
        return lambda fn: fn
    return fn


def cudagraph_mark_step_begin():
    """Marks the start of a training step for CUDA graphs: there are none."""

"""tensorplay.backends: the flags of the libraries kernels may run on, as torch.backends answers them in
PyTorch's CPU wheel.

Each submodule has PyTorch's names, defaults, checks and errors, so that ``tensorplay.backends.cudnn.benchmark
= True`` and ``with tensorplay.backends.cudnn.flags(...)`` run as in PyTorch. The CUDA libraries' flags
(cudnn, cuda) are kept as state only, since this build has no CUDA; the CPU's say what tensorplay's
kernels use: oneDNN (``mkldnn``) for matmul and convolution, OpenMP for threads, no MKL.

A flag is a module attribute with a getter and a setter (ContextProp); ``disable_global_flags()``
makes assigning one an error, so that only the ``flags()`` context managers change them, which
PyTorch's own test suite uses to keep tests from leaking settings."""

import contextlib
import sys
import types

from tensorplay.backends import _fp32_precision as _precision

__all__ = ["cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp",
           "opt_einsum", "disable_global_flags", "flags_frozen", "flags", "set_flags"]

_allow_nonbracketed_mutation_flag = True


def disable_global_flags():
    """From now on, assigning a flag raises: change flags with the flags() context managers."""
    global _allow_nonbracketed_mutation_flag
    _allow_nonbracketed_mutation_flag = False


def flags_frozen():
    return not _allow_nonbracketed_mutation_flag


@contextlib.contextmanager
def _allow_nonbracketed_mutation():
    global _allow_nonbracketed_mutation_flag
    old = _allow_nonbracketed_mutation_flag
    _allow_nonbracketed_mutation_flag = True
    try:
        yield
    finally:
        _allow_nonbracketed_mutation_flag = old


class ContextProp:
    """A module attribute read by `getter` and assigned through `setter`, unless flags are frozen."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self.getter()

    def __set__(self, obj, val):
        if flags_frozen():
            raise RuntimeError(f"not allowed to set {obj.__name__} flags after disable_global_flags; please use "
                               "flags() context manager instead")
        self.setter(val)


def _flag_module(name, **props):
    """Gives module `name` the ContextProps `props` as attributes, by making its class a subclass of
    the module type that holds them (the module object stays the same one)."""
    module = sys.modules[name]
    module.__class__ = type(f"{name.rpartition('.')[2].capitalize()}Module", (types.ModuleType,), props)
    return module


class _FP32Precision:
    """``<backend>.<op>.fp32_precision``: the precision float32 ops of one kind may compute in on one
    backend ("ieee", "tf32", "bf16", or "none" to follow the backend's and then the generic setting)."""

    def __init__(self, backend, op):
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "op", op)

    def __getattr__(self, name):
        if name == "fp32_precision":
            return _precision.get(self.backend, self.op)
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "fp32_precision":
            _precision.set(self.backend, self.op, value)
        elif name in ("backend", "op"):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("Unknown attribute " + name)


def set_flags(_fp32_precision="none"):
    """Sets the generic fp32 precision and returns the previous one, as a tuple for flags() to restore."""
    orig_flags = (_precision.get("generic", "all"),)
    if _fp32_precision is not None:
        _precision.set("generic", "all", _fp32_precision)
    return orig_flags


@contextlib.contextmanager
def flags(fp32_precision="none"):
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(fp32_precision)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


_flag_module(__name__, fp32_precision=ContextProp(lambda: _precision.get("generic", "all"),
                                                   lambda value: _precision.set("generic", "all", value)))

from tensorplay.backends import (cpu, cuda, cudnn, cusparselt, kleidiai, mha, mkl, mkldnn, mps,  # noqa: E402
                                 nnpack, openmp, opt_einsum)

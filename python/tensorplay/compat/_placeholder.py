"""Placeholders: what a torch name tensorplay lacks resolves to in lazy mode.

A program often imports more than it runs: ``from torch.distributed.fsdp import FullyShardedDataParallel``
at the top of a file whose single-process path never calls it. In lazy mode such a name is a
placeholder, so the program runs until it uses the name; then the placeholder raises
NotImplementedError (PyTorch's error for what a build does not support) naming the name and where the
program first reached it::

    NotImplementedError: tensorplay has no torch.distributed.fsdp.FullyShardedDataParallel yet (used at train.py:12)

A placeholder is a module, so that imports pass through it (``import torch.distributed.fsdp``), and
each of its attributes is a placeholder too. Calling it, subclassing it, indexing it, iterating over it
or entering it as a context raises. Nothing is an instance or a subclass of it, since nothing can be an
instance of a type tensorplay does not have: ``isinstance(x, torch.distributed.ProcessGroup)`` is False.
Its truth is that of any function, class or module: True."""

import types

from tensorplay.compat._caller import program_frame, where

_made = {}  # torch name -> its placeholder, while torch mode is on


def placeholder(name, location):
    """The placeholder for the torch name `name`; made at the first touch, which was at `location`."""
    made = _made.get(name)
    if made is None:
        made = _made[name] = Placeholder(name, location)
    return made


def made():
    """The placeholders made since torch mode was enabled, by torch name."""
    return dict(_made)


def forget():
    _made.clear()


def first_use(made):
    return made._Placeholder__location


class Placeholder(types.ModuleType):
    def __init__(self, name, location):
        super().__init__(name)
        self.__path__ = []  # a package, so that `import torch.distributed.fsdp` can go on below it
        self.__location = location

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(f"{self.__name__} has no attribute {name!r}: it stands for a name tensorplay lacks")
        frame = program_frame()
        return placeholder(f"{self.__name__}.{name}", self.__location if frame is None else where(frame))

    def __repr__(self):
        return f"<placeholder for {self.__name__}, which tensorplay lacks>"

    def _use(self, *args, **kwargs):
        raise NotImplementedError(f"tensorplay has no {self.__name__} yet (used at {self.__location})")

    __call__ = __mro_entries__ = __getitem__ = __iter__ = __enter__ = __exit__ = _use

    def __instancecheck__(self, instance):
        return False

    def __subclasscheck__(self, subclass):
        return False


def missing_names(module, torch_name, own_getattr, found):
    """The module ``__getattr__`` that lazy mode gives tensorplay module `module` (torch's `torch_name`):
    a name the module lacks is a placeholder when the program asks for it. The module's own
    ``__getattr__`` (tensorplay's lazily imported submodules) answers first, and what it returns goes to
    `found`; tensorplay's own code still gets AttributeError, so that its checks for a name stay true."""

    def __getattr__(name):
        error = None
        if own_getattr is not None:
            try:
                value = own_getattr(name)
            except AttributeError as own_error:
                error = own_error
            else:
                found(value)
                return value
        frame = program_frame()
        if name.startswith("__") or frame is None:
            raise error or AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        return placeholder(f"{torch_name}.{name}", where(frame))

    return __getattr__

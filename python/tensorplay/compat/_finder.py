"""The import hook of torch mode: ``import torch.X.Y`` gives the module object ``tensorplay.X.Y``.

It is a finder at the front of ``sys.meta_path`` (ahead of the path finder that would find PyTorch)
and the loader of what it finds. Its loader makes no module: it hands the import system tensorplay's
own module, which the import system then files in ``sys.modules`` under the torch name. The torch
name is an alias, never a copy, so classes, functions and state are tensorplay's one set:
``torch.Tensor is tensorplay.Tensor`` and ``isinstance`` hold, and nothing is renamed.

A torch name with no tensorplay module is not found (the import raises ModuleNotFoundError naming
it), or in lazy mode it is a placeholder (``_placeholder.py``). The path finders after this one look
for it only in tensorplay's package (the parent's ``__path__``), so PyTorch is never found."""

import importlib
import importlib.abc
import importlib.machinery

from tensorplay.compat._caller import program_frame, where
from tensorplay.compat._placeholder import placeholder
from tensorplay.compat._usage import MISSING


def is_torch_name(name):
    return name == "torch" or name.startswith("torch.")


class TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, session):
        self._session = session  # its settings (lazy), and what it notes and hooks

    def find_spec(self, fullname, path=None, target=None):
        if not is_torch_name(fullname):
            return None
        own_name = "tensorplay" + fullname[len("torch"):]
        frame = program_frame()
        try:
            module = importlib.import_module(own_name)
        except ModuleNotFoundError as error:
            if error.name != own_name and not own_name.startswith(f"{error.name}."):
                raise  # a module that tensorplay's module imports is missing: that is its own error
            if not self._session.lazy or frame is None:
                # No spec: the import raises ModuleNotFoundError naming the torch name, and
                # importlib.util.find_spec answers None, as for a submodule PyTorch lacks.
                self._session.note(fullname, MISSING, frame)
                return None
            module = placeholder(fullname, where(frame))
        else:
            self._session.found()
        self._session.note(fullname, module, frame)
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=getattr(module, "__file__", None),
                                              is_package=hasattr(module, "__path__"))
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        # The import system has set the module's __spec__ to the torch name's spec; it keeps its own.
        vars(module)["__spec__"] = module.__spec__.loader_state[1]

"""Torch mode's state: what enable() sets up and disable() takes down.

enable() files PyTorch's modules away if they were imported (they come back on disable, and code that
holds them keeps them), puts the finder first on ``sys.meta_path``, and makes ``__version__`` the one
torch programs check. Lazy and verbose mode then hook every tensorplay module: lazy mode with a
module ``__getattr__`` that answers missing names with placeholders, verbose mode by watching
lookups (``_usage.py``); what each hook replaced is kept and put back by disable(). The only torch
names in ``sys.modules`` are the aliases the finder made, and disable() removes them all."""

import atexit
import sys

import tensorplay
from tensorplay import version
from tensorplay.compat._caller import program_frame
from tensorplay.compat._finder import TorchFinder, is_torch_name
from tensorplay.compat._placeholder import Placeholder, forget, made, missing_names
from tensorplay.compat._usage import Usage, is_module, watching
from tensorplay.torch_version import TorchVersion

_session = None


def enable(lazy=False, verbose=False):
    """Turns torch mode on: from here on, ``import torch`` in this process gives tensorplay.

    Args:
        lazy: a torch name tensorplay lacks resolves to a placeholder that raises NotImplementedError,
            naming it and where the program first reached it, only when it is used. Without it, importing
            such a name raises ModuleNotFoundError at once, and reading it AttributeError.
        verbose: at disable(), or at exit, print to stderr a table of every torch name the program
            used, what provided it, and where the program first used it.

    Called while torch mode is on, it changes the settings. It returns a context manager that, on exit,
    puts back what was there before: torch mode off, or the earlier settings.

    >>> with tensorplay.compat.enable():
    ...     import torch
    >>> torch.Tensor is tensorplay.Tensor
    True
    """
    global _session
    previous = None if _session is None else (_session.lazy, _session.verbose)
    if _session is None:
        _session = _Session()
        _session.start()
    _session.configure(lazy, verbose)
    return _Enabled(previous)


def disable():
    """Turns torch mode off: ``sys.modules``, ``sys.meta_path`` and tensorplay's modules are as they were
    before enable(). Modules the program imported keep the torch module objects they hold."""
    global _session
    if _session is not None:
        session, _session = _session, None
        session.stop()


class _Enabled:
    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        if self._previous is None:
            disable()
        elif _session is not None:
            enable(*self._previous)


def _is_own_module(name):
    """Whether sys.modules entry `name` is one of tensorplay's modules that torch names alias (torch
    mode's own modules are not)."""
    return ((name == "tensorplay" or name.startswith("tensorplay.")) and not name.startswith("tensorplay.compat")
            and name != "tensorplay.run")


class _Session:
    def __init__(self):
        self.lazy = self.verbose = self.reporting = False
        self.finder = TorchFinder(self)
        self.real_torch = {}
        self.versions = ()
        self.originals = {}    # tensorplay module -> (its type, its own __getattr__) before torch mode
        self.torch_names = {}  # tensorplay module -> its torch name
        self.watching = {}     # module type -> its subclass that watches lookups
        self.usage = Usage()

    def start(self):
        self.real_torch = {name: module for name, module in sys.modules.items() if is_torch_name(name)}
        for name in self.real_torch:
            del sys.modules[name]
        sys.meta_path.insert(0, self.finder)
        self.versions = (tensorplay.__version__, version.__version__)
        torch_version = f"{version.torch_api}+tensorplay.{version.__version__}"
        vars(tensorplay)["__version__"], vars(version)["__version__"] = TorchVersion(torch_version), torch_version
        atexit.register(self.report)

    def configure(self, lazy, verbose):
        self.lazy, self.verbose = lazy, verbose
        self.reporting |= verbose
        for module in self.originals:
            self.hook(module)
        self.found()

    def found(self):
        """Hooks the tensorplay modules loaded since the last look, when a setting asks for hooks."""
        if self.lazy or self.verbose:
            for name, module in list(sys.modules.items()):
                if _is_own_module(name) and is_module(module) and module not in self.originals:
                    self.torch_names[module] = "torch" + name[len("tensorplay"):]
                    self.originals[module] = (type(module), vars(module).get("__getattr__"))
                    self.hook(module)

    def hook(self, module):
        """Gives `module` the hooks the settings ask for, and takes away those they do not."""
        own_type, own_getattr = self.originals[module]
        namespace = vars(module)
        if self.lazy:
            namespace["__getattr__"] = missing_names(module, self.torch_names[module], own_getattr, self._found_value)
        elif own_getattr is None:
            namespace.pop("__getattr__", None)
        else:
            namespace["__getattr__"] = own_getattr
        wanted = own_type
        if self.verbose:
            if own_type not in self.watching:
                self.watching[own_type] = watching(own_type, self.looked_up)
            wanted = self.watching[own_type]
        if type(module) is not wanted:
            module.__class__ = wanted

    def _found_value(self, value):
        if is_module(value):
            self.found()

    def note(self, name, value, frame):
        if self.verbose and frame is not None:
            self.usage.note(name, value, frame)

    def looked_up(self, module, name, value):
        frame = program_frame()
        if frame is not None:
            self.usage.note(f"{self.torch_names[module]}.{name}", value, frame)
            if is_module(value) and value not in self.originals:
                self.found()

    def report(self):
        if self.reporting:
            print(self.usage.table(made()), file=sys.stderr, flush=True)

    def stop(self):
        sys.meta_path.remove(self.finder)
        for module, (own_type, own_getattr) in self.originals.items():
            namespace = vars(module)
            for name, value in list(namespace.items()):
                if isinstance(value, Placeholder):  # set on its parent by `import torch.<missing>`
                    del namespace[name]
            if own_getattr is None:
                namespace.pop("__getattr__", None)
            else:
                namespace["__getattr__"] = own_getattr
            module.__class__ = own_type
        for name in [name for name in sys.modules if is_torch_name(name)]:
            del sys.modules[name]
        sys.modules.update(self.real_torch)
        vars(tensorplay)["__version__"], vars(version)["__version__"] = self.versions
        atexit.unregister(self.report)
        self.report()
        forget()

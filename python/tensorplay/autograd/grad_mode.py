"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, and the settings
set_multithreading_enabled and enforce_grad_layout_policy. Each is thread-local, a context
manager, and a decorator."""

import functools
import inspect
import threading

from tensorplay import _C


class _Mode:
    """A context manager that is also a decorator (entering on every call, generators included)."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        with self.clone():
                            sent = yield value
                        with self.clone():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _BareDecoratable(_Mode):
    """A mode that also decorates without parentheses: @no_grad as well as @no_grad()."""

    def __new__(cls, orig_func=None):
        if orig_func is not None:
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        pass


class no_grad(_BareDecoratable):
    """Disables gradient recording: ops inside record no graph and their results do not require grad."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class enable_grad(_BareDecoratable):
    """Enables gradient recording inside a no_grad region."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_Mode):
    """Sets grad mode on or off. Takes effect at once when called, and for a `with` block."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled() expects a bool, got {type(mode).__name__}")
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __call__(self, fn):
        # As a decorator the mode applies per call, not from now on.
        _C._set_grad_enabled(self.prev)
        return super().__call__(fn)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_Mode):
    """Like no_grad, and tensors made inside are inference tensors, which backward may not save."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        # @inference_mode without parentheses decorates directly.
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __enter__(self):
        self.prev_grad = _C.is_grad_enabled()
        self.prev_inference = _C.is_inference_mode_enabled()
        if self.mode:
            _C._set_grad_enabled(False)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _C._set_inference_mode(self.prev_inference)
        _C._set_grad_enabled(self.prev_grad)

    def clone(self):
        return self.__class__(self.mode)


is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled


class _SettingMode(_Mode):
    """A setting that takes effect when constructed (as a call), is put back when its `with` block
    ends, and as a decorator applies per call: PyTorch's set_multithreading_enabled and
    enforce_grad_layout_policy."""

    def __init__(self, mode):
        self.mode = mode
        self.prev = self._get()
        self._set(mode)

    def __call__(self, fn):
        self._set(self.prev)
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self._set(self.prev)

    def clone(self):
        return self.__class__(self.mode)


_threads = threading.local()


class set_multithreading_enabled(_SettingMode):
    """Whether backward may run on device worker threads (per thread). The engine runs backward on
    the calling thread in either setting: the only devices it serves are the CPU and meta, which
    PyTorch too runs on the calling thread."""

    @staticmethod
    def _get():
        return getattr(_threads, "multithreading", True)

    @staticmethod
    def _set(mode):
        _threads.multithreading = bool(mode)


class enforce_grad_layout_policy(_SettingMode):
    """Whether a leaf's .grad must be laid out like the leaf (per thread; see the gradient layout
    contract in csrc/tensorplay/autograd/variable.h). Relaxed, a gradient that nothing else holds becomes
    .grad as it is, in whatever dense layout it came."""

    def __init__(self, enable=True):
        super().__init__(enable)

    _get = staticmethod(_C._is_grad_layout_enforced)
    _set = staticmethod(_C._set_grad_layout_enforced)

"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Each is thread-local (the
flags live in C++ thread-local state), a context manager, and a decorator."""

import functools
import inspect

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

"""tensorplay.futures: a value that becomes available later (torch.futures.Future), as a collective
started with ``async_op=True`` returns through ``Work.get_future()`` and DDP's communication hooks
chain with ``then``."""

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """Set once with ``set_result`` or ``set_exception``; ``wait()`` blocks until then and returns the
    value (or raises). A future made over a running operation (``Work.get_future()``), or by ``then``,
    completes on its first ``wait()``: by waiting for that operation, or by running the callback.
    ``done()`` asks the operation (``_ready``) until then."""

    def __init__(self, *, devices=None, _completes_by=None, _ready=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._completes_by = _completes_by
        self._ready = _ready

    def done(self):
        with self._cond:
            if self._done:
                return True
        return self._ready is not None and self._ready()

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def _finish(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for callback in callbacks:
            callback(self)

    def wait(self):
        """The value, once set; the exception set, raised."""
        with self._cond:
            source, self._completes_by = self._completes_by, None
        if source is not None:
            try:
                value = source()
            except Exception as error:  # noqa: BLE001  (the operation's error is the future's)
                self._finish(None, error)
            else:
                self._finish(value, None)
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed future (raises its exception); waits if it is not complete."""
        return self.wait()

    def then(self, callback):
        """A future for callback(self), run once this one completes."""
        return Future(_completes_by=lambda: callback(self._waited()))

    def _waited(self):
        self.wait()
        return self

    def add_done_callback(self, callback):
        """Runs callback(self) when this future completes (at once if it has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)


def collect_all(futures):
    """A future of the list of futures, complete once each of them is."""
    return Future(_completes_by=lambda: [f._waited() for f in futures])


def wait_all(futures):
    """The values of futures, in order (the first exception is raised)."""
    return [f.wait() for f in futures]

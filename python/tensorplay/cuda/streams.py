"""CUDA streams and events, as torch.cuda.streams in a build without CUDA: the classes exist for
isinstance checks and type annotations, and constructing one raises PyTorch's RuntimeError."""

__all__ = ["Stream", "ExternalStream", "Event"]


class Stream:
    """A queue of kernels on one GPU. There is no GPU, so none can be made."""

    def __new__(cls, device=None, priority=0, **kwargs):
        raise RuntimeError("tensorplay.cuda.Stream requires CUDA support")


class ExternalStream(Stream):
    """A stream another library made, wrapped by its pointer. The device is selected first, as in
    PyTorch, so a device that cannot be selected is the error."""

    def __new__(cls, stream_ptr, device=None, **kwargs):
        from tensorplay.cuda import device as device_context

        with device_context(device):
            return super().__new__(cls, stream_ptr=stream_ptr, **kwargs)


class Event:
    """A marker in a stream, for timing and synchronising. There are no streams, so none can be made."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, external=False):
        raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")

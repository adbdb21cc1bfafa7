"""CUDA graphs, as torch.cuda.graphs in a build without CUDA: a graph records kernels on a GPU
stream to replay them, so nothing here can be made or run; each name raises PyTorch's error."""

from tensorplay import _C

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph", "make_graphed_callables"]


def _unbuilt(name):
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


def is_current_stream_capturing():
    _unbuilt("_cuda_isCurrentStreamCapturing")


def graph_pool_handle():
    _unbuilt("_graph_pool_handle")


class CUDAGraph:
    """A captured sequence of kernels. There is no GPU to capture on, so none can be made."""

    def __new__(cls, keep_graph=False):
        _unbuilt(cls.__name__)


class graph:
    """Captures the block's kernels into `cuda_graph` on a side stream, which is made first: with no
    GPU that is the error, unless a stream is given (none can be made)."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global", enable_annotations=False,
                 check_input_liveness=False):
        from tensorplay.cuda import Stream

        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        from tensorplay.cuda import synchronize

        synchronize()


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    """Captures each callable's forward and backward into CUDA graphs; making the first graph is
    the error."""
    if _C.is_autocast_enabled() and _C.is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching. Please set "
                           "`cache_enabled=False`.")
    CUDAGraph()

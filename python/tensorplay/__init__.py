"""tensorplay: an eager deep learning framework with PyTorch's API and first-class mixed precision.

>>> import tensorplay as tp
>>> x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> (x @ x).sum()
tensor(54.)
"""

def _refuse_subinterpreters():
    # The extension's types and state belong to one interpreter; a second copy in a
    # sub-interpreter would abort the whole process, so the import fails cleanly instead.
    try:
        import _xxsubinterpreters as interpreters  # CPython 3.8 - 3.12
    except ImportError:
        try:
            import _interpreters as interpreters  # CPython 3.13 and later
        except ImportError:
            return
    if interpreters.get_current() != interpreters.get_main():
        raise ImportError("tensorplay cannot be imported in a sub-interpreter: import it in the main interpreter")


_refuse_subinterpreters()

from tensorplay import _C  # noqa: E402
from tensorplay._C import *  # noqa: F401,F403  (ops, dtypes, Tensor, device, Generator)
from tensorplay._C import Tensor, device, dtype, Generator
from tensorplay._C import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_
from tensorplay._dtypes import finfo, iinfo
from tensorplay._size import Size
from tensorplay._legacy_constructors import *  # noqa: F401,F403  (torch.Tensor(2, 3), FloatTensor, ...)
from tensorplay._tensor import tensor, as_tensor, equal, from_numpy, is_floating_point, numel, result_type
from tensorplay import accelerator, amp, autograd, backends, cpu, cuda, linalg, mps, nn, optim, xpu
from tensorplay.functional import cdist, einsum, tensordot
from tensorplay import utils
from tensorplay.utils.dlpack import from_dlpack
from tensorplay.storage import TypedStorage, UntypedStorage
from tensorplay import _pickling  # noqa: F401  (tensors, devices and generators pickle and deep-copy)
from tensorplay import multiprocessing  # (tensors cross between processes through shared memory)
from tensorplay import func, overrides, profiler, testing
from tensorplay import compiler, hub, jit, torch_version, version
from tensorplay.version import __version__
from tensorplay.compiler import compile  # noqa: A004  (torch.compile, which shadows the builtin as in torch)
from tensorplay.amp import autocast
from tensorplay.random import get_rng_state, set_rng_state, thread_safe_generator
from tensorplay.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from tensorplay.serialization import save, load
from tensorplay._composites import *  # noqa: F401,F403  (the torch namespace's long tail)
from tensorplay import special  # (its functions are the namespace's ops under their special names)
from tensorplay import distributions  # (torch.distributions: python/tensorplay/distributions/)
from tensorplay import sparse  # (torch.sparse: composites over sparse COO tensors, csrc/tensorplay/ops/sparse.cpp)
from tensorplay import fft  # (torch.fft: composites of three transforms with kernels, csrc/tensorplay/ops/fft.cpp)
from tensorplay import __config__

__config__._check_blas()

# PyTorch's aliases for the dtypes.
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
bool = _C.bool  # noqa: A001
cfloat = complex64
cdouble = complex128



_LAZY_MODULES = ("_dynamo", "onnx")  # imported on first use, as in torch


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f"tensorplay.{name}")
    raise AttributeError(f"module 'tensorplay' has no attribute '{name}'")


def set_default_device(device):
    """Makes `device` the one factories use when given none, in this thread (as in PyTorch);
    None makes it the CPU again. `with tensorplay.device(...):` does the same for a block."""
    _C._set_default_device(device)


__all__ = [name for name in dir() if not name.startswith("_")]

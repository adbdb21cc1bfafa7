"""DLPack: tensors shared without a copy with any array library that speaks it (NumPy >= 1.22,
PyTorch, JAX, ...), both ways, bfloat16 included where the other library has it."""

import enum

from tensorplay import _C

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLExtDev = 12
    kDLOneAPI = 14


def from_dlpack(ext_tensor):
    """A tensor on the memory of ext_tensor: an object with __dlpack__, or a DLPack capsule (which
    can be consumed once)."""
    return _C._from_dlpack(ext_tensor)


def to_dlpack(tensor):
    """A DLPack capsule of the tensor's memory, for a library that takes capsules."""
    return tensor.__dlpack__()


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The tensor's memory as a DLPack capsule (Python array API standard's __dlpack__)."""
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if copy:
        raise BufferError("__dlpack__: tensorplay shares memory; copy=True is not supported, copy the tensor first")
    if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
        raise BufferError(f"__dlpack__: tensorplay exports CPU tensors only, not to device {tuple(dl_device)}")
    return self._dlpack()  # an unversioned capsule, which consumers of every DLPack version read


def _dlpack_device(self):
    if self.device.type != "cpu":
        raise BufferError(f"__dlpack_device__: tensorplay exports CPU tensors only, not {self.device}")
    return (DLDeviceType.kDLCPU, 0)


_C.Tensor.__dlpack__ = _dlpack
_C.Tensor.__dlpack_device__ = _dlpack_device

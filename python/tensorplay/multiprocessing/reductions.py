"""Tensors in memory shared between processes, and how they cross between processes.

Tensor.share_memory_() moves a tensor's storage (and so every view of it) into an anonymous shared
mapping: a memfd, a file that has no name in any directory and disappears with its last descriptor
and mapping, so nothing is ever left in /dev/shm, whatever kills the processes. A tensor sent through
a multiprocessing queue or pipe is moved there first (as PyTorch does) and travels as the memfd's
descriptor (passed over a Unix socket) and its geometry; the receiver maps the same memory, so
writes on either side are seen on the other. This is PyTorch's "file_descriptor" sharing strategy.
"""

import mmap
import multiprocessing.reduction
import os
import weakref

import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._pickling import _rebuild_sparse, _sparse_parts

__all__ = ["init_reductions"]


class _SharedMapping(mmap.mmap):
    """A shared mapping of a memfd: it keeps the descriptor, to send, for as long as it lives."""

    @classmethod
    def create(cls, nbytes):
        fd = os.memfd_create("tensorplay-storage", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, max(nbytes, 1))  # a mapping cannot be empty
            return cls.of(fd, nbytes)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def of(cls, fd, nbytes):
        mapping = cls(fd, max(nbytes, 1))
        mapping.fd, mapping.nbytes = fd, nbytes
        return mapping

    def __del__(self):
        fd = getattr(self, "fd", None)
        if fd is not None:
            os.close(fd)

    def array(self):
        return np.frombuffer(self, dtype=np.uint8, count=self.nbytes)


# A shared storage's mapping, by the storage's address (the mapping lives as long as the storage).
_mappings = weakref.WeakValueDictionary()


def _mapping_of(tensor):
    data = tensor.detach()._storage_bytes()
    return _mappings.get((data.data_ptr(), data.numel())) if data.numel() else None


def _is_shared(self):
    """Whether the tensor's storage (a sparse tensor's values) is in memory shared between processes."""
    if self.is_sparse:
        return _is_shared(self._values().detach())
    return _mapping_of(self) is not None


def _share_memory_(self):
    """Moves the tensor's storage into shared memory (every view of it follows); a no-op when it is
    there already. Returns the tensor."""
    if self.is_meta or self.device.type != "cpu":
        return self
    if self.is_sparse:  # its parts
        self._indices().share_memory_()
        self._values().detach().share_memory_()
        return self
    if _is_shared(self):
        return self
    nbytes = self.detach()._storage_bytes().numel()
    if nbytes == 0:
        return self
    mapping = _SharedMapping.create(nbytes)
    self.detach()._move_storage_to(mapping.array())
    _mappings[(self.detach()._storage_bytes().data_ptr(), nbytes)] = mapping
    return self


def _rebuild_shared(descriptor, nbytes, dtype, offset, size, stride, requires_grad, cls):
    from tensorplay._tensor import from_numpy
    mapping = _SharedMapping.of(descriptor.detach(), nbytes)
    storage = from_numpy(mapping.array())
    _mappings[(storage.data_ptr(), nbytes)] = mapping
    tensor = _C.empty(0, dtype=dtype)._set(storage, offset, list(size), list(stride))
    if cls is not Tensor:
        tensor = tensor.as_subclass(cls)
    return tensor.requires_grad_(requires_grad) if requires_grad else tensor


def _reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries.  If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
    if tensor.is_sparse:  # its parts, each through shared memory
        return _rebuild_sparse, (*_sparse_parts(tensor), tensor.requires_grad)
    if tensor.is_meta or tensor.detach()._storage_bytes().numel() == 0:
        return tensor.__reduce_ex__(2)  # nothing to share
    tensor.share_memory_()
    mapping = _mapping_of(tensor)
    return _rebuild_shared, (multiprocessing.reduction.DupFd(mapping.fd), mapping.nbytes, tensor.dtype,
                             tensor.storage_offset(), tuple(tensor.shape), tensor.stride(), tensor.requires_grad,
                             type(tensor))


def _reduce_parameter(parameter):
    from tensorplay.nn import Parameter
    return Parameter, (parameter.detach(), parameter.requires_grad)


def init_reductions():
    """Makes multiprocessing send tensors through shared memory (its ForkingPickler's reductions)."""
    from tensorplay.nn import Parameter
    multiprocessing.reduction.ForkingPickler.register(Tensor, _reduce_tensor)
    multiprocessing.reduction.ForkingPickler.register(Parameter, _reduce_parameter)


Tensor.share_memory_ = _share_memory_
Tensor.is_shared = _is_shared

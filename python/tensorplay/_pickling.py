"""How tensors, devices and generators pickle and copy, as PyTorch's do.

A tensor pickles as its storage (the bytes of the memory it views) and its geometry: dtype, offset,
size, stride, requires_grad, and the Python attributes set on it. A storage is one Python object per
storage for as long as a pickler (or a deep copy) holds it, so the pickle's memo writes it once:
views pickled together (x and x[1:], a module's tied weights) view one storage again after loading,
and so do the tensors of a deep copy. Parameters keep their class (nn/parameter.py). A shallow copy
(copy.copy) is a new tensor on the same memory, as PyTorch's. A sparse tensor pickles as its parts.
"""

import copy
import weakref

import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor

__all__ = []


class _Storage:
    """A tensor's storage, as pickle and deepcopy see it: the same object for every tensor viewing it
    (while something, such as a pickler's memo, holds it)."""

    _live = weakref.WeakValueDictionary()  # (address, bytes) -> the _Storage of that memory

    def __init__(self, data):
        self.data = data  # a uint8 tensor over the storage's bytes; it keeps them (and the address) alive

    @classmethod
    def of(cls, tensor):
        data = tensor.detach()._storage_bytes()
        key = (data.data_ptr(), data.numel())
        storage = cls._live.get(key)
        if storage is None:
            storage = cls._live[key] = cls(data)
        return storage

    def __reduce__(self):
        return _restore_storage, (self.data.numpy().tobytes(),)


def _restore_storage(raw):
    from tensorplay._tensor import from_numpy
    return from_numpy(np.frombuffer(bytearray(raw), dtype=np.uint8))


def _view(storage_bytes, dtype, offset, size, stride):
    """A tensor of dtype viewing storage_bytes (a uint8 tensor over a whole storage) with this geometry."""
    return _C.empty(0, dtype=dtype)._set(storage_bytes, offset, list(size), list(stride))


def _rebuild_tensor(storage_bytes, dtype, offset, size, stride, requires_grad, cls, state):
    if isinstance(storage_bytes, _Storage):  # copy.copy reduces without pickling: the same memory
        storage_bytes = storage_bytes.data
    tensor = _view(storage_bytes, dtype, offset, size, stride)
    if cls is not Tensor:
        tensor = tensor.as_subclass(cls)
    if requires_grad:
        tensor.requires_grad_(True)
    if state:
        tensor.__dict__.update(state)
    return tensor


def _rebuild_meta(dtype, size, stride, requires_grad):
    return _C.empty_strided(size, stride, dtype=dtype, device="meta").requires_grad_(requires_grad)


def _rebuild_sparse(indices, values, size, coalesced, requires_grad):
    result = _C._sparse_coo_tensor(indices, values, list(size), coalesced)
    return result.requires_grad_(True) if requires_grad else result


def _sparse_parts(tensor):
    return tensor._indices(), tensor._values().detach(), tuple(tensor.shape), tensor.is_coalesced()


def _tensor_reduce_ex(self, protocol):
    if self.is_sparse:
        return _rebuild_sparse, (*_sparse_parts(self), self.requires_grad)
    if self.is_meta:
        return _rebuild_meta, (self.dtype, tuple(self.shape), self.stride(), self.requires_grad)
    if self.device.type != "cpu":
        raise RuntimeError(f"pickle: only CPU tensors pickle, got one on {self.device}")
    state = dict(getattr(self, "__dict__", None) or {})
    return _rebuild_tensor, (_Storage.of(self), self.dtype, self.storage_offset(), tuple(self.shape), self.stride(),
                             self.requires_grad, type(self), state)


def _tensor_deepcopy(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                           "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
                           "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    if self.is_sparse:
        result = _rebuild_sparse(*copy.deepcopy(_sparse_parts(self), memo), self.requires_grad)
    elif self.is_meta:
        result = _rebuild_meta(self.dtype, tuple(self.shape), self.stride(), self.requires_grad)
    else:
        storage = _Storage.of(self)
        memo.setdefault(id(memo), []).append(storage)  # kept alive for the copy, so its id stays its own
        if id(storage) not in memo:
            memo[id(storage)] = storage.data.clone()
        result = _view(memo[id(storage)], self.dtype, self.storage_offset(), tuple(self.shape), self.stride())
        if type(self) is not Tensor:
            result = result.as_subclass(type(self))
        result.requires_grad_(self.requires_grad)
    memo[id(self)] = result
    if self.grad is not None:
        result.grad = copy.deepcopy(self.grad, memo)
    state = getattr(self, "__dict__", None)
    if state:
        result.__dict__.update(copy.deepcopy(state, memo))
    return result


Tensor.__reduce_ex__ = _tensor_reduce_ex
Tensor.__deepcopy__ = _tensor_deepcopy
_C.device.__reduce__ = lambda self: (_C.device, (str(self),))
_C.Generator.__reduce__ = lambda self: (_C.Generator, (), self.get_state())
_C.Generator.__setstate__ = lambda self, state: self.set_state(state)

"""Storages: the bytes behind tensors, as PyTorch shows them (torch.UntypedStorage, and the
deprecated TypedStorage that Tensor.storage() returns). Every view of a tensor shares its storage.

A storage is shown through a uint8 tensor over all of its bytes, so reading, writing, filling and
copying it are tensor ops."""

import warnings

import tensorplay
from tensorplay import _C

__all__ = ["UntypedStorage", "TypedStorage"]


_warned = set()


def _warn_typed_storage():
    """Once per process, as PyTorch warns."""
    if "typed_storage" in _warned:
        return
    _warned.add("typed_storage")
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=3)


class UntypedStorage:
    """The bytes behind one or more tensors: UntypedStorage(size) (zeroed here; uninitialised in
    PyTorch), UntypedStorage(sequence of byte values), or a tensor's untyped_storage()."""

    def __init__(self, *args, device=None):
        if len(args) == 1 and isinstance(args[0], _C.Tensor) and args[0].dtype == _C.uint8:
            self._bytes = args[0]  # (internal) the byte view of an existing storage
            return
        if len(args) > 1:
            raise TypeError(f"UntypedStorage(): expected a size or a sequence of bytes, got {len(args)} arguments")
        data = args[0] if args else 0
        if isinstance(data, int):
            if data < 0:
                raise RuntimeError(f"UntypedStorage(): size must be non-negative, got {data}")
            self._bytes = tensorplay.zeros(data, dtype=tensorplay.uint8, device=device)
        else:
            self._bytes = tensorplay.tensor(list(data), dtype=tensorplay.uint8, device=device)

    @classmethod
    def _of(cls, tensor):
        return cls(tensor._storage_bytes())

    # ---- what it is ----
    def nbytes(self):
        return self._bytes.numel()

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._bytes.data_ptr()

    @property
    def device(self):
        return self._bytes.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_sparse(self):
        return False

    def is_shared(self):
        return self._bytes.is_shared()

    def share_memory_(self):
        """Moves the storage (and every tensor viewing it) into memory shared between processes."""
        self._bytes.share_memory_()
        return self

    def type(self):
        return "torch.storage.UntypedStorage"

    # ---- values ----
    def __getitem__(self, index):
        if isinstance(index, slice):
            return UntypedStorage(self._bytes[index])
        if not isinstance(index, int):
            raise TypeError(f"can't index a UntypedStorage with {type(index).__name__}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} out of range for storage of size {len(self)}")
        return int(self._bytes[index])

    def __setitem__(self, index, value):
        self._bytes[index] = value

    def tolist(self):
        return self._bytes.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._bytes.fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        if len(source) != len(self):
            raise RuntimeError(f"copy_: storages of sizes {len(source)} and {len(self)} differ")
        self._bytes.copy_(source._bytes)
        return self

    def clone(self):
        return UntypedStorage(self._bytes.clone())

    def cpu(self):
        return self if self.device.type == "cpu" else UntypedStorage(self._bytes.cpu())

    def untyped(self):
        return self

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist()) or " "
        return f"{body}\n[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"


class TypedStorage:
    """A storage with a dtype (deprecated in PyTorch, which warns on each use): what
    Tensor.storage() returns. Its size and items count elements of the dtype."""

    def __init__(self, untyped, dtype):
        self._untyped_storage = untyped
        self.dtype = dtype

    def _elements(self):
        """The storage's bytes as elements of its dtype (a 1-d tensor)."""
        elements = tensorplay.empty(0, dtype=self.dtype, device=self.device)
        return elements._set(self._untyped_storage._bytes, 0, [self.size()], [1])

    def untyped(self):
        return self._untyped_storage

    def element_size(self):
        return tensorplay.empty(0, dtype=self.dtype).element_size()

    def size(self):
        return len(self._untyped_storage) // self.element_size()

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self.size() * self.element_size()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return self._untyped_storage.device

    def __getitem__(self, index):
        return self._elements()[index].item()

    def __setitem__(self, index, value):
        self._elements()[index] = value

    def tolist(self):
        return self._elements().tolist()

    def fill_(self, value):
        self._elements().fill_(value)
        return self

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist()) or " "
        dtype = str(self.dtype).replace("tensorplay.", "torch.")
        return f"{body}\n[torch.storage.TypedStorage(dtype={dtype}, device={self.device}) of size {len(self)}]"


# ---- the Tensor methods on storages ----

def _untyped_storage(self):
    return UntypedStorage._of(self)


def _storage(self):
    _warn_typed_storage()
    return TypedStorage(UntypedStorage._of(self), self.dtype)


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return list(reversed(strides))


def _set(self, source=None, storage_offset=0, size=None, stride=None):
    """Makes this tensor a window onto source's memory: a tensor's (its geometry too), or a
    storage's (as 1-d, or with the size and stride given); with no source, an empty storage."""
    if self.requires_grad and self.grad_fn is None and _C.is_grad_enabled():
        raise RuntimeError("set_: a leaf Variable that requires grad is being used in an in-place operation.")
    if source is None:
        return self._set(tensorplay.empty(0, dtype=self.dtype, device=self.device), 0, [0], [1])
    if isinstance(source, _C.Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(f"set_: Could not set tensor of type {str(self.dtype)[11:]} to a tensor of type "
                               f"{str(source.dtype)[11:]}")
        return self._set(source, source.storage_offset(), list(source.shape), list(source.stride()))
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"set_: Expected a storage of type {str(self.dtype)[11:]}, but got "
                               f"{str(source.dtype)[11:]}")
        source = source.untyped()
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    if size is None:
        size = [len(source) // self.element_size() - storage_offset]
    size = list(size)
    stride = _contiguous_strides(size) if stride is None else list(stride)
    return self._set(source._bytes, storage_offset, size, stride)


def _resize(self, *sizes):
    """The deprecated non-inplace resize: a reshaped copy with the same number of elements."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _reshaped(self, sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes)


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _reshaped(self, tuple(tensor.shape))


def _reshaped(self, sizes):
    sizes = tuple(sizes)
    count = 1
    for n in sizes:
        count *= n
    if count != self.numel():
        shown = " x ".join(str(n) for n in sizes)
        raise RuntimeError(f"resize: requested resize to {shown} ({count} elements in total), but the given tensor "
                           f"has a size of {' x '.join(str(n) for n in self.shape)} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(sizes)


_C.Tensor.untyped_storage = _untyped_storage
_C.Tensor.storage = _storage
_C.Tensor.set_ = _set
_C.Tensor.resize = _resize
_C.Tensor.resize_as = _resize_as

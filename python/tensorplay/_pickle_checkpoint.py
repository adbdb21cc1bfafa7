"""PyTorch's checkpoint format, read and written: what torch.save writes since PyTorch 1.6.

A checkpoint is a zip archive (entries stored, not compressed) under one top-level folder::

    <name>/data.pkl      the saved object, pickled (protocol 2); each storage is a persistent id
                         ('storage', <storage type: torch.FloatStorage, ...>, key, location, numel)
    <name>/data/<key>    each storage's bytes
    <name>/byteorder     'little' (or 'big')
    <name>/version, .format_version, .storage_alignment, .data/serialization_id

Tensors are rebuilt by torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
backward_hooks) over their storage, so views saved together share memory again when loaded. The
format before 1.6 (pickles in a row, then the storages' bytes) is read too (load_legacy_checkpoint).

Writing, tensorplay names PyTorch's globals (torch._utils._rebuild_tensor_v2, torch.FloatStorage, ...)
without importing torch: its pickler writes those GLOBAL opcodes itself. So torch.load, with its
default weights_only=True, reads what tensorplay.save writes, and tensorplay.load reads it back.

weights_only=True (the default, as in PyTorch 2.6+) unpickles through an allow-list: the globals a
checkpoint of tensors, parameters, state dicts and primitive containers needs, and those the user
allows (add_safe_globals, safe_globals). Any other global raises pickle.UnpicklingError naming it
before anything runs: find_class is the only way a pickle reaches code, and it refuses. With
weights_only=False the pickle may name any global, which runs whatever the file says: only for
files one trusts, as PyTorch warns.
"""

import _compat_pickle
import collections
import contextlib
import hashlib
import io
import pickle
import struct
import threading
import zipfile
import zlib

import ml_dtypes
import numpy as np

from tensorplay import _C
from tensorplay._composites.sparse_coo import sparse_coo_tensor
from tensorplay._composites import tensor_api as _tensor_api
from tensorplay._tensor import from_numpy
from tensorplay.storage import TypedStorage, UntypedStorage
from tensorplay._C import Tensor

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

# PyTorch's legacy storage types, by the dtype of their elements.
_STORAGE_DTYPES = {
    "FloatStorage": (_C.float32, np.float32), "DoubleStorage": (_C.float64, np.float64),
    "HalfStorage": (_C.float16, np.float16), "BFloat16Storage": (_C.bfloat16, ml_dtypes.bfloat16),
    "LongStorage": (_C.int64, np.int64), "IntStorage": (_C.int32, np.int32), "ShortStorage": (_C.int16, np.int16),
    "CharStorage": (_C.int8, np.int8), "ByteStorage": (_C.uint8, np.uint8), "BoolStorage": (_C.bool, np.bool_),
    "ComplexFloatStorage": (_C.complex64, np.complex64), "ComplexDoubleStorage": (_C.complex128, np.complex128),
}

# How a zip archive, and so a PyTorch checkpoint, starts.
ZIP_MAGIC = b"PK\x03\x04"


# ---- the allow-list ----

_user_globals = []  # add_safe_globals: process-wide, as in PyTorch
_scoped = threading.local()  # safe_globals(...): this thread, for the block


def add_safe_globals(safe_globals):
    """Allows the given classes and functions (or (object, "module.name") pairs) in weights_only loads."""
    for entry in safe_globals:
        _user_globals.append(entry)


def clear_safe_globals():
    """Forgets every global add_safe_globals allowed."""
    _user_globals.clear()


def get_safe_globals():
    """The globals add_safe_globals allowed, in the order they were added."""
    return list(_user_globals)


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Allows the given globals in weights_only loads for the block (in this thread)."""
    previous = getattr(_scoped, "entries", [])
    _scoped.entries = previous + list(safe_globals)
    try:
        yield
    finally:
        _scoped.entries = previous


def _allowed_by_user(module, name):
    for entry in _user_globals + getattr(_scoped, "entries", []):
        obj, qualified = entry if isinstance(entry, tuple) else (entry, None)
        if qualified is None:
            qualified = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', ''))}"
        if qualified == f"{module}.{name}":
            return obj
    return None


# ---- rebuilding PyTorch's objects as tensorplay's ----

class _StorageType:
    """A legacy storage type (torch.FloatStorage, ...), as the persistent ids name them."""

    def __init__(self, name):
        self.name = name
        self.dtype, self.numpy_dtype = _STORAGE_DTYPES[name]


class _Storage(TypedStorage):
    """A storage read from the archive, a TypedStorage as PyTorch loads one: its elements, a 1-D NumPy
    array that the storage's tensors view, and where it was saved."""

    def __init__(self, array, dtype, location):
        self.array, self.location = array, location
        self.elements = from_numpy(array) if array.size else _C.empty(0, dtype=dtype)
        super().__init__(UntypedStorage._of(self.elements), dtype)

    def cpu(self):  # map_location=lambda storage, location: storage.cpu()
        return self


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    _check_window(storage, storage_offset, size, stride)
    tensor = storage.elements.as_strided(tuple(size), tuple(stride), storage_offset)
    return tensor.requires_grad_(bool(requires_grad)) if requires_grad else tensor


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _check_window(storage, offset, size, stride):
    """A corrupt checkpoint must not make a view past its storage's end."""
    if not all(isinstance(v, int) for v in (offset, *size, *stride)) or offset < 0 or len(size) != len(stride) \
            or any(v < 0 for v in (*size, *stride)):
        raise pickle.UnpicklingError(f"load: a tensor of size {tuple(size)}, stride {tuple(stride)} and offset "
                                     f"{offset} is not a valid view")
    if 0 not in size:
        end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if end > storage.array.size:
            raise pickle.UnpicklingError(f"load: a tensor of size {tuple(size)} and stride {tuple(stride)} at offset "
                                         f"{offset} reaches element {end - 1} of a storage of {storage.array.size}")


def _layout_named(name):
    layout = getattr(_tensor_api, name.removeprefix("torch."), None) if name.startswith("torch.") else None
    if not isinstance(layout, _tensor_api.layout):
        raise pickle.UnpicklingError(f"load: {name!r} names no layout")
    return layout


def _rebuild_sparse_tensor(layout, data):
    """A sparse COO tensor from its parts (indices, values, size and, in files of PyTorch 2.1 on,
    is_coalesced), checked as every sparse tensor is: a corrupt file's indices raise."""
    if layout is not _tensor_api.sparse_coo:
        raise pickle.UnpicklingError(f"load: a {layout} tensor; tensorplay has only the sparse COO layout")
    indices, values, size, *coalesced = data
    return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced[0] if coalesced else None)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from tensorplay.nn import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    parameter = _rebuild_parameter(data, requires_grad, backward_hooks)
    for key, value in (state or {}).items():
        setattr(parameter, key, value)
    return parameter


def _device(spec):
    return _C.device(spec)


def _size(*args):
    from tensorplay._size import Size
    return Size(*args)


# What a checkpoint of weights names, and what it becomes here.
_TORCH_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch.serialization", "_get_layout"): _layout_named,
    ("torch", "device"): _device,
    ("torch", "Size"): _size,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("_codecs", "encode"): __import__("codecs").encode,  # how protocol 2 pickles bytes
}
_TORCH_GLOBALS.update({("torch", name): _StorageType(name) for name in _STORAGE_DTYPES})
_TORCH_GLOBALS.update({("torch", str(dtype).split(".")[-1]): dtype for dtype, _ in _STORAGE_DTYPES.values()})


class _Unpickler(pickle._Unpickler):
    """Unpickles data.pkl: PyTorch's globals become tensorplay's, storages come from the archive.

    Built on Python's pure-Python unpickler, as PyTorch's weights-only loader is: the C one sizes its
    memo table from the indices a file names, so a corrupt LONG_BINPUT index asks for gigabytes. A
    checkpoint's pickle is small (its tensors' bytes are separate records), so the speed is no matter."""

    def __init__(self, file, storages, weights_only):
        super().__init__(file)
        self._storages = storages
        self._weights_only = weights_only

    def find_class(self, module, name):
        # Protocol 2 names Python 3's builtins by their Python 2 names (__builtin__.set): as Python's
        # own find_class does, they are mapped back first.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[module, name]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (module, name) in _TORCH_GLOBALS:
            return _TORCH_GLOBALS[module, name]
        if self._weights_only:
            allowed = _allowed_by_user(module, name)
            if allowed is not None:
                return allowed
            raise pickle.UnpicklingError(
                f"Weights only load failed. This file can still be loaded; to do so you have two options: (1) rerun "
                f"tensorplay.load with weights_only=False, which can run arbitrary code: do it only if you trust "
                f"the file's source; (2) allow the global it names: Unsupported global: GLOBAL {module}.{name} was "
                f"not an allowed global by default. Please use tensorplay.serialization.add_safe_globals([{name}]) "
                f"or the tensorplay.serialization.safe_globals([{name}]) context manager to allowlist this global "
                f"if you trust this class/function.")
        if module.split(".")[0] == "torch":
            raise pickle.UnpicklingError(f"load: the checkpoint names torch's {module}.{name}, which tensorplay "
                                         "does not have")
        return super().find_class(module, name)

    def persistent_load(self, saved_id):
        # (the legacy format adds a sixth field: a view of another storage, which PyTorch stopped writing in 0.4)
        legacy_view = isinstance(saved_id, tuple) and len(saved_id) == 6 and saved_id[5] is None
        if not isinstance(saved_id, tuple) or not (len(saved_id) == 5 or legacy_view) or saved_id[0] != "storage":
            raise pickle.UnpicklingError(f"load: unknown persistent id {saved_id!r}")
        _, storage_type, key, location, numel = saved_id[:5]
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"load: unsupported storage type {storage_type!r}")
        return self._storages(storage_type, str(key), str(location), numel)


def _unpickle(unpickler, what):
    """unpickler.load(), with any error but load's own (a corrupt pickle can raise anything) reported
    as the checkpoint's UnpicklingError."""
    try:
        return unpickler.load()
    except Exception as e:
        if _is_load_error(e) or isinstance(e, MemoryError):  # (running out of memory is no corrupt file)
            raise
        raise pickle.UnpicklingError(f"load: the checkpoint's {what} is corrupt: {type(e).__name__}: {e}") from None


def _is_load_error(e):
    """Whether e is one of the errors load raises itself (the rest come from a corrupt file)."""
    return type(e) in (RuntimeError, pickle.UnpicklingError) and str(e).startswith(
        ("load:", "Weights only load failed", "Attempting to deserialize"))


# ---- the archive ----

# What zipfile raises on a corrupt archive: each becomes load's RuntimeError.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError, OverflowError,
               NotImplementedError, zlib.error, struct.error, UnicodeDecodeError)


def load_zip_checkpoint(f, map_location=None, weights_only=True, mmap_path=None):
    """The object in the PyTorch checkpoint f (a binary file object positioned at the archive's start)."""
    try:
        return _load_zip(f, map_location, weights_only, mmap_path)
    except _ZIP_ERRORS as e:  # (NotImplementedError, among them, is a RuntimeError)
        if _is_load_error(e):
            raise
        raise RuntimeError(f"load: not a valid checkpoint archive: {type(e).__name__}: {e}") from None


def _load_zip(f, map_location, weights_only, mmap_path):
    archive = zipfile.ZipFile(f)
    with archive:
        pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
        if len(pickles) != 1:
            raise RuntimeError(f"load: the archive has {len(pickles)} data.pkl records where a checkpoint has one")
        prefix = pickles[0][:-len("data.pkl")]
        names = set(archive.namelist())
        byteorder = archive.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else "little"
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"load: unknown byte order {byteorder!r}")
        loaded = {}

        def storage(storage_type, key, location, numel):
            if key not in loaded:
                record = prefix + "data/" + key
                if record not in names:
                    raise RuntimeError(f"load: the checkpoint's storage {key} is missing from the archive")
                array = _read_storage(archive, record, storage_type, byteorder, mmap_path)
                if not isinstance(numel, int) or array.size != numel:
                    raise RuntimeError(f"load: storage {key} holds {array.size} elements of "
                                       f"{storage_type.name}, the checkpoint says {numel}")
                loaded[key] = _placed(_Storage(array, storage_type.dtype, location), map_location)
            return _checked_type(loaded[key], storage_type, key)

        data = archive.read(pickles[0])
        return _unpickle(_Unpickler(io.BytesIO(data), storage, weights_only), "data.pkl")


def _checked_type(storage, storage_type, key):
    """storage, named again as storage_type: PyTorch never saves one storage as two types."""
    if storage.dtype != storage_type.dtype:
        raise RuntimeError(f"load: storage {key} is named as {storage_type.name} and as a storage of {storage.dtype}")
    return storage


def _read_storage(archive, record, storage_type, byteorder, mmap_path):
    info = archive.getinfo(record)
    itemsize = np.dtype(storage_type.numpy_dtype).itemsize
    if info.file_size % itemsize:
        raise RuntimeError(f"load: {record} holds {info.file_size} bytes, not a whole number of "
                           f"{storage_type.name} elements")
    _check_record_size(archive, info)
    dtype = np.dtype(storage_type.numpy_dtype)
    if byteorder == "big":
        dtype = dtype.newbyteorder(">")
    if mmap_path is not None and info.compress_type == zipfile.ZIP_STORED and byteorder == "little":
        array = np.memmap(mmap_path, dtype=dtype, mode="c", offset=_data_offset(archive, info),
                          shape=(info.file_size // itemsize,)) if info.file_size else np.empty(0, dtype)
    elif info.compress_type == zipfile.ZIP_STORED:
        # Read where the record lies, straight into the array: one copy, and no checksum (PyTorch's
        # reader computes none either; CRC-32 would take longer than the read). data.pkl is checked.
        array = np.empty(info.file_size // itemsize, dtype=dtype)
        archive.fp.seek(_data_offset(archive, info))
        if archive.fp.readinto(array.view(np.uint8)) != info.file_size:
            raise RuntimeError(f"load: {record} is truncated")
    else:
        array = np.frombuffer(bytearray(archive.read(record)), dtype=dtype)
    return array.astype(dtype.newbyteorder("=")) if byteorder == "big" else array


# Deflate expands its input at most about 1032 times.
_MAX_DEFLATE_RATIO = 1032


def _check_record_size(archive, info):
    """A record's size, as the archive's directory gives it, must fit in the file (or, compressed,
    be what its compressed bytes can expand to) before memory is allocated for it."""
    archive_size = archive.fp.seek(0, io.SEEK_END)
    if info.compress_type == zipfile.ZIP_STORED:
        fits = _data_offset(archive, info) + info.file_size <= archive_size
    else:
        fits = info.compress_size <= archive_size and info.file_size <= _MAX_DEFLATE_RATIO * info.compress_size
    if not fits:
        raise RuntimeError(f"load: {info.filename} claims {info.file_size} bytes, more than the archive of "
                           f"{archive_size} bytes holds")


def _data_offset(archive, info):
    """Where a stored record's bytes start in the file: after its local header and that header's name
    and extra field (whose lengths the local header gives, and may differ from the central directory's)."""
    archive.fp.seek(info.header_offset + 26)
    name_length, extra_length = np.frombuffer(archive.fp.read(4), dtype="<u2")
    return info.header_offset + 30 + int(name_length) + int(extra_length)


def _placed(storage, map_location):
    """storage on the device map_location says (PyTorch's forms: None, a device or string, a dict from
    saved to wanted locations, or a function of (storage, location) whose None result means "as saved")."""
    if callable(map_location):
        placed = map_location(storage, storage.location)
        if placed is None:
            return _placed(storage, None)
        if not isinstance(placed, _Storage):
            raise RuntimeError(f"load: map_location returned {type(placed).__name__}, not the storage it was given")
        return placed
    location = storage.location
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif map_location is not None:
        location = map_location if isinstance(map_location, str) else str(_C.device(map_location))
    check_location(location)
    storage.location = location
    return storage


def check_location(location):
    device = _C.device(location)
    if device.type != "cpu":
        raise RuntimeError(f"Attempting to deserialize object on a {device.type.upper()} device but "
                           f"tensorplay.{device.type}.is_available() is False. If you are running on a CPU-only "
                           "machine, please use tensorplay.load with map_location=tensorplay.device('cpu') to map "
                           "your storages to the CPU.")


# ---- the legacy format (before PyTorch 1.6) ----

# The first pickle of a legacy checkpoint.
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def load_legacy_checkpoint(f, map_location=None, weights_only=True):
    """The object in a checkpoint of PyTorch's format before 1.6: pickles of a magic number, the
    protocol version (1001) and the system's byte order and type sizes; the object, its storages as
    persistent ids; the list of the storages' keys; then each storage's bytes in that order, after
    their element count (8 bytes, little-endian)."""
    def header():
        try:
            return _Unpickler(f, None, True).load()
        except Exception as e:
            raise RuntimeError(f"load: not a valid checkpoint: {type(e).__name__}: {e}") from None

    if header() != _LEGACY_MAGIC:
        raise RuntimeError("load: the file is a pickle, not a PyTorch checkpoint (its magic number is missing)")
    if header() != 1001:
        raise RuntimeError("load: unsupported legacy checkpoint protocol version")
    info = header()
    if not isinstance(info, dict) or not info.get("little_endian", False):
        raise RuntimeError("load: only little-endian legacy checkpoints are supported")
    remaining = _remaining_bytes(f)
    storages = {}

    def storage(storage_type, key, location, numel):
        if key not in storages:
            itemsize = np.dtype(storage_type.numpy_dtype).itemsize
            if not isinstance(numel, int) or numel < 0 or (remaining is not None and numel * itemsize > remaining):
                raise RuntimeError(f"load: storage {key} claims {numel} elements, more than the file holds")
            array = np.empty(numel, dtype=storage_type.numpy_dtype)
            storages[key] = _placed(_Storage(array, storage_type.dtype, location), map_location)
        return _checked_type(storages[key], storage_type, key)

    result = _unpickle(_Unpickler(f, storage, weights_only), "pickle")
    keys = _unpickle(_Unpickler(f, None, True), "list of storages")
    if not isinstance(keys, list) or set(keys) != set(storages):
        raise RuntimeError("load: the checkpoint's list of storages does not match the storages its object uses")
    for key in keys:  # the bytes follow in the list's order, into the arrays the tensors view already
        array = storages[key].array
        count = f.read(8)
        if len(count) != 8 or int.from_bytes(count, "little") != array.size:
            raise RuntimeError(f"load: storage {key}'s element count is missing or wrong")
        raw = f.read(array.nbytes)
        if len(raw) != array.nbytes:
            raise RuntimeError(f"load: storage {key} is truncated")
        array.view(np.uint8)[:] = np.frombuffer(raw, dtype=np.uint8)
    return result


def _remaining_bytes(f):
    try:
        here = f.tell()
        end = f.seek(0, 2)
        f.seek(here)
        return end - here
    except (AttributeError, OSError, ValueError):
        return None


# ---- writing ----

class _TorchGlobal:
    """A global of PyTorch's, named in the pickle (GLOBAL module name) without importing it."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # the pickler takes only callables as a reduction's function
        raise TypeError(f"{self.module}.{self.name} is PyTorch's, named in a pickle; it is not called here")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_REBUILD_SPARSE = _TorchGlobal("torch._utils", "_rebuild_sparse_tensor")
_STORAGE_NAMES = {dtype: name for name, (dtype, _) in _STORAGE_DTYPES.items()}


class _StorageRef:
    """A tensor's storage in the pickle: a persistent id, its bytes a record of their own."""

    def __init__(self, key, dtype, data):
        self.key, self.dtype, self.data = key, dtype, data


class _Pickler(pickle._Pickler):  # the Python pickler: its dispatch table takes the GLOBALs written here
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # (address, bytes, dtype) -> _StorageRef

    def _write_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_TorchGlobal] = _write_global
    dispatch[_C.dtype] = lambda self, dtype: self._write_global(_TorchGlobal("torch", str(dtype).split(".")[-1]))

    def persistent_id(self, obj):
        if not isinstance(obj, _StorageRef):
            return None
        itemsize = obj.dtype.itemsize
        return ("storage", _TorchGlobal("torch", _STORAGE_NAMES[obj.dtype]), obj.key, "cpu", len(obj.data) // itemsize)

    def reducer_override(self, obj):
        from tensorplay._size import Size
        from tensorplay.nn import Parameter
        if isinstance(obj, Parameter):
            return _REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Tensor) and obj.is_sparse:
            return _REBUILD_SPARSE, (obj.layout, (obj._indices(), obj._values().detach(), Size(obj.shape),
                                                  obj.is_coalesced()))
        if isinstance(obj, Tensor):
            return _REBUILD_TENSOR, (self._storage(obj), obj.storage_offset(), tuple(obj.shape), obj.stride(),
                                     obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Size):
            return _TorchGlobal("torch", "Size"), (tuple(obj),)
        if isinstance(obj, _tensor_api.layout):  # by name, as PyTorch writes one
            return _TorchGlobal("torch.serialization", "_get_layout"), (f"torch.{obj._name}",)
        if isinstance(obj, _C.device):
            return _TorchGlobal("torch", "device"), (str(obj),)
        return NotImplemented

    def _storage(self, tensor):
        if tensor.is_meta or tensor.device.type != "cpu":
            raise RuntimeError(f"save: only CPU tensors are saved, got one on {tensor.device}")
        if tensor.dtype not in _STORAGE_NAMES:
            raise RuntimeError(f"save: tensors of {tensor.dtype} cannot be saved in PyTorch's format")
        whole = tensor.detach()._storage_bytes()
        key = (whole.data_ptr(), whole.numel(), tensor.dtype)
        if key not in self.storages:
            if whole.numel() % tensor.dtype.itemsize:
                raise RuntimeError(f"save: a storage of {whole.numel()} bytes holds no whole number of "
                                   f"{tensor.dtype} elements")
            self.storages[key] = _StorageRef(str(len(self.storages)), tensor.dtype, whole.numpy().tobytes())
        return self.storages[key]


def save_zip_checkpoint(obj, f, pickle_protocol=2):
    """Writes obj to the binary file object f as torch.save does: the zip archive above, its records
    stored, each storage's bytes 64-byte aligned in the file (as torch.load(mmap=True) maps them)."""
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
        def record(name, payload, aligned=False):
            info = zipfile.ZipInfo("archive/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            if aligned:  # pad the local header's extra field so that the data starts at a multiple of 64
                start = f.tell() + 30 + len(info.filename.encode())
                padding = (-(start + 4)) % 64
                info.extra = b"FB" + padding.to_bytes(2, "little") + b"Z" * padding
            archive.writestr(info, payload)

        record("data.pkl", data.getvalue())
        record(".format_version", b"1")
        record(".storage_alignment", b"64")
        record("byteorder", b"little")
        for storage in pickler.storages.values():
            record("data/" + storage.key, storage.data, aligned=True)
        record("version", b"3\n")
        # 40 digits, as torch's: here a digest of the pickle, so equal objects make equal files.
        digest = int.from_bytes(hashlib.sha1(data.getvalue()).digest(), "big") % 10 ** 40
        record(".data/serialization_id", f"{digest:040d}".encode())

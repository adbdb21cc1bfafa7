"""tensorplay.save / tensorplay.load: PyTorch's checkpoint format (_pickle_checkpoint.py), which save
writes and load reads, and the safetensors layout, which save_file writes and load and load_file read.

A safetensors file is::

    8 bytes   N, the header length, as a little-endian unsigned 64-bit integer
    N bytes   the header: a UTF-8 JSON object, padded with spaces to a multiple of 8 bytes
    the rest  the data section: the raw little-endian bytes of every tensor, back to back

The header maps each tensor's name to ``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin,
end]}``, offsets relative to the start of the data section. Together the tensors cover the data
section exactly, with no gaps or overlaps. The optional ``"__metadata__"`` entry is a dict of str ->
str; ``save_file`` stores the saved Python object there under ``"tensorplay.structure"`` as a JSON
string: a tree of tagged nodes (dict, OrderedDict, list, tuple, None, bool, int, float, str, and
tensors referenced by name). Floats are stored with float.hex, so every value survives exactly.

When the saved object is a flat dict of str -> tensor (a state dict), the tensor names are the
keys, so other safetensors readers see an ordinary state dict. A file with no structure entry, such
as one written by the ``safetensors`` library, loads as a dict of name -> tensor.

Loading a safetensors file runs no code (no pickle). It treats the file as untrusted: every size and offset is
checked against the file before anything is allocated, and any malformed input raises ValueError.
"""

import collections
import io
import json
import os
import pickle
import struct
import sys
import uuid

import ml_dtypes
import numpy as np

from tensorplay import _C, _pickle_checkpoint
from tensorplay._C import Tensor
from tensorplay._pickle_checkpoint import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from tensorplay._tensor import from_numpy

__all__ = ["save", "load", "save_file", "load_file", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals"]

# safetensors refuses headers over 100 MB; so do we, before reading one.
_MAX_HEADER_BYTES = 100 * 1000 * 1000
# numpy's limit on dimensions; a corrupted shape must not build something numpy rejects later.
_MAX_NDIM = 64
# numpy and tensorplay index bytes with int64, even for tensors with a zero dim.
_MAX_NBYTES = 2**63 - 1
# Containers nested deeper than this are refused on save and on load, which also keeps the
# recursive encoder/decoder (and json) far from Python's recursion limit.
_MAX_DEPTH = 100
# Reads happen in chunks, so a lying size in a stream we can't measure costs at most one chunk.
_READ_CHUNK = 16 * 1024 * 1024

_STRUCTURE_KEY = "tensorplay.structure"
_STRUCTURE_VERSION = 1

# tensorplay dtype <-> safetensors dtype code <-> numpy dtype of the same bytes.
_DTYPES = [
    (_C.float32, "F32", np.dtype(np.float32)),
    (_C.float64, "F64", np.dtype(np.float64)),
    (_C.float16, "F16", np.dtype(np.float16)),
    (_C.bfloat16, "BF16", np.dtype(ml_dtypes.bfloat16)),
    (_C.int8, "I8", np.dtype(np.int8)),
    (_C.int16, "I16", np.dtype(np.int16)),
    (_C.int32, "I32", np.dtype(np.int32)),
    (_C.int64, "I64", np.dtype(np.int64)),
    (_C.uint8, "U8", np.dtype(np.uint8)),
    (_C.bool, "BOOL", np.dtype(np.bool_)),
]
_CODE_OF_DTYPE = {dtype: code for dtype, code, _ in _DTYPES}
_NUMPY_OF_CODE = {code: np_dtype for _, code, np_dtype in _DTYPES}


# ---------------------------------------------------------------- save

def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj to f (a path or a binary file object opened for writing) in PyTorch's checkpoint
    format, which torch.load reads with its default weights_only=True when obj holds tensors,
    parameters and primitive containers (and with weights_only=False anything picklable).

    A path is written through a temporary file in the same directory that is renamed into place,
    so the path holds either the previous file or the complete new one, never a partial one.
    save_file writes the safetensors layout instead.
    """
    if pickle_module is not pickle:
        raise ValueError("save: tensorplay writes checkpoints with Python's pickle module only")
    if not _use_new_zipfile_serialization:
        raise ValueError("save: tensorplay writes only the zip format (_use_new_zipfile_serialization=True)")
    buffer = io.BytesIO()  # the archive is built whole: zip records are written with their sizes known
    _pickle_checkpoint.save_zip_checkpoint(obj, buffer, pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        _save_atomically(lambda file: file.write(buffer.getbuffer()), os.fspath(f))
    else:
        f.write(buffer.getbuffer())


def save_file(obj, f):
    """Saves obj (a tensor, a state dict, or nested dicts/lists/tuples of tensors and None, bool,
    int, float, str) to f, a path or a binary file object opened for writing, in the safetensors
    layout: no code, only tensors and the structure; load (or load_file) reads it.

    A path is written through a temporary file, as save's is.
    """
    tensors = {}  # name -> tensor, in the order the data section stores them
    root = _encode(obj, (), tensors, depth=0)
    header = _build_header(root, tensors)
    if isinstance(f, (str, os.PathLike)):
        _save_atomically(lambda file: _write_file(file, header, tensors.values()), os.fspath(f))
    else:
        _write_file(f, header, tensors.values())


def _encode(obj, path, tensors, depth):
    """The structure node for obj; tensors found are added to tensors under a name made from
    path, the keys and indices leading to them."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"save: object is nested more than {_MAX_DEPTH} levels deep (or contains itself)")
    if isinstance(obj, Tensor):
        # The dotted path: in a flat state dict, the key itself, which is what other safetensors
        # readers expect; in a nested one, names like "model.layer.weight".
        name = _unique_name(".".join(path) if path else "tensor", tensors)
        tensors[name] = obj
        return {"type": "tensor", "name": name}
    if obj is None:
        return {"type": "none"}
    if isinstance(obj, bool):
        return {"type": "bool", "value": obj}
    if isinstance(obj, int):
        return {"type": "int", "value": int(obj)}
    if isinstance(obj, float):
        return {"type": "float", "value": float(obj).hex()}  # exact, and valid JSON for inf/nan
    if isinstance(obj, str):
        return {"type": "str", "value": str(obj)}
    if type(obj) in (list, tuple):
        items = [_encode(item, path + (str(i),), tensors, depth + 1) for i, item in enumerate(obj)]
        return {"type": type(obj).__name__, "items": items}
    if type(obj) in (dict, collections.OrderedDict):
        items = []
        for key, value in obj.items():
            items.append([_encode_key(key), _encode(value, path + (str(key),), tensors, depth + 1)])
        return {"type": type(obj).__name__, "items": items}
    raise TypeError(f"save: can't save an object of type {type(obj).__name__}; supported are tensors, "
                    "dict, OrderedDict, list, tuple, None, bool, int, float and str")


def _encode_key(key, depth=0):
    """Dict keys are plain values or tuples of them: hashable, and never tensors."""
    if isinstance(key, tuple) and type(key) is tuple:
        if depth > _MAX_DEPTH:
            raise ValueError(f"save: dict key is nested more than {_MAX_DEPTH} levels deep")
        return {"type": "tuple", "items": [_encode_key(k, depth + 1) for k in key]}
    if key is None or isinstance(key, (bool, int, float, str)):
        return _encode(key, (), {}, depth)
    raise TypeError(f"save: can't save a dict key of type {type(key).__name__}; "
                    "supported are None, bool, int, float, str and tuples of them")


def _unique_name(name, taken):
    """name, or name#n if it is taken (keys 1 and "1" have the same path) or reserved."""
    if name not in taken and name != "__metadata__":
        return name
    n = 1
    while f"{name}#{n}" in taken:
        n += 1
    return f"{name}#{n}"


def _build_header(root, tensors):
    """The encoded header; the data section will hold the tensors in the order of tensors."""
    structure = {"version": _STRUCTURE_VERSION, "root": root}
    header = {"__metadata__": {
        "format": "pt",  # what safetensors.torch writes; some readers check it
        _STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"), allow_nan=False),
    }}
    offset = 0
    for name, tensor in tensors.items():
        if tensor.dtype not in _CODE_OF_DTYPE:
            raise TypeError(f"save: unsupported dtype {tensor.dtype}")
        nbytes = tensor.numel() * tensor.dtype.itemsize
        header[name] = {
            "dtype": _CODE_OF_DTYPE[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    encoded = json.dumps(header, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    # Like safetensors, pad with spaces so the data section starts 8-byte aligned.
    return encoded + b" " * (-len(encoded) % 8)


def _to_numpy(tensor):
    """tensor's values as a C-contiguous little-endian array (a view when it already is one)."""
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    array = tensor.contiguous().numpy()
    if not array.flags.c_contiguous:  # contiguous() already made it so; this only guards the write
        array = array.copy(order="C")
    if sys.byteorder == "big":
        array = array.byteswap()
    return array


def _save_atomically(write, path):
    # The temporary file is created with open(), not mkstemp, so it gets the usual permissions.
    # Through a symlink, the file it points to is replaced (as a plain write would), not the link.
    path = os.path.realpath(path)
    directory, base = os.path.split(path)
    tmp = os.path.join(directory, f".{base}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "xb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # the bytes reach the disk before the rename makes them visible
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_file(f, header, tensors):
    f.write(struct.pack("<Q", len(header)))
    f.write(header)
    for tensor in tensors:
        # One tensor at a time, so at most one contiguous copy exists at once.
        _write_array(f, _to_numpy(tensor))


def _write_array(f, array):
    # The uint8 view writes the raw bytes without a copy (reshape(-1) also handles 0-dim arrays).
    f.write(array.reshape(-1).view(np.uint8).data)


# ---------------------------------------------------------------- load

# One tensor's validated header entry.
_Entry = collections.namedtuple("_Entry", "name code shape begin end")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=False, **pickle_load_args):
    """Loads an object from a path or a binary file object: one saved by save (or any safetensors
    file), or a checkpoint PyTorch's torch.save wrote (its zip format: see _pickle_checkpoint.py).

    A PyTorch checkpoint unpickles through an allow-list with weights_only=True (the default): tensors,
    parameters, state dicts and primitive containers, and the globals add_safe_globals allows; anything
    else raises pickle.UnpicklingError naming it, and runs nothing. weights_only=False lets the file
    name any global (and so run any code): only for files you trust. map_location takes PyTorch's forms
    (a device, a string, a dict, a function of (storage, location)); mmap=True maps a checkpoint's
    storages from the file (copy-on-write) instead of reading them.

    safetensors files hold no code; their tensors come back as plain tensors that don't require grad.
    Raises ValueError if such a file is malformed, truncated or inconsistent.
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("load: tensorplay reads checkpoints with Python's pickle module only")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return _load_any(file, map_location, weights_only, os.fspath(f) if mmap else None)
    if mmap and not isinstance(getattr(f, "name", None), (str, bytes)):
        raise ValueError("load: mmap=True needs f to be a path, or a file object opened from one")
    return _load_any(f, map_location, weights_only, f.name if mmap else None)


def load_file(f):
    """Loads a safetensors file (one save_file wrote, or the safetensors package) from a path or a
    binary file object. Raises ValueError if it is malformed, truncated or inconsistent."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return _load_file(file)
    return _load_file(f)


def _load_any(f, map_location, weights_only, mmap_path):
    head = f.read(4)
    pickled = head in (_pickle_checkpoint.ZIP_MAGIC, _LEGACY_START)
    if _remaining_size(f) is not None:
        f.seek(-len(head), os.SEEK_CUR)
    elif pickled:  # a zip archive is read from its end, a legacy one with pickle's reads: the stream is read whole
        f = io.BytesIO(head + f.read())
    else:
        f = _Prepended(head, f)
    if head == _pickle_checkpoint.ZIP_MAGIC:
        return _pickle_checkpoint.load_zip_checkpoint(f, map_location, weights_only, mmap_path)
    if head == _LEGACY_START:
        if mmap_path is not None:
            raise RuntimeError("load: mmap can only be used with files saved with _use_new_zipfile_serialization=True")
        return _pickle_checkpoint.load_legacy_checkpoint(f, map_location, weights_only)
    if map_location is not None and not callable(map_location):
        _pickle_checkpoint.check_location(  # a safetensors file's tensors are CPU tensors
            map_location if isinstance(map_location, str) else str(_C.device(map_location)))
    return _load_file(f)


def _load_file(f):
    remaining = _remaining_size(f)
    header_len = struct.unpack("<Q", _read_exact(f, 8, "the header length"))[0]
    if header_len > _MAX_HEADER_BYTES:
        raise ValueError(f"load: header length {header_len} exceeds the limit of {_MAX_HEADER_BYTES} bytes")
    if remaining is not None and 8 + header_len > remaining:
        raise ValueError(f"load: header length {header_len} is larger than the file ({remaining} bytes)")
    header = _parse_header(_read_exact(f, header_len, "the header"))
    root = _structure_root(header.pop("__metadata__", {}))
    entries = _check_entries(header)

    data_len = entries[-1].end if entries else 0
    if remaining is not None and remaining != 8 + header_len + data_len:
        raise ValueError(f"load: the data section is {remaining - 8 - header_len} bytes, "
                         f"but the header describes {data_len}")
    tensors = {entry.name: _read_tensor(f, entry) for entry in entries}
    if f.read(1):
        raise ValueError("load: the file has bytes after the data section")
    # Header order, not data order, like other safetensors readers.
    tensors = {name: tensors[name] for name in header}
    return tensors if root is None else _restore(root, tensors)


# How a checkpoint of PyTorch's legacy format starts: a protocol 2 pickle of a 10-byte integer, its
# magic number (as a safetensors header length these bytes would be over 176 MB, beyond the limit).
_LEGACY_START = b"\x80\x02\x8a\x0a"


class _Prepended:
    """An unseekable stream with the bytes already read from it put back in front."""

    def __init__(self, head, rest):
        self._head, self._rest = head, rest

    def read(self, n=-1):
        if n is None or n < 0:
            data, self._head = self._head + self._rest.read(), b""
            return data
        data, self._head = self._head[:n], self._head[n:]
        return data + (self._rest.read(n - len(data)) if len(data) < n else b"")


def _remaining_size(f):
    """Bytes left in f from its position, or None if f can't tell (a pipe, a socket)."""
    try:
        start = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(start)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    return end - start


def _read_exact(f, n, what):
    buf = bytearray()
    while len(buf) < n:
        chunk = f.read(min(n - len(buf), _READ_CHUNK))
        if not chunk:
            raise ValueError(f"load: the file is truncated: expected {n} bytes of {what}, got {len(buf)}")
        buf += chunk
    return buf


def _parse_header(raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"load: the header is not valid UTF-8: {e}") from None
    header = _parse_json(text, "the header")
    if not isinstance(header, dict):
        raise ValueError(f"load: the header must be a JSON object, not {type(header).__name__}")
    return header


def _parse_json(text, what):
    def no_duplicates(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                raise ValueError(f"duplicate key {_short(key)}")
            obj[key] = value
        return obj

    def no_constants(name):
        raise ValueError(f"{name} is not allowed")

    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except RecursionError:
        raise ValueError(f"load: {what} is nested too deeply") from None
    except ValueError as e:  # json.JSONDecodeError, and int() of a number with too many digits
        raise ValueError(f"load: {what} is not valid JSON: {e}") from None


def _check_entries(header):
    """The validated entries, in data order; they must tile the data section exactly."""
    entries = sorted((_check_entry(name, info) for name, info in header.items()),
                     key=lambda e: (e.begin, e.end))
    offset = 0
    for entry in entries:
        if entry.begin != offset:
            problem = "overlaps the previous tensor" if entry.begin < offset else "leaves a gap before it"
            raise ValueError(f"load: tensor {_short(entry.name)} starts at offset {entry.begin}, expected {offset}: "
                             f"it {problem}")
        offset = entry.end
    return entries


def _check_entry(name, info):
    if not isinstance(info, dict):
        raise ValueError(f"load: the header entry for {_short(name)} must be an object, not {type(info).__name__}")
    if set(info) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"load: the header entry for {_short(name)} must have exactly the fields dtype, shape and "
                         f"data_offsets, not {sorted(info)}")
    code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(code, str) or code not in _NUMPY_OF_CODE:
        raise ValueError(f"load: tensor {_short(name)} has unknown dtype {_short(code)}")
    if not isinstance(shape, list) or len(shape) > _MAX_NDIM or not all(_is_int(d) and d >= 0 for d in shape):
        raise ValueError(f"load: tensor {_short(name)} has invalid shape {_short(shape)}: expected a list of at most "
                         f"{_MAX_NDIM} non-negative integers")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) for o in offsets)
            and 0 <= offsets[0] <= offsets[1]):
        raise ValueError(f"load: tensor {_short(name)} has invalid data_offsets {_short(offsets)}: expected "
                         "[begin, end] with 0 <= begin <= end")
    itemsize = _NUMPY_OF_CODE[code].itemsize
    # The size ignoring zero dims bounds the strides numpy and tensorplay compute, even when empty.
    extent = itemsize
    for d in shape:
        extent *= max(d, 1)
        if extent > _MAX_NBYTES:
            raise ValueError(f"load: tensor {_short(name)} has shape {_short(shape)}, too large to index")
    nbytes = itemsize * _product(shape)
    if offsets[1] - offsets[0] != nbytes:
        raise ValueError(f"load: tensor {_short(name)} of dtype {code} and shape {shape} needs {nbytes} bytes, "
                         f"but its data_offsets {_short(offsets)} span {offsets[1] - offsets[0]}")
    return _Entry(name, code, tuple(shape), offsets[0], offsets[1])


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _product(dims):
    result = 1
    for d in dims:
        result *= d
    return result


def _short(value):
    """repr(value), cut short: error messages must stay readable for a 100 MB header."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def _read_tensor(f, entry):
    raw = _read_exact(f, entry.end - entry.begin, f"tensor {_short(entry.name)}")
    array = np.frombuffer(raw, dtype=_NUMPY_OF_CODE[entry.code])
    if entry.code == "BOOL" and np.any(array.view(np.uint8) > 1):
        # Any other byte is not a bool; tensorplay's kernels assume 0 or 1.
        raise ValueError(f"load: bool tensor {_short(entry.name)} holds bytes other than 0 and 1")
    if sys.byteorder == "big":
        array = array.byteswap()  # the file is little-endian
    # clone() copies into tensorplay's own memory, so raw can be freed.
    return from_numpy(array.reshape(entry.shape)).clone()


def _structure_root(metadata):
    """The root node of the structure stored in metadata, or None if there is none (as in a file
    written by the safetensors library)."""
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError("load: __metadata__ must be an object mapping strings to strings")
    if _STRUCTURE_KEY not in metadata:
        return None
    structure = _parse_json(metadata[_STRUCTURE_KEY], "the structure")
    if not isinstance(structure, dict) or set(structure) != {"version", "root"}:
        raise ValueError("load: the structure must be an object with the fields version and root")
    if not _is_int(structure["version"]) or structure["version"] != _STRUCTURE_VERSION:
        raise ValueError(f"load: unsupported structure version {_short(structure['version'])}")
    return structure["root"]


def _restore(root, tensors):
    """The saved object: the structure below root, with its tensor references resolved."""
    unused = dict(tensors)
    obj = _decode(root, unused, depth=0)
    if unused:
        raise ValueError(f"load: tensor {_short(next(iter(unused)))} is stored but not part of the structure")
    return obj


# For each node type, the fields it must have besides "type".
_NODE_FIELDS = {
    "tensor": {"name"}, "none": set(), "bool": {"value"}, "int": {"value"}, "float": {"value"},
    "str": {"value"}, "list": {"items"}, "tuple": {"items"}, "dict": {"items"}, "OrderedDict": {"items"},
}


def _decode(node, unused, depth, key=False):
    """The object for a structure node. unused maps the names of tensors not yet referenced to
    their tensor; each tensor must be referenced exactly once. key: node is a dict key."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"load: the structure is nested more than {_MAX_DEPTH} levels deep")
    kind = node.get("type") if isinstance(node, dict) else None
    if not isinstance(kind, str) or kind not in _NODE_FIELDS or set(node) != _NODE_FIELDS[kind] | {"type"}:
        raise ValueError(f"load: malformed structure node {_short(node)}")
    if key and kind not in ("none", "bool", "int", "float", "str", "tuple"):
        raise ValueError(f"load: a dict key can't be a {kind}")
    value = node.get("value")

    if kind == "tensor":
        name = node["name"]
        if not isinstance(name, str) or name not in unused:
            raise ValueError(f"load: the structure references tensor {_short(name)}, which is missing "
                             "(or referenced twice)")
        return unused.pop(name)
    if kind == "none":
        return None
    if kind in ("bool", "int", "str"):
        expected = {"bool": bool, "int": int, "str": str}[kind]
        if type(value) is not expected:
            raise ValueError(f"load: malformed {kind} node {_short(node)}")
        return value
    if kind == "float":
        try:
            return float.fromhex(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"load: malformed float node {_short(node)}") from None

    items = node["items"]
    if not isinstance(items, list):
        raise ValueError(f"load: the items of a {kind} node must be a list")
    if kind in ("list", "tuple"):
        values = [_decode(item, unused, depth + 1, key) for item in items]
        return values if kind == "list" else tuple(values)
    result = {} if kind == "dict" else collections.OrderedDict()
    for pair in items:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(f"load: the items of a {kind} node must be [key, value] pairs")
        k = _decode(pair[0], unused, depth + 1, key=True)
        if k in result:
            raise ValueError(f"load: duplicate dict key {_short(k)} in the structure")
        result[k] = _decode(pair[1], unused, depth + 1)
    return result

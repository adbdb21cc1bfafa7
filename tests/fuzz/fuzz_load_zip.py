"""Mutation fuzzing of tensorplay.load on PyTorch's checkpoint format (a zip archive of data.pkl and
one record per storage): corrupted checkpoints must load into well-formed objects or raise
RuntimeError or pickle.UnpicklingError whose message starts with "load:" (or PyTorch's "Weights
only load failed" refusal, when a mutation names a global outside the allow-list). Nothing else: no
other exception type, no crash, no hang, no large allocation.

    .venv/bin/python tests/fuzz/fuzz_load_zip.py [--cases N] [--seed S]     (or TP_FUZZ_CASES=N)

Each case takes one of a few valid checkpoints written by tensorplay.save, applies one to three
seeded mutations and loads the result from a file object, an unseekable stream or a path. The
mutations: bit flips and byte overwrites anywhere, truncation, appended garbage, forged sizes and
offsets in the zip's local headers and central directory, and archives rebuilt (so that their
checksums hold and the loader gets past the zip layer) with an edited data.pkl (changed integers,
storage keys, storage types and opcodes) or with storage records resized, dropped, renamed or
duplicated. A file that loads is compared with the archive as read here independently: data.pkl
unpickled by a reader of its own, each tensor's bytes taken from its storage record with the
stored offset, size and stride.

The address space is capped at startup, as in fuzz_load.py (whose harness this reuses). Exit status
0 when every case passed; otherwise the first failure is printed with its case number and seed.
"""

import collections
import io
import os
import pickle
import struct
import sys
import warnings
import zipfile

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_load  # noqa: E402  (the harness: the loop, the command line, Stream, generic mutations)
from fuzz_load import Failure  # noqa: E402

import tensorplay as tp  # noqa: E402

# The storage types a checkpoint names, as NumPy dtypes of the same bytes.
STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "BFloat16Storage": ml_dtypes.bfloat16, "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
    "ByteStorage": np.uint8, "BoolStorage": np.bool_,
}


def checkpoints():
    """The valid archives the mutations start from: name -> bytes."""
    rng = np.random.default_rng(0)

    def randn(*shape):
        return tp.tensor(rng.standard_normal(shape).astype(np.float32))

    base = randn(4, 5)
    objects = {
        "tensor": randn(3, 4),
        "state dict": collections.OrderedDict([
            ("w", randn(4, 3)), ("b", randn(4).to(tp.bfloat16)), ("h", randn(2, 2).to(tp.float16)),
            ("d", randn(3).double()), ("i8", tp.arange(-3, 3).to(tp.int8)), ("i16", tp.arange(5).to(tp.int16)),
            ("i32", tp.arange(4).to(tp.int32)), ("steps", tp.tensor(7)), ("u8", tp.arange(6).to(tp.uint8)),
            ("mask", tp.arange(5) > 2), ("empty", tp.zeros(0, 3)), ("c", tp.complex(randn(2), randn(2)))]),
        "views": {"base": base, "row": base[1], "column": base[:, 2], "transposed": base.t(),
                  "parameter": tp.nn.Parameter(randn(2, 2))},
        "nested": {"model": {"fc.weight": randn(2, 3), "fc.bias": tp.zeros(2)}, "step": 12, "lr": 0.125,
                   "betas": (0.9, 0.999), "history": [None, True, "x", [tp.ones(1, dtype=tp.int64)]],
                   3: collections.OrderedDict([("k", -1.5)]), (1, "a"): "tuple key", "dtype": tp.bfloat16},
    }
    files = {}
    for name, obj in objects.items():
        buffer = io.BytesIO()
        tp.save(obj, buffer)
        files[name] = buffer.getvalue()
    return files


# ---------------------------------------------------------------- mutations

def records(data):
    """The archive's members in order: [(name, bytes)]."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def rebuild(members):
    """A well-formed archive (valid checksums) of the given members, stored uncompressed."""
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicated names are a mutation here
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
            for name, payload in members:
                archive.writestr(zipfile.ZipInfo(name), payload)
    return out.getvalue()


def overwrite_anywhere(data, rng):
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        out[rng.randrange(len(out))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    return bytes(out)


ABSURD_SIZES = [0, 1, 3, 7, 16, 0xFFFF, 0x7FFFFFF0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFE, 0xFFFFFFFF]


def forge_zip_fields(data, rng):
    """An absurd size, offset or name/extra length in a local header, a central directory entry or
    the end-of-central-directory record, where zipfile reads them."""
    signature = rng.choice([b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"])
    positions = [i for i in range(len(data)) if data.startswith(signature, i)]
    if not positions:
        return fuzz_load.flip_bits(data, rng)
    at = rng.choice(positions)
    fields = {  # offset in the record -> field width
        b"PK\x03\x04": {18: 4, 22: 4, 26: 2, 28: 2},  # sizes, name length, extra length
        b"PK\x01\x02": {20: 4, 24: 4, 28: 2, 30: 2, 32: 2, 42: 4},  # sizes, lengths, local header offset
        b"PK\x05\x06": {8: 2, 10: 2, 12: 4, 16: 4, 20: 2},  # entry counts, directory size and offset
    }[signature]
    offset, width = rng.choice(list(fields.items()))
    value = rng.choice(ABSURD_SIZES + [rng.randrange(len(data) + 64)])
    out = bytearray(data)
    if at + offset + width <= len(out):
        out[at + offset:at + offset + width] = (value & (2 ** (8 * width) - 1)).to_bytes(width, "little")
    return bytes(out)


def forge_record_size(data, rng):
    """A storage record's size in the central directory made huge (a whole number of elements), so
    that a loader trusting it would allocate gigabytes."""
    positions = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)
                 and b"/data/" in data[i + 46:i + 46 + struct.unpack("<H", data[i + 28:i + 30])[0]]]
    if not positions:
        return fuzz_load.flip_bits(data, rng)
    at = rng.choice(positions) + rng.choice([20, 24])
    out = bytearray(data)
    out[at:at + 4] = rng.choice([0x7FFFFFF0, 0xFFFFFFF0, 0x40000000]).to_bytes(4, "little")
    return bytes(out)


def edit_pickle(data, rng):
    """data.pkl edited, in an archive rebuilt around it."""
    members = records(data)
    index = next(i for i, (name, _) in enumerate(members) if name.endswith("data.pkl"))
    pkl = bytearray(members[index][1])
    kind = rng.randrange(6)
    if kind == 0:  # a small integer (an offset, a size, a stride, a numel) becomes another or an absurd one
        spots = [i for i in range(len(pkl) - 1) if pkl[i] == ord("K")]
        if spots:
            i = rng.choice(spots)
            replacement = rng.choice([b"K\x00", b"K\x01", b"K\xff", b"J\xff\xff\xff\xff", b"J\xff\xff\xff\x7f",
                                      b"\x8a\x08" + (2**62).to_bytes(8, "little"), b"\x8a\x01\xff", b"N", b"\x88"])
            pkl[i:i + 2] = replacement
    elif kind == 1:  # a storage key names another record, or none
        spots = [i for i in range(len(pkl) - 6) if pkl[i] == ord("X") and pkl[i + 1:i + 5] == b"\x01\x00\x00\x00"
                 and chr(pkl[i + 5]).isdigit()]
        if spots:
            pkl[rng.choice(spots) + 5] = ord(rng.choice("0123456789"))
    elif kind == 2:  # a storage type becomes another, or one that does not exist
        text = bytes(pkl)
        names = [n for n in STORAGE_DTYPES if ("torch\n" + n + "\n").encode() in text]
        if names:
            new = rng.choice(list(STORAGE_DTYPES) + ["QInt8Storage", "UntypedStorage", "Storage", "os"])
            text = text.replace(("torch\n" + rng.choice(names) + "\n").encode(), ("torch\n" + new + "\n").encode(), 1)
            pkl = bytearray(text)
    elif kind == 3:  # a global the allow-list refuses, or one it has never heard of
        text = bytes(pkl)
        new = rng.choice([b"os\nsystem\n", b"builtins\neval\n", b"torch\nload\n", b"torch._utils\n_rebuild_qtensor\n",
                          b"collections\ndefaultdict\n"])
        spots = [i for i in range(len(text)) if text[i] == ord("c")]
        i = rng.choice(spots)
        end = text.index(b"\n", text.index(b"\n", i) + 1) + 1 if text.count(b"\n", i) >= 2 else len(text)
        pkl = bytearray(text[:i + 1] + new + text[end:])
    elif kind == 4:  # opcodes deleted, duplicated or cut short
        i = rng.randrange(len(pkl))
        pkl = rng.choice([pkl[:i] + pkl[i + rng.randint(1, 4):], pkl[:i] + pkl[i:i + 3] + pkl[i:], pkl[:i]])
    else:
        pkl = bytearray(fuzz_load.flip_bits(bytes(pkl), rng))
    members[index] = (members[index][0], bytes(pkl))
    return rebuild(members)


def edit_records(data, rng):
    """A storage record resized, dropped, renamed or duplicated, or data.pkl doubled, in a rebuilt archive."""
    members = records(data)
    storages = [i for i, (name, _) in enumerate(members) if "/data/" in name]
    kind = rng.randrange(6)
    if kind == 0 and storages:
        i = rng.choice(storages)
        payload = members[i][1]
        members[i] = (members[i][0], rng.choice([payload[:-1], payload[:len(payload) // 2], b"", payload + b"\x00",
                                                 payload + payload[:8], payload * 3]))
    elif kind == 1 and storages:
        del members[rng.choice(storages)]
    elif kind == 2 and storages:
        i = rng.choice(storages)
        members[i] = (members[i][0].rsplit("/", 1)[0] + "/" + rng.choice(["9", "00", "-1", "x", ""]), members[i][1])
    elif kind == 3:
        members.append(rng.choice(members))
    elif kind == 4:
        name = next(n for n, _ in members if n.endswith("data.pkl"))
        members.insert(0, (rng.choice(["other/data.pkl", name, "data.pkl"]), dict(members)[name]))
    else:
        byteorder = [i for i, (name, _) in enumerate(members) if name.endswith("byteorder")]
        if byteorder:
            members[byteorder[0]] = (members[byteorder[0]][0], rng.choice([b"big", b"middle", b"", b"\xff"]))
    return rebuild(members)


MUTATIONS = [fuzz_load.flip_bits, overwrite_anywhere, fuzz_load.truncate, fuzz_load.append_garbage, forge_zip_fields,
             forge_zip_fields, forge_record_size, edit_pickle, edit_pickle, edit_pickle, edit_records, edit_records]


def mutate(data, rng):
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not data:
            break
        mutation = rng.choice(MUTATIONS)
        try:
            data = mutation(data, rng)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError, IndexError,
                StopIteration, struct.error, NotImplementedError, OverflowError, UnicodeDecodeError):
            # An earlier mutation broke the archive this one rebuilds.
            data = fuzz_load.flip_bits(data, rng)
    return data


# ---------------------------------------------------------------- the reference reader

class StoredTensor:
    """A tensor as data.pkl describes it: a window of a storage record's elements."""

    def __init__(self, array, offset, size, stride, requires_grad):
        self.array, self.offset, self.size, self.stride = array, offset, tuple(size), tuple(stride)
        self.requires_grad = bool(requires_grad)

    def values(self):
        if 0 in self.size:
            return np.empty(self.size, self.array.dtype)
        itemsize = self.array.itemsize
        # (the stride of a dim of size 1 is never stepped, and may be any number)
        return np.lib.stride_tricks.as_strided(self.array[self.offset:], self.size,
                                               [s * itemsize if n > 1 else 0 for n, s in zip(self.size, self.stride)])


class StoredParameter(StoredTensor):
    pass


def reference_read(data):
    """The object in a checkpoint, read without tensorplay: tensors become StoredTensors. Raises on
    anything it does not understand."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    (pkl,) = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
    prefix = pkl[:-len("data.pkl")]
    byteorder = archive.read(prefix + "byteorder") if prefix + "byteorder" in archive.namelist() else b"little"
    if byteorder not in (b"little", b"big"):
        raise ValueError(f"byte order {byteorder!r}")

    def storage_bytes(name):
        # Storages are read without their checksum, as load reads them: from the local header on.
        info = archive.getinfo(name)
        start = info.header_offset + 30 + sum(struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30]))
        payload = data[start:start + info.file_size]
        if info.compress_type != zipfile.ZIP_STORED or len(payload) != info.file_size:
            raise ValueError(f"record {name}")
        return payload

    def rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        if not isinstance(size, tuple) or not isinstance(stride, tuple) or len(size) != len(stride) \
                or not all(isinstance(v, int) and v >= 0 for v in (offset, *size, *stride)):
            raise ValueError("tensor layout")
        if 0 not in size and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= storage.size:
            raise ValueError("tensor window")
        return StoredTensor(storage, int(offset), [int(n) for n in size], [int(s) for s in stride], requires_grad)

    globals_ = {("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
                ("torch._utils", "_rebuild_parameter"):
                    lambda t, requires_grad, hooks: StoredParameter(t.array, t.offset, t.size, t.stride, requires_grad),
                ("collections", "OrderedDict"): collections.OrderedDict}
    globals_.update({("torch", n): n for n in STORAGE_DTYPES})
    globals_.update({("torch", str(d).split(".")[-1]): d for d in (tp.bfloat16, tp.float32)})
    loaded = {}

    class Reader(pickle._Unpickler):  # (the C unpickler allocates a memo as large as a corrupt index)
        def find_class(self, module, name):
            return globals_[module, name]

        def persistent_load(self, saved_id):
            tag, storage_type, key, location, numel = saved_id
            if tag != "storage" or storage_type not in STORAGE_DTYPES or location != "cpu":
                raise ValueError(f"persistent id {saved_id!r}")
            if key not in loaded:
                dtype = np.dtype(STORAGE_DTYPES[storage_type]).newbyteorder("<" if byteorder == b"little" else ">")
                payload = storage_bytes(prefix + "data/" + key)
                if len(payload) % dtype.itemsize or len(payload) // dtype.itemsize != numel:
                    raise ValueError(f"storage {key}")
                loaded[key] = (storage_type, np.frombuffer(payload, dtype))
            if loaded[key][0] != storage_type:
                raise ValueError(f"storage {key} read as two types")
            return loaded[key][1]

    return Reader(io.BytesIO(archive.read(pkl))).load()


# ---------------------------------------------------------------- the contract

def refused(e):
    """Whether e is one of the errors load documents for a bad checkpoint."""
    message = str(e)
    if isinstance(e, pickle.UnpicklingError):
        return message.startswith(("load:", "Weights only load failed"))
    return type(e) in (RuntimeError, ValueError) and message.startswith("load:")


def check(data, rng, load=tp.load, directory=None):
    """Loads data (from a file object, a stream or a path) and checks load kept its contract.
    Returns "loaded" or "rejected"; raises Failure otherwise."""
    source, source_obj = fuzz_load.pick_source(data, rng, directory, "case.pt")
    try:
        result = load(source_obj)
    except fuzz_load.Hang:
        raise Failure(f"load took more than {fuzz_load.CASE_TIMEOUT_S} s (from {source})") from None
    except Exception as e:  # noqa: BLE001  (any exception but load's own is what we are looking for)
        if refused(e):
            return "rejected"
        raise Failure(f"load raised {type(e).__name__} (from {source}): {e}") from e
    if data[:4] != b"PK\x03\x04":
        # A mutation turned the file into something else load reads (a safetensors or legacy file).
        return "loaded"
    try:
        expected = reference_read(data)
    except Exception as e:  # noqa: BLE001
        raise Failure(f"load accepted an archive the reference reader refuses: {type(e).__name__}: {e}") from None
    compare(result, expected, "root")
    return "loaded"


def compare(obj, expected, where):
    if isinstance(expected, StoredTensor):
        wanted_type = tp.nn.Parameter if isinstance(expected, StoredParameter) else tp.Tensor
        if type(obj) is not wanted_type:
            raise Failure(f"{where}: expected a {wanted_type.__name__}, got {type(obj).__name__}")
        values = expected.values()
        if tuple(obj.shape) != expected.size or obj.requires_grad != expected.requires_grad:
            raise Failure(f"{where}: loaded with shape {tuple(obj.shape)} and requires_grad {obj.requires_grad}, "
                          f"the archive says {expected.size} and {expected.requires_grad}")
        got = obj.detach().contiguous().numpy()
        if got.dtype.itemsize != values.dtype.itemsize or got.dtype.kind != values.dtype.kind \
                or got.tobytes() != np.ascontiguousarray(values.astype(values.dtype.newbyteorder("="))).tobytes():
            raise Failure(f"{where}: the values are not the bytes of its storage window ({got.dtype} vs "
                          f"{values.dtype})")
        return
    if isinstance(expected, np.ndarray):  # a storage on its own
        if not isinstance(obj, tp.storage.TypedStorage) or obj.nbytes() != expected.nbytes \
                or bytes(obj.untyped().tolist()) != expected.astype(expected.dtype.newbyteorder("=")).tobytes():
            raise Failure(f"{where}: loaded {type(obj).__name__} where the archive holds a storage of "
                          f"{expected.dtype} x {expected.size}")
        return
    if type(obj) is not type(expected):
        raise Failure(f"{where}: loaded a {type(obj).__name__} where the archive holds a {type(expected).__name__}")
    if isinstance(expected, (list, tuple)):
        if len(obj) != len(expected):
            raise Failure(f"{where}: {len(obj)} items, the archive holds {len(expected)}")
        for i, (a, b) in enumerate(zip(obj, expected)):
            compare(a, b, f"{where}[{i}]")
    elif isinstance(expected, dict):
        if list(obj) != list(expected):
            raise Failure(f"{where}: keys {list(obj)[:8]}, the archive holds {list(expected)[:8]}")
        for key in expected:
            compare(obj[key], expected[key], f"{where}[{key!r}]")
    elif obj != expected and not (obj != obj and expected != expected):  # NaN equals NaN here
        raise Failure(f"{where}: loaded {obj!r}, the archive holds {expected!r}")


# ---------------------------------------------------------------- the loop

def run(cases, seed, load=tp.load):
    """Runs cases mutations; returns the counts of outcomes. Raises Failure on the first broken
    contract, naming the case."""
    return fuzz_load.run_cases(checkpoints(), mutate, check, cases, seed, load)


if __name__ == "__main__":
    sys.exit(fuzz_load.main("fuzz_load_zip", run, matched="matched the archive", rejected="with load's errors"))

"""tensorplay.serialization.save_file / load: round trips, the safetensors layout, atomic saves, and loading
corrupted files (which must raise ValueError/RuntimeError, never anything else)."""

import collections
import io
import json
import math
import random
import signal
import struct
import time
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import tensorplay as tp
from tensorplay import serialization

# tensorplay dtype, safetensors code, numpy dtype, unsigned integer dtype of the same size.
DTYPES = [
    (tp.float32, "F32", np.float32, np.uint32),
    (tp.float64, "F64", np.float64, np.uint64),
    (tp.float16, "F16", np.float16, np.uint16),
    (tp.bfloat16, "BF16", ml_dtypes.bfloat16, np.uint16),
    (tp.int8, "I8", np.int8, np.uint8),
    (tp.int16, "I16", np.int16, np.uint16),
    (tp.int32, "I32", np.int32, np.uint32),
    (tp.int64, "I64", np.int64, np.uint64),
    (tp.uint8, "U8", np.uint8, np.uint8),
    (tp.bool, "BOOL", np.bool_, np.uint8),
]
DTYPE_IDS = [code for _, code, _, _ in DTYPES]
SHAPES = [(), (0,), (3, 0, 2), (1,), (7,), (2, 3, 4)]

# Bit patterns a float round trip must keep: -0.0, infinities, NaNs with payloads and sign,
# subnormals, the largest finite value.
SPECIAL_BITS = {
    np.uint16: [0x8000, 0x7C00, 0xFC00, 0x7E01, 0xFD55, 0x0001, 0x7BFF, 0x7F81, 0xFFC1],
    np.uint32: [0x80000000, 0x7F800000, 0xFF800000, 0x7FC12345, 0xFF800001, 0x00000001, 0x7F7FFFFF],
    np.uint64: [0x8000000000000000, 0x7FF0000000000000, 0x7FF8DEADBEEF0001, 0xFFF0000000000001, 1],
}


def random_tensor(dtype, shape, seed=0):
    """A tensor of random bit patterns (0/1 for bool), including special float values."""
    _, _, np_dtype, bits_dtype = next(d for d in DTYPES if d[0] == dtype)
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dtype == tp.bool:
        array = rng.integers(0, 2, n).astype(np.bool_)
    else:
        bits = rng.integers(0, np.iinfo(bits_dtype).max, n, dtype=bits_dtype, endpoint=True)
        if dtype.is_floating_point:
            special = SPECIAL_BITS[bits_dtype]
            bits[: min(n, len(special))] = special[:n]
        array = bits.view(np_dtype)
    return tp.from_numpy(array.reshape(shape)).clone()


def raw(t):
    """The tensor's values as (dtype, shape, bytes), for bit-exact comparison."""
    array = t.detach().contiguous().numpy()
    return t.dtype, tuple(t.shape), np.ascontiguousarray(array).reshape(-1).view(np.uint8).tobytes()


def assert_same(a, b):
    """a and b have the same structure, types, plain values and tensor bits."""
    assert type(a) is type(b) or (isinstance(a, tp.Tensor) and type(b) is tp.Tensor), (type(a), type(b))
    if isinstance(a, tp.Tensor):
        assert raw(a) == raw(b)
        assert not b.requires_grad
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)  # same keys, same order
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    else:
        assert a == b


def saved(obj):
    """The bytes save writes for obj."""
    buffer = io.BytesIO()
    tp.serialization.save_file(obj, buffer)
    return buffer.getvalue()


def roundtrip(obj):
    return tp.load(io.BytesIO(saved(obj)))


def parse_layout(data):
    """The (header, data section) of a safetensors file, parsed by hand."""
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n].decode("utf-8")), data[8 + n:]


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("dtype", [d[0] for d in DTYPES], ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_dtype_and_shape_roundtrips_bit_exactly(dtype, shape):
    t = random_tensor(dtype, shape, seed=len(shape))
    out = roundtrip(t)
    assert type(out) is tp.Tensor and out.dtype == dtype and tuple(out.shape) == shape
    assert_same(t, out)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d[0].is_floating_point], ids=lambda d: d[1])
def test_float_special_values_keep_their_bits(dtype):
    tp_dtype, _, _, bits_dtype = dtype
    special = np.array(SPECIAL_BITS[bits_dtype], dtype=bits_dtype)
    out = roundtrip(random_tensor(tp_dtype, (len(special),)))
    # Compared through tensorplay's own view(), not numpy.
    int_dtype = {np.uint16: tp.int16, np.uint32: tp.int32, np.uint64: tp.int64}[bits_dtype]
    assert out.view(int_dtype).numpy().view(bits_dtype).tolist() == special.tolist()


def test_non_contiguous_tensors_are_saved_contiguous():
    base = tp.arange(24.0).reshape(4, 6)  # distinct values, so a wrong element order shows
    views = {
        "transposed": base.t(),
        "strided": base[:, ::2],
        "offset_block": base[1:3, 2:5],
        "expanded": random_tensor(tp.int16, (3,), seed=2).expand(4, 3),
        "narrowed": base.narrow(1, 2, 3),
    }
    assert not any(v.is_contiguous() for v in views.values())
    out = roundtrip(views)
    for name, view in views.items():
        assert out[name].is_contiguous()
        assert out[name].numpy().tolist() == view.numpy().tolist()
        assert_same(view, out[name])


def test_tensors_sharing_storage_are_saved_independently():
    base = tp.arange(10.0)
    out = roundtrip({"a": base[:6], "b": base[4:], "c": base})
    assert out["a"].numpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert out["b"].numpy().tolist() == [4, 5, 6, 7, 8, 9]
    out["a"][5] = 100.0  # the loaded tensors don't share memory
    assert out["b"][1].item() == 5.0 and out["c"][5].item() == 5.0


def test_parameters_and_tensors_requiring_grad_load_as_plain_tensors():
    param = tp.nn.Parameter(random_tensor(tp.float32, (2, 3)))
    assert type(param) is not tp.Tensor and param.requires_grad
    leaf = tp.ones(3, requires_grad=True)
    out = roundtrip({"weight": param, "bias": leaf, "computed": leaf * 2})
    for value in out.values():
        assert type(value) is tp.Tensor and not value.requires_grad
    assert_same(param, out["weight"])
    assert out["computed"].numpy().tolist() == [2, 2, 2]


def test_a_training_checkpoint_restores_model_and_optimizer(tmp_path):
    model = tp.nn.Linear(3, 2)
    optimizer = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(tp.randn(4, 3)).sum().backward()
    optimizer.step()
    tp.serialization.save_file({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, tmp_path / "ckpt.tp")

    checkpoint = tp.load(tmp_path / "ckpt.tp")
    restored = tp.nn.Linear(3, 2)
    restored.load_state_dict(checkpoint["model"])
    restored_optimizer = tp.optim.SGD(restored.parameters(), lr=0.5)
    restored_optimizer.load_state_dict(checkpoint["optimizer"])
    assert_same(model.state_dict(), restored.state_dict())
    assert_same(optimizer.state_dict(), restored_optimizer.state_dict())
    assert checkpoint["epoch"] == 3


def test_nested_structures_roundtrip():
    obj = {
        "model": collections.OrderedDict([("layer.weight", random_tensor(tp.bfloat16, (3, 2))),
                                          ("layer.bias", random_tensor(tp.float16, (3,)))]),
        "optimizer": {"state": {0: {"step": 10, "exp_avg": random_tensor(tp.float32, (3, 2))}},
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1], "name": None}]},
        "history": [1, -2**70, 0.1, -0.0, float("inf"), float("nan"), True, False, None, "héllo ✓", ""],
        "pairs": (random_tensor(tp.int64, ()), [random_tensor(tp.bool, (5,)), ()], {}),
        (1, "tuple key", None): [[[]]],
        2.5: "float key",
        False: "bool key",
        None: "none key",
    }
    out = roundtrip(obj)
    assert_same(obj, out)
    assert type(out["model"]) is collections.OrderedDict


def test_ordered_dict_keeps_type_and_order():
    sd = collections.OrderedDict((name, random_tensor(tp.float32, (2,), seed=i))
                                 for i, name in enumerate(["z", "a", "m", "__metadata__", ""]))
    out = roundtrip(sd)
    assert type(out) is collections.OrderedDict and list(out) == list(sd)
    assert_same(sd, out)


def test_tensor_names_that_collide_get_suffixes():
    obj = {"__metadata__": tp.zeros(1), "__metadata__#1": tp.ones(1), 1: tp.full((1,), 2.0), "1": tp.full((1,), 3.0)}
    data = saved(obj)
    header, _ = parse_layout(data)
    assert sorted(header) == ["1", "1#1", "__metadata__", "__metadata__#1", "__metadata__#1#1"]
    assert_same(obj, tp.load(io.BytesIO(data)))


def test_plain_values_at_the_top_level():
    for obj in [None, 3, -0.0, "text", [], (), {}, [None, [1.5, (2,)]]]:
        assert_same(obj, roundtrip(obj))


def test_save_and_load_with_paths_and_file_objects(tmp_path):
    sd = {"w": random_tensor(tp.float64, (3, 3)), "n": random_tensor(tp.int32, (4,))}
    tp.serialization.save_file(sd, str(tmp_path / "str.tp"))
    tp.serialization.save_file(sd, tmp_path / "pathlike.tp")
    with open(tmp_path / "fileobj.tp", "wb") as f:
        tp.serialization.save_file(sd, f)
    contents = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(contents) == ["fileobj.tp", "pathlike.tp", "str.tp"]  # no temporary files left
    assert len(set(contents.values())) == 1
    assert_same(sd, tp.load(str(tmp_path / "str.tp")))
    assert_same(sd, tp.load(tmp_path / "pathlike.tp"))
    with open(tmp_path / "fileobj.tp", "rb") as f:
        assert_same(sd, tp.load(f))


def test_saving_through_a_symlink_replaces_its_target(tmp_path):
    target = tmp_path / "target.tp"
    tp.serialization.save_file({"old": tp.zeros(1)}, target)
    link = tmp_path / "link.tp"
    link.symlink_to(target)
    tp.serialization.save_file({"new": tp.ones(1)}, link)
    assert link.is_symlink()
    assert list(tp.load(target)) == ["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.tp", "target.tp"]


def test_load_reads_from_the_current_position_of_a_file_object():
    buffer = io.BytesIO()
    buffer.write(b"some prefix")
    tp.serialization.save_file([tp.arange(3)], buffer)
    buffer.seek(len(b"some prefix"))
    assert tp.load(buffer)[0].numpy().tolist() == [0, 1, 2]


class Stream:
    """A file object that can only read: no seek, tell or size."""

    def __init__(self, data):
        self._buffer = io.BytesIO(data)

    def read(self, n=-1):
        return self._buffer.read(min(n, 3) if n >= 0 else n)  # short reads, like a pipe


def test_load_from_an_unseekable_stream():
    obj = {"w": random_tensor(tp.float32, (5, 2)), "k": [1, "a"]}
    buffer = io.BytesIO()
    tp.serialization.save_file(obj, buffer)
    assert_same(obj, tp.load(Stream(buffer.getvalue())))
    with pytest.raises(ValueError, match="truncated"):
        tp.load(Stream(buffer.getvalue()[:-1]))
    with pytest.raises(ValueError, match="after the data section"):
        tp.load(Stream(buffer.getvalue() + b"\0"))


def test_save_rejects_what_it_cannot_represent():
    with pytest.raises(TypeError, match="set"):
        tp.serialization.save_file({"a": {1, 2}}, io.BytesIO())
    with pytest.raises(TypeError, match="dict key"):
        tp.serialization.save_file({tp.zeros(1): 1}, io.BytesIO())
    cycle = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="nested"):
        tp.serialization.save_file(cycle, io.BytesIO())


# ---------------------------------------------------------------- the layout

def test_flat_state_dict_is_a_plain_safetensors_file():
    sd = {d[1].lower(): random_tensor(d[0], (2, 3), seed=i) for i, d in enumerate(DTYPES)}
    sd["scalar"] = random_tensor(tp.float32, ())
    sd["empty"] = random_tensor(tp.int8, (0, 4))
    buffer = io.BytesIO()
    tp.serialization.save_file(sd, buffer)
    data = buffer.getvalue()
    (n,) = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0  # the data section is 8-byte aligned, as safetensors writes it
    header, section = parse_layout(data)

    metadata = header.pop("__metadata__")
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    assert set(header) == set(sd)  # tensor names are the state dict's keys
    offset = 0
    for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        tensor = sd[name]
        assert set(info) == {"dtype", "shape", "data_offsets"}
        assert info["dtype"] == next(code for dtype, code, _, _ in DTYPES if dtype == tensor.dtype)
        assert info["shape"] == list(tensor.shape)
        begin, end = info["data_offsets"]
        assert begin == offset
        assert section[begin:end] == raw(tensor)[2]  # raw little-endian bytes
        offset = end
    assert offset == len(section)


def test_nested_tensors_get_dotted_names():
    data = io.BytesIO()
    tp.serialization.save_file({"model": {"w": tp.zeros(1)}, "buffers": [tp.zeros(1)], "model.w": tp.ones(1)}, data)
    header, _ = parse_layout(data.getvalue())
    assert sorted(header) == ["__metadata__", "buffers.0", "model.w", "model.w#1"]


def write_layout(header, section=b""):
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + section


def test_a_file_without_structure_loads_as_a_dict_of_tensors():
    # What the safetensors library writes: names sorted, metadata of its own.
    section = np.array([1.5, -2.0], "<f4").tobytes() + np.array([7], "<i8").tobytes()
    data = write_layout({"__metadata__": {"format": "pt"},
                         "b": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]},
                         "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, section)
    out = tp.load(io.BytesIO(data))
    assert list(out) == ["b", "a"]
    assert out["a"].numpy().tolist() == [1.5, -2.0] and out["b"].item() == 7


# ---------------------------------------------------------------- atomic saves

class Crash(Exception):
    pass


def crash_after_first_array(monkeypatch):
    """Makes save die midway: it writes the first tensor, half of the second, then raises."""
    real_write = serialization._write_array
    calls = []

    def write(f, array):
        calls.append(array)
        if len(calls) == 1:
            return real_write(f, array)
        f.write(array.reshape(-1).view(np.uint8).tobytes()[: array.nbytes // 2])
        raise Crash("simulated crash")

    monkeypatch.setattr(serialization, "_write_array", write)
    return calls


def test_an_interrupted_save_leaves_no_file(tmp_path, monkeypatch):
    path = tmp_path / "model.tp"
    calls = crash_after_first_array(monkeypatch)
    with pytest.raises(Crash):
        tp.serialization.save_file({"a": tp.ones(100), "b": tp.ones(100)}, path)
    assert len(calls) == 2  # it did crash midway through the data
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_save_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "model.tp"
    previous = {"old": random_tensor(tp.float32, (10,))}
    tp.serialization.save_file(previous, path)
    crash_after_first_array(monkeypatch)
    with pytest.raises(Crash):
        tp.serialization.save_file({"a": tp.ones(100), "b": tp.ones(100)}, str(path))
    assert list(tmp_path.iterdir()) == [path]
    assert_same(previous, tp.load(path))

    monkeypatch.undo()
    tp.serialization.save_file({"new": tp.ones(2)}, path)  # a complete save replaces it
    assert list(tmp_path.iterdir()) == [path]
    assert list(tp.load(path)) == ["new"]


# ---------------------------------------------------------------- corrupted files

def with_header(data, edit):
    """data with its header parsed, passed through edit (which changes it in place), and
    re-encoded with the right length."""
    header, section = parse_layout(data)
    edit(header)
    return write_layout(header, section)


def with_structure(data, edit):
    """data with its structure passed through edit, which changes it in place."""
    def edit_header(header):
        structure = json.loads(header["__metadata__"]["tensorplay.structure"])
        edit(structure)
        header["__metadata__"]["tensorplay.structure"] = json.dumps(structure)
    return with_header(data, edit_header)


def with_root(data, root):
    """data with its structure's root node replaced by root."""
    return with_structure(data, lambda s: s.update(root=root))


def deep(levels, leaf):
    for _ in range(levels):
        leaf = {"type": "list", "items": [leaf]}
    return leaf


STATE = saved({"w": tp.ones(2, 3), "b": tp.zeros(3, dtype=tp.int16)})
NESTED = saved({"w": [tp.ones(2), 3]})

BAD_FILES = {
    # framing
    "empty file": (b"", "truncated"),
    "short length": (b"\x10\0\0", "truncated"),
    "truncated header": (STATE[:20], "larger than the file"),
    "truncated data": (STATE[:-1], "data section"),
    "extra data": (STATE + b"\0", "data section"),
    "huge header length": (struct.pack("<Q", 2**64 - 1) + STATE[8:], "exceeds the limit"),
    "header length past the end": (struct.pack("<Q", 99_000_000) + STATE[8:], "larger than the file"),
    "header length zero": (struct.pack("<Q", 0) + STATE[8:], "not valid JSON"),
    # header text
    "invalid utf-8": (struct.pack("<Q", 3) + b"{\xff}", "UTF-8"),
    "invalid json": (struct.pack("<Q", 3) + b"{,}", "not valid JSON"),
    "not an object": (struct.pack("<Q", 2) + b"[]", "JSON object"),
    "deeply nested json": (struct.pack("<Q", 200_000) + b"[" * 200_000, "nested too deeply|not valid JSON"),
    "NaN in json": (struct.pack("<Q", 5) + b"[NaN]", "NaN"),
    "duplicate key": (struct.pack("<Q", 15) + b'{"a":{},"a":{}}', "duplicate key"),
    "huge integer": (struct.pack("<Q", 5002) + b"[" + b"9" * 5000 + b"]", "not valid JSON"),
    # tensor entries
    "entry not an object": (write_layout({"a": [1]}), "must be an object"),
    "missing field": (with_header(STATE, lambda h: h["w"].pop("shape")), "exactly the fields"),
    "extra field": (with_header(STATE, lambda h: h["w"].update(stride=[1])), "exactly the fields"),
    "unknown dtype": (with_header(STATE, lambda h: h["w"].update(dtype="F128")), "unknown dtype"),
    "dtype not a string": (with_header(STATE, lambda h: h["w"].update(dtype=4)), "unknown dtype"),
    "other dtype size": (with_header(STATE, lambda h: h["w"].update(dtype="F64")), "needs 48 bytes"),
    "negative dim": (with_header(STATE, lambda h: h["w"].update(shape=[-2, -3])), "invalid shape"),
    "float dim": (with_header(STATE, lambda h: h["w"].update(shape=[2.0, 3])), "invalid shape"),
    "bool dim": (with_header(STATE, lambda h: h["w"].update(shape=[True, 6])), "invalid shape"),
    "shape not a list": (with_header(STATE, lambda h: h["w"].update(shape="2,3")), "invalid shape"),
    "too many dims": (with_header(STATE, lambda h: h["w"].update(shape=[1] * 65 + [6])), "invalid shape"),
    "huge dims": (with_header(STATE, lambda h: h["w"].update(shape=[2**62, 2**62])), "too large"),
    "huge dims, empty": (with_header(STATE, lambda h: h["w"].update(shape=[0, 2**62, 8])), "too large"),
    "shape/offsets mismatch": (with_header(STATE, lambda h: h["w"].update(shape=[2, 2])), "needs 16 bytes"),
    "offsets reversed": (with_header(STATE, lambda h: h["w"]["data_offsets"].reverse()), "data_offsets"),
    "offsets negative": (with_header(STATE, lambda h: h["w"].update(data_offsets=[-24, 0])), "data_offsets"),
    "offsets wrong length": (with_header(STATE, lambda h: h["w"].update(data_offsets=[0])), "data_offsets"),
    "offsets overlap": (with_header(STATE, lambda h: h["b"].update(data_offsets=[18, 24])), "overlaps"),
    "offsets leave a gap": (with_header(STATE, lambda h: h["b"].update(data_offsets=[26, 32])), "gap"),
    "offsets past the data": (with_header(STATE, lambda h: h["b"].update(data_offsets=[24, 2**62 + 28],
                                                                         shape=[2**61 + 2])), "data section"),
    "bool byte not 0/1": (write_layout({"m": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x02"),
                          "other than 0 and 1"),
    # metadata and structure
    "metadata not an object": (with_header(STATE, lambda h: h.update(__metadata__=[1])), "__metadata__"),
    "metadata value not a string": (with_header(STATE, lambda h: h["__metadata__"].update(x=1)), "__metadata__"),
    "structure not json": (with_header(STATE, lambda h: h["__metadata__"].update({"tensorplay.structure": "{"})),
                           "structure is not valid JSON"),
    "structure version": (with_structure(STATE, lambda s: s.update(version=2)), "version"),
    "structure missing root": (with_structure(STATE, lambda s: s.__delitem__("root")), "fields version and root"),
    "missing tensor": (with_root(NESTED, {"type": "tensor", "name": "x"}),
                       "missing"),
    "tensor referenced twice": (with_structure(NESTED, lambda s: s["root"]["items"][0][1]["items"].append(
        s["root"]["items"][0][1]["items"][0])), "referenced twice"),
    "unreferenced tensor": (with_structure(NESTED, lambda s: s["root"]["items"][0][1]["items"].__delitem__(0)),
                            "not part of the structure"),
    "unknown node type": (with_structure(NESTED, lambda s: s["root"].update(type="set")), "malformed"),
    "node not an object": (with_root(NESTED, [1, 2]), "malformed"),
    "wrong value type": (with_root(NESTED, {"type": "int", "value": "3"}),
                         "malformed int"),
    "bad float": (with_root(NESTED, {"type": "float", "value": "x"}),
                  "malformed float"),
    "list key": (with_structure(NESTED, lambda s: s["root"]["items"][0].__setitem__(
        0, {"type": "list", "items": []})), "dict key"),
    "bad pair": (with_structure(NESTED, lambda s: s["root"]["items"].append([1])), "pairs"),
    "duplicate dict key": (with_structure(NESTED, lambda s: s["root"]["items"].append(
        [{"type": "str", "value": "w"}, {"type": "none"}])), "duplicate dict key"),
    "deep structure": (with_root(NESTED, deep(150, {"type": "none"})),
                       "nested more than"),
    "very deep structure": (write_layout({"__metadata__": {"tensorplay.structure": "[" * 5000 + "]" * 5000}}),
                            "structure is nested too deeply"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_corrupted_file_raises_a_clear_error(name, tmp_path):
    data, message = BAD_FILES[name]
    with pytest.raises(ValueError, match=message):
        tp.load(io.BytesIO(data))
    path = tmp_path / "bad.tp"  # the same through a path
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message):
        tp.load(path)


def test_lying_sizes_allocate_nothing_large():
    """A few bytes claiming a 99 MB header or an 8 EB tensor are rejected before allocating."""
    cases = [struct.pack("<Q", 99_000_000) + b"{}",
             BAD_FILES["offsets past the data"][0],
             write_layout({"x": {"dtype": "U8", "shape": [2**40], "data_offsets": [0, 2**40]}})]
    for data in cases:
        for source in (io.BytesIO(data), Stream(data)):
            tracemalloc.start()
            try:
                with pytest.raises(ValueError):
                    tp.load(source)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 4_000_000, peak


# ---------------------------------------------------------------- fuzzing

class Hang(Exception):
    pass


def mutate_json(header, rng):
    """One structural edit of a parsed header (in place). An earlier edit may have made this one
    inapplicable (a field gone, a value of another type); then it raises and is skipped."""
    names = [k for k in header if k != "__metadata__" and isinstance(header[k], dict)]
    name = rng.choice(names) if names else None
    entry = header[name] if name else None
    choice = rng.randrange(16)
    if choice == 0 and name:
        del header[name]
    elif choice == 1 and entry:
        field = rng.choice(["dtype", "shape", "data_offsets"])
        if rng.random() < 0.5:
            del entry[field]
        else:
            entry[field] = rng.choice([None, 1, -1, 2.5, True, "x", [], {}, [[1]], "F32", [0, 0], 2**64])
    elif choice == 2 and len(names) >= 2:
        a, b = rng.sample(names, 2)
        header[a]["data_offsets"], header[b]["data_offsets"] = header[b]["data_offsets"], header[a]["data_offsets"]
    elif choice == 3 and entry:
        entry["data_offsets"] = entry["data_offsets"][::-1]
    elif choice == 4 and entry:
        entry["data_offsets"] = [o + rng.choice([-9, -1, 1, 8, 2**40, 2**63, -2**63]) for o in entry["data_offsets"]]
    elif choice == 5 and entry:
        shape = entry["shape"] or [1]
        shape[rng.randrange(len(shape))] = rng.choice([-1, -2**63, 0, 2**31, 2**62, 2**63, 2**64 + 1, 10**30])
        entry["shape"] = shape
    elif choice == 6 and entry:
        entry["shape"] = entry["shape"] + [rng.choice([1, 2, 0])] * rng.choice([1, 2, 70])
    elif choice == 7 and entry:
        entry["dtype"] = rng.choice([code for _, code, _, _ in DTYPES] + ["F8", "U16", "f32", "", 5, None])
    elif choice == 8:
        header["__metadata__"] = rng.choice([None, 1, "x", [], {"a": 1}, {"tensorplay.structure": 5}, {}])
    elif choice == 9 and isinstance(header.get("__metadata__"), dict):
        text = header["__metadata__"].get("tensorplay.structure", "")
        if text and isinstance(text, str):
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice(["", "[", "]", "{", "}", ",", '"', "1", "x", "null", "9" * 30]) + text[i + 1:]
        header["__metadata__"]["tensorplay.structure"] = text
    elif choice == 10 and isinstance(header.get("__metadata__"), dict):
        structure = json.loads(header["__metadata__"]["tensorplay.structure"])
        mutate_node(structure["root"], rng)
        header["__metadata__"]["tensorplay.structure"] = json.dumps(structure)
    elif choice == 11 and entry:
        header[name + "'"] = dict(entry)  # a copy: overlaps with the original
    elif choice == 12 and entry:
        entry[rng.choice(["extra", "dtype"])] = "BOOL"
    elif choice == 13:
        header[rng.choice(["", "x", "__metadata__"])] = rng.choice([{}, [], "s", 0])
    elif choice == 14 and isinstance(header.get("__metadata__"), dict):
        depth = rng.choice([50, 99, 101, 300, 3000])
        root = {"type": "none"}
        for _ in range(depth):
            root = {"type": rng.choice(["list", "tuple"]), "items": [root]}
        try:
            header["__metadata__"]["tensorplay.structure"] = json.dumps({"version": 1, "root": root})
        except RecursionError:
            header["__metadata__"]["tensorplay.structure"] = "[" * depth
    elif choice == 15 and entry:
        entry["shape"] = [max(d, 1) for d in entry["shape"]] or [1]  # usually a size mismatch


def mutate_node(node, rng):
    """An edit somewhere in a structure tree (in place)."""
    path = [node]
    while isinstance(node, dict) and node.get("items") and rng.random() < 0.7:
        item = rng.choice(node["items"])
        node = rng.choice(item) if isinstance(item, list) else item
        path.append(node)
    if not isinstance(node, dict):
        return
    edit = rng.randrange(6)
    if edit == 0:
        node["type"] = rng.choice(["tensor", "none", "bool", "int", "float", "str", "list", "tuple", "dict",
                                   "OrderedDict", "set", 3, None])
    elif edit == 1:
        node["name"] = rng.choice(["w", "b", "w.0", "", None, 5])
    elif edit == 2:
        node["value"] = rng.choice([None, True, 1, 1.5, "0x1p3", "nan", "inf", "x", [], 10**20])
    elif edit == 3:
        node["items"] = rng.choice([None, 1, [], [[]], [[1, 2]], [{"type": "none"}], [[{"type": "list", "items": []},
                                                                                       {"type": "none"}]]])
    elif edit == 4:
        node.pop(rng.choice(list(node)))
    else:
        node["extra"] = 1


def corrupt(data, rng):
    """A random corruption of a valid file."""
    (n,) = struct.unpack("<Q", data[:8])
    kind = rng.randrange(7)
    if kind == 0:  # truncation
        return data[:rng.randrange(len(data))]
    if kind == 1:  # byte flips in the length and header
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(8 + n)
            out[i] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
        return bytes(out)
    if kind == 2:  # header length overwritten
        length = rng.choice([0, 1, n - 1, n + 1, n + 8, len(data), 99_999_999, 100_000_001, 2**32, 2**63,
                             2**64 - 1, rng.randrange(2**64)])
        return struct.pack("<Q", length) + data[8:]
    if kind == 3:  # data section grown or shrunk
        return data + bytes(rng.randint(1, 9)) if rng.random() < 0.5 else data[:8 + n] + data[8 + n + 1:]
    if kind == 4:  # random bytes anywhere
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    # JSON edits, re-encoded with a consistent length so they reach the deeper checks
    header, section = parse_layout(data)
    for _ in range(rng.randint(1, 2)):
        try:
            mutate_json(header, rng)
        except (KeyError, TypeError, IndexError, ValueError, RecursionError):
            pass
    text = json.dumps(header)
    if kind == 6 and rng.random() < 0.5 and '{"' in text:  # duplicate a key textually
        i = text.index('{"') + 1
        j = text.index('"', i + 1)
        text = text[:i] + text[i:j + 1] + ":0," + text[i:]
    encoded = text.encode()
    return struct.pack("<Q", len(encoded)) + encoded + section


def check_loads_or_raises(data):
    """Loads data; only a successful load or ValueError/RuntimeError is acceptable."""
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        result = tp.load(io.BytesIO(data))
    except (ValueError, RuntimeError):
        return False
    except Hang:
        pytest.fail(f"load hung on {data[:300]!r}")
    except Exception as e:  # noqa: BLE001  (any other exception is the bug we are looking for)
        pytest.fail(f"load raised {type(e).__name__}: {e} on {data[:300]!r}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    assert isinstance(result, (dict, list, tuple, tp.Tensor, type(None), bool, int, float, str))
    return True


def test_fuzzed_files_load_or_raise_value_errors():
    COUNT = 20_000
    seeds = [
        STATE,
        saved(collections.OrderedDict([("w", random_tensor(tp.bfloat16, (2, 2))), ("m", random_tensor(tp.bool, (3,))),
                                       ("e", random_tensor(tp.float64, (0, 2))), ("s", random_tensor(tp.int8, ()))])),
        saved({"model": {"w": tp.ones(2), "b": tp.zeros(1, dtype=tp.uint8)}, "step": 7, "lr": 0.5,
               "hist": [None, True, "x", (1, 2.5)], 3: [tp.arange(3)]}),
        saved(random_tensor(tp.float16, (3,))),
        saved({}),
    ]
    rng = random.Random(1234)  # fixed, so a failure reproduces

    def on_alarm(signum, frame):
        raise Hang()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    outcomes = collections.Counter()
    try:
        for i in range(COUNT):
            data = corrupt(seeds[i % len(seeds)], rng)
            outcomes[check_loads_or_raises(data)] += 1
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert sum(outcomes.values()) == COUNT
    assert outcomes[False] > 0.85 * COUNT  # the corruptions were mostly caught, not silently accepted
    assert time.monotonic() - start < 60

"""Mutation fuzzing of tensorplay.load: corrupted checkpoints must load into well-formed objects or
raise ValueError("load: ..."), which is what load documents. Nothing else: no other exception type,
no crash, no hang, no large allocation.

    .venv/bin/python tests/fuzz/fuzz_load.py [--cases N] [--seed S]     (or TP_FUZZ_CASES=N)

Each case takes one of a few valid checkpoints, applies one to three seeded mutations (bit flips,
byte overwrites in the header and in the tensors' data, truncation, appended garbage, a forged
header length, edits of the header JSON: absurd shapes, offsets and dtype codes, duplicated names,
a broken structure) and loads the result
from a file object, an unseekable stream or a path. A file that loads is compared with the file's
own header, parsed here independently: every tensor must have the header's dtype and shape and
hold exactly its bytes of the data section, and the object must follow the stored structure.

The address space is capped at startup, so a size that slips past load's checks and gets allocated
fails as a MemoryError instead of swapping. Exit status 0 when every case passed; otherwise the
first failure is printed with its case number and seed, which reproduce it.
"""

import argparse
import collections
import io
import json
import os
import random
import resource
import signal
import struct
import sys
import tempfile

import numpy as np

import tensorplay as tp

# Room for the checkpoints in play (a few KB) and the interpreter's own growth; far below what a
# forged size would ask for.
ADDRESS_SPACE_HEADROOM = 1 << 30
CASE_TIMEOUT_S = 10

CODES = {tp.float32: "F32", tp.float64: "F64", tp.float16: "F16", tp.bfloat16: "BF16", tp.int8: "I8",
         tp.int16: "I16", tp.int32: "I32", tp.int64: "I64", tp.uint8: "U8", tp.bool: "BOOL"}


class Failure(Exception):
    """load broke its contract on one input."""


class Hang(Exception):
    pass


def checkpoints():
    """The valid files the mutations start from: name -> bytes."""
    rng = np.random.default_rng(0)

    def randn(*shape):
        return tp.tensor(rng.standard_normal(shape).astype(np.float32))

    objects = {
        "tensor": randn(3, 4),
        "state dict": collections.OrderedDict([
            ("w", randn(4, 3)), ("b", randn(4).to(tp.bfloat16)), ("h", randn(2, 2).to(tp.float16)),
            ("d", randn(3).double()), ("i8", tp.arange(-3, 3).to(tp.int8)), ("i16", tp.arange(5).to(tp.int16)),
            ("i32", tp.arange(4).to(tp.int32)), ("steps", tp.tensor(7)), ("u8", tp.arange(6).to(tp.uint8)),
            ("mask", tp.arange(5) > 2), ("empty", tp.zeros(0, 3))]),
        "nested": {"model": {"fc.weight": randn(2, 3), "fc.bias": tp.zeros(2)}, "step": 12, "lr": 0.125,
                   "betas": (0.9, 0.999), "history": [None, True, "x", [tp.ones(1, dtype=tp.int64)]],
                   3: collections.OrderedDict([("k", -1.5)]), (1, "a"): "tuple key"},
        "empty dict": {},
    }
    files = {}
    for name, obj in objects.items():
        buffer = io.BytesIO()
        tp.serialization.save_file(obj, buffer)
        files[name] = buffer.getvalue()
    return files


# ---------------------------------------------------------------- mutations

def split(data):
    """(header dict, data section) of a valid file."""
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n].decode("utf-8")), data[8 + n:]


def join(header_text, section):
    encoded = header_text.encode("utf-8")
    return struct.pack("<Q", len(encoded)) + encoded + section


def flip_bits(data, rng):
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def overwrite_bytes(data, rng):
    out = bytearray(data)
    n = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else 0
    for _ in range(rng.randint(1, 6)):
        # Mostly in the length and header, where a byte decides the most.
        end = min(len(out), 8 + n) if rng.random() < 0.8 else len(out)
        out[rng.randrange(end)] = rng.choice([0, 0x20, 0x22, 0x2C, 0x5B, 0x5D, 0x7B, 0x7D, 0xFF, rng.randrange(256)])
    return bytes(out)


def overwrite_data(data, rng):
    """New values for the tensors: the file must load with exactly these bytes, except that a bool
    byte other than 0 or 1 is refused."""
    (n,) = struct.unpack("<Q", data[:8])
    out = bytearray(data)
    if len(out) > 8 + n:
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(8 + n, len(out))] = rng.choice([0, 1, 2, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    return bytes(out)


def truncate(data, rng):
    return data[:rng.randrange(len(data))]


def append_garbage(data, rng):
    return data + bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 8, 64, 1000])))


def forge_header_length(data, rng):
    (n,) = struct.unpack("<Q", data[:8])
    length = rng.choice([0, 1, 2, n - 8, n - 1, n + 1, n + 8, len(data), len(data) - 8, 99_999_999, 100_000_000,
                         100_000_001, 2**31, 2**32 + n, 2**63, 2**64 - 1, rng.randrange(2**64)])
    return struct.pack("<Q", max(length, 0)) + data[8:]


# Values a header field must never be taken for: negative, huge, not an integer, the wrong type.
ABSURD_INTS = [-1, -8, -2**63, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 2**64 + 1, 10**30, 1.0, 2.5, -0.0,
               float("1e300"), True, False, None, "3", [], {}, [1]]
ABSURD_CODES = ["F8", "U16", "U32", "U64", "f32", "F32 ", "", "BOOL\u0000", "C64", 5, None, [], {"F32": 1}]


def edit_header(data, rng):
    """A structural edit of the header JSON, re-encoded with a consistent length so the file gets
    past the framing checks to the deeper ones."""
    header, section = split(data)
    names = [k for k in header if k != "__metadata__"]
    name = rng.choice(names) if names else None
    entry = header[name] if name else None
    duplicate = None
    kind = rng.randrange(14)
    if kind == 0 and entry:  # one dim becomes absurd
        shape = list(entry["shape"]) or [1]
        shape[rng.randrange(len(shape))] = rng.choice(ABSURD_INTS)
        entry["shape"] = shape
    elif kind == 1 and entry:  # the shape as a whole becomes absurd
        entry["shape"] = rng.choice([None, 3, "2,3", {}, [[2, 3]], [1] * 65, [1] * 64, [0] * 64, [2**32, 2**32],
                                     [0, 2**62, 16], [2**21] * 3, [-1, -1], list(reversed(entry["shape"])),
                                     entry["shape"] + [1], entry["shape"] + [0],
                                     [max(d, 1) + 1 for d in entry["shape"]]])
    elif kind == 2 and entry:  # one offset becomes absurd
        offsets = list(entry["data_offsets"])
        offsets[rng.randrange(2)] = rng.choice(ABSURD_INTS)
        entry["data_offsets"] = offsets
    elif kind == 3 and entry:  # the offsets shift, swap or change length together
        begin, end = entry["data_offsets"]
        entry["data_offsets"] = rng.choice([[end, begin], [begin + 1, end + 1], [begin - 8, end - 8], [begin],
                                            [begin, end, end], [begin + 2**62, end + 2**62], [0, end - begin],
                                            [begin, begin], [begin, 2**64 + begin], [-2**63, end]])
    elif kind == 4 and len(names) >= 2:  # two tensors trade offsets (usually a size mismatch)
        a, b = rng.sample(names, 2)
        header[a]["data_offsets"], header[b]["data_offsets"] = header[b]["data_offsets"], header[a]["data_offsets"]
    elif kind == 5 and entry:
        entry["dtype"] = rng.choice(ABSURD_CODES + list(CODES.values()))
    elif kind == 6 and entry:  # a field missing or extra
        if rng.random() < 0.5:
            del entry[rng.choice(["dtype", "shape", "data_offsets"])]
        else:
            entry[rng.choice(["stride", "offset", "__metadata__"])] = 0
    elif kind == 7 and entry:  # the same name twice; json.dumps can't write that, so it is spliced in below
        duplicate = name
    elif kind == 8 and entry:  # a copy under another name: overlaps the original
        header[name + "#copy"] = dict(entry)
    elif kind == 9:
        header[rng.choice(["", " ", "x", "__metadata__", name or "y"])] = rng.choice([{}, [], "s", 0, None, entry])
    elif kind == 10:
        header["__metadata__"] = rng.choice([None, 1, "x", [], {}, {"format": "pt"}, {"tensorplay.structure": 5},
                                             {"tensorplay.structure": ""}, {"a": {"b": "c"}}])
    elif kind in (11, 12) and "tensorplay.structure" in (header.get("__metadata__") or {}):
        text = header["__metadata__"]["tensorplay.structure"]
        if kind == 11:  # a textual edit of the structure
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(["", "[", "]", "{", "}", ",", '"', ":", "1", "-", "null", "9" * 40, "1e999",
                                          "NaN", "\\u0000"]) + text[i + rng.randrange(3):]
        else:  # a structural edit of one node
            structure = json.loads(text)
            edit_node(structure, rng)
            text = json.dumps(structure)
        header["__metadata__"]["tensorplay.structure"] = text
    elif kind == 13 and isinstance(header.get("__metadata__"), dict):  # structure nested near and past the limits
        depth = rng.choice([99, 100, 101, 500, 990, 5000])
        header["__metadata__"]["tensorplay.structure"] = (
            '{"version":1,"root":' + '{"type":"list","items":[' * depth + '{"type":"none"}' + "]}" * depth + "}")
    text = json.dumps(header, ensure_ascii=rng.random() < 0.5)
    if duplicate is not None:
        fragment = json.dumps({duplicate: header[duplicate]})[1:-1]
        text = "{" + fragment + "," + text[1:]
    return join(text, section)


def edit_node(structure, rng):
    """Changes one node of a structure tree, or the tree's own fields."""
    if rng.random() < 0.15:
        key = rng.choice(["version", "root", "extra"])
        structure[key] = rng.choice([None, 0, 2, True, "1", [], {}])
        return
    node = structure.get("root")
    while isinstance(node, dict) and isinstance(node.get("items"), list) and node["items"] and rng.random() < 0.75:
        item = rng.choice(node["items"])
        node = rng.choice(item) if isinstance(item, list) and item else item
    if not isinstance(node, dict):
        return
    edit = rng.randrange(7)
    if edit == 0:
        node["type"] = rng.choice(["tensor", "none", "bool", "int", "float", "str", "list", "tuple", "dict",
                                   "OrderedDict", "set", "Tensor", 1, None])
    elif edit == 1:
        node["name"] = rng.choice(["w", "b", "tensor", "model.fc.weight", "history.3.0", "", None, 0, ["w"]])
    elif edit == 2:
        node["value"] = rng.choice([None, True, 0, -1, 10**100, 1.5, "0x1.8p+1", "nan", "-inf", "0x1p99999", "x", [],
                                    {}])
    elif edit == 3:
        node["items"] = rng.choice([None, 0, {}, [], [[]], [[1, 2, 3]], [{"type": "none"}],
                                    [[{"type": "int", "value": 1}, {"type": "none"}]] * 2,
                                    [[{"type": "list", "items": []}, {"type": "none"}]],
                                    [[{"type": "tensor", "name": "w"}, {"type": "none"}]]])
    elif edit == 4 and len(node) > 1:
        del node[rng.choice([k for k in node if k != "type"] or ["type"])]
    elif edit == 5 and isinstance(node.get("items"), list) and node["items"]:
        node["items"].append(node["items"][0])  # a repeated dict key or tensor reference
    else:
        node["extra"] = 1


MUTATIONS = [flip_bits, overwrite_bytes, overwrite_data, truncate, append_garbage, forge_header_length, edit_header,
             edit_header]


def mutate(data, rng):
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not data:
            break
        mutation = rng.choice(MUTATIONS)
        try:
            data = mutation(data, rng)
        except (struct.error, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
            # An earlier mutation broke what this one edits (the header's JSON, an entry's fields).
            data = flip_bits(data, rng)
    return data


# ---------------------------------------------------------------- the contract

class Stream:
    """A file object that only reads, a few bytes at a time: load can't measure it or seek in it."""

    def __init__(self, data):
        self._buffer = io.BytesIO(data)

    def read(self, n=-1):
        return self._buffer.read(min(n, 5) if n >= 0 else n)


def pick_source(data, rng, directory, filename):
    """What load reads data from, drawn by rng: (kind, object), kind "bytes" (a file object), "stream"
    (an unseekable Stream) or, when a directory is given, "path" (a file named filename in it)."""
    source = rng.choice(["bytes"] * 6 + ["stream"] * 3 + ["path"] * (directory is not None))
    if source == "path":
        path = os.path.join(directory, filename)
        with open(path, "wb") as f:
            f.write(data)
        return source, path
    return source, io.BytesIO(data) if source == "bytes" else Stream(data)


def check(data, rng, load=tp.load, directory=None):
    """Loads data (from a file object, a stream or a path) and checks load kept its contract.
    Returns "loaded" or "rejected"; raises Failure otherwise."""
    source, source_obj = pick_source(data, rng, directory, "case.tp")
    try:
        result = load(source_obj)
    except ValueError as e:
        if not str(e).startswith("load:"):
            raise Failure(f"ValueError without the 'load:' prefix (from {source}): {e!r}") from e
        return "rejected"
    except Hang:
        raise Failure(f"load took more than {CASE_TIMEOUT_S} s (from {source})") from None
    except Exception as e:  # noqa: BLE001  (any other exception is what we are looking for)
        raise Failure(f"load raised {type(e).__name__} (from {source}): {e}") from e
    check_result(result, data)
    return "loaded"


def check_result(result, data):
    """result must be what data's own header and structure describe, tensor bytes included."""
    try:
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n].decode("utf-8"))
        metadata = header.pop("__metadata__", {})
        section = data[8 + n:]
        entries = {name: (info["dtype"], tuple(info["shape"]), section[info["data_offsets"][0]:info["data_offsets"][1]])
                   for name, info in header.items()}
        root = json.loads(metadata["tensorplay.structure"])["root"] if "tensorplay.structure" in metadata else None
    except Exception as e:  # noqa: BLE001
        raise Failure(f"load accepted a file whose header doesn't parse: {type(e).__name__}: {e}") from None
    if root is None:
        if type(result) is not dict or list(result) != list(entries):
            raise Failure(f"a file without structure must load as a dict of its tensors in header order, got "
                          f"{type(result).__name__}")
        for name, tensor in result.items():
            check_tensor(tensor, entries[name], name)
        return
    unused = set(entries)
    compare(result, root, entries, unused, "root")
    if unused:
        raise Failure(f"tensors {sorted(unused)} are in the header but not in the loaded object")


def check_tensor(tensor, entry, where):
    code, shape, raw = entry
    if type(tensor) is not tp.Tensor:
        raise Failure(f"{where}: expected a tensor, got {type(tensor).__name__}")
    if CODES.get(tensor.dtype) != code or tuple(tensor.shape) != shape:
        raise Failure(f"{where}: loaded as {tensor.dtype} {tuple(tensor.shape)}, the header says {code} {shape}")
    if tensor.requires_grad:
        raise Failure(f"{where}: a loaded tensor requires grad")
    got = tensor.contiguous().numpy().reshape(-1).view("uint8").tobytes()
    if got != raw:
        raise Failure(f"{where}: the values are not the bytes of its data_offsets")


def compare(obj, node, entries, unused, where):
    kind = node["type"]
    if kind == "tensor":
        if node["name"] not in unused:
            raise Failure(f"{where}: tensor {node['name']!r} loaded twice or not in the header")
        unused.discard(node["name"])
        check_tensor(obj, entries[node["name"]], where)
        return
    if kind == "none":
        ok = obj is None
    elif kind in ("bool", "int", "str"):
        ok = type(obj) is type(node["value"]) and obj == node["value"]
    elif kind == "float":
        expected = float.fromhex(node["value"])
        ok = type(obj) is float and struct.pack("<d", obj) == struct.pack("<d", expected)
    elif kind in ("list", "tuple"):
        ok = type(obj).__name__ == kind and len(obj) == len(node["items"])
        if ok:
            for i, (value, item) in enumerate(zip(obj, node["items"])):
                compare(value, item, entries, unused, f"{where}[{i}]")
    elif kind in ("dict", "OrderedDict"):
        ok = type(obj).__name__ == kind and len(obj) == len(node["items"])
        if ok:
            for (key, value), (key_node, value_node) in zip(obj.items(), node["items"]):
                compare(key, key_node, entries, unused, f"{where} key")
                compare(value, value_node, entries, unused, f"{where}[{key!r}]")
    else:
        raise Failure(f"{where}: load accepted an unknown node type {kind!r}")
    if not ok:
        raise Failure(f"{where}: loaded {type(obj).__name__} {str(obj)[:80]} for node {str(node)[:200]}")


# ---------------------------------------------------------------- the loop

def run(cases, seed, load=tp.load):
    """Runs cases mutations; returns the counts of outcomes. Raises Failure on the first broken
    contract, naming the case."""
    return run_cases(checkpoints(), mutate, check, cases, seed, load)


def run_cases(files, mutate, check, cases, seed, load):
    """The loop of a loader fuzzer: case i mutates files[i % len(files)] with a generator seeded by
    (seed, i), so that each case reproduces on its own, and check(mutated, rng, load, directory)
    returns its outcome or raises Failure, which is raised again naming the case. A case over
    CASE_TIMEOUT_S raises Hang; one case in 20 may load from a path in a temporary directory."""
    files = list(files.items())
    outcomes = collections.Counter()

    def on_alarm(signum, frame):
        raise Hang()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        with tempfile.TemporaryDirectory() as directory:
            for case in range(cases):
                rng = random.Random(f"{seed}:{case}")
                name, data = files[case % len(files)]
                mutated = mutate(data, rng)
                signal.alarm(CASE_TIMEOUT_S)
                try:
                    outcomes[check(mutated, rng, load, directory if case % 20 == 0 else None)] += 1
                except Failure as e:
                    raise Failure(f"case {case} (seed {seed}, from {name!r}): {e}\n  file: {mutated[:400]!r}") from e
                finally:
                    signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return outcomes


def cap_address_space():
    with open("/proc/self/status") as f:
        size_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    limit = size_kb * 1024 + ADDRESS_SPACE_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    return limit


def main(name=__name__, run=run, matched="matched their headers", rejected="with ValueError"):
    """The command line of a loader fuzzer (this one's, and fuzz_load_zip.py's): run(cases, seed)
    under the address-space cap; exit status 0 when every case kept the contract."""
    parser = argparse.ArgumentParser(description=sys.modules[run.__module__].__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=int(os.environ.get("TP_FUZZ_CASES", "10000")))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tp.ones(1000, 1000).sum()  # start the intra-op threads before the cap, so their stacks are counted
    limit = cap_address_space()
    try:
        outcomes = run(args.cases, args.seed)
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(f"{name}: {sum(outcomes.values())} cases, seed {args.seed}: {outcomes['loaded']} loaded and {matched}, "
          f"{outcomes['rejected']} rejected {rejected} (address space capped at {limit >> 20} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main("fuzz_load"))

"""Mutation fuzzing of tensorplay.load (tests/fuzz/fuzz_load.py), on a short budget; `make fuzz`
runs the long one. The fuzzer runs in a subprocess with its address space capped, so a crash or a
large allocation fails the test instead of taking pytest down. The fuzzer's oracle is checked
here too: a loader that breaks the contract in any of the ways it looks for must be caught."""

import collections
import io
import random
import subprocess
import sys

import pytest

import fuzz_scripts
import tensorplay as tp

FUZZER = fuzz_scripts.FUZZ_DIR / "fuzz_load.py"
SHORT_BUDGET = 800

fuzz_load = fuzz_scripts.load("fuzz_load")


def run_fuzzer(*args):
    return subprocess.run([sys.executable, str(FUZZER), *args], capture_output=True, text=True, timeout=300)


def test_mutated_checkpoints_load_consistently_or_raise_load_value_errors():
    result = run_fuzzer("--cases", str(SHORT_BUDGET), "--seed", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert line.startswith(f"fuzz_load: {SHORT_BUDGET} cases"), line
    loaded = int(line.split(": ")[2].split()[0])
    # Both outcomes occur: mutations that only touch values load, the rest are refused.
    assert 0 < loaded < SHORT_BUDGET // 2, line


def test_mutations_are_deterministic_and_cover_every_kind():
    data = fuzz_load.checkpoints()["state dict"]
    first = [fuzz_load.mutate(data, random.Random(f"0:{case}")) for case in range(200)]
    second = [fuzz_load.mutate(data, random.Random(f"0:{case}")) for case in range(200)]
    assert first == second
    assert len(set(first)) > 150
    used = collections.Counter()
    rng = random.Random(0)
    for _ in range(2000):
        mutation = rng.choice(fuzz_load.MUTATIONS)
        used[mutation.__name__] += 1
        mutation(data, rng)  # each applies to a valid file without raising
    assert set(used) == {m.__name__ for m in fuzz_load.MUTATIONS}


def loader_changing_tensors(change):
    """tp.load, with change applied to every tensor of a flat state dict."""
    def load(f):
        obj = tp.load(f)
        return type(obj)((k, change(v)) for k, v in obj.items())
    return load


def reshaped_load(f):
    return loader_changing_tensors(lambda t: t.reshape(-1))(f)


def shifted_load(f):
    return loader_changing_tensors(lambda t: t + 1 if t.dtype == tp.float32 else t)(f)


def grad_load(f):
    return loader_changing_tensors(lambda t: t.requires_grad_() if t.is_floating_point() else t)(f)


def key_error_load(f):
    raise KeyError("dtype")


def unprefixed_load(f):
    raise ValueError("bad file")


BROKEN_LOADERS = {
    "another exception type": (key_error_load, "KeyError"),
    "ValueError without the prefix": (unprefixed_load, "prefix"),
    "wrong shapes": (reshaped_load, "the header says"),
    "wrong values": (shifted_load, "not the bytes"),
    "tensors that require grad": (grad_load, "requires grad"),
}


@pytest.mark.parametrize("name", list(BROKEN_LOADERS))
def test_the_oracle_catches_a_broken_loader(name):
    load, message = BROKEN_LOADERS[name]
    data = fuzz_load.checkpoints()["state dict"]
    with pytest.raises(fuzz_load.Failure, match=message):
        for seed in range(20):  # some sources (a path, a stream) are drawn at random
            fuzz_load.check(data, random.Random(seed), load=load)


def test_the_oracle_accepts_the_real_loader_on_valid_files(tmp_path):
    for name, data in fuzz_load.checkpoints().items():
        for seed in range(10):
            assert fuzz_load.check(data, random.Random(seed), directory=str(tmp_path)) == "loaded", name


def test_a_large_allocation_fails_under_the_address_space_cap():
    # What a forged size that slipped past load's checks would do: it must surface, not swap.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import fuzz_load\n"
            "fuzz_load.cap_address_space()\n"
            "try:\n"
            "    fuzz_load.run(3, 0, load=lambda f: bytearray(1 << 32))\n"
            "except fuzz_load.Failure as e:\n"
            "    print(e)\n")
    result = subprocess.run([sys.executable, "-c", code, str(FUZZER.parent)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "load raised MemoryError" in result.stdout, result.stdout


def test_a_truncated_stream_is_rejected_like_a_truncated_file():
    data = fuzz_load.checkpoints()["nested"]
    for cut in (0, 7, 8, 50, len(data) - 1):
        for source in (io.BytesIO(data[:cut]), fuzz_load.Stream(data[:cut])):
            with pytest.raises(ValueError, match="^load:"):
                tp.load(source)


# ---- PyTorch's zip format (tests/fuzz/fuzz_load_zip.py) ----

ZIP_FUZZER = fuzz_scripts.FUZZ_DIR / "fuzz_load_zip.py"
fuzz_load_zip = fuzz_scripts.load("fuzz_load_zip")


def test_mutated_zip_checkpoints_load_consistently_or_raise_load_errors():
    result = subprocess.run([sys.executable, str(ZIP_FUZZER), "--cases", str(SHORT_BUDGET), "--seed", "0"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert line.startswith(f"fuzz_load_zip: {SHORT_BUDGET} cases"), line
    loaded = int(line.split(": ")[2].split()[0])
    assert 0 < loaded < SHORT_BUDGET // 2, line


def test_zip_mutations_are_deterministic_and_each_applies_to_a_valid_archive():
    data = fuzz_load_zip.checkpoints()["state dict"]
    first = [fuzz_load_zip.mutate(data, random.Random(f"0:{case}")) for case in range(100)]
    assert first == [fuzz_load_zip.mutate(data, random.Random(f"0:{case}")) for case in range(100)]
    assert len(set(first)) > 80
    rng = random.Random(0)
    for mutation in fuzz_load_zip.MUTATIONS:  # each changes a valid archive without raising
        assert any(mutation(data, rng) != data for _ in range(20)), mutation.__name__


def zip_loader_changing(change):
    def load(f):
        return change(tp.load(f))
    return load


def unprefixed_runtime_error_load(f):
    raise RuntimeError("bad file")


ZIP_BROKEN_LOADERS = {
    "another exception type": (key_error_load, "KeyError"),
    "a RuntimeError without the prefix": (unprefixed_runtime_error_load, "RuntimeError"),
    "wrong values": (zip_loader_changing(lambda obj: collections.OrderedDict(
        (k, v + 1 if v.dtype == tp.float32 else v) for k, v in obj.items())), "not the bytes"),
    "a lost key": (zip_loader_changing(lambda obj: collections.OrderedDict(list(obj.items())[1:])), "keys"),
    "a transposed tensor": (zip_loader_changing(lambda obj: collections.OrderedDict(
        (k, v.t() if v.dim() == 2 else v) for k, v in obj.items())), "shape"),
}


@pytest.mark.parametrize("name", list(ZIP_BROKEN_LOADERS))
def test_the_zip_oracle_catches_a_broken_loader(name):
    load, message = ZIP_BROKEN_LOADERS[name]
    data = fuzz_load_zip.checkpoints()["state dict"]
    with pytest.raises(fuzz_load_zip.Failure, match=message):
        fuzz_load_zip.check(data, random.Random(0), load=load)


def test_the_zip_oracle_accepts_the_real_loader_on_valid_archives(tmp_path):
    for name, data in fuzz_load_zip.checkpoints().items():
        for seed in range(5):
            assert fuzz_load_zip.check(data, random.Random(seed), directory=str(tmp_path)) == "loaded", name


def test_a_storage_record_claiming_more_bytes_than_the_archive_is_refused_before_allocating():
    data = fuzz_load_zip.checkpoints()["tensor"]
    at = data.index(b"PK\x01\x02")  # the first central directory entry
    forged = None
    while at >= 0:
        name = data[at + 46:at + 46 + int.from_bytes(data[at + 28:at + 30], "little")]
        if name.endswith(b"/data/0"):
            forged = data[:at + 24] + (0x7FFFFFF0).to_bytes(4, "little") + data[at + 28:]
        at = data.find(b"PK\x01\x02", at + 1)
    with pytest.raises(RuntimeError, match=r"^load: archive/data/0 claims 2147483632 bytes, more than the archive"):
        tp.load(io.BytesIO(forged))

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

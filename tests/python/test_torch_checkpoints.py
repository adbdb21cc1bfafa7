"""PyTorch's checkpoint format both ways. Checkpoints written by torch.save load in tensorplay.load:
state dicts, optimizer and scheduler state and nested containers, every dtype, shared storages,
parameters; safe by default (an allow-list that refuses any other global and runs nothing),
map_location's forms, mmap, and corrupt archives. And tensorplay.save writes that format: torch.load,
with its default weights_only=True and with mmap=True, reads it, and so does tensorplay.load."""

import collections
import io
import os
import pickle
import zipfile

import ml_dtypes
import numpy as np
import pytest
import torch

import tensorplay as tp

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def torch_save(obj, tmp_path, name="checkpoint.pt"):
    path = tmp_path / name
    torch.save(obj, path)
    return path


def same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.requires_grad == theirs.requires_grad
    expected = theirs.detach()
    if expected.dtype == torch.bfloat16:
        assert np.array_equal(ours.detach().float().numpy(), expected.float().numpy(), equal_nan=True)
    else:
        assert np.array_equal(ours.detach().numpy(), expected.numpy(), equal_nan=True)


def test_a_model_and_optimizer_checkpoint_loads_into_tensorplay_objects(tmp_path):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    net(torch.randn(3, 4)).sum().backward()
    opt.step()
    scheduler.step()
    path = torch_save({"model": net.state_dict(), "optimizer": opt.state_dict(), "scheduler": scheduler.state_dict(),
                       "epoch": 7, "loss": 0.25}, tmp_path)

    checkpoint = tp.load(path)
    assert checkpoint["epoch"] == 7 and checkpoint["loss"] == 0.25
    assert isinstance(checkpoint["model"], collections.OrderedDict)
    ours = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 2))
    ours.load_state_dict(checkpoint["model"])
    for (name, p), (_, q) in zip(ours.named_parameters(), net.named_parameters()):
        same(p.detach(), q.detach())
    our_opt = tp.optim.Adam(ours.parameters(), lr=1e-3)
    our_opt.load_state_dict(checkpoint["optimizer"])
    our_scheduler = tp.optim.lr_scheduler.StepLR(our_opt, step_size=2, gamma=0.5)
    our_scheduler.load_state_dict(checkpoint["scheduler"])
    assert our_scheduler.last_epoch == 1 and our_scheduler.get_last_lr() == scheduler.get_last_lr()
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    ours(tp.from_numpy(x)).sum().backward()
    net.zero_grad()
    net(torch.from_numpy(x)).sum().backward()
    our_opt.step()
    opt.step()
    for p, q in zip(ours.parameters(), net.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_survives_exactly(tmp_path, dtype):
    values = torch.tensor([[0.0, -1.5, 3.25], [1e-3, float("inf"), 7.0]]) if dtype != "bool" else \
        torch.tensor([[True, False, True], [False, False, True]])
    if dtype.startswith("complex"):
        values = torch.complex(values, -values)
    t = values.to(getattr(torch, dtype))
    same(tp.load(torch_save({"t": t, "view": t[:, 1:].t()}, tmp_path))["t"], t)


def test_views_saved_together_share_memory_again(tmp_path):
    base = torch.arange(12.0)
    checkpoint = tp.load(torch_save({"base": base, "rows": base.view(3, 4), "column": base.view(3, 4)[:, 1]},
                                    tmp_path))
    same(checkpoint["column"], base.view(3, 4)[:, 1])
    checkpoint["base"][5] = 100.0
    assert checkpoint["rows"][1, 1].item() == 100.0 and checkpoint["column"][1].item() == 100.0


def test_parameters_gradients_flags_and_small_objects(tmp_path):
    obj = {"param": torch.nn.Parameter(torch.ones(2)), "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
           "leaf": torch.ones(3, requires_grad=True), "size": torch.Size([2, 3]), "dtype": torch.bfloat16,
           "device": torch.device("cpu"), "nested": [(1, 2.5, "s", None, True, b"bytes", {3, 4}, 1 + 2j)]}
    loaded = tp.load(torch_save(obj, tmp_path))
    assert isinstance(loaded["param"], tp.nn.Parameter) and loaded["param"].requires_grad
    assert isinstance(loaded["frozen"], tp.nn.Parameter) and not loaded["frozen"].requires_grad
    assert loaded["leaf"].requires_grad and loaded["leaf"].is_leaf
    assert loaded["size"] == (2, 3) and isinstance(loaded["size"], tp.Size)
    assert loaded["dtype"] is tp.bfloat16 and loaded["device"] == tp.device("cpu")
    assert loaded["nested"] == [(1, 2.5, "s", None, True, b"bytes", {3, 4}, 1 + 2j)]


class Marker:
    """A class a checkpoint may name: loads only when allowed."""

    def __init__(self, value):
        self.value = value


def test_a_checkpoint_naming_os_system_is_refused_and_runs_nothing(tmp_path):
    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {witness}",)

    path = torch_save({"weights": torch.ones(2), "payload": Payload()}, tmp_path)
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed.*GLOBAL posix\.system was not an "
                                                     r"allowed global"):
        tp.load(path)
    assert not witness.exists()


def test_weights_only_false_and_the_allow_list(tmp_path):
    path = torch_save({"marker": Marker(3), "t": torch.ones(1)}, tmp_path)
    with pytest.raises(pickle.UnpicklingError, match="Marker"):
        tp.load(path)
    assert tp.load(path, weights_only=False)["marker"].value == 3
    with tp.serialization.safe_globals([Marker]):
        assert tp.load(path)["marker"].value == 3
    with pytest.raises(pickle.UnpicklingError):
        tp.load(path)
    tp.serialization.add_safe_globals([Marker])
    try:
        assert Marker in tp.serialization.get_safe_globals()
        assert tp.load(path)["marker"].value == 3
    finally:
        tp.serialization.clear_safe_globals()
    assert tp.serialization.get_safe_globals() == []


def with_location(path, location, tmp_path):
    """The checkpoint at path rewritten as if its storages had been saved on `location`."""
    out = tmp_path / "moved.pt"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("data.pkl"):
                encoded = location.encode()
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X" + len(encoded).to_bytes(4, "little") + encoded)
            target.writestr(info, data)
    return out


def test_map_location_forms(tmp_path):
    path = torch_save({"w": torch.arange(4.0)}, tmp_path)
    on_cuda = with_location(path, "cuda:0", tmp_path)
    with pytest.raises(RuntimeError, match="map_location"):
        tp.load(on_cuda)
    for map_location in ("cpu", tp.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage,
                         lambda storage, location: storage.cpu()):
        assert tp.load(on_cuda, map_location=map_location)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tp.load(path, map_location=lambda storage, location: None)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="CUDA"):
        tp.load(path, map_location="cuda")


def test_mmap_maps_storages_copy_on_write(tmp_path):
    t = torch.randn(64, 32)
    path = torch_save({"t": t, "u": torch.arange(5)}, tmp_path)
    before = path.read_bytes()
    loaded = tp.load(path, mmap=True)
    same(loaded["t"], t)
    same(loaded["u"], torch.arange(5))
    loaded["t"].zero_()
    assert path.read_bytes() == before
    with open(path, "rb") as f:
        same(tp.load(f, mmap=True)["t"], t)
    with pytest.raises(ValueError, match="mmap"):
        tp.load(io.BytesIO(before), mmap=True)


def test_file_objects_and_safetensors_still_load(tmp_path):
    path = torch_save({"w": torch.ones(2)}, tmp_path)
    assert tp.load(io.BytesIO(path.read_bytes()))["w"].tolist() == [1.0, 1.0]
    tp.serialization.save_file({"w": tp.ones(2)}, tmp_path / "ours.safetensors")
    assert tp.load(tmp_path / "ours.safetensors", map_location="cpu")["w"].tolist() == [1.0, 1.0]


def rewrite(path, tmp_path, change):
    """The checkpoint with its records changed by change(name, data) -> data or None (dropped)."""
    out = tmp_path / "changed.pt"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = change(info.filename, source.read(info))
            if data is not None:
                target.writestr(info, data)
    return out


def test_corrupt_checkpoints_fail_cleanly(tmp_path):
    path = torch_save({"w": torch.arange(6.0).view(2, 3)}, tmp_path)
    raw = path.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(raw[:len(raw) // 2])
    with pytest.raises((RuntimeError, ValueError)):
        tp.load(tmp_path / "truncated.pt")
    missing = rewrite(path, tmp_path, lambda name, data: None if name.endswith("data/0") else data)
    with pytest.raises(RuntimeError, match="missing"):
        tp.load(missing)
    short = rewrite(path, tmp_path, lambda name, data: data[:8] if name.endswith("data/0") else data)
    with pytest.raises(RuntimeError, match="holds 2 elements"):
        tp.load(short)
    garbled = rewrite(path, tmp_path, lambda name, data: data[:20] + b"\xff" * 10 if name.endswith("data.pkl") else data)
    with pytest.raises(pickle.UnpicklingError):
        tp.load(garbled)


def test_a_view_past_its_storage_is_refused(tmp_path):
    path = torch_save({"w": torch.arange(6.0)}, tmp_path)
    # The stored size (6,) becomes (9,): BININT1 6 inside the size tuple.
    bad = rewrite(path, tmp_path, lambda name, data: data.replace(b"K\x06\x85", b"K\x09\x85")
                  if name.endswith("data.pkl") else data)
    with pytest.raises(pickle.UnpicklingError, match="reaches element 8 of a storage of 6"):
        tp.load(bad)


# ---- tensorplay.save: PyTorch's format ----

def test_torch_loads_what_tensorplay_saves_with_weights_only(tmp_path):
    net = tp.nn.Linear(3, 2)
    opt = tp.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(tp.ones(1, 3)).sum().backward()
    opt.step()
    base = tp.arange(12.0)
    obj = {"model": net.state_dict(), "optimizer": opt.state_dict(), "views": [base, base.view(3, 4)[:, 1]],
           "param": tp.nn.Parameter(tp.ones(2)), "leaf": tp.ones(2, requires_grad=True), "size": tp.Size([2, 3]),
           "dtype": tp.float16, "device": tp.device("cpu"), "nested": (1, 2.5, "s", None, True, b"x", 1 - 1j)}
    tp.save(obj, tmp_path / "ours.pt")
    for theirs in (torch.load(tmp_path / "ours.pt"), torch.load(tmp_path / "ours.pt", mmap=True)):
        assert isinstance(theirs["model"], collections.OrderedDict)
        same(net.weight.detach(), theirs["model"]["weight"])
        same(opt.state_dict()["state"][0]["momentum_buffer"], theirs["optimizer"]["state"][0]["momentum_buffer"])
        assert theirs["optimizer"]["param_groups"][0]["momentum"] == 0.9
        assert isinstance(theirs["param"], torch.nn.Parameter) and theirs["leaf"].requires_grad
        assert theirs["size"] == torch.Size([2, 3]) and theirs["dtype"] is torch.float16
        assert theirs["device"] == torch.device("cpu") and theirs["nested"] == obj["nested"]
        theirs["views"][0][5] = 100.0  # the views share their storage in torch too
        assert theirs["views"][1][1].item() == 100.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips_through_torch(tmp_path, dtype):
    t = torch.tensor([[0.0, -1.5, 3.25], [1e-3, float("inf"), 7.0]])
    t = t.to(getattr(torch, dtype)) if not dtype.startswith("complex") else torch.complex(t, -t).to(getattr(torch, dtype))
    ours = tp.load(torch_save({"t": t}, tmp_path))["t"]
    tp.save({"t": ours, "strided": ours.t()}, tmp_path / "back.pt")
    theirs = torch.load(tmp_path / "back.pt")
    same(ours, theirs["t"])
    same(ours.t(), theirs["strided"])


def test_tensorplay_round_trip_and_file_objects(tmp_path):
    obj = {"w": tp.randn(3, 4), "steps": [1, 2], "nested": {"b": tp.ones(2, dtype=tp.bfloat16)}}
    buffer = io.BytesIO()
    tp.save(obj, buffer)
    assert buffer.getvalue().startswith(b"PK\x03\x04")
    tp.save(obj, tmp_path / "path.pt")
    for source in (io.BytesIO(buffer.getvalue()), tmp_path / "path.pt", str(tmp_path / "path.pt")):
        back = tp.load(source)
        assert back["steps"] == [1, 2] and back["w"].tolist() == obj["w"].tolist()
        assert back["nested"]["b"].dtype == tp.bfloat16
    buffer2 = io.BytesIO()
    tp.save(obj, buffer2)
    assert buffer2.getvalue() == buffer.getvalue()  # the same object makes the same bytes


def test_whole_objects_need_weights_only_false(tmp_path):
    model = tp.nn.Sequential(tp.nn.Linear(2, 2))
    tp.save({"model": model, "array": np.arange(3)}, tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        tp.load(tmp_path / "whole.pt")
    back = tp.load(tmp_path / "whole.pt", weights_only=False)
    assert isinstance(back["model"], tp.nn.Sequential) and back["array"].tolist() == [0, 1, 2]
    same(back["model"][0].weight.detach(), torch.from_numpy(model[0].weight.detach().numpy()))


def test_safetensors_layout_stays_available(tmp_path):
    state = {"w": tp.arange(4.0)}
    tp.serialization.save_file(state, tmp_path / "w.safetensors")
    assert not (tmp_path / "w.safetensors").read_bytes().startswith(b"PK")
    assert tp.serialization.load_file(tmp_path / "w.safetensors")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tp.load(tmp_path / "w.safetensors")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="zip format"):
        tp.save(state, tmp_path / "old.pt", _use_new_zipfile_serialization=False)


def test_the_legacy_format_loads(tmp_path):
    torch.manual_seed(0)
    obj = {"w": torch.randn(3, 2), "b": torch.ones(2, dtype=torch.bfloat16), "step": 4,
           "model": torch.nn.Linear(2, 2).state_dict(), "shared": [torch.arange(4.0)] * 2}
    path = tmp_path / "legacy.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=False)
    for source in (path, io.BytesIO(path.read_bytes())):
        loaded = tp.load(source)
        same(loaded["w"], obj["w"])
        same(loaded["b"], obj["b"])
        same(loaded["model"]["weight"], obj["model"]["weight"])
        assert loaded["step"] == 4 and loaded["shared"][0] is loaded["shared"][1]
    with pytest.raises(RuntimeError, match="mmap"):
        tp.load(path, mmap=True)
    raw = path.read_bytes()
    (tmp_path / "cut.pt").write_bytes(raw[:-5])
    with pytest.raises(RuntimeError, match="truncated|element count"):  # (the last storage may be tiny)
        tp.load(tmp_path / "cut.pt")


def test_a_legacy_checkpoint_naming_os_system_runs_nothing(tmp_path):
    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {witness}",)

    torch.save({"payload": Payload()}, tmp_path / "evil.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        tp.load(tmp_path / "evil.pt")
    assert not witness.exists()


def mutated(raw, rng):
    """raw with one to three seeded corruptions: bit flips, byte runs overwritten, truncation, garbage."""
    data = bytearray(raw)
    for _ in range(rng.integers(1, 4)):
        kind = rng.integers(0, 4)
        if kind == 0 and data:
            at = rng.integers(0, len(data))
            data[at] ^= 1 << rng.integers(0, 8)
        elif kind == 1 and data:
            at = rng.integers(0, len(data))
            data[at:at + 4] = rng.integers(0, 256, 4, dtype=np.uint8).tobytes()
        elif kind == 2:
            del data[rng.integers(0, len(data) + 1):]
        else:
            data += rng.integers(0, 256, rng.integers(1, 64), dtype=np.uint8).tobytes()
    return bytes(data)


def with_pickle(path, data):
    """The checkpoint at path with data.pkl replaced (zipped again, so its checksum is right)."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            target.writestr(info, data if info.filename.endswith("data.pkl") else source.read(info))
    return out.getvalue()


def test_mutated_checkpoints_load_or_raise_load_errors(tmp_path):
    """Corrupt archives, and corrupt pickles inside intact archives, in both formats: load returns or
    raises RuntimeError or pickle.UnpicklingError, never anything else (and never crashes)."""
    torch.manual_seed(0)
    obj = {"model": torch.nn.Linear(3, 2).state_dict(), "views": [torch.arange(6.0), torch.arange(6.0)[2:]],
           "meta": {"step": 3, "name": "x", "lr": 0.1}, "half": torch.ones(4, dtype=torch.float16)}
    path = torch_save(obj, tmp_path)
    torch.save(obj, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with zipfile.ZipFile(path) as archive:
        pickled = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    sources = [path.read_bytes(), (tmp_path / "legacy.pt").read_bytes()]
    rng = np.random.default_rng(2026)
    outcomes = collections.Counter()
    for case in range(300):
        kind = case % 3
        blob = with_pickle(path, mutated(pickled, rng)) if kind == 2 else mutated(sources[kind], rng)
        try:
            result = tp.load(io.BytesIO(blob))
        except (RuntimeError, pickle.UnpicklingError):
            outcomes["raised"] += 1
        except ValueError as e:  # a blob that no longer starts like a checkpoint is read as safetensors
            assert str(e).startswith("load:"), (case, e)
            outcomes["not a checkpoint"] += 1
        else:
            outcomes["loaded"] += 1
            for leaf in (result.values() if isinstance(result, dict) else []):
                if isinstance(leaf, tp.Tensor):
                    leaf.sum()  # every element it claims is readable
    assert outcomes["raised"] > 100 and outcomes["loaded"] > 0, outcomes

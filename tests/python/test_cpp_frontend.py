"""The C++ front end (tp::nn modules, tp::optim optimizers) against the Python modules: the program
tests/cpp_frontend/frontend_parity.cpp builds modules after manual_seed(0), runs them and trains an
MLP; here tensorplay.nn builds the same modules from the same seed (so the initial weights must be
equal, draw for draw), and torch.nn gets those weights: outputs, gradients, running statistics and
optimizer trajectories must agree with both."""

import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

import tensorplay as tp

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The build whose program is tested: make test's (build/dev) unless the Makefile names another.
PROGRAM = pathlib.Path(os.environ.get("TP_BUILD_DIR", ROOT / "build" / "dev")) / "frontend_parity"


def run_program(*args):
    assert PROGRAM.exists(), f"{PROGRAM} is missing: build the C++ tests first (make build)"
    out = subprocess.run([str(PROGRAM), *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    tensors = {}
    for line in out.stdout.splitlines():
        name, dim, *rest = line.split()
        dim = int(dim)
        shape = tuple(int(s) for s in rest[:dim])
        tensors[name] = np.array([float(v) for v in rest[dim:]], dtype=np.float64).reshape(shape)
    return tensors


def as_numpy(t):
    return np.asarray(t.detach().double().numpy())


def check_equal(cpp, name, t):
    np.testing.assert_array_equal(cpp[name], as_numpy(t), err_msg=name)


def check_close(cpp, name, t, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(cpp[name], as_numpy(t), rtol=rtol, atol=atol, err_msg=name)


def modules(nn):
    """The program's modules, built in its order (the order decides which draws each gets)."""
    features = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2))
    return features, nn.Linear(36, 5), nn.LayerNorm(5), nn.Embedding(7, 5, padding_idx=2), nn.Dropout(0.5)


def forward(lib, mods, images, ids):
    features, head, norm, embedding, dropout = mods
    y = norm(head(lib.flatten(features(images), 1)))
    dropout.eval()
    out = (y * y).sum() + dropout(embedding(ids)).sum()
    out.backward()
    return out, y


@pytest.fixture(scope="module")
def cpp_modules():
    return run_program("modules")


def test_modules_start_from_the_weights_python_draws(cpp_modules):
    tp.manual_seed(0)
    mods = modules(tp.nn)
    for prefix, module in zip(("features.", "head.", "norm.", "embedding."), mods):
        state = module.state_dict()
        assert [k for k in cpp_modules if k.startswith(prefix)] == [prefix + k for k in state]
        for key, value in state.items():
            check_equal(cpp_modules, prefix + key, value)


def test_modules_compute_what_python_modules_compute(cpp_modules):
    tp.manual_seed(0)
    mods = modules(tp.nn)
    images = tp.randn(2, 2, 6, 6)
    ids = tp.tensor([1, 2, 6])
    # torch's modules with the same weights: the oracle.
    torch_mods = modules(torch.nn)
    for mine, theirs in zip(mods, torch_mods):
        theirs.load_state_dict({k: torch.from_numpy(as_numpy(v)).to(torch.float32 if v.is_floating_point()
                                                                      else torch.int64)
                                for k, v in mine.state_dict().items()})
    out, y = forward(tp, mods, images, ids)
    t_out, t_y = forward(torch, torch_mods, torch.from_numpy(images.numpy()), torch.tensor([1, 2, 6]))
    check_equal(cpp_modules, "out", out)
    check_equal(cpp_modules, "y", y)
    check_close(cpp_modules, "out", t_out)
    check_close(cpp_modules, "y", t_y)
    for key, value in mods[0].state_dict().items():
        check_equal(cpp_modules, "after.features." + key, value)
        check_close(cpp_modules, "after.features." + key, torch_mods[0].state_dict()[key])
    named = [("features", 0), ("head", 1), ("norm", 2)]
    for prefix, i in named:
        for (key, p), (_, tp_) in zip(mods[i].named_parameters(), torch_mods[i].named_parameters()):
            check_equal(cpp_modules, f"grad.{prefix}.{key}", p.grad)
            check_close(cpp_modules, f"grad.{prefix}.{key}", tp_.grad, atol=1e-5)
    check_equal(cpp_modules, "grad.embedding.weight", mods[3].weight.grad)
    mods[0].eval()
    torch_mods[0].eval()
    check_equal(cpp_modules, "eval", mods[0](images))
    check_close(cpp_modules, "eval", torch_mods[0](torch.from_numpy(images.numpy())))


def optimizer(lib, name, params):
    if name == "sgd":
        return lib.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    if name == "adam":
        return lib.optim.Adam(params, lr=1e-2, betas=(0.8, 0.99))
    return lib.optim.AdamW(params, lr=1e-2, amsgrad=True)


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw"])
def test_optimizers_follow_python_trajectories(name):
    cpp = run_program("train", name)
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.Tanh(), tp.nn.Linear(8, 3))
    inputs, targets = tp.randn(16, 4), tp.randint(0, 3, (16,))
    torch_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    for key, value in model.state_dict().items():
        check_equal(cpp, "initial." + key, value)
        torch_model.state_dict()[key].copy_(torch.from_numpy(value.numpy()))
    runs = [(tp, model, inputs, targets), (torch, torch_model, torch.from_numpy(inputs.numpy()),
                                           torch.from_numpy(targets.numpy()))]
    for lib, m, x, t in runs:
        opt = optimizer(lib, name, m.parameters())
        for step in range(5):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(x), t)
            loss.backward()
            opt.step()
            check = check_equal if lib is tp else check_close
            check(cpp, f"loss.{step}", loss)
        for key, value in m.state_dict().items():
            (check_equal if lib is tp else check_close)(cpp, "final." + key, value)


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


def test_a_state_saved_in_cpp_loads_in_python(tmp_path):
    path = tmp_path / "mlp.safetensors"
    run_program("save", str(path))
    tp.manual_seed(0)
    expected = mlp(tp).state_dict()
    for loaded in (tp.serialization.load_file(path), tp.load(path)):
        assert list(loaded) == list(expected)
        for key, value in expected.items():
            assert loaded[key].dtype == value.dtype and tp.equal(loaded[key], value), key
    model = mlp(tp)
    model.load_state_dict(tp.serialization.load_file(path))  # into a module, as a user would


def test_a_state_saved_in_python_loads_in_cpp(tmp_path):
    path = tmp_path / "mlp.safetensors"
    tp.manual_seed(1)
    model = mlp(tp)
    tp.serialization.save_file(model.state_dict(), path)
    cpp = run_program("load", str(path))
    for key, value in model.state_dict().items():
        check_equal(cpp, "loaded." + key, value)
    check_equal(cpp, "output", model(tp.ones(2, 4)))

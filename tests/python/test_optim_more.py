"""Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD against torch.optim.

Each configuration runs 50 steps of a linear least-squares problem (weights and bias, fixed data)
in both libraries from the same float32 parameters, gradients from each library's autograd; after
every step every parameter must match torch's to float32 rounding (test_trajectory_matches_torch,
ids `<Optimizer>-<options>`). Then the state_dict (state keys and tensors, group keys), a
state_dict round trip, torch's state loaded into tensorplay, defaults, and constructor validation.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, same_outcome, tp_tensor

STEPS = 50
TOL = dict(rtol=1e-5, atol=1e-6)
NAMES = ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"]

RNG = np.random.default_rng(1)
X = RNG.standard_normal((32, 4)).astype(np.float32)
Y = (X @ RNG.standard_normal((4, 3)) + 0.1 * RNG.standard_normal((32, 3))).astype(np.float32)
W0 = (0.5 * RNG.standard_normal((3, 4))).astype(np.float32)
B0 = (0.5 * RNG.standard_normal(3)).astype(np.float32)


def make_params(lib):
    if lib is torch:
        return [torch.tensor(W0.copy(), requires_grad=True), torch.tensor(B0.copy(), requires_grad=True)]
    return [tp_tensor(W0, requires_grad=True), tp_tensor(B0, requires_grad=True)]


def groups_of(params, split):
    if not split:
        return params
    return [{"params": [params[0]], "lr": split}, {"params": [params[1]]}]


def loss_step(lib, params, optimizer):
    w, b = params
    x, y = (torch.from_numpy(X), torch.from_numpy(Y)) if lib is torch else (tp_tensor(X), tp_tensor(Y))
    optimizer.zero_grad()
    loss = ((x.matmul(w.t()) + b - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss


def config(id, name, split=None, **kwargs):
    return pytest.param(name, split, kwargs, id=f"{name}-{id}")


CONFIGS = [
    config("default", "Adamax"),
    config("lr_betas", "Adamax", lr=0.05, betas=(0.8, 0.95)),
    config("weight_decay", "Adamax", lr=0.02, weight_decay=0.1),
    config("maximize", "Adamax", lr=0.01, maximize=True),
    config("eps_wd_maximize", "Adamax", lr=0.02, eps=1e-2, weight_decay=0.05, maximize=True),
    config("two_groups", "Adamax", split=0.05, lr=0.01),
    config("default", "NAdam"),
    config("lr_betas", "NAdam", lr=0.01, betas=(0.8, 0.95)),
    config("weight_decay", "NAdam", lr=0.02, weight_decay=0.1),
    config("decoupled_weight_decay", "NAdam", lr=0.02, weight_decay=0.1, decoupled_weight_decay=True),
    config("momentum_decay", "NAdam", lr=0.02, momentum_decay=0.05),
    config("maximize", "NAdam", lr=0.01, maximize=True),
    config("two_groups", "NAdam", split=0.05, lr=0.01),
    config("default", "RAdam"),
    config("lr_betas", "RAdam", lr=0.05, betas=(0.8, 0.9)),
    config("weight_decay", "RAdam", lr=0.02, weight_decay=0.1),
    config("decoupled_weight_decay", "RAdam", lr=0.02, weight_decay=0.1, decoupled_weight_decay=True),
    config("maximize", "RAdam", lr=0.01, maximize=True),
    config("two_groups", "RAdam", split=0.05, lr=0.01),
    config("default", "Adadelta"),
    config("rho_eps", "Adadelta", lr=0.5, rho=0.8, eps=1e-4),
    config("weight_decay", "Adadelta", weight_decay=0.1),
    config("maximize", "Adadelta", lr=0.5, maximize=True),
    config("two_groups", "Adadelta", split=0.3),
    config("default", "Rprop"),
    config("etas_step_sizes", "Rprop", lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)),
    config("maximize", "Rprop", lr=0.001, maximize=True),
    config("two_groups", "Rprop", split=0.001, lr=0.02),
    config("default", "ASGD"),
    config("lr_lambd_alpha", "ASGD", lr=0.05, lambd=1e-2, alpha=0.5),
    config("t0_averaging", "ASGD", lr=0.05, t0=10),
    config("weight_decay", "ASGD", lr=0.05, weight_decay=0.1, t0=20),
    config("maximize", "ASGD", lr=0.005, maximize=True),
    config("two_groups", "ASGD", split=0.02, lr=0.05, t0=5),
]


def make_optimizers(name, split, kwargs):
    t_params, p_params = make_params(torch), make_params(tensorplay)
    t_opt = getattr(torch.optim, name)(groups_of(t_params, split), **kwargs)
    p_opt = getattr(tensorplay.optim, name)(groups_of(p_params, split), **kwargs)
    return t_params, p_params, t_opt, p_opt


def assert_params_match(p_params, t_params, what):
    for i, (p, t) in enumerate(zip(p_params, t_params)):
        assert_same(p.detach(), t.detach(), what=f"parameter {i} {what}", **TOL)


@pytest.mark.parametrize("name, split, kwargs", CONFIGS)
def test_trajectory_matches_torch(name, split, kwargs):
    t_params, p_params, t_opt, p_opt = make_optimizers(name, split, kwargs)
    for step in range(STEPS):
        t_loss = loss_step(torch, t_params, t_opt)
        p_loss = loss_step(tensorplay, p_params, p_opt)
        assert_same(p_loss.detach(), t_loss.detach(), what=f"loss at step {step}", rtol=1e-5, atol=1e-5)
        assert_params_match(p_params, t_params, f"after step {step + 1}")
    assert not np.allclose(t_params[0].detach().numpy(), W0), (
        "the configuration leaves the parameters where they were; the test would prove nothing")
    # State that does not feed back into the parameters (ASGD's average `ax`) is checked here.
    for i, (p, t) in enumerate(zip(p_params, t_params)):
        assert sorted(p_opt.state[p]) == sorted(t_opt.state[t]), f"state keys of parameter {i}"
        for key, value in t_opt.state[t].items():
            assert_same(p_opt.state[p][key], value, what=f"state of parameter {i} [{key!r}] after {STEPS} steps",
                        rtol=1e-5, atol=1e-5)


STATEFUL = [
    config("default", "Adamax", lr=0.02),
    config("decoupled", "NAdam", lr=0.02, weight_decay=0.1, decoupled_weight_decay=True),
    config("default", "RAdam", lr=0.02),
    config("default", "Adadelta"),
    config("default", "Rprop"),
    config("t0", "ASGD", lr=0.05, t0=3),
    config("two_groups", "NAdam", split=0.05, lr=0.01),
]


def _after_steps(name, split, kwargs, steps=7):
    t_params, p_params, t_opt, p_opt = make_optimizers(name, split, kwargs)
    for _ in range(steps):
        loss_step(torch, t_params, t_opt)
        loss_step(tensorplay, p_params, p_opt)
    return t_params, p_params, t_opt, p_opt


@pytest.mark.parametrize("name, split, kwargs", STATEFUL)
def test_state_dict_matches_torch(name, split, kwargs):
    """The same parameters have state, the same keys, tensors equal to torch's (step a float32
    0-dim tensor); the groups carry the same hyperparameters."""
    _, _, t_opt, p_opt = _after_steps(name, split, kwargs)
    t_state, p_state = t_opt.state_dict(), p_opt.state_dict()
    assert sorted(p_state["state"]) == sorted(t_state["state"])
    for index, t_param_state in t_state["state"].items():
        p_param_state = p_state["state"][index]
        assert sorted(p_param_state) == sorted(t_param_state), f"state keys of parameter {index}"
        for key, value in t_param_state.items():
            assert isinstance(value, torch.Tensor)
            assert_same(p_param_state[key], value, what=f"state[{index}][{key!r}]", **TOL)
    assert len(p_state["param_groups"]) == len(t_state["param_groups"])
    for pg, tg in zip(p_state["param_groups"], t_state["param_groups"]):
        assert sorted(pg) == sorted(tg), f"group keys: lacks {set(tg) - set(pg)}, extra {set(pg) - set(tg)}"
        for key, value in tg.items():
            assert pg[key] == value, f"group {key}"


@pytest.mark.parametrize("name, split, kwargs", STATEFUL)
def test_state_dict_round_trip_continues_like_torch(name, split, kwargs):
    """tensorplay's state_dict loaded into a fresh optimizer (over copies of the parameters), and
    torch's state_dict converted and loaded into another, both carry on exactly as torch does."""
    t_params, p_params, t_opt, p_opt = _after_steps(name, split, kwargs)
    saved = p_opt.state_dict()
    torch_saved = t_opt.state_dict()
    resumed, from_torch = [], []
    for source in (saved, {"state": {i: {k: tp_tensor(v) for k, v in s.items()}
                                     for i, s in torch_saved["state"].items()},
                           "param_groups": [dict(g) for g in torch_saved["param_groups"]]}):
        params = [tp_tensor(p.detach(), requires_grad=True) for p in t_params]
        opt = getattr(tensorplay.optim, name)(groups_of(params, split), **kwargs)
        opt.load_state_dict(source)
        (resumed if source is saved else from_torch).append((params, opt))
    for state in saved["state"].values():  # the loaded optimizer must not share these tensors
        for value in state.values():
            with tensorplay.no_grad():
                value.fill_(123.0)
    for step in range(10):
        loss_step(torch, t_params, t_opt)
        for what, ((params, opt),) in (("resumed", resumed), ("from torch's state", from_torch)):
            loss_step(tensorplay, params, opt)
            assert_params_match(params, t_params, f"{what}, step {step + 1}")


@pytest.mark.parametrize("name", NAMES)
def test_defaults_match_torch(name):
    t = getattr(torch.optim, name)(make_params(torch)).defaults
    p = getattr(tensorplay.optim, name)(make_params(tensorplay)).defaults
    assert p == t


@pytest.mark.parametrize("name", NAMES)
def test_keyword_flags_accepted_like_torch(name):
    def scenario(lib):
        opt = getattr(lib.optim, name)(make_params(lib), foreach=False, maximize=True, differentiable=False,
                                       capturable=False)
        return sorted(opt.param_groups[0])

    same_outcome(scenario)


@pytest.mark.parametrize("name", NAMES)
def test_frozen_parameters_get_no_state_like_torch(name):
    def scenario(lib):
        params = make_params(lib)
        opt = getattr(lib.optim, name)(params)
        ((params[0] * 2).sum()).backward()
        opt.step()
        return [sorted(opt.state[p]) if p in opt.state else None for p in params]

    same_outcome(scenario)


VALIDATION = [
    ("Adamax", {"lr": -1.0}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, 1.0)}), ("Adamax", {"betas": (-0.1, 0.9)}), ("Adamax", {"weight_decay": -0.1}),
    ("NAdam", {"lr": -1.0}), ("NAdam", {"eps": -1.0}), ("NAdam", {"betas": (1.0, 0.9)}),
    ("NAdam", {"betas": (0.9, 1.5)}), ("NAdam", {"weight_decay": -0.1}), ("NAdam", {"momentum_decay": -0.1}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"eps": -1.0}), ("RAdam", {"betas": (1.0, 0.9)}),
    ("RAdam", {"betas": (0.9, -0.1)}), ("RAdam", {"weight_decay": -0.1}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"rho": -0.1}), ("Adadelta", {"rho": 1.0}),
    ("Adadelta", {"eps": -1.0}), ("Adadelta", {"weight_decay": -0.1}),
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (0.0, 1.2)}), ("Rprop", {"etas": (1.0, 1.2)}),
    ("Rprop", {"etas": (0.5, 1.0)}), ("Rprop", {"etas": (0.5, 2.0)}),
    ("ASGD", {"lr": -1.0}), ("ASGD", {"weight_decay": -0.1}), ("ASGD", {"lambd": -1.0}),
]


@pytest.mark.parametrize("name, kwargs", [pytest.param(n, k, id=f"{n}-{'-'.join(f'{a}={v}' for a, v in k.items())}")
                                          for n, k in VALIDATION])
def test_constructor_validation_matches_torch(name, kwargs):
    def scenario(lib):
        try:
            return type(getattr(lib.optim, name)(make_params(lib), **kwargs)).__name__
        except ValueError as e:
            return "ValueError: " + str(e)

    same_outcome(scenario)


@pytest.mark.parametrize("name", NAMES)
def test_tensor_lr_like_torch(name):
    """A 1-element tensor lr steps as its value does; a longer one is refused with torch's ValueError."""
    def scenario(lib):
        params = make_params(lib)
        opt = getattr(lib.optim, name)(params, lr=lib.tensor(0.01))
        for _ in range(3):
            loss_step(lib, params, opt)
        try:
            getattr(lib.optim, name)(params, lr=lib.tensor([0.01, 0.02]))
        except ValueError as e:
            refused = str(e)
        return [round(v, 5) for v in params[1].detach().tolist()], refused

    same_outcome(scenario)


@pytest.mark.parametrize("name", NAMES)
def test_step_with_closure_returns_the_loss(name):
    def scenario(lib):
        params = make_params(lib)
        opt = getattr(lib.optim, name)(params)
        x, y = lib.from_numpy(X.copy()), lib.from_numpy(Y.copy())

        def closure():
            opt.zero_grad()
            loss = ((x.matmul(params[0].t()) + params[1] - y) ** 2).mean()
            loss.backward()
            return loss

        return round(float(opt.step(closure).detach()), 4), [round(v, 5) for v in params[1].detach().tolist()]

    same_outcome(scenario)

"""tensorplay.optim against torch.optim, and tensorplay.nn.utils' gradient clipping.

Each optimizer configuration trains the same small model (torch's initial weights copied into
tensorplay's) on the same fixed data for 20 steps in both libraries; after every step every
parameter must agree with torch's to ~1e-5 (test_trajectory_matches_torch, ids
`<Optimizer>-<options>`). Then state_dict round trips, add_param_group, zero_grad, constructor
validation, and clip_grad_norm_/clip_grad_value_/parameters_to_vector.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, copy_state, same_outcome, to_numpy, tp_tensor
from shared import LIBS

STEPS = 20
TOL = dict(rtol=1e-5, atol=1e-5)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 4)).astype(np.float32)
Y = RNG.standard_normal((16, 3)).astype(np.float32)


def make_model(nn):
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


def make_pair():
    torch.manual_seed(0)
    torch_model, tp_model = make_model(torch.nn), make_model(tensorplay.nn)
    copy_state(torch_model, tp_model)
    return torch_model, tp_model


def lib_of(model):
    return torch if isinstance(model, torch.nn.Module) else tensorplay


def train_step(model, optimizer):
    lib = lib_of(model)
    x, y = (torch.from_numpy(X), torch.from_numpy(Y)) if lib is torch else (tp_tensor(X), tp_tensor(Y))
    optimizer.zero_grad()
    loss = lib.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def assert_params_match(tp_model, torch_model, what):
    tp_params = dict(tp_model.named_parameters())
    for name, t in torch_model.named_parameters():
        assert_same(tp_params[name].detach(), t.detach(), what=f"{name} {what}", **TOL)


def all_params(model):
    return list(model.parameters())


def two_groups(**second):
    """Layer 0 with its own lr, layer 2 with the defaults updated by `second`."""
    return lambda model: [{"params": list(model[0].parameters()), "lr": 0.05},
                          {"params": list(model[2].parameters()), **second}]


def config(id, name, groups=all_params, **kwargs):
    return pytest.param(name, groups, kwargs, id=id)


CONFIGS = [
    config("SGD-plain", "SGD", lr=0.1),
    config("SGD-momentum", "SGD", lr=0.05, momentum=0.9),
    config("SGD-momentum_dampening", "SGD", lr=0.05, momentum=0.9, dampening=0.5),
    config("SGD-nesterov", "SGD", lr=0.05, momentum=0.9, nesterov=True),
    config("SGD-weight_decay", "SGD", lr=0.1, weight_decay=0.05),
    config("SGD-maximize", "SGD", lr=0.01, maximize=True),
    config("SGD-nesterov_weight_decay_maximize", "SGD", lr=0.01, momentum=0.8, nesterov=True, weight_decay=0.1,
           maximize=True),
    config("SGD-two_groups", "SGD", two_groups(momentum=0.9), lr=0.1),
    config("Adam-default", "Adam", lr=0.01),
    config("Adam-betas", "Adam", lr=0.01, betas=(0.8, 0.9)),
    config("Adam-amsgrad", "Adam", lr=0.01, amsgrad=True),
    config("Adam-weight_decay", "Adam", lr=0.01, weight_decay=0.1),
    config("Adam-maximize", "Adam", lr=0.01, maximize=True),
    config("Adam-amsgrad_weight_decay_maximize", "Adam", lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True),
    config("Adam-two_groups", "Adam", two_groups(amsgrad=True, weight_decay=0.01), lr=0.01),
    config("AdamW-default", "AdamW", lr=0.01),
    config("AdamW-weight_decay_0.1", "AdamW", lr=0.01, weight_decay=0.1),
    config("AdamW-amsgrad", "AdamW", lr=0.01, amsgrad=True, weight_decay=0.05),
    config("AdamW-maximize", "AdamW", lr=0.01, maximize=True),
    config("AdamW-two_groups", "AdamW", two_groups(weight_decay=0.3), lr=0.01),
    config("RMSprop-default", "RMSprop", lr=0.01),
    config("RMSprop-alpha", "RMSprop", lr=0.01, alpha=0.9),
    config("RMSprop-centered", "RMSprop", lr=0.01, centered=True),
    config("RMSprop-momentum", "RMSprop", lr=0.01, momentum=0.9),
    config("RMSprop-centered_momentum", "RMSprop", lr=0.01, centered=True, momentum=0.5),
    config("RMSprop-weight_decay", "RMSprop", lr=0.01, weight_decay=0.1),
    config("RMSprop-maximize", "RMSprop", lr=0.01, maximize=True),
    config("RMSprop-two_groups", "RMSprop", two_groups(centered=True, momentum=0.9), lr=0.01),
    config("Adagrad-default", "Adagrad", lr=0.1),
    config("Adagrad-lr_decay", "Adagrad", lr=0.1, lr_decay=0.05),
    config("Adagrad-initial_accumulator_value", "Adagrad", lr=0.1, initial_accumulator_value=0.5),
    config("Adagrad-weight_decay", "Adagrad", lr=0.1, weight_decay=0.1),
    config("Adagrad-maximize", "Adagrad", lr=0.05, maximize=True),
    config("Adagrad-eps", "Adagrad", lr=0.1, eps=1e-3),
    config("Adagrad-two_groups", "Adagrad", two_groups(lr_decay=0.1), lr=0.1),
]


def make_optimizers(name, groups, kwargs):
    torch_model, tp_model = make_pair()
    torch_opt = getattr(torch.optim, name)(groups(torch_model), **kwargs)
    tp_opt = getattr(tensorplay.optim, name)(groups(tp_model), **kwargs)
    return torch_model, tp_model, torch_opt, tp_opt


@pytest.mark.parametrize("name, groups, kwargs", CONFIGS)
def test_trajectory_matches_torch(name, groups, kwargs):
    torch_model, tp_model, torch_opt, tp_opt = make_optimizers(name, groups, kwargs)
    for step in range(STEPS):
        torch_loss = train_step(torch_model, torch_opt)
        tp_loss = train_step(tp_model, tp_opt)
        assert_same(tp_loss.detach(), torch_loss.detach(), what=f"loss at step {step}", **TOL)
        assert_params_match(tp_model, torch_model, f"after step {step + 1}")


# ---------------------------------------------------------------------------------------------
# state_dict


STATEFUL = [
    config("SGD-momentum", "SGD", lr=0.05, momentum=0.9),
    config("SGD-no_momentum", "SGD", lr=0.05),
    config("Adam-amsgrad", "Adam", lr=0.01, amsgrad=True),
    config("AdamW-default", "AdamW", lr=0.01),
    config("RMSprop-centered_momentum", "RMSprop", lr=0.01, centered=True, momentum=0.5),
    config("Adagrad-lr_decay", "Adagrad", lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1),
    config("Adam-two_groups", "Adam", two_groups(weight_decay=0.01), lr=0.01),
]


@pytest.mark.parametrize("name, groups, kwargs", STATEFUL)
def test_state_dict_round_trip_continues_identically(name, groups, kwargs):
    """10 steps, state_dict(); a new model and optimizer load it; 10 more steps equal torch's 20."""
    torch_model, tp_model, torch_opt, tp_opt = make_optimizers(name, groups, kwargs)
    for _ in range(10):
        train_step(torch_model, torch_opt)
        train_step(tp_model, tp_opt)
    saved = tp_opt.state_dict()

    resumed_model = make_model(tensorplay.nn)
    resumed_model.load_state_dict(tp_model.state_dict())
    resumed_opt = getattr(tensorplay.optim, name)(groups(resumed_model), **kwargs)
    resumed_opt.load_state_dict(saved)
    # The optimizer must not share state tensors with the dict it was loaded from.
    for state in saved["state"].values():
        for value in state.values():
            if isinstance(value, tensorplay.Tensor) and value.is_floating_point():
                with tensorplay.no_grad():
                    value.fill_(123.0)
    for step in range(10):
        train_step(torch_model, torch_opt)
        train_step(resumed_model, resumed_opt)
        assert_params_match(resumed_model, torch_model, f"after resumed step {step + 1}")


def _state_dicts_after_3_steps(name, groups, kwargs):
    torch_model, tp_model, torch_opt, tp_opt = make_optimizers(name, groups, kwargs)
    for _ in range(3):
        train_step(torch_model, torch_opt)
        train_step(tp_model, tp_opt)
    t_state, p_state = torch_opt.state_dict(), tp_opt.state_dict()
    assert set(p_state) == set(t_state) == {"state", "param_groups"}
    return t_state, p_state


@pytest.mark.parametrize("name, groups, kwargs", STATEFUL)
def test_state_dict_param_groups_match_torch(name, groups, kwargs):
    """Same parameter indices per group, the same hyperparameter keys and values."""
    t_state, p_state = _state_dicts_after_3_steps(name, groups, kwargs)
    assert [g["params"] for g in p_state["param_groups"]] == [g["params"] for g in t_state["param_groups"]]
    for i, (pg, tg) in enumerate(zip(p_state["param_groups"], t_state["param_groups"])):
        for key in ("lr", "weight_decay", "maximize"):
            assert pg[key] == tg[key], f"group {i} {key}"
        assert sorted(pg) == sorted(tg), f"group {i} keys: lacks {set(tg) - set(pg)}, extra {set(pg) - set(tg)}"


@pytest.mark.parametrize("name, groups, kwargs", STATEFUL)
def test_state_dict_state_matches_torch(name, groups, kwargs):
    """The same parameters have state, with the same keys, and values equal to torch's."""
    t_state, p_state = _state_dicts_after_3_steps(name, groups, kwargs)
    assert sorted(p_state["state"]) == sorted(t_state["state"]), (
        f"parameters with state: {sorted(p_state['state'])} != torch's {sorted(t_state['state'])} "
        f"(tensorplay's state: {p_state['state']})")
    for index, t_param_state in t_state["state"].items():
        p_param_state = p_state["state"][index]
        assert sorted(p_param_state) == sorted(t_param_state), f"state keys of parameter {index}"
        for key, value in t_param_state.items():
            if isinstance(value, torch.Tensor):
                assert_same(p_param_state[key], value, what=f"state[{index}][{key!r}]", **TOL)
            else:
                assert p_param_state[key] == value, f"state[{index}][{key!r}]"


@pytest.mark.parametrize("name, groups, kwargs", STATEFUL)
def test_loading_torchs_state_dict_continues_like_torch(name, groups, kwargs):
    """torch's optimizer state (tensors converted) loaded into tensorplay's optimizer carries on
    exactly as torch's does: the state keys mean the same things."""
    torch_model, tp_model, torch_opt, tp_opt = make_optimizers(name, groups, kwargs)
    for _ in range(5):
        train_step(torch_model, torch_opt)
    copy_state(torch_model, tp_model)
    torch_state = torch_opt.state_dict()
    converted = {
        "state": {i: {k: tp_tensor(v) if isinstance(v, torch.Tensor) else v for k, v in s.items()}
                  for i, s in torch_state["state"].items()},
        "param_groups": [dict(g) for g in torch_state["param_groups"]],
    }
    tp_opt.load_state_dict(converted)
    for step in range(5):
        train_step(torch_model, torch_opt)
        train_step(tp_model, tp_opt)
        assert_params_match(tp_model, torch_model, f"after step {step + 1} from torch's state")


def test_load_state_dict_with_wrong_group_count_raises_like_torch():
    def scenario(lib):
        model = make_model(lib.nn)
        one = lib.optim.SGD(model.parameters(), lr=0.1)
        two = lib.optim.SGD([{"params": model[0].parameters()}, {"params": model[2].parameters()}], lr=0.1)
        two.load_state_dict(one.state_dict())

    same_outcome(scenario)


# ---------------------------------------------------------------------------------------------
# add_param_group, zero_grad, step details


@pytest.mark.parametrize("name, kwargs", [
    pytest.param("SGD", {"lr": 0.1, "momentum": 0.9}, id="SGD"),
    pytest.param("Adam", {"lr": 0.01}, id="Adam"),
    pytest.param("RMSprop", {"lr": 0.01, "centered": True}, id="RMSprop"),
    pytest.param("Adagrad", {"lr": 0.1}, id="Adagrad"),
])
def test_add_param_group_matches_torch(name, kwargs):
    """Layer 0 alone for 5 steps, then layer 2 added with its own lr (other options defaulted)."""
    torch_model, tp_model = make_pair()
    torch_opt = getattr(torch.optim, name)(torch_model[0].parameters(), **kwargs)
    tp_opt = getattr(tensorplay.optim, name)(tp_model[0].parameters(), **kwargs)
    for step in range(5):
        train_step(torch_model, torch_opt)
        train_step(tp_model, tp_opt)
        assert_params_match(tp_model, torch_model, f"after step {step + 1} (one group)")
    torch_opt.add_param_group({"params": torch_model[2].parameters(), "lr": 0.03})
    tp_opt.add_param_group({"params": tp_model[2].parameters(), "lr": 0.03})
    assert len(tp_opt.param_groups) == 2
    assert tp_opt.param_groups[1]["lr"] == 0.03
    for step in range(10):
        train_step(torch_model, torch_opt)
        train_step(tp_model, tp_opt)
        assert_params_match(tp_model, torch_model, f"after step {step + 6} (two groups)")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_added_param_group_gets_the_defaults_like_torch(name):
    def scenario(lib):
        model = make_model(lib.nn)
        opt = getattr(lib.optim, name)(model[0].parameters())
        opt.add_param_group({"params": model[2].parameters(), "lr": 0.03})
        return sorted((k, repr(v)) for k, v in opt.param_groups[1].items() if k != "params")

    same_outcome(scenario)


def test_add_param_group_rejects_a_parameter_already_optimised():
    def scenario(lib):
        model = make_model(lib.nn)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        opt.add_param_group({"params": [model[0].weight]})

    same_outcome(scenario)


@pytest.mark.parametrize("set_to_none", [None, True, False], ids=["default", "True", "False"])
def test_optimizer_zero_grad(set_to_none):
    def scenario(lib):
        model = make_model(lib.nn)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        model(lib.ones(2, 4)).sum().backward()
        grad = model[0].weight.grad
        opt.zero_grad() if set_to_none is None else opt.zero_grad(set_to_none=set_to_none)
        return ([None if p.grad is None else float(p.grad.abs().sum()) for p in model.parameters()],
                model[0].weight.grad is grad)

    same_outcome(scenario)


def test_step_with_closure_returns_the_loss():
    torch_model, tp_model = make_pair()
    results = {}
    for model, lib in ((torch_model, torch), (tp_model, tensorplay)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        calls = []
        x, y = lib.from_numpy(X.copy()), lib.from_numpy(Y.copy())

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        loss = opt.step(closure)
        results[lib.__name__] = (float(loss), len(calls))
    assert results["tensorplay"][1] == results["torch"][1] == 1
    assert results["tensorplay"][0] == pytest.approx(results["torch"][0], rel=1e-5)
    assert_params_match(tp_model, torch_model, "after the closure step")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_parameters_without_grad_are_left_alone(name):
    """A frozen layer (requires_grad False, grad None) is neither updated nor given state, as in torch
    (Adagrad gives every parameter state when it is constructed)."""
    def scenario(lib):
        model = make_model(lib.nn)
        model[0].requires_grad_(False)
        before = model[0].weight.detach().clone()
        opt = getattr(lib.optim, name)(model.parameters(), lr=0.1)
        model(lib.ones(2, 4)).sum().backward()
        opt.step()
        state_keys = [sorted(opt.state[p]) if p in opt.state else None for p in model.parameters()]
        return bool((model[0].weight == before).all()), state_keys

    same_outcome(scenario)


# ---------------------------------------------------------------------------------------------
# Constructor validation


VALIDATION = [
    ("SGD", {"lr": -0.1}), ("SGD", {"lr": 0.1, "momentum": -0.5}), ("SGD", {"lr": 0.1, "weight_decay": -1.0}),
    ("SGD", {"lr": 0.1, "nesterov": True}), ("SGD", {"lr": 0.1, "nesterov": True, "momentum": 0.9, "dampening": 0.1}),
    ("Adam", {"lr": -1.0}), ("Adam", {"eps": -1e-8}), ("Adam", {"betas": (1.0, 0.999)}),
    ("Adam", {"betas": (0.9, 1.0)}), ("Adam", {"betas": (-0.1, 0.999)}), ("Adam", {"weight_decay": -0.1}),
    ("AdamW", {"lr": -1.0}), ("AdamW", {"betas": (0.9, 1.5)}), ("AdamW", {"weight_decay": -0.1}),
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -1.0}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -0.5}),
    ("Adagrad", {"lr": -1.0}), ("Adagrad", {"lr_decay": -1.0}), ("Adagrad", {"weight_decay": -1.0}),
    ("Adagrad", {"initial_accumulator_value": -1.0}), ("Adagrad", {"eps": -1.0}),
]


@pytest.mark.parametrize("name, kwargs", [pytest.param(n, k, id=f"{n}-{'-'.join(f'{a}={v}' for a, v in k.items())}")
                                          for n, k in VALIDATION])
def test_constructor_validation_matches_torch(name, kwargs):
    same_outcome(lambda lib: type(getattr(lib.optim, name)(make_model(lib.nn).parameters(), **kwargs)).__name__)


PARAMS_ERRORS = {
    "empty_list": lambda lib, m: [],
    "single_tensor": lambda lib, m: m[0].weight,
    "set_of_params": lambda lib, m: set(m.parameters()),
    "non_leaf": lambda lib, m: [m[0].weight * 2],
    "not_a_tensor": lambda lib, m: [1.0, 2.0],
    "param_in_two_groups": lambda lib, m: [{"params": [m[0].weight]}, {"params": [m[0].weight, m[0].bias]}],
    "group_without_params_key": lambda lib, m: [{"lr": 0.1}],
}


@pytest.mark.parametrize("case", list(PARAMS_ERRORS))
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_bad_params_argument_raises_like_torch(name, case):
    def scenario(lib):
        model = make_model(lib.nn)
        return type(getattr(lib.optim, name)(PARAMS_ERRORS[case](lib, model), lr=0.1)).__name__

    same_outcome(scenario)


def test_default_hyperparameters_match_torch():
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        t = getattr(torch.optim, name)(make_model(torch.nn).parameters()).defaults
        p = getattr(tensorplay.optim, name)(make_model(tensorplay.nn).parameters()).defaults
        for key in ("lr", "momentum", "dampening", "weight_decay", "nesterov", "betas", "eps", "amsgrad", "alpha",
                    "centered", "lr_decay", "initial_accumulator_value", "maximize"):
            if key in t:
                assert p.get(key) == t[key], f"{name} default {key}: {p.get(key)} != torch's {t[key]}"


# ---------------------------------------------------------------------------------------------
# Gradient clipping and parameter vectors


def grads_pair(seed=0, scale=1.0):
    """Two models with the same, known gradients."""
    torch_model, tp_model = make_pair()
    rng = np.random.default_rng(seed)
    for (name, t), p in zip(torch_model.named_parameters(), tp_model.parameters()):
        g = (rng.standard_normal(tuple(t.shape)) * scale).astype(np.float32)
        t.grad = torch.from_numpy(g.copy())
        p.grad = tp_tensor(g)
    return torch_model, tp_model


def assert_grads_match(tp_model, torch_model, what):
    for (name, t), p in zip(torch_model.named_parameters(), tp_model.parameters()):
        assert_same(p.grad, t.grad, what=f"grad of {name} {what}", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("max_norm", [0.5, 1e3], ids=["clips", "no_clip"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0], ids=["L2", "L1", "Linf", "L3"])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    torch_model, tp_model = grads_pair()
    t_norm = torch.nn.utils.clip_grad_norm_(torch_model.parameters(), max_norm, norm_type=norm_type)
    p_norm = tensorplay.nn.utils.clip_grad_norm_(tp_model.parameters(), max_norm, norm_type=norm_type)
    assert_same(p_norm, t_norm, what="returned total norm", rtol=1e-5, atol=1e-6)
    assert_grads_match(tp_model, torch_model, "after clipping")


def test_clip_grad_norm_of_a_single_tensor():
    torch_model, tp_model = grads_pair(scale=3.0)
    t_norm = torch.nn.utils.clip_grad_norm_(torch_model[0].weight, 1.0)
    p_norm = tensorplay.nn.utils.clip_grad_norm_(tp_model[0].weight, 1.0)
    assert_same(p_norm, t_norm, what="returned norm")
    assert_grads_match(tp_model, torch_model, "after clipping one tensor")


def test_clip_grad_norm_with_no_grads_returns_zero_like_torch():
    t = torch.nn.utils.clip_grad_norm_(make_model(torch.nn).parameters(), 1.0)
    p = tensorplay.nn.utils.clip_grad_norm_(make_model(tensorplay.nn).parameters(), 1.0)
    assert_same(p, t, what="norm of no gradients")


@pytest.mark.parametrize("bad", [float("inf"), float("nan")], ids=["inf", "nan"])
def test_clip_grad_norm_nonfinite(bad):
    """error_if_nonfinite=True raises RuntimeError; False returns the non-finite norm like torch."""
    for error in (True, False):
        def scenario(lib):
            model = make_model(lib.nn)
            for p in model.parameters():
                p.grad = lib.ones(*p.shape)
            model[0].weight.grad[0, 0] = bad
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=error)
            return repr(float(norm))

        same_outcome(scenario)


@pytest.mark.parametrize("clip_value", [0.3, 5.0])
def test_clip_grad_value_matches_torch(clip_value):
    torch_model, tp_model = grads_pair(scale=2.0)
    torch.nn.utils.clip_grad_value_(torch_model.parameters(), clip_value)
    tensorplay.nn.utils.clip_grad_value_(tp_model.parameters(), clip_value)
    assert_grads_match(tp_model, torch_model, f"after clip_grad_value_({clip_value})")


def test_parameters_to_vector_and_back():
    torch_model, tp_model = make_pair()
    t_vec = torch.nn.utils.parameters_to_vector(torch_model.parameters())
    p_vec = tensorplay.nn.utils.parameters_to_vector(tp_model.parameters())
    assert_same(p_vec.detach(), t_vec.detach(), what="parameters_to_vector")
    new = np.arange(t_vec.numel(), dtype=np.float32) / 100
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new), torch_model.parameters())
    tensorplay.nn.utils.vector_to_parameters(tp_tensor(new), tp_model.parameters())
    assert_params_match(tp_model, torch_model, "after vector_to_parameters")
    np.testing.assert_array_equal(to_numpy(tp_model[0].bias), new[32:40])


def test_vector_to_parameters_rejects_non_tensor_like_torch():
    same_outcome(lambda lib: lib.nn.utils.vector_to_parameters([1.0, 2.0], make_model(lib.nn).parameters()))


@pytest.mark.parametrize("lib", LIBS)
def test_momentum_step_counts_as_an_inplace_write(lib):
    """From the second step on, SGD's momentum update is one fused pass; it still bumps the
    parameter's version, so a graph that saved the old value refuses to backpropagate."""
    w = lib.ones(3, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    pending = (w * w).sum()  # saves w
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        pending.backward()

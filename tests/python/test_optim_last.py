"""LBFGS, Adafactor, Muon and SparseAdam against torch.optim.

Trajectories: 50 steps of a linear least-squares problem (weights and bias, fixed data) in both
libraries from the same float32 parameters; after every step every parameter must match torch's to
float32 rounding (Muon too: its Newton-Schulz iteration runs in bfloat16 in both libraries). LBFGS
runs with and without the strong-Wolfe line search, through a closure. Then
state_dict contents and round trips, defaults, constructor validation with torch's messages, and the
flags each optimizer accepts. SparseAdam refuses every dense gradient, so here the test checks that
both refuse alike; its steps on sparse gradients are in test_sparse_training.py.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, same_outcome, tp_tensor

STEPS = 50
TOL = dict(rtol=1e-5, atol=1e-6)

RNG = np.random.default_rng(2)
X = RNG.standard_normal((32, 4)).astype(np.float32)
Y = (X @ RNG.standard_normal((4, 3)) + 0.1 * RNG.standard_normal((32, 3))).astype(np.float32)
W0 = (0.5 * RNG.standard_normal((3, 4))).astype(np.float32)
B0 = (0.5 * RNG.standard_normal(3)).astype(np.float32)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """torch's threaded bfloat16 matmuls (Muon) on these tiny matrices cost far more than they
    compute on a busy machine; one thread keeps the file fast, and the results are the same."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def make_params(lib, bias=True):
    if lib is torch:
        params = [torch.tensor(W0.copy(), requires_grad=True), torch.tensor(B0.copy(), requires_grad=True)]
    else:
        params = [tp_tensor(W0, requires_grad=True), tp_tensor(B0, requires_grad=True)]
    return params if bias else params[:1]


def data(lib):
    return (torch.from_numpy(X), torch.from_numpy(Y)) if lib is torch else (tp_tensor(X), tp_tensor(Y))


def closure_of(lib, params, optimizer):
    x, y = data(lib)

    def closure():
        optimizer.zero_grad()
        out = x.matmul(params[0].t())
        if len(params) > 1:
            out = out + params[1]
        loss = ((out - y) ** 2).mean()
        loss.backward()
        return loss

    return closure


def assert_params_match(p_params, t_params, what, tol=TOL):
    for i, (p, t) in enumerate(zip(p_params, t_params)):
        assert_same(p.detach(), t.detach(), what=f"parameter {i} {what}", **tol)


def run_both(name, kwargs, steps, bias=True, tol=TOL, groups=None):
    t_params, p_params = make_params(torch, bias), make_params(tensorplay, bias)
    t_opt = getattr(torch.optim, name)(groups(t_params) if groups else t_params, **kwargs)
    p_opt = getattr(tensorplay.optim, name)(groups(p_params) if groups else p_params, **kwargs)
    t_closure, p_closure = closure_of(torch, t_params, t_opt), closure_of(tensorplay, p_params, p_opt)
    for step in range(steps):
        t_loss = t_opt.step(t_closure)
        p_loss = p_opt.step(p_closure)
        assert_same(p_loss.detach(), t_loss.detach(), what=f"loss at step {step}", rtol=1e-4, atol=1e-5)
        assert_params_match(p_params, t_params, f"after step {step + 1}", tol)
    assert not np.allclose(t_params[0].detach().numpy(), W0), "the parameters did not move; the test proves nothing"
    return t_params, p_params, t_opt, p_opt


def two_groups(params):
    return [{"params": [params[0]], "lr": 0.02}, {"params": [params[1]]}]


TRAJECTORIES = [
    pytest.param("Adafactor", {}, True, None, id="Adafactor-default"),
    pytest.param("Adafactor", {"lr": 0.02, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 2.0}, True, None,
                 id="Adafactor-hyper"),
    pytest.param("Adafactor", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, True, None,
                 id="Adafactor-weight_decay_maximize"),
    pytest.param("Adafactor", {"lr": 0.01, "foreach": True}, True, None, id="Adafactor-foreach"),
    pytest.param("Adafactor", {"lr": 0.01}, True, two_groups, id="Adafactor-two_groups"),
    pytest.param("Muon", {"lr": 0.02}, False, None, id="Muon-default"),
    pytest.param("Muon", {"lr": 0.02, "nesterov": False, "momentum": 0.8, "weight_decay": 0.0}, False, None,
                 id="Muon-plain_momentum"),
]


@pytest.mark.parametrize("name, kwargs, bias, groups", TRAJECTORIES)
def test_trajectory_matches_torch(name, kwargs, bias, groups):
    t_params, p_params, t_opt, p_opt = run_both(name, kwargs, STEPS, bias, TOL, groups)
    for i, (p, t) in enumerate(zip(p_params, t_params)):
        assert sorted(p_opt.state[p]) == sorted(t_opt.state[t]), f"state keys of parameter {i}"
        for key, value in t_opt.state[t].items():
            assert_same(p_opt.state[p][key], value, what=f"state [{key!r}] of parameter {i}", rtol=1e-3, atol=1e-3)


def quadratic_step(lib, param, target, optimizer):
    """One step on sum(c * (param - target)^2) with fixed per-element weights c."""
    def closure():
        optimizer.zero_grad()
        c = lib.from_numpy(np.linspace(0.5, 2.0, target.size).reshape(target.shape).astype(np.float64).copy())
        target_t = lib.from_numpy(target.copy()).to(param.dtype)
        loss = (c.to(param.dtype) * (param - target_t) ** 2).sum()
        loss.backward()
        return loss

    return optimizer.step(closure)


OTHER_SHAPES = [
    pytest.param("Adafactor", {"lr": 0.05}, (2, 3, 4), "float32", id="Adafactor-3d"),
    pytest.param("Adafactor", {"lr": 0.05, "weight_decay": 0.01}, (4, 5), "float64", id="Adafactor-float64"),
    pytest.param("Muon", {"lr": 0.02}, (6, 3), "float32", id="Muon-tall"),
    pytest.param("Muon", {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3}, (6, 3), "float64",
                 id="Muon-float64_match_rms_adamw"),
]


@pytest.mark.parametrize("name, kwargs, shape, dtype", OTHER_SHAPES)
def test_other_shapes_and_dtypes_match_torch(name, kwargs, shape, dtype):
    """Adafactor's factored moments over the last two dims of a 3-D parameter and its float64
    eps; Muon on a tall matrix (transposed for the iteration, lr scaled by sqrt(rows/cols))."""
    start = np.random.default_rng(3).standard_normal(shape)
    target = np.random.default_rng(4).standard_normal(shape)
    t_param = torch.tensor(start, dtype=getattr(torch, dtype), requires_grad=True)
    p_param = tp_tensor(start, dtype=getattr(tensorplay, dtype), requires_grad=True)
    t_opt = getattr(torch.optim, name)([t_param], **kwargs)
    p_opt = getattr(tensorplay.optim, name)([p_param], **kwargs)
    for step in range(STEPS):
        quadratic_step(torch, t_param, target, t_opt)
        quadratic_step(tensorplay, p_param, target, p_opt)
        assert_same(p_param.detach(), t_param.detach(), what=f"after step {step + 1}", **TOL)
    assert not np.allclose(t_param.detach().numpy(), start)


def test_muon_newton_schulz_matches_torch():
    """The orthogonalisation alone, on a tall and a wide matrix: torch's bfloat16 result."""
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from tensorplay.optim.muon import _zeropower_via_newtonschulz as tp_ns
    for shape in ((6, 3), (3, 5)):
        g = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        want = torch_ns(torch.from_numpy(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        got = tp_ns(tp_tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        assert_same(got, want, rtol=1e-2, atol=1e-3, what=f"Newton-Schulz of {shape}")


LBFGS_CONFIGS = [
    pytest.param({}, id="default"),
    pytest.param({"lr": 0.5, "max_iter": 4, "history_size": 3}, id="short_history"),
    pytest.param({"line_search_fn": "strong_wolfe"}, id="strong_wolfe"),
    pytest.param({"line_search_fn": "strong_wolfe", "max_iter": 3, "history_size": 2}, id="strong_wolfe_short"),
    pytest.param({"lr": 0.1, "max_iter": 2, "tolerance_grad": 1e-3, "tolerance_change": 1e-4}, id="tolerances"),
]


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS)
def test_lbfgs_trajectory_matches_torch(kwargs):
    """The least-squares problem is solved within a few steps; 10 steps cover the iterations,
    the convergence checks and the early return once the gradient vanishes."""
    t_params, p_params, t_opt, p_opt = run_both("LBFGS", kwargs, 10, tol=dict(rtol=1e-4, atol=1e-5))
    t_state, p_state = t_opt.state[t_params[0]], p_opt.state[p_params[0]]
    assert p_state["func_evals"] == t_state["func_evals"]
    assert p_state["n_iter"] == t_state["n_iter"]
    assert len(p_state["old_dirs"]) == len(t_state["old_dirs"])
    assert_same(p_state["d"], t_state["d"], rtol=1e-3, atol=1e-5, what="search direction")


def test_lbfgs_refuses_groups_and_unknown_line_search_like_torch():
    def scenario(lib):
        out = []
        params = make_params(lib)
        try:
            lib.optim.LBFGS([{"params": [params[0]]}, {"params": [params[1]]}])
        except ValueError as e:
            out.append(str(e))
        opt = lib.optim.LBFGS(params, line_search_fn="armijo")
        try:
            opt.step(closure_of(lib, params, opt))
        except RuntimeError as e:
            out.append(str(e))
        return out

    same_outcome(scenario)


def test_sparse_adam_refuses_dense_gradients_like_torch():
    def scenario(lib):
        params = make_params(lib)
        opt = lib.optim.SparseAdam(params, lr=0.1)
        opt.step()  # no gradients yet: nothing to do
        closure = closure_of(lib, params, opt)
        try:
            opt.step(closure)
        except RuntimeError as e:
            return str(e), [p in opt.state for p in params], opt.defaults
        return "stepped"

    same_outcome(scenario)


NAMES = ["Adafactor", "Muon", "LBFGS", "SparseAdam"]


@pytest.mark.parametrize("name", NAMES)
def test_defaults_match_torch(name):
    bias = name != "Muon"
    assert getattr(tensorplay.optim, name)(make_params(tensorplay, bias)).defaults == \
        getattr(torch.optim, name)(make_params(torch, bias)).defaults


FLAGS = [
    ("Adafactor", {"foreach": False, "maximize": True}), ("Adafactor", {"capturable": False}),
    ("Adafactor", {"differentiable": False}), ("Adafactor", {"fused": False}),
    ("SparseAdam", {"maximize": True}), ("SparseAdam", {"foreach": False}),
    ("Muon", {"foreach": False}), ("Muon", {"maximize": True}), ("LBFGS", {"foreach": False}),
]


@pytest.mark.parametrize("name, kwargs", [pytest.param(n, k, id=f"{n}-{'-'.join(k)}") for n, k in FLAGS])
def test_flags_accepted_or_refused_like_torch(name, kwargs):
    def scenario(lib):
        try:
            opt = getattr(lib.optim, name)(make_params(lib, name != "Muon"), **kwargs)
        except TypeError as e:
            return "TypeError: " + str(e)
        return sorted(opt.param_groups[0])

    same_outcome(scenario)


VALIDATION = [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}), ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1e-3)}), ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -0.1}), ("Muon", {"weight_decay": -0.1}),
    ("Muon", {"adjust_lr_fn": "other"}),
    ("SparseAdam", {"lr": 0.0}), ("SparseAdam", {"eps": 0.0}), ("SparseAdam", {"betas": (1.0, 0.9)}),
    ("SparseAdam", {"betas": (0.9, -0.1)}),
    ("LBFGS", {"lr": -1.0}),
]


@pytest.mark.parametrize("name, kwargs", [pytest.param(n, k, id=f"{n}-{'-'.join(f'{a}={v}' for a, v in k.items())}")
                                          for n, k in VALIDATION])
def test_constructor_validation_matches_torch(name, kwargs):
    def scenario(lib):
        try:
            return type(getattr(lib.optim, name)(make_params(lib, name != "Muon"), **kwargs)).__name__
        except ValueError as e:
            return "ValueError: " + str(e)

    same_outcome(scenario)


def test_muon_refuses_non_matrix_parameters_like_torch():
    def scenario(lib):
        try:
            lib.optim.Muon(make_params(lib))
        except ValueError as e:
            return str(e).replace("tensorplay.Size", "torch.Size")

    same_outcome(scenario)


def test_tensor_lr_refused_unless_one_element_like_torch():
    def scenario(lib):
        out = []
        for name in NAMES:
            try:
                getattr(lib.optim, name)(make_params(lib, name != "Muon"), lr=lib.tensor([0.1, 0.2]))
            except ValueError as e:
                out.append(str(e))
        return out

    same_outcome(scenario)


STATEFUL = [
    pytest.param("Adafactor", {"lr": 0.02}, True, id="Adafactor"),
    pytest.param("Muon", {"lr": 0.02}, False, id="Muon"),
    pytest.param("LBFGS", {"max_iter": 3, "history_size": 4}, True, id="LBFGS"),
]


@pytest.mark.parametrize("name, kwargs, bias", STATEFUL)
def test_state_dict_round_trip_continues_like_torch(name, kwargs, bias):
    """After a few steps, tensorplay's state_dict (and torch's, converted) loaded into a fresh
    optimizer over copies of the parameters carries on as torch does."""
    tol = dict(rtol=1e-4, atol=1e-5)
    t_params, p_params, t_opt, p_opt = run_both(name, kwargs, 3, bias, tol)
    saved = p_opt.state_dict()
    t_saved = t_opt.state_dict()
    assert sorted(saved["state"]) == sorted(t_saved["state"])
    for index, t_state in t_saved["state"].items():
        assert sorted(saved["state"][index]) == sorted(t_state), f"state keys of parameter {index}"
    for pg, tg in zip(saved["param_groups"], t_saved["param_groups"]):
        assert pg == tg
    params = [tp_tensor(p.detach(), requires_grad=True) for p in p_params]
    opt = getattr(tensorplay.optim, name)(params, **kwargs)
    opt.load_state_dict(saved)
    t_closure, p_closure = closure_of(torch, t_params, t_opt), closure_of(tensorplay, params, opt)
    for step in range(3):
        t_opt.step(t_closure)
        opt.step(p_closure)
        assert_params_match(params, t_params, f"resumed, step {step + 1}", tol)

"""tensorplay.optim.lr_scheduler against torch.optim.lr_scheduler (the oracle).

Each case builds the same tiny model (one parameter per group, groups with different lrs) in both
libraries, runs optimizer.step(); scheduler.step() for 25-30 steps, and compares, at every step,
get_last_lr() and each group's lr / initial_lr / momentum / betas (to 1e-12 relative), the
scheduler's state_dict() at the start and the end, and the trained weights at the end. Then:
state_dict round trips resume the same trajectory, constructor validation raises torch's
exceptions, and the warnings torch gives (or does not give) are the same.
"""

import copy
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
import torch

import tensorplay as tp

LIBS = {"torch": torch, "tensorplay": tp}

# One parameter per group, of different shapes.
WEIGHTS = [
    np.array([0.5, -1.0, 2.0], dtype=np.float32),
    np.array([[0.3, 0.1], [-0.2, 0.7]], dtype=np.float32),
    np.array([1.5], dtype=np.float32),
]
LRS = [0.1, 0.05, 0.2]

# Metrics for ReduceLROnPlateau: improvements, plateaus, and changes within the threshold
# (0.79995 is not better than 0.8 under the default rel threshold 1e-4).
METRICS_MIN = [1.0, 0.8, 0.8, 0.79995, 0.81, 0.7, 0.7, 0.7, 0.7, 0.69, 0.69, 0.69, 0.69, 0.5, 0.6,
               0.6, 0.6, 0.6, 0.6, 0.6, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4]
METRICS_MAX = [0.1, 0.2, 0.205, 0.209, 0.3, 0.3, 0.3, 0.3, 0.31, 0.32, 0.5, 0.5, 0.505, 0.5, 0.5,
               0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]


def decay_per_group_0(epoch):
    return 1.0 / (epoch + 1)


def decay_per_group_1(epoch):
    return 0.5 if epoch % 4 else 1.0


def decay_per_group_2(epoch):
    return epoch // 5 + 1


@dataclass
class Case:
    """make(optimizer, lr_scheduler module) builds the scheduler; step(scheduler, i, lib) steps it."""
    make: Callable
    optimizer: str = "SGD"
    optimizer_kwargs: dict = field(default_factory=dict)
    steps: int = 30
    step: Callable = lambda sched, i, lib: sched.step()


def plateau_step(metrics, as_tensor=False):
    def step(sched, i, lib):
        sched.step(lib.tensor(metrics[i]) if as_tensor else metrics[i])
    return step


CASES = {
    "lambda_single": Case(lambda o, S: S.LambdaLR(o, lambda e: 0.95 ** e)),
    "lambda_per_group": Case(lambda o, S: S.LambdaLR(o, [decay_per_group_0, decay_per_group_1,
                                                          decay_per_group_2])),
    "multiplicative": Case(lambda o, S: S.MultiplicativeLR(o, lambda e: 0.9 if e % 3 else 0.7)),
    "step": Case(lambda o, S: S.StepLR(o, step_size=4, gamma=0.5)),
    "step_default_gamma": Case(lambda o, S: S.StepLR(o, 7)),
    "multistep": Case(lambda o, S: S.MultiStepLR(o, milestones=[3, 8, 8, 15], gamma=0.3)),
    "constant": Case(lambda o, S: S.ConstantLR(o, factor=0.25, total_iters=6)),
    "exponential": Case(lambda o, S: S.ExponentialLR(o, gamma=0.87)),
    # 30 steps over T_max=10 run into the second half-period (the restart branch at epoch 11).
    "cosine": Case(lambda o, S: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    "cosine_default_eta_min": Case(lambda o, S: S.CosineAnnealingLR(o, T_max=7)),
    "linear": Case(lambda o, S: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8)),
    "linear_default": Case(lambda o, S: S.LinearLR(o)),
    "linear_decay": Case(lambda o, S: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=20)),
    "polynomial": Case(lambda o, S: S.PolynomialLR(o, total_iters=12, power=2.0)),
    "warm_restarts": Case(lambda o, S: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=1e-3)),
    "cyclic_sgd_momentum": Case(
        lambda o, S: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2, 0.05], step_size_up=4, step_size_down=6,
                                mode="triangular2"),
        optimizer_kwargs=dict(momentum=0.9)),
    "cyclic_adam_betas": Case(
        lambda o, S: S.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=5, mode="exp_range", gamma=0.97,
                                base_momentum=0.75, max_momentum=0.85),
        optimizer="Adam"),
    "onecycle_sgd_momentum_cos": Case(
        lambda o, S: S.OneCycleLR(o, max_lr=[0.1, 0.05, 0.2], total_steps=25),
        optimizer_kwargs=dict(momentum=0.9), steps=25),
    "onecycle_adam_betas_linear_three_phase": Case(
        lambda o, S: S.OneCycleLR(o, max_lr=0.01, total_steps=25, pct_start=0.4, anneal_strategy="linear",
                                  three_phase=True, div_factor=10.0, final_div_factor=100.0, base_momentum=0.8,
                                  max_momentum=[0.95, 0.9, 0.99]),
        optimizer="Adam", optimizer_kwargs=dict(betas=(0.9, 0.98)), steps=25),
    "onecycle_sgd_epochs_three_phase_cos": Case(
        lambda o, S: S.OneCycleLR(o, max_lr=0.1, epochs=5, steps_per_epoch=5, pct_start=0.25, three_phase=True,
                                  base_momentum=0.8),
        optimizer_kwargs=dict(momentum=0.5, nesterov=True), steps=25),
    "onecycle_no_momentum_cycling": Case(
        lambda o, S: S.OneCycleLR(o, max_lr=0.05, total_steps=30, cycle_momentum=False, anneal_strategy="linear"),
        optimizer="Adagrad"),
    "plateau_min_rel": Case(lambda o, S: S.ReduceLROnPlateau(o, patience=2, factor=0.5),
                            step=plateau_step(METRICS_MIN)),
    "plateau_min_abs": Case(lambda o, S: S.ReduceLROnPlateau(o, threshold=0.05, threshold_mode="abs", patience=1),
                            step=plateau_step(METRICS_MIN)),
    "plateau_max_rel_cooldown_min_lrs": Case(
        lambda o, S: S.ReduceLROnPlateau(o, mode="max", factor=0.3, patience=1, cooldown=2, threshold=0.02,
                                         min_lr=[0.01, 0.0, 0.05]),
        step=plateau_step(METRICS_MAX)),
    "plateau_max_abs": Case(
        lambda o, S: S.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.01, patience=0),
        step=plateau_step(METRICS_MAX)),
    # eps: once factor * lr is within eps of lr, the reduction is skipped.
    "plateau_eps_min_lr_tensor_metric": Case(
        lambda o, S: S.ReduceLROnPlateau(o, factor=0.5, patience=0, eps=0.02, min_lr=0.004),
        step=plateau_step(METRICS_MIN, as_tensor=True)),
    "sequential_warmup_cosine": Case(
        lambda o, S: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                        S.CosineAnnealingLR(o, T_max=15, eta_min=0.002)], milestones=[5])),
    "sequential_three": Case(
        lambda o, S: S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=3), S.ExponentialLR(o, 0.9),
                                        S.StepLR(o, 3, gamma=0.5)], milestones=[4, 12])),
    "chained": Case(lambda o, S: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=5),
                                                     S.ExponentialLR(o, gamma=0.9)])),
    "chained_with_optimizer": Case(lambda o, S: S.ChainedScheduler([S.StepLR(o, 3, 0.5),
                                                                    S.MultiStepLR(o, [4, 9], 0.2)], optimizer=o)),
}


# ---- building and running ----

def make_params(lib, weights=WEIGHTS):
    return [lib.nn.Parameter(lib.tensor(np.array(w, copy=True))) for w in weights]


def make_optimizer(lib, case, params):
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, LRS)]
    return getattr(lib.optim, case.optimizer)(groups, **case.optimizer_kwargs)


def train_step(optimizer, params):
    optimizer.zero_grad()
    loss = (params[0] * params[0]).sum() + params[0].sum()
    for p in params[1:]:
        loss = loss + (p * p).sum() + p.sum()
    loss.backward()
    optimizer.step()


def snapshot(sched, optimizer):
    """What a step is compared on: the scheduler's last lrs and the groups' scheduled values."""
    def scalar(v):
        return None if v is None else float(v)

    groups = optimizer.param_groups
    return {
        "get_last_lr": [float(v) for v in sched.get_last_lr()],
        "lr": [float(g["lr"]) for g in groups],
        "initial_lr": [scalar(g.get("initial_lr")) for g in groups],
        "momentum": [scalar(g.get("momentum")) for g in groups],
        "betas": [tuple(float(b) for b in g["betas"]) if "betas" in g else None for g in groups],
    }


def run(lib, case, steps, start=0, optimizer=None, sched=None, params=None):
    """Steps a (new, unless given) scheduler; returns the snapshots before and after each step."""
    if optimizer is None:
        params = make_params(lib)
        optimizer = make_optimizer(lib, case, params)
        sched = case.make(optimizer, lib.optim.lr_scheduler)
    trajectory = [snapshot(sched, optimizer)]
    for i in range(start, start + steps):
        train_step(optimizer, params)
        case.step(sched, i, lib)
        trajectory.append(snapshot(sched, optimizer))
    return trajectory, optimizer, sched, params


def assert_same(actual, expected, where="value"):
    """Recursive comparison; floats to 1e-12 relative."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), where
        assert set(actual) == set(expected), f"{where}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), f"{where}: {actual} != {expected}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
    elif isinstance(expected, float) and not isinstance(expected, bool):
        assert isinstance(actual, (float, int)) and not isinstance(actual, bool), f"{where}: {actual!r}"
        assert math.isclose(actual, expected, rel_tol=1e-12, abs_tol=1e-300) or (math.isnan(actual) and
                                                                                 math.isnan(expected)), \
            f"{where}: {actual!r} != {expected!r}"
    else:
        assert actual == expected and type(actual) is type(expected), f"{where}: {actual!r} != {expected!r}"


def assert_same_weights(tp_params, torch_params):
    for p, q in zip(tp_params, torch_params):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---- trajectories ----

@pytest.mark.parametrize("name", CASES)
def test_trajectory_matches_torch(name):
    case = CASES[name]
    expected, torch_opt, torch_sched, torch_params = run(torch, case, case.steps)

    params = make_params(tp)
    optimizer = make_optimizer(tp, case, params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the normal path warns about nothing
        sched = case.make(optimizer, tp.optim.lr_scheduler)
        assert_same(sched.state_dict(), case.make(make_optimizer(torch, case, make_params(torch)),
                                                  torch.optim.lr_scheduler).state_dict(), "initial state_dict")
        actual, *_ = run(tp, case, case.steps, optimizer=optimizer, sched=sched, params=params)

    for step, (a, e) in enumerate(zip(actual, expected)):
        assert_same(a, e, f"step {step}")
    assert_same(sched.state_dict(), torch_sched.state_dict(), "final state_dict")
    assert_same_weights(params, torch_params)


@pytest.mark.parametrize("name", ["step", "cosine", "linear", "cyclic_sgd_momentum", "onecycle_sgd_momentum_cos"])
def test_after_construction(name):
    """The constructor's step: last_epoch 0, _step_count 1, initial_lr stored, base_lrs from it."""
    case = CASES[name]
    for lib in LIBS.values():
        optimizer = make_optimizer(lib, case, make_params(lib))
        sched = case.make(optimizer, lib.optim.lr_scheduler)
        assert sched.last_epoch == 0 and sched._step_count == 1
        assert sched.base_lrs == [g["initial_lr"] for g in optimizer.param_groups]
        assert sched.get_last_lr() == [g["lr"] for g in optimizer.param_groups]


def test_initial_lr_is_kept_by_a_second_scheduler():
    for lib in LIBS.values():
        optimizer = lib.optim.SGD(make_params(lib)[:1], lr=0.1)
        S = lib.optim.lr_scheduler
        S.StepLR(optimizer, 2)
        optimizer.param_groups[0]["lr"] = 0.5
        second = S.ExponentialLR(optimizer, 0.5)
        assert optimizer.param_groups[0]["initial_lr"] == 0.1 and second.base_lrs == [0.1]


def test_tensor_learning_rates():
    """A tensor lr is updated in place, and get_last_lr() returns copies of it."""
    results = {}
    for name, lib in LIBS.items():
        lr = lib.tensor(0.1, dtype=lib.float64)
        optimizer = lib.optim.SGD(make_params(lib)[:1], lr=lr)
        sched = lib.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
        optimizer.step()
        sched.step()
        assert optimizer.param_groups[0]["lr"] is lr
        last = sched.get_last_lr()[0]
        assert last is not lr
        results[name] = (float(lr), float(last))
    assert results["tensorplay"] == results["torch"] == (0.05, 0.05)


# ---- state_dict round trips ----

@pytest.mark.parametrize("name", CASES)
def test_state_dict_round_trip_resumes_the_trajectory(name):
    """Stopped after 10 steps and restored into new objects (scheduler built first, then the
    optimizer's and the scheduler's states loaded), a run goes on exactly as the unbroken torch run."""
    case = CASES[name]
    expected, _, _, torch_params = run(torch, case, case.steps)

    head, optimizer, sched, params = run(tp, case, 10)
    saved_optimizer = copy.deepcopy(optimizer.state_dict())
    saved_sched = copy.deepcopy(sched.state_dict())
    del optimizer, sched

    params = make_params(tp, [p.detach().numpy() for p in params])
    optimizer = make_optimizer(tp, case, params)
    sched = case.make(optimizer, tp.optim.lr_scheduler)
    optimizer.load_state_dict(saved_optimizer)
    sched.load_state_dict(saved_sched)
    tail, *_ = run(tp, case, case.steps - 10, start=10, optimizer=optimizer, sched=sched, params=params)

    for step, (a, e) in enumerate(zip(head + tail[1:], expected)):
        assert_same(a, e, f"step {step}")
    assert_same_weights(params, torch_params)


def test_state_dict_excludes_the_optimizer_and_keeps_callable_objects():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    for lib in LIBS.values():
        optimizer = make_optimizer(lib, Case(None), make_params(lib))
        sched = lib.optim.lr_scheduler.LambdaLR(optimizer, [Decay(0.5), decay_per_group_1, lambda e: 1.0])
        state = sched.state_dict()
        assert "optimizer" not in state
        assert state["lr_lambdas"] == [{"rate": 0.5}, None, None]
        state["lr_lambdas"][0]["rate"] = 0.25
        other = lib.optim.lr_scheduler.LambdaLR(optimizer, [Decay(0.5), decay_per_group_1, lambda e: 1.0])
        other.load_state_dict(state)
        assert other.lr_lambdas[0].rate == 0.25 and "lr_lambdas" in state


# ---- validation ----

def not_an_optimizer(o):
    return [p for g in o.param_groups for p in g["params"]]


INVALID = {
    "not_an_optimizer": lambda o, S: S.StepLR(not_an_optimizer(o), 3),
    "resume_without_initial_lr": lambda o, S: S.StepLR(o, 3, last_epoch=4),
    "lambda_count": lambda o, S: S.LambdaLR(o, [decay_per_group_0]),
    "multiplicative_not_callable": lambda o, S: S.MultiplicativeLR(o, 0.9),
    "constant_factor": lambda o, S: S.ConstantLR(o, factor=1.5),
    "linear_start_factor_zero": lambda o, S: S.LinearLR(o, start_factor=0),
    "linear_start_factor_big": lambda o, S: S.LinearLR(o, start_factor=1.5),
    "linear_end_factor": lambda o, S: S.LinearLR(o, end_factor=-0.1),
    "warm_restarts_T_0": lambda o, S: S.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm_restarts_T_0_float": lambda o, S: S.CosineAnnealingWarmRestarts(o, T_0=2.0),
    "warm_restarts_T_mult": lambda o, S: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=0),
    "warm_restarts_eta_min": lambda o, S: S.CosineAnnealingWarmRestarts(o, T_0=3, eta_min="0"),
    "cyclic_mode": lambda o, S: S.CyclicLR(o, 0.01, 0.1, mode="sawtooth"),
    "cyclic_max_lr_count": lambda o, S: S.CyclicLR(o, 0.01, [0.1, 0.2]),
    "onecycle_no_steps": lambda o, S: S.OneCycleLR(o, max_lr=0.1),
    "onecycle_epochs_only": lambda o, S: S.OneCycleLR(o, max_lr=0.1, epochs=3),
    "onecycle_total_steps_zero": lambda o, S: S.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "onecycle_total_steps_float": lambda o, S: S.OneCycleLR(o, max_lr=0.1, total_steps=10.0),
    "onecycle_epochs_zero": lambda o, S: S.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=4),
    "onecycle_steps_per_epoch_float": lambda o, S: S.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=4.0),
    "onecycle_pct_start_int": lambda o, S: S.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1),
    "onecycle_pct_start_big": lambda o, S: S.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
    "onecycle_anneal_strategy": lambda o, S: S.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    "onecycle_max_lr_count": lambda o, S: S.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=10),
    "onecycle_momentum_count": lambda o, S: S.OneCycleLR(o, max_lr=0.1, total_steps=10, max_momentum=[0.9]),
    "plateau_factor": lambda o, S: S.ReduceLROnPlateau(o, factor=1.0),
    "plateau_not_an_optimizer": lambda o, S: S.ReduceLROnPlateau(not_an_optimizer(o)),
    "plateau_mode": lambda o, S: S.ReduceLROnPlateau(o, mode="avg"),
    "plateau_threshold_mode": lambda o, S: S.ReduceLROnPlateau(o, threshold_mode="pct"),
    "plateau_min_lr_count": lambda o, S: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    "sequential_empty": lambda o, S: S.SequentialLR(o, [], []),
    "sequential_milestone_count": lambda o, S: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(o, 3)], [2, 4]),
    "sequential_plateau": lambda o, S: S.SequentialLR(o, [S.StepLR(o, 2), S.ReduceLROnPlateau(o)], [2]),
    "sequential_not_a_scheduler": lambda o, S: S.SequentialLR(o, [S.StepLR(o, 2), object()], [2]),
    "chained_empty": lambda o, S: S.ChainedScheduler([]),
    "chained_plateau": lambda o, S: S.ChainedScheduler([S.ReduceLROnPlateau(o)]),
}


def raised(lib, make, optimizer_name="SGD", **optimizer_kwargs):
    optimizer = getattr(lib.optim, optimizer_name)(
        [{"params": [p], "lr": lr} for p, lr in zip(make_params(lib), LRS)], **optimizer_kwargs)
    with pytest.raises(Exception) as info:
        make(optimizer, lib.optim.lr_scheduler)
    return info.value


@pytest.mark.parametrize("name", INVALID)
def test_invalid_arguments_raise_torchs_exception(name):
    expected = raised(torch, INVALID[name])
    actual = raised(tp, INVALID[name])
    assert type(actual) is type(expected)
    assert str(actual) == str(expected)


@pytest.mark.parametrize("scheduler", ["OneCycleLR", "CyclicLR"])
def test_cycle_momentum_needs_momentum_or_betas(scheduler):
    def make(o, S):
        if scheduler == "OneCycleLR":
            return S.OneCycleLR(o, max_lr=0.1, total_steps=10)
        return S.CyclicLR(o, 0.01, 0.1)

    expected = raised(torch, make, "Adagrad")
    actual = raised(tp, make, "Adagrad")
    assert type(actual) is type(expected) is ValueError
    assert str(actual) == str(expected) == ("optimizer must support momentum or beta1 with `cycle_momentum` option "
                                            "enabled")


def test_onecycle_raises_past_total_steps():
    errors = []
    for lib in LIBS.values():
        optimizer = lib.optim.SGD(make_params(lib), lr=0.1, momentum=0.9)
        sched = lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=5)
        for _ in range(5):
            optimizer.step()
            sched.step()
        with pytest.raises(ValueError) as info:
            sched.step()
        errors.append(str(info.value))
    assert errors[0] == errors[1] == "Tried to step 6 times. The specified number of total steps is 5"


def test_plateau_min_lrs_must_follow_added_groups():
    for lib in LIBS.values():
        params = make_params(lib)
        optimizer = lib.optim.SGD(params[:1], lr=0.1)
        per_group = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, min_lr=[0.01])
        shared = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, min_lr=0.02)
        optimizer.add_param_group({"params": params[1:2], "lr": 0.1})
        for sched in (per_group, shared):
            sched.step(1.0)
        shared.step(2.0)  # 0.1 * factor 0.1 is clamped to min_lr 0.02, now in both groups
        assert shared.min_lrs == [0.02, 0.02] and shared.get_last_lr() == [0.02, 0.02]
        with pytest.raises(RuntimeError, match="differs from when `ReduceLROnPlateau` was initialized"):
            per_group.step(2.0)


# ---- warnings and the deprecated step(epoch) ----

def test_scheduler_step_before_optimizer_step_warns():
    for lib in LIBS.values():
        optimizer = lib.optim.SGD(make_params(lib), lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(optimizer, 2)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            sched.step()


def test_optimizer_step_replaced_after_construction_warns():
    for lib in LIBS.values():
        optimizer = lib.optim.SGD(make_params(lib), lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(optimizer, 2)
        optimizer.step = type(optimizer).step.__get__(optimizer)
        optimizer.step()
        with pytest.warns(UserWarning, match=r"Seems like `optimizer.step\(\)` has been overridden"):
            sched.step()


def test_get_lr_outside_step_warns():
    for lib in LIBS.values():
        sched = lib.optim.lr_scheduler.StepLR(lib.optim.SGD(make_params(lib), lr=0.1), 2)
        with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
            sched.get_lr()


DEPRECATED_EPOCHS = [3, 10, 4, 4, 0, 17]

EPOCH_CASES = {
    "step": lambda o, S: S.StepLR(o, 3, gamma=0.5),
    "multistep": lambda o, S: S.MultiStepLR(o, [2, 4, 4, 11], gamma=0.5),
    "constant": lambda o, S: S.ConstantLR(o, factor=0.5, total_iters=4),
    "linear": lambda o, S: S.LinearLR(o, start_factor=0.2, end_factor=0.8, total_iters=6),
    "exponential": lambda o, S: S.ExponentialLR(o, gamma=0.9),
    "polynomial": lambda o, S: S.PolynomialLR(o, total_iters=12, power=1.5),
    "cosine": lambda o, S: S.CosineAnnealingLR(o, T_max=8, eta_min=0.01),
    "lambda": lambda o, S: S.LambdaLR(o, lambda e: 1.0 / (1 + e)),  # no closed form: get_lr() at that epoch
}


def epoch_trajectory(lib, make):
    params = make_params(lib)
    optimizer = lib.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, LRS)])
    sched = make(optimizer, lib.optim.lr_scheduler)
    trajectory = []
    for i, epoch in enumerate(DEPRECATED_EPOCHS):
        train_step(optimizer, params)
        if i % 2:
            sched.step()
        else:
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
                sched.step(epoch)
        trajectory.append((sched.last_epoch, snapshot(sched, optimizer)))
    return trajectory


@pytest.mark.parametrize("name", EPOCH_CASES)
def test_deprecated_step_with_epoch(name):
    assert_same(epoch_trajectory(tp, EPOCH_CASES[name]), epoch_trajectory(torch, EPOCH_CASES[name]))


def test_warm_restarts_fractional_epochs():
    results = []
    for lib in LIBS.values():
        optimizer = lib.optim.SGD(make_params(lib)[:1], lr=0.1)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3, T_mult=2, eta_min=0.01)
        trajectory = []
        for epoch in [0.5, 1.25, 2.999, 3.0, 7.5, 9.0, 20.25]:
            optimizer.step()
            sched.step(epoch)
            trajectory.append((sched.last_epoch, sched.T_cur, sched.T_i, sched.get_last_lr()))
        with pytest.raises(ValueError) as info:
            sched.step(-1)
        results.append((trajectory, type(info.value), str(info.value)))
    assert_same(results[0], results[1])


def test_plateau_step_with_epoch_warns():
    for lib in LIBS.values():
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(lib.optim.SGD(make_params(lib), lr=0.1))
        with pytest.warns(UserWarning, match="The epoch parameter"):
            sched.step(1.0, epoch=5)
        assert sched.last_epoch == 5

"""tensorplay.optim.swa_utils against torch.optim.swa_utils (the oracle).

AveragedModel: the same model (Linear + BatchNorm1d, torch's weights copied into tensorplay's) is
given the same sequence of parameter and buffer values in both libraries, and after every
update_parameters() the averaged model's whole state_dict must equal torch's: exactly for the
per-tensor averages (the same arithmetic), to a float32 ulp for the lerp-based multi-tensor ones.
SWALR: the learning rates of every step, for both annealing strategies, to 1e-12. update_bn: the
running statistics after a pass over the same batches. Then the errors and warnings torch gives.
"""

import inspect
import math
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp
from nn_testing import copy_state, to_numpy, tp_tensor
from shared import LIBS

UPDATES = 6


def make_model(nn):
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))


def make_pair(make=make_model):
    torch.manual_seed(0)
    torch_model, tp_model = make(torch.nn), make(tp.nn)
    copy_state(torch_model, tp_model)
    return torch_model, tp_model


def set_state(torch_model, tp_model, rng, step):
    """Gives both models the same new values: random floats, and num_batches_tracked = step * 3."""
    with torch.no_grad(), tp.no_grad():
        tp_state = tp_model.state_dict(keep_vars=True)
        for name, t in torch_model.state_dict(keep_vars=True).items():
            if t.is_floating_point():
                values = rng.standard_normal(tuple(t.shape)).astype(np.float32)
                if name.endswith("running_var"):
                    values = np.abs(values) + 0.5
                t.copy_(torch.from_numpy(values))
            else:
                t.fill_(step * 3)
            tp_state[name].copy_(tp_tensor(t).to(tp_state[name].dtype))


def assert_states_equal(tp_module, torch_module, rtol=0.0, what=""):
    tp_state, torch_state = tp_module.state_dict(), torch_module.state_dict()
    assert list(tp_state) == list(torch_state), f"{what}: keys {list(tp_state)} != {list(torch_state)}"
    for name, want in torch_state.items():
        got = tp_state[name]
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], f"{what} {name}: dtype {got.dtype}"
        assert tuple(got.shape) == tuple(want.shape), f"{what} {name}: shape {tuple(got.shape)}"
        if rtol == 0.0 or not want.is_floating_point():
            np.testing.assert_array_equal(to_numpy(got), to_numpy(want), err_msg=f"{what} {name}")
        else:
            np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=rtol, atol=1e-7, err_msg=f"{what} {name}")


def custom_avg(averaged, current, num_averaged):
    return averaged * 0.25 + current * 0.75 + num_averaged


def custom_multi_avg(averaged_list, current_list, num_averaged):
    for a, c in zip(averaged_list, current_list):
        a.copy_(a * 0.5 + c * 0.5)


# (AveragedModel kwargs builder, rtol): the per-tensor averages repeat torch's arithmetic exactly;
# lerp_ may round differently from torch's _foreach_lerp_ by an ulp.
AVERAGING = {
    "swa_default": (lambda su: {}, 0.0),
    "swa_default_use_buffers": (lambda su: {"use_buffers": True}, 0.0),
    "swa_avg_fn": (lambda su: {"avg_fn": su.get_swa_avg_fn()}, 0.0),
    "swa_avg_fn_use_buffers": (lambda su: {"avg_fn": su.get_swa_avg_fn(), "use_buffers": True}, 0.0),
    "swa_multi_avg_fn": (lambda su: {"multi_avg_fn": su.get_swa_multi_avg_fn()}, 1e-6),
    "ema_avg_fn": (lambda su: {"avg_fn": su.get_ema_avg_fn(0.9)}, 0.0),
    "ema_avg_fn_use_buffers": (lambda su: {"avg_fn": su.get_ema_avg_fn(0.75), "use_buffers": True}, 0.0),
    "ema_multi_avg_fn": (lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)}, 1e-6),
    "ema_multi_avg_fn_use_buffers": (lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(), "use_buffers": True},
                                     1e-6),
    "custom_avg_fn": (lambda su: {"avg_fn": custom_avg}, 0.0),
    "custom_multi_avg_fn_use_buffers": (lambda su: {"multi_avg_fn": custom_multi_avg, "use_buffers": True}, 0.0),
}


@pytest.mark.parametrize("name", list(AVERAGING))
def test_averaged_model_matches_torch_after_every_update(name):
    kwargs, rtol = AVERAGING[name]
    torch_model, tp_model = make_pair()
    torch_avg = torch.optim.swa_utils.AveragedModel(torch_model, **kwargs(torch.optim.swa_utils))
    tp_avg = tp.optim.swa_utils.AveragedModel(tp_model, **kwargs(tp.optim.swa_utils))
    assert_states_equal(tp_avg, torch_avg, what="before any update")
    rng = np.random.default_rng(1)
    for step in range(1, UPDATES + 1):
        set_state(torch_model, tp_model, rng, step)
        torch_avg.update_parameters(torch_model)
        tp_avg.update_parameters(tp_model)
        assert_states_equal(tp_avg, torch_avg, rtol, what=f"after update {step}")
    assert int(tp_avg.n_averaged) == UPDATES


def test_multi_avg_fn_gets_one_call_per_dtype_like_torch():
    """The tensors are grouped by (device, dtype): the float32 parameters and buffers, and the int64
    num_batches_tracked. torch's group order comes from a C++ hash map, so only the groups are compared."""
    seen = {}
    for m in (torch, tp):
        calls = seen[m] = []

        def record(averaged_list, current_list, num_averaged, calls=calls):
            calls.append(([str(a.dtype).split(".")[-1] for a in averaged_list], len(current_list),
                          int(num_averaged), str(num_averaged.dtype).split(".")[-1]))

        model = make_model(m.nn)
        avg = m.optim.swa_utils.AveragedModel(model, multi_avg_fn=record, use_buffers=True)
        for _ in range(3):
            avg.update_parameters(model)
    assert sorted(seen[tp]) == sorted(seen[torch])
    assert len(seen[tp]) == 4


def test_first_update_copies_and_later_updates_average():
    torch_model, tp_model = make_pair()
    avg = tp.optim.swa_utils.AveragedModel(tp_model)
    values = []
    rng = np.random.default_rng(2)
    for step in range(1, 4):
        set_state(torch_model, tp_model, rng, step)
        values.append(to_numpy(tp_model[0].weight))
        avg.update_parameters(tp_model)
        np.testing.assert_allclose(to_numpy(avg.module[0].weight), np.mean(values, axis=0), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(to_numpy(avg.n_averaged), 3)
    assert avg.n_averaged.dtype == tp.int64 and avg.n_averaged.dim() == 0


@pytest.mark.parametrize("use_buffers", [False, True])
def test_buffers_follow_the_model_unless_averaged(use_buffers):
    torch_model, tp_model = make_pair()
    avg = tp.optim.swa_utils.AveragedModel(tp_model, use_buffers=use_buffers)
    rng = np.random.default_rng(3)
    means = []
    for step in range(1, 4):
        set_state(torch_model, tp_model, rng, step)
        means.append(to_numpy(tp_model[1].running_mean))
        avg.update_parameters(tp_model)
    got = to_numpy(avg.module[1].running_mean)
    want = np.mean(means, axis=0) if use_buffers else means[-1]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_averaged_model_is_a_deep_copy_on_the_device():
    _, tp_model = make_pair()
    avg = tp.optim.swa_utils.AveragedModel(tp_model, device=tp.device("cpu"))
    assert avg.module is not tp_model
    for p_avg, p_model in zip(avg.module.parameters(), tp_model.parameters()):
        assert p_avg is not p_model
        np.testing.assert_array_equal(to_numpy(p_avg), to_numpy(p_model))
    with tp.no_grad():
        tp_model[0].weight.add_(1.0)
    assert not np.array_equal(to_numpy(avg.module[0].weight), to_numpy(tp_model[0].weight))
    assert avg.n_averaged.device.type == "cpu"
    assert isinstance(avg, tp.nn.Module)
    assert [name for name, _ in avg.named_buffers()][0] == "n_averaged"


def test_forward_delegates_to_the_module():
    torch_model, tp_model = make_pair()
    torch_avg = torch.optim.swa_utils.AveragedModel(torch_model).eval()
    tp_avg = tp.optim.swa_utils.AveragedModel(tp_model).eval()
    x = np.random.default_rng(4).standard_normal((5, 4)).astype(np.float32)
    got, want = tp_avg(tp_tensor(x)), torch_avg(torch.from_numpy(x))
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(got), to_numpy(tp_model.eval()(tp_tensor(x))), rtol=0, atol=0)


@pytest.mark.parametrize("m", LIBS)
def test_forward_passes_keyword_arguments(m):
    class Scale(m.nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    out = m.optim.swa_utils.AveragedModel(Scale())(m.ones(2), factor=3.0)
    np.testing.assert_array_equal(to_numpy(out), [3.0, 3.0])


def test_integer_buffers_averaged_like_torch():
    """num_batches_tracked (int64) under use_buffers: SWA truncates the float average, EMA too."""
    for kwargs in ({"use_buffers": True}, {"use_buffers": True, "avg_fn": "ema"}):
        torch_model, tp_model = make_pair()
        made = {}
        for m, model in ((torch, torch_model), (tp, tp_model)):
            k = dict(kwargs)
            if k.get("avg_fn") == "ema":
                k["avg_fn"] = m.optim.swa_utils.get_ema_avg_fn(0.5)
            made[m] = m.optim.swa_utils.AveragedModel(model, **k)
        rng = np.random.default_rng(5)
        for step in range(1, 5):
            set_state(torch_model, tp_model, rng, step)
            made[torch].update_parameters(torch_model)
            made[tp].update_parameters(tp_model)
            assert int(made[tp].module[1].num_batches_tracked) == int(made[torch].module[1].num_batches_tracked)


@pytest.mark.parametrize("m", LIBS)
def test_swa_multi_avg_fn_rejects_integer_buffers(m):
    """torch's multi-tensor SWA cannot divide integer tensors (addcdiv); the error is the same."""
    model = make_model(m.nn)
    avg = m.optim.swa_utils.AveragedModel(model, multi_avg_fn=m.optim.swa_utils.get_swa_multi_avg_fn(),
                                          use_buffers=True)
    avg.update_parameters(model)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        avg.update_parameters(model)
    fn = m.optim.swa_utils.get_swa_multi_avg_fn()
    with pytest.raises(RuntimeError, match="argument alpha must not be a floating point number"):
        fn([m.ones(2, dtype=m.int64)], [m.ones(2, dtype=m.int64)], 1)


@pytest.mark.parametrize("m", LIBS)
def test_both_averaging_functions_is_an_assertion_error(m):
    su = m.optim.swa_utils
    with pytest.raises(AssertionError, match="^Only one of avg_fn and multi_avg_fn should be provided$"):
        su.AveragedModel(make_model(m.nn), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("getter", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_out_of_range_is_a_value_error(m, getter, decay):
    with pytest.raises(ValueError, match=rf"^Invalid decay value {decay} provided\. Please provide a value in "
                                         r"\[0,1\] range\.$"):
        getattr(m.optim.swa_utils, getter)(decay)


@pytest.mark.parametrize("decay", [0.0, 1.0])
def test_ema_decay_bounds_are_allowed(decay):
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 5.0])
    got = tp.optim.swa_utils.get_ema_avg_fn(decay)(a, b, 0)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(a) if decay == 1.0 else to_numpy(b))


def test_single_tensor_avg_fns_match_torch():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(7).astype(np.float32), rng.standard_normal(7).astype(np.float32)
    for n in (0, 3, tp.tensor(4)):
        tn = torch.tensor(int(n)) if isinstance(n, tp.Tensor) else n
        got = tp.optim.swa_utils.get_swa_avg_fn()(tp_tensor(a), tp_tensor(b), n)
        want = torch.optim.swa_utils.get_swa_avg_fn()(torch.from_numpy(a), torch.from_numpy(b), tn)
        np.testing.assert_array_equal(to_numpy(got), to_numpy(want))
    got = tp.optim.swa_utils.get_ema_avg_fn(0.8)(tp_tensor(a), tp_tensor(b), 2)
    want = torch.optim.swa_utils.get_ema_avg_fn(0.8)(torch.from_numpy(a), torch.from_numpy(b), 2)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(want))


def test_multi_avg_fns_update_in_place_like_torch():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((3,), (2, 2), (3,), (2, 2))]
    for make in (lambda su: su.get_swa_multi_avg_fn(), lambda su: su.get_ema_multi_avg_fn(0.7)):
        tp_avg, torch_avg = [tp_tensor(x) for x in arrays[:2]], [torch.from_numpy(x.copy()) for x in arrays[:2]]
        tp_cur, torch_cur = [tp_tensor(x) for x in arrays[2:]], [torch.from_numpy(x.copy()) for x in arrays[2:]]
        assert make(tp.optim.swa_utils)(tp_avg, tp_cur, tp.tensor(2)) is None
        make(torch.optim.swa_utils)(torch_avg, torch_cur, torch.tensor(2))
        for got, want in zip(tp_avg, torch_avg):
            np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-6, atol=1e-7)
        assert not np.allclose(to_numpy(tp_avg[0]), arrays[0])


def test_averaged_model_records_no_graph():
    _, tp_model = make_pair()
    avg = tp.optim.swa_utils.AveragedModel(tp_model)
    for _ in range(3):
        avg.update_parameters(tp_model)
    for p in avg.parameters():
        assert p.is_leaf and p.grad_fn is None and p.requires_grad


# ---- SWALR ----

WEIGHTS = [np.array([0.5, -1.0, 2.0], dtype=np.float32), np.array([[0.3, 0.1], [-0.2, 0.7]], dtype=np.float32)]
LRS = [0.1, 0.02]


def make_optimizer(m):
    params = [m.nn.Parameter(m.tensor(w.copy())) for w in WEIGHTS]
    return m.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, LRS)], momentum=0.9), params


def train_step(optimizer, params):
    optimizer.zero_grad()
    loss = sum((p * p).sum() for p in params)
    loss.backward()
    optimizer.step()


def lr_trajectory(m, steps, swa_kwargs, before=None, swa_start=0):
    """Learning rates of each group after construction and after every step; the SWALR takes
    over from `before` (a scheduler factory) at step swa_start, as in torch's documented recipe."""
    optimizer, params = make_optimizer(m)
    first = before(optimizer, m.optim.lr_scheduler) if before else None
    swa = m.optim.swa_utils.SWALR(optimizer, **swa_kwargs)
    lrs = [[g["lr"] for g in optimizer.param_groups] + swa.get_last_lr()]
    for i in range(steps):
        train_step(optimizer, params)
        (swa if i >= swa_start or first is None else first).step()
        lrs.append([g["lr"] for g in optimizer.param_groups] + swa.get_last_lr())
    return lrs, swa, optimizer


SWALR_CASES = {
    "cos_default": dict(swa_lr=0.05),
    "linear": dict(swa_lr=0.05, anneal_strategy="linear"),
    "cos_3_epochs": dict(swa_lr=0.5, anneal_epochs=3),
    "linear_1_epoch": dict(swa_lr=0.01, anneal_epochs=1, anneal_strategy="linear"),
    "no_annealing": dict(swa_lr=0.03, anneal_epochs=0),
    "per_group_linear": dict(swa_lr=[0.05, 0.001], anneal_epochs=7, anneal_strategy="linear"),
    "per_group_tuple_cos": dict(swa_lr=(0.2, 0.3), anneal_epochs=4),
}


@pytest.mark.parametrize("name", list(SWALR_CASES))
def test_swalr_learning_rates_match_torch(name):
    got, _, _ = lr_trajectory(tp, 15, SWALR_CASES[name])
    want, _, _ = lr_trajectory(torch, 15, SWALR_CASES[name])
    assert len(got) == len(want)
    for step, (g, w) in enumerate(zip(got, want)):
        for a, b in zip(g, w):
            assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), f"step {step}: {g} != torch's {w}"
    swa_lrs = SWALR_CASES[name]["swa_lr"]
    swa_lrs = list(swa_lrs) if isinstance(swa_lrs, (list, tuple)) else [swa_lrs] * 2
    assert got[-1][:2] == pytest.approx(swa_lrs, rel=1e-12), "the annealing should have reached swa_lr"


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_after_another_scheduler_matches_torch(strategy):
    """CosineAnnealingLR for 5 steps, then SWALR anneals from wherever that left the lr."""
    kwargs = dict(swa_lr=0.04, anneal_epochs=4, anneal_strategy=strategy)

    def before(o, S):
        return S.CosineAnnealingLR(o, T_max=12)

    got, _, _ = lr_trajectory(tp, 12, kwargs, before, swa_start=5)
    want, _, _ = lr_trajectory(torch, 12, kwargs, before, swa_start=5)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12, atol=1e-15)


def test_swalr_records_swa_lr_in_groups_and_state_dict_like_torch():
    _, tp_swa, tp_opt = lr_trajectory(tp, 3, dict(swa_lr=[0.05, 0.01], anneal_strategy="linear"))
    _, torch_swa, torch_opt = lr_trajectory(torch, 3, dict(swa_lr=[0.05, 0.01], anneal_strategy="linear"))
    assert [g["swa_lr"] for g in tp_opt.param_groups] == [g["swa_lr"] for g in torch_opt.param_groups]
    got, want = tp_swa.state_dict(), torch_swa.state_dict()
    assert "optimizer" not in got and "anneal_func" not in got
    for key in ("anneal_epochs", "_anneal_strategy", "last_epoch", "_step_count", "base_lrs"):
        assert got[key] == pytest.approx(want[key]), key
    assert set(want) - set(got) <= {"_is_initial"} and set(got) - set(want) <= {"_is_initial"}


def test_swalr_load_state_dict_restores_the_anneal_function():
    _, cos, _ = lr_trajectory(tp, 2, dict(swa_lr=0.05))
    _, lin, _ = lr_trajectory(tp, 2, dict(swa_lr=0.05, anneal_strategy="linear"))
    lin.load_state_dict(cos.state_dict())
    assert lin._anneal_strategy == "cos"
    assert lin.anneal_func(0.25) == pytest.approx((1 - math.cos(math.pi * 0.25)) / 2)


@pytest.mark.parametrize("m", LIBS)
def test_swalr_bad_anneal_strategy(m):
    optimizer, _ = make_optimizer(m)
    with pytest.raises(ValueError, match="^anneal_strategy must be one of 'cos' or 'linear', instead got exp$"):
        m.optim.swa_utils.SWALR(optimizer, 0.05, anneal_strategy="exp")


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("epochs", [-1, 2.0, "3"])
def test_swalr_bad_anneal_epochs(m, epochs):
    optimizer, _ = make_optimizer(m)
    with pytest.raises(ValueError, match=f"^anneal_epochs must be equal or greater than 0, got {epochs}$"):
        m.optim.swa_utils.SWALR(optimizer, 0.05, anneal_epochs=epochs)


@pytest.mark.parametrize("m", LIBS)
def test_swalr_swa_lr_list_of_wrong_length(m):
    optimizer, _ = make_optimizer(m)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        m.optim.swa_utils.SWALR(optimizer, [0.1, 0.2, 0.3])


@pytest.mark.parametrize("m", LIBS)
def test_swalr_get_lr_outside_step_warns(m):
    optimizer, _ = make_optimizer(m)
    swa = m.optim.swa_utils.SWALR(optimizer, 0.05)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        swa.get_lr()


def test_swalr_is_an_lr_scheduler():
    assert issubclass(tp.optim.swa_utils.SWALR, tp.optim.lr_scheduler.LRScheduler)


# ---- update_bn ----

def make_bn_model(nn):
    return nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6, momentum=0.3), nn.ReLU(), nn.Linear(6, 3),
                         nn.BatchNorm1d(3))


def make_conv_bn_model(nn):
    return nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4))


BATCHES = [np.random.default_rng(8 + i).standard_normal((5 + i, 4)).astype(np.float32) for i in range(4)]


def loader_for(m, kind):
    batches = [m.tensor(b.copy()) for b in BATCHES]
    if kind == "tensors":
        return batches
    if kind == "tuples":
        return [(b, m.zeros(b.shape[0])) for b in batches]
    return [[b, 0] for b in batches]


@pytest.mark.parametrize("kind", ["tensors", "tuples", "lists"])
@pytest.mark.parametrize("training", [False, True])
def test_update_bn_matches_torch(kind, training):
    torch_model, tp_model = make_pair(make_bn_model)
    rng = np.random.default_rng(9)
    set_state(torch_model, tp_model, rng, 7)  # stale statistics that update_bn must discard
    torch_model.train(training)
    tp_model.train(training)
    assert torch.optim.swa_utils.update_bn(loader_for(torch, kind), torch_model) is None
    assert tp.optim.swa_utils.update_bn(loader_for(tp, kind), tp_model) is None
    assert_states_equal(tp_model, torch_model, rtol=1e-5, what="after update_bn")
    assert int(tp_model[1].num_batches_tracked) == len(BATCHES)
    assert [tp_model[1].momentum, tp_model[4].momentum] == [0.3, 0.1]
    assert all(mod.training == training for mod in tp_model.modules())


def test_update_bn_is_a_cumulative_average_over_batches():
    """momentum None during the pass: the running mean is the plain mean of the batch means."""
    model = tp.nn.Sequential(tp.nn.BatchNorm1d(4))
    tp.optim.swa_utils.update_bn([tp.tensor(b.copy()) for b in BATCHES], model, device="cpu")
    want = np.mean([b.mean(axis=0) for b in BATCHES], axis=0)
    np.testing.assert_allclose(to_numpy(model[0].running_mean), want, rtol=1e-5, atol=1e-6)
    want_var = np.mean([b.var(axis=0, ddof=1) for b in BATCHES], axis=0)
    np.testing.assert_allclose(to_numpy(model[0].running_var), want_var, rtol=1e-5, atol=1e-6)


def test_update_bn_conv_model_matches_torch():
    torch_model, tp_model = make_pair(make_conv_bn_model)
    batches = [np.random.default_rng(i).standard_normal((3, 2, 6, 6)).astype(np.float32) for i in range(3)]
    torch.optim.swa_utils.update_bn([torch.from_numpy(b) for b in batches], torch_model)
    tp.optim.swa_utils.update_bn([tp_tensor(b) for b in batches], tp_model)
    assert_states_equal(tp_model, torch_model, rtol=1e-5, what="after update_bn")
    assert tp_model.training and tp_model[1].training


def test_update_bn_on_an_averaged_model_matches_torch():
    torch_model, tp_model = make_pair(make_bn_model)
    torch_avg = torch.optim.swa_utils.AveragedModel(torch_model)
    tp_avg = tp.optim.swa_utils.AveragedModel(tp_model)
    torch_avg.update_parameters(torch_model)
    tp_avg.update_parameters(tp_model)
    torch.optim.swa_utils.update_bn(loader_for(torch, "tuples"), torch_avg)
    tp.optim.swa_utils.update_bn(loader_for(tp, "tuples"), tp_avg)
    assert_states_equal(tp_avg, torch_avg, rtol=1e-5, what="after update_bn")


@pytest.mark.parametrize("m", LIBS)
def test_update_bn_without_batchnorm_does_not_touch_the_model(m):
    model = m.nn.Sequential(m.nn.Linear(4, 2)).eval()
    calls = []
    model.register_forward_hook(lambda *args: calls.append(1))
    m.optim.swa_utils.update_bn(loader_for(m, "tensors"), model)
    assert calls == [] and not model.training


def test_update_bn_records_no_graph():
    _, tp_model = make_pair(make_bn_model)
    seen = []
    tp_model.register_forward_hook(lambda module, args, out: seen.append(out.requires_grad))
    tp.optim.swa_utils.update_bn(loader_for(tp, "tensors"), tp_model)
    assert seen == [False] * len(BATCHES)


# ---- names and signatures ----

def test_public_names_and_signatures_match_torch():
    assert sorted(tp.optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
    for name in torch.optim.swa_utils.__all__:
        want = inspect.signature(getattr(torch.optim.swa_utils, name))
        got = inspect.signature(getattr(tp.optim.swa_utils, name))
        assert [(p.name, p.default, p.kind) for p in got.parameters.values()] == [
            (p.name, p.default, p.kind) for p in want.parameters.values()], f"{name}{got} != torch's {name}{want}"
    assert tp.optim.swa_utils is __import__("tensorplay.optim.swa_utils", fromlist=["x"])


def test_no_warnings_in_a_normal_swa_run():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lr_trajectory(tp, 4, dict(swa_lr=0.05))
        _, tp_model = make_pair()
        avg = tp.optim.swa_utils.AveragedModel(tp_model)
        avg.update_parameters(tp_model)
        avg.update_parameters(tp_model)

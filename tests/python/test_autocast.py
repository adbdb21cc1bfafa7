"""tensorplay.autocast and tensorplay.amp: the API, regions, the cache, threads, custom Functions,
checkpointing and the features beyond PyTorch. Per-op dtypes against torch are in
test_autocast_ops.py, the grad scaler in test_grad_scaler.py."""

import functools
import threading
import warnings

import numpy as np
import pytest
import torch

import tensorplay
import tensorplay.nn as nn
import tensorplay.nn.functional as F
from tensorplay.utils.checkpoint import checkpoint

bf16, f16, f32, f64 = tensorplay.bfloat16, tensorplay.float16, tensorplay.float32, tensorplay.float64


def weight(*shape, seed=0):
    """A float32 leaf that requires grad: what autocast caches."""
    rng = np.random.default_rng(seed)
    return tensorplay.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)


def data(*shape, seed=1):
    rng = np.random.default_rng(seed)
    return tensorplay.tensor(rng.standard_normal(shape).astype(np.float32))


def cpu_state():
    return (tensorplay.is_autocast_enabled("cpu"), tensorplay.get_autocast_dtype("cpu"),
            tensorplay.is_autocast_cache_enabled())


@pytest.fixture(autouse=True)
def no_leaked_state():
    """Every test starts and must end with autocast off and its defaults in place."""
    before = cpu_state()
    assert before == (False, bf16, True)
    yield
    assert cpu_state() == before
    assert tensorplay._C._amp._cache_size() == 0


# ---- the reference example ----

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class AutocastNet(Net):
    @tensorplay.autocast(device_type="cpu")
    def forward(self, x):
        return super().forward(x)


def reference_data(n=4):
    rng = np.random.default_rng(0)
    return [(tensorplay.tensor(rng.standard_normal((6, 8)).astype(np.float32)),
             tensorplay.tensor(rng.integers(0, 4, 6))) for _ in range(n)]


def test_reference_example_runs_verbatim():
    tensorplay.manual_seed(0)
    device = "cpu"
    model = Net().to(device)
    optimizer = tensorplay.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    before = [p.detach().clone() for p in model.parameters()]
    for input, target in reference_data():
        optimizer.zero_grad()
        with tensorplay.autocast(device_type=device):
            output = model(input)
            loss = loss_fn(output, target)
        loss.backward()
        optimizer.step()
        assert output.dtype == bf16 and loss.dtype == f32
        assert all(p.grad.dtype == f32 for p in model.parameters())
    assert all(p.dtype == f32 for p in model.parameters())
    assert all(not p.equal(b) for p, b in zip(model.parameters(), before))


def test_reference_example_with_the_decorator_on_forward():
    model = AutocastNet()
    optimizer = tensorplay.optim.SGD(model.parameters(), lr=0.1)
    for input, target in reference_data(2):
        optimizer.zero_grad()
        output = model(input)
        assert output.dtype == bf16
        assert not tensorplay.is_autocast_enabled("cpu")
        loss = F.cross_entropy(output.float(), target)
        loss.backward()
        optimizer.step()
        assert all(p.grad.dtype == f32 for p in model.parameters())


def test_training_matches_torch_autocast_step_for_step():
    """The same model, data and SGD steps under CPU autocast in both libraries."""
    tp_model = Net()
    t_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        for (name, p), tp_p in zip(t_model.named_parameters(), tp_model.parameters()):
            p.copy_(torch.from_numpy(tp_p.detach().numpy()))
    tp_opt = tensorplay.optim.SGD(tp_model.parameters(), lr=0.1)
    t_opt = torch.optim.SGD(t_model.parameters(), lr=0.1)
    for input, target in reference_data(5):
        for opt in (tp_opt, t_opt):
            opt.zero_grad()
        with tensorplay.autocast("cpu"):
            tp_loss = F.cross_entropy(tp_model(input), target)
        with torch.autocast("cpu"):
            t_loss = torch.nn.functional.cross_entropy(t_model(torch.from_numpy(input.numpy())),
                                                       torch.from_numpy(target.numpy()))
        tp_loss.backward()
        t_loss.backward()
        tp_opt.step()
        t_opt.step()
        assert tp_loss.item() == pytest.approx(t_loss.item(), rel=2e-2, abs=1e-3)
    for tp_p, t_p in zip(tp_model.parameters(), t_model.parameters()):
        np.testing.assert_allclose(tp_p.detach().numpy(), t_p.detach().numpy(), rtol=2e-2, atol=2e-3)


def test_mlp_trained_under_autocast_reaches_the_loss_of_its_float32_twin():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 8)).astype(np.float32)
    y = (x[:, :4].sum(1) > x[:, 4:].sum(1)).astype(np.int64) + 2 * (x[:, 0] > 0)
    x, y = tensorplay.tensor(x), tensorplay.tensor(y)

    def train(use_autocast):
        tensorplay.manual_seed(0)
        model = Net()
        opt = tensorplay.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        for step in range(150):
            batch = slice((step % 8) * 32, (step % 8 + 1) * 32)
            opt.zero_grad()
            with tensorplay.autocast("cpu", enabled=use_autocast):
                loss = F.cross_entropy(model(x[batch]), y[batch])
            loss.backward()
            opt.step()
        with tensorplay.no_grad():
            return F.cross_entropy(model(x), y).item()

    float32_loss, mixed_loss = train(False), train(True)
    assert float32_loss < 0.5  # the task is learnable: both runs are compared at a low loss
    assert mixed_loss == pytest.approx(float32_loss, abs=0.05)


# ---- defaults, state functions and argument checks ----

def test_defaults():
    assert tensorplay.get_autocast_dtype("cpu") == bf16
    assert tensorplay.get_autocast_dtype("cuda") == f16
    assert not tensorplay.is_autocast_enabled("cpu") and not tensorplay.is_autocast_enabled("cuda")
    assert tensorplay.is_autocast_enabled() is False  # no argument: CUDA, as in PyTorch
    assert tensorplay.is_autocast_cache_enabled()
    assert tensorplay.is_autocast_available("cpu") and tensorplay.is_autocast_available("cuda")
    assert tensorplay.amp.is_autocast_available("cpu")
    assert not tensorplay.is_autocast_available("meta")


def test_region_sets_and_restores_the_state():
    with tensorplay.autocast("cpu") as region:
        assert isinstance(region, tensorplay.autocast)
        assert cpu_state() == (True, bf16, True)
        assert not tensorplay.is_autocast_enabled("cuda")
    with tensorplay.autocast("cpu", dtype=f16, cache_enabled=False):
        assert cpu_state() == (True, f16, False)


def test_state_functions_drive_ops_directly():
    x, w = data(3, 4), weight(5, 4)
    tensorplay.set_autocast_enabled("cpu", True)
    try:
        assert F.linear(x, w).dtype == bf16
        tensorplay.set_autocast_dtype("cpu", f16)
        assert F.linear(x, w).dtype == f16
        tensorplay.set_autocast_cache_enabled(False)
        assert not tensorplay.is_autocast_cache_enabled()
    finally:
        tensorplay.clear_autocast_cache()  # no region closes here to clear it, as in PyTorch
        tensorplay.set_autocast_enabled("cpu", False)
        tensorplay.set_autocast_dtype("cpu", bf16)
        tensorplay.set_autocast_cache_enabled(True)
    assert F.linear(x, w).dtype == f32


def test_nesting_counter():
    assert tensorplay.autocast_increment_nesting() == 1
    assert tensorplay.autocast_increment_nesting() == 2
    assert tensorplay.autocast_decrement_nesting() == 1
    assert tensorplay.autocast_decrement_nesting() == 0


@pytest.mark.parametrize("device_type", [0, None, tensorplay.device("cpu")])
def test_non_str_device_type_raises_value_error_like_torch(device_type):
    with pytest.raises(ValueError, match="device_type"):
        tensorplay.autocast(device_type)
    with pytest.raises(ValueError):
        torch.autocast(device_type)


@pytest.mark.parametrize("device_type", ["gpu", "xla", "cuda:0", "CPU", ""])
def test_unknown_device_type_raises_and_lists_the_supported_ones(device_type):
    with pytest.raises(RuntimeError, match=r"'cpu'.*'cuda'"):
        tensorplay.autocast(device_type)


@pytest.mark.parametrize("fn", [tensorplay.get_autocast_dtype, tensorplay.is_autocast_enabled])
def test_state_functions_reject_unknown_device_types(fn):
    with pytest.raises(RuntimeError, match="cpu, cuda"):
        fn("tpu")


@pytest.mark.parametrize("kwargs,match", [
    ({"dtype": "bfloat16"}, "dtype"),
    ({"dtype": torch.bfloat16}, "dtype"),
    ({"enabled": 1}, "enabled"),
    ({"enabled": "yes"}, "enabled"),
    ({"cache_enabled": 0}, "cache_enabled"),
])
def test_wrongly_typed_arguments_raise_type_error(kwargs, match):
    with pytest.raises(TypeError, match=match):
        tensorplay.autocast("cpu", **kwargs)


@pytest.mark.parametrize("dtype", [f32, f64, tensorplay.int32])
def test_unsupported_dtype_warns_and_disables_the_region_like_torch(dtype):
    with pytest.warns(UserWarning, match="Disabling autocast"):
        region = tensorplay.autocast("cpu", dtype=dtype)
    with region:
        assert not tensorplay.is_autocast_enabled("cpu")
        assert F.linear(data(2, 3), weight(4, 3)).dtype == f32
    with pytest.warns(UserWarning, match="Disabling autocast"):
        torch.autocast("cpu", dtype=getattr(torch, str(dtype).split(".")[1]))


def test_cuda_region_without_cuda_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = tensorplay.autocast("cuda")
    with region:
        assert not tensorplay.is_autocast_enabled("cuda")


def test_disabled_region_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tensorplay.autocast("cuda", enabled=False):
            pass


def test_set_autocast_dtype_rejects_non_floating_dtypes():
    with pytest.raises(TypeError, match="floating"):
        tensorplay.set_autocast_dtype("cpu", tensorplay.int64)


# ---- nesting and exceptions ----

def test_nested_regions_restore_exactly_what_their_entry_saw():
    x, w = data(2, 3), weight(4, 3)
    seen = []
    with tensorplay.autocast("cpu"):
        seen.append((cpu_state(), F.linear(x, w).dtype))
        with tensorplay.autocast("cpu", dtype=f16, cache_enabled=False):
            seen.append((cpu_state(), F.linear(x, w).dtype))
            with tensorplay.autocast("cpu", enabled=False):
                seen.append((cpu_state(), F.linear(x, w).dtype))
                with tensorplay.autocast("cpu", dtype=bf16):
                    seen.append((cpu_state(), F.linear(x, w).dtype))
                seen.append((cpu_state(), F.linear(x, w).dtype))
            seen.append((cpu_state(), F.linear(x, w).dtype))
        seen.append((cpu_state(), F.linear(x, w).dtype))
    assert seen == [
        ((True, bf16, True), bf16),
        ((True, f16, False), f16),
        ((False, f16, False), f32),
        ((True, bf16, False), bf16),
        ((False, f16, False), f32),
        ((True, f16, False), f16),
        ((True, bf16, True), bf16),
    ]


def test_disabled_subregion_forces_float32_and_mixes_explicitly():
    x, w1, w2 = data(2, 3), weight(4, 3), weight(5, 4, seed=1)
    with tensorplay.autocast("cpu"):
        h = F.linear(x, w1)
        with tensorplay.autocast("cpu", enabled=False):
            with pytest.raises(RuntimeError, match=r"(?i)bfloat16.*float|float.*bfloat16"):
                F.linear(h, w2)  # outside autocast, mixing dtypes is the user's error, as in PyTorch
            y = F.linear(h.float(), w2)
    assert h.dtype == bf16 and y.dtype == f32


def test_exception_inside_a_region_restores_the_previous_state():
    with pytest.raises(ZeroDivisionError):
        with tensorplay.autocast("cpu", dtype=f16, cache_enabled=False):
            F.linear(data(2, 3), weight(4, 3))
            1 / 0
    with tensorplay.autocast("cpu"):
        with pytest.raises(RuntimeError):
            with tensorplay.autocast("cpu", enabled=False):
                tensorplay.mm(data(2, 3), data(4, 5))  # shape error inside the inner region
        assert cpu_state() == (True, bf16, True)


def test_regions_of_one_device_type_leave_the_other_alone():
    with pytest.warns(UserWarning):
        cuda_region = tensorplay.autocast("cuda", dtype=bf16)
    with tensorplay.autocast("cpu", dtype=f16):
        with cuda_region:
            assert tensorplay.get_autocast_dtype("cuda") == bf16
            assert tensorplay.get_autocast_dtype("cpu") == f16
        assert tensorplay.get_autocast_dtype("cuda") == f16


# ---- the decorator ----

def test_decorator_keeps_name_and_docstring_and_enters_on_every_call():
    @tensorplay.autocast("cpu")
    def forward(x, w):
        """Docstring."""
        assert tensorplay.is_autocast_enabled("cpu")
        return F.linear(x, w)

    assert forward.__name__ == "forward" and forward.__doc__ == "Docstring."
    for _ in range(3):
        assert forward(data(2, 3), weight(4, 3)).dtype == bf16
        assert not tensorplay.is_autocast_enabled("cpu")


def test_decorator_on_a_recursive_function_restores_each_level():
    region = tensorplay.autocast("cpu")

    @region
    def depth(n):
        assert tensorplay.is_autocast_enabled("cpu")
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(5) == 5
    assert not tensorplay.is_autocast_enabled("cpu")


def test_decorator_restores_the_state_when_the_function_raises():
    @tensorplay.autocast("cpu", dtype=f16)
    def fails():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        fails()


def test_decorator_rejects_non_callables():
    with pytest.raises(TypeError, match="callable"):
        tensorplay.autocast("cpu")(3)


def test_one_decorated_method_called_from_many_threads():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)

        @tensorplay.autocast("cpu")
        def forward(self, x):
            return self.fc(x)

    model, errors = Model(), []

    def work():
        try:
            for _ in range(30):
                assert model(data(2, 3)).dtype == bf16
                assert not tensorplay.is_autocast_enabled("cpu")
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# ---- threads ----

def test_a_thread_started_inside_a_region_starts_with_autocast_off():
    seen = {}

    def child():
        seen["state"] = cpu_state()
        seen["dtype"] = F.linear(data(2, 3), weight(4, 3)).dtype

    with tensorplay.autocast("cpu", dtype=f16, cache_enabled=False):
        t = threading.Thread(target=child)
        t.start()
        t.join()
    assert seen == {"state": (False, bf16, True), "dtype": f32}


def test_a_region_left_in_another_thread_exits_silently():
    """As in PyTorch: the leaving thread takes the state saved at the entry, the entering one keeps its own."""
    region = tensorplay.autocast("cpu", dtype=f16)
    seen = {}

    def enter():
        region.__enter__()
        seen["entered"] = cpu_state()

    t = threading.Thread(target=enter)
    t.start()
    t.join()
    before = cpu_state()
    assert region.__exit__(None, None, None) is False
    assert seen["entered"] == (True, f16, True)
    assert before == cpu_state() == (False, bf16, True)


def test_many_threads_in_many_regions_stay_isolated():
    configs = [(bf16, True), (f16, True), (bf16, False), (f16, False)] * 2
    barrier = threading.Barrier(len(configs))
    errors = []

    def work(dtype, enabled):
        try:
            x, w = data(4, 8), weight(8, 8)
            for i in range(40):
                with tensorplay.autocast("cpu", dtype=dtype, enabled=enabled):
                    if i == 0:
                        barrier.wait()  # every thread is inside its region at once
                    expected = dtype if enabled else f32
                    assert F.linear(x, w).dtype == expected
                    assert tensorplay.get_autocast_dtype("cpu") == dtype
                    with tensorplay.autocast("cpu", enabled=not enabled):
                        assert F.linear(x, w).dtype == (f32 if enabled else dtype)
                assert cpu_state() == (False, bf16, True)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=c) for c in configs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# ---- inputs that are never cast ----

def test_float64_integer_and_bool_inputs_are_never_cast():
    x64, w64 = data(2, 3).double(), weight(4, 3).detach().double()
    with tensorplay.autocast("cpu"):
        assert F.linear(x64, w64).dtype == f64
        assert tensorplay.mm(tensorplay.ones(2, 2, dtype=tensorplay.int64),
                             tensorplay.ones(2, 2, dtype=tensorplay.int64)).dtype == tensorplay.int64
        assert tensorplay.cat([tensorplay.ones(2, dtype=tensorplay.bool), tensorplay.ones(2, dtype=tensorplay.bool)
                               ]).dtype == tensorplay.bool
        assert F.mse_loss(data(3).double(), data(3).double()).dtype == f64


def test_outputs_produced_inside_are_bfloat16_and_need_a_cast_after():
    with tensorplay.autocast("cpu"):
        h = F.linear(data(2, 3), weight(4, 3))
    with pytest.raises(RuntimeError):
        tensorplay.mm(h, data(4, 2))
    assert tensorplay.mm(h.float(), data(4, 2)).dtype == f32


# ---- gradients ----

def test_backward_outside_the_region_gives_float32_gradients_computed_in_bfloat16():
    x, w, b = data(3, 4), weight(5, 4), weight(5, seed=2)
    with tensorplay.autocast("cpu"):
        y = F.linear(x, w, b)
    upstream = data(3, 5, seed=3).to(bf16)
    y.backward(upstream)
    assert w.grad.dtype == f32 and b.grad.dtype == f32
    # What bfloat16 backward computes: grad_w = upstream^T @ x, in bfloat16, cast to float32.
    expected = (upstream.float().t() @ x.to(bf16).float()).to(bf16).float()
    np.testing.assert_allclose(w.grad.numpy(), expected.numpy(), rtol=1e-2, atol=1e-2)
    assert y.grad_fn is not None and "ToCopyBackward0" in str(y.grad_fn.next_functions)


# ---- the weight cache, observed through traces ----

def linear_entries(t):
    return [e for e in t.entries if e.op == "linear"]


def test_weights_are_cast_once_per_region():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            a = F.linear(x, w)
            b = F.linear(x, w)
            assert tensorplay._C._amp._cache_size() == 1
    first, second = linear_entries(t)
    assert (first.casts, first.cache_hits) == (2, 0)  # x and w cast; w's cast cached
    assert (second.casts, second.cache_hits) == (2, 1)
    assert a.equal(b)


@pytest.mark.parametrize("kind", ["no_grad_leaf", "non_leaf", "view", "float64", "bfloat16"])
def test_only_float32_leaves_that_require_grad_and_are_not_views_are_cached(kind):
    base = weight(4, 3)
    w = {"no_grad_leaf": base.detach(), "non_leaf": base * 1, "view": base[:, :],
         "float64": base.detach().double().requires_grad_(), "bfloat16": base.detach().to(bf16).requires_grad_()}[kind]
    x = data(2, 3).to(w.dtype)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu", dtype=f16):
            F.linear(x, w)
            F.linear(x, w)
            assert tensorplay._C._amp._cache_size() == 0
    assert all(e.cache_hits == 0 for e in linear_entries(t))


def test_an_in_place_change_invalidates_the_cached_cast():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            before = F.linear(x, w)
            with tensorplay.no_grad():
                w.add_(1.0)
            after = F.linear(x, w)
    assert [e.cache_hits for e in linear_entries(t)] == [0, 0]
    assert not before.equal(after)
    np.testing.assert_allclose(after.detach().float().numpy(), F.linear(x, w).detach().numpy(), rtol=2e-2, atol=5e-2)


def test_a_cast_made_under_no_grad_is_not_reused_with_grad_on():
    """PyTorch issue 112583: reusing the graph-less cast would silently drop the weight's gradient."""
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            with tensorplay.no_grad():
                F.linear(x, w)
            y = F.linear(x, w)
            z = F.linear(x, w)
    assert [e.cache_hits for e in linear_entries(t)] == [0, 0, 1]
    (y.float().sum() + z.float().sum()).backward()
    assert w.grad is not None and w.grad.abs().sum().item() > 0


def test_cache_is_cleared_when_the_outermost_region_exits():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.autocast("cpu"):
        with tensorplay.autocast("cpu"):
            F.linear(x, w)
        assert tensorplay._C._amp._cache_size() == 1  # an inner exit keeps it
        with tensorplay.autocast("cpu", enabled=False):
            pass
        assert tensorplay._C._amp._cache_size() == 1
    assert tensorplay._C._amp._cache_size() == 0


def test_clear_autocast_cache_empties_it_inside_a_region():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            F.linear(x, w)
            tensorplay.clear_autocast_cache()
            assert tensorplay._C._amp._cache_size() == 0
            F.linear(x, w)
    assert [e.cache_hits for e in linear_entries(t)] == [0, 0]


def test_cache_enabled_false_bypasses_the_cache_and_none_inherits():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu", cache_enabled=False):
            F.linear(x, w)
            with tensorplay.autocast("cpu"):  # cache_enabled=None: inherits False
                F.linear(x, w)
                F.linear(x, w)
            with tensorplay.autocast("cpu", cache_enabled=True):
                F.linear(x, w)
                F.linear(x, w)
    assert [e.cache_hits for e in linear_entries(t)] == [0, 0, 0, 0, 1]


def test_the_cache_is_per_thread():
    x, w = data(2, 3), weight(4, 3)
    hits = []

    def child():
        with tensorplay.amp.trace() as t:
            with tensorplay.autocast("cpu"):
                F.linear(x, w)
        hits.append(linear_entries(t)[0].cache_hits)

    with tensorplay.autocast("cpu"):
        F.linear(x, w)
        thread = threading.Thread(target=child)
        thread.start()
        thread.join()
    assert hits == [0]


# ---- custom_fwd / custom_bwd ----

class MulByWeight(tensorplay.autograd.Function):
    """y = x @ w, recording the autocast state each half runs under."""
    seen = []

    @staticmethod
    @tensorplay.amp.custom_fwd(device_type="cpu")
    def forward(ctx, x, w):
        MulByWeight.seen.append(("forward", tensorplay.is_autocast_enabled("cpu"), x.dtype))
        ctx.save_for_backward(x, w)
        return x.mm(w)

    @staticmethod
    @tensorplay.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        MulByWeight.seen.append(("backward", tensorplay.is_autocast_enabled("cpu"),
                                 tensorplay.get_autocast_dtype("cpu")))
        return grad.mm(w.t()), x.t().mm(grad)


class MulByWeightFloat32(tensorplay.autograd.Function):
    seen = []

    @staticmethod
    @tensorplay.amp.custom_fwd(device_type="cpu", cast_inputs=tensorplay.float32)
    def forward(ctx, x, w):
        MulByWeightFloat32.seen.append(("forward", tensorplay.is_autocast_enabled("cpu"), x.dtype, w.dtype))
        ctx.save_for_backward(x, w)
        return x.mm(w)

    @staticmethod
    @tensorplay.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        MulByWeightFloat32.seen.append(("backward", tensorplay.is_autocast_enabled("cpu"), grad.dtype))
        return grad.mm(w.t()), x.t().mm(grad)


def test_custom_bwd_runs_under_the_autocast_state_of_forward():
    MulByWeight.seen = []
    x, w = data(2, 3).requires_grad_(), weight(3, 4)
    with tensorplay.autocast("cpu", dtype=f16):
        y = MulByWeight.apply(x, w)
    assert y.dtype == f16  # mm inside forward ran under autocast
    y.float().sum().backward()
    assert MulByWeight.seen == [("forward", True, f32), ("backward", True, f16)]
    assert w.grad.dtype == f32 and x.grad.dtype == f32


def test_custom_bwd_outside_any_region_runs_without_autocast():
    MulByWeight.seen = []
    x, w = data(2, 3).requires_grad_(), weight(3, 4)
    MulByWeight.apply(x, w).sum().backward()
    assert MulByWeight.seen == [("forward", False, f32), ("backward", False, bf16)]


def test_custom_bwd_keeps_the_forward_state_on_another_thread():
    MulByWeight.seen = []
    x, w = data(2, 3).requires_grad_(), weight(3, 4)
    with tensorplay.autocast("cpu"):
        y = MulByWeight.apply(x, w)
    thread = threading.Thread(target=lambda: y.float().sum().backward())
    thread.start()
    thread.join()
    assert MulByWeight.seen == [("forward", True, f32), ("backward", True, bf16)]
    assert w.grad is not None


def test_custom_fwd_cast_inputs_runs_forward_in_that_dtype_without_autocast():
    MulByWeightFloat32.seen = []
    x, w = data(2, 3).to(bf16).requires_grad_(), weight(3, 4)
    with tensorplay.autocast("cpu"):
        y = MulByWeightFloat32.apply(x, w)
    assert y.dtype == f32
    y.sum().backward()
    assert MulByWeightFloat32.seen == [("forward", False, f32, f32), ("backward", False, f32)]
    assert x.grad.dtype == bf16 and w.grad.dtype == f32


def test_custom_fwd_requires_a_str_device_type():
    with pytest.raises(ValueError):
        tensorplay.amp.custom_fwd(lambda ctx, x: x, device_type=None)
    with pytest.raises(TypeError):
        tensorplay.amp.custom_fwd(lambda ctx, x: x)  # device_type is keyword-only and required


# ---- checkpoint ----

class Block(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.fc1, self.fc2, self.drop = nn.Linear(8, 8), nn.Linear(8, 8), nn.Dropout(p)
        self.calls = []

    def forward(self, x):
        self.calls.append((tensorplay.is_autocast_enabled("cpu"), tensorplay.is_grad_enabled()))
        return self.fc2(self.drop(F.relu(self.fc1(x))))


@pytest.mark.parametrize("p", [0.0, 0.5])
def test_checkpoint_recomputes_under_the_forward_autocast_state(p):
    """PyTorch issue 71124: the recomputation must use forward's autocast state, so it computes
    and saves the same dtypes (and, with dropout, the same random mask)."""
    tensorplay.manual_seed(0)
    block = Block(p)
    x = data(4, 8).requires_grad_()

    tensorplay.manual_seed(1)
    with tensorplay.autocast("cpu"):
        y = checkpoint(block, x, use_reentrant=False)
    y.float().sum().backward()
    grads = [p.grad.clone() for p in block.parameters()] + [x.grad.clone()]
    assert y.dtype == bf16
    assert block.calls == [(True, False), (True, True)]  # forward without a graph, then the recomputation

    block.zero_grad()
    x.grad = None
    tensorplay.manual_seed(1)
    with tensorplay.autocast("cpu"):
        y_plain = block(x)
    y_plain.float().sum().backward()
    assert y.equal(y_plain)
    for g, plain in zip(grads, [p.grad for p in block.parameters()] + [x.grad]):
        assert g.equal(plain)


def test_checkpoint_reaches_parameters_when_no_input_requires_grad():
    block = Block()
    with tensorplay.autocast("cpu"):
        y = checkpoint(block, data(4, 8), use_reentrant=False)
    y.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == f32 for p in block.parameters())


def test_checkpoint_asks_for_use_reentrant():
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(Block(), data(2, 8))


def test_checkpoint_restores_the_state_when_called_inside_nested_regions():
    block = Block()
    with tensorplay.autocast("cpu", dtype=f16):
        with tensorplay.autocast("cpu", enabled=False):
            y = checkpoint(block, data(2, 8), use_reentrant=False)
    y.sum().backward()
    assert y.dtype == f32 and block.calls == [(False, False), (False, True)]


# ---- deprecated spellings ----

def test_cpu_amp_autocast_is_deprecated_but_works():
    with pytest.warns(FutureWarning, match=r"tensorplay\.amp\.autocast\('cpu'"):
        region = tensorplay.cpu.amp.autocast()
    with region:
        assert cpu_state() == (True, bf16, True)


def test_cuda_amp_autocast_is_deprecated():
    with pytest.warns(FutureWarning, match=r"tensorplay\.amp\.autocast\('cuda'"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            tensorplay.cuda.amp.autocast()


def test_amp_autocast_is_the_same_class():
    assert tensorplay.amp.autocast is tensorplay.autocast


# ---- beyond PyTorch: the policy table ----

def test_get_policy_reads_the_table():
    assert tensorplay.amp.get_policy("linear", "cpu") == "lower_precision"
    assert tensorplay.amp.get_policy("mse_loss", "cpu") == "float32"
    assert tensorplay.amp.get_policy("cat", "cpu") == "promote"
    assert tensorplay.amp.get_policy("softmax", "cpu") == "input_dtype"
    assert tensorplay.amp.get_policy("softmax", "cuda") == "float32_unless_dtype"
    assert tensorplay.amp.get_policy("binary_cross_entropy", "cuda") == "banned"


def test_policy_table_is_the_table_get_policy_reads():
    for device in ("cpu", "cuda"):
        table = tensorplay.amp.policy_table(device)
        assert len(table) > 100
        assert all(tensorplay.amp.get_policy(op, device) == p for op, p in table.items())


@pytest.mark.parametrize("call,error", [
    (lambda: tensorplay.amp.get_policy("not_an_op", "cpu"), ValueError),
    (lambda: tensorplay.amp.get_policy("linear", "tpu"), RuntimeError),
    (lambda: tensorplay.amp.get_policy(3, "cpu"), TypeError),
    (lambda: tensorplay.amp.policy_table(None), ValueError),
    (lambda: tensorplay.amp.policy_override({"softmax": "fast"}, device_type="cpu").__enter__(), ValueError),
    (lambda: tensorplay.amp.policy_override({"nope": "float32"}, device_type="cpu"), ValueError),
    (lambda: tensorplay.amp.policy_override([("softmax", "float32")], device_type="cpu"), TypeError),
])
def test_policy_functions_reject_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_policy_override_changes_this_thread_for_this_region_only():
    x = data(2, 5)
    other = {}

    def in_another_thread():
        other["policy"] = tensorplay.amp.get_policy("softmax", "cpu")
        with tensorplay.autocast("cpu"):
            other["dtype"] = x.softmax(-1).dtype

    with tensorplay.amp.policy_override({"softmax": "lower_precision", "linear": "float32"}, device_type="cpu"):
        assert tensorplay.amp.get_policy("softmax", "cpu") == "lower_precision"
        assert tensorplay.amp.get_policy("softmax", "cuda") == "float32_unless_dtype"
        with tensorplay.autocast("cpu"):
            assert x.softmax(-1).dtype == bf16
            assert F.linear(x.to(bf16), weight(3, 5)).dtype == f32
        thread = threading.Thread(target=in_another_thread)
        thread.start()
        thread.join()
    assert other == {"policy": "input_dtype", "dtype": f32}
    assert tensorplay.amp.get_policy("softmax", "cpu") == "input_dtype"
    assert tensorplay.amp.get_policy("linear", "cpu") == "lower_precision"


def test_policy_overrides_nest_and_restore():
    with tensorplay.amp.policy_override({"softmax": "float32"}, device_type="cpu"):
        with tensorplay.amp.policy_override({"softmax": "banned"}, device_type="cpu"):
            with tensorplay.autocast("cpu"):
                with pytest.raises(RuntimeError, match="softmax"):
                    data(2, 2).softmax(-1)
        assert tensorplay.amp.get_policy("softmax", "cpu") == "float32"
        with tensorplay.autocast("cpu"):
            assert data(2, 2).to(bf16).softmax(-1).dtype == f32
    assert tensorplay.amp.get_policy("softmax", "cpu") == "input_dtype"


def test_policy_override_as_a_decorator():
    @tensorplay.amp.policy_override({"mse_loss": "input_dtype"}, device_type="cpu")
    def loss(a, b):
        with tensorplay.autocast("cpu"):
            return F.mse_loss(a, b)

    a = data(3).to(bf16)
    assert loss(a, a).dtype == bf16
    with tensorplay.autocast("cpu"):
        assert F.mse_loss(a, a).dtype == f32


def test_policy_override_is_restored_after_an_exception():
    with pytest.raises(KeyError):
        with tensorplay.amp.policy_override({"softmax": "float32"}, device_type="cpu"):
            raise KeyError
    assert tensorplay.amp.get_policy("softmax", "cpu") == "input_dtype"


# ---- composites: ops whose pieces autocast (PyTorch's CompositeImplicitAutograd ops) ----

def test_composite_pieces_follow_their_own_policies():
    """einsum has no CPU rule of its own; its bmm is lowered, as in PyTorch, and the trace shows both."""
    a, b = data(2, 3, 4), data(2, 4, 5)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            out = tensorplay.einsum("bij,bjk->bik", a, b)
    assert out.dtype == bf16
    assert [(e.op, e.policy) for e in t.entries] == [("bmm", "lower_precision"), ("einsum", "composite")]
    assert t.entries[1].casts == 0 and t.entries[0].casts == 2


def test_composite_overridden_to_input_dtype_runs_in_float32():
    a, b = data(3, 4), data(4, 5)
    with tensorplay.autocast("cpu"), tensorplay.amp.policy_override({"einsum": "input_dtype"}, device_type="cpu"):
        assert tensorplay.einsum("ij,jk->ik", a, b).dtype == f32
        assert tensorplay.einsum("ij,jk->ik", a, b.t().contiguous().t()).dtype == f32


def test_lstm_cell_state_stays_float32_under_autocast():
    """The gates are lowered (linear), the float32 cell state promotes them back: (h, c) are float32."""
    x, h, c = data(2, 3), data(2, 4), data(2, 4)
    w_ih, w_hh = weight(16, 3), weight(16, 4)
    with tensorplay.autocast("cpu"):
        h1, c1 = tensorplay.lstm_cell(x, (h, c), w_ih, w_hh)
        g = tensorplay.rnn_tanh_cell(x, h, weight(4, 3), weight(4, 4))
    assert (h1.dtype, c1.dtype, g.dtype) == (f32, f32, bf16)
    (h1.sum() + c1.sum()).backward()
    assert w_ih.grad.dtype == f32


def test_failing_composite_leaves_autocast_as_it_was():
    """An error inside a composite's body must not change how the next op is autocast."""
    with tensorplay.autocast("cpu"):
        with pytest.raises(RuntimeError):
            tensorplay.einsum("ij,jk->ik", data(3, 4), data(5, 2))
        assert tensorplay.mm(data(3, 4), data(4, 2)).dtype == bf16
        with pytest.raises(RuntimeError):
            tensorplay.tensordot(data(3, 4), data(4, 2).to(bf16), dims=1)
        assert tensorplay.mm(data(3, 4), data(4, 2)).dtype == bf16
    assert tensorplay.mm(data(3, 4), data(4, 2)).dtype == f32


# ---- beyond PyTorch: traces ----

def test_trace_records_what_ran_in_which_dtype():
    model = Net()
    x, target = data(6, 8), tensorplay.tensor([0, 1, 2, 3, 0, 1])
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            loss = F.cross_entropy(model(x), target)
    ops = [e.op for e in t.entries]
    assert ops == ["linear", "relu", "linear", "cross_entropy"]
    fc1, relu, fc2, ce = t.entries
    assert fc1 == tensorplay.amp.TraceEntry("linear", "cpu", (f32, f32, f32), "lower_precision", bf16, (bf16,), 3, 0)
    assert relu == tensorplay.amp.TraceEntry("relu", "cpu", (bf16,), "input_dtype", None, (bf16,), 0, 0)
    assert fc2.input_dtypes == (bf16, f32, f32) and fc2.casts == 2
    assert ce == tensorplay.amp.TraceEntry("cross_entropy", "cpu", (bf16, tensorplay.int64), "float32", f32, (f32,), 1,
                                           0)
    assert loss.dtype == f32


def test_trace_records_nothing_outside_regions_or_after_closing():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        F.linear(x, w)  # autocast off: the layer is not entered
    with tensorplay.autocast("cpu"):
        F.linear(x, w)  # no trace open
    assert len(t) == 0


def test_traces_nest_and_the_innermost_records():
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.autocast("cpu"):
        with tensorplay.amp.trace() as outer:
            F.linear(x, w)
            with tensorplay.amp.trace() as inner:
                F.relu(x)
            F.linear(x, w)
    assert [e.op for e in outer.entries] == ["linear", "linear"]
    assert [e.op for e in inner.entries] == ["relu"]


def test_trace_summary_prints_one_row_per_distinct_call(capsys):
    x, w = data(2, 3), weight(4, 3)
    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            for _ in range(3):
                F.linear(x, w)
    t.summary()
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["op", "device", "inputs", "policy", "compute", "outputs", "calls", "casts", "cache",
                                "hits"]
    assert len(lines) == 3  # header, rule, one merged row
    assert lines[2].split() == ["linear", "cpu", "float32,", "float32", "lower_precision", "bfloat16", "bfloat16",
                                "3", "6", "2"]


def test_banned_op_raises_with_advice():
    with tensorplay.amp.policy_override({"binary_cross_entropy": "banned"}, device_type="cpu"):
        with tensorplay.autocast("cpu"):
            with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits"):
                F.binary_cross_entropy(data(3).sigmoid(), data(3).sigmoid())

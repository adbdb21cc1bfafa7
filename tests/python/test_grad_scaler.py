"""tensorplay.amp.GradScaler and its two fused ops, against torch.amp.GradScaler("cpu").

1. The fused ops, called directly next to torch's:
   - _amp_foreach_non_finite_check_and_unscale_: every floating dtype, several inverse scales,
     non-contiguous and empty gradients, inf/-inf/NaN first/middle/last in a tensor big enough to
     be split across threads. Unscaled values must be bit-identical to torch's (NaN positions
     compared as positions), found_inf must become 1 exactly when an input is non-finite.
   - _amp_update_scale_: sequences of clean/non-finite steps compared step by step (scale bits
     and growth tracker), including growth that would overflow float32.
   - bad arguments raise RuntimeError in both libraries.
2. GradScaler in training: a small MLP trained side by side with torch (same weights, same data)
   under every optimizer, with inf/NaN injected into a gradient on chosen steps. Every step the
   scale, the growth tracker, the parameters and the gradients must match torch's; a step with a
   non-finite gradient must leave every parameter and every optimizer-state tensor bit-identical.
3. The API around it: unscale_ for clipping, the per-optimizer stage errors, several optimizers
   in one iteration, scale() on nested containers, enabled=False, update(new_scale),
   state_dict / load_state_dict, pickling, the "cuda" fallback and the deprecated aliases.

Known deliberate differences from torch (see the GradScaler docstring): bad growth/backoff
factors, calls before scale(), and a malformed new_scale raise instead of asserting.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import copy_state, dtype_name
from shared import SIXTEEN_BIT_FLOATS

UNSCALE_OP = "_amp_foreach_non_finite_check_and_unscale_"
UPDATE_OP = "_amp_update_scale_"

FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
BIG = 300_001  # > 100k elements and > several parallel grains, odd so the last chunk is ragged
NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

def tp_fused(name):
    """The fused op as tensorplay spells it. The brief (and grad_scaler.py's docstring) puts it at
    the top level; fall back to _C so the numeric tests still run if that export is missing
    (test_fused_ops_are_exported_at_top_level checks the export itself)."""
    op = getattr(tensorplay, name, None)
    return op if op is not None else getattr(tensorplay._C, name)


def tp_unscale_(grads, found_inf, inv_scale):
    return tp_fused(UNSCALE_OP)(grads, found_inf, inv_scale)


def tp_update_scale_(scale, tracker, found_inf, growth, backoff, interval):
    return tp_fused(UPDATE_OP)(scale, tracker, found_inf, growth, backoff, interval)


def tp_dtype(name):
    return getattr(tensorplay, name)


def torch_dtype(name):
    return getattr(torch, name)


def tp_copy(t):
    """An exact tensorplay copy of a torch tensor (contiguous, same dtype). float16/bfloat16 pass
    through float32, which holds every value of both exactly."""
    t = t.detach()
    if t.dtype in (torch.float16, torch.bfloat16):
        return tensorplay.from_numpy(t.float().numpy().copy()).to(tp_dtype(dtype_name(t.dtype)))
    return tensorplay.from_numpy(t.contiguous().numpy().copy())


def as_numpy(t):
    """float32/float64 numpy values of a torch or tensorplay tensor; half types widen exactly."""
    t = t.detach()
    if dtype_name(t.dtype) in ("float16", "bfloat16"):
        t = t.float()
    return np.array(t.numpy(), copy=True)


def bit_patterns(array):
    return array.view(np.uint64 if array.dtype == np.float64 else np.uint32)


def assert_bitwise(tp_t, torch_t, what="value"):
    """Same shape, dtype and bit patterns; NaNs only need to sit in the same places."""
    assert tuple(tp_t.shape) == tuple(torch_t.shape), f"{what}: shape {tuple(tp_t.shape)} != {tuple(torch_t.shape)}"
    assert dtype_name(tp_t.dtype) == dtype_name(torch_t.dtype), f"{what}: dtype {tp_t.dtype} != {torch_t.dtype}"
    got, want = as_numpy(tp_t), as_numpy(torch_t)
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    assert np.array_equal(got_nan, want_nan), (
        f"{what}: NaN at {np.flatnonzero(got_nan)[:10]} but torch has NaN at {np.flatnonzero(want_nan)[:10]}")
    keep = ~want_nan
    mismatch = np.flatnonzero(bit_patterns(got[keep]) != bit_patterns(want[keep]))
    assert mismatch.size == 0, (
        f"{what}: {mismatch.size} elements differ from torch's, first at flat index "
        f"{np.flatnonzero(keep)[mismatch[0]]}: {got[keep][mismatch[0]]!r} vs {want[keep][mismatch[0]]!r}")


def grad_values(shape, dtype, seed):
    """Finite values of both signs whose magnitudes span many binades (down to ones that become
    subnormal or zero once unscaled), as a torch tensor of the given dtype."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    magnitudes = 10.0 ** rng.uniform(-7, 4, n)
    values = (rng.choice([-1.0, 1.0], n) * magnitudes).reshape(shape)
    return torch.from_numpy(values).to(torch_dtype(dtype))


def one(lib, value=0.0, dtype=None, shape=(1,)):
    return lib.full(shape, value, dtype=dtype if dtype is not None else lib.float32)


def unscale_both(torch_grads, inv_scale, found_inf=0.0):
    """Runs the unscale op on torch_grads and on exact tensorplay copies of them. Returns
    (tp_grads, tp_found_inf, torch_found_inf); torch_grads are modified in place."""
    tp_grads = [tp_copy(g) for g in torch_grads]
    tp_found, torch_found = one(tensorplay, found_inf), one(torch, found_inf)
    tp_unscale_(tp_grads, tp_found, one(tensorplay, inv_scale))
    torch._amp_foreach_non_finite_check_and_unscale_(torch_grads, torch_found, one(torch, inv_scale))
    return tp_grads, tp_found, torch_found


def raises_like_torch(exc, torch_call, tp_call):
    """Both calls raise `exc`; returns (torch's message, tensorplay's message)."""
    with pytest.raises(exc) as torch_err:
        torch_call()
    with pytest.raises(exc) as tp_err:
        tp_call()
    return str(torch_err.value), str(tp_err.value)


@pytest.fixture
def four_threads():
    before = tensorplay.get_num_threads()
    tensorplay.set_num_threads(4)
    yield
    tensorplay.set_num_threads(before)


# ---- models, data and training steps shared by the GradScaler tests ----

RNG = np.random.default_rng(0)
X = RNG.standard_normal((32, 4)).astype(np.float32)
Y = RNG.standard_normal((32, 3)).astype(np.float32)


def make_mlp(nn):
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))


def make_model_pair(seed=0):
    torch.manual_seed(seed)
    torch_model, tp_model = make_mlp(torch.nn), make_mlp(tensorplay.nn)
    copy_state(torch_model, tp_model)
    return torch_model, tp_model


OPTIMIZERS = {
    "SGD": lambda lib, params: lib.optim.SGD(params, lr=0.1, momentum=0.9),
    "Adam": lambda lib, params: lib.optim.Adam(params, lr=0.01),
    "AdamW": lambda lib, params: lib.optim.AdamW(params, lr=0.01, weight_decay=0.1),
    "RMSprop": lambda lib, params: lib.optim.RMSprop(params, lr=0.01),
    "Adagrad": lambda lib, params: lib.optim.Adagrad(params, lr=0.1),
}


def lib_of(obj):
    if isinstance(obj, (torch.nn.Module, torch.optim.Optimizer, torch.amp.GradScaler)):
        return torch
    return tensorplay


def data(lib):
    if lib is torch:
        return torch.from_numpy(X.copy()), torch.from_numpy(Y.copy())
    return tensorplay.from_numpy(X.copy()), tensorplay.from_numpy(Y.copy())


def scaled_backward(model, scaler, optimizers=()):
    """zero_grad, forward, scaler.scale(loss).backward(); returns the unscaled loss."""
    lib = lib_of(model)
    for opt in optimizers:
        opt.zero_grad()
    x, y = data(lib)
    loss = lib.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    return loss


def poison_grad(model, value, index=(0, 1)):
    """Writes `value` into one element of the last Linear's weight gradient."""
    lib = lib_of(model)
    with lib.no_grad():
        model[2].weight.grad[index] = value


def snapshot(tensors):
    return [as_numpy(t).copy() for t in tensors]


def assert_unchanged(before, tensors, what):
    for i, (old, t) in enumerate(zip(before, tensors)):
        now = as_numpy(t)
        assert np.array_equal(bit_patterns(old), bit_patterns(now)), f"{what} #{i} changed on a skipped step"


def optimizer_state_tensors(optimizer):
    return [value for state in optimizer.state.values() for value in state.values()
            if isinstance(value, tensorplay.Tensor)]


def assert_params_close(tp_model, torch_model, what, rtol=1e-5, atol=1e-6):
    tp_params = dict(tp_model.named_parameters())
    for name, t in torch_model.named_parameters():
        np.testing.assert_allclose(as_numpy(tp_params[name]), as_numpy(t), rtol=rtol, atol=atol,
                                   err_msg=f"{name} {what}")


def assert_grads_close(tp_model, torch_model, what, rtol=1e-5, atol=1e-6):
    tp_params = dict(tp_model.named_parameters())
    for name, t in torch_model.named_parameters():
        np.testing.assert_allclose(as_numpy(tp_params[name].grad), as_numpy(t.grad), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=f"{name}.grad {what}")


def assert_scaler_state_matches(tp_scaler, torch_scaler, what):
    assert tp_scaler.get_scale() == torch_scaler.get_scale(), (
        f"{what}: scale {tp_scaler.get_scale()} != torch's {torch_scaler.get_scale()}")
    assert tp_scaler._get_growth_tracker() == torch_scaler._get_growth_tracker(), (
        f"{what}: growth tracker {tp_scaler._get_growth_tracker()} != torch's {torch_scaler._get_growth_tracker()}")


def make_scalers(**kwargs):
    return torch.amp.GradScaler("cpu", **kwargs), tensorplay.amp.GradScaler("cpu", **kwargs)


def ready_pair(init_scale=2.0**10, growth_interval=3, optimizer="SGD", **kwargs):
    """(torch model, tp model, torch optimizer, tp optimizer, torch scaler, tp scaler)."""
    torch_model, tp_model = make_model_pair()
    torch_opt = OPTIMIZERS[optimizer](torch, torch_model.parameters())
    tp_opt = OPTIMIZERS[optimizer](tensorplay, tp_model.parameters())
    torch_scaler, tp_scaler = make_scalers(init_scale=init_scale, growth_interval=growth_interval, **kwargs)
    return torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler


# --------------------------------------------------------------------------------------------
# 1. the fused ops
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [UNSCALE_OP, UPDATE_OP])
def test_fused_ops_are_exported_at_top_level(name):
    # torch exposes both as torch.<name>; grad_scaler.py's docstring says tensorplay.<name>.
    assert callable(getattr(tensorplay, name, None)), f"tensorplay.{name} is missing (only tensorplay._C.{name} exists)"


@pytest.mark.parametrize("inv_scale", [2.0**-16, 1.0, 0.3, 3.0], ids=["2^-16", "1", "0.3", "3"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unscale_finite_grads_bitwise_like_torch(dtype, inv_scale):
    torch_grads = [grad_values((64, 33), dtype, seed=1), grad_values((7,), dtype, seed=2),
                   grad_values((), dtype, seed=3)]
    tp_grads, tp_found, torch_found = unscale_both(torch_grads, inv_scale)
    assert torch_found.item() == 0.0
    assert tp_found.item() == 0.0, "found_inf was set although every gradient is finite"
    for i, (p, t) in enumerate(zip(tp_grads, torch_grads)):
        assert_bitwise(p, t, what=f"grad #{i} ({dtype}, inv_scale={inv_scale})")


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("kind", list(NON_FINITE))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unscale_finds_one_non_finite_in_a_big_gradient(dtype, kind, position, four_threads):
    grad = grad_values((BIG,), dtype, seed=4)
    index = {"first": 0, "middle": BIG // 2 + 12345, "last": BIG - 1}[position]
    grad[index] = NON_FINITE[kind]
    tp_grads, tp_found, torch_found = unscale_both([grad], 0.3)
    assert torch_found.item() == 1.0
    assert tp_found.item() == 1.0, f"{kind} at index {index} of {BIG} elements was not found"
    assert_bitwise(tp_grads[0], grad, what=f"{dtype} grad with {kind} at {position}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unscale_big_clean_gradient_leaves_found_inf_zero(dtype, four_threads):
    grad = grad_values((BIG,), dtype, seed=5)
    tp_grads, tp_found, torch_found = unscale_both([grad], 2.0**-10)
    assert torch_found.item() == 0.0 and tp_found.item() == 0.0
    assert_bitwise(tp_grads[0], grad, what=f"big clean {dtype} grad")


def _view(layout, base):
    """A non-contiguous view of a (400, 333) gradient."""
    return {
        "transposed": lambda: base.t(),
        "strided": lambda: base[:, ::3],
        "sliced_rows": lambda: base[5:300:2],
    }[layout]()


@pytest.mark.parametrize("poison", [None, "inf", "nan"])
@pytest.mark.parametrize("layout", ["transposed", "strided", "sliced_rows"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unscale_non_contiguous_gradient(dtype, layout, poison, four_threads):
    torch_base = grad_values((400, 333), dtype, seed=6)
    if poison is not None:
        # (7, 6) lies inside every view below, (6, 1) lies outside all of them but the transpose.
        torch_base[7, 6] = NON_FINITE[poison]
    tp_base = tp_copy(torch_base)
    torch_view, tp_view = _view(layout, torch_base), _view(layout, tp_base)
    assert not tp_view.is_contiguous() and not torch_view.is_contiguous()
    tp_found, torch_found = one(tensorplay), one(torch)
    tp_unscale_([tp_view], tp_found, one(tensorplay, 0.3))
    torch._amp_foreach_non_finite_check_and_unscale_([torch_view], torch_found, one(torch, 0.3))
    assert tp_found.item() == torch_found.item() == (0.0 if poison is None else 1.0)
    assert_bitwise(tp_view, torch_view, what=f"{layout} view")
    # Elements outside the view must be untouched, inside it unscaled once: the whole base agrees.
    assert_bitwise(tp_base, torch_base, what=f"base of the {layout} view")


def test_unscale_non_finite_outside_a_view_is_not_seen():
    torch_base = grad_values((40, 30), "float32", seed=7)
    torch_base[:, 1] = math.inf  # column 1 is not in base[:, ::3]
    tp_base = tp_copy(torch_base)
    tp_found, torch_found = one(tensorplay), one(torch)
    tp_unscale_([tp_base[:, ::3]], tp_found, one(tensorplay, 0.5))
    torch._amp_foreach_non_finite_check_and_unscale_([torch_base[:, ::3]], torch_found, one(torch, 0.5))
    assert torch_found.item() == 0.0
    assert tp_found.item() == 0.0, "an inf outside the strided view was reported"
    assert_bitwise(tp_base, torch_base, what="base")


@pytest.mark.parametrize("found_before", [0.0, 1.0])
def test_unscale_empty_gradients(found_before):
    torch_grads = [torch.empty(0), grad_values((5,), "float32", seed=8), torch.empty(3, 0, dtype=torch.float64)]
    tp_grads, tp_found, torch_found = unscale_both(torch_grads, 0.25, found_inf=found_before)
    assert tp_found.item() == torch_found.item() == found_before
    for i, (p, t) in enumerate(zip(tp_grads, torch_grads)):
        assert_bitwise(p, t, what=f"grad #{i}")
    # An empty list is fine too and leaves found_inf alone.
    tp_found = one(tensorplay, found_before)
    tp_unscale_([], tp_found, one(tensorplay, 0.25))
    assert tp_found.item() == found_before


def test_unscale_never_clears_found_inf():
    # found_inf accumulates across calls (one call per dtype group, then per optimizer).
    torch_grads = [grad_values((10,), "float32", seed=9)]
    tp_grads, tp_found, torch_found = unscale_both(torch_grads, 0.5, found_inf=1.0)
    assert torch_found.item() == 1.0
    assert tp_found.item() == 1.0, "a clean call reset found_inf to 0"
    assert_bitwise(tp_grads[0], torch_grads[0])


def test_unscale_accumulates_over_calls():
    found = one(tensorplay)
    inv = one(tensorplay, 0.5)
    tp_unscale_([tensorplay.tensor([1.0, math.nan])], found, inv)
    tp_unscale_([tensorplay.tensor([1.0, 2.0])], found, inv)
    assert found.item() == 1.0


def test_unscale_mixed_dtypes_in_one_call():
    torch_grads = [grad_values((50,), dtype, seed=10 + i) for i, dtype in enumerate(FLOAT_DTYPES)]
    torch_grads[2][17] = math.inf  # only the float16 gradient is poisoned
    tp_grads, tp_found, torch_found = unscale_both(torch_grads, 0.3)
    assert tp_found.item() == torch_found.item() == 1.0
    for p, t in zip(tp_grads, torch_grads):
        assert_bitwise(p, t, what=f"{dtype_name(t.dtype)} grad")


@pytest.mark.parametrize("dtype", SIXTEEN_BIT_FLOATS)
def test_found_inf_reflects_the_inputs_not_the_unscaled_outputs(dtype):
    # Finite inputs that overflow once multiplied: torch checks the inputs, so found_inf stays 0.
    big = torch.finfo(torch_dtype(dtype)).max
    torch_grads = [torch.tensor([big, -big, 1.0], dtype=torch_dtype(dtype))]
    tp_grads, tp_found, torch_found = unscale_both(torch_grads, 4.0)
    assert tp_found.item() == torch_found.item() == 0.0
    assert_bitwise(tp_grads[0], torch_grads[0])


def test_unscale_accepts_a_zero_dim_found_inf():
    torch_grads = [torch.tensor([1.0, math.inf])]
    tp_grad = tp_copy(torch_grads[0])
    tp_found, torch_found = tensorplay.zeros(()), torch.zeros(())
    tp_unscale_([tp_grad], tp_found, tensorplay.full((), 0.5))
    torch._amp_foreach_non_finite_check_and_unscale_(torch_grads, torch_found, torch.full((), 0.5))
    assert tp_found.item() == torch_found.item() == 1.0
    assert_bitwise(tp_grad, torch_grads[0])


UNSCALE_BAD_ARGUMENTS = {
    "found_inf_two_elements": lambda lib: ([lib.ones(3)], lib.zeros(2), lib.full((1,), 0.5)),
    "found_inf_float64": lambda lib: ([lib.ones(3)], lib.zeros(1, dtype=lib.float64), lib.full((1,), 0.5)),
    "found_inf_float16": lambda lib: ([lib.ones(3)], lib.zeros(1, dtype=lib.float16), lib.full((1,), 0.5)),
    "inv_scale_two_elements": lambda lib: ([lib.ones(3)], lib.zeros(1), lib.full((2,), 0.5)),
    "inv_scale_float64": lambda lib: ([lib.ones(3)], lib.zeros(1), lib.full((1,), 0.5, dtype=lib.float64)),
    "int64_grad": lambda lib: ([lib.arange(3)], lib.zeros(1), lib.full((1,), 0.5)),
    "int32_grad": lambda lib: ([lib.ones(3, dtype=lib.int32)], lib.zeros(1), lib.full((1,), 0.5)),
    "bool_grad": lambda lib: ([lib.ones(3, dtype=lib.bool)], lib.zeros(1), lib.full((1,), 0.5)),
}


@pytest.mark.parametrize("case", list(UNSCALE_BAD_ARGUMENTS))
def test_unscale_rejects_bad_arguments(case):
    make = UNSCALE_BAD_ARGUMENTS[case]
    raises_like_torch(RuntimeError, lambda: torch._amp_foreach_non_finite_check_and_unscale_(*make(torch)),
                      lambda: tp_unscale_(*make(tensorplay)))


def test_unscale_rejects_integer_grad_before_touching_the_others():
    # Arguments are validated up front: the float gradient listed first is not unscaled.
    good = tensorplay.full((3,), 8.0)
    with pytest.raises(RuntimeError):
        tp_unscale_([good, tensorplay.arange(3)], tensorplay.zeros(1), tensorplay.full((1,), 0.5))
    assert as_numpy(good).tolist() == [8.0, 8.0, 8.0]


def test_unscale_rejects_a_gradient_whose_elements_share_memory():
    # An expanded tensor (stride 0) has several elements on one memory location: unscaling it in
    # place would multiply that location once per alias. torch refuses it before writing.
    for lib in (torch, tensorplay):
        base = lib.full((1, 3), 8.0)
        op = torch._amp_foreach_non_finite_check_and_unscale_ if lib is torch else tp_unscale_
        with pytest.raises(RuntimeError):
            op([base.expand(4, 3)], lib.zeros(1), lib.full((1,), 0.5))
        assert as_numpy(base).tolist() == [[8.0, 8.0, 8.0]], f"{lib.__name__} wrote to the expanded gradient"


# ---- _amp_update_scale_ ----

UPDATE_SEQUENCES = {
    # name: (init_scale, growth_factor, backoff_factor, growth_interval, found_inf flags per step)
    "grow_every_3": (2.0**16, 2.0, 0.5, 3, [0] * 10),
    "backoff_resets_tracker": (2.0**16, 2.0, 0.5, 3, [0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0]),
    "interval_1": (1.0, 2.0, 0.5, 1, [0, 0, 1, 0, 1, 1, 0]),
    "odd_factors": (1000.0, 1.7, 0.3, 2, [0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1]),
    "nan_found_inf": (2.0**16, 2.0, 0.5, 2, [math.nan, 0, 0, math.nan]),
    "found_inf_not_exactly_one": (2.0**16, 2.0, 0.5, 2, [3.0, 0, 0, 0.5, 0]),
    "overflowing_growth_is_skipped": (2.0**126, 2.0, 0.5, 2, [0] * 9 + [1, 0, 0, 0, 0]),
    "odd_factor_overflow": (3.0e38, 1.5, 0.5, 1, [0, 0, 1, 0, 0, 0]),
    "underflow_to_zero": (2.0**-140, 2.0, 1e-3, 5, [1, 1, 1, 0, 0]),
}


@pytest.mark.parametrize("name", list(UPDATE_SEQUENCES))
def test_update_scale_sequence_matches_torch(name):
    init, growth, backoff, interval, flags = UPDATE_SEQUENCES[name]
    torch_scale, tp_scale = torch.full((1,), init), tensorplay.full((1,), init)
    torch_tracker, tp_tracker = torch.zeros(1, dtype=torch.int32), tensorplay.zeros(1, dtype=tensorplay.int32)
    for step, flag in enumerate(flags):
        torch_ret = torch._amp_update_scale_(torch_scale, torch_tracker, torch.full((1,), float(flag)),
                                             growth, backoff, interval)
        tp_ret = tp_update_scale_(tp_scale, tp_tracker, tensorplay.full((1,), float(flag)), growth, backoff, interval)
        what = f"{name} after step {step} (found_inf={flag})"
        assert_bitwise(tp_scale, torch_scale, what=f"scale {what}")
        assert tp_tracker.item() == torch_tracker.item(), (
            f"growth tracker {what}: {tp_tracker.item()} != torch's {torch_tracker.item()}")
        assert_bitwise(tp_ret, torch_ret, what=f"returned scale {what}")


def test_update_scale_overflowing_growth_keeps_the_scale_and_resets_the_tracker():
    scale, tracker = tensorplay.full((1,), 2.0**127), tensorplay.full((1,), 1, dtype=tensorplay.int32)
    tp_update_scale_(scale, tracker, tensorplay.zeros(1), 2.0, 0.5, 2)
    assert scale.item() == 2.0**127, "a growth to inf was applied"
    assert tracker.item() == 0


def test_update_scale_accepts_zero_dim_tensors():
    torch_scale, tp_scale = torch.full((), 8.0), tensorplay.full((), 8.0)
    torch_tracker, tp_tracker = torch.zeros((), dtype=torch.int32), tensorplay.zeros((), dtype=tensorplay.int32)
    for flag in [0.0, 0.0, 1.0, 0.0]:
        torch._amp_update_scale_(torch_scale, torch_tracker, torch.full((), flag), 2.0, 0.25, 2)
        tp_update_scale_(tp_scale, tp_tracker, tensorplay.full((), flag), 2.0, 0.25, 2)
        assert tp_scale.item() == torch_scale.item() and tp_tracker.item() == torch_tracker.item()


UPDATE_BAD_ARGUMENTS = {
    "scale_float64": lambda lib: (lib.ones(1, dtype=lib.float64), lib.zeros(1, dtype=lib.int32), lib.zeros(1)),
    "scale_two_elements": lambda lib: (lib.ones(2), lib.zeros(1, dtype=lib.int32), lib.zeros(1)),
    "tracker_int64": lambda lib: (lib.ones(1), lib.zeros(1, dtype=lib.int64), lib.zeros(1)),
    "tracker_two_elements": lambda lib: (lib.ones(1), lib.zeros(2, dtype=lib.int32), lib.zeros(1)),
    "found_inf_float64": lambda lib: (lib.ones(1), lib.zeros(1, dtype=lib.int32), lib.zeros(1, dtype=lib.float64)),
    "found_inf_two_elements": lambda lib: (lib.ones(1), lib.zeros(1, dtype=lib.int32), lib.zeros(2)),
}


@pytest.mark.parametrize("case", list(UPDATE_BAD_ARGUMENTS))
def test_update_scale_rejects_bad_arguments(case):
    make = UPDATE_BAD_ARGUMENTS[case]
    raises_like_torch(RuntimeError, lambda: torch._amp_update_scale_(*make(torch), 2.0, 0.5, 2),
                      lambda: tp_update_scale_(*make(tensorplay), 2.0, 0.5, 2))


# --------------------------------------------------------------------------------------------
# 2. training side by side with torch
# --------------------------------------------------------------------------------------------

STEPS = 16
INJECTED = {2: math.inf, 6: math.nan, 7: -math.inf}  # step -> value written into one gradient
# With growth_interval=3 and init_scale=2**10: two clean steps, back off at 2, grow at 5, back
# off at 6 and 7, grow at 10 and 13.
EXPECTED_SCALES = [1024, 1024, 512, 512, 512, 1024, 512, 256, 256, 256, 512, 512, 512, 1024, 1024, 1024]
EXPECTED_TRACKERS = [1, 2, 0, 1, 2, 0, 0, 0, 1, 2, 0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_training_with_injected_non_finite_grads_matches_torch(optimizer):
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(optimizer=optimizer)
    tp_params = list(tp_model.parameters())
    for step in range(STEPS):
        torch_loss = scaled_backward(torch_model, torch_scaler, [torch_opt])
        tp_loss = scaled_backward(tp_model, tp_scaler, [tp_opt])
        np.testing.assert_allclose(tp_loss.item(), torch_loss.item(), rtol=1e-5, err_msg=f"loss at step {step}")
        skipped = step in INJECTED
        if skipped:
            poison_grad(torch_model, INJECTED[step])
            poison_grad(tp_model, INJECTED[step])
        params_before = snapshot(tp_params)
        state_before = snapshot(optimizer_state_tensors(tp_opt))
        torch_scaler.step(torch_opt)
        tp_scaler.step(tp_opt)
        what = f"step {step} ({optimizer})"
        # step() leaves the gradients unscaled, exactly once.
        assert_grads_close(tp_model, torch_model, what)
        if skipped:
            assert_unchanged(params_before, tp_params, f"parameter at {what}")
            assert_unchanged(state_before, optimizer_state_tensors(tp_opt), f"optimizer state at {what}")
        torch_scaler.update()
        tp_scaler.update()
        assert_scaler_state_matches(tp_scaler, torch_scaler, what)
        assert tp_scaler.get_scale() == EXPECTED_SCALES[step], what
        assert tp_scaler._get_growth_tracker() == EXPECTED_TRACKERS[step], what
        assert_params_close(tp_model, torch_model, f"after {what}")


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_skipped_step_does_not_advance_optimizer_step_count(optimizer):
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(optimizer=optimizer)
    for step, value in enumerate([None, math.inf, None, math.nan]):
        for model, opt, scaler in [(torch_model, torch_opt, torch_scaler), (tp_model, tp_opt, tp_scaler)]:
            scaled_backward(model, scaler, [opt])
            if value is not None:
                poison_grad(model, value)
            scaler.step(opt)
            scaler.update()
        if optimizer == "Adam":
            torch_steps = [s["step"].item() for s in torch_opt.state.values()]
            tp_steps = [s["step"].item() for s in tp_opt.state.values()]
            assert tp_steps == torch_steps, f"Adam step counts after step {step}: {tp_steps} != {torch_steps}"
        assert_params_close(tp_model, torch_model, f"after step {step}")


def test_training_under_float16_autocast_matches_torch():
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(init_scale=2.0**8,
                                                                                   growth_interval=2)
    for step in range(8):
        for model, opt, scaler, lib in [(torch_model, torch_opt, torch_scaler, torch),
                                        (tp_model, tp_opt, tp_scaler, tensorplay)]:
            opt.zero_grad()
            x, y = data(lib)
            with lib.autocast("cpu", dtype=lib.float16):
                out = model(x)
            loss = lib.nn.functional.mse_loss(out.float(), y)
            scaler.scale(loss).backward()
            if step == 3:
                poison_grad(model, math.inf)
            scaler.step(opt)
            scaler.update()
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step}")
        assert_params_close(tp_model, torch_model, f"after step {step}", rtol=2e-3, atol=2e-3)


def test_scale_growth_stops_at_float32_max():
    # growth_interval=1 doubles the scale every clean step, from 2**125: two growths, then
    # doubling would overflow float32 and the scale stays at 2**127 (like torch).
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(init_scale=2.0**125,
                                                                                   growth_interval=1)
    torch_opt.param_groups[0]["lr"] = tp_opt.param_groups[0]["lr"] = 0.0
    scales = []
    for step in range(5):
        for model, opt, scaler in [(torch_model, torch_opt, torch_scaler), (tp_model, tp_opt, tp_scaler)]:
            opt.zero_grad()
            x, _ = data(lib_of(model))
            scaler.scale(model(x).sum() * 0.0).backward()  # zero gradients stay finite at any scale
            scaler.step(opt)
            scaler.update()
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step}")
        scales.append(tp_scaler.get_scale())
    assert scales == [2.0**126, 2.0**127, 2.0**127, 2.0**127, 2.0**127]


def test_natural_overflow_of_a_huge_scale_backs_off_until_finite():
    # A loss of ~1e6 scaled by 2**127 overflows float32 in backward by itself; the scale backs
    # off by 2**-8 per step until the gradients are finite (at 2**103), then stays there.
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(
        init_scale=2.0**127, backoff_factor=2.0**-8, growth_interval=100)
    torch_opt.param_groups[0]["lr"] = tp_opt.param_groups[0]["lr"] = 1e-9
    scales, finite_steps = [], []
    for step in range(7):
        for model, opt, scaler in [(torch_model, torch_opt, torch_scaler), (tp_model, tp_opt, tp_scaler)]:
            lib = lib_of(model)
            params_before = snapshot(list(model.parameters()))
            opt.zero_grad()
            x, y = data(lib)
            scaler.scale(lib.nn.functional.mse_loss(model(x), y) * 1e6).backward()
            finite = all(bool(np.isfinite(as_numpy(p.grad)).all()) for p in model.parameters())
            scaler.step(opt)
            if not finite:
                assert_unchanged(params_before, list(model.parameters()), f"{lib.__name__} parameter")
            scaler.update()
        finite_steps.append(finite)  # tensorplay's
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step}")
        assert_params_close(tp_model, torch_model, f"after step {step}")
        scales.append(tp_scaler.get_scale())
    assert finite_steps == [False, False, False, True, True, True, True]
    assert scales == [2.0**119, 2.0**111, 2.0**103, 2.0**103, 2.0**103, 2.0**103, 2.0**103]


# --------------------------------------------------------------------------------------------
# 3. unscale_, stages, several optimizers
# --------------------------------------------------------------------------------------------

def test_unscale_then_clip_then_step_matches_torch():
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(init_scale=2.0**12)
    for step in range(4):
        scaled_backward(torch_model, torch_scaler, [torch_opt])
        scaled_backward(tp_model, tp_scaler, [tp_opt])
        torch_scaler.unscale_(torch_opt)
        tp_scaler.unscale_(tp_opt)
        assert_grads_close(tp_model, torch_model, f"after unscale_ at step {step}")
        torch_norm = torch.nn.utils.clip_grad_norm_(torch_model.parameters(), 0.05)
        tp_norm = tensorplay.nn.utils.clip_grad_norm_(tp_model.parameters(), 0.05)
        np.testing.assert_allclose(float(tp_norm), float(torch_norm), rtol=1e-5)
        clipped = snapshot([p.grad for p in tp_model.parameters()])
        torch_scaler.step(torch_opt)
        tp_scaler.step(tp_opt)
        # step() must not unscale a second time.
        assert_unchanged(clipped, [p.grad for p in tp_model.parameters()], "clipped gradient")
        torch_scaler.update()
        tp_scaler.update()
        assert_params_close(tp_model, torch_model, f"after step {step}")
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step}")


def test_unscale_divides_the_gradients_by_the_scale():
    _, tp_model, _, tp_opt, _, tp_scaler = ready_pair(init_scale=2.0**12)
    tp_opt.zero_grad()
    x, y = data(tensorplay)
    tensorplay.nn.functional.mse_loss(tp_model(x), y).backward()
    plain = snapshot([p.grad for p in tp_model.parameters()])
    scaled_backward(tp_model, tp_scaler, [tp_opt])
    tp_scaler.unscale_(tp_opt)
    for want, p in zip(plain, tp_model.parameters()):
        np.testing.assert_allclose(as_numpy(p.grad), want, rtol=1e-5, atol=1e-7)


def _stage_error(calls):
    """Runs calls(scaler, optimizer) with torch and tensorplay; both must raise RuntimeError."""
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair()
    scaled_backward(torch_model, torch_scaler, [torch_opt])
    scaled_backward(tp_model, tp_scaler, [tp_opt])
    return raises_like_torch(RuntimeError, lambda: calls(torch_scaler, torch_opt), lambda: calls(tp_scaler, tp_opt))


def test_unscale_twice_raises_torchs_error():
    torch_msg, tp_msg = _stage_error(lambda s, o: (s.unscale_(o), s.unscale_(o)))
    assert tp_msg == torch_msg


def test_unscale_after_step_raises_torchs_error():
    torch_msg, tp_msg = _stage_error(lambda s, o: (s.step(o), s.unscale_(o)))
    assert tp_msg == torch_msg


def test_step_twice_without_update_raises_torchs_error():
    torch_msg, tp_msg = _stage_error(lambda s, o: (s.step(o), s.step(o)))
    assert tp_msg == torch_msg


def test_step_with_closure_keyword_raises_torchs_error():
    torch_msg, tp_msg = _stage_error(lambda s, o: s.step(o, closure=lambda: None))
    assert tp_msg == torch_msg


def test_step_twice_leaves_parameters_stepped_once():
    _, tp_model, _, tp_opt, _, tp_scaler = ready_pair()
    scaled_backward(tp_model, tp_scaler, [tp_opt])
    tp_scaler.step(tp_opt)
    after_first = snapshot(list(tp_model.parameters()))
    with pytest.raises(RuntimeError):
        tp_scaler.step(tp_opt)
    assert_unchanged(after_first, list(tp_model.parameters()), "parameter")


def test_unscale_then_step_then_update_cycle_repeats():
    # update() resets every optimizer's stage: the next iteration may unscale_ and step again.
    _, tp_model, _, tp_opt, _, tp_scaler = ready_pair()
    for _ in range(3):
        scaled_backward(tp_model, tp_scaler, [tp_opt])
        tp_scaler.unscale_(tp_opt)
        tp_scaler.step(tp_opt)
        tp_scaler.update()


@pytest.mark.parametrize("method", ["unscale_", "step", "update"])
def test_methods_before_scale_raise(method):
    _, tp_model, _, tp_opt, _, tp_scaler = ready_pair()
    x, y = data(tensorplay)
    tensorplay.nn.functional.mse_loss(tp_model(x), y).backward()
    params_before = snapshot(list(tp_model.parameters()))
    call = {"unscale_": lambda: tp_scaler.unscale_(tp_opt), "step": lambda: tp_scaler.step(tp_opt),
            "update": lambda: tp_scaler.update()}[method]
    with pytest.raises(RuntimeError):
        call()
    assert_unchanged(params_before, list(tp_model.parameters()), "parameter")


def test_step_on_an_optimizer_without_gradients_raises():
    _, tp_model, _, _, _, tp_scaler = ready_pair()
    x, _ = data(tensorplay)
    tp_scaler.scale(tp_model(x).sum())  # no backward: no gradients
    opt = tensorplay.optim.SGD(tp_model.parameters(), lr=0.1)
    with pytest.raises(RuntimeError):
        tp_scaler.step(opt)


def test_update_without_any_step_raises():
    _, tp_model, _, _, _, tp_scaler = ready_pair()
    x, _ = data(tensorplay)
    tp_scaler.scale(tp_model(x).sum())
    with pytest.raises(RuntimeError):
        tp_scaler.update()


def _two_optimizer_setup(lib, model):
    first = OPTIMIZERS["SGD"](lib, model[0].parameters())
    second = OPTIMIZERS["Adam"](lib, model[2].parameters())
    return first, second


@pytest.mark.parametrize("poisoned", ["first", "second", "neither"])
def test_two_optimizers_skip_only_the_one_with_non_finite_grads(poisoned):
    torch_model, tp_model = make_model_pair()
    torch_opts, tp_opts = _two_optimizer_setup(torch, torch_model), _two_optimizer_setup(tensorplay, tp_model)
    torch_scaler, tp_scaler = make_scalers(init_scale=2.0**10, growth_interval=2)
    for step in range(3):
        poison_now = step == 1 and poisoned != "neither"
        for model, opts, scaler in [(torch_model, torch_opts, torch_scaler), (tp_model, tp_opts, tp_scaler)]:
            scaled_backward(model, scaler, opts)
            if poison_now:
                layer = model[0] if poisoned == "first" else model[2]
                with lib_of(model).no_grad():
                    layer.weight.grad[1, 2] = math.nan
            before = {name: snapshot(list(model[i].parameters())) for name, i in [("first", 0), ("second", 2)]}
            for opt in opts:
                scaler.step(opt)
            if lib_of(model) is tensorplay:
                for name, i in [("first", 0), ("second", 2)]:
                    changed = any(not np.array_equal(old, as_numpy(p))
                                  for old, p in zip(before[name], model[i].parameters()))
                    assert changed == (not (poison_now and poisoned == name)), (
                        f"step {step}: the {name} optimizer's parameters changed={changed}")
            scaler.update()
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step}")
        assert_params_close(tp_model, torch_model, f"after step {step}")
    # growth_interval=2: a clean run grows once; a skip at step 1 backs off instead.
    assert tp_scaler.get_scale() == (2.0**11 if poisoned == "neither" else 2.0**9)


def test_update_combines_found_infs_of_all_optimizers_after_unscale_only():
    # Only unscale_ (no step) on the poisoned optimizer still counts in update().
    _, tp_model = make_model_pair()
    first, second = _two_optimizer_setup(tensorplay, tp_model)
    scaler = tensorplay.amp.GradScaler("cpu", init_scale=64.0, growth_interval=1)
    scaled_backward(tp_model, scaler, [first, second])
    with tensorplay.no_grad():
        tp_model[2].bias.grad[0] = math.inf
    scaler.step(first)
    scaler.unscale_(second)
    scaler.update()
    assert scaler.get_scale() == 32.0


def test_grads_of_several_dtypes_in_one_optimizer():
    torch_params = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2, dtype=torch.float64)),
                    torch.nn.Parameter(torch.ones(2, dtype=torch.bfloat16))]
    tp_params = [tp_copy(p).requires_grad_(True) for p in torch_params]
    results = []
    for lib, params in [(torch, torch_params), (tensorplay, tp_params)]:
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0)
        opt = lib.optim.SGD(params, lr=0.5)
        loss = sum((p.float() * (i + 1)).sum() for i, p in enumerate(params))
        scaler.scale(loss).backward()
        with lib.no_grad():
            params[1].grad[0] = math.inf  # only the float64 gradient
        before = snapshot(params)
        scaler.step(opt)
        assert_unchanged(before, params, f"{lib.__name__} parameter")
        scaler.update()
        results.append(([p.grad for p in params], scaler.get_scale()))
    (torch_grads, torch_scale), (tp_grads, tp_scale) = results
    assert tp_scale == torch_scale == 4.0
    for p, t in zip(tp_grads, torch_grads):
        assert_bitwise(p, t, what=f"{dtype_name(t.dtype)} grad")


def test_float16_grads_cannot_be_unscaled():
    messages = []
    for lib in (torch, tensorplay):
        param = lib.zeros(3, dtype=lib.float16, requires_grad=True)
        scaler = lib.amp.GradScaler("cpu")
        opt = lib.optim.SGD([param], lr=0.1)
        scaler.scale((param.float() * 2).sum()).backward()
        assert param.grad.dtype == lib.float16
        for call in (lambda: scaler.unscale_(opt), lambda: scaler.step(opt)):
            with pytest.raises(ValueError) as err:
                call()
            messages.append(str(err.value))
        assert as_numpy(param).tolist() == [0.0, 0.0, 0.0]
    assert messages[2:] == messages[:2] == ["Attempting to unscale FP16 gradients."] * 2


def test_float16_grad_anywhere_in_the_optimizer_stops_before_unscaling_anything():
    results = []
    for lib in (torch, tensorplay):
        first = lib.zeros(2, requires_grad=True)
        half = lib.zeros(2, dtype=lib.float16, requires_grad=True)
        scaler = lib.amp.GradScaler("cpu", init_scale=16.0)
        opt = lib.optim.SGD([first, half], lr=0.1)
        scaler.scale((first * 3).sum() + (half.float() * 2).sum()).backward()
        with pytest.raises(ValueError):
            scaler.unscale_(opt)
        results.append(as_numpy(first.grad).tolist())
    assert results[1] == results[0] == [48.0, 48.0], "the float32 gradient was unscaled before the error"


def test_bfloat16_grads_are_unscaled_like_torch():
    results = []
    for lib in (torch, tensorplay):
        param = lib.zeros(5, dtype=lib.bfloat16, requires_grad=True)
        scaler = lib.amp.GradScaler("cpu", init_scale=1024.0)
        opt = lib.optim.SGD([param], lr=0.1)
        weights = lib.tensor([0.3, -1.7, 5e-3, 123.0, 1e-6])
        scaler.scale((param.float() * weights).sum()).backward()
        scaler.unscale_(opt)
        results.append(param.grad)
    assert_bitwise(results[1], results[0], what="unscaled bfloat16 grad")


# --------------------------------------------------------------------------------------------
# 4. scale(), get_scale(), enabled=False, update(new_scale), factors
# --------------------------------------------------------------------------------------------

def test_get_scale_before_the_first_scale_is_init_scale():
    for init in (2.0**16, 3.5, 1.0):
        scaler = tensorplay.amp.GradScaler("cpu", init_scale=init)
        assert scaler.get_scale() == torch.amp.GradScaler("cpu", init_scale=init).get_scale() == init
        assert isinstance(scaler.get_scale(), float)
        assert scaler._get_growth_tracker() == 0


def test_scale_of_a_tensor_matches_torch():
    for init in (2.0**16, 3.5):
        torch_scaler, tp_scaler = make_scalers(init_scale=init)
        values = torch.tensor([[1.0, -2.5, 3e-3], [0.0, 7.0, -1e5]])
        assert_bitwise(tp_scaler.scale(tp_copy(values)), torch_scaler.scale(values), what=f"scaled (init {init})")
        assert tp_scaler.get_scale() == init


@pytest.mark.parametrize("shape", [(), (4,)], ids=["0-dim", "1-dim"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_scale_result_dtype_matches_torch(dtype, shape):
    # A 0-dim float16 loss times the float32 scale promotes to float32; a 1-dim one stays float16.
    torch_scaler, tp_scaler = make_scalers()
    values = torch.full(shape, 1.5, dtype=torch_dtype(dtype))
    assert_bitwise(tp_scaler.scale(tp_copy(values)), torch_scaler.scale(values), what=f"scaled {dtype} {shape}")


def test_scale_of_nested_containers_keeps_their_structure():
    torch_scaler, tp_scaler = make_scalers(init_scale=4.0)
    a, b, c = torch.tensor([1.0, 2.0]), torch.tensor(3.0), torch.tensor([[-1.0]])
    torch_out = torch_scaler.scale([a, (b, [c, a]), (c,)])
    tp_out = tp_scaler.scale([tp_copy(a), (tp_copy(b), [tp_copy(c), tp_copy(a)]), (tp_copy(c),)])
    assert type(tp_out) is list and type(tp_out[1]) is tuple and type(tp_out[1][1]) is list
    assert type(tp_out[2]) is tuple and len(tp_out) == 3 and len(tp_out[1][1]) == 2
    pairs = [(tp_out[0], torch_out[0]), (tp_out[1][0], torch_out[1][0]), (tp_out[1][1][0], torch_out[1][1][0]),
             (tp_out[1][1][1], torch_out[1][1][1]), (tp_out[2][0], torch_out[2][0])]
    for p, t in pairs:
        assert_bitwise(p, t)


def test_scale_of_a_tuple_returns_a_tuple():
    scaler = tensorplay.amp.GradScaler("cpu", init_scale=2.0)
    out = scaler.scale((tensorplay.tensor(1.0), tensorplay.tensor(2.0)))
    assert type(out) is tuple and [v.item() for v in out] == [2.0, 4.0]


def test_scale_of_another_iterable_is_lazy_like_torch():
    scaler = tensorplay.amp.GradScaler("cpu", init_scale=2.0)
    out = scaler.scale(v for v in [tensorplay.tensor(1.0), tensorplay.tensor(5.0)])
    assert not isinstance(out, (list, tuple))
    assert [v.item() for v in out] == [2.0, 10.0]


def test_scale_rejects_non_tensors():
    for lib in (torch, tensorplay):
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(ValueError):
            scaler.scale(3.0)
        with pytest.raises(ValueError):
            scaler.scale([lib.ones(1), 3.0])


def test_scaled_loss_gradients_are_multiplied_by_the_scale():
    _, tp_model = make_model_pair()
    x, y = data(tensorplay)
    tensorplay.nn.functional.mse_loss(tp_model(x), y).backward()
    plain = snapshot([p.grad for p in tp_model.parameters()])
    tp_model.zero_grad()
    scaler = tensorplay.amp.GradScaler("cpu", init_scale=2.0**16)
    scaler.scale(tensorplay.nn.functional.mse_loss(tp_model(x), y)).backward()
    for want, p in zip(plain, tp_model.parameters()):
        np.testing.assert_allclose(as_numpy(p.grad), want * 2.0**16, rtol=1e-5, atol=1e-3)


def test_disabled_scaler_is_a_passthrough():
    _, tp_model = make_model_pair()
    opt = tensorplay.optim.SGD(tp_model.parameters(), lr=0.1)
    scaler = tensorplay.amp.GradScaler("cpu", enabled=False, growth_factor=0.5, backoff_factor=2.0)  # not checked
    assert not scaler.is_enabled()
    x, y = data(tensorplay)
    loss = tensorplay.nn.functional.mse_loss(tp_model(x), y)
    assert scaler.scale(loss) is loss
    nested = [loss, (loss,)]
    assert scaler.scale(nested) is nested
    loss.backward()
    grads = snapshot([p.grad for p in tp_model.parameters()])
    scaler.unscale_(opt)  # no-op, not even an error for calling it before scale()
    assert_unchanged(grads, [p.grad for p in tp_model.parameters()], "gradient")
    params_before = snapshot(list(tp_model.parameters()))
    poison_grad(tp_model, math.inf)
    assert scaler.step(opt) is None
    # The optimizer did step, inf and all: nothing was checked.
    assert not np.isfinite(as_numpy(tp_model[2].weight)).all()
    assert not np.array_equal(params_before[0], as_numpy(tp_model[0].weight))
    scaler.update()
    scaler.update(2.0)
    assert scaler.get_scale() == 1.0 and scaler._get_growth_tracker() == 0
    assert scaler.state_dict() == {} == torch.amp.GradScaler("cpu", enabled=False).state_dict()
    scaler.load_state_dict({})  # ignored when disabled


def test_disabled_step_returns_what_the_optimizer_returns():
    class CountingSGD(tensorplay.optim.SGD):
        def step(self, *args, **kwargs):
            super().step()
            return ("stepped", args, kwargs)

    _, tp_model = make_model_pair()
    opt = CountingSGD(tp_model.parameters(), lr=0.1)
    x, y = data(tensorplay)
    tensorplay.nn.functional.mse_loss(tp_model(x), y).backward()
    scaler = tensorplay.amp.GradScaler("cpu", enabled=False)
    assert scaler.step(opt, 1, key=2) == ("stepped", (1,), {"key": 2})


def test_enabled_step_forwards_arguments_and_returns_the_optimizers_result():
    class EchoSGD(tensorplay.optim.SGD):
        def step(self, *args, **kwargs):
            super().step()
            return ("stepped", args, kwargs)

    _, tp_model = make_model_pair()
    opt = EchoSGD(tp_model.parameters(), lr=0.1)
    scaler = tensorplay.amp.GradScaler("cpu")
    scaled_backward(tp_model, scaler, [opt])
    assert scaler.step(opt, 7, flag=True) == ("stepped", (7,), {"flag": True})
    scaler.update()
    scaled_backward(tp_model, scaler, [opt])
    poison_grad(tp_model, math.nan)
    assert scaler.step(opt, 7) is None  # skipped: the optimizer is not called


@pytest.mark.parametrize("kwargs", [{"growth_factor": 1.0}, {"growth_factor": 0.5}, {"backoff_factor": 1.0},
                                    {"backoff_factor": 1.5}], ids=lambda k: f"{list(k)[0]}={list(k.values())[0]}")
def test_invalid_factors_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        tensorplay.amp.GradScaler("cpu", **kwargs)


def test_device_must_be_a_string():
    with pytest.raises(TypeError):
        tensorplay.amp.GradScaler(tensorplay.device("cpu"))


def test_factor_setters_take_effect_like_torch():
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(growth_interval=2)
    for step in range(8):
        if step == 3:
            for scaler in (torch_scaler, tp_scaler):
                scaler.set_growth_factor(3.0)
                scaler.set_backoff_factor(0.125)
                scaler.set_growth_interval(1)
        for model, opt, scaler in [(torch_model, torch_opt, torch_scaler), (tp_model, tp_opt, tp_scaler)]:
            scaled_backward(model, scaler, [opt])
            if step in (1, 5):
                poison_grad(model, math.inf)
            scaler.step(opt)
            scaler.update()
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step}")
    assert (tp_scaler.get_growth_factor(), tp_scaler.get_backoff_factor(), tp_scaler.get_growth_interval()) == (
        3.0, 0.125, 1)


def test_update_with_a_new_scale_matches_torch():
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(growth_interval=3)
    for step, new_scale in enumerate([None, 100.0, None, "tensor", None, None]):
        for model, opt, scaler, lib in [(torch_model, torch_opt, torch_scaler, torch),
                                        (tp_model, tp_opt, tp_scaler, tensorplay)]:
            scaled_backward(model, scaler, [opt])
            scaler.step(opt)
            if new_scale is None:
                scaler.update()
            elif new_scale == "tensor":
                scaler.update(lib.full((), 12.5))
            else:
                scaler.update(new_scale)
        # update(new_scale) sets the scale and leaves the growth tracker alone.
        assert_scaler_state_matches(tp_scaler, torch_scaler, f"step {step} (new_scale={new_scale})")
        assert_params_close(tp_model, torch_model, f"after step {step}")


@pytest.mark.parametrize("bad", ["string", "two_elements", "requires_grad", "float64", "list"])
def test_update_with_a_malformed_new_scale_raises_value_error(bad):
    _, tp_model, _, tp_opt, _, scaler = ready_pair(init_scale=8.0)
    scaled_backward(tp_model, scaler, [tp_opt])
    scaler.step(tp_opt)
    value = {"string": "2.0", "two_elements": tensorplay.full((2,), 2.0),
             "requires_grad": tensorplay.full((1,), 2.0).requires_grad_(True),
             "float64": tensorplay.full((1,), 2.0, dtype=tensorplay.float64), "list": [2.0]}[bad]
    with pytest.raises(ValueError):
        scaler.update(value)
    assert scaler.get_scale() == 8.0


def test_update_with_a_one_element_tensor():
    _, tp_model, _, tp_opt, _, scaler = ready_pair(init_scale=8.0)
    scaled_backward(tp_model, scaler, [tp_opt])
    scaler.step(tp_opt)
    scaler.update(tensorplay.full((1,), 2.5))
    assert scaler.get_scale() == 2.5
    scaled_backward(tp_model, scaler, [tp_opt])  # a new iteration: the stages were reset
    scaler.step(tp_opt)


# --------------------------------------------------------------------------------------------
# 5. state_dict, load_state_dict, pickling
# --------------------------------------------------------------------------------------------

def _train(model, opt, scaler, steps, poison_steps=()):
    for step in range(steps):
        scaled_backward(model, scaler, [opt])
        if step in poison_steps:
            poison_grad(model, math.inf)
        scaler.step(opt)
        scaler.update()


def test_state_dict_matches_torch_keys_values_and_types():
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(
        init_scale=2.0**10, growth_interval=4, growth_factor=3.0, backoff_factor=0.25)
    assert tp_scaler.state_dict() == torch_scaler.state_dict()  # before the first scale()
    _train(torch_model, torch_opt, torch_scaler, 7, poison_steps=(1,))
    _train(tp_model, tp_opt, tp_scaler, 7, poison_steps=(1,))
    torch_state, tp_state = torch_scaler.state_dict(), tp_scaler.state_dict()
    assert list(tp_state) == list(torch_state)
    assert tp_state == torch_state
    assert tp_state["_growth_tracker"] == 1 and tp_state["scale"] == 2.0**10 * 0.25 * 3.0
    for key in torch_state:
        assert type(tp_state[key]) is type(torch_state[key]), key


@pytest.mark.parametrize("target", ["fresh", "initialized"])
def test_load_state_dict_round_trip_continues_like_torch(target):
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(growth_interval=4)
    _train(torch_model, torch_opt, torch_scaler, 6, poison_steps=(0,))
    _train(tp_model, tp_opt, tp_scaler, 6, poison_steps=(0,))
    saved = tp_scaler.state_dict()
    assert saved == torch_scaler.state_dict()
    # A scaler built with other settings takes every setting from the state dict.
    restored = tensorplay.amp.GradScaler("cpu", init_scale=7.0, growth_factor=5.0, backoff_factor=0.9,
                                         growth_interval=50)
    if target == "initialized":
        _train(tp_model, tp_opt, restored, 2)  # lazily creates its scale and tracker tensors first
        tp_scaler.load_state_dict(saved)      # rewind the reference to where `saved` was taken
        torch_scaler.load_state_dict(saved)
    restored.load_state_dict(saved)
    assert restored.state_dict() == saved
    assert restored.get_scale() == saved["scale"]
    torch_twin = torch.amp.GradScaler("cpu")
    torch_twin.load_state_dict(torch_scaler.state_dict())
    for step in range(5):
        _train(torch_model, torch_opt, torch_twin, 1, poison_steps=(0,) if step == 3 else ())
        _train(tp_model, tp_opt, restored, 1, poison_steps=(0,) if step == 3 else ())
        assert_scaler_state_matches(restored, torch_twin, f"step {step} after load_state_dict")


def test_load_state_dict_sets_the_scale_used_by_scale():
    scaler = tensorplay.amp.GradScaler("cpu")
    scaler.load_state_dict({"scale": 32.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 5,
                            "_growth_tracker": 3})
    assert scaler.scale(tensorplay.tensor(2.0)).item() == 64.0
    assert scaler._get_growth_tracker() == 3


def test_load_empty_state_dict_raises_runtime_error():
    torch_msg, tp_msg = raises_like_torch(RuntimeError, lambda: torch.amp.GradScaler("cpu").load_state_dict({}),
                                          lambda: tensorplay.amp.GradScaler("cpu").load_state_dict({}))
    assert tp_msg == torch_msg


def test_load_state_dict_of_a_disabled_scaler_raises():
    disabled_state = tensorplay.amp.GradScaler("cpu", enabled=False).state_dict()
    with pytest.raises(RuntimeError):
        tensorplay.amp.GradScaler("cpu").load_state_dict(disabled_state)


@pytest.mark.parametrize("moment", ["before_first_scale", "after_update"])
def test_pickle_round_trip_at_the_start_of_an_iteration(moment):
    torch_model, tp_model, torch_opt, tp_opt, torch_scaler, tp_scaler = ready_pair(growth_interval=3)
    if moment == "after_update":
        _train(torch_model, torch_opt, torch_scaler, 5, poison_steps=(1,))
        _train(tp_model, tp_opt, tp_scaler, 5, poison_steps=(1,))
    copy = pickle.loads(pickle.dumps(tp_scaler))
    assert copy.state_dict() == tp_scaler.state_dict() == torch_scaler.state_dict()
    assert copy.is_enabled()
    # The copy carries on exactly like torch's scaler; the original is independent of it.
    original_state = tp_scaler.state_dict()
    for step in range(4):
        _train(torch_model, torch_opt, torch_scaler, 1, poison_steps=(0,) if step == 2 else ())
        _train(tp_model, tp_opt, copy, 1, poison_steps=(0,) if step == 2 else ())
        assert_scaler_state_matches(copy, torch_scaler, f"step {step} after unpickling")
    assert tp_scaler.state_dict() == original_state, "training the unpickled copy changed the original"


def test_pickle_after_scale_only_is_allowed():
    scaler = tensorplay.amp.GradScaler("cpu", init_scale=16.0)
    scaler.scale(tensorplay.tensor(1.0))
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.get_scale() == 16.0
    assert copy.scale(tensorplay.tensor(2.0)).item() == 32.0


@pytest.mark.parametrize("stage", ["after_unscale_", "after_step"])
def test_pickle_mid_iteration_raises(stage):
    _, tp_model, _, tp_opt, _, tp_scaler = ready_pair()
    scaled_backward(tp_model, tp_scaler, [tp_opt])
    tp_scaler.unscale_(tp_opt)
    if stage == "after_step":
        tp_scaler.step(tp_opt)
    with pytest.raises(RuntimeError):
        pickle.dumps(tp_scaler)
    tp_scaler.update()
    pickle.dumps(tp_scaler)  # fine again once the iteration is over


def test_pickle_a_disabled_scaler():
    scaler = tensorplay.amp.GradScaler("cpu", enabled=False)
    copy = pickle.loads(pickle.dumps(scaler))
    assert not copy.is_enabled() and copy.get_scale() == 1.0


# --------------------------------------------------------------------------------------------
# 6. the "cuda" fallback and the deprecated aliases
# --------------------------------------------------------------------------------------------

def _caught(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make()
    return result, caught


@pytest.mark.parametrize("make", [lambda: tensorplay.amp.GradScaler("cuda"), lambda: tensorplay.amp.GradScaler(),
                                  lambda: tensorplay.amp.GradScaler("cuda:0", init_scale=4.0)],
                         ids=["cuda", "default_device", "cuda:0"])
def test_cuda_scaler_warns_and_disables_itself(make):
    if tensorplay.cuda.is_available():
        pytest.skip("CUDA is available")
    scaler, caught = _caught(make)
    user = [w for w in caught if w.category is UserWarning]
    assert len(user) == 1, [str(w.message) for w in caught]
    assert "CUDA is not available" in str(user[0].message)
    assert not scaler.is_enabled()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    _, tp_model = make_model_pair()
    opt = tensorplay.optim.SGD(tp_model.parameters(), lr=0.1)
    x, y = data(tensorplay)
    loss = tensorplay.nn.functional.mse_loss(tp_model(x), y)
    assert scaler.scale(loss) is loss
    loss.backward()
    before = snapshot(list(tp_model.parameters()))
    scaler.unscale_(opt)
    scaler.step(opt)  # just optimizer.step()
    scaler.update()
    assert not np.array_equal(before[0], as_numpy(tp_model[0].weight)), "step() did not call optimizer.step()"


def test_cuda_scaler_with_enabled_false_does_not_warn():
    scaler, caught = _caught(lambda: tensorplay.amp.GradScaler("cuda", enabled=False))
    assert [w for w in caught if w.category is UserWarning] == []
    assert not scaler.is_enabled()


def test_cpu_alias_warns_future_warning_and_works():
    scaler, caught = _caught(lambda: tensorplay.cpu.amp.GradScaler(init_scale=8.0, growth_interval=2))
    future = [w for w in caught if w.category is FutureWarning]
    assert len(future) == 1 and "tensorplay.amp.GradScaler('cpu'" in str(future[0].message)
    assert future[0].filename == __file__, "the deprecation warning should point at the caller"
    assert isinstance(scaler, tensorplay.amp.GradScaler) and scaler.is_enabled()
    assert (scaler.get_scale(), scaler.get_growth_interval()) == (8.0, 2)
    _, tp_model = make_model_pair()
    opt = tensorplay.optim.SGD(tp_model.parameters(), lr=0.1)
    _train(tp_model, opt, scaler, 2, poison_steps=(0,))
    assert scaler.get_scale() == 4.0


def test_cuda_alias_warns_future_warning_and_is_disabled_without_cuda():
    if tensorplay.cuda.is_available():
        pytest.skip("CUDA is available")
    scaler, caught = _caught(lambda: tensorplay.cuda.amp.GradScaler(init_scale=8.0))
    future = [w for w in caught if w.category is FutureWarning]
    assert len(future) == 1 and "tensorplay.amp.GradScaler('cuda'" in str(future[0].message)
    assert future[0].filename == __file__, "the deprecation warning should point at the caller"
    assert any(w.category is UserWarning for w in caught)
    assert isinstance(scaler, tensorplay.amp.GradScaler) and not scaler.is_enabled()

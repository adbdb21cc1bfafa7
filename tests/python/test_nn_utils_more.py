"""tensorplay.nn.utils (beyond clipping-by-value, parameter vectors and rnn) and
tensorplay.func.functional_call against torch.

Norms and clipping: get_total_norm for several norm orders and dtypes, clip_grads_with_norm_,
clip_grad_norm_ and its deprecated alias. Fusion: eval-mode BatchNorm folded into Conv2d,
ConvTranspose2d and Linear gives torch's fused weights and outputs. Weight and spectral norm, as
hooks and as parametrizations: same state_dict keys as torch, outputs, input and parameter
gradients with torch's weights copied across (train and eval for spectral norm, whose power
iteration updates its buffers in training), and removal. parametrize: custom parametrizations
(chained, with right_inverse, cached), its errors, and the module's class. functional_call:
values, gradients to the given tensors, tied weights, strict key checks. skip_init.
"""

import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_module, copy_state, same_outcome, tp_tensor


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def with_grads(lib, shapes, dtype=None):
    params = []
    for i, shape in enumerate(shapes):
        p = (torch.from_numpy(randn(*shape, seed=i)) if lib is torch else tp_tensor(randn(*shape, seed=i)))
        g = (torch.from_numpy(randn(*shape, seed=10 + i)) if lib is torch else tp_tensor(randn(*shape, seed=10 + i)))
        if dtype is not None:
            p, g = p.to(getattr(lib, dtype)), g.to(getattr(lib, dtype))
        p.requires_grad_(True)
        p.grad = g
        params.append(p)
    return params


SHAPES = [(3, 4), (5,), (2, 2, 2)]


# ---- norms and clipping ----

@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_get_total_norm_matches_torch(norm_type, dtype):
    t = torch.nn.utils.get_total_norm([p.grad for p in with_grads(torch, SHAPES, dtype)], norm_type)
    p = tensorplay.nn.utils.get_total_norm([p.grad for p in with_grads(tensorplay, SHAPES, dtype)], norm_type)
    assert_same(p, t, rtol=1e-2 if dtype == "bfloat16" else 1e-5)


def test_get_total_norm_of_one_tensor_of_nothing_and_of_mixed_dtypes_like_torch():
    def scenario(lib):
        grads = [p.grad for p in with_grads(lib, SHAPES)]
        mixed = [grads[0].to(lib.bfloat16), grads[1]]
        return [(round(float(n), 4), str(n.dtype).split(".")[-1]) for n in
                (lib.nn.utils.get_total_norm(grads[0]), lib.nn.utils.get_total_norm([]),
                 lib.nn.utils.get_total_norm(mixed))]

    same_outcome(scenario)


def test_get_total_norm_error_if_nonfinite_like_torch():
    def scenario(lib):
        g = lib.ones(3)
        g[1] = float("inf")
        assert float(lib.nn.utils.get_total_norm([g])) == float("inf")
        try:
            lib.nn.utils.get_total_norm([g], error_if_nonfinite=True)
        except RuntimeError as e:
            return str(e)

    same_outcome(scenario)


@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grads_with_norm_scales_like_torch(max_norm):
    t_params, p_params = with_grads(torch, SHAPES), with_grads(tensorplay, SHAPES)
    t_total = torch.nn.utils.get_total_norm([p.grad for p in t_params])
    p_total = tensorplay.nn.utils.get_total_norm([p.grad for p in p_params])
    assert torch.nn.utils.clip_grads_with_norm_(t_params, max_norm, t_total) is None
    assert tensorplay.nn.utils.clip_grads_with_norm_(p_params, max_norm, p_total) is None
    for p, t in zip(p_params, t_params):
        assert_same(p.grad, t.grad)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_clip_grad_norm_and_its_deprecated_alias_match_torch(dtype):
    for fn in ("clip_grad_norm_", "clip_grad_norm"):
        t_params, p_params = with_grads(torch, SHAPES, dtype), with_grads(tensorplay, SHAPES, dtype)
        with warnings.catch_warnings(record=True) as t_warn:
            warnings.simplefilter("always")
            t_total = getattr(torch.nn.utils, fn)(t_params, 1.0, norm_type=3.0)
        with warnings.catch_warnings(record=True) as p_warn:
            warnings.simplefilter("always")
            p_total = getattr(tensorplay.nn.utils, fn)(p_params, 1.0, norm_type=3.0)
        assert [w.category for w in p_warn] == [w.category for w in t_warn]
        tol = dict(rtol=2e-2, atol=1e-2) if dtype == "bfloat16" else {}
        assert_same(p_total, t_total, **tol)
        for p, t in zip(p_params, t_params):
            assert_same(p.grad, t.grad, **tol)


# ---- fusion ----

def _eval_pair(make):
    """make(torch.nn) and make(tensorplay.nn) with torch's weights and random running statistics, in eval mode."""
    t_mods, p_mods = make(torch.nn), make(tensorplay.nn)
    for k, (t, p) in enumerate(zip(t_mods, p_mods)):
        for name, buf in t.named_buffers():
            if name in ("running_mean", "running_var"):
                buf.copy_(torch.from_numpy(np.abs(randn(*buf.shape, seed=20 + k)) + 0.5))
        with torch.no_grad():
            for name, param in t.named_parameters():
                param.copy_(torch.from_numpy(randn(*param.shape, seed=30 + k)))
        copy_state(t, p)
        t.eval()
        p.eval()
    return t_mods, p_mods


FUSIONS = [
    pytest.param(lambda nn: (nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)), False, randn(2, 3, 6, 6), id="conv2d"),
    pytest.param(lambda nn: (nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4, affine=False)), False,
                 randn(2, 3, 6, 6), id="conv2d_no_bias_no_affine"),
    pytest.param(lambda nn: (nn.ConvTranspose2d(3, 4, 3), nn.BatchNorm2d(4)), True, randn(2, 3, 5, 5),
                 id="conv_transpose2d"),
    pytest.param(lambda nn: (nn.Conv1d(3, 4, 2), nn.BatchNorm1d(4)), False, randn(2, 3, 7), id="conv1d"),
]


@pytest.mark.parametrize("make, transpose, x", FUSIONS)
def test_fuse_conv_bn_eval_matches_torch(make, transpose, x):
    (t_conv, t_bn), (p_conv, p_bn) = _eval_pair(make)
    t_fused = torch.nn.utils.fuse_conv_bn_eval(t_conv, t_bn, transpose=transpose)
    p_fused = tensorplay.nn.utils.fuse_conv_bn_eval(p_conv, p_bn, transpose=transpose)
    assert p_fused is not p_conv and type(p_fused) is type(p_conv)
    assert isinstance(p_fused.weight, tensorplay.nn.Parameter) and isinstance(p_fused.bias, tensorplay.nn.Parameter)
    assert_same(p_fused.weight.detach(), t_fused.weight.detach())
    assert_same(p_fused.bias.detach(), t_fused.bias.detach())
    with torch.no_grad(), tensorplay.no_grad():
        assert_same(p_fused(tp_tensor(x)), t_bn(t_conv(torch.from_numpy(x))), rtol=1e-4, atol=1e-4)


def test_fuse_linear_bn_eval_matches_torch():
    (t_lin, t_bn), (p_lin, p_bn) = _eval_pair(lambda nn: (nn.Linear(5, 4), nn.BatchNorm1d(4)))
    t_fused = torch.nn.utils.fuse_linear_bn_eval(t_lin, t_bn)
    p_fused = tensorplay.nn.utils.fuse_linear_bn_eval(p_lin, p_bn)
    x = randn(3, 5)
    assert_same(p_fused.weight.detach(), t_fused.weight.detach())
    assert_same(p_fused.bias.detach(), t_fused.bias.detach())
    with torch.no_grad(), tensorplay.no_grad():
        assert_same(p_fused(tp_tensor(x)), t_bn(t_lin(torch.from_numpy(x))), rtol=1e-4, atol=1e-4)


def test_fusion_refuses_train_mode_and_mismatched_features_like_torch():
    def scenario(lib):
        out = []
        for conv, bn in ((lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3)), (lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(4))):
            for train in (True, False):
                conv.train(train)
                bn.train(train)
                fuse = lib.nn.utils.fuse_conv_bn_eval if isinstance(conv, lib.nn.Conv2d) else \
                    lib.nn.utils.fuse_linear_bn_eval
                try:
                    fuse(conv, bn)
                    out.append("fused")
                except AssertionError as e:
                    out.append(str(e))
        return out

    same_outcome(scenario)


def test_fuse_weights_functions_match_torch():
    w, b, rm, rv, bw, bb = (randn(4, 3, 2, seed=1), randn(4, seed=2), randn(4, seed=3), np.abs(randn(4, seed=4)) + 0.1,
                            randn(4, seed=5), randn(4, seed=6))
    for conv_b, bn_w, bn_b in ((b, bw, bb), (None, None, None)):
        def args(convert):
            return [None if a is None else convert(a) for a in (w, conv_b, rm, rv)] + [1e-3] + \
                [None if a is None else convert(a) for a in (bn_w, bn_b)]
        t = torch.nn.utils.fuse_conv_bn_weights(*args(torch.from_numpy))
        p = tensorplay.nn.utils.fuse_conv_bn_weights(*args(tp_tensor))
        for got, want in zip(p, t):
            assert_same(got.detach(), want.detach())
    lw = randn(4, 5, seed=7)
    t = torch.nn.utils.fuse_linear_bn_weights(*[torch.from_numpy(a) for a in (lw, b, rm, rv)], 1e-5,
                                              torch.from_numpy(bw), torch.from_numpy(bb))
    p = tensorplay.nn.utils.fuse_linear_bn_weights(*[tp_tensor(a) for a in (lw, b, rm, rv)], 1e-5, tp_tensor(bw),
                                                   tp_tensor(bb))
    for got, want in zip(p, t):
        assert_same(got.detach(), want.detach())


# ---- weight norm and spectral norm ----

def _quiet(fn):
    """fn with the deprecation warning of the hook-based weight_norm silenced (checked separately)."""
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return fn(*args, **kwargs)
    return call


NORMED = [
    pytest.param(lambda nn: _quiet(nn.utils.weight_norm)(nn.Linear(5, 4)), randn(3, 5), False, id="weight_norm"),
    pytest.param(lambda nn: _quiet(nn.utils.weight_norm)(nn.Linear(5, 4), dim=None), randn(3, 5), False,
                 id="weight_norm-dim_None"),
    pytest.param(lambda nn: _quiet(nn.utils.weight_norm)(nn.Conv2d(3, 4, 3), name="weight", dim=1),
                 randn(2, 3, 6, 6), False, id="weight_norm-conv_dim1"),
    pytest.param(lambda nn: _quiet(nn.utils.weight_norm)(nn.Conv1d(3, 4, 2), dim=-2), randn(2, 3, 6), False,
                 id="weight_norm-negative_dim"),
    pytest.param(lambda nn: nn.utils.spectral_norm(nn.Linear(5, 4)), randn(3, 5), True, id="spectral_norm-train"),
    pytest.param(lambda nn: nn.utils.spectral_norm(nn.Linear(5, 4)), randn(3, 5), False, id="spectral_norm-eval"),
    pytest.param(lambda nn: nn.utils.spectral_norm(nn.Conv2d(3, 4, 3), n_power_iterations=3), randn(2, 3, 6, 6),
                 True, id="spectral_norm-conv_3_iterations"),
    pytest.param(lambda nn: nn.utils.spectral_norm(nn.ConvTranspose2d(3, 4, 3)), randn(2, 3, 5, 5), True,
                 id="spectral_norm-conv_transpose"),
    pytest.param(lambda nn: nn.utils.parametrizations.weight_norm(nn.Linear(5, 4)), randn(3, 5), False,
                 id="parametrizations.weight_norm"),
    pytest.param(lambda nn: nn.utils.parametrizations.weight_norm(nn.Conv2d(3, 4, 3), dim=None), randn(2, 3, 6, 6),
                 False, id="parametrizations.weight_norm-dim_None"),
    pytest.param(lambda nn: nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4)), randn(3, 5), True,
                 id="parametrizations.spectral_norm-train"),
    pytest.param(lambda nn: nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4)), randn(3, 5), False,
                 id="parametrizations.spectral_norm-eval"),
    pytest.param(lambda nn: nn.utils.parametrizations.spectral_norm(nn.ConvTranspose1d(3, 4, 2), n_power_iterations=2),
                 randn(2, 3, 5), True, id="parametrizations.spectral_norm-conv_transpose"),
    pytest.param(lambda nn: nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4), name="bias"), randn(3, 5), True,
                 id="parametrizations.spectral_norm-vector"),
]


@pytest.mark.parametrize("make, x, train", NORMED)
def test_normalised_module_matches_torch(make, x, train):
    """Same state_dict keys, outputs and gradients (to the originals g/v, weight_orig...); in train
    mode the power-iteration buffers move as torch's do, over two forwards."""
    t_module, p_module = compare_module(make, [x], train=train)
    p_state, t_state = p_module.state_dict(), t_module.state_dict()
    assert list(p_state) == list(t_state)
    for name, value in t_state.items():
        assert_same(p_state[name], value, what=f"state {name}")
    assert_same(p_module(tp_tensor(x)).detach(), t_module(torch.from_numpy(x)).detach(), what="second forward")


NORMED_FLOAT64 = [
    # Built in float64 before normalising: tensorplay keeps a leaf's gradient dtype from its first
    # use in a graph, so converting a module after weight_norm has computed its weight would give
    # float32 gradients (an autograd bug outside nn.utils).
    pytest.param(lambda nn: _quiet(nn.utils.weight_norm)(nn.Conv2d(3, 4, 3).double(), dim=1), randn(2, 3, 6, 6),
                 False, id="weight_norm-conv_dim1"),
    pytest.param(lambda nn: nn.utils.spectral_norm(nn.Conv2d(3, 4, 3).double(), n_power_iterations=3),
                 randn(2, 3, 6, 6), True, id="spectral_norm-conv"),
    pytest.param(lambda nn: nn.utils.parametrizations.weight_norm(nn.Conv2d(3, 4, 3).double(), dim=None),
                 randn(2, 3, 6, 6), False, id="parametrizations.weight_norm"),
    pytest.param(lambda nn: nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4).double()), randn(3, 5), True,
                 id="parametrizations.spectral_norm"),
]


@pytest.mark.parametrize("make, x, train", NORMED_FLOAT64)
def test_normalised_module_in_float64_matches_torch(make, x, train):
    compare_module(make, [x], train=train, dtype=torch.float64, rtol=1e-10, atol=1e-12)


def test_hook_weight_norm_g_and_v_like_torch():
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = lib.nn.utils.weight_norm(lib.nn.Linear(5, 4), dim=None)
        return [tuple(p.shape) for p in m.parameters()], [w.category.__name__ for w in caught]

    same_outcome(scenario)


@pytest.mark.parametrize("kind", ["weight_norm", "spectral_norm"])
def test_remove_hook_norm_leaves_the_normalised_weight_like_torch(kind):
    t_module, p_module = compare_module(lambda nn: _quiet(getattr(nn.utils, kind))(nn.Linear(5, 4)), [randn(3, 5)],
                                        train=True)
    _quiet(getattr(torch.nn.utils, "remove_" + kind))(t_module)
    getattr(tensorplay.nn.utils, "remove_" + kind)(p_module)
    assert list(p_module.state_dict()) == list(t_module.state_dict()) == ["bias", "weight"]
    assert isinstance(p_module.weight, tensorplay.nn.Parameter)
    assert_same(p_module.weight.detach(), t_module.weight.detach())


def test_hook_norm_errors_like_torch():
    def scenario(lib):
        out = []
        m = lib.nn.Linear(5, 4)
        for fn in (lambda: lib.nn.utils.remove_weight_norm(m), lambda: lib.nn.utils.remove_spectral_norm(m),
                   lambda: lib.nn.utils.spectral_norm(lib.nn.Linear(5, 4), n_power_iterations=0),
                   lambda: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(5, 4))),
                   lambda: _quiet(lib.nn.utils.weight_norm)(_quiet(lib.nn.utils.weight_norm)(lib.nn.Linear(5, 4)))):
            try:
                fn()
                out.append("ok")
            except (ValueError, RuntimeError) as e:
                out.append(f"{type(e).__name__}: {str(e).split(' in ')[0]}")
        return out

    same_outcome(scenario)


def test_parametrized_norms_remove_and_class_like_torch():
    def scenario(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(5, 4))
        lib.nn.utils.parametrizations.spectral_norm(m, "bias")
        before = (type(m).__name__, P.type_before_parametrizations(m).__name__, P.is_parametrized(m),
                  P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias"), sorted(m.state_dict()))
        weight = m.weight.detach().clone()
        P.remove_parametrizations(m, "weight")
        P.remove_parametrizations(m, "bias", leave_parametrized=False)
        after = (type(m).__name__, P.is_parametrized(m), sorted(m.state_dict()), hasattr(m, "parametrizations"),
                 isinstance(m.weight, lib.nn.Parameter), bool((m.weight.detach() - weight).abs().max() < 1e-6))
        try:
            P.remove_parametrizations(m, "weight")
        except ValueError:
            after += ("refused",)
        return before, after

    same_outcome(scenario)


# ---- parametrize with custom parametrizations ----

def symmetric(nn):
    class Symmetric(nn.Module):
        def forward(self, X):
            return (X + X.transpose(-1, -2)) / 2

        def right_inverse(self, A):
            return A

    return Symmetric()


def scaled(nn, factor):
    class Scale(nn.Module):
        def forward(self, X):
            return X * factor

        def right_inverse(self, A):
            return A / factor

    return Scale()


def test_chained_parametrizations_match_torch():
    def make(nn):
        m = nn.Linear(4, 4)
        nn.utils.parametrize.register_parametrization(m, "weight", symmetric(nn))
        nn.utils.parametrize.register_parametrization(m, "weight", scaled(nn, 2.0))
        return m

    t_module, p_module = compare_module(make, [randn(3, 4)])
    assert list(p_module.state_dict()) == list(t_module.state_dict())
    assert_same(p_module.parametrizations.weight.original.grad, t_module.parametrizations.weight.original.grad)
    assert len(p_module.parametrizations.weight) == 2


def test_transfer_parametrizations_and_params_like_torch():
    def scenario(lib):
        P = lib.nn.utils.parametrize
        source = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 3))
        P.register_parametrization(source, "bias", scaled(lib.nn, 3.0))
        target = P.transfer_parametrizations_and_params(source, lib.nn.Linear(3, 3))
        shared = [getattr(target.parametrizations.weight, f"original{i}") is
                  getattr(source.parametrizations.weight, f"original{i}") for i in range(2)]
        same_values = [bool((getattr(target, n) - getattr(source, n)).abs().max() == 0) for n in ("weight", "bias")]
        return type(target).__name__, sorted(target.state_dict()), shared, same_values

    same_outcome(scenario)


def test_assigning_a_parametrized_tensor_goes_through_right_inverse_like_torch():
    def scenario(lib):
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", symmetric(lib.nn))
        original = m.parametrizations.weight.original
        m.weight = lib.from_numpy(np.arange(9, dtype=np.float32).reshape(3, 3).copy()) + 1
        return (m.parametrizations.weight.original is original, original.tolist(), m.weight.tolist(),
                [name for name, _ in m.named_parameters()])

    same_outcome(scenario)


def test_cached_computes_each_parametrization_once_like_torch():
    def scenario(lib):
        calls = []

        class Counting(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 2

        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Counting())
        calls.clear()
        with lib.nn.utils.parametrize.cached():
            same = m.weight is m.weight
            m(lib.ones(2, 3))
        inside = len(calls)
        m.weight
        return same, inside, len(calls)

    same_outcome(scenario)


def test_parametrize_errors_like_torch():
    def scenario(lib):
        out = []

        class Shrink(lib.nn.Module):
            def forward(self, X):
                return X[:1]

        class Double(lib.nn.Module):
            def forward(self, X):
                return X.double()

        class NoInverse(lib.nn.Module):
            def forward(self, X):
                return X

        for param, name, unsafe in ((Shrink(), "weight", False), (Double(), "weight", False),
                                    (Shrink(), "weight", True), (NoInverse(), "missing", False)):
            m = lib.nn.Linear(3, 3)
            try:
                lib.nn.utils.parametrize.register_parametrization(m, name, param, unsafe=unsafe)
                out.append(tuple(m.weight.shape))
            except ValueError as e:
                out.append(str(e).split("\n")[0].split("'")[0])
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", NoInverse())
        try:
            m.weight = lib.ones(3, 3)
        except RuntimeError as e:
            out.append(str(e))
        wn = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 3))
        try:
            lib.nn.utils.parametrize.remove_parametrizations(wn, "weight", leave_parametrized=False)
        except ValueError as e:
            out.append(str(e))
        return out

    same_outcome(scenario)


# ---- functional_call ----

class TwoLayers:
    """A factory: two Linear layers, the second optionally sharing the first's weight, and a buffer."""

    def __init__(self, tied):
        self.tied = tied

    def __call__(self, nn):
        class Net(nn.Module):
            def __init__(self, tied):
                super().__init__()
                self.l1 = nn.Linear(3, 3)
                self.l2 = nn.Linear(3, 3)
                if tied:
                    self.l2.weight = self.l1.weight
                self.register_buffer("shift", nn.Parameter(nn.init.zeros_(self.l1.bias.detach().clone())).data)

            def forward(self, x, scale=1.0):
                return self.l2(self.l1(x) + self.shift) * scale

        return Net(self.tied)


def _functional_pair(tied):
    make = TwoLayers(tied)
    t_module, p_module = make(torch.nn), make(tensorplay.nn)
    copy_state(t_module, p_module)
    return t_module, p_module


@pytest.mark.parametrize("api", ["func", "stateless"])
def test_functional_call_values_and_gradients_match_torch(api):
    t_module, p_module = _functional_pair(tied=False)
    x = randn(2, 3)
    new = {"l1.weight": randn(3, 3, seed=5), "shift": randn(3, seed=6)}
    t_new = {k: torch.from_numpy(v).requires_grad_(k != "shift") for k, v in new.items()}
    p_new = {k: tp_tensor(v, requires_grad=k != "shift") for k, v in new.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if api == "func":
            t_out = torch.func.functional_call(t_module, t_new, (torch.from_numpy(x),), {"scale": 2.0})
            p_out = tensorplay.func.functional_call(p_module, p_new, (tp_tensor(x),), {"scale": 2.0})
        else:
            t_out = torch.nn.utils.stateless.functional_call(t_module, t_new, torch.from_numpy(x))
            p_out = tensorplay.nn.utils.stateless.functional_call(p_module, p_new, tp_tensor(x))
    assert_same(p_out, t_out)
    t_out.sum().backward()
    p_out.sum().backward()
    assert_same(p_new["l1.weight"].grad, t_new["l1.weight"].grad)
    assert p_module.l1.weight.grad is None and t_module.l1.weight.grad is None
    assert_same(p_module.l2.weight.grad, t_module.l2.weight.grad)
    # The module has its own tensors back.
    assert_same(p_module.l1.weight.detach(), t_module.l1.weight.detach())
    assert "l1.weight" in dict(p_module.named_parameters())


def test_functional_call_stateless_warns_like_torch():
    def scenario(lib):
        m = lib.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.utils.stateless.functional_call(m, {}, lib.ones(1, 2))
        return [w.category.__name__ for w in caught]

    same_outcome(scenario)


@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call_tied_weights_like_torch(tie_weights):
    def scenario(lib):
        module = TwoLayers(tied=True)(lib.nn)
        x = lib.ones(1, 3)
        zero = lib.zeros(3, 3)
        out = lib.func.functional_call(module, {"l1.weight": zero}, x, tie_weights=tie_weights)
        try:
            lib.func.functional_call(module, {"l1.weight": zero, "l2.weight": lib.ones(3, 3)}, x,
                                     tie_weights=tie_weights)
            both = "ok"
        except ValueError as e:
            both = str(e)
        # With weights tied, l2 uses the zero weight too, and the output is its bias.
        return bool((out.detach() - module.l2.bias.detach()).abs().max() < 1e-6), both

    same_outcome(scenario)


def test_functional_call_strict_and_dict_sequences_like_torch():
    def scenario(lib):
        out = []
        module = lib.nn.Linear(2, 2)
        x = lib.ones(1, 2)
        w, b = lib.ones(2, 2), lib.zeros(2)
        for dicts, strict in (({"weight": w}, True), ({"weight": w, "bias": b, "extra": b}, True),
                              (({"weight": w}, {"bias": b}), True), (({"weight": w}, {"weight": w}), False),
                              ([{"weight": w}, 3], False), (w, False)):
            try:
                out.append(lib.func.functional_call(module, dicts, (x,), strict=strict).tolist())
            except (ValueError, RuntimeError) as e:
                out.append(f"{type(e).__name__}: {e}".replace("tensorplay._C.Tensor", "torch.Tensor"))
        return out

    same_outcome(scenario)


# ---- skip_init ----

def test_skip_init_like_torch():
    def scenario(lib):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 4, 3, bias=False, dtype=lib.float64)
        out = [type(m).__name__, tuple(m.weight.shape), str(m.weight.dtype).split(".")[-1], str(m.weight.device)]
        for cls in (int, lib.nn.ReLU):
            try:
                lib.nn.utils.skip_init(cls)
            except (RuntimeError, TypeError) as e:
                out.append(type(e).__name__)
        return out

    same_outcome(scenario)

"""tensorplay.nn's activation modules against torch.nn's, and what the op table (op_table_activation.py)
cannot hold: in-place semantics, random ops (rrelu in training, gumbel_softmax), signatures and reprs.

Each module is built in both libraries from one factory, `make(nn)`; outputs, input gradients and
parameter gradients must agree (test_module_matches_torch, ids `<Module>-<variant>`), in float32,
float64 and bfloat16. The in-place modules and functions must return their input, bump its version and
pass gradients on as PyTorch's do.
"""

import inspect
import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_module, to_numpy, tp_tensor

F_TP, F_TORCH = tensorplay.nn.functional, torch.nn.functional


def randn(*shape, seed=0, scale=3.0):
    # scale 3: the flat pieces and kinks of hardtanh, hardsigmoid, the shrinks... are all reached
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


X = randn(4, 6)
X4 = randn(2, 4, 3, 3, seed=1)

# (id, make): every activation module and each of its options.
MODULES = [
    ("ELU-default", lambda nn: nn.ELU()),
    ("ELU-alpha0.5", lambda nn: nn.ELU(alpha=0.5)),
    ("CELU-default", lambda nn: nn.CELU()),
    ("CELU-alpha2", lambda nn: nn.CELU(2.0)),
    ("SELU", lambda nn: nn.SELU()),
    ("GLU-default", lambda nn: nn.GLU()),
    ("GLU-dim0", lambda nn: nn.GLU(dim=0)),
    ("Hardshrink-default", lambda nn: nn.Hardshrink()),
    ("Hardshrink-lambd2", lambda nn: nn.Hardshrink(2.0)),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid()),
    ("Hardswish", lambda nn: nn.Hardswish()),
    ("Hardtanh-default", lambda nn: nn.Hardtanh()),
    ("Hardtanh-bounds", lambda nn: nn.Hardtanh(-2.0, 0.5)),
    ("LogSigmoid", lambda nn: nn.LogSigmoid()),
    ("Mish", lambda nn: nn.Mish()),
    ("RReLU-eval_default", lambda nn: nn.RReLU()),
    ("RReLU-eval_bounds", lambda nn: nn.RReLU(0.1, 0.6)),
    ("ReLU6", lambda nn: nn.ReLU6()),
    ("Softmax2d", lambda nn: nn.Softmax2d()),
    ("Softmin-dim1", lambda nn: nn.Softmin(dim=1)),
    ("Softmin-dim0", lambda nn: nn.Softmin(0)),
    ("Softplus-default", lambda nn: nn.Softplus()),
    ("Softplus-beta2_threshold1", lambda nn: nn.Softplus(beta=2.0, threshold=1.0)),
    ("Softshrink-default", lambda nn: nn.Softshrink()),
    ("Softshrink-lambd1", lambda nn: nn.Softshrink(1.0)),
    ("Softsign", lambda nn: nn.Softsign()),
    ("Tanhshrink", lambda nn: nn.Tanhshrink()),
    ("Threshold", lambda nn: nn.Threshold(0.5, -2.0)),
]

INPUTS = {"Softmax2d": X4}  # (C, H, W) or (N, C, H, W)


def module_params():
    return [pytest.param(make, INPUTS.get(id.split("-")[0], X), id=id) for id, make in MODULES]


@pytest.mark.parametrize("make, x", module_params())
def test_module_matches_torch(make, x):
    compare_module(make, [x])


# PyTorch's hardsigmoid and hardswish backward kernels multiply by 1.0f / 6.0f, a float32 sixth, in float64 too.
FLOAT32_SIXTH = ("Hardsigmoid", "Hardswish")


@pytest.mark.parametrize("make, x", module_params())
def test_module_in_float64(make, x, request):
    rtol = 1e-7 if request.node.callspec.id.startswith(FLOAT32_SIXTH) else 1e-9
    compare_module(make, [x.astype(np.float64)], rtol=rtol, atol=1e-11, dtype=torch.float64)


@pytest.mark.parametrize("make, x", module_params())
def test_module_in_bfloat16(make, x):
    compare_module(make, [x], rtol=3e-2, atol=3e-2, dtype=torch.bfloat16)


def test_every_activation_module_is_tested():
    tested = {id.split("-")[0] for id, _ in MODULES}
    brief = ("ELU CELU SELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LogSigmoid Mish RReLU ReLU6 Softmax2d "
             "Softmin Softplus Softshrink Softsign Tanhshrink Threshold").split()
    assert set(brief) <= tested
    for name in brief:
        assert name in tensorplay.nn.modules.activation.__all__ and getattr(tensorplay.nn, name)


# ---------------------------------------------------------------------------------------------
# Constructors, attributes and reprs


REPRS = [
    lambda nn: nn.ELU(), lambda nn: nn.ELU(0.5, inplace=True), lambda nn: nn.CELU(2.0),
    lambda nn: nn.CELU(inplace=True), lambda nn: nn.SELU(), lambda nn: nn.SELU(True), lambda nn: nn.GLU(),
    lambda nn: nn.GLU(0), lambda nn: nn.Hardshrink(), lambda nn: nn.Hardshrink(1.5), lambda nn: nn.Hardsigmoid(True),
    lambda nn: nn.Hardswish(inplace=True), lambda nn: nn.Hardtanh(), lambda nn: nn.Hardtanh(-2, 3, True),
    lambda nn: nn.LogSigmoid(), lambda nn: nn.Mish(inplace=True), lambda nn: nn.RReLU(),
    lambda nn: nn.RReLU(0.1, 0.3, inplace=True), lambda nn: nn.ReLU6(), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.Softmax2d(), lambda nn: nn.Softmin(), lambda nn: nn.Softmin(1), lambda nn: nn.Softplus(),
    lambda nn: nn.Softplus(2, 5), lambda nn: nn.Softshrink(), lambda nn: nn.Softshrink(1), lambda nn: nn.Softsign(),
    lambda nn: nn.Tanhshrink(), lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.Threshold(1, 2.5, inplace=True),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.Hardswish(), nn.Threshold(0.0, -1.0)),
]


@pytest.mark.parametrize("make", REPRS, ids=[f"repr{i}" for i in range(len(REPRS))])
def test_repr_matches_torch(make):
    assert repr(make(tensorplay.nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("name", [id.split("-")[0] for id, _ in MODULES if id.endswith(("default", "Softmax2d"))]
                         + ["SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "Mish", "ReLU6",
                            "Softsign", "Tanhshrink", "Threshold", "RReLU", "Softmin", "Softplus"])
def test_constructor_signature_and_attributes_match_torch(name):
    ours, theirs = getattr(tensorplay.nn, name), getattr(torch.nn, name)
    params = [(p.name, p.default) for p in inspect.signature(theirs.__init__).parameters.values()]
    if params[1:] != [("args", inspect.Parameter.empty), ("kwargs", inspect.Parameter.empty)]:  # torch's Module()
        assert [(p.name, p.default) for p in inspect.signature(ours.__init__).parameters.values()] == params
    args = (0.5, 1.0) if name == "Threshold" else ()
    a, b = ours(*args), theirs(*args)
    for attr in getattr(theirs, "__constants__", ()):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert list(a.state_dict()) == list(b.state_dict()) == []


def test_hardtanh_checks_its_bounds_and_takes_the_deprecated_names():
    for nn in (torch.nn, tensorplay.nn):
        with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val \(1\)"):
            nn.Hardtanh(1, 1)
        with pytest.warns(FutureWarning) as record:
            module = nn.Hardtanh(min_value=-3.0, max_value=4.0)
        assert ["min_value" in str(w.message) for w in record] == [True, False]
        assert (module.min_val, module.max_val) == (-3.0, 4.0)


def test_softmax2d_takes_3d_and_4d_inputs_only():
    for m, make in ((torch, torch.randn), (tensorplay, tensorplay.randn)):
        with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
            m.nn.Softmax2d()(make(3, 4))
    compare_module(lambda nn: nn.Softmax2d(), [X4[0]])


@pytest.mark.parametrize("make, x, error", [
    (lambda nn: nn.GLU(), randn(3, 5), RuntimeError),
    (lambda nn: nn.GLU(dim=2), X, IndexError),
    (lambda nn: nn.CELU(0.0), X, RuntimeError),
    (lambda nn: nn.Softshrink(-1.0), X, RuntimeError),
    (lambda nn: nn.RReLU(0.5, 0.1), X, RuntimeError),
], ids=["GLU-odd", "GLU-dim", "CELU-alpha0", "Softshrink-negative", "RReLU-lower_gt_upper"])
def test_module_errors_match_torch(make, x, error):
    with pytest.raises(error):
        make(torch.nn)(torch.from_numpy(x))
    with pytest.raises(error):
        make(tensorplay.nn)(tp_tensor(x))


# ---------------------------------------------------------------------------------------------
# In-place forms: the input comes back, its version bumps, gradients flow through the write


INPLACE_FUNCTIONS = [
    ("relu_", lambda F, x: F.relu_(x)), ("relu", lambda F, x: F.relu(x, inplace=True)),
    ("relu6", lambda F, x: F.relu6(x, inplace=True)),
    ("leaky_relu_", lambda F, x: F.leaky_relu_(x, 0.2)), ("elu_", lambda F, x: F.elu_(x, 0.5)),
    ("elu", lambda F, x: F.elu(x, inplace=True)), ("celu_", lambda F, x: F.celu_(x, 2.0)),
    ("celu", lambda F, x: F.celu(x, inplace=True)), ("selu_", lambda F, x: F.selu_(x)),
    ("selu", lambda F, x: F.selu(x, inplace=True)), ("hardtanh_", lambda F, x: F.hardtanh_(x, -2.0, 0.5)),
    ("hardtanh", lambda F, x: F.hardtanh(x, inplace=True)), ("threshold_", lambda F, x: F.threshold_(x, 0.5, -1.0)),
    ("threshold", lambda F, x: F.threshold(x, 0.5, 7.0, inplace=True)), ("rrelu_", lambda F, x: F.rrelu_(x)),
    ("rrelu", lambda F, x: F.rrelu(x, 0.2, 0.4, inplace=True)), ("mish", lambda F, x: F.mish(x, inplace=True)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x, inplace=True)),
    ("hardswish", lambda F, x: F.hardswish(x, inplace=True)),
]


@pytest.mark.parametrize("fn", [f for _, f in INPLACE_FUNCTIONS], ids=[name for name, _ in INPLACE_FUNCTIONS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inplace_function_returns_its_input_and_differentiates_like_torch(fn, dtype):
    results = []
    for m in (torch, tensorplay):
        leaf = (torch.from_numpy(X) if m is torch else tp_tensor(X)).to(getattr(m, dtype)).requires_grad_(True)
        x = leaf * 1  # in place on a leaf that requires grad is an error: on a copy it is differentiable
        version = x._version
        out = fn(m.nn.functional, x)
        assert out is x and x._version > version
        (out * m.from_numpy(np.arange(X.size, dtype=np.float32).reshape(X.shape)).to(x.dtype)).sum().backward()
        results.append((out, leaf.grad))
    (torch_out, torch_grad), (tp_out, tp_grad) = results
    rtol = 1e-9 if dtype == "float64" else 1e-5
    assert_same(tp_out, torch_out, rtol, 1e-6)
    assert_same(tp_grad, torch_grad, rtol, 1e-5, what="grad")


@pytest.mark.parametrize("fn", [f for _, f in INPLACE_FUNCTIONS], ids=[name for name, _ in INPLACE_FUNCTIONS])
def test_inplace_function_on_a_leaf_that_requires_grad_raises_like_torch(fn):
    for m in (torch, tensorplay):
        with pytest.raises(RuntimeError, match="leaf"):
            fn(m.nn.functional, m.ones(3).requires_grad_(True))


@pytest.mark.parametrize("make", [
    lambda nn: nn.ELU(inplace=True), lambda nn: nn.CELU(inplace=True), lambda nn: nn.SELU(inplace=True),
    lambda nn: nn.Hardsigmoid(inplace=True), lambda nn: nn.Hardswish(inplace=True),
    lambda nn: nn.Hardtanh(inplace=True), lambda nn: nn.Mish(inplace=True), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.RReLU(inplace=True), lambda nn: nn.Threshold(0.1, 20, inplace=True),
], ids=["ELU", "CELU", "SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "Mish", "ReLU6", "RReLU", "Threshold"])
def test_inplace_module_writes_into_its_input(make):
    torch_x, tp_x = torch.from_numpy(X.copy()), tp_tensor(X)
    torch_out, tp_out = make(torch.nn).eval()(torch_x), make(tensorplay.nn).eval()(tp_x)
    assert tp_out is tp_x and torch_out is torch_x
    assert_same(tp_x, torch_x)


def test_inplace_keeps_an_integer_dtype():
    for F, x in ((F_TORCH, torch.tensor([-3, 0, 2, 9])), (F_TP, tensorplay.tensor([-3, 0, 2, 9]))):
        assert F.hardtanh_(x, -1.5, 2.5) is x and x.tolist() == [-1, 0, 2, 2]
        assert F.threshold_(x, 0, 5) is x and x.tolist() == [5, 5, 2, 2]


def test_inplace_refuses_an_expanded_input_like_torch():
    for m in (torch, tensorplay):
        with pytest.raises(RuntimeError, match="single memory location"):
            m.nn.functional.elu_(m.zeros(1).expand(3))
        base = m.tensor([[-1.0], [2.0]])
        assert m.nn.functional.threshold_(base.expand(2, 3), 0.0, 5.0).tolist() == [[5.0] * 3, [2.0] * 3]  # allowed
        assert base.tolist() == [[5.0], [2.0]]


# ---------------------------------------------------------------------------------------------
# rrelu in training: a random slope per negative element, drawn from U(lower, upper)


@pytest.mark.parametrize("lower, upper", [(1 / 8, 1 / 3), (0.1, 0.9), (0.25, 0.25)])
def test_rrelu_training_draws_slopes_in_bounds(lower, upper):
    x = -tensorplay.rand(20000) - 0.5  # all negative
    x.requires_grad_(True)
    out = F_TP.rrelu(x, lower, upper, training=True)
    slope = (out / x).detach().numpy()
    assert slope.min() >= lower - 1e-6 and slope.max() <= upper + 1e-6
    assert abs(slope.mean() - (lower + upper) / 2) < 0.01
    if upper > lower:  # uniform: a quarter of the draws in each quarter of the range
        quarters = np.histogram(slope, bins=4, range=(lower, upper))[0] / slope.size
        np.testing.assert_allclose(quarters, 0.25, atol=0.02)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-6)  # the gradient is the drawn slope


def test_rrelu_training_keeps_positives_and_draws_anew_each_call():
    x = tensorplay.tensor([-1.0] * 1000 + [2.0, 0.5])
    a, b = F_TP.rrelu(x, training=True), F_TP.rrelu(x, training=True)
    assert a[-2:].tolist() == [2.0, 0.5]
    assert not bool((a == b).all())
    module = tensorplay.nn.RReLU()
    assert not bool((module(x) == module(x)).all())  # training mode by default
    module.eval()
    assert bool((module(x)[:-2] == -(1 / 8 + 1 / 3) / 2).all())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
def test_rrelu_training_keeps_the_dtype(dtype):
    x = -tensorplay.ones(64, dtype=getattr(tensorplay, dtype))
    out = F_TP.rrelu(x, training=True)
    assert out.dtype == x.dtype
    assert float(out.max()) <= -1 / 8 + 1e-2 and float(out.min()) >= -1 / 3 - 1e-2


def test_rrelu_inplace_in_training_writes_the_draws_into_its_input():
    x = -tensorplay.ones(100)
    assert F_TP.rrelu_(x, 0.2, 0.3, training=True) is x
    assert float(x.max()) <= -0.2 and float(x.min()) >= -0.3 and len(set(x.tolist())) > 1


# ---------------------------------------------------------------------------------------------
# gumbel_softmax


def test_gumbel_softmax_samples_sum_to_one_and_follow_the_categorical():
    probs = np.array([0.5, 0.3, 0.2])
    logits = tensorplay.tensor(np.log(np.tile(probs, (20000, 1))).astype(np.float32))
    soft = F_TP.gumbel_softmax(logits, tau=0.5)
    assert soft.dtype == tensorplay.float32 and tuple(soft.shape) == (20000, 3)
    np.testing.assert_allclose(soft.sum(-1).numpy(), 1.0, rtol=1e-5)
    hard = F_TP.gumbel_softmax(logits, hard=True)
    assert set(np.unique(hard.numpy())) <= {0.0, 1.0} and bool((hard.sum(-1) == 1).all())
    # the Gumbel-max trick: the argmax of logits + Gumbel noise is a draw from softmax(logits)
    np.testing.assert_allclose(hard.numpy().mean(0), probs, atol=0.015)


def test_gumbel_softmax_hard_is_straight_through():
    logits = tensorplay.tensor(randn(5, 4)).requires_grad_(True)
    weights = tp_tensor(randn(5, 4, seed=3))
    tensorplay.manual_seed(7)
    soft = F_TP.gumbel_softmax(logits, tau=0.7, dim=1)
    (soft * weights).sum().backward()
    soft_grad = logits.grad.numpy().copy()
    logits.grad = None
    tensorplay.manual_seed(7)  # the same noise
    hard = F_TP.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    assert hard.argmax(1).tolist() == soft.argmax(1).tolist()
    np.testing.assert_allclose(hard.detach().numpy(), np.eye(4)[soft.argmax(1).numpy()], atol=1e-6)
    (hard * weights).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), soft_grad, rtol=1e-5, atol=1e-6)


def test_gumbel_softmax_dim_dtype_errors_and_warning():
    out = F_TP.gumbel_softmax(tensorplay.zeros(3, 6, dtype=tensorplay.bfloat16), dim=0)
    assert out.dtype == tensorplay.bfloat16
    np.testing.assert_allclose(out.float().sum(0).numpy(), 1.0, rtol=1e-2)
    for F, m in ((F_TORCH, torch), (F_TP, tensorplay)):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            F.gumbel_softmax(m.zeros(2, 3), eps=1e-3)
        with pytest.raises(RuntimeError):  # not NotImplementedError: the exponential draw refuses integers
            F.gumbel_softmax(m.zeros(2, 3, dtype=m.int64))
        with pytest.raises(RuntimeError) as raised:
            F.gumbel_softmax(m.zeros(2, 3, dtype=m.int64))
        assert type(raised.value) is RuntimeError


# ---------------------------------------------------------------------------------------------
# The functional API: names, signatures, warnings, normalize's out=


FUNCTIONS = ("celu celu_ elu elu_ glu hardshrink hardsigmoid hardswish hardtanh hardtanh_ leaky_relu_ logsigmoid mish "
             "relu6 relu_ rrelu rrelu_ selu selu_ softmin softshrink softsign tanhshrink threshold threshold_ "
             "gumbel_softmax normalize").split()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_is_exported_with_torchs_signature(name):
    assert name in tensorplay.nn._functional.activation.__all__
    ours = getattr(F_TP, name)
    try:
        theirs = inspect.signature(getattr(F_TORCH, name))
    except ValueError:  # a builtin of torch._C: its docstring's first line is its signature
        doc = getattr(F_TORCH, name).__doc__.strip().splitlines()[0]
        assert doc.startswith(f"{name}(")
        want = doc[len(name) + 1:doc.rindex(")")].replace("1./8", "0.125").replace("1./3", "0.333")
        got = ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default}"
                        for p in inspect.signature(ours).parameters.values())
        names = [part.split("=")[0].strip() for part in want.split(",")]
        assert [part.split("=")[0] for part in got.split(", ")] == names
        return
    assert [(p.name, p.default) for p in inspect.signature(ours).parameters.values()] == \
        [(p.name, p.default) for p in theirs.parameters.values()]


def test_softmin_implicit_dim_warns_like_torch():
    for F, m in ((F_TORCH, torch), (F_TP, tensorplay)):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin") as record:
            out = F.softmin(m.ones(2, 3))
        assert record[0].filename == __file__  # the warning points at the caller
        assert tuple(out.shape) == (2, 3) and abs(float(out.sum()) - 2.0) < 1e-6  # dim 1 for 2-D


def test_normalize_writes_into_out():
    x = randn(3, 4)
    out = tensorplay.empty(3, 4)
    assert F_TP.normalize(tp_tensor(x), p=1.0, out=out) is out
    assert_same(out, F_TORCH.normalize(torch.from_numpy(x), p=1.0))


@pytest.mark.parametrize("call", [
    lambda F, x: F.elu(x.tolist()), lambda F, x: F.softsign(None), lambda F, x: F.elu(x, alpha="a"),
    lambda F, x: F.softshrink(x, None), lambda F, x: F.threshold(x, [1], 2), lambda F, x: F.rrelu(x, None),
    lambda F, x: F.glu(x, 0.0), lambda F, x: F.hardtanh(x, "a", 1.0),
], ids=["list_input", "None_input", "str_alpha", "None_lambd", "list_threshold", "None_lower", "float_dim",
        "str_bound"])
def test_wrong_argument_types_raise_type_error(call):
    for F, m in ((F_TORCH, torch), (F_TP, tensorplay)):
        with pytest.raises((TypeError, AttributeError)) as raised:  # torch's pure-Python softsign: AttributeError
            call(F, m.ones(4))
        if F is F_TP:
            assert type(raised.value) is TypeError


def test_numbers_may_be_0dim_tensors_as_in_torch():
    x = randn(3, 4)
    assert_same(F_TP.elu(tp_tensor(x), tensorplay.tensor(0.5)), F_TORCH.elu(torch.from_numpy(x), torch.tensor(0.5)))
    assert_same(F_TP.threshold(tp_tensor(x), tensorplay.tensor(0.0), 3),
                F_TORCH.threshold(torch.from_numpy(x), torch.tensor(0.0), 3))


def test_errors_of_composites_name_the_op_called():
    with pytest.raises(RuntimeError, match=r"\[relu6\] .*Bool"):
        F_TP.relu6(tensorplay.ones(3, dtype=tensorplay.bool))
    with pytest.raises(IndexError, match=r"\[softmin\] Dimension out of range"):
        F_TP.softmin(tensorplay.ones(3), 4)
    with pytest.raises(NotImplementedError, match=r"\[logsigmoid\] not implemented for 'int64'"):
        F_TP.logsigmoid(tensorplay.ones(3, dtype=tensorplay.int64))


def test_kinks_pass_the_gradient_torch_passes():
    """The points where the pieces meet, where a composite's gradient could take either side."""
    x = np.array([-3.0, 3.0, -1.0, 1.0, 0.0, 6.0, -0.5, 0.5, 2.0, -2.0], np.float32)
    for name, kwargs in [("hardsigmoid", {}), ("hardswish", {}), ("hardtanh", {}), ("relu6", {}), ("elu", {}),
                         ("selu", {}), ("celu", {"alpha": 2.0}), ("hardshrink", {}), ("softshrink", {}),
                         ("threshold", {"threshold": 2.0, "value": 0.0}), ("logsigmoid", {}), ("rrelu", {}),
                         ("leaky_relu", {}), ("hardtanh", {"min_val": -2.0, "max_val": 2.0})]:
        t, p = torch.from_numpy(x).requires_grad_(True), tp_tensor(x, requires_grad=True)
        getattr(F_TORCH, name)(t, **kwargs).sum().backward()
        getattr(F_TP, name)(p, **kwargs).sum().backward()
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(t.grad), rtol=1e-6, err_msg=name)

"""The autograd tools for checking and debugging, against PyTorch: anomaly detection
(detect_anomaly, set_detect_anomaly, the NaN check and the report naming the forward op with its
stack), gradgradcheck, the legacy Variable, the gradient layout contract with
enforce_grad_layout_policy, and set_multithreading_enabled.

Each case runs once with each library (`m`) where both can say, and the two must agree.
"""

import threading
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import LIBS


@pytest.fixture(autouse=True)
def anomaly_mode_off_afterwards():
    yield
    for m in (tp, torch):
        m.set_anomaly_enabled(False)


def sqrt_times_zero(m, x):
    return (x.sqrt() * 0).sum()  # sqrt's gradient at 0 is inf, times 0: NaN


def backward_reporting(m, loss):
    """Runs loss.backward(); returns (the error or None, the messages of the warnings raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            loss.backward()
            error = None
        except RuntimeError as e:
            error = e
    return error, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


# ---- anomaly detection ----

def test_nan_gradient_is_reported_with_the_forward_op_and_its_stack():
    results = {}
    for m in (tp, torch):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                loss = sqrt_times_zero(m, x)
                results[m] = backward_reporting(m, loss)
    for m in (tp, torch):
        error, messages = results[m]
        assert str(error) == "Function 'SqrtBackward0' returned nan values in its 0th output."
        report = [msg for msg in messages if msg.startswith("Error detected in SqrtBackward0.")]
        assert len(report) == 1, messages
        assert "Traceback of forward call that caused the error:" in report[0]
        assert "return (x.sqrt() * 0).sum()" in report[0] and "in sqrt_times_zero" in report[0]


@pytest.mark.parametrize("m", LIBS)
def test_without_nan_checks_or_outside_the_mode_a_nan_gradient_passes(m):
    x = m.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autograd.detect_anomaly(check_nan=False):
            assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
            sqrt_times_zero(m, x).backward()
    sqrt_times_zero(m, x).backward()
    assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0


@pytest.mark.parametrize("m", LIBS)
def test_a_failing_backward_is_reported_and_its_error_goes_on(m):
    class Doubler(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("no gradient today")

    x = m.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with m.autograd.detect_anomaly():
            y = Doubler.apply(x).sum()  # the forward call the report points at
            with pytest.raises(ValueError, match="no gradient today"):
                y.backward()
    reports = [str(w.message) for w in caught if str(w.message).startswith("Error detected in DoublerBackward")]
    assert len(reports) == 1 and "y = Doubler.apply(x).sum()" in reports[0]


@pytest.mark.parametrize("m", LIBS)
def test_detect_anomaly_warns_and_restores(m):
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        region = m.autograd.detect_anomaly()
    assert not m.is_anomaly_enabled()
    with pytest.raises(KeyError):
        with region:
            assert m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
            raise KeyError
    assert not m.is_anomaly_enabled()

    with pytest.warns(UserWarning):
        with m.autograd.detect_anomaly(check_nan=False):
            assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
    assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("m", LIBS)
def test_set_detect_anomaly_as_a_call_and_as_a_block(m):
    m.autograd.set_detect_anomaly(True, check_nan=False)
    assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
    with m.autograd.set_detect_anomaly(False):
        assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
    assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
    m.set_anomaly_enabled(False)
    assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("m", LIBS)
def test_anomaly_mode_is_global_not_per_thread(m):
    seen = []
    m.autograd.set_detect_anomaly(True)
    thread = threading.Thread(target=lambda: seen.append(m.is_anomaly_enabled()))
    thread.start()
    thread.join()
    assert seen == [True]


# ---- gradgradcheck ----

def double(m, *shape, seed=0):
    return m.from_numpy(np.random.default_rng(seed).standard_normal(shape)).requires_grad_()


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("fn", [lambda x, w: (x * x.sin()) @ w, lambda x, w: (x @ w).tanh().sum(0)],
                         ids=["sin_matmul", "tanh_sum"])
def test_gradgradcheck_accepts_true_second_derivatives(m, fn):
    assert m.autograd.gradgradcheck(fn, (double(m, 3, 4), double(m, 4, 2, seed=1)))


@pytest.mark.parametrize("m", LIBS)
def test_gradgradcheck_with_given_grad_outputs(m):
    x = double(m, 5)
    assert m.autograd.gradgradcheck(lambda a: a.exp() * a, (x,), (double(m, 5, seed=2),))


@pytest.mark.parametrize("m", LIBS)
def test_gradgradcheck_catches_a_backward_that_is_not_differentiable_right(m):
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()  # right first derivative, and no second one through x

    x = double(m, 4)
    assert m.autograd.gradcheck(Square.apply, (x,))
    assert not m.autograd.gradgradcheck(Square.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        m.autograd.gradgradcheck(Square.apply, (x,))


@pytest.mark.parametrize("m", LIBS)
def test_gradgradcheck_needs_an_input_that_requires_grad(m):
    with pytest.raises(ValueError, match="expects at least one input tensor to require gradient"):
        m.autograd.gradgradcheck(lambda a: a * 2, (m.ones(2, dtype=m.float64),))


# ---- Variable ----

@pytest.mark.parametrize("m", LIBS)
def test_variable_is_its_data_detached_with_requires_grad(m):
    data = m.ones(3)
    v = m.autograd.Variable(data, requires_grad=True)
    assert v is not data and v.requires_grad and v.is_leaf and not data.requires_grad
    assert type(v) is m.Tensor and v.data_ptr() == data.data_ptr()
    assert m.autograd.Variable(data, True).requires_grad
    from_graph = m.autograd.Variable(v * 2)
    assert not from_graph.requires_grad and from_graph.grad_fn is None
    assert isinstance(data, m.autograd.Variable) and not isinstance(3, m.autograd.Variable)
    assert tuple(m.autograd.Variable().shape) == (0,)


@pytest.mark.parametrize("m", LIBS)
def test_variable_errors_and_the_volatile_warning(m):
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        m.autograd.Variable([1, 2])
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point .*can require gradients"):
        m.autograd.Variable(m.ones(2, dtype=m.int64), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        m.autograd.Variable(m.ones(2), volatile=True)
    with pytest.raises(RuntimeError, match=r"torch.autograd.variable\(...\) is deprecated"):
        m.autograd.variable(m.ones(2))


# ---- the gradient layout contract ----

def permuted_leaf(m):
    return m.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()


# (name, the loss of a leaf, how the leaf is made)
LAYOUT_CASES = [
    ("dense_gradient_of_a_permuted_leaf", lambda p: (p * 2).sum(), permuted_leaf),
    ("row_major_gradient_of_a_permuted_leaf", lambda p: (p.contiguous() * 2).sum(), permuted_leaf),
    ("transposed_gradient_of_a_row_major_leaf", lambda q: (q.t().contiguous() * 1).sum(),
     lambda m: m.empty(4, 6).requires_grad_()),
    ("non_dense_leaf", lambda q: (q * 3).sum(), lambda m: m.empty(4, 6)[:, ::2].requires_grad_()),
]


# torch warns when the second pass adds into a .grad that the relaxed first pass left in another layout.
@pytest.mark.filterwarnings("ignore:grad and param do not obey the gradient layout contract")
@pytest.mark.parametrize("enforce", [True, False], ids=["enforced", "relaxed"])
@pytest.mark.parametrize("loss, make", [case[1:] for case in LAYOUT_CASES], ids=[case[0] for case in LAYOUT_CASES])
def test_grad_layout_matches_torch(loss, make, enforce):
    strides = {}
    for m in (tp, torch):
        leaf = make(m)
        with m.autograd.enforce_grad_layout_policy(enforce):
            loss(leaf).backward()
        loss(leaf).backward()  # a second pass adds into .grad, which keeps its layout
        strides[m] = (leaf.grad.stride(), leaf.stride())
        np.testing.assert_array_equal(leaf.grad.numpy(), np.broadcast_to(leaf.grad.numpy().flat[0], leaf.shape))
    assert strides[tp] == strides[torch]


@pytest.mark.parametrize("m", LIBS)
def test_enforce_grad_layout_policy_as_a_call_a_block_a_decorator_and_per_thread(m):
    def relaxed_here():
        p = permuted_leaf(m)
        (p * 2).sum().backward()
        return p.grad.stride() != p.stride()

    m.autograd.enforce_grad_layout_policy(False)
    assert relaxed_here()
    seen = []
    thread = threading.Thread(target=lambda: seen.append(relaxed_here()))
    thread.start()
    thread.join()
    assert seen == [False]
    m.autograd.enforce_grad_layout_policy(True)
    assert not relaxed_here()
    with m.autograd.enforce_grad_layout_policy(False):
        assert relaxed_here()
    assert not relaxed_here()
    decorated = m.autograd.enforce_grad_layout_policy(False)(relaxed_here)
    assert not relaxed_here() and decorated() and not relaxed_here()


# ---- set_multithreading_enabled ----

@pytest.mark.parametrize("m", LIBS)
def test_set_multithreading_enabled_leaves_backward_the_same(m):
    grads = []
    for mode in (False, True):
        with m.autograd.set_multithreading_enabled(mode):
            x = double(m, 3)
            (x.sin() * x).sum().backward()
            grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    setting = m.autograd.set_multithreading_enabled(False)
    assert setting.clone().mode is False
    m.autograd.set_multithreading_enabled(True)

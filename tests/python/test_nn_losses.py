"""The loss modules and their functional forms against torch, with every reduction.

test_loss_module_matches_torch and test_loss_functional_matches_torch (ids
`<Loss>-<variant>-<reduction>`) run each case through the module (`nn.CrossEntropyLoss(...)`) and
through nn.functional (`F.cross_entropy(...)`): the loss and the gradients of the input (and of the
target where it is floating and torch differentiates it) must agree with torch's.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import NoGrad, compare_functional, make_inputs, compare_outputs, backward_both, compare_leaf_grads

FUNCTIONAL = {
    "L1Loss": "l1_loss",
    "MSELoss": "mse_loss",
    "SmoothL1Loss": "smooth_l1_loss",
    "HuberLoss": "huber_loss",
    "NLLLoss": "nll_loss",
    "CrossEntropyLoss": "cross_entropy",
    "BCELoss": "binary_cross_entropy",
    "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
    "KLDivLoss": "kl_div",
}


def rng(seed):
    return np.random.default_rng(seed)


def randn(*shape, seed=0, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


def uniform(lo, hi, *shape, seed=0):
    return rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def labels(classes, *shape, seed=0, force=None):
    out = rng(seed).integers(0, classes, size=shape).astype(np.int64)
    if force is not None:  # make sure the ignored class appears
        out.reshape(-1)[::3] = force
    return out


def log_probs(*shape, seed=0, dim=1):
    x = randn(*shape, seed=seed)
    x = x - np.log(np.exp(x).sum(axis=dim, keepdims=True))
    return x.astype(np.float32)


def probs(*shape, seed=0, dim=1):
    x = np.exp(randn(*shape, seed=seed))
    return (x / x.sum(axis=dim, keepdims=True)).astype(np.float32)


N, C = 6, 4
W = np.array([0.2, 1.0, 2.5, 0.7], dtype=np.float32)

# (loss, variant, [input, target], options); options hold numpy arrays for weight-like tensors.
VARIANTS = [
    ("L1Loss", "basic", [randn(N, 5, seed=1), randn(N, 5, seed=2)], {}),
    ("L1Loss", "target_no_grad_3d", [randn(2, 3, 4, seed=1), NoGrad(randn(2, 3, 4, seed=2))], {}),
    ("MSELoss", "basic", [randn(N, 5, seed=1), randn(N, 5, seed=2)], {}),
    ("MSELoss", "target_no_grad", [randn(N, 5, seed=1), NoGrad(randn(N, 5, seed=2))], {}),
    ("SmoothL1Loss", "beta_1", [randn(N, 5, seed=1, scale=2), randn(N, 5, seed=2)], {}),
    ("SmoothL1Loss", "beta_0.5", [randn(N, 5, seed=1, scale=2), randn(N, 5, seed=2)], {"beta": 0.5}),
    ("SmoothL1Loss", "beta_0_is_l1", [randn(N, 5, seed=1, scale=2), randn(N, 5, seed=2)], {"beta": 0.0}),
    ("HuberLoss", "delta_1", [randn(N, 5, seed=1, scale=2), randn(N, 5, seed=2)], {}),
    ("HuberLoss", "delta_0.5", [randn(N, 5, seed=1, scale=2), randn(N, 5, seed=2)], {"delta": 0.5}),
    ("HuberLoss", "delta_2", [randn(N, 5, seed=1, scale=2), randn(N, 5, seed=2)], {"delta": 2.0}),
    ("NLLLoss", "basic", [log_probs(N, C, seed=1), labels(C, N, seed=2)], {}),
    ("NLLLoss", "weight", [log_probs(N, C, seed=1), labels(C, N, seed=2)], {"weight": W}),
    ("NLLLoss", "ignore_index", [log_probs(N, C, seed=1), labels(C, N, seed=2, force=1)], {"ignore_index": 1}),
    ("NLLLoss", "ignore_index_-1", [log_probs(N, C, seed=1), labels(C, N, seed=2, force=-1)], {"ignore_index": -1}),
    ("NLLLoss", "weight_and_ignore_index", [log_probs(N, C, seed=1), labels(C, N, seed=2, force=2)],
     {"weight": W, "ignore_index": 2}),
    ("NLLLoss", "spatial_4d", [log_probs(2, C, 3, 3, seed=1), labels(C, 2, 3, 3, seed=2)], {}),
    ("NLLLoss", "spatial_3d_weight_ignore", [log_probs(2, C, 5, seed=1), labels(C, 2, 5, seed=2, force=0)],
     {"weight": W, "ignore_index": 0}),
    ("NLLLoss", "unbatched", [log_probs(C, seed=1, dim=0), np.array(2, dtype=np.int64)], {}),
    ("CrossEntropyLoss", "basic", [randn(N, C, seed=1), labels(C, N, seed=2)], {}),
    ("CrossEntropyLoss", "weight", [randn(N, C, seed=1), labels(C, N, seed=2)], {"weight": W}),
    ("CrossEntropyLoss", "ignore_index", [randn(N, C, seed=1), labels(C, N, seed=2, force=3)], {"ignore_index": 3}),
    ("CrossEntropyLoss", "label_smoothing", [randn(N, C, seed=1), labels(C, N, seed=2)], {"label_smoothing": 0.1}),
    ("CrossEntropyLoss", "label_smoothing_weight", [randn(N, C, seed=1), labels(C, N, seed=2)],
     {"label_smoothing": 0.2, "weight": W}),
    ("CrossEntropyLoss", "label_smoothing_ignore_index", [randn(N, C, seed=1), labels(C, N, seed=2, force=0)],
     {"label_smoothing": 0.2, "ignore_index": 0}),
    ("CrossEntropyLoss", "weight_ignore_smoothing", [randn(N, C, seed=1), labels(C, N, seed=2, force=1)],
     {"label_smoothing": 0.3, "weight": W, "ignore_index": 1}),
    ("CrossEntropyLoss", "prob_target", [randn(N, C, seed=1), NoGrad(probs(N, C, seed=2))], {}),
    ("CrossEntropyLoss", "prob_target_grad", [randn(N, C, seed=1), probs(N, C, seed=2)], {}),
    ("CrossEntropyLoss", "prob_target_weight", [randn(N, C, seed=1), NoGrad(probs(N, C, seed=2))], {"weight": W}),
    ("CrossEntropyLoss", "prob_target_smoothing", [randn(N, C, seed=1), NoGrad(probs(N, C, seed=2))],
     {"label_smoothing": 0.25}),
    ("CrossEntropyLoss", "prob_target_weight_smoothing", [randn(N, C, seed=1), NoGrad(probs(N, C, seed=2))],
     {"label_smoothing": 0.25, "weight": W}),
    ("CrossEntropyLoss", "spatial_4d", [randn(2, C, 3, 3, seed=1), labels(C, 2, 3, 3, seed=2)], {}),
    ("CrossEntropyLoss", "spatial_4d_weight_ignore_smoothing",
     [randn(2, C, 3, 3, seed=1), labels(C, 2, 3, 3, seed=2, force=2)],
     {"weight": W, "ignore_index": 2, "label_smoothing": 0.1}),
    ("CrossEntropyLoss", "spatial_prob_target", [randn(2, C, 3, seed=1), NoGrad(probs(2, C, 3, seed=2))], {}),
    ("CrossEntropyLoss", "unbatched", [randn(C, seed=1), np.array(1, dtype=np.int64)], {}),
    ("BCELoss", "soft_target", [uniform(0.05, 0.95, N, 5, seed=1), NoGrad(uniform(0, 1, N, 5, seed=2))], {}),
    ("BCELoss", "hard_target", [uniform(0.05, 0.95, N, 5, seed=1), NoGrad(labels(2, N, 5, seed=2).astype(np.float32))],
     {}),
    ("BCELoss", "weight", [uniform(0.05, 0.95, N, 5, seed=1), NoGrad(uniform(0, 1, N, 5, seed=2))],
     {"weight": uniform(0.5, 2, 5, seed=3)}),
    ("BCEWithLogitsLoss", "basic", [randn(N, 5, seed=1, scale=3), NoGrad(uniform(0, 1, N, 5, seed=2))], {}),
    ("BCEWithLogitsLoss", "large_logits", [randn(N, 5, seed=1, scale=40), NoGrad(uniform(0, 1, N, 5, seed=2))], {}),
    ("BCEWithLogitsLoss", "weight", [randn(N, 5, seed=1, scale=3), NoGrad(uniform(0, 1, N, 5, seed=2))],
     {"weight": uniform(0.5, 2, N, 1, seed=3)}),
    ("BCEWithLogitsLoss", "pos_weight", [randn(N, 5, seed=1, scale=3), NoGrad(uniform(0, 1, N, 5, seed=2))],
     {"pos_weight": uniform(0.5, 3, 5, seed=4)}),
    ("BCEWithLogitsLoss", "weight_and_pos_weight", [randn(N, 5, seed=1, scale=3), NoGrad(uniform(0, 1, N, 5, seed=2))],
     {"weight": uniform(0.5, 2, 5, seed=3), "pos_weight": uniform(0.5, 3, 5, seed=4)}),
    ("KLDivLoss", "prob_target", [log_probs(N, C, seed=1), probs(N, C, seed=2)], {}),
    ("KLDivLoss", "prob_target_with_zeros", [log_probs(N, C, seed=1), NoGrad(np.eye(N, C, dtype=np.float32))], {}),
    ("KLDivLoss", "log_target", [log_probs(N, C, seed=1), log_probs(N, C, seed=2)], {"log_target": True}),
]


def reductions(loss):
    return ["none", "mean", "sum"] + (["batchmean"] if loss == "KLDivLoss" else [])


CASES = [pytest.param(loss, inputs, options, reduction, id=f"{loss}-{variant}-{reduction}")
         for loss, variant, inputs, options in VARIANTS for reduction in reductions(loss)]


def lib_options(options, lib):
    return {k: lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in options.items()}


@pytest.mark.parametrize("loss, inputs, options, reduction", CASES)
def test_loss_module_matches_torch(loss, inputs, options, reduction):
    torch_loss = getattr(torch.nn, loss)(reduction=reduction, **lib_options(options, torch))
    tp_loss = getattr(tensorplay.nn, loss)(reduction=reduction, **lib_options(options, tensorplay))
    torch_args, tp_args, leaves = make_inputs(inputs)
    tp_list, torch_list = compare_outputs(tp_loss(*tp_args), torch_loss(*torch_args), rtol=1e-4, atol=1e-5)
    backward_both(torch_list, tp_list)
    compare_leaf_grads(leaves, rtol=1e-4, atol=1e-6, names=["input", "target"])


@pytest.mark.parametrize("loss, inputs, options, reduction", CASES)
def test_loss_functional_matches_torch(loss, inputs, options, reduction):
    kwargs = dict(lib_options(options, torch), reduction=reduction)
    compare_functional(FUNCTIONAL[loss], inputs, kwargs, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Reductions, attributes and legacy arguments


@pytest.mark.parametrize("loss", sorted(FUNCTIONAL))
def test_loss_module_default_reduction_is_mean(loss):
    assert getattr(tensorplay.nn, loss)().reduction == getattr(torch.nn, loss)().reduction == "mean"


@pytest.mark.parametrize("legacy, expected", [
    pytest.param({"size_average": False}, "sum", id="size_average_False"),
    pytest.param({"reduce": False}, "none", id="reduce_False"),
    pytest.param({"size_average": True, "reduce": True}, "mean", id="both_True"),
])
def test_loss_legacy_size_average_reduce(legacy, expected):
    assert torch.nn.MSELoss(**legacy).reduction == expected
    assert tensorplay.nn.MSELoss(**legacy).reduction == expected
    x, y = randn(3, 4, seed=1), randn(3, 4, seed=2)
    compare_functional("mse_loss", [x, y], legacy)


@pytest.mark.parametrize("name, inputs", [
    pytest.param("mse_loss", [randn(3, 4, seed=1), randn(3, 4, seed=2)], id="mse_loss"),
    pytest.param("cross_entropy", [randn(3, 4, seed=1), labels(4, 3)], id="cross_entropy"),
    pytest.param("kl_div", [log_probs(3, 4), probs(3, 4, seed=2)], id="kl_div"),
])
def test_loss_invalid_reduction_raises_like_torch(name, inputs):
    torch_args, tp_args, _ = make_inputs(inputs)
    with pytest.raises(ValueError):
        getattr(torch.nn.functional, name)(*torch_args, reduction="average")
    with pytest.raises(ValueError):
        getattr(tensorplay.nn.functional, name)(*tp_args, reduction="average")


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_mean_loss_with_every_target_ignored_like_torch(name):
    """torch: the loss is nan (0 / 0) and the input's gradient is all zeros."""
    compare_functional(name, [log_probs(3, C), np.array([1, 1, 1])], {"ignore_index": 1})


def test_cross_entropy_weight_is_a_buffer_like_torch():
    t = torch.nn.CrossEntropyLoss(weight=torch.from_numpy(W))
    p = tensorplay.nn.CrossEntropyLoss(weight=tensorplay.from_numpy(W))
    assert [n for n, _ in p.named_buffers()] == [n for n, _ in t.named_buffers()] == ["weight"]
    assert list(p.state_dict()) == list(t.state_dict())


def test_cross_entropy_rejects_out_of_range_target():
    with pytest.raises((IndexError, RuntimeError)):
        torch.nn.functional.cross_entropy(torch.from_numpy(randn(2, 3)), torch.tensor([0, 3]))
    with pytest.raises((IndexError, RuntimeError)):
        tensorplay.nn.functional.cross_entropy(tensorplay.from_numpy(randn(2, 3)), tensorplay.tensor([0, 3]))


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_weight_that_requires_grad_is_an_error_like_torch(name):
    """torch's nll_loss is not differentiable in its weight: with grad on, such a weight is an error,
    under no_grad it is just a weight."""
    x, y = log_probs(N, C, seed=1), labels(C, N, seed=2)
    values = []
    for m in (torch, tensorplay):
        fn = getattr(m.nn.functional, name)
        inp, target = m.tensor(x, requires_grad=True), m.tensor(y)
        weight = m.tensor(W, requires_grad=True)
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
            fn(inp, target, weight=weight)
        with m.no_grad():
            values.append(fn(inp, target, weight=weight).item())
    assert values[0] == pytest.approx(values[1], rel=1e-6)


def test_out_of_range_target_names_the_first_one_like_torch():
    x = tensorplay.tensor(log_probs(4, C))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        tensorplay.nn.functional.nll_loss(x, tensorplay.tensor([1, 7, -3, 9]))
    with pytest.raises(IndexError, match="Target -3 is out of bounds"):
        tensorplay.nn.functional.nll_loss(x, tensorplay.tensor([1, -3, 7, 0]))
    with pytest.raises((IndexError, RuntimeError), match="Target 7 is out of bounds"):
        torch.nn.functional.nll_loss(torch.tensor(log_probs(4, C)), torch.tensor([1, 7, -3, 9]))

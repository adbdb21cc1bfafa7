"""The rest of torch.nn's losses against torch: margin, embedding and likelihood losses, CTCLoss,
AdaptiveLogSoftmaxWithLoss and LinearCrossEntropyLoss, and the weight= of l1/mse/huber.

test_loss_module_matches_torch and test_loss_functional_matches_torch (ids `<Loss>-<variant>-<reduction>`)
run each case through the module and through nn.functional: the loss and the gradients of every
floating input (targets wrapped in NoGrad excepted) must agree with torch's, in float32 and, for the
`float64` variants, in float64. Then CTC (values and gradients for every reduction, zero_infinity,
blank, both target layouts), the two modules with parameters, result dtypes, and errors.
"""

import math

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import (NoGrad, assert_same, backward_both, compare_functional, compare_leaf_grads, compare_module,
                        compare_outputs, make_inputs, tp_tensor)

FUNCTIONAL = {
    "CosineEmbeddingLoss": "cosine_embedding_loss",
    "GaussianNLLLoss": "gaussian_nll_loss",
    "HingeEmbeddingLoss": "hinge_embedding_loss",
    "MarginRankingLoss": "margin_ranking_loss",
    "MultiLabelMarginLoss": "multilabel_margin_loss",
    "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss",
    "MultiMarginLoss": "multi_margin_loss",
    "NLLLoss2d": "nll_loss",
    "PoissonNLLLoss": "poisson_nll_loss",
    "SoftMarginLoss": "soft_margin_loss",
    "TripletMarginLoss": "triplet_margin_loss",
    "TripletMarginWithDistanceLoss": "triplet_margin_with_distance_loss",
}


def rng(seed):
    return np.random.default_rng(seed)


def randn(*shape, seed=0, scale=1.0, dtype=np.float32):
    return (rng(seed).standard_normal(shape) * scale).astype(dtype)


def uniform(lo, hi, *shape, seed=0, dtype=np.float32):
    return rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def signs(*shape, seed=0, dtype=np.float32):
    return rng(seed).choice([-1.0, 1.0], size=shape).astype(dtype)


def labels(classes, *shape, seed=0):
    return rng(seed).integers(0, classes, size=shape).astype(np.int64)


def log_probs(*shape, seed=0, dim=1):
    x = randn(*shape, seed=seed)
    return (x - np.log(np.exp(x).sum(axis=dim, keepdims=True))).astype(np.float32)


N, C = 5, 4
W = np.array([0.2, 1.0, 2.5, 0.7], dtype=np.float32)
# Multilabel targets: each row lists its labels, then -1 ends the list (row 3 repeats a label, row 4 has none).
MULTILABEL = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [2, -1, 0, 0], [0, 0, -1, 2], [-1, 1, 2, 3]])

# (loss, variant, inputs, options); options hold numpy arrays for weight-like tensors.
VARIANTS = [
    ("MarginRankingLoss", "basic", [randn(N, seed=1), randn(N, seed=2), NoGrad(signs(N, seed=3))], {}),
    ("MarginRankingLoss", "margin", [randn(N, 3, seed=1), randn(N, 3, seed=2), NoGrad(signs(N, 3, seed=3))],
     {"margin": 0.5}),
    ("MarginRankingLoss", "float64", [randn(N, seed=1, dtype=np.float64), randn(N, seed=2, dtype=np.float64),
                                      NoGrad(signs(N, seed=3, dtype=np.float64))], {"margin": 0.2}),
    ("HingeEmbeddingLoss", "basic", [randn(N, 3, seed=1, scale=2), NoGrad(signs(N, 3, seed=2))], {}),
    ("HingeEmbeddingLoss", "margin", [randn(N, 3, seed=1, scale=2), NoGrad(signs(N, 3, seed=2))], {"margin": 2.0}),
    # Targets other than 1 and -1 count as both the margin term and the input term, as in torch.
    ("HingeEmbeddingLoss", "other_targets", [randn(N, seed=1), NoGrad(np.array([1, -1, 0, 2, 1], np.float32))], {}),
    ("SoftMarginLoss", "basic", [randn(N, 3, seed=1, scale=3), NoGrad(signs(N, 3, seed=2))], {}),
    ("SoftMarginLoss", "soft_targets", [randn(N, 3, seed=1, scale=3), NoGrad(uniform(-1, 1, N, 3, seed=2))], {}),
    ("SoftMarginLoss", "float64", [randn(N, 3, seed=1, scale=3, dtype=np.float64),
                                   NoGrad(signs(N, 3, seed=2, dtype=np.float64))], {}),
    ("MultiLabelSoftMarginLoss", "basic", [randn(N, C, seed=1, scale=3), NoGrad(labels(2, N, C, seed=2)
                                                                                .astype(np.float32))], {}),
    ("MultiLabelSoftMarginLoss", "weight_soft_target", [randn(N, C, seed=1, scale=3), uniform(0, 1, N, C, seed=2)],
     {"weight": W}),
    ("MultiLabelSoftMarginLoss", "large_logits", [randn(N, C, seed=1, scale=40), NoGrad(uniform(0, 1, N, C, seed=2))],
     {}),
    ("CosineEmbeddingLoss", "basic", [randn(N, 3, seed=1), randn(N, 3, seed=2), NoGrad(signs(N, seed=3))], {}),
    ("CosineEmbeddingLoss", "margin", [randn(N, 3, seed=1), randn(N, 3, seed=2), NoGrad(signs(N, seed=3))],
     {"margin": -0.3}),
    ("CosineEmbeddingLoss", "unbatched", [randn(3, seed=1), randn(3, seed=2), NoGrad(np.array(-1.0, np.float32))],
     {"margin": 0.1}),
    ("CosineEmbeddingLoss", "zero_vector", [np.zeros((2, 3), np.float32), randn(2, 3, seed=2),
                                            NoGrad(np.array([1.0, -1.0], np.float32))], {}),
    ("MultiMarginLoss", "p1", [randn(N, C, seed=1), labels(C, N, seed=2)], {}),
    ("MultiMarginLoss", "p2_margin_weight", [randn(N, C, seed=1), labels(C, N, seed=2)],
     {"p": 2, "margin": 0.7, "weight": W}),
    ("MultiMarginLoss", "unbatched", [randn(C, seed=1), np.array(2)], {}),
    ("MultiMarginLoss", "unbatched_1d_target", [randn(C, seed=1), np.array([2])], {"p": 2}),
    ("MultiMarginLoss", "float64", [randn(N, C, seed=1, dtype=np.float64), labels(C, N, seed=2)], {"margin": 2.0}),
    ("MultiLabelMarginLoss", "basic", [randn(N, C, seed=1), MULTILABEL], {}),
    ("MultiLabelMarginLoss", "unbatched", [randn(C, seed=1), MULTILABEL[0]], {}),
    ("NLLLoss2d", "spatial", [log_probs(2, C, 3, 3, seed=1), labels(C, 2, 3, 3, seed=2)], {"weight": W}),
    ("PoissonNLLLoss", "log_input", [randn(N, 3, seed=1), NoGrad(rng(2).poisson(2.0, (N, 3)).astype(np.float32))],
     {}),
    ("PoissonNLLLoss", "log_input_full", [randn(N, 3, seed=1), rng(2).poisson(2.0, (N, 3)).astype(np.float32)],
     {"full": True}),
    ("PoissonNLLLoss", "rate_full_eps", [uniform(0.1, 3, N, 3, seed=1), rng(2).poisson(2.0, (N, 3))
                                         .astype(np.float32)], {"log_input": False, "full": True, "eps": 1e-3}),
    ("GaussianNLLLoss", "same_shape_var", [randn(N, 3, seed=1), randn(N, 3, seed=2), uniform(0.1, 2, N, 3, seed=3)],
     {}),
    ("GaussianNLLLoss", "var_per_row", [randn(N, 3, seed=1), randn(N, 3, seed=2), uniform(0.1, 2, N, 1, seed=3)],
     {"full": True}),
    ("GaussianNLLLoss", "var_without_last_dim", [randn(N, 3, seed=1), randn(N, 3, seed=2), uniform(0.1, 2, N, seed=3)],
     {}),
    ("GaussianNLLLoss", "var_float", [randn(N, 3, seed=1), randn(N, 3, seed=2), 0.5], {}),
    # Variances below eps are clamped, and the clamp does not show in their gradient.
    ("GaussianNLLLoss", "var_below_eps", [randn(N, seed=1), randn(N, seed=2), uniform(0, 0.2, N, seed=3)],
     {"eps": 0.1}),
    ("GaussianNLLLoss", "float64", [randn(N, 3, seed=1, dtype=np.float64), randn(N, 3, seed=2, dtype=np.float64),
                                    uniform(0.1, 2, N, 3, seed=3, dtype=np.float64)], {"full": True}),
    ("TripletMarginLoss", "basic", [randn(N, 3, seed=1), randn(N, 3, seed=2), randn(N, 3, seed=3)], {}),
    ("TripletMarginLoss", "p1_swap_margin", [randn(N, 3, seed=1), randn(N, 3, seed=2), randn(N, 3, seed=3)],
     {"p": 1.0, "swap": True, "margin": 2.0}),
    ("TripletMarginLoss", "unbatched", [randn(3, seed=1), randn(3, seed=2), randn(3, seed=3)], {"margin": 3.0}),
    ("TripletMarginWithDistanceLoss", "default_distance", [randn(N, 3, seed=1), randn(N, 3, seed=2),
                                                           randn(N, 3, seed=3)], {"swap": True, "margin": 2.0}),
]


CASES = [pytest.param(loss, inputs, options, reduction, id=f"{loss}-{variant}-{reduction}")
         for loss, variant, inputs, options in VARIANTS for reduction in ("none", "mean", "sum")]
TOLERANCE = {"rtol": 1e-4, "atol": 1e-6}


def lib_options(options, lib):
    return {k: lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in options.items()}


@pytest.mark.parametrize("loss, inputs, options, reduction", CASES)
def test_loss_module_matches_torch(loss, inputs, options, reduction):
    torch_loss = getattr(torch.nn, loss)(reduction=reduction, **lib_options(options, torch))
    tp_loss = getattr(tensorplay.nn, loss)(reduction=reduction, **lib_options(options, tensorplay))
    torch_args, tp_args, leaves = make_inputs(inputs)
    tp_list, torch_list = compare_outputs(tp_loss(*tp_args), torch_loss(*torch_args), **TOLERANCE)
    backward_both(torch_list, tp_list)
    compare_leaf_grads(leaves, **TOLERANCE)


@pytest.mark.parametrize("loss, inputs, options, reduction", CASES)
def test_loss_functional_matches_torch(loss, inputs, options, reduction):
    compare_functional(FUNCTIONAL[loss], inputs, dict(lib_options(options, torch), reduction=reduction), **TOLERANCE)


def test_triplet_margin_with_a_distance_function_like_torch():
    inputs = [randn(N, 3, seed=1), randn(N, 3, seed=2), randn(N, 3, seed=3)]
    results = []
    for m in (torch, tensorplay):
        args = [m.from_numpy(a.copy()).requires_grad_() for a in inputs]
        loss = m.nn.TripletMarginWithDistanceLoss(
            distance_function=lambda x, y: 1.0 - m.nn.functional.cosine_similarity(x, y), margin=0.5)
        out = loss(*args)
        out.backward()
        results.append([out] + [a.grad for a in args])
    for t, p in zip(*results):
        assert_same(p, t, **TOLERANCE)


@pytest.mark.parametrize("name, make", [
    pytest.param("mse_loss", lambda m, x, y, w, r: m.nn.functional.mse_loss(x, y, reduction=r, weight=w), id="mse"),
    pytest.param("l1_loss", lambda m, x, y, w, r: m.nn.functional.l1_loss(x, y, reduction=r, weight=w), id="l1"),
    pytest.param("huber_loss", lambda m, x, y, w, r: m.nn.functional.huber_loss(x, y, reduction=r, delta=0.5,
                                                                                weight=w), id="huber"),
])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_weighted_regression_losses_like_torch(name, make, reduction):
    """torch 2.13's weight= of l1/mse (mean: over the sum of the weights) and huber (mean: over the elements)."""
    x, y, w = randn(N, 3, seed=1, scale=2), randn(N, 3, seed=2), uniform(0, 2, N, 3, seed=3)
    results = []
    for m in (torch, tensorplay):
        xs = m.from_numpy(x.copy()).requires_grad_()
        out = make(m, xs, m.from_numpy(y.copy()), m.from_numpy(w.copy()), reduction)
        out.sum().backward()
        results.append((out, xs.grad))
    for t, p in zip(*results):
        assert_same(p, t, **TOLERANCE)


@pytest.mark.parametrize("loss", sorted(FUNCTIONAL))
def test_loss_module_default_reduction_is_mean(loss):
    assert getattr(tensorplay.nn, loss)().reduction == getattr(torch.nn, loss)().reduction == "mean"


@pytest.mark.parametrize("loss, attributes", [
    ("CosineEmbeddingLoss", ["margin"]), ("HingeEmbeddingLoss", ["margin"]), ("MarginRankingLoss", ["margin"]),
    ("MultiMarginLoss", ["p", "margin", "weight"]), ("PoissonNLLLoss", ["log_input", "full", "eps"]),
    ("GaussianNLLLoss", ["full", "eps"]), ("TripletMarginLoss", ["margin", "p", "eps", "swap"]),
    ("TripletMarginWithDistanceLoss", ["margin", "swap"]), ("CTCLoss", ["blank", "zero_infinity"]),
    ("NLLLoss2d", ["ignore_index", "weight"]), ("MultiLabelSoftMarginLoss", ["weight"]),
])
def test_loss_module_attributes_default_like_torch(loss, attributes):
    t, p = getattr(torch.nn, loss)(), getattr(tensorplay.nn, loss)()
    for name in attributes:
        assert getattr(p, name) == getattr(t, name), name
    assert [n for n, _ in p.named_buffers()] == [n for n, _ in t.named_buffers()]


@pytest.mark.parametrize("loss, legacy, expected", [
    pytest.param("SoftMarginLoss", {"size_average": False}, "sum", id="SoftMarginLoss-size_average_False"),
    pytest.param("MultiMarginLoss", {"reduce": False}, "none", id="MultiMarginLoss-reduce_False"),
    pytest.param("PoissonNLLLoss", {"size_average": True, "reduce": True}, "mean", id="PoissonNLLLoss-both_True"),
])
def test_loss_legacy_size_average_reduce(loss, legacy, expected):
    assert getattr(torch.nn, loss)(**legacy).reduction == expected
    assert getattr(tensorplay.nn, loss)(**legacy).reduction == expected
    inputs = [randn(N, C, seed=1), labels(C, N, seed=2) if loss == "MultiMarginLoss" else NoGrad(signs(N, C, seed=2))]
    compare_functional(FUNCTIONAL[loss], inputs, legacy, **TOLERANCE)


@pytest.mark.parametrize("name, inputs", [
    pytest.param("soft_margin_loss", [randn(N, 3, seed=1), signs(N, 3, seed=2)], id="soft_margin_loss"),
    pytest.param("hinge_embedding_loss", [randn(N, 3, seed=1), signs(N, 3, seed=2)], id="hinge_embedding_loss"),
    pytest.param("multilabel_soft_margin_loss", [randn(N, C, seed=1), uniform(0, 1, N, C, seed=2)],
                 id="multilabel_soft_margin_loss"),
    pytest.param("poisson_nll_loss", [randn(N, 3, seed=1), uniform(0, 3, N, 3, seed=2)], id="poisson_nll_loss"),
    pytest.param("margin_ranking_loss", [randn(N, seed=1), randn(N, seed=2), signs(N, seed=3)],
                 id="margin_ranking_loss"),
    pytest.param("triplet_margin_loss", [randn(N, 3, seed=1), randn(N, 3, seed=2), randn(N, 3, seed=3)],
                 id="triplet_margin_loss"),
])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_loss_in_16_bit_floats_like_torch(name, inputs, dtype):
    results = []
    for m in (torch, tensorplay):
        args = [m.from_numpy(a.copy()).to(getattr(m, dtype)) for a in inputs]
        results.append(getattr(m.nn.functional, name)(*args, reduction="none"))
    assert_same(results[1], results[0], rtol=1.6e-2, atol=1e-2)


# ---------------------------------------------------------------------------------------------
# CTC


T, B, K = 8, 3, 5  # time steps, batch, classes (blank included)
CTC_TARGETS = np.array([[1, 2, 2], [3, 0, 0], [1, 1, 4]])
CTC_INPUT_LENGTHS = np.array([8, 6, 2])     # the third cannot emit 1, 1, 4 in 2 steps: its loss is inf
CTC_TARGET_LENGTHS = np.array([3, 1, 3])


def ctc_case(id, targets=CTC_TARGETS, input_lengths=CTC_INPUT_LENGTHS, target_lengths=CTC_TARGET_LENGTHS,
             dtype=np.float32, steps=T, batch=B, **options):
    return pytest.param(targets, input_lengths, target_lengths, dtype, (steps, batch), options, id=id)


CTC_CASES = [
    *[ctc_case(f"{r}-zero_infinity", reduction=r, zero_infinity=True) for r in ("none", "mean", "sum")],
    *[ctc_case(f"{r}-possible", input_lengths=np.array([8, 6, 7]), reduction=r) for r in ("none", "mean", "sum")],
    ctc_case("none-blank_last", targets=CTC_TARGETS % 4, blank=K - 1, reduction="none", zero_infinity=True),
    ctc_case("mean-concatenated_targets", targets=np.array([1, 2, 2, 3, 1, 1, 4]), zero_infinity=True),
    ctc_case("sum-lengths_as_lists", input_lengths=[8, 6, 7], target_lengths=[3, 1, 3], reduction="sum"),
    ctc_case("none-empty_target", target_lengths=np.array([3, 0, 2]), input_lengths=np.array([8, 6, 7]),
             reduction="none"),
    ctc_case("mean-float64", dtype=np.float64, zero_infinity=True),
    ctc_case("mean-unbatched", targets=np.array([2, 1, 1]), input_lengths=np.array(8), target_lengths=np.array(3),
             batch=None),
]


@pytest.mark.parametrize("targets, input_lengths, target_lengths, dtype, shape, options", CTC_CASES)
def test_ctc_loss_values_and_gradients_like_torch(targets, input_lengths, target_lengths, dtype, shape, options):
    steps, batch = shape
    logits = randn(*((steps, batch, K) if batch else (steps, K)), seed=7, dtype=dtype)
    results = []
    for m in (torch, tensorplay):
        x = m.from_numpy(logits.copy()).requires_grad_()

        def lengths(v):
            return v if isinstance(v, list) else m.from_numpy(v.copy())
        loss = m.nn.functional.ctc_loss(x.log_softmax(-1), m.from_numpy(targets.copy()), lengths(input_lengths),
                                        lengths(target_lengths), **options)
        finite = m.where(m.isinf(loss), m.zeros_like(loss), loss)  # an inf loss has no gradient to compare
        finite.sum().backward()
        results.append((loss, x.grad))
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    for what, t, p in zip(("loss", "grad"), *results):
        assert_same(p, t, **tol, what=what)


def test_ctc_loss_with_a_label_equal_to_blank_like_torch():
    """Targets should not hold the blank; where they do, torch still lets a path skip the blank before such a
    label. (Only the value is compared: torch's hand-written backward does not differentiate its forward there.)"""
    x = log_probs(T, B, K, dim=2)
    losses = [m.nn.functional.ctc_loss(m.from_numpy(x.copy()), m.from_numpy(CTC_TARGETS.copy()),
                                       m.tensor([8, 6, 7]), m.from_numpy(CTC_TARGET_LENGTHS.copy()), blank=2,
                                       reduction="none") for m in (tensorplay, torch)]
    assert_same(*losses, rtol=1e-5, atol=1e-6)


def test_ctc_loss_in_float32_under_autocast_like_torch():
    """ctc_loss is on autocast's float32 list: its bfloat16 input, refused outside a region, runs in float32."""
    x = log_probs(T, B, K, dim=2)
    losses = []
    for m in (tensorplay, torch):
        with m.autocast("cpu", dtype=m.bfloat16):
            losses.append(m.nn.functional.ctc_loss(m.from_numpy(x.copy()).to(m.bfloat16), m.tensor(CTC_TARGETS),
                                                   m.tensor([8, 6, 7]), m.tensor(CTC_TARGET_LENGTHS)))
    assert_same(*losses, rtol=1e-5, atol=1e-6)


def test_ctc_loss_is_inf_where_the_target_cannot_fit():
    x = tp_tensor(log_probs(T, B, K, dim=2))
    loss = tensorplay.nn.functional.ctc_loss(x, tp_tensor(CTC_TARGETS), tp_tensor(CTC_INPUT_LENGTHS),
                                             tp_tensor(CTC_TARGET_LENGTHS), reduction="none")
    assert math.isinf(loss[2].item()) and math.isfinite(loss[0].item())


def test_ctc_loss_module_like_torch():
    x = log_probs(T, B, K, dim=2)
    outs = [m.nn.CTCLoss(blank=4, zero_infinity=True)(m.from_numpy(x.copy()), m.tensor(CTC_TARGETS % 4),
                                                      m.tensor(CTC_INPUT_LENGTHS), m.tensor(CTC_TARGET_LENGTHS))
            for m in (tensorplay, torch)]
    assert_same(outs[0], outs[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, kind", [
    pytest.param(lambda m, x, t, il, tl: m.nn.functional.ctc_loss(x, t, il, tl, blank=K), RuntimeError, id="blank"),
    pytest.param(lambda m, x, t, il, tl: m.nn.functional.ctc_loss(x, t, il + 1, tl), RuntimeError,
                 id="input_longer_than_log_probs"),
    pytest.param(lambda m, x, t, il, tl: m.nn.functional.ctc_loss(x, t, il[:2], tl), RuntimeError,
                 id="input_lengths_size"),
    pytest.param(lambda m, x, t, il, tl: m.nn.functional.ctc_loss(x, t[:, :2], il, tl), RuntimeError,
                 id="targets_too_short"),
    pytest.param(lambda m, x, t, il, tl: m.nn.functional.ctc_loss(x.to(m.bfloat16), t, il, tl), NotImplementedError,
                 id="bfloat16"),
    pytest.param(lambda m, x, t, il, tl: m.nn.functional.ctc_loss(x, t, il, tl, reduction="avg"), ValueError,
                 id="reduction"),
])
def test_ctc_loss_errors_like_torch(call, kind):
    for m in (torch, tensorplay):
        with pytest.raises(kind):
            call(m, m.from_numpy(log_probs(T, B, K, dim=2)), m.from_numpy(CTC_TARGETS.copy()),
                 m.from_numpy(CTC_INPUT_LENGTHS.copy()), m.from_numpy(CTC_TARGET_LENGTHS.copy()))


# ---------------------------------------------------------------------------------------------
# AdaptiveLogSoftmaxWithLoss and LinearCrossEntropyLoss: losses with parameters


def make_asm(head_bias=False):
    return lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=head_bias)


@pytest.mark.parametrize("make, target", [
    pytest.param(make_asm(), np.array([0, 5, 11, 2, 8, 3]), id="every_cluster"),
    pytest.param(make_asm(head_bias=True), np.array([1, 2, 0, 2, 1, 0]), id="shortlist_only_head_bias"),
])
def test_adaptive_log_softmax_matches_torch(make, target):
    compare_module(make, [randn(6, 8, seed=1), target])


def test_adaptive_log_softmax_unbatched_log_prob_and_predict_like_torch():
    torch_module, tp_module = compare_module(make_asm(), [randn(8, seed=1), np.array(9)])
    x = randn(6, 8, seed=2, scale=3)
    assert_same(tp_module.log_prob(tp_tensor(x)), torch_module.log_prob(torch.from_numpy(x)), 1e-5, 1e-6)
    assert_same(tp_module.predict(tp_tensor(x)), torch_module.predict(torch.from_numpy(x)))
    assert [n for n, _ in tp_module.named_parameters()] == [n for n, _ in torch_module.named_parameters()]


@pytest.mark.parametrize("call, kind", [
    pytest.param(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, []), ValueError, id="no_cutoffs"),
    pytest.param(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [7, 3]), ValueError, id="unsorted_cutoffs"),
    pytest.param(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 12]), ValueError, id="cutoff_too_big"),
    pytest.param(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(m.zeros(2, 8), m.tensor([1, 12])),
                 RuntimeError, id="target_out_of_range"),
    pytest.param(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(m.zeros(2, 8), m.tensor([1, 2, 3])),
                 RuntimeError, id="batch_mismatch"),
    pytest.param(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(m.zeros(2, 8), m.zeros(2, 1).long()),
                 RuntimeError, id="2d_target"),
])
def test_adaptive_log_softmax_errors_like_torch(call, kind):
    for m in (torch, tensorplay):
        with pytest.raises(kind):
            call(m)


@pytest.mark.parametrize("make, args", [
    pytest.param(lambda nn: nn.LinearCrossEntropyLoss(6, 5), [randn(4, 6, seed=1), labels(5, 4, seed=2)],
                 id="basic"),
    pytest.param(lambda nn: nn.LinearCrossEntropyLoss(6, 5, bias=True, reduction="sum", ignore_index=1,
                                                      label_smoothing=0.1),
                 [randn(4, 6, seed=1), np.array([1, 0, 4, 1])], id="bias_ignore_index_smoothing"),
    pytest.param(lambda nn: nn.LinearCrossEntropyLoss(6, 3, out_features=(2,), bias=True, reduction="none"),
                 [randn(4, 6, seed=1), labels(3, 4, 2, seed=2)], id="k_dimensional"),
    pytest.param(lambda nn: nn.LinearCrossEntropyLoss(6, 5, weight=torch.from_numpy(np.arange(1, 6, dtype=np.float32))
                                                      if nn is torch.nn else
                                                      tensorplay.arange(1, 6, dtype=tensorplay.float32)),
                 [randn(4, 6, seed=1), labels(5, 4, seed=2)], id="class_weight"),
    pytest.param(lambda nn: nn.LinearCrossEntropyLoss(6, 5), [randn(6, seed=1), np.array(3)], id="unbatched"),
])
def test_linear_cross_entropy_loss_matches_torch(make, args):
    compare_module(make, args)


def test_linear_cross_entropy_functional_with_probabilities_like_torch():
    probs = uniform(0.1, 1, 4, 5, seed=3)
    probs /= probs.sum(1, keepdims=True)
    compare_functional("linear_cross_entropy", [randn(4, 6, seed=1), randn(5, 6, seed=2), NoGrad(probs)],
                       {"label_smoothing": 0.2}, **TOLERANCE)


def test_linear_cross_entropy_loss_repr_and_state_like_torch():
    kwargs = dict(out_features=(2,), bias=True, ignore_index=3, label_smoothing=0.25)
    t, p = torch.nn.LinearCrossEntropyLoss(6, 5, **kwargs), tensorplay.nn.LinearCrossEntropyLoss(6, 5, **kwargs)
    assert repr(p) == repr(t)
    assert list(p.state_dict()) == list(t.state_dict())


# ---------------------------------------------------------------------------------------------
# Errors on bad input


@pytest.mark.parametrize("call, kind", [
    pytest.param(lambda m: m.nn.functional.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 1]), p=3), ValueError,
                 id="multi_margin_p3"),
    pytest.param(lambda m: m.nn.functional.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 3])), RuntimeError,
                 id="multi_margin_target_out_of_range"),
    pytest.param(lambda m: m.nn.functional.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 1, 2])), RuntimeError,
                 id="multi_margin_target_size"),
    pytest.param(lambda m: m.nn.functional.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 1]), weight=m.ones(2)),
                 RuntimeError, id="multi_margin_weight_size"),
    pytest.param(lambda m: m.nn.MultiMarginLoss(weight=m.ones(2, 2)), ValueError, id="MultiMarginLoss_2d_weight"),
    pytest.param(lambda m: m.nn.functional.multilabel_margin_loss(m.zeros(2, 3), m.zeros(2, 2).long()),
                 RuntimeError, id="multilabel_margin_target_size"),
    pytest.param(lambda m: m.nn.functional.margin_ranking_loss(m.zeros(2, 3), m.zeros(2, 3), m.ones(2)),
                 RuntimeError, id="margin_ranking_dims"),
    pytest.param(lambda m: m.nn.functional.cosine_embedding_loss(m.zeros(2, 3), m.zeros(2, 3), m.ones(2, 1)),
                 RuntimeError, id="cosine_embedding_2d_target"),
    pytest.param(lambda m: m.nn.functional.cosine_embedding_loss(m.zeros(3), m.zeros(3), m.ones(2)),
                 RuntimeError, id="cosine_embedding_1d_target_1d_inputs"),
    pytest.param(lambda m: m.nn.functional.triplet_margin_loss(m.zeros(2, 3), m.zeros(2, 3), m.zeros(3)),
                 RuntimeError, id="triplet_dims"),
    pytest.param(lambda m: m.nn.functional.triplet_margin_loss(m.zeros(2, 3), m.zeros(2, 3), m.zeros(2, 3),
                                                               margin=0.0), ValueError, id="triplet_margin_0"),
    pytest.param(lambda m: m.nn.TripletMarginLoss(margin=-1.0), ValueError, id="TripletMarginLoss_margin"),
    pytest.param(lambda m: m.nn.TripletMarginWithDistanceLoss(margin=0.0), ValueError,
                 id="TripletMarginWithDistanceLoss_margin"),
    pytest.param(lambda m: m.nn.functional.gaussian_nll_loss(m.zeros(2, 3), m.zeros(2, 3), -m.ones(2, 3)),
                 ValueError, id="gaussian_negative_var"),
    pytest.param(lambda m: m.nn.functional.gaussian_nll_loss(m.zeros(2, 3), m.zeros(2, 3), -1.0), ValueError,
                 id="gaussian_negative_float_var"),
    pytest.param(lambda m: m.nn.functional.gaussian_nll_loss(m.zeros(2, 3), m.zeros(2, 3), m.ones(2, 2)),
                 ValueError, id="gaussian_var_size"),
    pytest.param(lambda m: m.nn.functional.mse_loss(m.zeros(2, 3), m.zeros(2, 3), weight=m.ones(3)), ValueError,
                 id="mse_weight_size"),
    pytest.param(lambda m: m.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5), RuntimeError,
                 id="LinearCrossEntropyLoss_smoothing"),
    pytest.param(lambda m: m.nn.functional.linear_cross_entropy(m.zeros(2, 4), m.zeros(3, 5), m.tensor([0, 1])),
                 RuntimeError, id="linear_cross_entropy_in_features"),
    pytest.param(lambda m: m.nn.functional.linear_cross_entropy(m.zeros(2, 4), m.zeros(3, 4), m.zeros(2, 3),
                                                                ignore_index=1), RuntimeError,
                 id="linear_cross_entropy_probabilities_with_ignore_index"),
    *[pytest.param(lambda m, name=name: getattr(m.nn.functional, name)(m.zeros(2, 3), m.ones(2, 3),
                                                                        reduction="average"),
                   ValueError, id=f"{name}_reduction")
      for name in ("soft_margin_loss", "hinge_embedding_loss", "multilabel_soft_margin_loss", "poisson_nll_loss")],
    pytest.param(lambda m: m.nn.functional.gaussian_nll_loss(m.zeros(2, 3), m.ones(2, 3), m.ones(2, 3),
                                                             reduction="average"), ValueError,
                 id="gaussian_nll_loss_reduction"),
    pytest.param(lambda m: m.nn.functional.soft_margin_loss(m.zeros(2, 3), m.ones(2, 3).requires_grad_()),
                 RuntimeError, id="soft_margin_target_requires_grad"),
    pytest.param(lambda m: m.nn.functional.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 1]),
                                                             weight=m.ones(3).requires_grad_()),
                 RuntimeError, id="multi_margin_weight_requires_grad"),
])
def test_loss_errors_like_torch(call, kind):
    for m in (torch, tensorplay):
        with pytest.raises(kind):
            call(m)

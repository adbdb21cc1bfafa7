"""tensorplay.nn modules against torch.nn with the same weights.

Every module is built twice from one factory (`make(torch.nn)`, `make(tensorplay.nn)`); torch's
initialised parameters and buffers are copied into the tensorplay module, both run on the same
inputs, and the outputs, the inputs' gradients and every parameter's gradient must agree
(test_module_matches_torch, ids `<Module>-<variant>`). Then train/eval behaviour: BatchNorm's running
statistics (momentum, momentum=None, eval using them), Dropout (identity in eval, zeros and 1/(1-p)
scaling in train), bfloat16 Linear/Conv2d, MultiheadAttention and TransformerEncoderLayer options.

Losses are in test_nn_losses.py, the functional API in test_nn_functional.py, initialisation in
test_nn_init.py.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import Transposed, assert_same, compare_module, copy_state, to_numpy, tp_tensor


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def randint(high, shape, seed=0):
    return np.random.default_rng(seed).integers(0, high, size=shape).astype(np.int64)


def case(id, make, *args, rtol=1e-4, atol=1e-5, train=False, **kwargs):
    return pytest.param(make, list(args), kwargs, rtol, atol, train, id=id)


X4 = randn(2, 4, 9, 9, seed=1)      # N, C, H, W for the 2-D convolutions and pools
X3 = randn(2, 4, 13, seed=2)        # N, C, L for Conv1d

MODULE_CASES = [
    # ---- linear ----
    case("Linear-basic", lambda nn: nn.Linear(5, 4), randn(3, 5)),
    case("Linear-no_bias", lambda nn: nn.Linear(5, 4, bias=False), randn(3, 5)),
    case("Linear-3d_input", lambda nn: nn.Linear(5, 4), randn(2, 3, 5)),
    case("Linear-1d_input", lambda nn: nn.Linear(5, 4), randn(5)),
    case("Bilinear-basic", lambda nn: nn.Bilinear(3, 4, 5), randn(6, 3, seed=1), randn(6, 4, seed=2)),
    case("Bilinear-no_bias", lambda nn: nn.Bilinear(3, 4, 2, bias=False), randn(6, 3, seed=1), randn(6, 4, seed=2)),
    case("Identity", lambda nn: nn.Identity(), randn(3, 4)),
    case("Flatten-default", lambda nn: nn.Flatten(), randn(2, 3, 4, 5)),
    case("Flatten-dims_0_1", lambda nn: nn.Flatten(0, 1), randn(2, 3, 4)),
    case("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), randn(4, 6, 5)),
    # ---- convolution ----
    case("Conv1d-basic", lambda nn: nn.Conv1d(4, 6, 3), X3),
    case("Conv1d-stride2_pad1", lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1), X3),
    case("Conv1d-dilation2", lambda nn: nn.Conv1d(4, 6, 3, dilation=2), X3),
    case("Conv1d-groups2", lambda nn: nn.Conv1d(4, 6, 3, groups=2), X3),
    case("Conv1d-same_even_kernel", lambda nn: nn.Conv1d(4, 6, 4, padding="same"), X3),
    case("Conv1d-valid", lambda nn: nn.Conv1d(4, 6, 3, padding="valid"), X3),
    case("Conv1d-no_bias", lambda nn: nn.Conv1d(4, 6, 3, bias=False), X3),
    case("Conv2d-basic", lambda nn: nn.Conv2d(4, 6, 3), X4),
    case("Conv2d-stride2_pad1", lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=1), X4),
    case("Conv2d-dilation2", lambda nn: nn.Conv2d(4, 6, 3, dilation=2), X4),
    case("Conv2d-dilation2_pad2_stride2", lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2), X4),
    case("Conv2d-groups2", lambda nn: nn.Conv2d(4, 6, 3, groups=2), X4),
    case("Conv2d-depthwise", lambda nn: nn.Conv2d(4, 8, 3, groups=4, padding=1), X4),
    case("Conv2d-rect_kernel_stride", lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0)), X4),
    case("Conv2d-same_k3", lambda nn: nn.Conv2d(4, 6, 3, padding="same"), X4),
    case("Conv2d-same_even_kernel", lambda nn: nn.Conv2d(4, 6, (4, 2), padding="same"), X4),
    case("Conv2d-same_dilation2", lambda nn: nn.Conv2d(4, 6, 3, padding="same", dilation=2), X4),
    case("Conv2d-valid", lambda nn: nn.Conv2d(4, 6, 3, padding="valid"), X4),
    case("Conv2d-no_bias", lambda nn: nn.Conv2d(4, 6, 3, bias=False), X4),
    case("Conv2d-unbatched_input", lambda nn: nn.Conv2d(4, 6, 3), X4[0]),
    case("ConvTranspose2d-basic", lambda nn: nn.ConvTranspose2d(4, 3, 3), X4),
    case("ConvTranspose2d-stride2_pad1_outpad1",
         lambda nn: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), X4),
    case("ConvTranspose2d-groups2", lambda nn: nn.ConvTranspose2d(4, 6, 3, groups=2), X4),
    case("ConvTranspose2d-dilation2", lambda nn: nn.ConvTranspose2d(4, 3, 3, dilation=2), X4),
    case("ConvTranspose2d-output_size", lambda nn: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1), X4,
         output_size=[18, 18]),
    case("ConvTranspose2d-no_bias", lambda nn: nn.ConvTranspose2d(4, 3, 2, stride=2, bias=False), X4),
    case("ConvTranspose1d-basic", lambda nn: nn.ConvTranspose1d(4, 3, 3), X3),
    case("ConvTranspose1d-stride2_pad1_outpad1",
         lambda nn: nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), X3),
    case("ConvTranspose1d-dilation2_no_bias", lambda nn: nn.ConvTranspose1d(4, 3, 2, dilation=2, bias=False), X3),
    case("ConvTranspose1d-output_size", lambda nn: nn.ConvTranspose1d(4, 3, 3, stride=2), X3, output_size=[28]),
    case("ConvTranspose1d-unbatched_input", lambda nn: nn.ConvTranspose1d(4, 3, 3), X3[0]),
    # ---- recurrent cells ----
    case("RNNCell-tanh", lambda nn: nn.RNNCell(5, 4), randn(3, 5), randn(3, 4, seed=1)),
    case("RNNCell-relu_no_bias", lambda nn: nn.RNNCell(5, 4, bias=False, nonlinearity="relu"), randn(3, 5),
         randn(3, 4, seed=1)),
    case("RNNCell-no_hidden", lambda nn: nn.RNNCell(5, 4), randn(3, 5)),
    case("RNNCell-unbatched", lambda nn: nn.RNNCell(5, 4), randn(5), randn(4, seed=1)),
    case("LSTMCell-no_hidden", lambda nn: nn.LSTMCell(5, 4), randn(3, 5)),
    case("LSTMCell-unbatched_no_bias", lambda nn: nn.LSTMCell(5, 4, bias=False), randn(5)),
    case("GRUCell-basic", lambda nn: nn.GRUCell(5, 4), randn(3, 5), randn(3, 4, seed=1)),
    case("GRUCell-no_hidden_no_bias", lambda nn: nn.GRUCell(5, 4, bias=False), randn(3, 5)),
    case("GRUCell-unbatched", lambda nn: nn.GRUCell(5, 4), randn(5), randn(4, seed=1)),
    # ---- distances ----
    case("CosineSimilarity-dim1", lambda nn: nn.CosineSimilarity(), randn(3, 5), randn(3, 5, seed=1)),
    case("CosineSimilarity-dim0_eps", lambda nn: nn.CosineSimilarity(dim=0, eps=0.5), randn(3, 5), randn(5, seed=1)),
    case("PairwiseDistance-p2", lambda nn: nn.PairwiseDistance(), randn(3, 5), randn(3, 5, seed=1)),
    case("PairwiseDistance-p1_keepdim", lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True), randn(3, 5),
         randn(5, seed=1)),
    # ---- pooling ----
    case("MaxPool2d-k2", lambda nn: nn.MaxPool2d(2), X4),
    case("MaxPool2d-k3_s2_p1", lambda nn: nn.MaxPool2d(3, stride=2, padding=1), X4),
    case("MaxPool2d-ceil_mode", lambda nn: nn.MaxPool2d(2, ceil_mode=True), X4),
    case("MaxPool2d-dilation2", lambda nn: nn.MaxPool2d(2, stride=1, dilation=2), X4),
    case("MaxPool2d-rect", lambda nn: nn.MaxPool2d((3, 2), stride=(2, 1)), X4),
    case("MaxPool2d-return_indices", lambda nn: nn.MaxPool2d(3, stride=2, padding=1, return_indices=True), X4),
    case("AvgPool2d-k2", lambda nn: nn.AvgPool2d(2), X4),
    case("AvgPool2d-k3_s2_p1_include_pad", lambda nn: nn.AvgPool2d(3, stride=2, padding=1), X4),
    case("AvgPool2d-k3_s2_p1_exclude_pad", lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
         X4),
    case("AvgPool2d-ceil_mode", lambda nn: nn.AvgPool2d(2, ceil_mode=True), X4),
    case("AvgPool2d-ceil_mode_pad_exclude",
         lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), randn(1, 2, 8, 8)),
    case("AvgPool2d-ceil_mode_pad_include", lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True),
         randn(1, 2, 8, 8)),
    case("AvgPool2d-divisor_override", lambda nn: nn.AvgPool2d(2, divisor_override=3), X4),
    case("AdaptiveAvgPool2d-1x1", lambda nn: nn.AdaptiveAvgPool2d(1), X4),
    case("AdaptiveAvgPool2d-uneven_4x2", lambda nn: nn.AdaptiveAvgPool2d((4, 2)), randn(2, 3, 7, 5)),
    case("AdaptiveAvgPool2d-None_keeps_dim", lambda nn: nn.AdaptiveAvgPool2d((None, 3)), randn(2, 3, 7, 5)),
    case("AdaptiveAvgPool2d-upsample", lambda nn: nn.AdaptiveAvgPool2d(5), randn(1, 2, 3, 3)),
    # ---- normalisation (eval: running statistics; train: batch statistics) ----
    case("BatchNorm1d-2d_train", lambda nn: nn.BatchNorm1d(5), randn(8, 5), train=True),
    case("BatchNorm1d-3d_train", lambda nn: nn.BatchNorm1d(5), randn(4, 5, 6), train=True),
    case("BatchNorm1d-2d_eval", lambda nn: nn.BatchNorm1d(5), randn(8, 5)),
    case("BatchNorm2d-train", lambda nn: nn.BatchNorm2d(4), X4, train=True),
    case("BatchNorm2d-eval", lambda nn: nn.BatchNorm2d(4), X4),
    case("BatchNorm2d-no_affine_train", lambda nn: nn.BatchNorm2d(4, affine=False), X4, train=True),
    case("BatchNorm2d-no_running_stats_eval", lambda nn: nn.BatchNorm2d(4, track_running_stats=False), X4),
    case("BatchNorm2d-no_bias_train", lambda nn: nn.BatchNorm2d(4, bias=False), X4, train=True),
    case("BatchNorm2d-eps_0.1_train", lambda nn: nn.BatchNorm2d(4, eps=0.1), X4, train=True),
    case("LayerNorm-last_dim", lambda nn: nn.LayerNorm(5), randn(3, 4, 5)),
    case("LayerNorm-last_two_dims", lambda nn: nn.LayerNorm((4, 5)), randn(3, 4, 5)),
    case("LayerNorm-no_affine", lambda nn: nn.LayerNorm(5, elementwise_affine=False), randn(3, 5)),
    case("LayerNorm-no_bias", lambda nn: nn.LayerNorm(5, bias=False), randn(3, 5)),
    case("GroupNorm-2_groups", lambda nn: nn.GroupNorm(2, 4), X4),
    case("GroupNorm-per_channel", lambda nn: nn.GroupNorm(4, 4), X4),
    case("GroupNorm-no_bias", lambda nn: nn.GroupNorm(2, 4, bias=False), X4),
    case("GroupNorm-no_affine_3d", lambda nn: nn.GroupNorm(3, 6, affine=False), randn(2, 6, 5)),
    # ---- dropout (eval: identity) and embedding ----
    case("Dropout-eval", lambda nn: nn.Dropout(0.5), randn(4, 5)),
    case("Embedding-basic", lambda nn: nn.Embedding(10, 4), randint(10, (3, 5))),
    case("Embedding-repeated_indices", lambda nn: nn.Embedding(5, 3), np.array([[0, 1, 1], [4, 1, 0]])),
    case("Embedding-padding_idx", lambda nn: nn.Embedding(10, 4, padding_idx=2),
         np.array([[2, 1, 2], [3, 2, 9]])),
    case("Embedding-negative_padding_idx", lambda nn: nn.Embedding(10, 4, padding_idx=-1),
         np.array([[9, 1, 9], [3, 2, 9]])),
    # ---- activations ----
    case("ReLU", lambda nn: nn.ReLU(), randn(4, 5)),
    case("LeakyReLU-default", lambda nn: nn.LeakyReLU(), randn(4, 5)),
    case("LeakyReLU-0.2", lambda nn: nn.LeakyReLU(0.2), randn(4, 5)),
    case("GELU-none", lambda nn: nn.GELU(), randn(4, 5)),
    case("GELU-tanh", lambda nn: nn.GELU("tanh"), randn(4, 5)),
    case("SiLU", lambda nn: nn.SiLU(), randn(4, 5)),
    case("Tanh", lambda nn: nn.Tanh(), randn(4, 5)),
    case("Sigmoid", lambda nn: nn.Sigmoid(), randn(4, 5)),
    case("Softmax-dim1", lambda nn: nn.Softmax(dim=1), randn(4, 5)),
    case("Softmax-dim0", lambda nn: nn.Softmax(dim=0), randn(4, 5)),
    case("Softmax-dim_neg1_3d", lambda nn: nn.Softmax(dim=-1), randn(2, 4, 5)),
    case("LogSoftmax-dim1", lambda nn: nn.LogSoftmax(dim=1), randn(4, 5)),
    case("LogSoftmax-dim_neg1_3d", lambda nn: nn.LogSoftmax(dim=-1), randn(2, 4, 5)),
    # ---- containers ----
    case("Sequential-mlp", lambda nn: nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)), randn(4, 5)),
    case("Sequential-cnn",
         lambda nn: nn.Sequential(nn.Conv2d(4, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Flatten(), nn.Linear(3 * 4 * 4, 2)), X4, rtol=1e-4, atol=3e-5),
]


@pytest.mark.parametrize("make, args, kwargs, rtol, atol, train", MODULE_CASES)
def test_module_matches_torch(make, args, kwargs, rtol, atol, train):
    compare_module(make, args, kwargs, rtol=rtol, atol=atol, train=train)


# ---------------------------------------------------------------------------------------------
# Non-contiguous inputs and float64


@pytest.mark.parametrize("make, x, train", [
    pytest.param(lambda nn: nn.Linear(5, 4), randn(3, 5), False, id="Linear"),
    pytest.param(lambda nn: nn.Conv2d(4, 6, 3, padding=1), X4, False, id="Conv2d"),
    pytest.param(lambda nn: nn.Conv1d(4, 6, 3, stride=2), X3, False, id="Conv1d"),
    pytest.param(lambda nn: nn.ConvTranspose2d(4, 3, 3, stride=2), X4, False, id="ConvTranspose2d"),
    pytest.param(lambda nn: nn.MaxPool2d(3, stride=2, padding=1), X4, False, id="MaxPool2d"),
    pytest.param(lambda nn: nn.AvgPool2d(2), X4, False, id="AvgPool2d"),
    pytest.param(lambda nn: nn.AdaptiveAvgPool2d(3), X4, False, id="AdaptiveAvgPool2d"),
    pytest.param(lambda nn: nn.BatchNorm2d(4), X4, True, id="BatchNorm2d-train"),
    pytest.param(lambda nn: nn.BatchNorm1d(5), randn(4, 5, 6), True, id="BatchNorm1d-3d_train"),
    pytest.param(lambda nn: nn.LayerNorm(6), randn(3, 4, 6), False, id="LayerNorm"),
    pytest.param(lambda nn: nn.GroupNorm(2, 4), X4, False, id="GroupNorm"),
    pytest.param(lambda nn: nn.Softmax(dim=-1), randn(3, 4, 6), False, id="Softmax"),
    pytest.param(lambda nn: nn.LogSoftmax(dim=1), randn(3, 4, 6), False, id="LogSoftmax"),
    pytest.param(lambda nn: nn.GELU(), randn(4, 6), False, id="GELU"),
    pytest.param(lambda nn: nn.Flatten(), X4, False, id="Flatten"),
    pytest.param(lambda nn: nn.MultiheadAttention(8, 2, batch_first=True), randn(3, 5, 8), False,
                 id="MultiheadAttention"),
])
def test_module_on_non_contiguous_input(make, x, train):
    """The input is a transposed view (not contiguous); results and gradients still match torch's."""
    args = [Transposed(x)] * (3 if "MultiheadAttention" in repr(make(torch.nn)) else 1)
    compare_module(make, args, train=train, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("make, x, train", [
    pytest.param(lambda nn: nn.Linear(5, 4), randn(3, 5), False, id="Linear"),
    pytest.param(lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), X4, False, id="Conv2d"),
    pytest.param(lambda nn: nn.ConvTranspose2d(4, 3, 3, stride=2), X4, False, id="ConvTranspose2d"),
    pytest.param(lambda nn: nn.BatchNorm2d(4), X4, True, id="BatchNorm2d-train"),
    pytest.param(lambda nn: nn.LayerNorm(9), X4, False, id="LayerNorm"),
    pytest.param(lambda nn: nn.GroupNorm(2, 4), X4, False, id="GroupNorm"),
    pytest.param(lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), X4, False, id="AvgPool2d"),
    pytest.param(lambda nn: nn.Embedding(10, 4), randint(10, (3, 5)), False, id="Embedding"),
    pytest.param(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), randn(5, 3, 8), False,
                 id="TransformerEncoderLayer"),
])
def test_module_in_float64(make, x, train):
    """Module.to(float64) and float64 inputs: results and gradients to float64 accuracy."""
    torch_module, tp_module = compare_module(make, [x], train=train, rtol=1e-9, atol=1e-11, dtype=torch.float64)
    assert all(p.dtype == tensorplay.float64 for p in tp_module.parameters())


# ---------------------------------------------------------------------------------------------
# bfloat16


@pytest.mark.parametrize("make, x", [
    pytest.param(lambda nn: nn.Linear(16, 8), randn(4, 16), id="Linear"),
    pytest.param(lambda nn: nn.Conv2d(4, 6, 3, padding=1), X4, id="Conv2d"),
])
def test_bfloat16_module_matches_torch(make, x):
    """Weights and input converted to bfloat16 in both: outputs and gradients within bfloat16 accuracy."""
    torch_module, tp_module = compare_module(make, [x], rtol=3e-2, atol=3e-2, dtype=torch.bfloat16)
    assert tp_module.weight.dtype == tensorplay.bfloat16
    assert tp_module.weight.grad.dtype == tensorplay.bfloat16


# ---------------------------------------------------------------------------------------------
# BatchNorm running statistics


def _batchnorm_pair(make):
    torch_bn, tp_bn = make(torch.nn), make(tensorplay.nn)
    copy_state(torch_bn, tp_bn)
    return torch_bn, tp_bn


def _assert_buffers_match(torch_bn, tp_bn, step):
    tp_buffers = dict(tp_bn.named_buffers())
    assert list(tp_buffers) == [name for name, _ in torch_bn.named_buffers()]
    for name, value in torch_bn.named_buffers():
        assert_same(tp_buffers[name], value, rtol=1e-5, atol=1e-6, what=f"{name} after batch {step}")


@pytest.mark.parametrize("make, shape", [
    pytest.param(lambda nn: nn.BatchNorm1d(3), (16, 3), id="BatchNorm1d-momentum_0.1"),
    pytest.param(lambda nn: nn.BatchNorm1d(3, momentum=0.5), (4, 3, 5), id="BatchNorm1d-3d-momentum_0.5"),
    pytest.param(lambda nn: nn.BatchNorm1d(3, momentum=None), (16, 3), id="BatchNorm1d-momentum_None"),
    pytest.param(lambda nn: nn.BatchNorm2d(3), (4, 3, 5, 5), id="BatchNorm2d-momentum_0.1"),
    pytest.param(lambda nn: nn.BatchNorm2d(3, momentum=None), (4, 3, 5, 5), id="BatchNorm2d-momentum_None"),
    pytest.param(lambda nn: nn.BatchNorm2d(3, affine=False, momentum=0.3), (4, 3, 5, 5), id="BatchNorm2d-no_affine"),
])
def test_batchnorm_running_stats_updated_in_train_and_used_in_eval(make, shape):
    torch_bn, tp_bn = _batchnorm_pair(make)
    rng = np.random.default_rng(0)
    for step in range(4):
        # Shifted, scaled batches so that the running statistics move visibly.
        x = (rng.standard_normal(shape) * (1 + step) + step).astype(np.float32)
        out_t = torch_bn(torch.from_numpy(x))
        out_p = tp_bn(tp_tensor(x))
        assert_same(out_p, out_t, rtol=1e-4, atol=1e-5, what=f"train output of batch {step}")
        _assert_buffers_match(torch_bn, tp_bn, step)
    assert int(tp_bn.num_batches_tracked.item()) == 4
    assert not np.allclose(to_numpy(tp_bn.running_mean), 0.0)

    torch_bn.eval()
    tp_bn.eval()
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    before = {name: to_numpy(b) for name, b in tp_bn.named_buffers()}
    out_t = torch_bn(torch.from_numpy(x))
    out_p = tp_bn(tp_tensor(x))
    assert_same(out_p, out_t, rtol=1e-4, atol=1e-5, what="eval output (normalised with the running statistics)")
    for name, b in tp_bn.named_buffers():
        np.testing.assert_array_equal(to_numpy(b), before[name], err_msg=f"{name} changed in eval mode")


def test_batchnorm_eval_uses_running_stats_not_batch_stats():
    """With running_mean=m and running_var=v set by hand, eval output is exactly (x - m) / sqrt(v + eps)."""
    bn = tensorplay.nn.BatchNorm1d(2).eval()
    with tensorplay.no_grad():
        bn.running_mean.copy_(tensorplay.tensor([1.0, -2.0]))
        bn.running_var.copy_(tensorplay.tensor([4.0, 0.25]))
    x = np.array([[3.0, -1.0], [5.0, -2.5]], dtype=np.float32)
    got = to_numpy(bn(tp_tensor(x)))
    want = (x - np.array([1.0, -2.0])) / np.sqrt(np.array([4.0, 0.25]) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_batchnorm_without_running_stats_has_no_buffers_and_uses_batch_stats_in_eval():
    torch_bn, tp_bn = _batchnorm_pair(lambda nn: nn.BatchNorm1d(3, track_running_stats=False))
    assert tp_bn.running_mean is None and tp_bn.running_var is None and tp_bn.num_batches_tracked is None
    assert list(tp_bn.state_dict()) == list(torch_bn.state_dict())
    x = randn(6, 3, seed=4) * 2 + 1
    for mode in (True, False):
        torch_bn.train(mode)
        tp_bn.train(mode)
        assert_same(tp_bn(tp_tensor(x)), torch_bn(torch.from_numpy(x)), what=f"output with training={mode}")


def test_batchnorm_rejects_wrong_input_rank_like_torch():
    x = randn(2, 3, 4, 4)
    with pytest.raises(ValueError):
        torch.nn.BatchNorm1d(3)(torch.from_numpy(x))
    with pytest.raises(ValueError):
        tensorplay.nn.BatchNorm1d(3)(tp_tensor(x))


# ---------------------------------------------------------------------------------------------
# Dropout


def test_dropout_is_identity_in_eval():
    x = randn(50, 40)
    drop = tensorplay.nn.Dropout(0.7).eval()
    xp = tp_tensor(x, requires_grad=True)
    out = drop(xp)
    np.testing.assert_array_equal(to_numpy(out), x)
    out.sum().backward()
    np.testing.assert_array_equal(to_numpy(xp.grad), np.ones_like(x))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_in_train_zeroes_about_p_and_scales_the_rest(p):
    tensorplay.manual_seed(0)
    x = np.random.default_rng(1).uniform(1.0, 2.0, size=(400, 500)).astype(np.float32)  # no zeros in x
    xp = tp_tensor(x, requires_grad=True)
    drop = tensorplay.nn.Dropout(p)
    assert drop.training
    out = drop(xp)
    got = to_numpy(out)
    zeros = got == 0
    assert abs(zeros.mean() - p) < 0.01, f"zero fraction {zeros.mean():.4f}, expected about {p}"
    np.testing.assert_allclose(got[~zeros], x[~zeros] / (1 - p), rtol=1e-6)
    out.sum().backward()
    grad = to_numpy(xp.grad)
    np.testing.assert_allclose(grad[~zeros], 1 / (1 - p), rtol=1e-6)
    np.testing.assert_array_equal(grad[zeros], 0.0)


def test_dropout_masks_differ_between_calls_and_follow_the_seed():
    x = tp_tensor(np.ones((100, 100), dtype=np.float32))
    tensorplay.manual_seed(5)
    first = to_numpy(tensorplay.nn.functional.dropout(x, 0.5))
    second = to_numpy(tensorplay.nn.functional.dropout(x, 0.5))
    tensorplay.manual_seed(5)
    again = to_numpy(tensorplay.nn.functional.dropout(x, 0.5))
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize("p, expected", [pytest.param(0.0, "identity", id="p0"), pytest.param(1.0, "zeros", id="p1")])
def test_dropout_extreme_probabilities(p, expected):
    x = randn(30, 30) + 5
    torch_out = torch.nn.functional.dropout(torch.from_numpy(x), p, training=True)
    out = tensorplay.nn.functional.dropout(tp_tensor(x), p, training=True)
    assert_same(out, torch_out, what=expected)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_invalid_probability(p):
    with pytest.raises(ValueError):
        torch.nn.Dropout(p)
    with pytest.raises(ValueError):
        tensorplay.nn.Dropout(p)
    with pytest.raises(ValueError):
        tensorplay.nn.functional.dropout(tp_tensor(randn(3)), p)


def test_dropout_inplace_modifies_input():
    tensorplay.manual_seed(0)
    x = tp_tensor(np.ones((50, 50), dtype=np.float32))
    out = tensorplay.nn.Dropout(0.5, inplace=True)(x)
    np.testing.assert_array_equal(to_numpy(x), to_numpy(out))
    assert (to_numpy(x) == 0).any()


# ---------------------------------------------------------------------------------------------
# Embedding


def test_embedding_padding_idx_row_gets_no_gradient_and_starts_at_zero():
    torch_emb, tp_emb = compare_module(lambda nn: nn.Embedding(6, 3, padding_idx=1),
                                       [np.array([[1, 0, 1], [5, 1, 1]])])
    np.testing.assert_array_equal(to_numpy(tp_emb.weight.grad)[1], np.zeros(3, dtype=np.float32))
    fresh = tensorplay.nn.Embedding(6, 3, padding_idx=1)
    np.testing.assert_array_equal(to_numpy(fresh.weight)[1], np.zeros(3, dtype=np.float32))
    assert fresh.padding_idx == torch.nn.Embedding(6, 3, padding_idx=1).padding_idx


def test_embedding_negative_padding_idx_is_normalised_like_torch():
    want = torch.nn.Embedding(10, 2, padding_idx=-2).padding_idx
    assert tensorplay.nn.Embedding(10, 2, padding_idx=-2).padding_idx == want == 8


def test_embedding_padding_idx_out_of_range_raises_like_torch():
    with pytest.raises(AssertionError):
        torch.nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(AssertionError):
        tensorplay.nn.Embedding(5, 2, padding_idx=5)


def test_embedding_from_pretrained():
    weights = randn(4, 3)
    for freeze in (True, False):
        t = torch.nn.Embedding.from_pretrained(torch.from_numpy(weights), freeze=freeze)
        p = tensorplay.nn.Embedding.from_pretrained(tp_tensor(weights), freeze=freeze)
        assert p.weight.requires_grad == t.weight.requires_grad
        idx = np.array([3, 0, 3])
        assert_same(p(tp_tensor(idx)), t(torch.from_numpy(idx)))


# ---------------------------------------------------------------------------------------------
# MultiheadAttention


E, H, L, S, N = 8, 2, 5, 6, 3


def _bool_mask(shape, seed):
    mask = np.random.default_rng(seed).random(shape) < 0.3
    mask[..., 0] = False  # every query keeps at least one key, so no row is all -inf
    return mask


CAUSAL = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
KEY_PADDING = torch.from_numpy(np.array([[False] * S, [False] * (S - 2) + [True] * 2, [False] * (S - 1) + [True]]))
KEY_PADDING_SELF = KEY_PADDING[:, :L]


def mha_case(id, make, q, k, v, **kwargs):
    return pytest.param(make, [q, k, v], kwargs, id=id)


Q_SEQ, K_SEQ, V_SEQ = randn(L, N, E, seed=1), randn(S, N, E, seed=2), randn(S, N, E, seed=3)
Q_BF, K_BF, V_BF = (a.transpose(1, 0, 2).copy() for a in (Q_SEQ, K_SEQ, V_SEQ))

MHA_CASES = [
    mha_case("self_attention-seq_first", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, Q_SEQ, Q_SEQ),
    mha_case("cross_attention-seq_first", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ),
    mha_case("cross_attention-batch_first", lambda nn: nn.MultiheadAttention(E, H, batch_first=True), Q_BF, K_BF,
             V_BF),
    mha_case("one_head", lambda nn: nn.MultiheadAttention(E, 1), Q_SEQ, K_SEQ, V_SEQ),
    mha_case("no_bias", lambda nn: nn.MultiheadAttention(E, H, bias=False), Q_SEQ, K_SEQ, V_SEQ),
    mha_case("key_padding_mask-seq_first", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ,
             key_padding_mask=KEY_PADDING),
    mha_case("key_padding_mask-batch_first", lambda nn: nn.MultiheadAttention(E, H, batch_first=True), Q_BF, K_BF,
             V_BF, key_padding_mask=KEY_PADDING),
    mha_case("float_key_padding_mask", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ,
             key_padding_mask=torch.from_numpy(randn(N, S, seed=9))),
    mha_case("attn_mask_bool_2d", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ,
             attn_mask=torch.from_numpy(_bool_mask((L, S), 4))),
    mha_case("attn_mask_float_2d", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ,
             attn_mask=torch.from_numpy(randn(L, S, seed=5))),
    mha_case("attn_mask_bool_3d_per_head", lambda nn: nn.MultiheadAttention(E, H, batch_first=True), Q_BF, K_BF, V_BF,
             attn_mask=torch.from_numpy(_bool_mask((N * H, L, S), 6))),
    mha_case("attn_mask_and_key_padding_mask", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ,
             attn_mask=torch.from_numpy(_bool_mask((L, S), 7)), key_padding_mask=KEY_PADDING),
    mha_case("causal_mask_with_is_causal", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, Q_SEQ, Q_SEQ,
             attn_mask=CAUSAL, is_causal=True),
    mha_case("causal_mask_need_weights_False", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, Q_SEQ, Q_SEQ,
             attn_mask=CAUSAL, need_weights=False),
    mha_case("per_head_weights", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ,
             average_attn_weights=False),
    mha_case("need_weights_False", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ, K_SEQ, V_SEQ, need_weights=False),
    mha_case("unbatched", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ[:, 0], K_SEQ[:, 0], V_SEQ[:, 0]),
    mha_case("unbatched_key_padding_mask", lambda nn: nn.MultiheadAttention(E, H), Q_SEQ[:, 0], K_SEQ[:, 0],
             V_SEQ[:, 0], key_padding_mask=KEY_PADDING[1]),
]


@pytest.mark.parametrize("make, args, kwargs", MHA_CASES)
def test_multihead_attention_matches_torch(make, args, kwargs):
    """Output and attention weights, and the gradients of query/key/value and all projections."""
    compare_module(make, args, kwargs, rtol=1e-4, atol=2e-5)


def test_multihead_attention_is_causal_without_mask_raises_like_torch():
    x = Q_SEQ
    with pytest.raises(RuntimeError):
        torch.nn.MultiheadAttention(E, H)(*[torch.from_numpy(x)] * 3, is_causal=True)
    with pytest.raises(RuntimeError):
        tensorplay.nn.MultiheadAttention(E, H)(*[tp_tensor(x)] * 3, is_causal=True)


def test_multihead_attention_parameter_layout_matches_torch():
    t, p = torch.nn.MultiheadAttention(E, H), tensorplay.nn.MultiheadAttention(E, H)
    assert [(n, tuple(v.shape)) for n, v in p.named_parameters()] == [(n, tuple(v.shape)) for n, v in
                                                                      t.named_parameters()]
    assert (p.embed_dim, p.num_heads, p.head_dim, p.batch_first) == (t.embed_dim, t.num_heads, t.head_dim,
                                                                       t.batch_first)


def test_multihead_attention_dropout_only_in_train():
    """With dropout=0.5 the eval output equals torch's (no dropout), the train output differs from it."""
    make = lambda nn: nn.MultiheadAttention(E, H, dropout=0.5)  # noqa: E731
    torch_m, tp_m = compare_module(make, [Q_SEQ, K_SEQ, V_SEQ], train=False, rtol=1e-4, atol=2e-5)
    tp_m.train()
    tensorplay.manual_seed(0)
    out, _ = tp_m(tp_tensor(Q_SEQ), tp_tensor(K_SEQ), tp_tensor(V_SEQ))
    eval_out, _ = torch_m(torch.from_numpy(Q_SEQ), torch.from_numpy(K_SEQ), torch.from_numpy(V_SEQ))
    assert not np.allclose(to_numpy(out), to_numpy(eval_out), atol=1e-3)


# ---------------------------------------------------------------------------------------------
# TransformerEncoderLayer (dropout=0 so that train mode is deterministic)


D_MODEL, FF = 8, 16
SRC_SEQ = randn(L, N, D_MODEL, seed=11)
SRC_BF = SRC_SEQ.transpose(1, 0, 2).copy()


def encoder(norm_first, batch_first, activation="relu"):
    return lambda nn: nn.TransformerEncoderLayer(D_MODEL, H, dim_feedforward=FF, dropout=0.0, activation=activation,
                                                 norm_first=norm_first, batch_first=batch_first)


ENCODER_CASES = [
    pytest.param(encoder(False, False), SRC_SEQ, {}, id="post_norm-seq_first"),
    pytest.param(encoder(True, False), SRC_SEQ, {}, id="norm_first-seq_first"),
    pytest.param(encoder(False, True), SRC_BF, {}, id="post_norm-batch_first"),
    pytest.param(encoder(True, True), SRC_BF, {}, id="norm_first-batch_first"),
    pytest.param(encoder(False, False, "gelu"), SRC_SEQ, {}, id="gelu"),
    pytest.param(encoder(False, False), SRC_SEQ, {"src_mask": CAUSAL}, id="src_mask_bool"),
    pytest.param(encoder(True, True), SRC_BF, {"src_mask": CAUSAL, "is_causal": True}, id="causal-norm_first"),
    pytest.param(encoder(False, True), SRC_BF, {"src_key_padding_mask": KEY_PADDING_SELF},
                 id="key_padding_mask-batch_first"),
    pytest.param(encoder(True, False), SRC_SEQ, {"src_mask": torch.from_numpy(randn(L, L, seed=12))},
                 id="float_src_mask-norm_first"),
]


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("make, src, kwargs", ENCODER_CASES)
def test_transformer_encoder_layer_matches_torch(make, src, kwargs, train):
    compare_module(make, [src], kwargs, rtol=1e-4, atol=3e-5, train=train)


def test_transformer_encoder_layer_submodules_match_torch():
    t, p = encoder(True, False)(torch.nn), encoder(True, False)(tensorplay.nn)
    assert [n for n, _ in p.named_modules()] == [n for n, _ in t.named_modules()]
    assert list(p.state_dict()) == list(t.state_dict())


# ---------------------------------------------------------------------------------------------
# Recurrent cells: the LSTM's (h, c) state, unrolled steps, and bad input


def test_lstm_cell_with_state_unrolled_matches_torch():
    """Three steps of an LSTMCell carrying (h, c): outputs and every gradient agree with torch."""
    torch_cell, tp_cell = torch.nn.LSTMCell(5, 4), tensorplay.nn.LSTMCell(5, 4)
    copy_state(torch_cell, tp_cell)
    xs = [randn(2, 5, seed=s) for s in range(3)]
    h0, c0 = randn(2, 4, seed=7), randn(2, 4, seed=8)
    results = []
    for lib, cell in ((torch, torch_cell), (tensorplay, tp_cell)):
        state = (lib.tensor(h0, requires_grad=True), lib.tensor(c0, requires_grad=True))
        h, c = state
        for x in xs:
            h, c = cell(lib.tensor(x), (h, c))
        (h.sum() + 2 * c.sum()).backward()
        results.append((h, c, state[0].grad, state[1].grad, cell.weight_ih.grad, cell.bias_hh.grad))
    for want, got in zip(*results):
        assert_same(got, want, 1e-4, 1e-5)


@pytest.mark.parametrize("make, args, error", [
    pytest.param(lambda nn: nn.RNNCell(5, 4), [randn(2, 3, 5)], ValueError, id="3d_input"),
    pytest.param(lambda nn: nn.GRUCell(5, 4), [randn(3, 6)], RuntimeError, id="input_size"),
    pytest.param(lambda nn: nn.GRUCell(5, 4), [randn(3, 5), randn(2, 4)], RuntimeError, id="batch_mismatch"),
    pytest.param(lambda nn: nn.RNNCell(5, 4), [randn(3, 5), randn(3, 3)], RuntimeError, id="hidden_size"),
    pytest.param(lambda nn: nn.RNNCell(5, 4, nonlinearity="gelu"), [randn(3, 5)], RuntimeError, id="nonlinearity"),
])
def test_recurrent_cells_reject_bad_input_like_torch(make, args, error):
    for lib in (torch, tensorplay):
        with pytest.raises(error):
            make(lib.nn)(*[lib.tensor(a) for a in args])

"""Normalization, dropout and 3-D convolution modules and functions against torch.

Modules are built twice from one factory (`make(torch.nn)`, `make(tensorplay.nn)`), torch's weights
are copied across, and outputs, input gradients and parameter gradients must agree
(test_module_matches_torch, ids `<Module>-<variant>`), in train and eval mode where the mode matters;
running statistics must follow torch's after training steps. The functional forms are compared on
values and gradients in float32 and float64 (their dtype sweep is in op_table_normalization.py).
The dropout forms are random: what is checked is the structure of the mask (whole channels for the
feature forms), the scaling of what is kept, the two values alpha dropout produces, and the identity
in eval mode.
"""

import math
import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_functional, compare_module, copy_state, same_outcome, to_numpy, tp_tensor


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def case(id, make, *args, rtol=1e-4, atol=1e-5, train=False, **kwargs):
    return pytest.param(make, list(args), kwargs, rtol, atol, train, id=id)


X5 = randn(2, 4, 4, 5, 4, seed=1)   # N, C, D, H, W
X4 = randn(2, 4, 6, 5, seed=2)
X3 = randn(3, 4, 7, seed=3)

MODULE_CASES = [
    # ---- 3-D convolution ----
    case("Conv3d-basic", lambda nn: nn.Conv3d(4, 6, 3), X5),
    case("Conv3d-stride_padding_dilation", lambda nn: nn.Conv3d(4, 3, (2, 3, 2), stride=(2, 1, 2), padding=(1, 2, 0),
                                                                dilation=(2, 1, 1)), X5),
    case("Conv3d-groups", lambda nn: nn.Conv3d(4, 6, 2, groups=2), X5),
    case("Conv3d-depthwise_same", lambda nn: nn.Conv3d(4, 4, (2, 3, 3), groups=4, padding="same"), X5),
    case("Conv3d-no_bias_valid", lambda nn: nn.Conv3d(4, 2, 3, padding="valid", bias=False), X5),
    case("Conv3d-unbatched", lambda nn: nn.Conv3d(4, 3, 2), X5[0]),
    case("Conv3d-reflect", lambda nn: nn.Conv3d(4, 3, 3, padding=1, padding_mode="reflect"), X5),
    case("Conv3d-replicate", lambda nn: nn.Conv3d(4, 3, 3, padding=(0, 1, 2), padding_mode="replicate"), X5),
    case("Conv3d-circular_same", lambda nn: nn.Conv3d(4, 3, (2, 3, 2), padding="same", padding_mode="circular"), X5),
    case("Conv2d-reflect", lambda nn: nn.Conv2d(4, 3, 3, padding=1, padding_mode="reflect"), X4),
    case("Conv1d-circular", lambda nn: nn.Conv1d(4, 3, 3, padding=2, padding_mode="circular"), X3),
    case("ConvTranspose3d-basic", lambda nn: nn.ConvTranspose3d(4, 3, 3), X5),
    case("ConvTranspose3d-stride_padding_output_padding",
         lambda nn: nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 3, 1), padding=(1, 0, 1), output_padding=(1, 2, 0),
                                       groups=2), X5),
    case("ConvTranspose3d-dilation_no_bias", lambda nn: nn.ConvTranspose3d(4, 2, 2, dilation=(3, 1, 2), bias=False),
         X5),
    case("ConvTranspose3d-output_size", lambda nn: nn.ConvTranspose3d(4, 3, 3, stride=2, padding=1), X5,
         output_size=[8, 10, 8]),
    case("ConvTranspose3d-unbatched", lambda nn: nn.ConvTranspose3d(4, 3, 2, stride=2), X5[0]),
    # ---- batch and instance norm ----
    case("BatchNorm3d-train", lambda nn: nn.BatchNorm3d(4), X5, train=True),
    case("BatchNorm3d-eval", lambda nn: nn.BatchNorm3d(4), X5),
    case("BatchNorm3d-no_affine_momentum_none_train", lambda nn: nn.BatchNorm3d(4, affine=False, momentum=None), X5,
         train=True),
    case("SyncBatchNorm-train", lambda nn: nn.SyncBatchNorm(4), X4, train=True),
    case("SyncBatchNorm-eval_2d_input", lambda nn: nn.SyncBatchNorm(4), randn(5, 4)),
    case("InstanceNorm1d-default", lambda nn: nn.InstanceNorm1d(4), X3),
    case("InstanceNorm1d-unbatched_affine", lambda nn: nn.InstanceNorm1d(4, affine=True), X3[0]),
    case("InstanceNorm2d-affine_train", lambda nn: nn.InstanceNorm2d(4, affine=True), X4, train=True),
    case("InstanceNorm2d-running_stats_train", lambda nn: nn.InstanceNorm2d(4, track_running_stats=True), X4,
         train=True),
    case("InstanceNorm2d-running_stats_eval", lambda nn: nn.InstanceNorm2d(4, affine=True, track_running_stats=True),
         X4),
    case("InstanceNorm3d-affine_no_bias", lambda nn: nn.InstanceNorm3d(4, affine=True, bias=False, eps=0.1), X5),
    case("InstanceNorm3d-unbatched", lambda nn: nn.InstanceNorm3d(4), X5[0]),
    # ---- other normalizations ----
    case("LocalResponseNorm-3d", lambda nn: nn.LocalResponseNorm(3), X3),
    case("LocalResponseNorm-4d_even_size", lambda nn: nn.LocalResponseNorm(2, alpha=0.5, beta=0.6, k=2.0), X4),
    case("LocalResponseNorm-5d", lambda nn: nn.LocalResponseNorm(5, alpha=0.3), X5),
    case("CrossMapLRN2d-size3", lambda nn: nn.CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=1.0), randn(2, 7, 3, 3)),
    case("CrossMapLRN2d-size4", lambda nn: nn.CrossMapLRN2d(4, alpha=1.0, beta=0.5, k=2.0), randn(2, 6, 2, 3)),
    case("CrossMapLRN2d-size5_few_channels", lambda nn: nn.CrossMapLRN2d(5, alpha=0.2), randn(1, 3, 2, 2)),
    case("RMSNorm-last_dim", lambda nn: nn.RMSNorm(5), randn(3, 4, 5)),
    case("RMSNorm-two_dims_eps", lambda nn: nn.RMSNorm((4, 5), eps=1e-2), randn(3, 4, 5)),
    case("RMSNorm-no_affine", lambda nn: nn.RMSNorm([5], elementwise_affine=False), randn(3, 5)),
]


def randomise_affine(torch_module):
    """Non-trivial affine parameters and running statistics, so that they matter in the comparison."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, tensor in torch_module.state_dict(keep_vars=True).items():
            if not tensor.is_floating_point():
                continue
            values = torch.rand(tensor.shape, generator=generator) + 0.5
            tensor.copy_(values if "var" in name or name.endswith("weight") and tensor.dim() == 1 else values - 1)


@pytest.mark.parametrize("make, args, kwargs, rtol, atol, train", MODULE_CASES)
def test_module_matches_torch(make, args, kwargs, rtol, atol, train):
    def randomised(nn):
        module = make(nn)
        if nn is torch.nn:
            randomise_affine(module)
        return module

    compare_module(randomised, args, kwargs, rtol=rtol, atol=atol, train=train)


@pytest.mark.parametrize("make, x", [
    (lambda nn: nn.Conv3d(4, 3, 2, stride=(1, 2, 1), padding=1), X5),
    (lambda nn: nn.ConvTranspose3d(4, 3, 2, stride=2), X5),
    (lambda nn: nn.InstanceNorm2d(4, affine=True), X4),
    (lambda nn: nn.RMSNorm(5), randn(3, 5)),
], ids=["Conv3d", "ConvTranspose3d", "InstanceNorm2d", "RMSNorm"])
def test_module_in_float64(make, x):
    compare_module(make, [x], rtol=1e-10, atol=1e-10, dtype=torch.float64)


@pytest.mark.parametrize("make", [
    lambda nn: nn.BatchNorm3d(4),
    lambda nn: nn.BatchNorm3d(4, momentum=None),
    lambda nn: nn.InstanceNorm3d(4, track_running_stats=True),
    lambda nn: nn.InstanceNorm3d(4, affine=True, track_running_stats=True, momentum=0.3),
    lambda nn: nn.SyncBatchNorm(4, momentum=None),
], ids=["BatchNorm3d", "BatchNorm3d-cumulative", "InstanceNorm3d", "InstanceNorm3d-momentum", "SyncBatchNorm"])
def test_running_stats_follow_torch_through_training_then_serve_eval(make):
    torch_module, tp_module = make(torch.nn), make(tensorplay.nn)
    copy_state(torch_module, tp_module)
    for seed in range(3):
        x = randn(3, 4, 3, 4, 2, seed=seed) * (seed + 1) + seed
        torch_module(torch.from_numpy(x))
        tp_module(tp_tensor(x))
    for name, buffer in torch_module.named_buffers():
        assert_same(dict(tp_module.named_buffers())[name], buffer, what=name)
    torch_module.eval()
    tp_module.eval()
    x = randn(2, 4, 3, 4, 2, seed=9)
    assert_same(tp_module(tp_tensor(x)), torch_module(torch.from_numpy(x)), what="eval output")


@pytest.mark.parametrize("make", [
    lambda nn: nn.BatchNorm3d(4), lambda nn: nn.InstanceNorm1d(4, affine=True, track_running_stats=True),
    lambda nn: nn.SyncBatchNorm(3, process_group=None, bias=False), lambda nn: nn.LocalResponseNorm(3),
    lambda nn: nn.CrossMapLRN2d(5, k=2), lambda nn: nn.RMSNorm((2, 3), eps=0.5),
    lambda nn: nn.Conv3d(2, 4, (1, 2, 3), stride=2, dilation=(1, 2, 1), groups=2, bias=False),
    lambda nn: nn.ConvTranspose3d(2, 4, 3, output_padding=(0, 1, 0), stride=2),
    lambda nn: nn.Dropout1d(0.2), lambda nn: nn.Dropout2d(), lambda nn: nn.Dropout3d(0.1, inplace=True),
    lambda nn: nn.AlphaDropout(0.3), lambda nn: nn.FeatureAlphaDropout(0.4),
])
def test_repr_and_state_dict_keys_match_torch(make):
    torch_module, tp_module = make(torch.nn), make(tensorplay.nn)
    assert repr(tp_module) == repr(torch_module)
    assert list(tp_module.state_dict()) == list(torch_module.state_dict())
    for name, value in torch_module.state_dict().items():
        assert tuple(tp_module.state_dict()[name].shape) == tuple(value.shape)


@pytest.mark.parametrize("base, x", [("Conv2d", X4), ("Conv3d", X5)])
def test_conv_forward_serves_subclasses_that_transform_the_weight(base, x):
    """Weight standardisation subclasses a convolution and calls torch's _conv_forward(input, weight, bias)."""
    def make(nn):
        class StandardisedConv(getattr(nn, base)):
            def forward(self, input):
                weight = self.weight - self.weight.mean(dim=(1, 2), keepdim=True)
                return self._conv_forward(input, weight, self.bias)

        return StandardisedConv(4, 3, 3, padding=1, padding_mode="replicate")

    compare_module(make, [x])


def test_convert_sync_batchnorm_replaces_batch_norms_and_shares_their_tensors():
    def make(nn):
        return nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4, momentum=0.2), nn.Sequential(nn.BatchNorm1d(4)))

    torch_model, tp_model = make(torch.nn), make(tensorplay.nn)
    tp_model[1].eval()
    torch_model[1].eval()
    original = tp_model[1]
    converted = tensorplay.nn.SyncBatchNorm.convert_sync_batchnorm(tp_model)
    torch_converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch_model)
    assert repr(converted) == repr(torch_converted)
    assert type(converted[1]) is tensorplay.nn.SyncBatchNorm and type(converted[2][0]) is tensorplay.nn.SyncBatchNorm
    assert converted[1].weight is original.weight and converted[1].running_mean is original.running_mean
    assert converted[1].training is False and converted[2][0].training is True
    single = tensorplay.nn.SyncBatchNorm.convert_sync_batchnorm(tensorplay.nn.BatchNorm3d(2))
    assert type(single) is tensorplay.nn.SyncBatchNorm


# ---------------------------------------------------------------------------------------------
# The functional forms: values and gradients.

FUNCTIONAL_CASES = [
    ("instance_norm", [randn(2, 3, 5)], {}),
    ("instance_norm", [randn(2, 3, 4, 3), None, None, randn(3, seed=1), randn(3, seed=2)], {"eps": 0.01}),
    ("local_response_norm", [randn(2, 5, 4), 3], {"alpha": 0.5}),
    ("local_response_norm", [randn(2, 6, 3, 2), 4], {"alpha": 0.3, "beta": 0.6, "k": 2.0}),
    ("rms_norm", [randn(3, 4), (4,), randn(4, seed=1)], {}),
    ("rms_norm", [randn(2, 3, 4), (3, 4)], {"eps": 0.1}),
    ("conv3d", [randn(2, 4, 4, 4, 5), randn(6, 2, 2, 3, 2, seed=1), randn(6, seed=2)],
     {"stride": (1, 2, 1), "padding": 1, "groups": 2}),
    ("conv_transpose3d", [randn(2, 4, 3, 3, 2), randn(4, 3, 2, 3, 2, seed=1), randn(6, seed=2)],
     {"stride": 2, "padding": (1, 0, 0), "output_padding": (1, 0, 1), "groups": 2, "dilation": (1, 2, 1)}),
    ("conv_tbc", [randn(6, 2, 3), randn(3, 3, 4, seed=1), randn(4, seed=2)], {"pad": 1}),
]


@pytest.mark.parametrize("name, args, kwargs", FUNCTIONAL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(FUNCTIONAL_CASES)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_functional_values_and_gradients_match_torch(name, args, kwargs, dtype):
    args = [a.astype(dtype) if isinstance(a, np.ndarray) else a for a in args]
    tol = (1e-4, 1e-5) if dtype == np.float32 else (1e-10, 1e-10)
    compare_functional(name, args, kwargs, *tol)


def test_instance_norm_updates_running_stats_as_the_batch_mean_of_the_instances():
    x = randn(3, 2, 6)
    stats = {}
    for m in (torch, tensorplay):
        mean, var = m.zeros(2), m.ones(2)
        convert = torch.from_numpy if m is torch else tp_tensor
        m.nn.functional.instance_norm(convert(x), mean, var, momentum=0.5)
        stats[m] = (mean, var)
    assert_same(stats[tensorplay][0], stats[torch][0])
    assert_same(stats[tensorplay][1], stats[torch][1])


def test_rms_norm_computes_reduced_floats_in_float32_and_keeps_the_input_dtype():
    x = randn(4, 8) * 1e-3
    w = randn(8, seed=1)
    for x_dtype, w_dtype in [("bfloat16", "float32"), ("float16", None), ("float32", "bfloat16"),
                             ("float32", "float64"), ("bfloat16", "bfloat16")]:
        t_args, p_args = [torch.from_numpy(x).to(getattr(torch, x_dtype))], [tp_tensor(x).to(getattr(tensorplay, x_dtype))]
        if w_dtype:
            t_args.append(torch.from_numpy(w).to(getattr(torch, w_dtype)))
            p_args.append(tp_tensor(w).to(getattr(tensorplay, w_dtype)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "Mismatch dtype between input and weight"
            want = torch.nn.functional.rms_norm(t_args[0], (8,), *t_args[1:])
        got = tensorplay.nn.functional.rms_norm(p_args[0], (8,), *p_args[1:])
        # The default eps is float32's for 16-bit input: with 1e-3 inputs a 16-bit eps would dominate.
        assert_same(got, want, rtol=1e-2, atol=1e-3, what=f"{x_dtype} input, {w_dtype} weight")


def test_local_response_norm_keeps_bfloat16_and_returns_empty_input():
    x = randn(2, 5, 4)
    want = torch.nn.functional.local_response_norm(torch.from_numpy(x).bfloat16(), 3)
    got = tensorplay.nn.functional.local_response_norm(tp_tensor(x).bfloat16(), 3)
    assert_same(got, want, rtol=2e-2, atol=1e-3)
    empty = tp_tensor(np.zeros((0, 3, 2), np.float32))
    assert tensorplay.nn.functional.local_response_norm(empty, 2) is empty


def test_cross_map_lrn2d_reproduces_torch_quirks_on_ones():
    """torch's running window never drops channel 0: from channel pre_pad on it counts twice over."""
    x = np.ones((1, 6, 1, 1), np.float32)
    want = torch.nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0, k=1.0)(torch.from_numpy(x))
    got = tensorplay.nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0, k=1.0)(tp_tensor(x))
    assert_same(got, want)
    np.testing.assert_allclose(1 / to_numpy(got).ravel(), [3, 4, 5, 5, 5, 4], rtol=1e-6)


def test_conv3d_in_bfloat16_matches_torch():
    compare_module(lambda nn: nn.Conv3d(4, 3, 2, padding=1), [X5 / 3], rtol=3e-2, atol=5e-2, dtype=torch.bfloat16)
    compare_module(lambda nn: nn.ConvTranspose3d(4, 3, 2, stride=2), [X5 / 3], rtol=3e-2, atol=5e-2,
                   dtype=torch.bfloat16)


@pytest.mark.parametrize("name, weight_shape", [("conv3d", (3, 4, 2, 2, 2)), ("conv_transpose3d", (4, 3, 2, 2, 2)),
                                                ("conv_tbc", (2, 4, 3))])
def test_3d_convolutions_run_in_the_autocast_dtype_like_torch(name, weight_shape):
    x = randn(5, 2, 4) if name == "conv_tbc" else X5
    args = [x, randn(*weight_shape, seed=1), randn(3, seed=2)]
    outputs = {}
    for m in (torch, tensorplay):
        with m.autocast("cpu", dtype=m.bfloat16):
            outputs[m] = getattr(m.nn.functional, name)(*[tensor_of(m, a) for a in args])
    assert_same(outputs[tensorplay], outputs[torch], rtol=3e-2, atol=1e-1)


def tensor_of(m, array):
    return torch.from_numpy(array) if m is torch else tp_tensor(array)


def test_conv3d_on_meta_gives_shapes():
    x = tensorplay.empty(2, 4, 5, 6, 7, device="meta")
    w = tensorplay.empty(3, 4, 2, 3, 3, device="meta")
    out = tensorplay.nn.functional.conv3d(x, w, stride=(2, 1, 1), padding=1)
    assert out.device.type == "meta" and tuple(out.shape) == (2, 3, 3, 6, 7)
    wt = tensorplay.empty(4, 3, 2, 3, 3, device="meta")
    out = tensorplay.nn.functional.conv_transpose3d(x, wt, stride=2, output_padding=1)
    assert tuple(out.shape) == (2, 3, 11, 14, 16)


# ---------------------------------------------------------------------------------------------
# Errors: the same exception class as torch.

ERROR_SCENARIOS = {
    "conv3d_2d_input": lambda m: m.nn.functional.conv3d(m.ones(2, 3), m.ones(1, 1, 1, 1, 1)),
    "conv3d_wrong_channels": lambda m: m.nn.functional.conv3d(m.ones(1, 2, 3, 3, 3), m.ones(1, 3, 1, 1, 1)),
    "conv3d_kernel_too_big": lambda m: m.nn.functional.conv3d(m.ones(1, 1, 2, 3, 3), m.ones(1, 1, 3, 1, 1)),
    "conv3d_same_strided": lambda m: m.nn.functional.conv3d(m.ones(1, 1, 3, 3, 3), m.ones(1, 1, 1, 1, 1),
                                                              stride=2, padding="same"),
    "conv2d_same_strided": lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 1, 1), stride=2,
                                                              padding="same"),
    "conv1d_bad_padding_string": lambda m: m.nn.functional.conv1d(m.ones(1, 1, 3), m.ones(1, 1, 1), padding="full"),
    "conv_transpose3d_2d_input": lambda m: m.nn.functional.conv_transpose3d(m.ones(2, 3), m.ones(1, 1, 1, 1, 1)),
    "conv_transpose3d_output_padding": lambda m: m.nn.functional.conv_transpose3d(
        m.ones(1, 1, 2, 2, 2), m.ones(1, 1, 1, 1, 1), output_padding=1),
    "conv_tbc_2d_input": lambda m: m.nn.functional.conv_tbc(m.ones(2, 3), m.ones(1, 3, 2), m.ones(2)),
    "Conv3d_bad_padding_mode": lambda m: m.nn.Conv3d(1, 1, 1, padding_mode="mirror"),
    "ConvTranspose3d_reflect": lambda m: m.nn.ConvTranspose3d(1, 1, 1, padding_mode="reflect"),
    "Conv3d_same_strided": lambda m: m.nn.Conv3d(1, 1, 3, stride=2, padding="same"),
    "BatchNorm3d_4d_input": lambda m: m.nn.BatchNorm3d(2)(m.ones(2, 2, 3, 3)),
    "SyncBatchNorm_1d_input": lambda m: m.nn.SyncBatchNorm(2)(m.ones(2)),
    "SyncBatchNorm_no_channels": lambda m: m.nn.SyncBatchNorm(2)(m.ones(2, 0)),
    "InstanceNorm2d_2d_input": lambda m: m.nn.InstanceNorm2d(2)(m.ones(2, 3)),
    "InstanceNorm1d_affine_channels": lambda m: m.nn.InstanceNorm1d(3, affine=True)(m.ones(2, 4, 5)),
    "instance_norm_one_spatial": lambda m: m.nn.functional.instance_norm(m.ones(2, 3, 1)),
    "instance_norm_eval_one_spatial": lambda m: m.nn.functional.instance_norm(
        m.ones(2, 3, 1), m.zeros(3), m.ones(3), use_input_stats=False).shape,
    "local_response_norm_2d": lambda m: m.nn.functional.local_response_norm(m.ones(2, 3), 2),
    "CrossMapLRN2d_3d": lambda m: m.nn.CrossMapLRN2d(3)(m.ones(2, 3, 4)),
    "rms_norm_int_shape": lambda m: m.nn.functional.rms_norm(m.ones(2, 3), 3),
    "rms_norm_shape_mismatch": lambda m: m.nn.functional.rms_norm(m.ones(2, 3), (2,)),
    "dropout1d_4d": lambda m: m.nn.functional.dropout1d(m.ones(2, 3, 4, 5)),
    "dropout2d_p": lambda m: m.nn.functional.dropout2d(m.ones(2, 3, 4), 1.5),
    "Dropout3d_p": lambda m: m.nn.Dropout3d(-0.1),
    "alpha_dropout_p": lambda m: m.nn.functional.alpha_dropout(m.ones(2), 2.0),
    "feature_alpha_dropout_1d": lambda m: m.nn.functional.feature_alpha_dropout(m.ones(3), 0.5, True),
    "feature_alpha_dropout_1d_eval": lambda m: m.nn.functional.feature_alpha_dropout(m.ones(3), 0.5, False).shape,
}


@pytest.mark.parametrize("name", list(ERROR_SCENARIOS))
def test_errors_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_outcome(ERROR_SCENARIOS[name])


# ---------------------------------------------------------------------------------------------
# Dropout: random, so the structure of the result is what is compared.

def channel_values(out, x, scale):
    """Per (sample, channel): True where the channel is kept (x * scale), False where zeroed, asserting one
    of the two holds for the whole channel."""
    out, x = to_numpy(out), to_numpy(x)
    flat_out = out.reshape(out.shape[0], out.shape[1], -1)
    flat_x = x.reshape(flat_out.shape)
    kept = np.all(np.isclose(flat_out, flat_x * scale, rtol=1e-6), axis=2)
    dropped = np.all(flat_out == 0, axis=2)
    assert np.all(kept | dropped), "a channel is neither kept whole nor dropped whole"
    return kept


@pytest.mark.parametrize("name, shape", [
    ("dropout1d", (16, 8, 5)), ("dropout2d", (16, 8, 3, 4)), ("dropout3d", (16, 8, 2, 3, 2)),
])
def test_feature_dropout_drops_whole_channels_and_scales_the_rest(name, shape):
    p = 0.4
    x = tp_tensor(np.abs(randn(*shape)) + 0.5, requires_grad=True)
    out = getattr(tensorplay.nn.functional, name)(x, p, True)
    kept = channel_values(out, x, 1 / (1 - p))
    assert 0.35 < kept.mean() < 0.85  # 128 channels kept with probability 0.6
    out.sum().backward()
    expected_grad = np.broadcast_to(kept.reshape(kept.shape + (1,) * (len(shape) - 2)) / (1 - p), shape)
    np.testing.assert_allclose(to_numpy(x.grad), expected_grad, rtol=1e-6)


@pytest.mark.parametrize("name, shape", [("dropout1d", (12, 5)), ("dropout3d", (12, 2, 3, 2))])
def test_feature_dropout_of_unbatched_input_drops_channels(name, shape):
    x = tp_tensor(np.abs(randn(*shape)) + 0.5)
    out = getattr(tensorplay.nn.functional, name)(x, 0.5, True)
    assert tuple(out.shape) == shape
    channel_values(out.unsqueeze(0), x.unsqueeze(0), 2.0)


def test_dropout2d_reads_3d_input_as_batched_1d_and_warns_like_torch():
    x = tp_tensor(np.abs(randn(10, 6, 5)) + 0.5)
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        out = tensorplay.nn.functional.dropout2d(x, 0.5, True)
    channel_values(out, x, 2.0)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        tensorplay.nn.functional.dropout2d(tp_tensor(randn(3, 4)), 0.5, False)


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_forms_are_identity_in_eval_and_for_p_0(name):
    x = tp_tensor(randn(2, 3, 4) if name == "dropout1d" else randn(2, 3, 4, 5))
    fn = getattr(tensorplay.nn.functional, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(to_numpy(fn(x, 0.5, False)), to_numpy(x))
        np.testing.assert_array_equal(to_numpy(fn(x, 0.0, True)), to_numpy(x))
        out = fn(x, 1.0, True)
    assert np.all(to_numpy(out) == 0)


def alpha_constants(p):
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    return a, alpha * a * p, alpha * a * (p - 1)  # scale, shift of kept values, value of dropped ones


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_affinely_or_sets_the_saturation_value(feature):
    p = 0.3
    x = randn(12, 10, 6)
    a, shift, dropped_value = alpha_constants(p)
    fn = "feature_alpha_dropout" if feature else "alpha_dropout"
    # torch's result takes the same two forms: the constants are torch's.
    for m, convert in ((torch, torch.from_numpy), (tensorplay, tp_tensor)):
        out = to_numpy(getattr(m.nn.functional, fn)(convert(x), p, True))
        kept = np.isclose(out, x * a + shift, rtol=1e-5, atol=1e-6)
        dropped = np.isclose(out, dropped_value, rtol=1e-6)
        assert np.all(kept | dropped), m.__name__
        assert 0.55 < kept.mean() < 0.85
        if feature:
            assert np.all(kept.all(axis=2) | dropped.all(axis=2)), "feature alpha dropout splits a channel"


def test_alpha_dropout_in_bfloat16_keeps_the_dtype_and_gradient_is_the_scale():
    out = tensorplay.nn.functional.alpha_dropout(tensorplay.ones(4, 5, dtype=tensorplay.bfloat16), 0.2, True)
    assert out.dtype == tensorplay.bfloat16
    x = tp_tensor(randn(50, 4), requires_grad=True)
    out = tensorplay.nn.functional.alpha_dropout(x, 0.2, True)
    out.sum().backward()
    a, shift, _ = alpha_constants(0.2)
    kept = np.isclose(to_numpy(out), to_numpy(x) * a + shift, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(x.grad), np.where(kept, a, 0.0), rtol=1e-6)


def test_inplace_dropout_forms_write_into_their_input():
    x = tp_tensor(np.abs(randn(6, 8, 3)) + 1)
    original = to_numpy(x)
    out = tensorplay.nn.functional.dropout1d(x, 0.5, True, inplace=True)
    assert out is x
    channel_values(x, tp_tensor(original), 2.0)
    y = tp_tensor(np.abs(randn(8, 3)) + 1)
    assert tensorplay.nn.functional.dropout1d(y, 0.5, True, inplace=True) is y
    z = tp_tensor(randn(6, 8))
    assert tensorplay.nn.functional.alpha_dropout(z, 0.5, True, inplace=True) is z


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.Dropout1d(0.5), (8, 6, 4)), (lambda nn: nn.Dropout2d(0.5), (8, 6, 3, 3)),
    (lambda nn: nn.Dropout3d(0.5), (8, 6, 2, 2, 2)), (lambda nn: nn.FeatureAlphaDropout(0.5), (8, 6, 2, 2)),
    (lambda nn: nn.AlphaDropout(0.5), (8, 6)),
], ids=["Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "AlphaDropout"])
def test_dropout_modules_act_in_train_and_are_identity_in_eval(make, shape):
    module = make(tensorplay.nn)
    x = tp_tensor(np.abs(randn(*shape)) + 0.5)
    assert not np.array_equal(to_numpy(module(x)), to_numpy(x))
    module.eval()
    np.testing.assert_array_equal(to_numpy(module(x)), to_numpy(x))

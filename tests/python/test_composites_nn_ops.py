"""tensorplay/_composites/nn_ops.py against torch, for what the op table cannot express: the torch-level
forms whose signature is nn.functional's, the random ones (dropout, rrelu in training), the in-place
forms (torch.abs_(x), x.addmm_(...)) and out=, the recurrent ops over flat weights, and the errors of
the argument bindings. The deterministic torch-level forms with their own signatures have rows in
op_table_nn_ops.py."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from tensorplay._composites import nn_ops


def pair(shape, low=-2.0, high=2.0, dtype=np.float32, seed=0):
    """The same values as a torch and a tensorplay tensor."""
    values = np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)
    return torch.tensor(values), tp.tensor(values)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    assert tuple(actual.shape) == tuple(expected.shape)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)


def raises_like(call_torch, call_tp):
    """Both raise the same exception type; tensorplay's message names what torch's names."""
    with pytest.raises(Exception) as expected:
        call_torch()
    with pytest.raises(type(expected.value)) as actual:
        call_tp()
    return str(expected.value), str(actual.value)


# ---------------------------------------------------------------------------------------------
# torch-level forms that share nn.functional's signature (no table rows of their own).

def same_signature_calls():
    x3, X3 = pair((2, 4, 6))
    x4, X4 = pair((1, 4, 4, 4))
    x5, X5 = pair((1, 2, 3, 4, 4))
    w1, W1 = pair((3, 4, 2), seed=1)
    w2, W2 = pair((3, 4, 2, 2), seed=2)
    w3, W3 = pair((2, 2, 2, 2, 2), seed=3)
    wt, WT = pair((4, 2, 3), seed=4)
    a, A = pair((3, 4), seed=5)
    b, B = pair((3, 5), seed=6)
    bw, BW = pair((2, 4, 5), seed=7)
    tbc, TBC = pair((3, 4, 2), seed=8)
    return {
        "conv1d": ((x3, w1), (X3, W1), {"stride": 2, "padding": 1}),
        "conv2d": ((x4, w2), (X4, W2), {"padding": "same"}),
        "conv3d": ((x5, w3), (X5, W3), {}),
        "conv_transpose1d": ((x3, wt), (X3, WT), {"stride": 2, "output_padding": 1}),
        "conv_transpose2d": ((x4, w2.transpose(0, 1).contiguous()), (X4, W2.transpose(0, 1).contiguous()), {}),
        "conv_transpose3d": ((x5, w3), (X5, W3), {}),
        "conv_tbc": ((x3.permute(2, 0, 1).contiguous(), tbc, torch.zeros(2)),
                     (X3.permute(2, 0, 1).contiguous(), TBC, tp.zeros(2)), {"pad": 1}),
        "bilinear": ((a, b, bw), (A, B, BW), {}),
        "pairwise_distance": ((a, a.flip(0)), (A, A.flip(0)), {"p": 1.0, "keepdim": True}),
        "pixel_shuffle": ((x4,), (X4,), {"upscale_factor": 2}),
        "pixel_unshuffle": ((x4,), (X4,), {"downscale_factor": 2}),
        "channel_shuffle": ((x4,), (X4,), {"groups": 2}),
        "adaptive_avg_pool1d": ((x3, 4), (X3, 4), {}),
        "rms_norm": ((x3, [6]), (X3, [6]), {"eps": 1e-3}),
        "celu": ((a, 0.5), (A, 0.5), {}),
        "selu": ((a,), (A,), {}),
        "threshold": ((a, 0.1, 20.0), (A, 0.1, 20.0), {}),
        "rrelu": ((a,), (A,), {"lower": 0.1, "upper": 0.3}),
    }


@pytest.mark.parametrize("name", sorted(same_signature_calls()))
def test_same_signature_forms_match_torch(name):
    torch_args, tp_args, kwargs = same_signature_calls()[name]
    assert_close(getattr(tp, name)(*tp_args, **kwargs), getattr(torch, name)(*torch_args, **kwargs), atol=1e-5)


def test_hardshrink_and_threshold_write_out():
    x, X = pair((3, 4))
    # threshold casts into an out of another floating dtype; hardshrink takes only its input's dtype
    for name, args, dtype in (("hardshrink", (0.7,), "float32"), ("threshold", (0.1, 5.0), "float64")):
        out, OUT = torch.empty(0, dtype=getattr(torch, dtype)), tp.empty(0, dtype=getattr(tp, dtype))
        assert getattr(tp, name)(X, *args, out=OUT) is OUT
        getattr(torch, name)(x, *args, out=out)
        assert_close(OUT, out)
        raises_like(lambda: getattr(torch, name)(x, *args, out=torch.empty(0, dtype=torch.long)),
                    lambda: getattr(tp, name)(X, *args, out=tp.empty(0, dtype=tp.long)))
    raises_like(lambda: torch.hardshrink(x, out=torch.empty(0, dtype=torch.float64)),
                lambda: tp.hardshrink(X, out=tp.empty(0, dtype=tp.float64)))


def test_tensor_methods():
    x, X = pair((2, 3, 4))
    w, W = pair((3,), seed=1)
    assert_close(X.hardshrink(1.0), x.hardshrink(1.0))
    assert_close(X.prelu(W), x.prelu(w))


# ---------------------------------------------------------------------------------------------
# Random ops: dropout in its forms, rrelu in training.

DROPOUTS = ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout")


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_forms_outside_training_and_at_the_ends(name):
    _, X = pair((4, 3, 5))
    assert getattr(tp, name)(X, 0.5, False) is X  # torch returns its input too
    assert getattr(tp, name)(X, 0.0, True) is X
    zeros = getattr(tp, name)(X, 1.0, True)
    expected = getattr(torch, name)(torch.tensor(X.numpy()), 1.0, True)
    assert_close(zeros, expected)


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_forms_in_place(name):
    _, X = pair((4, 3, 5))
    original = X.clone()
    tp.manual_seed(0)
    result = getattr(tp, name + "_")(X, 0.5, True)
    assert result is X
    tp.manual_seed(0)
    assert np.array_equal(getattr(tp, name)(original, 0.5, True).numpy(), X.numpy())


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_forms_keep_the_mean_and_share_a_mask_per_channel(name):
    tp.manual_seed(1)
    ones = tp.ones(64, 32, 16)
    out = getattr(tp, name)(ones, 0.3, True).numpy()
    torch.manual_seed(1)
    reference = getattr(torch, name)(torch.ones(64, 32, 16), 0.3, True).numpy()
    assert abs(out.mean() - reference.mean()) < 0.05
    assert sorted(np.unique(out.round(5))) == sorted(np.unique(reference.round(5)))
    if name.startswith("feature"):  # one draw per (sample, channel)
        assert (out == out[:, :, :1]).all()


@pytest.mark.parametrize("name", DROPOUTS + tuple(n + "_" for n in DROPOUTS))
def test_dropout_forms_refuse_what_torch_refuses(name):
    x, X = pair((3, 4))
    raises_like(lambda: getattr(torch, name)(x, 1.5, True), lambda: getattr(tp, name)(X, 1.5, True))
    raises_like(lambda: getattr(torch, name)(x, 0.5, 1), lambda: getattr(tp, name)(X, 0.5, 1))
    if name.startswith("feature"):
        y, Y = pair((3,))
        raises_like(lambda: getattr(torch, name)(y, 0.5, True), lambda: getattr(tp, name)(Y, 0.5, True))


def test_rrelu_in_training_draws_slopes_between_its_bounds():
    _, X = pair((50, 40), -2.0, -0.5)
    out = tp.rrelu(X, 0.1, 0.3, True).numpy()
    slopes = out / X.numpy()
    assert (slopes >= 0.1 - 1e-6).all() and (slopes <= 0.3 + 1e-6).all() and slopes.std() > 0.03
    original = X.clone()
    tp.manual_seed(3)
    assert tp.rrelu_(X, 0.1, 0.3, True) is X
    tp.manual_seed(3)
    assert np.array_equal(tp.rrelu(original, 0.1, 0.3, True).numpy(), X.numpy())


@pytest.mark.parametrize("name, args", [("celu_", (0.5,)), ("selu_", ()), ("threshold_", (0.1, 7.0)),
                                        ("rrelu_", (0.1, 0.3, False))])
def test_activation_in_place_functions(name, args):
    x, X = pair((3, 4))
    assert getattr(tp, name)(X, *args) is X
    getattr(torch, name)(x, *args)
    assert_close(X, x)


# ---------------------------------------------------------------------------------------------
# Embeddings.

def test_embedding_renorm_matches_torch():
    w, W = pair((6, 3), seed=2)
    indices = [0, 2, 2, 5]
    assert tp.embedding_renorm_(W, tp.tensor(indices), 1.0, 2.0) is W
    torch.embedding_renorm_(w, torch.tensor(indices), 1.0, 2.0)
    assert_close(W, w)


def test_embedding_padding_idx_gradients_match_torch():
    for padding_idx in (-1, -2, 3):
        w, W = pair((5, 3), seed=4)
        w.requires_grad_()
        W.requires_grad_()
        idx = [[0, 3, 3], [4, 3, 1]]
        torch.embedding(w, torch.tensor(idx), padding_idx, True).sum().backward()
        tp.embedding(W, tp.tensor(idx), padding_idx, True).sum().backward()
        assert_close(W.grad, w.grad)


# ---------------------------------------------------------------------------------------------
# ctc_loss: its reduction enum and both forms of the lengths.

@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("lengths_as_tensors", [False, True])
def test_ctc_loss_matches_torch_through_log_softmax(reduction, lengths_as_tensors):
    # torch's backward returns the gradient with respect to the logits under log_softmax, not the log
    # probabilities: the gradients are compared at the logits.
    logits, LOGITS = pair((6, 2, 4), dtype=np.float64)
    logits.requires_grad_()
    LOGITS.requires_grad_()
    targets = [[1, 2, 1], [3, 1, 0]]
    input_lengths, target_lengths = [6, 5], [3, 2]

    def call(m, x):
        lengths = (m.tensor(input_lengths), m.tensor(target_lengths)) if lengths_as_tensors else \
            (input_lengths, target_lengths)
        return m.ctc_loss(x.log_softmax(2), m.tensor(targets), *lengths, 0, reduction, False)

    expected, actual = call(torch, logits), call(tp, LOGITS)
    assert_close(actual, expected, atol=1e-6)
    expected.sum().backward()
    actual.sum().backward()
    assert_close(LOGITS.grad, logits.grad, atol=1e-6)


def test_ctc_loss_zero_infinity_and_errors():
    log_probs, LOG_PROBS = pair((6, 2, 4), -3.0, -0.1)
    targets = [[1, 2, 1], [3, 1, 0]]
    # an input shorter than its target has infinite loss
    assert_close(tp.ctc_loss(LOG_PROBS, tp.tensor(targets), [6, 2], [3, 2], 0, 0, True),
                 torch.ctc_loss(log_probs, torch.tensor(targets), [6, 2], [3, 2], 0, 0, True))
    raises_like(lambda: torch.ctc_loss(log_probs, torch.tensor(targets), [6.0, 2], [3, 2]),
                lambda: tp.ctc_loss(LOG_PROBS, tp.tensor(targets), [6.0, 2], [3, 2]))
    raises_like(lambda: torch.ctc_loss(log_probs, torch.tensor(targets), [6, 2], [3, 2], 0, "mean"),
                lambda: tp.ctc_loss(LOG_PROBS, tp.tensor(targets), [6, 2], [3, 2], 0, "mean"))


# ---------------------------------------------------------------------------------------------
# Recurrent ops over flat weights, against torch's with the weights of torch's modules.

def recurrent_case(mode, bidirectional, batch_first, bias=True, proj_size=0, layers=2):
    torch.manual_seed(0)
    kwargs = {"proj_size": proj_size} if proj_size else {}
    if mode.startswith("rnn"):
        kwargs["nonlinearity"] = mode.split("_")[1]
    module = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(mode, torch.nn.RNN)(
        3, 4, num_layers=layers, bias=bias, bidirectional=bidirectional, batch_first=batch_first, **kwargs)
    directions = 2 if bidirectional else 1
    x = torch.randn((2, 5, 3) if batch_first else (5, 2, 3))
    h = torch.randn(layers * directions, 2, proj_size or 4)
    hx = [h, torch.randn(layers * directions, 2, 4)] if mode == "lstm" else h
    params = [p.detach() for p in module._flat_weights]
    return x, hx, params


def to_tp(value):
    if isinstance(value, (list, tuple)):
        return [to_tp(v) for v in value]
    return tp.tensor(value.detach().numpy()).requires_grad_(value.requires_grad)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional, batch_first, bias", [(False, False, True), (True, True, False)])
def test_recurrent_ops_match_torch_with_gradients(mode, bidirectional, batch_first, bias):
    x, hx, params = recurrent_case(mode, bidirectional, batch_first, bias)
    for p in params:
        p.requires_grad_()
    x.requires_grad_()
    X, HX, PARAMS = to_tp(x), to_tp(hx), to_tp(params)
    expected = getattr(torch, mode)(x, hx, params, bias, 2, 0.0, False, bidirectional, batch_first)
    actual = getattr(tp, mode)(X, HX, PARAMS, bias, 2, 0.0, False, bidirectional, batch_first)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_close(a, e, atol=1e-5)
    sum(e.sum() for e in expected).backward()
    sum(a.sum() for a in actual).backward()
    for a, e in zip([X] + PARAMS, [x] + params):
        assert_close(a.grad, e.grad, rtol=1e-4, atol=1e-5)


def test_lstm_with_projections_matches_torch():
    x, hx, params = recurrent_case("lstm", True, False, proj_size=2)
    with pytest.warns(UserWarning):  # torch's oneDNN path does not do projections
        expected = torch.lstm(x, hx, params, True, 2, 0.0, False, True, False)
    actual = tp.lstm(to_tp(x), to_tp(hx), to_tp(params), True, 2, 0.0, False, True, False)
    for a, e in zip(actual, expected):
        assert_close(a, e, atol=1e-5)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_recurrent_ops_on_packed_data_match_torch(mode):
    _, hx, params = recurrent_case(mode, True, False, layers=1)
    data = torch.randn(6, 3)
    batch_sizes = torch.tensor([2, 2, 1, 1])
    hx = [h[:, :2] for h in hx] if mode == "lstm" else hx[:, :2]
    expected = getattr(torch, mode)(data, batch_sizes, hx, params, True, 1, 0.0, False, True)
    actual = getattr(tp, mode)(to_tp(data), tp.tensor([2, 2, 1, 1]), to_tp(hx), to_tp(params), True, 1, 0.0, False,
                               True)
    for a, e in zip(actual, expected):
        assert_close(a, e, atol=1e-5)


def test_recurrent_dropout_between_layers_in_training():
    x, hx, params = recurrent_case("gru", False, False)
    X, HX, PARAMS = to_tp(x), to_tp(hx), to_tp(params)
    evaluated = tp.gru(X, HX, PARAMS, True, 2, 0.9, False, False, False)[0]
    trained = tp.gru(X, HX, PARAMS, True, 2, 0.9, True, False, False)[0]
    assert tuple(trained.shape) == tuple(evaluated.shape)
    assert not np.allclose(trained.numpy(), evaluated.numpy())


def test_recurrent_ops_refuse_what_torch_refuses():
    x, hx, params = recurrent_case("gru", False, False)
    X, HX, PARAMS = to_tp(x), to_tp(hx), to_tp(params)
    # too few weights, a bad argument type, an extra argument, a 2-D input
    raises_like(lambda: torch.gru(x, hx, params[:3], True, 2, 0.0, False, False, False),
                lambda: tp.gru(X, HX, PARAMS[:3], True, 2, 0.0, False, False, False))
    raises_like(lambda: torch.gru(x, hx, params, True, 2.5, 0.0, False, False, False),
                lambda: tp.gru(X, HX, PARAMS, True, 2.5, 0.0, False, False, False))
    raises_like(lambda: torch.gru(x, hx, params, True, 2, 0.0, False, False, False, 1),
                lambda: tp.gru(X, HX, PARAMS, True, 2, 0.0, False, False, False, 1))
    raises_like(lambda: torch.gru(x[0], hx, params, True, 2, 0.0, False, False, False),
                lambda: tp.gru(X[0], HX, PARAMS, True, 2, 0.0, False, False, False))


# ---------------------------------------------------------------------------------------------
# Argument bindings: keyword arguments, types, arity.

def test_keyword_arguments():
    x, X = pair((2, 3, 4))
    t, T = pair((2, 3, 4), 0.1, 1.0, seed=1)
    assert_close(tp.kl_div(X, T, reduction=2, log_target=False), torch.kl_div(x, t, reduction=2, log_target=False))
    assert_close(tp.layer_norm(input=X, normalized_shape=[4], eps=0.1), torch.layer_norm(input=x, normalized_shape=[4],
                                                                                         eps=0.1))
    assert_close(tp.group_norm(X, num_groups=3, eps=0.5), torch.group_norm(x, num_groups=3, eps=0.5))
    assert_close(tp.norm_except_dim(X, dim=2, pow=3), torch.norm_except_dim(x, dim=2, pow=3))
    assert_close(tp.max_pool1d(X, kernel_size=2, stride=None), torch.max_pool1d(x, kernel_size=2, stride=None))
    assert_close(tp.constant_pad_nd(X, pad=[1, 1], value=2), torch.constant_pad_nd(x, pad=[1, 1], value=2))


@pytest.mark.parametrize("call", [
    lambda m, x: m.kl_div(x, x, "mean"),
    lambda m, x: m.kl_div(x, x, True),
    lambda m, x: m.kl_div(x),
    lambda m, x: m.kl_div(x, x, 1, 2),
    lambda m, x: m.batch_norm(x, None, None, None, None, 1, 0.1, 1e-5, False),
    lambda m, x: m.layer_norm(x, 4),
    lambda m, x: m.layer_norm(x, [4.0]),
    lambda m, x: m.group_norm(x, 2.0),
    lambda m, x: m.norm_except_dim(x, 2.5),
    lambda m, x: m.norm_except_dim(x, 2, 3),
    lambda m, x: m.convolution(x, x, None, 1, 0, 1, False, 0, 1),
    lambda m, x: m.constant_pad_nd(x, [1], "a"),
    lambda m, x: m.grid_sampler(x, x, 0.0, 0, False),
    lambda m, x: m.threshold(x, "a", 1),
    lambda m, x: m.celu(x, "1"),
    lambda m, x: m.embedding(x[0], m.tensor([1]), 1.5),
    lambda m, x: m.dropout(x, "0.5", False),
    lambda m, x: m.hinge_embedding_loss(x, x, 1.0, 1.5),
    lambda m, x: m.abs_(3),
])
def test_bindings_refuse_what_torch_refuses(call):
    x, X = pair((2, 3, 4))
    torch_message, tp_message = raises_like(lambda: call(torch, x), lambda: call(tp, X))
    op = torch_message.split("(")[0]
    if op.isidentifier():
        assert op in tp_message


def test_unreduced_enum_values_reduce_nothing():
    x, X = pair((3, 4))
    s, S = pair((3, 4), seed=2)
    for reduction in (0, 3, -1):
        assert_close(tp.margin_ranking_loss(X, S, S.sign(), 0.1, reduction),
                     torch.margin_ranking_loss(x, s, s.sign(), 0.1, reduction))


def test_integral_kl_div_is_refused():
    raises_like(lambda: torch.kl_div(torch.ones(3, dtype=torch.long), torch.ones(3)),
                lambda: tp.kl_div(tp.ones(3, dtype=tp.long), tp.ones(3)))


# ---------------------------------------------------------------------------------------------
# In-place forms: torch-level functions of existing Tensor methods.

TORCH_LEVEL_ARGS = {"clamp_": {"min": 0.2, "max": 0.6}, "clip_": {"min": 0.2, "max": 0.6},
                    "nan_to_num_": {"nan": 1.0}, "addmv_": None, "detach_": None, "resize_as_": None}


def test_every_torch_level_in_place_function_of_an_existing_method_exists():
    for name in nn_ops.TORCH_LEVEL_METHODS:
        assert hasattr(tp, name) and hasattr(torch, name), name
    # what the family leaves to others: fill_ and zero_ (creation), index_put_ (indexing)
    others = {"fill_", "zero_", "index_put_"}
    missing = [n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and hasattr(tp.Tensor, n)
               and not hasattr(tp, n) and n not in others]
    assert not missing, missing


@pytest.mark.parametrize("name", [n for n in nn_ops.TORCH_LEVEL_METHODS if TORCH_LEVEL_ARGS.get(n, {}) is not None])
def test_torch_level_in_place_functions_match_torch(name):
    x, X = pair((3, 4), 0.1, 0.9)
    kwargs = TORCH_LEVEL_ARGS.get(name, {})
    assert getattr(tp, name)(X, **kwargs) is X
    getattr(torch, name)(x, **kwargs)
    assert_close(X, x)


def test_torch_level_detach_addmv_and_resize_as():
    base = tp.ones(3, requires_grad=True)
    y = base * 2
    assert tp.detach_(y) is y and not y.requires_grad
    v, V = pair((3,))
    m, M = pair((3, 4), seed=1)
    w, W = pair((4,), seed=2)
    assert tp.addmv_(V, M, W, beta=2) is V
    torch.addmv_(v, m, w, beta=2)
    assert_close(V, v)
    assert tp.resize_as_(V, M) is V and tuple(V.shape) == (3, 4)
    raises_like(lambda: torch.sqrt_(torch.ones(3, dtype=torch.long)), lambda: tp.sqrt_(tp.ones(3, dtype=tp.long)))


# ---------------------------------------------------------------------------------------------
# In-place forms: Tensor methods of ops that tensorplay has out of place.

def inplace_cases():
    m1, M1 = pair((3, 5), seed=1)
    m2, M2 = pair((5, 4), seed=2)
    v3, V3 = pair((3,), seed=3)
    v4, V4 = pair((4,), seed=4)
    v5, V5 = pair((5,), seed=5)
    b1, B1 = pair((2, 3, 5), seed=6)
    b2, B2 = pair((2, 5, 4), seed=7)
    o, O = pair((3, 4), 0.5, 2.0, seed=8)
    return {
        "absolute_": ((), (), {}),
        "addbmm_": ((b1, b2), (B1, B2), {"beta": 0.5, "alpha": 2}),
        "addmm_": ((m1, m2), (M1, M2), {}),
        "addr_": ((v3, v4), (V3, V4), {"alpha": 2}),
        "arctan2_": ((o,), (O,), {}),
        "divide_": ((o,), (O,), {"rounding_mode": "floor"}),
        "greater_": ((0.5,), (0.5,), {}),
        "greater_equal_": ((o,), (O,), {}),
        "less_": ((o,), (O,), {}),
        "less_equal_": ((0.0,), (0.0,), {}),
        "multiply_": ((o,), (O,), {}),
        "negative_": ((), (), {}),
        "not_equal_": ((o.round(),), (O.round(),), {}),
        "renorm_": ((2, 0, 1.0), (2, 0, 1.0), {}),
        "subtract_": ((o,), (O,), {"alpha": 2}),
        "true_divide_": ((o,), (O,), {}),
        # self of another shape than (3, 4)
        "addmv_": ((m1, v5), (M1, V5), {}),
        "baddbmm_": ((b1, b2), (B1, B2), {}),
    }


SELF_SHAPES = {"addmv_": (3,), "baddbmm_": (2, 3, 4)}


def test_every_in_place_method_of_an_existing_op_exists():
    for name in nn_ops.INPLACE_OF:
        assert hasattr(tp.Tensor, name + "_") and hasattr(torch.Tensor, name + "_"), name
    assert sorted(n + "_" for n in nn_ops.INPLACE_OF) == sorted(inplace_cases())


@pytest.mark.parametrize("name", sorted(inplace_cases()))
def test_in_place_methods_match_torch_with_gradients(name):
    torch_args, tp_args, kwargs = inplace_cases()[name]
    shape = SELF_SHAPES.get(name, (3, 4))
    leaf, LEAF = pair(shape, 0.2, 2.0, seed=11)
    leaf.requires_grad_()
    LEAF.requires_grad_()
    torch_args = [a.clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in torch_args]
    tp_args = [a.clone().requires_grad_() if isinstance(a, tp.Tensor) else a for a in tp_args]
    x, X = leaf * 1, LEAF * 1
    assert getattr(X, name)(*tp_args, **kwargs) is X
    getattr(x, name)(*torch_args, **kwargs)
    assert_close(X, x)
    if x.requires_grad:  # the comparisons and floor division pass no gradient
        (x * x).sum().backward()
        (X * X).sum().backward()
        assert_close(LEAF.grad, leaf.grad, atol=1e-5)
        for a, A in zip(torch_args, tp_args):
            if isinstance(a, torch.Tensor) and a.grad is not None:
                # torch gives the other operand of an in-place comparison a zero gradient, tensorplay none
                assert_close(A.grad if A.grad is not None else tp.zeros_like(A), a.grad, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m: m.ones(3, dtype=m.long).divide_(2),
    lambda m: m.ones(3, dtype=m.long).true_divide_(m.ones(3)),
    lambda m: m.ones(3, dtype=m.long).arctan2_(m.ones(3)),
    lambda m: m.ones(3, dtype=m.bool).subtract_(m.ones(3, dtype=m.bool)),
    lambda m: m.ones(3, 1).multiply_(m.ones(3, 4)),
    lambda m: m.ones(3, requires_grad=True).negative_(),
    lambda m: m.ones(2, 2).addmm_(m.ones(3, 4), m.ones(4, 3)),
])
def test_in_place_methods_refuse_what_torch_refuses(call):
    raises_like(lambda: call(torch), lambda: call(tp))


def test_in_place_comparisons_keep_the_dtype_of_self():
    x, X = pair((3, 4))
    X = X.to(tp.int64)
    x = x.to(torch.int64)
    assert_close(X.greater_(0), x.greater_(0))
    assert_close(X.float().less_(1).int().not_equal_(0), x.float().less_(1).int().not_equal_(0))

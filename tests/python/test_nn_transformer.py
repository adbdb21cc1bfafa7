"""MultiheadAttention, nn.functional.multi_head_attention_forward and the Transformer family against torch.

Every module is built twice from one factory (`make(torch.nn)`, `make(tensorplay.nn)`), torch's state
dict is copied across, and outputs, input gradients and parameter gradients must agree, in eval and in
train mode (dropout=0.0, so that train mode is deterministic). The basic MultiheadAttention and
TransformerEncoderLayer cases are in test_nn_modules.py; here are the options beyond them (kdim/vdim,
add_bias_kv, add_zero_attn, 3-D and float masks, static keys), the decoder, the stacks and Transformer,
the masks they generate and detect, and the errors and warnings on bad input.
"""

import inspect
import math
import re
import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_functional, compare_module, copy_state, to_numpy, tp_tensor


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def bool_mask(shape, seed):
    mask = np.random.default_rng(seed).random(shape) < 0.3
    mask[..., 0] = False  # every query keeps at least one key, so no row is all -inf
    return torch.from_numpy(mask)


def as_lib(lib, value):
    """A torch tensor as the tensor of lib (torch or tensorplay)."""
    return value if lib is torch else tp_tensor(value)


E, H, L, S, N = 8, 2, 5, 6, 3
KDIM, VDIM = 5, 7
Q, K, V = randn(L, N, E, seed=1), randn(S, N, E, seed=2), randn(S, N, E, seed=3)
K_NARROW, V_WIDE = randn(S, N, KDIM, seed=4), randn(S, N, VDIM, seed=5)
KEY_PADDING = torch.from_numpy(np.array([[False] * S, [False] * (S - 2) + [True] * 2, [False] * (S - 1) + [True]]))


def bf(*arrays):
    """The batch-first versions of sequence-first arrays."""
    return [a.transpose(1, 0, 2).copy() for a in arrays]


# ---------------------------------------------------------------------------------------------
# MultiheadAttention options


def mha_case(id, make, args, **kwargs):
    return pytest.param(make, args, kwargs, id=id)


MHA_CASES = [
    mha_case("kdim_vdim", lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM), [Q, K_NARROW, V_WIDE]),
    mha_case("kdim_vdim-batch_first-no_bias",
             lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM, batch_first=True, bias=False),
             bf(Q, K_NARROW, V_WIDE)),
    mha_case("kdim_vdim-key_padding_mask-per_head_weights",
             lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM), [Q, K_NARROW, V_WIDE],
             key_padding_mask=KEY_PADDING, average_attn_weights=False),
    mha_case("kdim_vdim-need_weights_False", lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM),
             [Q, K_NARROW, V_WIDE], need_weights=False, attn_mask=bool_mask((L, S), 1)),
    mha_case("add_bias_kv", lambda nn: nn.MultiheadAttention(E, H, add_bias_kv=True), [Q, K, V]),
    mha_case("add_bias_kv-masks", lambda nn: nn.MultiheadAttention(E, H, add_bias_kv=True), [Q, K, V],
             attn_mask=bool_mask((L, S), 2), key_padding_mask=KEY_PADDING),
    mha_case("add_zero_attn", lambda nn: nn.MultiheadAttention(E, H, add_zero_attn=True), [Q, K, V]),
    mha_case("add_zero_attn-masks-need_weights_False", lambda nn: nn.MultiheadAttention(E, H, add_zero_attn=True),
             [Q, K, V], attn_mask=torch.from_numpy(randn(L, S, seed=3)), key_padding_mask=KEY_PADDING,
             need_weights=False),
    mha_case("add_bias_kv-add_zero_attn-batch_first",
             lambda nn: nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True, batch_first=True),
             bf(Q, K, V), attn_mask=bool_mask((N * H, L, S), 4), average_attn_weights=False),
    mha_case("float_attn_mask_3d", lambda nn: nn.MultiheadAttention(E, H), [Q, K, V],
             attn_mask=torch.from_numpy(randn(N * H, L, S, seed=5))),
    mha_case("float_attn_mask_3d-need_weights_False", lambda nn: nn.MultiheadAttention(E, H), [Q, K, V],
             attn_mask=torch.from_numpy(randn(N * H, L, S, seed=6)), need_weights=False),
    mha_case("float_masks-need_weights_False", lambda nn: nn.MultiheadAttention(E, H, batch_first=True),
             bf(Q, K, V), attn_mask=torch.from_numpy(randn(L, S, seed=7)),
             key_padding_mask=torch.from_numpy(randn(N, S, seed=8)), need_weights=False),
    mha_case("causal_hint_with_key_padding", lambda nn: nn.MultiheadAttention(E, H), [Q, Q, Q],
             attn_mask=torch.triu(torch.ones(L, L, dtype=torch.bool), 1), key_padding_mask=KEY_PADDING[:, :L],
             is_causal=True, need_weights=False),
    # Without weights or padding the is_causal hint replaces the mask (torch drops it), so a mask that is not
    # causal shows whether the hint was taken.
    mha_case("causal_hint_replaces_mask", lambda nn: nn.MultiheadAttention(E, H), [Q, K, V],
             attn_mask=torch.zeros(L, S, dtype=torch.bool), is_causal=True, need_weights=False),
    mha_case("unbatched-attn_mask_3d", lambda nn: nn.MultiheadAttention(E, H), [Q[:, 0], K[:, 0], V[:, 0]],
             attn_mask=bool_mask((H, L, S), 9)),
    mha_case("unbatched-kdim_vdim-add_bias_kv-need_weights_False",
             lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM, add_bias_kv=True),
             [Q[:, 0], K_NARROW[:, 0], V_WIDE[:, 0]], key_padding_mask=KEY_PADDING[1], need_weights=False),
    mha_case("unbatched-batch_first_ignored", lambda nn: nn.MultiheadAttention(E, H, batch_first=True),
             [Q[:, 0], K[:, 0], V[:, 0]]),
]


@pytest.mark.parametrize("make, args, kwargs", MHA_CASES)
def test_multihead_attention_options_match_torch(make, args, kwargs):
    # Eval mode; train mode (training=True, dropout_p=0.0) runs in the functional tests below.
    compare_module(make, args, kwargs, rtol=1e-4, atol=3e-5)


def test_multihead_attention_self_attention_in_float64():
    make = lambda nn: nn.MultiheadAttention(E, H, add_bias_kv=True, batch_first=True)  # noqa: E731
    x = bf(Q)[0]
    compare_module(make, [x, x, x], {"key_padding_mask": KEY_PADDING[:, :L]}, rtol=1e-9, atol=1e-11,
                   dtype=torch.float64)


def test_multihead_attention_bfloat16_matches_torch():
    """In bfloat16 throughout: outputs and weights are bfloat16, and near torch's."""
    torch_m, tp_m = torch.nn.MultiheadAttention(E, H), tensorplay.nn.MultiheadAttention(E, H)
    copy_state(torch_m, tp_m)
    torch_m.to(torch.bfloat16)
    tp_m.to(tensorplay.bfloat16)
    mask = bool_mask((L, S), 10)
    want = torch_m(*(torch.from_numpy(a).to(torch.bfloat16) for a in (Q, K, V)), attn_mask=mask)
    got = tp_m(*(tp_tensor(a).to(tensorplay.bfloat16) for a in (Q, K, V)), attn_mask=tp_tensor(mask))
    for g, w in zip(got, want):
        assert_same(g, w, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("make", [
    pytest.param(lambda nn: nn.MultiheadAttention(E, H), id="packed"),
    pytest.param(lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM, add_bias_kv=True), id="separate"),
    pytest.param(lambda nn: nn.MultiheadAttention(E, H, kdim=E, vdim=VDIM, bias=False), id="separate-no_bias"),
])
def test_multihead_attention_parameters_and_repr_match_torch(make):
    """Parameter names, shapes and order (so state dicts load across), attributes, out_proj's class, repr."""
    t, p = make(torch.nn), make(tensorplay.nn)
    assert [(n, tuple(v.shape)) for n, v in p.state_dict().items()] == [
        (n, tuple(v.shape)) for n, v in t.state_dict().items()]
    for name in ("embed_dim", "kdim", "vdim", "num_heads", "head_dim", "dropout", "batch_first",
                 "_qkv_same_embed_dim", "add_zero_attn"):
        assert getattr(p, name) == getattr(t, name), name
    for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k",
                 "bias_v"):
        assert (getattr(p, name) is None) == (getattr(t, name) is None), name
    assert type(p.out_proj) is tensorplay.nn.modules.linear.NonDynamicallyQuantizableLinear
    assert isinstance(p.out_proj, tensorplay.nn.Linear)
    assert repr(p) == repr(t)
    p.load_state_dict({k: tp_tensor(v) for k, v in t.state_dict().items()})


@pytest.mark.parametrize("attn_mask, key_padding_mask", [
    pytest.param(None, None, id="none"),
    pytest.param(None, torch.from_numpy(randn(N, L, seed=13)), id="key_padding_only"),
    pytest.param(torch.from_numpy(randn(L, L, seed=14)), None, id="attn_mask_2d"),
    pytest.param(torch.from_numpy(randn(N * H, L, L, seed=15)), torch.from_numpy(randn(N, L, seed=16)),
                 id="attn_mask_3d-key_padding"),
    pytest.param(bool_mask((L, L), 17), KEY_PADDING[:, :L], id="bool_masks"),
])
def test_multihead_attention_merge_masks_matches_torch(attn_mask, key_padding_mask):
    query = bf(Q)[0]
    want = torch.nn.MultiheadAttention(E, H, batch_first=True).merge_masks(attn_mask, key_padding_mask,
                                                                            torch.from_numpy(query))
    got = tensorplay.nn.MultiheadAttention(E, H, batch_first=True).merge_masks(
        None if attn_mask is None else tp_tensor(attn_mask),
        None if key_padding_mask is None else tp_tensor(key_padding_mask), tp_tensor(query))
    assert got[1] == want[1]
    if want[0] is None:
        assert got[0] is None
    else:
        assert_same(got[0], want[0])


def test_multihead_attention_separate_projection_init():
    """q/k/v_proj_weight xavier_uniform over their own shapes, bias_k/bias_v xavier_normal, biases zero."""
    tensorplay.manual_seed(0)
    embed, kdim, vdim = 64, 32, 96
    m = tensorplay.nn.MultiheadAttention(embed, 4, kdim=kdim, vdim=vdim, add_bias_kv=True)
    for name, fan_in in (("q_proj_weight", embed), ("k_proj_weight", kdim), ("v_proj_weight", vdim)):
        values = to_numpy(getattr(m, name))
        bound = math.sqrt(6 / (embed + fan_in))
        assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound, name
        assert abs(values.std() - bound / math.sqrt(3)) < 0.1 * bound, name
    # xavier_normal_ on (1, 1, E): fan_in = E, fan_out = E, std = sqrt(2 / 2E)
    both = np.concatenate([to_numpy(m.bias_k).ravel(), to_numpy(m.bias_v).ravel()])
    assert abs(both.std() - math.sqrt(1 / embed)) < 0.3 * math.sqrt(1 / embed)
    np.testing.assert_array_equal(to_numpy(m.in_proj_bias), 0.0)


# ---------------------------------------------------------------------------------------------
# nn.functional.multi_head_attention_forward


def weights(seed):
    rng = np.random.default_rng(seed)
    return {
        "in_proj_weight": rng.standard_normal((3 * E, E)).astype(np.float32) * 0.3,
        "in_proj_bias": rng.standard_normal(3 * E).astype(np.float32) * 0.1,
        "out_proj_weight": rng.standard_normal((E, E)).astype(np.float32) * 0.3,
        "out_proj_bias": rng.standard_normal(E).astype(np.float32) * 0.1,
        "bias_k": rng.standard_normal((1, 1, E)).astype(np.float32),
        "bias_v": rng.standard_normal((1, 1, E)).astype(np.float32),
        "q_proj_weight": rng.standard_normal((E, E)).astype(np.float32) * 0.3,
        "k_proj_weight": rng.standard_normal((E, KDIM)).astype(np.float32) * 0.3,
        "v_proj_weight": rng.standard_normal((E, VDIM)).astype(np.float32) * 0.3,
        "static_k": rng.standard_normal((N * H, S, E // H)).astype(np.float32),
        "static_v": rng.standard_normal((N * H, S, E // H)).astype(np.float32),
    }


def run_mha_forward(lib, arrays, options):
    """lib.nn.functional.multi_head_attention_forward on leaves made from arrays; returns (outputs, leaves)."""
    leaves = {name: (torch.from_numpy(a.copy()) if lib is torch else tp_tensor(a)).requires_grad_(True)
              for name, a in arrays.items()}
    args = {name: leaves.get(name) for name in ("in_proj_weight", "in_proj_bias", "bias_k", "bias_v")}
    masks = {name: as_lib(lib, value) for name, value in options.items() if isinstance(value, torch.Tensor)}
    kwargs = {**{k: v for k, v in options.items() if k not in masks}, **masks}
    kwargs.update({name: leaves[name] for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight", "static_k",
                                                   "static_v") if name in leaves})
    out = lib.nn.functional.multi_head_attention_forward(
        leaves["query"], leaves["key"], leaves["value"], E, H, args["in_proj_weight"], args["in_proj_bias"],
        args["bias_k"], args["bias_v"], kwargs.pop("add_zero_attn", False), kwargs.pop("dropout_p", 0.0),
        leaves["out_proj_weight"], leaves["out_proj_bias"], **kwargs)
    return out, leaves


FUNCTIONAL_CASES = {
    "packed": ((Q, K, V), ("in_proj_weight", "in_proj_bias"), {}),
    "packed-training_False_drops_dropout": ((Q, K, V), ("in_proj_weight", "in_proj_bias"),
                                            {"training": False, "dropout_p": 0.9}),
    "separate_proj_weight": ((Q, K_NARROW, V_WIDE), ("q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                     "in_proj_bias"),
                             {"use_separate_proj_weight": True, "key_padding_mask": KEY_PADDING}),
    "bias_kv-zero_attn-masks": ((Q, K, V), ("in_proj_weight", "in_proj_bias", "bias_k", "bias_v"),
                                {"add_zero_attn": True, "attn_mask": bool_mask((L, S), 11),
                                 "key_padding_mask": KEY_PADDING, "average_attn_weights": False}),
    "static_k_v": ((Q, K, V), ("in_proj_weight", "in_proj_bias", "static_k", "static_v"),
                   {"attn_mask": bool_mask((L, S), 12)}),
    "static_k_v-zero_attn-need_weights_False": ((Q, K, V), ("in_proj_weight", "static_k", "static_v"),
                                                {"add_zero_attn": True, "need_weights": False}),
}


@pytest.mark.parametrize("case", list(FUNCTIONAL_CASES))
def test_multi_head_attention_forward_matches_torch(case):
    (query, key, value), weight_names, options = FUNCTIONAL_CASES[case]
    table = weights(20)
    arrays = {"query": query, "key": key, "value": value, "out_proj_weight": table["out_proj_weight"],
              "out_proj_bias": table["out_proj_bias"], **{name: table[name] for name in weight_names}}
    want, torch_leaves = run_mha_forward(torch, arrays, options)
    got, tp_leaves = run_mha_forward(tensorplay, arrays, options)
    assert (got[1] is None) == (want[1] is None)
    for g, w in zip(got, want):
        if w is not None:
            assert_same(g, w, rtol=1e-4, atol=3e-5)
    grad = np.random.default_rng(0).standard_normal(tuple(want[0].shape)).astype(np.float32)
    want[0].backward(torch.from_numpy(grad))
    got[0].backward(tp_tensor(grad))
    for name, leaf in torch_leaves.items():
        if leaf.grad is None:  # key and value when static_k and static_v replace their projections
            assert tp_leaves[name].grad is None, f"grad of {name}: torch has none"
        else:
            assert_same(tp_leaves[name].grad, leaf.grad, rtol=1e-4, atol=3e-5, what=f"grad of {name}")


def test_multi_head_attention_forward_signature_matches_torch():
    want = inspect.signature(torch.nn.functional.multi_head_attention_forward).parameters
    got = inspect.signature(tensorplay.nn.functional.multi_head_attention_forward).parameters
    assert [(n, p.default) for n, p in got.items()] == [(n, p.default) for n, p in want.items()]


# ---------------------------------------------------------------------------------------------
# scaled_dot_product_attention with grouped-query attention (enable_gqa)


@pytest.mark.parametrize("shapes, kwargs", [
    pytest.param(((2, 4, 3, 8), (2, 2, 5, 8), (2, 1, 5, 8)), {}, id="4d-key_2_value_1_heads"),
    pytest.param(((6, 3, 4), (2, 5, 4), (3, 5, 4)), {"is_causal": True}, id="3d-causal"),
    pytest.param(((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8)), {"scale": 0.5}, id="scale"),
    pytest.param(((2, 2, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8)), {}, id="equal_heads"),
])
def test_scaled_dot_product_attention_gqa_matches_torch(shapes, kwargs):
    args = [randn(*shape, seed=40 + i) for i, shape in enumerate(shapes)]
    compare_functional("scaled_dot_product_attention", args, {"enable_gqa": True, **kwargs})


@pytest.mark.parametrize("shapes", [
    pytest.param(((2, 4, 3, 8), (2, 3, 5, 8), (2, 3, 5, 8)), id="key_heads_not_dividing"),
    pytest.param(((2, 4, 3, 8), (2, 2, 5, 8), (2, 3, 5, 8)), id="value_heads_not_dividing"),
    pytest.param(((3, 8), (5, 8), (5, 8)), id="2d"),
])
def test_scaled_dot_product_attention_gqa_errors_match_torch(shapes):
    arrays = [randn(*shape, seed=50 + i) for i, shape in enumerate(shapes)]
    raises_like_torch(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *(as_lib(lib, torch.from_numpy(a)) for a in arrays), enable_gqa=True))


# ---------------------------------------------------------------------------------------------
# Errors and warnings, compared with torch's (class and message)


def raises_like_torch(scenario):
    """scenario(torch) and scenario(tensorplay) raise the same exception class with the same message
    (tensorplay's C++ errors may lead with the op's name in brackets)."""
    with pytest.raises(Exception) as want:
        scenario(torch)
    with pytest.raises(Exception) as got:
        scenario(tensorplay)
    assert type(got.value) is type(want.value)
    message = re.sub(r"^\[\w+\] ", "", str(got.value))
    assert message == str(want.value).replace("torch", "tensorplay")


def call_mha(lib, q, k, v, make=lambda nn: nn.MultiheadAttention(E, H), **masks):
    module = make(lib.nn)
    tensors = [torch.from_numpy(a) if lib is torch else tp_tensor(a) for a in (q, k, v)]
    return module(*tensors, **{name: as_lib(lib, m) for name, m in masks.items()})


MHA_ERRORS = {
    "query_4d": lambda lib: call_mha(lib, Q[None], K[None], V[None]),
    "batched_query_unbatched_key": lambda lib: call_mha(lib, Q, K[:, 0], V),
    "unbatched_query_batched_value": lambda lib: call_mha(lib, Q[:, 0], K[:, 0], V),
    "key_padding_mask_1d_for_batch": lambda lib: call_mha(lib, Q, K, V, key_padding_mask=KEY_PADDING[0]),
    "key_padding_mask_2d_unbatched": lambda lib: call_mha(lib, Q[:, 0], K[:, 0], V[:, 0],
                                                          key_padding_mask=KEY_PADDING),
    "key_padding_mask_wrong_length": lambda lib: call_mha(lib, Q, K, V, key_padding_mask=KEY_PADDING[:, :4]),
    "key_padding_mask_wrong_batch": lambda lib: call_mha(lib, Q, K, V, key_padding_mask=KEY_PADDING[:2]),
    "attn_mask_1d": lambda lib: call_mha(lib, Q, K, V, attn_mask=KEY_PADDING[0]),
    "attn_mask_2d_wrong_shape": lambda lib: call_mha(lib, Q, K, V, attn_mask=bool_mask((S, L), 0)),
    "attn_mask_3d_wrong_shape": lambda lib: call_mha(lib, Q, K, V, attn_mask=bool_mask((N, L, S), 0)),
    "attn_mask_3d_unbatched_wrong_shape": lambda lib: call_mha(lib, Q[:, 0], K[:, 0], V[:, 0],
                                                               attn_mask=bool_mask((1, L, S), 0)),
    "integer_attn_mask": lambda lib: call_mha(lib, Q, K, V, attn_mask=torch.zeros(L, S, dtype=torch.int64)),
    "integer_key_padding_mask": lambda lib: call_mha(lib, Q, K, V,
                                                     key_padding_mask=torch.zeros(N, S, dtype=torch.int32)),
    "wrong_embed_dim": lambda lib: call_mha(lib, randn(L, N, 6), randn(S, N, 6), randn(S, N, 6)),
    "key_value_shapes_differ": lambda lib: call_mha(lib, Q, K, V[:4]),
    "kdim_key_of_embed_dim": lambda lib: call_mha(lib, Q, K, V_WIDE,
                                                  make=lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM)),
    "kdim_key_value_lengths_differ": lambda lib: call_mha(
        lib, Q, K_NARROW, V_WIDE[:4], make=lambda nn: nn.MultiheadAttention(E, H, kdim=KDIM, vdim=VDIM)),
    "is_causal_without_mask": lambda lib: call_mha(lib, Q, K, V, is_causal=True),
    "embed_dim_not_divisible": lambda lib: lib.nn.MultiheadAttention(10, 3),
    "zero_heads": lambda lib: lib.nn.MultiheadAttention(8, 0),
    "negative_embed_dim": lambda lib: lib.nn.MultiheadAttention(-4, 2),
}


@pytest.mark.parametrize("case", list(MHA_ERRORS))
def test_multihead_attention_errors_match_torch(case):
    raises_like_torch(MHA_ERRORS[case])


def warning_messages(scenario, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario(lib)
    return [str(w.message).replace("torch", "tensorplay") for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("scenario", [
    pytest.param(lambda lib: call_mha(lib, Q, K, V, attn_mask=torch.from_numpy(randn(L, S)),
                                      key_padding_mask=KEY_PADDING), id="mha_mismatched_mask_types"),
    pytest.param(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, H, 16), 1),
                 id="encoder_nested_tensor_not_batch_first"),
    pytest.param(lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=True, norm_first=True), 1), id="encoder_norm_first"),
    pytest.param(lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(E, 1, 16, batch_first=True, activation=lib.nn.functional.silu), 1),
        id="encoder_custom_activation"),
    pytest.param(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 1, 16, batch_first=True), 1),
                 id="encoder_odd_heads"),
    pytest.param(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=True), 1),
                 id="encoder_fast_path_possible"),
    pytest.param(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, H, 16), 1,
                                                       enable_nested_tensor=False), id="encoder_nested_tensor_off"),
])
def test_warnings_match_torch(scenario):
    assert warning_messages(scenario, tensorplay) == warning_messages(scenario, torch)


# ---------------------------------------------------------------------------------------------
# TransformerEncoderLayer options not in test_nn_modules.py, and TransformerDecoderLayer


D, FF = 8, 16
SRC, TGT = randn(S, N, D, seed=30), randn(L, N, D, seed=31)
SRC_BF, TGT_BF = bf(SRC, TGT)
CAUSAL_FLOAT = torch.nn.Transformer.generate_square_subsequent_mask(L)
CAUSAL_BOOL = torch.triu(torch.ones(L, L, dtype=torch.bool), 1)
NOT_CAUSAL_BOOL = torch.zeros(L, L, dtype=torch.bool)
SRC_PADDING, TGT_PADDING = KEY_PADDING, KEY_PADDING[:, :L]


def layer(kind, batch_first=False, **options):
    return lambda nn: getattr(nn, kind)(D, H, dim_feedforward=FF, dropout=0.0, batch_first=batch_first, **options)


ENCODER_LAYER_CASES = [
    pytest.param(layer("TransformerEncoderLayer", activation="gelu", norm_first=True, bias=False), [SRC], {},
                 id="gelu-norm_first-no_bias"),
    pytest.param(layer("TransformerEncoderLayer", activation=lambda x: x.tanh(), layer_norm_eps=1e-2), [SRC], {},
                 id="callable_activation-layer_norm_eps"),
    pytest.param(lambda nn: nn.TransformerEncoderLayer(D, H, FF, 0.0, nn.GELU("tanh")), [SRC], {},
                 id="module_activation"),
    pytest.param(layer("TransformerEncoderLayer"), [SRC[:, 0]], {"src_key_padding_mask": SRC_PADDING[1]},
                 id="unbatched-key_padding"),
    pytest.param(layer("TransformerEncoderLayer", batch_first=True), [SRC_BF[:, :L]],
                 {"src_mask": torch.from_numpy(randn(L, L, seed=32)),
                  "src_key_padding_mask": torch.from_numpy(randn(N, L, seed=33))}, id="float_masks-batch_first"),
]


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("make, args, kwargs", ENCODER_LAYER_CASES)
def test_transformer_encoder_layer_options_match_torch(make, args, kwargs, train):
    compare_module(make, args, kwargs, rtol=1e-4, atol=3e-5, train=train)


DECODER_LAYER_CASES = [
    pytest.param(layer("TransformerDecoderLayer"), [TGT, SRC], {}, id="post_norm-seq_first"),
    pytest.param(layer("TransformerDecoderLayer", batch_first=True, norm_first=True), [TGT_BF, SRC_BF], {},
                 id="norm_first-batch_first"),
    pytest.param(layer("TransformerDecoderLayer", activation="gelu", bias=False, layer_norm_eps=1e-3),
                 [TGT, SRC], {"tgt_mask": CAUSAL_FLOAT, "tgt_is_causal": True}, id="gelu-no_bias-causal"),
    pytest.param(layer("TransformerDecoderLayer", batch_first=True), [TGT_BF, SRC_BF],
                 {"tgt_mask": CAUSAL_BOOL, "memory_mask": bool_mask((L, S), 34), "tgt_key_padding_mask": TGT_PADDING,
                  "memory_key_padding_mask": SRC_PADDING}, id="all_masks-batch_first"),
    # The hints replace the masks (see causal_hint_replaces_mask above).
    pytest.param(layer("TransformerDecoderLayer", norm_first=True), [TGT, SRC],
                 {"memory_mask": torch.zeros(L, S), "memory_is_causal": True}, id="memory_is_causal"),
    pytest.param(layer("TransformerDecoderLayer"), [TGT, SRC], {"tgt_mask": torch.zeros(L, L), "tgt_is_causal": True},
                 id="tgt_is_causal"),
    pytest.param(layer("TransformerDecoderLayer", activation=lambda x: x.sigmoid()), [TGT[:, 0], SRC[:, 0]],
                 {"tgt_mask": CAUSAL_FLOAT, "memory_key_padding_mask": SRC_PADDING[2]},
                 id="unbatched-callable_activation"),
]


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("make, args, kwargs", DECODER_LAYER_CASES)
def test_transformer_decoder_layer_matches_torch(make, args, kwargs, train):
    compare_module(make, args, kwargs, rtol=1e-4, atol=3e-5, train=train)


# ---------------------------------------------------------------------------------------------
# TransformerEncoder, TransformerDecoder, Transformer


def encoder_stack(batch_first=False, norm=True, **options):
    def make(nn):
        encoder_layer = nn.TransformerEncoderLayer(D, H, FF, 0.0, batch_first=batch_first, **options)
        return nn.TransformerEncoder(encoder_layer, 2, nn.LayerNorm(D) if norm else None, enable_nested_tensor=False)
    return make


def decoder_stack(batch_first=False, norm=True, **options):
    def make(nn):
        decoder_layer = nn.TransformerDecoderLayer(D, H, FF, 0.0, batch_first=batch_first, **options)
        return nn.TransformerDecoder(decoder_layer, 2, nn.LayerNorm(D) if norm else None)
    return make


def transformer(batch_first=False, **options):
    return lambda nn: nn.Transformer(D, H, 2, 1, FF, 0.0, batch_first=batch_first, **options)


STACK_CASES = [
    pytest.param(encoder_stack(), [SRC], {}, id="encoder"),
    pytest.param(encoder_stack(batch_first=True, norm=False, norm_first=True), [SRC_BF[:, :L]],
                 {"mask": CAUSAL_FLOAT, "src_key_padding_mask": TGT_PADDING}, id="encoder-no_norm-masks"),
    pytest.param(encoder_stack(), [SRC[:L]], {"mask": CAUSAL_FLOAT}, id="encoder-detected_causal_mask"),
    # As in the layers, a hint of True replaces the mask; the masks here are not causal, so that shows.
    pytest.param(encoder_stack(), [SRC[:L]], {"mask": NOT_CAUSAL_BOOL, "is_causal": True}, id="encoder-is_causal"),
    pytest.param(encoder_stack(activation="gelu"), [SRC[:, 1]], {"src_key_padding_mask": SRC_PADDING[1]},
                 id="encoder-unbatched"),
    pytest.param(decoder_stack(), [TGT, SRC], {"tgt_mask": CAUSAL_FLOAT}, id="decoder-detected_causal_mask"),
    pytest.param(decoder_stack(batch_first=True, norm=False, norm_first=True), [TGT_BF, SRC_BF],
                 {"tgt_mask": NOT_CAUSAL_BOOL, "tgt_is_causal": True, "memory_key_padding_mask": SRC_PADDING},
                 id="decoder-no_norm-causal"),
    pytest.param(transformer(), [SRC, TGT], {"tgt_mask": CAUSAL_FLOAT}, id="transformer-seq_first"),
    pytest.param(transformer(batch_first=True, norm_first=True, activation="gelu"), [SRC_BF, TGT_BF],
                 {"tgt_mask": CAUSAL_FLOAT, "tgt_is_causal": True, "src_key_padding_mask": SRC_PADDING,
                  "memory_key_padding_mask": SRC_PADDING, "tgt_key_padding_mask": TGT_PADDING},
                 id="transformer-batch_first-padding"),
    pytest.param(transformer(bias=False, layer_norm_eps=1e-3), [SRC[:L], TGT],
                 {"src_mask": NOT_CAUSAL_BOOL, "src_is_causal": True, "memory_mask": bool_mask((L, L), 35)},
                 id="transformer-no_bias-src_causal"),
    pytest.param(transformer(), [SRC[:, 0], TGT[:, 0]], {"tgt_mask": CAUSAL_FLOAT}, id="transformer-unbatched"),
]


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("make, args, kwargs", STACK_CASES)
def test_transformer_stacks_match_torch(make, args, kwargs, train):
    compare_module(make, args, kwargs, rtol=1e-4, atol=5e-5, train=train)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_in_float64():
    compare_module(transformer(norm_first=True), [SRC, TGT], {"tgt_mask": CAUSAL_FLOAT}, rtol=1e-9, atol=1e-10,
                   dtype=torch.float64)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_custom_encoder_and_decoder():
    def make(nn):
        return nn.Transformer(D, H, custom_encoder=encoder_stack(norm=False)(nn),
                              custom_decoder=decoder_stack(batch_first=False)(nn))
    compare_module(make, [SRC, TGT], {"tgt_mask": CAUSAL_FLOAT}, rtol=1e-4, atol=5e-5)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("make", [
    pytest.param(transformer(), id="Transformer"),
    pytest.param(encoder_stack(), id="TransformerEncoder"),
    pytest.param(decoder_stack(activation="gelu"), id="TransformerDecoder"),
    pytest.param(layer("TransformerDecoderLayer", batch_first=True, norm_first=True), id="TransformerDecoderLayer"),
])
def test_transformer_structure_matches_torch(make):
    """Submodule names, state dict keys and shapes, attributes, repr; the stacked layers are independent copies."""
    t, p = make(torch.nn), make(tensorplay.nn)
    assert [n for n, _ in p.named_modules()] == [n for n, _ in t.named_modules()]
    assert [(n, tuple(v.shape)) for n, v in p.state_dict().items()] == [
        (n, tuple(v.shape)) for n, v in t.state_dict().items()]
    for name in ("d_model", "nhead", "batch_first", "num_layers", "enable_nested_tensor", "use_nested_tensor",
                 "mask_check", "norm_first"):
        assert getattr(p, name, None) == getattr(t, name, None), name
    assert repr(p) == repr(t).replace("torch", "tensorplay")
    layers = getattr(p, "layers", None)
    if layers is not None:
        assert layers[0].linear1.weight is not layers[1].linear1.weight


def test_transformer_initialises_every_matrix_xavier_uniform():
    tensorplay.manual_seed(0)
    model = tensorplay.nn.Transformer(32, 4, 1, 1, 64, batch_first=True)
    for name, p in model.named_parameters():
        values = to_numpy(p)
        if p.dim() > 1:
            bound = math.sqrt(6 / (p.shape[0] + p.shape[1]))
            assert np.abs(values).max() <= bound and np.abs(values).max() > 0.8 * bound, name


def test_transformer_loads_torch_state_dict_and_matches_in_eval_without_grad():
    """A torch Transformer's state dict loads into tensorplay's; under no_grad the outputs agree."""
    t = torch.nn.Transformer(D, H, 1, 2, FF, batch_first=True).eval()
    p = tensorplay.nn.Transformer(D, H, 1, 2, FF, batch_first=True).eval()
    p.load_state_dict({k: tp_tensor(v) for k, v in t.state_dict().items()})
    with torch.no_grad():
        want = t(torch.from_numpy(SRC_BF), torch.from_numpy(TGT_BF), tgt_mask=CAUSAL_FLOAT)
    with tensorplay.no_grad():
        got = p(tp_tensor(SRC_BF), tp_tensor(TGT_BF), tgt_mask=tp_tensor(CAUSAL_FLOAT))
    assert_same(got, want, rtol=1e-4, atol=5e-5)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_under_bfloat16_autocast_matches_torch():
    """Autocast runs the projections in bfloat16: attention outputs and weights are bfloat16, LayerNorm
    brings the Transformer's output back to float32, as in torch."""
    t = torch.nn.Transformer(D, H, 1, 1, FF, batch_first=True).eval()
    p = tensorplay.nn.Transformer(D, H, 1, 1, FF, batch_first=True).eval()
    copy_state(t, p)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = t(torch.from_numpy(SRC_BF), torch.from_numpy(TGT_BF), tgt_mask=CAUSAL_FLOAT)
        want_attn = t.encoder.layers[0].self_attn(*[torch.from_numpy(SRC_BF)] * 3)
    with tensorplay.autocast("cpu", dtype=tensorplay.bfloat16):
        got = p(tp_tensor(SRC_BF), tp_tensor(TGT_BF), tgt_mask=tp_tensor(CAUSAL_FLOAT))
        got_attn = p.encoder.layers[0].self_attn(*[tp_tensor(SRC_BF)] * 3)
    assert_same(got, want, rtol=5e-2, atol=5e-2)
    for g, w in zip(got_attn, want_attn):
        assert_same(g, w, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("sz, dtype", [(1, None), (4, None), (5, "float64"), (3, "bfloat16"), (4, "bool")])
def test_generate_square_subsequent_mask_matches_torch(sz, dtype):
    want = torch.nn.Transformer.generate_square_subsequent_mask(sz, dtype=getattr(torch, dtype) if dtype else None)
    got = tensorplay.nn.Transformer.generate_square_subsequent_mask(
        sz, dtype=getattr(tensorplay, dtype) if dtype else None)
    assert_same(got, want)
    assert_same(tensorplay.nn.Transformer(D, H, 1, 1, FF).generate_square_subsequent_mask(sz, device="cpu"),
                torch.nn.Transformer.generate_square_subsequent_mask(sz, device="cpu"))


TRANSFORMER_ERRORS = {
    "batch_mismatch-seq_first": lambda lib: transformer()(lib.nn)(as_lib(lib, torch.randn(S, N, D)),
                                                                   as_lib(lib, torch.randn(L, N + 1, D))),
    "batch_mismatch-batch_first": lambda lib: transformer(batch_first=True)(lib.nn)(
        as_lib(lib, torch.randn(N, S, D)), as_lib(lib, torch.randn(N + 1, L, D))),
    "feature_mismatch": lambda lib: transformer()(lib.nn)(as_lib(lib, torch.randn(S, N, D)),
                                                           as_lib(lib, torch.randn(L, N, D + 1))),
    "unknown_activation": lambda lib: lib.nn.TransformerEncoderLayer(D, H, activation="tanh"),
    "unknown_decoder_activation": lambda lib: lib.nn.TransformerDecoderLayer(D, H, activation="swish"),
    "is_causal_without_mask": lambda lib: layer("TransformerEncoderLayer")(lib.nn)(
        as_lib(lib, torch.randn(S, N, D)), is_causal=True),
    "tgt_mask_wrong_shape": lambda lib: layer("TransformerDecoderLayer")(lib.nn)(
        as_lib(lib, torch.randn(L, N, D)), as_lib(lib, torch.randn(S, N, D)),
        tgt_mask=as_lib(lib, torch.zeros(L, S))),
    "integer_src_key_padding_mask": lambda lib: encoder_stack()(lib.nn)(
        as_lib(lib, torch.randn(S, N, D)), src_key_padding_mask=as_lib(lib, torch.zeros(N, S, dtype=torch.int64))),
}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("case", list(TRANSFORMER_ERRORS))
def test_transformer_errors_match_torch(case):
    raises_like_torch(TRANSFORMER_ERRORS[case])

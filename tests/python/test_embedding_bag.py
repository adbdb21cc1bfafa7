"""nn.EmbeddingBag and F.embedding_bag against torch, and Embedding's max_norm and scale_grad_by_freq.

test_embedding_bag_matches_torch (ids `<mode>-<variant>`) runs F.embedding_bag in both libraries on the
same weight, indices and offsets: the bags, the weight's gradient and per_sample_weights' gradient must
agree. test_embedding_bag_module_matches_torch builds nn.EmbeddingBag from one factory in both
libraries, copies torch's weight across and compares output and gradients. Then max_norm (rows that
are looked up are renormalised in place, as torch does), scale_grad_by_freq, and errors on bad input.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_module, tp_tensor, upstream_grad

def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


NUM, DIM = 10, 4
WEIGHT = randn(NUM, DIM, seed=1)
INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
OFFSETS = np.array([0, 2, 2, 5, 8])           # bag 1 is empty
LAST_OFFSET = np.append(OFFSETS, len(INDICES))  # the form that include_last_offset=True takes
PSW = np.random.default_rng(2).uniform(0.5, 2.0, len(INDICES)).astype(np.float32)


def bag_case(id, indices, offsets=None, psw=None, dtype="float32", **kwargs):
    return pytest.param(indices, offsets, psw, dtype, kwargs, id=id)


BAG_CASES = [
    *[bag_case(f"{mode}-offsets_with_empty_bag", INDICES, OFFSETS, mode=mode) for mode in ("sum", "mean", "max")],
    *[bag_case(f"{mode}-2d_input", INDICES.reshape(2, 5), mode=mode) for mode in ("sum", "mean", "max")],
    *[bag_case(f"{mode}-padding_idx", INDICES, OFFSETS, mode=mode, padding_idx=4) for mode in ("sum", "mean", "max")],
    *[bag_case(f"{mode}-include_last_offset", INDICES, LAST_OFFSET, mode=mode, include_last_offset=True)
      for mode in ("sum", "mean", "max")],
    bag_case("mean-negative_padding_idx_all_padding_bag", np.array([9, 9, 1, 9]), np.array([0, 2]), mode="mean",
             padding_idx=-1),
    bag_case("max-all_padding_bag", np.array([9, 9, 1, 9]), np.array([0, 2]), mode="max", padding_idx=9),
    bag_case("sum-per_sample_weights", INDICES, OFFSETS, PSW, mode="sum"),
    bag_case("sum-per_sample_weights_2d", INDICES.reshape(5, 2), None, PSW.reshape(5, 2), mode="sum"),
    bag_case("sum-per_sample_weights_padding_idx", INDICES, OFFSETS, PSW, mode="sum", padding_idx=2),
    bag_case("mean-int32_indices", INDICES.astype(np.int32), OFFSETS.astype(np.int32), mode="mean"),
    bag_case("max-float64", INDICES, OFFSETS, dtype="float64", mode="max"),
    bag_case("sum-float64_per_sample_weights", INDICES, OFFSETS, PSW, dtype="float64", mode="sum"),
    bag_case("mean-bfloat16", INDICES, OFFSETS, dtype="bfloat16", mode="mean"),
    bag_case("sum-empty_input", np.zeros(0, dtype=np.int64), np.array([0, 0]), mode="sum"),
]


def run_bag(m, indices, offsets, psw, dtype, kwargs):
    weight = tensor(m, WEIGHT, dtype).requires_grad_()
    psw_t = None if psw is None else tensor(m, psw, dtype).requires_grad_()
    out = m.nn.functional.embedding_bag(m.from_numpy(indices.copy()), weight,
                                        None if offsets is None else m.from_numpy(offsets.copy()),
                                        per_sample_weights=psw_t, **kwargs)
    out.backward(tensor(m, upstream_grad(tuple(out.shape), 3), dtype))
    return out, weight.grad, None if psw is None else psw_t.grad


def tensor(m, array, dtype):
    return m.from_numpy(array.copy()).to(getattr(m, dtype))


@pytest.mark.parametrize("indices, offsets, psw, dtype, kwargs", BAG_CASES)
def test_embedding_bag_matches_torch(indices, offsets, psw, dtype, kwargs):
    ours = run_bag(tensorplay, indices, offsets, psw, dtype, kwargs)
    theirs = run_bag(torch, indices, offsets, psw, dtype, kwargs)
    tol = {"bfloat16": (1.6e-2, 1e-2), "float64": (1e-10, 1e-12)}.get(dtype, (1e-5, 1e-6))
    for what, p, t in zip(("bags", "weight.grad", "per_sample_weights.grad"), ours, theirs):
        if t is None:
            assert p is None, what
        else:
            assert_same(p, t, *tol, what=what)


@pytest.mark.parametrize("make, args", [
    pytest.param(lambda nn: nn.EmbeddingBag(NUM, DIM), [INDICES, OFFSETS], id="mean_default"),
    pytest.param(lambda nn: nn.EmbeddingBag(NUM, DIM, mode="sum"), [INDICES, OFFSETS, PSW], id="sum_psw"),
    pytest.param(lambda nn: nn.EmbeddingBag(NUM, DIM, mode="max", padding_idx=3), [INDICES.reshape(2, 5)],
                 id="max_2d_padding_idx"),
    pytest.param(lambda nn: nn.EmbeddingBag(NUM, DIM, mode="sum", include_last_offset=True),
                 [INDICES, LAST_OFFSET], id="sum_include_last_offset"),
])
def test_embedding_bag_module_matches_torch(make, args):
    compare_module(make, args)


def test_embedding_bag_module_attributes_repr_and_init_like_torch():
    kwargs = dict(max_norm=1.5, norm_type=3.0, scale_grad_by_freq=True, mode="sum", padding_idx=-2)
    t, p = torch.nn.EmbeddingBag(NUM, DIM, **kwargs), tensorplay.nn.EmbeddingBag(NUM, DIM, **kwargs)
    for name in ("num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
                 "include_last_offset", "padding_idx"):
        assert getattr(p, name) == getattr(t, name), name
    assert repr(p) == repr(t)
    assert repr(tensorplay.nn.EmbeddingBag(5, 2)) == repr(torch.nn.EmbeddingBag(5, 2))
    assert list(p.state_dict()) == list(t.state_dict()) == ["weight"]
    np.testing.assert_array_equal(p.weight.detach().numpy()[8], np.zeros(DIM, np.float32))


def test_embedding_bag_from_pretrained_like_torch():
    for freeze in (True, False):
        t = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(WEIGHT), freeze=freeze, mode="max")
        p = tensorplay.nn.EmbeddingBag.from_pretrained(tp_tensor(WEIGHT), freeze=freeze, mode="max")
        assert p.weight.requires_grad == t.weight.requires_grad
        assert_same(p(tp_tensor(INDICES), tp_tensor(OFFSETS)), t(torch.from_numpy(INDICES), torch.from_numpy(OFFSETS)))


# ---------------------------------------------------------------------------------------------
# max_norm: the looked-up rows are renormalised in place, outside autograd


@pytest.mark.parametrize("lookup", [
    pytest.param(lambda F, idx, w, **kw: F.embedding(idx, w, **kw), id="embedding"),
    pytest.param(lambda F, idx, w, **kw: F.embedding_bag(idx.reshape(-1), w, w.new_zeros(1).long(), mode="sum",
                                                         **kw), id="embedding_bag"),
])
@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_renormalises_the_looked_up_rows_in_place_like_torch(lookup, norm_type):
    idx = np.array([[1, 3], [3, 7]])
    results = []
    for m in (torch, tensorplay):
        w = m.from_numpy(WEIGHT * 2).requires_grad_()
        out = lookup(m.nn.functional, m.from_numpy(idx.copy()), w, max_norm=1.0, norm_type=norm_type)
        out.sum().backward()
        results.append((out, w, w.grad))
    for what, t, p in zip(("output", "weight after", "weight.grad"), *results):
        assert_same(p, t, 1e-5, 1e-6, what=what)
    # Rows that were not looked up keep their values.
    np.testing.assert_array_equal(results[1][1].detach().numpy()[0], WEIGHT[0] * 2)


def test_embedding_module_max_norm_like_torch():
    torch_module, tp_module = compare_module(lambda nn: nn.Embedding(NUM, DIM, max_norm=0.5), [np.array([2, 5, 2])])
    assert_same(tp_module.weight, torch_module.weight, 1e-5, 1e-6, what="renormalised weight")


# ---------------------------------------------------------------------------------------------
# scale_grad_by_freq: a row's gradient is divided by how often its index occurs in the batch


def test_embedding_scale_grad_by_freq_like_torch():
    compare_module(lambda nn: nn.Embedding(NUM, DIM, scale_grad_by_freq=True, padding_idx=0),
                   [np.array([[1, 2, 2], [0, 2, 1], [5, 0, 9]])])


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq_like_torch(mode):
    # Every index occurs twice: torch's CPU kernel reads the count of the i-th smallest index for the
    # i-th distinct index, which is the right count only when all counts are equal.
    compare_module(lambda nn: nn.EmbeddingBag(NUM, DIM, mode=mode, scale_grad_by_freq=True),
                   [np.array([4, 1, 1, 7, 4, 7]), np.array([0, 1, 4])])


def test_embedding_bag_scale_grad_by_freq_divides_by_the_count():
    w = tp_tensor(WEIGHT, requires_grad=True)
    idx = tp_tensor(np.array([1, 2, 2, 2, 3]))
    tensorplay.nn.functional.embedding_bag(idx, w, tp_tensor(np.array([0, 2])), mode="sum", scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy()[[1, 2, 3]], np.ones((3, DIM)), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("call, kind", [
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="median"),
                 ValueError, id="bad_mode"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="mean",
                                                            per_sample_weights=m.ones(2)),
                 NotImplementedError, id="per_sample_weights_not_sum"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]),
                                                            per_sample_weights=m.ones(3)),
                 ValueError, id="per_sample_weights_shape"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([[1, 2]]), w, m.tensor([0])), ValueError,
                 id="2d_input_with_offsets"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w), ValueError, id="1d_no_offsets"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([[[1]]]), w), ValueError, id="3d_input"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w[0], m.tensor([0])), ValueError,
                 id="1d_weight"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([1])), RuntimeError,
                 id="first_offset_not_0"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([0, 3])), RuntimeError,
                 id="offset_past_end"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), padding_idx=10),
                 RuntimeError, id="padding_idx_out_of_range"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="max",
                                                            scale_grad_by_freq=True),
                 ValueError, id="max_scale_grad_by_freq"),
    pytest.param(lambda m, w: m.nn.functional.embedding_bag(m.tensor([1.0, 2.0]), w, m.tensor([0])), RuntimeError,
                 id="float_indices"),
    pytest.param(lambda m, w: m.nn.EmbeddingBag(4, 2, padding_idx=4), AssertionError, id="module_padding_idx"),
    pytest.param(lambda m, w: m.nn.EmbeddingBag(4, 2, _weight=m.zeros(3, 2)), AssertionError, id="module_weight"),
])
def test_embedding_bag_errors_like_torch(call, kind):
    for m in (torch, tensorplay):
        with pytest.raises(kind):
            call(m, m.from_numpy(WEIGHT.copy()))

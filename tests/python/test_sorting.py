"""sort, argsort, topk and kthvalue beyond the op table's small samples: lines long enough to be
sorted in parallel, every dim of a 3-D tensor, ties kept in order by the stable sort, the result
types, and gradients through the selected values."""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import to_numpy


def both(values):
    return tensorplay.from_numpy(values.copy()), torch.from_numpy(values.copy())


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_of_long_lines_with_ties_matches_torch(dim, descending):
    x = np.random.default_rng(dim).integers(-50, 50, (40, 300, 7)).astype(np.float32)
    x[3, 5, :] = np.nan
    ours, theirs = both(x)
    got = tensorplay.sort(ours, dim=dim, descending=descending, stable=True)
    want = torch.sort(theirs, dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(to_numpy(got.values), to_numpy(want.values))
    np.testing.assert_array_equal(to_numpy(got.indices), to_numpy(want.indices))


@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_long_lines_matches_torch(largest):
    x = np.random.default_rng(1).permutation(64 * 2000).reshape(64, 2000).astype(np.float64)
    ours, theirs = both(x)
    got, want = tensorplay.topk(ours, 17, largest=largest), torch.topk(theirs, 17, largest=largest)
    np.testing.assert_array_equal(to_numpy(got.values), to_numpy(want.values))
    np.testing.assert_array_equal(to_numpy(got.indices), to_numpy(want.indices))


def test_results_are_named_tuples_and_methods_exist():
    t = tensorplay.tensor([[3.0, 1.0, 2.0]])
    values, indices = t.sort(descending=True)
    assert type(t.sort()).__name__ == "sort" and t.sort().values.tolist() == [[1.0, 2.0, 3.0]]
    assert indices.tolist() == [[0, 2, 1]] and values.tolist() == [[3.0, 2.0, 1.0]]
    assert type(t.topk(1)).__name__ == "topk" and t.topk(1).indices.tolist() == [[0]]
    assert type(t.kthvalue(2)).__name__ == "kthvalue" and t.kthvalue(2).values.tolist() == [2.0]
    assert t.argsort(dim=1).tolist() == [[1, 2, 0]] and t.msort().tolist() == [[3.0, 1.0, 2.0]]


@pytest.mark.parametrize("op, args, node", [
    ("sort", (1, True), "SortBackward0"),
    ("topk", (2, 0), "TopkBackward0"),
    ("kthvalue", (2, 1, False), "KthvalueBackward0"),
    ("kthvalue", (3, 0, True), "KthvalueBackward0"),
])
def test_gradient_reaches_the_selected_elements(op, args, node):
    x = np.random.default_rng(3).permutation(20).reshape(4, 5).astype(np.float32)
    grads = []
    for lib in (tensorplay, torch):
        t = lib.tensor(x, requires_grad=True)
        values = getattr(lib, op)(t, *args).values
        assert type(values.grad_fn).__name__ == node
        (values * lib.arange(values.numel()).reshape(values.shape)).sum().backward()
        grads.append(to_numpy(t.grad))
    np.testing.assert_array_equal(*grads)


def test_bfloat16_autocast_keeps_the_input_dtype():
    t = tensorplay.randn(3, 5)
    with tensorplay.autocast("cpu"):
        assert tensorplay.sort(t).values.dtype == tensorplay.float32
        assert tensorplay.topk(t.bfloat16(), 2).values.dtype == tensorplay.bfloat16


@pytest.mark.parametrize("call, error", [
    (lambda m: m.topk(m.tensor([1.0, 2.0]), 3), RuntimeError),
    (lambda m: m.topk(m.tensor([1.0, 2.0]), -1), RuntimeError),
    (lambda m: m.topk(m.tensor([True, False]), 1), RuntimeError),
    (lambda m: m.kthvalue(m.tensor([1.0, 2.0]), 0), RuntimeError),
    (lambda m: m.kthvalue(m.tensor([True, False]), 1), NotImplementedError),
    (lambda m: m.kthvalue(m.zeros(2, 0), 1, dim=1), IndexError),
    (lambda m: m.sort(m.tensor([1.0, 2.0]), 2), IndexError),
    (lambda m: m.argsort(m.tensor([1.0, 2.0]), -2), IndexError),
])
def test_bad_arguments_raise_as_in_torch(call, error):
    for lib in (torch, tensorplay):
        with pytest.raises(error):
            call(lib)

"""Training with sparse gradients against torch: an Embedding(sparse=True) (or embedding_bag) gives
its weight a sparse COO gradient with one entry per lookup (the padding row's left out); SGD (plain,
with momentum, Nesterov, maximize), Adagrad and SparseAdam step on it to torch's numbers, and the
optimizers that take no sparse gradients refuse them with torch's messages."""

import numpy as np
import pytest
import torch

import tensorplay

LIBS = (torch, tensorplay)

# torch's sparse optimizers build sparse tensors without checking them, and say so once.
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")


def embedding(lib, padding_idx=2):
    e = lib.nn.Embedding(10, 3, sparse=True, padding_idx=padding_idx)
    with lib.no_grad():
        e.weight.copy_(lib.tensor(np.linspace(-2, 2, 30).reshape(10, 3), dtype=lib.float32))
    return e


LOOKUPS = [[0, 2, 3], [3, 4, 0]]


def test_the_gradient_is_one_entry_per_lookup():
    grads = []
    for lib in LIBS:
        e = embedding(lib)
        (e(lib.tensor(LOOKUPS)) * lib.arange(6.0).reshape(2, 3, 1)).sum().backward()
        g = e.weight.grad
        assert g.is_sparse and g.layout == lib.sparse_coo and not g.is_coalesced()
        grads.append((g._indices().numpy(), g._values().numpy(), tuple(g.shape), g.to_dense().numpy()))
    for theirs, ours in zip(*grads):
        np.testing.assert_array_equal(ours, theirs)


def test_gradients_of_two_backward_passes_add_up():
    dense = []
    for lib in LIBS:
        e = embedding(lib, padding_idx=None)
        e(lib.tensor([1, 5])).sum().backward()
        e(lib.tensor([5, 7])).pow(2).sum().backward()
        assert e.weight.grad.is_sparse
        dense.append(e.weight.grad.to_dense().numpy())
    np.testing.assert_allclose(dense[1], dense[0], rtol=1e-6)


OPTIMIZERS = {
    "sgd": lambda lib, p: lib.optim.SGD(p, lr=0.1),
    "sgd maximize": lambda lib, p: lib.optim.SGD(p, lr=0.1, maximize=True),
    "momentum": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1),
    "nesterov": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "momentum maximize": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.5, maximize=True),
    "adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5),
    "adagrad maximize": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, maximize=True),
    "sparse adam": lambda lib, p: lib.optim.SparseAdam(p, lr=0.1),
    "sparse adam maximize": lambda lib, p: lib.optim.SparseAdam(p, lr=0.05, betas=(0.8, 0.9), maximize=True),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_trajectory_matches_torch(name):
    weights = []
    for lib in LIBS:
        e = embedding(lib)
        opt = OPTIMIZERS[name](lib, e.parameters())
        for step in range(4):
            opt.zero_grad()
            x = lib.tensor(LOOKUPS) if step % 2 == 0 else lib.tensor([[5, 5, 1]])
            (e(x) ** 2).sum().backward()
            opt.step()
        weights.append(e.weight.detach().numpy())
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-5, atol=1e-6)


def test_sparse_adam_leaves_untouched_rows_alone():
    e = embedding(tensorplay, padding_idx=None)
    before = e.weight.detach().clone()
    opt = tensorplay.optim.SparseAdam(e.parameters(), lr=0.1)
    e(tensorplay.tensor([1, 4])).sum().backward()
    opt.step()
    changed = (e.weight.detach() != before).any(1).nonzero().flatten().tolist()
    assert changed == [1, 4]
    assert opt.state[e.weight]["step"] == 1


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.Adam(p), lambda lib, p: lib.optim.AdamW(p), lambda lib, p: lib.optim.RMSprop(p),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, weight_decay=0.1),
    lambda lib, p: lib.optim.Adagrad(p, weight_decay=0.1),
], ids=["adam", "adamw", "rmsprop", "sgd weight decay", "adagrad weight decay"])
def test_optimizers_without_sparse_support_refuse_like_torch(make):
    messages = []
    for lib in LIBS:
        e = embedding(lib)
        e(lib.tensor(LOOKUPS)).sum().backward()
        with pytest.raises(RuntimeError) as error:
            make(lib, e.parameters()).step()
        messages.append(str(error.value))
    assert messages[1] == messages[0]


def test_sparse_gradient_under_autocast():
    e = embedding(tensorplay)
    with tensorplay.autocast("cpu"):
        out = tensorplay.nn.Linear(3, 2)(e(tensorplay.tensor(LOOKUPS)))
    out.float().sum().backward()
    assert e.weight.grad.is_sparse and e.weight.grad.dtype == tensorplay.float32


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_bag_gradient_is_sparse(mode, padding_idx):
    grads = []
    for lib in LIBS:
        weight = lib.tensor(np.arange(12.0).reshape(6, 2), dtype=lib.float32, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor([1, 2, 4, 5, 4, 3]), weight, lib.tensor([0, 2, 4]),
                                               mode=mode, sparse=True, padding_idx=padding_idx)
        (out * lib.arange(6.0).reshape(3, 2)).sum().backward()
        assert weight.grad.is_sparse
        grads.append(weight.grad.to_dense().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)

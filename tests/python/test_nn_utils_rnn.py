"""tensorplay.nn.utils.rnn against torch.nn.utils.rnn: padded batches of sequences, their
gradients, and errors."""

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import LIBS

LENGTHS = [3, 5, 1, 5]


def sequences(m, dtype="float32", trailing=(2,), requires_grad=False):
    rng = np.random.default_rng(0)
    out = []
    for n in LENGTHS:
        values = m.from_numpy(rng.standard_normal((n,) + trailing).astype(np.float32)).to(getattr(m, dtype))
        out.append(values.requires_grad_(requires_grad) if requires_grad else values)
    return out


def as_numpy(t):
    return t.detach().double().numpy()


@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
def test_pad_sequence_matches_torch(dtype, batch_first, padding_side):
    kwargs = dict(batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    ours = tp.nn.utils.rnn.pad_sequence(sequences(tp, dtype), **kwargs)
    theirs = torch.nn.utils.rnn.pad_sequence(sequences(torch, dtype), **kwargs)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(as_numpy(ours), as_numpy(theirs))


def test_pad_sequence_takes_the_first_sequences_dtype_and_a_tensor_as_its_rows():
    for m in (tp, torch):
        mixed = m.nn.utils.rnn.pad_sequence([m.ones(2), m.ones(3, dtype=m.float64)])
        assert str(mixed.dtype).endswith("float32")
        assert tuple(m.nn.utils.rnn.pad_sequence(m.ones(2, 3)).shape) == (3, 2)


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_gradients_match_torch(padding_side):
    weights = np.arange(2 * 5 * 4 * 1.0).reshape(5, 4, 2).astype(np.float32)
    grads = []
    for m in (tp, torch):
        seqs = sequences(m, requires_grad=True)
        padded = m.nn.utils.rnn.pad_sequence(seqs, padding_side=padding_side)
        (padded * m.from_numpy(weights)).sum().backward()
        grads.append([as_numpy(s.grad) for s in seqs])
    for ours, theirs in zip(*grads):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_undoes_pad_sequence(batch_first):
    for m in (tp, torch):
        seqs = sequences(m)
        padded = m.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first)
        back = m.nn.utils.rnn.unpad_sequence(padded, m.tensor(LENGTHS), batch_first=batch_first)
        assert [tuple(s.shape) for s in back] == [tuple(s.shape) for s in seqs]
        for a, b in zip(back, seqs):
            np.testing.assert_array_equal(as_numpy(a), as_numpy(b))


def test_invert_permutation_matches_torch():
    perm = [3, 0, 4, 1, 2]
    ours = tp.nn.utils.rnn.invert_permutation(tp.tensor(perm))
    theirs = torch.nn.utils.rnn.invert_permutation(torch.tensor(perm))
    assert ours.tolist() == theirs.tolist() and str(ours.dtype) == "tensorplay.int64"
    assert tp.nn.utils.rnn.invert_permutation(None) is None


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call, match", [
    (lambda m: m.nn.utils.rnn.pad_sequence([]), "empty list"),
    (lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2)], padding_side="middle"), "padding_side"),
    (lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2, 3), m.ones(3, 4)]), None),
], ids=["empty", "padding_side", "trailing_dims_differ"])
def test_pad_sequence_errors(m, call, match):
    with pytest.raises(RuntimeError, match=match):
        call(m)

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


# ---- PackedSequence: pack_padded_sequence, pad_packed_sequence, pack_sequence, unpack_sequence ----

def padded(m, batch_first=False, requires_grad=False):
    """A [T=5, B=4, 2] batch (batch_first: [4, 5, 2]) of distinct values."""
    values = np.arange(5 * 4 * 2, dtype=np.float32).reshape(5, 4, 2)
    if batch_first:
        values = values.transpose(1, 0, 2).copy()
    return m.from_numpy(values).requires_grad_(requires_grad)


def assert_packed_same(ours, theirs):
    assert type(ours).__name__ == "PackedSequence" and isinstance(ours, tuple)
    np.testing.assert_array_equal(as_numpy(ours.data), as_numpy(theirs.data))
    assert str(ours.data.dtype).split(".")[-1] == str(theirs.data.dtype).split(".")[-1]
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert str(ours.batch_sizes.dtype) == "tensorplay.int64" and ours.batch_sizes.device.type == "cpu"
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a is None and b is None) or a.tolist() == b.tolist(), name


@pytest.mark.parametrize("lengths, enforce_sorted", [
    ([5, 3, 3, 1], True), ([2, 5, 1, 5], False), ([1, 1, 1, 1], False), ([5, 5, 5, 5], True)])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True], ids=["list", "tensor"])
def test_pack_padded_sequence_matches_torch(lengths, enforce_sorted, batch_first, as_tensor):
    packs = []
    for m in (tp, torch):
        lens = m.tensor(lengths) if as_tensor else lengths
        packs.append(m.nn.utils.rnn.pack_padded_sequence(padded(m, batch_first), lens, batch_first=batch_first,
                                                         enforce_sorted=enforce_sorted))
    assert_packed_same(*packs)


@pytest.mark.parametrize("total_length", [None, 7])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pad_packed_sequence_matches_torch_and_passes_gradients(enforce_sorted, batch_first, total_length):
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    results = []
    for m in (tp, torch):
        x = padded(m, batch_first, requires_grad=True)
        packed = m.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
        out, lens = m.nn.utils.rnn.pad_packed_sequence(packed, batch_first, padding_value=-2.5,
                                                       total_length=total_length)
        weights = np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape))
        (out * m.from_numpy(weights)).sum().backward()
        results.append((as_numpy(out), lens.tolist(), str(lens.dtype).split(".")[-1], as_numpy(x.grad)))
    ours, theirs = results
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack_sequence_match_torch(enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else LENGTHS
    results = []
    for m in (tp, torch):
        seqs = [m.from_numpy(np.full((n, 2), float(i), dtype=np.float32)) for i, n in enumerate(lengths)]
        packed = m.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=enforce_sorted)
        results.append((packed, [as_numpy(s) for s in m.nn.utils.rnn.unpack_sequence(packed)]))
    assert_packed_same(results[0][0], results[1][0])
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)


def test_packed_sequence_conversions_and_construction():
    packed = tp.nn.utils.rnn.pack_sequence([tp.ones(3, 2), tp.ones(1, 2)], enforce_sorted=False)
    assert packed.float() is packed and packed.to(tp.float32) is packed and packed.cpu() is packed
    doubled = packed.double()
    assert str(doubled.data.dtype) == "tensorplay.float64" and doubled.batch_sizes is packed.batch_sizes
    assert doubled.sorted_indices.tolist() == packed.sorted_indices.tolist()
    assert str(packed.long().data.dtype) == "tensorplay.int64" and not packed.is_cuda
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    # unsorted_indices is derived from sorted_indices; (data, batch_sizes) may come as one pair.
    again = tp.nn.utils.rnn.PackedSequence((data, batch_sizes), sorted_indices=tp.tensor([1, 0]))
    assert again.batch_sizes is batch_sizes and again.unsorted_indices.tolist() == [1, 0]
    assert tp.nn.utils.rnn.PackedSequence(data, batch_sizes).unsorted_indices is None


@pytest.mark.parametrize("m", LIBS)
@pytest.mark.parametrize("call, error, match", [
    (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [3, 5, 1]), RuntimeError,
     "must be sorted in decreasing order when `enforce_sorted` is True"),
    (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [5, 3, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [0, 3, 5], enforce_sorted=False),
     RuntimeError, "Length of all samples has to be greater than 0"),
    (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3, 2), [5, 3]), RuntimeError,
     r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
    (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(0, 3, 2), [3, 2, 1]), RuntimeError,
     "Cannot pack empty tensors."),
    (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3), m.tensor([[5, 3, 1]])), RuntimeError,
     "'lengths' argument should be a 1D CPU int64 tensor"),
    (lambda m: m.nn.utils.rnn.pad_packed_sequence(
        m.nn.utils.rnn.pack_padded_sequence(m.zeros(5, 3), [5, 3, 1]), total_length=4), ValueError,
     "Expected total_length to be at least the length of the longest sequence in input, but got "
     "total_length=4 and max sequence length being 5"),
    (lambda m: m.nn.utils.rnn.pack_sequence([]), RuntimeError, "empty list"),
], ids=["unsorted", "zero_length", "zero_length_unsorted", "lengths_count", "empty", "lengths_2d",
        "total_length", "pack_empty_list"])
def test_packing_errors(m, call, error, match):
    with pytest.raises(error, match=match):
        call(m)


def test_packing_integer_sequences_matches_torchs_documented_example():
    results = []
    for m in (tp, torch):
        seq = m.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
        packed = m.nn.utils.rnn.pack_padded_sequence(seq, [2, 1, 3], batch_first=True, enforce_sorted=False)
        unpacked, lengths = m.nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)
        results.append((packed, unpacked.tolist(), lengths.tolist(), str(unpacked.dtype).split(".")[-1]))
    assert_packed_same(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:]
    assert results[0][1] == [[1, 2, 0], [3, 0, 0], [4, 5, 6]]

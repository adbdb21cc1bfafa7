"""tensorplay.nn.utils.rnn: batches of sequences of different lengths, padded to the longest or
packed step by step (PackedSequence, which the recurrent layers take and give).

Written as composites of stack, cat and indexing, so their gradients come from those ops. Lengths
and batch sizes are short CPU lists, so sorting them and counting them happens in Python.
"""

from collections import namedtuple

import tensorplay as tp

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
    "unpad_sequence", "pack_sequence", "unpack_sequence",
]


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of sequences stored step by step: data holds, for each time step, the entries of the
    sequences still running (longest first), batch_sizes (a CPU int64 tensor) how many there are at
    each step. sorted_indices is the order the batch was sorted into (None when it came sorted) and
    unsorted_indices its inverse. Made by pack_padded_sequence and pack_sequence, not by hand."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            # PackedSequence((data, batch_sizes), sorted_indices=...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                "manually. They should be instantiated by functions like pack_sequence and "
                "pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """data.to(*args, **kwargs), the indices following it to its device; self when data is unchanged.
        batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move), _bind(self.unsorted_indices, move))

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None):
        return self.to(device="cuda" if device is None else device)

    def double(self):
        return self.to(dtype=tp.float64)

    def float(self):
        return self.to(dtype=tp.float32)

    def half(self):
        return self.to(dtype=tp.float16)

    def long(self):
        return self.to(dtype=tp.int64)

    def int(self):
        return self.to(dtype=tp.int32)

    def short(self):
        return self.to(dtype=tp.int16)

    def char(self):
        return self.to(dtype=tp.int8)

    def byte(self):
        return self.to(dtype=tp.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    return tp.scatter(tp.empty_like(permutation), 0, permutation,
                      tp.arange(0, permutation.numel(), dtype=permutation.dtype, device=permutation.device))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors of shape [L_i, *] into [max L, B, *] ([B, max L, *] when batch_first), each
    padded with padding_value on padding_side. The result has the first sequence's dtype."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)  # a tensor is the sequence of its rows
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        s = s.to(first.dtype)
        padding = first.new_full((longest - s.shape[0],) + tuple(s.shape[1:]), padding_value)
        padded.append(tp.cat([s, padding] if padding_side == "right" else [padding, s]))
    return tp.stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences pad_sequence padded: the first lengths[i] steps of batch entry i."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(length)] for i, length in enumerate(lengths)]


def _lengths_list(lengths):
    """lengths (a list or a 1-D CPU tensor) as a list of Python ints."""
    if not isinstance(lengths, tp.Tensor):
        return [int(n) for n in lengths]
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {lengths.device.type} {lengths.dtype} tensor")
    return lengths.to(tp.int64).tolist()


def _batch_sizes(lengths):
    """How many of the sequences (lengths non-increasing) are still running at each step."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] when batch_first) whose entry b is lengths[b]
    steps long. With enforce_sorted=False the batch is sorted longest first (stably) and the
    permutation kept in the result; otherwise lengths must already be non-increasing."""
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lengths)), key=lambda b: -lengths[b])
        lengths = [lengths[b] for b in order]
        sorted_indices = tp.tensor(order, dtype=tp.int64, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = input.size(1)
    if len(lengths) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch_size})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability.")
    batch_sizes = _batch_sizes(lengths)
    # One unbind (not an index per step) keeps backward to a single gradient buffer for input.
    steps = input.unbind(0)
    data = tp.cat([steps[t][:n] for t, n in enumerate(batch_sizes)])
    return PackedSequence(data, tp.tensor(batch_sizes, dtype=tp.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch [T, B, *] ([B, T, *] when batch_first) and the lengths (int64) a
    PackedSequence holds, in the batch's original order; T is total_length when given."""
    batch_sizes = sequence.batch_sizes.tolist()
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch_size = batch_sizes[0]
    steps = []
    for step in data.split(batch_sizes):
        n = step.size(0)
        if n < batch_size:
            step = tp.cat([step, data.new_full((batch_size - n,) + tuple(data.shape[1:]), padding_value)])
        steps.append(step)
    padded = tp.stack(steps)
    if max_seq_length > len(batch_sizes):
        tail = data.new_full((max_seq_length - len(batch_sizes), batch_size) + tuple(data.shape[1:]), padding_value)
        padded = tp.cat([padded, tail])
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = [sum(1 for n in batch_sizes if n > b) for b in range(batch_size)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = [lengths[b] for b in sequence.unsorted_indices.tolist()]
    return padded, tp.tensor(lengths, dtype=tp.int64)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors [L_i, *]; pad_sequence then pack_padded_sequence."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors [L_i, *] a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

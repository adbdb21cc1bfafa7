"""tensorplay.nn.utils.rnn: batches of sequences of different lengths, padded to the longest.

Written as composites of stack, cat and indexing, so their gradients come from those ops.
"""

import tensorplay as tp

__all__ = ["pad_sequence", "unpad_sequence", "invert_permutation"]


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

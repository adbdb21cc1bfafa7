"""Lookups: embeddings, bags of embeddings and one-hot encodings."""

import math

import tensorplay
from tensorplay._C import _nn

__all__ = ["embedding", "embedding_bag", "one_hot"]


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    out = _nn.embedding(input, weight, padding_idx, bool(sparse))
    if scale_grad_by_freq:
        _scale_grad_by_freq(out, input, weight.size(0))
    return out


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    """PyTorch's embedding_renorm_: each row that input looks up and whose norm exceeds max_norm is
    scaled in place, outside autograd, to norm max_norm (a hair under: the norm gets 1e-7 added)."""
    with tensorplay.no_grad():
        index = input.reshape(-1)
        rows = weight.index_select(0, index)
        norms = tensorplay.linalg.vector_norm(rows, norm_type, dim=1, keepdim=True)
        scale = tensorplay.where(norms > max_norm, max_norm / (norms + 1e-7), tensorplay.ones_like(norms))
        # A repeated index writes the same row twice.
        weight.index_copy_(0, index, rows * scale)


def _scale_grad_by_freq(looked_up, input, num_embeddings):
    """Divides the gradient that each looked-up row sends back to the weight by how often its index
    occurs in input, as scale_grad_by_freq asks (looked_up: one row per element of input)."""
    if not looked_up.requires_grad:
        return
    index = input.reshape(-1)
    counts = tensorplay.zeros(num_embeddings, dtype=tensorplay.float32, device=input.device)
    counts = counts.scatter_add(0, index, tensorplay.ones_like(index, dtype=tensorplay.float32))
    freq = counts.index_select(0, index).reshape(*input.shape, 1)
    looked_up.register_hook(lambda grad: grad / freq.to(grad.dtype))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sum, mean or max of each bag of embeddings, without building the (bags, length, dim) tensor of
    an embedding followed by a reduction, except for max, which pads the bags to the longest."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = tensorplay.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    for name, t in (("indices", input), ("offsets", offsets)):
        if t.dtype not in (tensorplay.int64, tensorplay.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                               f"Long, Int; but got {t.dtype} instead (while checking arguments for embedding_bag)")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if padding_idx is not None:
        if not -weight.size(0) <= padding_idx < weight.size(0):
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{weight.size(0)} through "
                               f"{weight.size(0) - 1}, but got {padding_idx}")
        padding_idx %= weight.size(0)

    count, dim = input.numel(), weight.size(1)
    input, offsets = input.to(tensorplay.int64), offsets.to(tensorplay.int64)
    bags = offsets.numel() - 1 if include_last_offset else offsets.numel()
    _check_offsets(offsets, count)
    starts = offsets[:bags]
    end = offsets[bags:].reshape(-1) if include_last_offset else None
    # The bag of each index: a mark at each bag's start, summed along the input.
    marks = tensorplay.zeros(count + 1, dtype=tensorplay.int64, device=input.device)
    marks = marks.scatter_add(0, starts.clamp(max=count), tensorplay.ones_like(starts))
    bag = (tensorplay.cumsum(marks[:count], 0) - 1).clamp(min=0)
    position = tensorplay.arange(count, device=input.device)
    kept = position < end if end is not None else tensorplay.ones_like(input, dtype=tensorplay.bool)
    if padding_idx is not None:
        kept = kept & (input != padding_idx)

    # A sparse lookup gives the weight a sparse gradient, one entry per index looked up.
    rows = _nn.embedding(input, weight, None, True) if sparse else weight.index_select(0, input)
    if scale_grad_by_freq:
        _scale_grad_by_freq(rows, input, weight.size(0))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    rows = tensorplay.where(kept.unsqueeze(1), rows, tensorplay.zeros_like(rows))
    sizes = tensorplay.zeros(bags, dtype=weight.dtype, device=weight.device).scatter_add(0, bag, kept.to(weight.dtype))
    if mode == "max":
        return _bag_max(rows, bag, position - starts.index_select(0, bag), kept, sizes, bags)
    out = weight.new_zeros((bags, dim)).scatter_add(0, bag.unsqueeze(1).expand(count, dim), rows)
    if mode == "mean":
        out = out / sizes.clamp(min=1).unsqueeze(1)
    return out


def _check_offsets(offsets, count):
    if offsets.numel() == 0 or offsets.device.type == "meta":
        return
    first, last = offsets[0].item(), offsets[-1].item()
    if first != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {first}")
    if last > count:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {count} but got offsets[-1] of {last}")


def _bag_max(rows, bag, position, kept, sizes, bags):
    """The elementwise max of each bag: its rows placed in a (bags, longest, dim) tensor padded with -inf,
    so that the gradient goes to the row that holds each maximum; an empty bag is zeros."""
    dim = rows.size(1)
    longest = int(position.max().item()) + 1 if position.numel() else 0
    kept_at = kept.nonzero().reshape(-1)
    slots = (bag * longest + position).index_select(0, kept_at)
    padded = tensorplay.full((bags * longest, dim), -math.inf, dtype=rows.dtype, device=rows.device)
    padded = padded.scatter(0, slots.unsqueeze(1).expand(slots.numel(), dim), rows.index_select(0, kept_at))
    values = padded.reshape(bags, longest, dim).max(1).values if longest else rows.new_zeros((bags, dim))
    return tensorplay.where(sizes.unsqueeze(1) > 0, values, tensorplay.zeros_like(values))


def one_hot(tensor, num_classes=-1):
    return _nn.one_hot(tensor, num_classes)

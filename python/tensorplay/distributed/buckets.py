"""How DDP groups gradients into buckets (torch.distributed's _compute_bucket_assignment_by_size), and
the bucket a communication hook is given (GradBucket)."""

__all__ = ["GradBucket", "bucket_indices", "_compute_bucket_assignment_by_size"]


class GradBucket:
    """What a communication hook is given: one bucket's flat gradient buffer and its parameters."""

    def __init__(self, index, buffer, parameters, gradients, is_last):
        self._index, self._buffer, self._parameters = index, buffer, parameters
        self._gradients, self._is_last = gradients, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer.copy_(buffer)

    def gradients(self):
        """Each parameter's gradient, as a view into the buffer."""
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._is_last



def bucket_indices(sizes_and_dtypes, limits, order=None):
    """Buckets of tensor indices, as torch.distributed's _compute_bucket_assignment_by_size makes
    them: tensors taken in turn, one open bucket per dtype, a bucket closed once it holds its limit's
    bytes, each dtype's limits taken in turn (the last repeats). order[i] is the index the i-th
    tensor goes by (default: i). Without an order the buckets are sorted by their smallest index;
    with one, they stay in the order they were closed, then the ones still open. Returns
    (buckets, limits)."""
    in_index_order = order is None
    order = list(range(len(sizes_and_dtypes))) if order is None else list(order)
    closed, open_buckets = [], {}
    for position, index in enumerate(order):
        nbytes, dtype = sizes_and_dtypes[position]
        bucket = open_buckets.setdefault(dtype, {"indices": [], "bytes": 0, "limit": 0})
        bucket["indices"].append(index)
        bucket["bytes"] += nbytes
        limit = limits[min(bucket["limit"], len(limits) - 1)]
        if bucket["bytes"] >= limit:
            closed.append((bucket["indices"], limit))
            open_buckets[dtype] = {"indices": [], "bytes": 0, "limit": bucket["limit"] + 1}
    # The buckets still open follow, last dtype seen first (the order PyTorch's hash map, keyed by
    # dtype, lists them in).
    for bucket in reversed([b for b in open_buckets.values() if b["indices"]]):
        closed.append((bucket["indices"], limits[min(bucket["limit"], len(limits) - 1)]))
    if in_index_order:
        closed.sort(key=lambda bucket: min(bucket[0]))
    return [b[0] for b in closed], [b[1] for b in closed]


def _compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(), tensor_indices=()):
    """torch.distributed._compute_bucket_assignment_by_size: see bucket_indices."""
    sizes = [(t.numel() * t.element_size(), t.dtype) for t in tensors]
    return bucket_indices(sizes, list(bucket_size_limits), list(tensor_indices) or None)

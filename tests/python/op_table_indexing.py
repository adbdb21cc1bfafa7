"""Op-table rows of the torch namespace's indexing composites (tensorplay/_composites/indexing.py).

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import numpy as np

from op_table import ALL_DTYPES, INT_DTYPES, DType, Op, S, method, other_dtype

# Results whose shape depends on the values (masked_select, repeat_interleave by a tensor): meta cannot make
# them, in PyTorch either, so test_meta's check of gradients on meta (float32 rows that run there, i.e. whose
# first dtype is float32) cannot apply. float64 comes first; float32 still runs in test_ops and test_gradients.
VALUE_SHAPED_DTYPES = ("float64",) + tuple(d for d in ALL_DTYPES if d != "float64")


def triangle_samples(mk):
    return [
        S("2d", mk((3, 4))),
        S("above", mk((4, 3)), 1),
        S("below", mk((3, 4)), -1),
        S("far_above", mk((3, 4)), 5),
        S("batched", mk((2, 3, 4)), -2),
        S("transposed", mk.transposed((3, 4)), 1),
        S("empty", mk((0, 3))),
        S("1d", mk((4,))),
    ]


def triangle_indices_samples(mk):
    """A sample tensor gives the device (so that the meta device reaches these factories), then (row, col, ...)."""
    return [
        S("square", mk(()), 3, 3),
        S("wide_offset", mk(()), 3, 5, 1),
        S("tall_negative_offset", mk(()), 5, 3, -2),
        S("empty", mk(()), 0, 3),
        S("int32", mk(()), 4, 4, dtype=DType("int32")),
        S("float_dtype", mk(()), 3, 3, dtype=DType("float32")),
        S("negative_row", mk(()), -1, 3),
    ]


def on_device_of(factory):
    return lambda m, t, *args, **kwargs: getattr(m, factory)(*args, device=t.device, **kwargs)


def diag_samples(mk):
    return [
        S("1d", mk((4,))),
        S("1d_above", mk((3,)), 2),
        S("2d", mk((3, 4))),
        S("2d_below", mk((4, 3)), -1),
        S("transposed", mk.transposed((3, 4)), 1),
        S("2d_past_the_end", mk((3, 4)), 5),
        S("3d", mk((2, 2, 2))),
        S("0dim", mk(())),
    ]


def scatter_view_samples(mk):
    """(input, src, ...) for diagonal_scatter."""
    return [
        S("main", mk((3, 4)), mk((3,))),
        S("above", mk((3, 4)), mk((3,)), 1),
        S("dims", mk((2, 3, 3)), mk((2, 3)), -1, 1, 2),
        S("transposed", mk.transposed((3, 4)), mk((2,)), -1),
        S("other_dtype_src", mk((3, 3)), mk((3,), dtype=other_dtype(mk.dtype))),
        S("wrong_size", mk((3, 4)), mk((2,))),
        S("same_dims", mk((3, 3)), mk((3,)), 0, 1, 1),
    ]


def as_strided_scatter_by_definition(m, input, src, size, stride, storage_offset=None):
    """torch.as_strided_scatter as it computes: src copied into the view of a copy of input with input's
    strides and storage offset. torch 2.13's op itself gives input the gradient of the scattered positions
    instead of the others' (it fails torch's gradcheck: torch.autograd.gradcheck(lambda x, s:
    torch.as_strided_scatter(x, s, (3,), (4,)), (x, s)) for float64 x (3, 3) and s (3,)), so the rows
    compare with this; test_composites_indexing.py compares the values with torch's op itself."""
    extent = 0 if input.numel() == 0 else 1 + sum((n - 1) * step for n, step in zip(input.shape, input.stride()))
    storage = m.empty(input.storage_offset() + extent, dtype=input.dtype)
    out = storage.as_strided(input.shape, input.stride(), input.storage_offset()).copy_(input)
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def index(values, dtype=np.int64):
    return np.array(values, dtype)


ROWS = [
    Op("tril", triangle_samples, inplace=True),
    Op("triu", triangle_samples, inplace=True),
    Op("tril_indices", triangle_indices_samples, dtypes=("int64",), fn=on_device_of("tril_indices")),
    Op("triu_indices", triangle_indices_samples, dtypes=("int64",), fn=on_device_of("triu_indices")),
    Op("diag", diag_samples),
    Op("diagflat", lambda mk: [
        S("2d", mk((2, 2))),
        S("offset", mk((3,)), -2),
        S("0dim", mk(())),
        S("transposed", mk.transposed((2, 3)), 1),
    ]),
    Op("diag_embed", lambda mk: [
        S("2d", mk((2, 3))),
        S("offset", mk((2, 3)), 1),
        S("dims", mk((2, 3)), -1, 0, 2),
        S("1d", mk((3,))),
        S("same_dims", mk((2, 3)), 0, 1, 1),
        S("0dim", mk(())),
    ]),
    Op("diagonal_scatter", scatter_view_samples),
    Op("select_scatter", lambda mk: [
        S("dim0", mk((3, 4)), mk((4,)), 0, 1),
        S("negative", mk((2, 3, 4)), mk((2, 3)), -1, -1),
        S("transposed", mk.transposed((3, 4)), mk((3,)), 1, 2),
        S("other_dtype_src", mk((3, 4)), mk((4,), dtype=other_dtype(mk.dtype)), 0, 0),
        S("out_of_range", mk((3, 4)), mk((4,)), 0, 3),
        S("wrong_size", mk((3, 4)), mk((3,)), 0, 0),
    ]),
    Op("slice_scatter", lambda mk: [
        S("dim0", mk((4, 3)), mk((2, 3)), 0, 1, 3),
        S("step", mk((3, 6)), mk((3, 3)), 1, None, None, 2),
        S("negative_start", mk((3, 4)), mk((3, 2)), -1, -2),
        S("defaults", mk((3, 4)), mk((3, 4))),
        S("clamped_end", mk((3, 4)), mk((2, 4)), 0, 1, 100),
        S("transposed", mk.transposed((3, 4)), mk((3, 1)), 1, 3),
        S("zero_step", mk((3, 4)), mk((3, 4)), 0, 0, 3, 0),
        S("wrong_size", mk((3, 4)), mk((2, 4)), 0, 0, 1),
    ]),
    Op("as_strided_scatter", lambda mk: [
        S("diagonal", mk((3, 3)), mk((3,)), (3,), (4,)),
        S("offset", mk((3, 4)), mk((2, 2)), (2, 2), (4, 1), 5),
        S("wrong_size", mk((3, 3)), mk((2,)), (3,), (4,)),
    ], fn=lambda m, *args, **kwargs: m.as_strided_scatter(*args, **kwargs), torch_fn=as_strided_scatter_by_definition),
    Op("take", lambda mk: [
        S("2d_index", mk((3, 4)), index([[0, 5, 11], [3, 3, 7]])),
        S("negative", mk((3, 4)), index([-1, -12, 2])),
        S("0dim_index", mk((3, 4)), index(6)),
        S("empty_index", mk((3, 4)), index([])),
        S("transposed", mk.transposed((3, 4)), index([1, 4, 10])),
        S("out_of_range", mk((3, 4)), index([0, 12])),
        S("out_of_range_negative", mk((3, 4)), index([-13])),
        S("int32_index", mk((3, 4)), index([1], np.int32)),
    ]),
    Op("take_along_dim", lambda mk: [
        S("dim1", mk((3, 4)), mk.index((3, 2), 4), 1),
        S("flat", mk((3, 4)), mk.index((5,), 12)),
        S("broadcast", mk((3, 1, 4)), mk.index((1, 2, 3), 4), -1),
        S("transposed", mk.transposed((3, 4)), mk.index((2, 4), 3), 0),
        S("wrapped_index", mk((3, 4)), index([[5], [-1], [-5]]), 1),
        S("flat_out_of_range", mk((3, 4)), index([12])),
        S("rank_mismatch", mk((3, 4)), index([1]), 1),
        S("int32_index", mk((3, 4)), index([[1]], np.int32), 1),
    ]),
    Op("put", lambda mk: [
        S("distinct", mk((3, 4)), index([0, 11, 5]), mk((3,))),
        S("accumulate_repeats", mk((3, 4)), index([[1, 1], [-1, 1]]), mk((2, 2)), True),
        S("negative", mk((3, 4)), index([-2]), mk((1,))),
        S("transposed", mk.transposed((3, 4)), index([1, 2]), mk((2,)), True),
        S("out_of_range", mk((3, 4)), index([12]), mk((1,))),
        S("numel_mismatch", mk((3, 4)), index([1, 2]), mk((3,))),
        S("dtype_mismatch", mk((3, 4)), index([1]), mk((1,), dtype=other_dtype(mk.dtype))),
    ], inplace=True),
    Op("index_add", lambda mk: [
        S("dim0_repeats", mk((3, 4)), 0, index([0, 2, 0]), mk((3, 4))),
        S("dim1", mk((3, 4)), 1, index([3, 1]), mk((3, 2))),
        S("alpha", mk((3, 4)), -1, index([1, 1]), mk((3, 2)), alpha=2),
        S("int32_index", mk((3, 4)), 0, index([2], np.int32), mk((1, 4))),
        S("0dim", mk(()), 0, index([0, 0]), mk((2,))),
        S("0dim_source", mk(()), 0, index([0]), mk(())),
        S("transposed", mk.transposed((3, 4)), 1, index([0]), mk.transposed((3, 1))),
        S("out_of_range", mk((3, 4)), 0, index([3]), mk((1, 4))),
        S("negative_index", mk((3, 4)), 0, index([-1]), mk((1, 4))),
        S("shape_mismatch", mk((3, 4)), 0, index([1]), mk((1, 3))),
        S("dtype_mismatch", mk((3, 4)), 0, index([1]), mk((1, 4), dtype=other_dtype(mk.dtype))),
        S("2d_index", mk((3, 4)), 0, index([[1]]), mk((1, 4))),
    ], inplace=True),
    Op("index_fill", lambda mk: [
        S("int_value", mk((3, 4)), 1, index([0, 2]), 2),
        S("float_value", mk((3, 4)), 0, index([1]), -1.5),
        S("tensor_value", mk((3, 4)), 1, index([3, 3]), mk(())),
        S("negative_index", mk((3, 4)), -1, index([-1]), 1),
        S("0dim_index", mk((3, 4)), 0, index(2), 0),
        S("0dim", mk(()), 0, index([0]), 1),
        S("transposed", mk.transposed((3, 4)), 0, index([0, 2]), 1),
        S("out_of_range", mk((3, 4)), 1, index([4]), 1),
        S("int32_index", mk((3, 4)), 1, index([1], np.int32), 1),
        S("1d_tensor_value", mk((3, 4)), 1, index([1]), mk((1,))),
    ], inplace=True),
]


def index_reduce_samples(mk):
    return [
        S("dim0_repeats", mk((3, 4)), 0, index([0, 2, 0]), mk((3, 4))),
        S("dim1_exclude_self", mk((3, 4)), 1, index([3, 1, 3]), mk((3, 3)), include_self=False),
        S("int32_index", mk((3, 4)), 0, index([1, 1], np.int32), mk((2, 4))),
        S("0dim", mk(()), 0, index([0, 0]), mk((2,))),
        S("transposed", mk.transposed((3, 4)), 1, index([0, 0]), mk.transposed((3, 2))),
        S("out_of_range", mk((3, 4)), 0, index([3]), mk((1, 4))),
        S("dtype_mismatch", mk((3, 4)), 0, index([1]), mk((1, 4), dtype=other_dtype(mk.dtype))),
        S("shape_mismatch", mk((3, 4)), 0, index([1]), mk((2, 4))),
    ]


def scatter_reduce_samples(mk):
    return [
        S("dim1_repeats", mk((3, 4)), 1, mk.index((3, 5), 4), mk((3, 5))),
        S("dim0_exclude_self", mk((3, 4)), 0, mk.index((4, 4), 3), mk((4, 4)), include_self=False),
        S("smaller_index", mk((3, 4)), 1, mk.index((2, 3), 4), mk((3, 5))),
        S("0dim", mk(()), 0, index([0, 0]), mk((2,))),
        S("transposed", mk.transposed((3, 4)), 0, mk.index((2, 4), 3), mk.transposed((2, 4))),
        S("empty_index", mk((3, 4)), 1, index(np.zeros((3, 0))), mk((3, 2))),
        S("out_of_range", mk((3, 4)), 1, index([[4]]), mk((1, 1))),
        S("index_too_large", mk((3, 4)), 0, mk.index((4, 5), 3), mk((4, 4))),
        S("dtype_mismatch", mk((3, 4)), 1, index([[1]]), mk((1, 1), dtype=other_dtype(mk.dtype))),
    ]


REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
ROWS += [Op("index_reduce", index_reduce_samples, label=f"index_reduce.{reduce}", inplace=True,
            kwargs={"reduce": reduce}, dtypes=ALL_DTYPES) for reduce in REDUCTIONS[1:]]
ROWS += [Op("scatter_reduce", scatter_reduce_samples, label=f"scatter_reduce.{reduce}", inplace=True,
            kwargs={"reduce": reduce}, dtypes=ALL_DTYPES) for reduce in REDUCTIONS]

ROWS += [
    Op("masked_scatter", lambda mk: [
        S("2d", mk((3, 4)), mk.mask((3, 4)), mk((12,))),
        S("source_2d_larger", mk((3, 4)), mk.mask((3, 4)), mk((4, 5))),
        S("broadcast_mask", mk((3, 4)), mk.mask((1, 4)), mk((12,))),
        S("broadcast_input", mk((1, 4)), mk.mask((3, 4)), mk((12,))),
        S("0dim", mk(()), np.array(True), mk((1,))),
        S("empty", mk((0, 4)), mk.mask((0, 4)), mk((0,))),
        S("transposed", mk.transposed((3, 4)), mk.mask((3, 4)), mk((12,))),
        S("source_too_small", mk((3, 4)), np.ones((3, 4), bool), mk((11,))),
        S("uint8_mask", mk((3, 4)), mk((3, 4), dtype="uint8", domain=(0, 1)), mk((12,))),
        S("dtype_mismatch", mk((3, 4)), mk.mask((3, 4)), mk((12,), dtype=other_dtype(mk.dtype))),
    ], inplace=True),
    Op("masked_select", lambda mk: [
        S("2d", mk((3, 4)), mk.mask((3, 4))),
        S("broadcast", mk((3, 1)), mk.mask((1, 4))),
        S("0dim", mk(()), np.array(True)),
        S("empty", mk((0, 4)), mk.mask((0, 4))),
        S("transposed", mk.transposed((3, 4)), mk.mask((3, 4))),
        S("uint8_mask", mk((3, 4)), mk((3, 4), dtype="uint8", domain=(0, 1))),
    ], dtypes=VALUE_SHAPED_DTYPES),
    Op("nonzero_static", lambda mk: [
        S("truncated", mk((3, 4)), size=2),
        S("padded", mk((3, 4)), size=15),
        S("fill_value", mk((2, 3)), size=8, fill_value=7),
        S("0dim", mk(()), size=2),
        S("transposed", mk.transposed((3, 4)), size=5),
        S("negative_size", mk((3, 4)), size=-1),
    ], domain=(-1, 1), integers=True),
    Op("argwhere", lambda mk: [
        S("2d", mk((3, 4))),
        S("0dim", mk(())),
        S("empty", mk((0, 3))),
        S("transposed", mk.transposed((3, 4))),
    ], domain=(-1, 1), integers=True),
    Op("unravel_index", lambda mk: [
        S("1d", mk((5,)), (3, 4)),
        S("2d", mk((2, 3)), (2, 2, 3)),
        S("0dim", mk(()), (12,)),
        S("int_shape", mk((4,)), 5),
        S("float_indices", mk((2,), dtype="float32"), (3, 4)),
        S("negative_shape", mk((2,)), (-3, 4)),
    ], dtypes=INT_DTYPES, domain=(0, 11)),
    Op("repeat_interleave", lambda mk: [
        S("flat", mk((2, 3)), 2),
        S("dim0", mk((2, 3)), 3, 0),
        S("negative_dim", mk((2, 3)), 2, -1),
        S("zero", mk((2, 3)), 0, 1),
        S("output_size", mk((2, 3)), 2, 0, output_size=4),
        S("0dim", mk(()), 3),
        S("transposed", mk.transposed((2, 3)), 2, 1),
        S("negative_repeats", mk((2, 3)), -1),
        S("wrong_output_size", mk((2, 3)), 2, 0, output_size=5),
    ]),
    Op("repeat_interleave", lambda mk: [
        S("dim0", mk((3, 2)), index([1, 0, 2]), 0),
        S("dim1_int32", mk((2, 3)), index([2, 1, 1], np.int32), 1),
        S("flat", mk((2, 2)), index([1, 2, 0, 1])),
        S("one_repeat", mk((2, 3)), index([2]), 1),
        S("0dim_repeat", mk((2, 3)), index(3), 0),
        S("output_size", mk((3, 2)), index([1, 0, 2]), 0, output_size=3),
        S("negative", mk((3, 2)), index([1, -1, 2]), 0),
        S("wrong_size", mk((3, 2)), index([1, 2]), 0),
        S("float_repeats", mk((3, 2)), np.ones(3, np.float32), 0),
        S("2d_repeats", mk((3, 2)), index([[1, 1, 1]]), 0),
    ], label="repeat_interleave.tensor", dtypes=VALUE_SHAPED_DTYPES),
    Op("repeat_interleave", lambda mk: [
        S("1d", index([1, 0, 3])),
        S("zeros", index([0, 0])),
        S("int32", index([2, 1], np.int32)),
        S("empty", index([])),
        S("output_size", index([1, 2]), output_size=3),
        S("0dim", index(2)),
        S("negative", index([1, -1])),
    ], label="repeat_interleave.repeats_only", dtypes=("int64",), method=False),
    Op("fill_diagonal_", lambda mk: [
        S("wide", mk((3, 4)), 2),
        S("tall", mk((5, 2)), -1.5),
        S("tall_wrap", mk((7, 2)), 1, wrap=True),
        S("square_wrap", mk((3, 3)), True, wrap=True),
        S("3d", mk((2, 2, 2)), 0),
        S("transposed", mk.transposed((4, 3)), 3),
        S("unequal_3d", mk((2, 2, 3)), 1),
        S("1d", mk((3,)), 1),
    ], label="Tensor.fill_diagonal_", fn=method("fill_diagonal_"), returns_self=True),
    Op("index_put", lambda mk: [
        S("one_index", mk((3, 4)), [index([0, 2])], mk((4,))),
        S("accumulate", mk((3, 4)), [index([1, 1]), index([0, 0])], mk((2,)), True),
        S("out_of_range", mk((3, 4)), [index([3])], mk(())),
    ], label="Tensor.index_put", fn=method("index_put")),
    Op("index_put_", lambda mk: [
        S("one_index", mk((3, 4)), [index([0, 2])], mk((4,))),
        S("accumulate", mk((3, 4)), [index([1, 1]), index([0, 0])], mk((2,)), True),
    ], method=False, returns_self=True),
]

GRADIENT_LABELS = """
    tril triu diag diagflat diag_embed diagonal_scatter select_scatter slice_scatter as_strided_scatter
    take take_along_dim put index_add index_fill
    index_reduce.prod index_reduce.mean index_reduce.amax index_reduce.amin
    scatter_reduce.sum scatter_reduce.prod scatter_reduce.mean scatter_reduce.amax scatter_reduce.amin
    masked_scatter masked_select repeat_interleave repeat_interleave.tensor Tensor.fill_diagonal_
    Tensor.index_put index_put_
""".split()

INDEX_RESULT = "integer result (indices): not differentiable"
NOT_DIFFERENTIABLE = {
    "tril_indices": INDEX_RESULT,
    "triu_indices": INDEX_RESULT,
    "nonzero_static": INDEX_RESULT,
    "argwhere": INDEX_RESULT,
    "unravel_index": INDEX_RESULT,
    "repeat_interleave.repeats_only": INDEX_RESULT,
}

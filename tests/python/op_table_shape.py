"""Op-table rows of the torch namespace's shape composites (tensorplay/_composites/shape.py).

They move elements without looking at them, so they run in op_table's SHAPE_DTYPES (one dtype per
element size, and bool); kron multiplies and sum_to_size sums, so they run in every dtype.
GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

from op_table import SHAPE_DTYPES, DType, Op, S, View, method


def shape_op(name, samples, **kw):
    return Op(name, samples, dtypes=SHAPE_DTYPES, **kw)


def in_place(name, samples):
    """A Tensor method that changes its input's geometry in place and returns it."""
    return shape_op(name, samples, label=f"Tensor.{name}", fn=method(name), returns_self=True)


def atleast_samples(mk):
    return [
        S("0dim", mk(())),
        S("1d", mk((3,))),
        S("2d", mk((2, 3))),
        S("3d", mk((2, 3, 4))),
        S("several", mk(()), mk((3,)), mk((2, 3))),
        S("list", [mk((2,)), mk(())]),
        S("transposed", mk.transposed((3, 4))),
    ]


def stack_samples(mk):
    return [
        S("1d", [mk((2,)), mk((3,))]),
        S("2d", [mk((2, 3)), mk((2, 3))]),
        S("0dim", [mk(()), mk(())]),
        S("3d", [mk((2, 3, 4)), mk((2, 3, 4))]),
        S("noncontig", [mk.transposed((2, 3)), mk.strided((2, 3))]),
        S("mixed_dtype", [mk((2, 3)), mk((2, 3), dtype="float64")]),  # promotes as cat does
        S("shape_mismatch", [mk((2, 3)), mk((3, 4))]),
        S("no_tensors", []),
    ]


def column_stack_samples(mk):
    return [
        S("1d", [mk((3,)), mk((3,))]),
        S("mixed_ranks", [mk((3,)), mk((3, 2)), mk((3,))]),
        S("0dim", [mk(()), mk(())]),
        S("mixed_dtype", [mk((2,)), mk((2, 2), dtype="float64")]),
        S("shape_mismatch", [mk((3,)), mk((2, 2))]),
        S("no_tensors", []),
    ]


def direction_split(name):
    def samples(mk):
        x = mk((4, 6, 2))
        return [
            S("sections", x, 2),
            S("indices", x, [1, 3]),
            S("indices_past_end", x, [3, 1, 9]),
            S("1d", mk((6,)), 3),
            S("not_divisible", x, 5),
            S("zero_sections", x, 0),
            S("too_few_dims", mk(()), 1),
            S("noncontig", View(mk((2, 6, 4)), lambda t: t.transpose(0, 2)), 2),
        ]
    return shape_op(name, samples)


def tensor_split_samples(mk):
    return [
        S("sections", mk((7, 3)), 3),
        S("sections_dim1", mk((3, 7)), 4, 1),
        S("more_sections_than_size", mk((2, 3)), 5),
        S("indices", mk((7, 3)), [1, 5]),
        S("indices_unsorted_negative", mk((3, 7)), [5, 2, -1, 9], 1),
        S("zero_sections", mk((7, 3)), 0),
        S("0dim", mk(()), 2),
        S("empty", mk((0, 3)), 2),
        S("transposed", mk.transposed((3, 4)), 2, 1),
        S("out_of_range", mk((3, 4)), 2, 2),
    ]


def split_sizes_samples(mk):
    return [
        S("dim0", mk((5, 3)), [2, 3]),
        S("dim1", mk((3, 4)), [1, 0, 3], 1),
        S("negative_dim", mk((3, 4)), [2, 2], -1),
        S("bad_sum", mk((3, 4)), [1, 1]),
        S("negative_size", mk((3, 4)), [4, -1]),
        S("transposed", mk.transposed((3, 4)), [1, 3]),
        S("0dim", mk(()), [1]),
    ]


ROWS = [
    shape_op("atleast_1d", atleast_samples),
    shape_op("atleast_2d", atleast_samples),
    shape_op("atleast_3d", atleast_samples),
    shape_op("hstack", stack_samples),
    shape_op("vstack", stack_samples),
    shape_op("row_stack", stack_samples),
    shape_op("dstack", stack_samples),
    shape_op("column_stack", column_stack_samples),
    direction_split("hsplit"),
    direction_split("vsplit"),
    direction_split("dsplit"),
    shape_op("tensor_split", tensor_split_samples),
    # The sections or indices as a tensor, made in fn: it stays on the CPU when the input goes to meta,
    # as PyTorch requires of it.
    shape_op("tensor_split", lambda mk: [
        S("sections", mk((7, 3)), 3),
        S("indices", mk((3, 7)), [2, 4], -1),
        S("int32", mk((7, 3)), [2], dtype=DType("int32")),
        S("2d", mk((7, 3)), [[2]]),
    ], label="tensor_split.tensor", fn=lambda m, x, split, *args, dtype=None:
        m.tensor_split(x, m.tensor(split, dtype=dtype or m.int64), *args)),
    shape_op("split_with_sizes", split_sizes_samples),
    shape_op("unsafe_split_with_sizes", split_sizes_samples),
    shape_op("unsafe_split", lambda mk: [
        S("int", mk((5, 4)), 2),
        S("int_dim1", mk((3, 4)), 3, 1),
        S("empty", mk((0, 4)), 2, 1),
        S("zero", mk((3, 4)), 0),
        S("0dim", mk(()), 1),
    ]),
    shape_op("unsafe_chunk", lambda mk: [
        S("even", mk((4, 3)), 2),
        S("uneven", mk((5, 3)), 2),
        S("negative_dim", mk((3, 4)), 3, -1),
        S("empty", mk((0, 3)), 2),
        S("zero_chunks", mk((3, 4)), 0),
    ]),
    shape_op("tile", lambda mk: [
        S("2d", mk((2, 3)), (2, 2)),
        S("fewer_dims", mk((2, 3)), (3,)),
        S("more_dims", mk((2, 3)), (2, 1, 2)),
        S("0dim", mk(()), (3,)),
        S("empty_dims", mk((2, 3)), ()),
        S("transposed", mk.transposed((2, 3)), (2, 1)),
        S("negative", mk((2, 3)), (-1,)),
    ]),
    shape_op("roll", lambda mk: [
        S("flat", mk((3, 4)), 5),
        S("dim1", mk((3, 4)), 1, 1),
        S("negative_shift", mk((3, 4)), -7, 0),
        S("dims", mk((2, 3, 4)), (1, -2), (0, 2)),
        S("same_dim_twice", mk((3, 4)), (1, 1), (0, 0)),
        S("0dim", mk(()), 2),
        S("0dim_dim0", mk(()), 2, 0),
        S("empty", mk((0, 3)), 1, 1),
        S("transposed", mk.transposed((3, 4)), 2, 0),
        S("misaligned", mk((3, 4)), (1, 2), 0),
        S("out_of_range", mk((3, 4)), 1, 2),
    ]),
    shape_op("rot90", lambda mk: [
        S("default", mk((3, 4))),
        S("k2", mk((3, 4)), 2),
        S("k3_dims", mk((2, 3, 4)), 3, (2, 0)),
        S("negative_k", mk((3, 4)), -1),
        S("k0", mk((3, 4)), 4),
        S("transposed", mk.transposed((3, 4)), 1),
        S("one_dim", mk((3,))),
        S("same_dims", mk((3, 4)), 1, (0, -2)),
        S("three_dims", mk((2, 3, 4)), 1, (0, 1, 2)),
        S("out_of_range", mk((3, 4)), 1, (0, 2)),
    ]),
    shape_op("fliplr", lambda mk: [S("2d", mk((3, 4))), S("3d", mk((2, 3, 4))), S("1d", mk((3,))),
                                   S("transposed", mk.transposed((3, 4)))]),
    shape_op("flipud", lambda mk: [S("2d", mk((3, 4))), S("1d", mk((3,))), S("0dim", mk(())),
                                   S("transposed", mk.transposed((3, 4)))]),
    shape_op("moveaxis", lambda mk: [
        S("forward", mk((2, 3, 4)), 0, 2),
        S("tuples", mk((2, 3, 4)), (0, 1), (2, 0)),
        S("out_of_range", mk((2, 3)), 2, 0),
    ]),
    shape_op("ravel", lambda mk: [S("2d", mk((2, 3))), S("0dim", mk(())), S("transposed", mk.transposed((3, 4)))]),
    Op("kron", lambda mk: [
        S("2d", mk((2, 3)), mk.other((3, 2))),
        S("1d", mk((3,)), mk.other((2,))),
        S("mixed_ranks", mk((2, 2)), mk.other((2, 1, 3))),
        S("0dim", mk(()), mk.other((2,))),
        S("empty", mk((0, 2)), mk.other((2, 2))),
        # Both transposed: torch raises for one transposed operand (it views its product, laid out
        # like that operand, as the result); tensorplay returns the product there.
        S("noncontig", mk.transposed((2, 3)), mk.transposed((2, 2))),
        S("mixed_dtype", mk((2, 2)), mk.other((2,), dtype="float64")),
    ]),
    shape_op("meshgrid", lambda mk: [
        S("two", mk((3,)), mk((4,))),
        S("three", mk((2,)), mk(()), mk((3,))),
        S("list", [mk((3,)), mk((2,))]),
        S("one", mk((3,))),
        S("2d_input", mk((3,)), mk((2, 2))),
        S("mixed_dtype", mk((3,)), mk((2,), dtype="float64")),
    ], label="meshgrid.ij", fn=lambda m, *ts: m.meshgrid(*ts, indexing="ij")),
    shape_op("meshgrid", lambda mk: [
        S("two", mk((3,)), mk((4,))),
        S("three", mk((2,)), mk((4,)), mk((3,))),
        S("one", mk((3,))),
        S("bad_indexing", mk((3,)), indexing="yx"),
    ], label="meshgrid.xy", fn=lambda m, *ts, indexing="xy": m.meshgrid(*ts, indexing=indexing)),
    shape_op("cartesian_prod", lambda mk: [
        S("two", mk((3,)), mk((2,))),
        S("three", mk((2,)), mk((2,)), mk((3,))),
        S("one", mk((3,))),
        S("empty", mk((0,)), mk((2,))),
        S("2d_input", mk((2, 2))),
        S("no_tensors"),
    ]),
    shape_op("combinations", lambda mk: [
        S("default", mk((4,))),
        S("r3", mk((5,)), 3),
        S("with_replacement", mk((3,)), 2, True),
        S("r1", mk((3,)), 1),
        S("r0", mk((3,)), 0),
        S("r_too_large", mk((3,)), 4),
        S("empty", mk((0,))),
        S("strided", mk.strided((4,))),
        S("2d", mk((2, 2))),
        S("negative_r", mk((3,)), -1),
    ]),
    shape_op("block_diag", lambda mk: [
        S("2d", mk((2, 3)), mk((1, 2))),
        S("ranks", mk(()), mk((3,)), mk((2, 2))),
        S("one", mk((2, 3))),
        S("empty_blocks", mk((0,)), mk((2, 0)), mk((1, 1))),
        S("mixed_dtype", mk((2, 2)), mk((1,), dtype="float64")),
        S("noncontig", mk.transposed((2, 3)), mk.strided((2, 2))),
        S("3d", mk((2, 2, 2))),
    ]),
    # The *_copy forms.
    shape_op("alias_copy", lambda mk: [S("2d", mk((2, 3))), S("transposed", mk.transposed((3, 4)))]),
    shape_op("detach_copy", lambda mk: [S("2d", mk((2, 3))), S("transposed", mk.transposed((3, 4)))]),
    shape_op("as_strided_copy", lambda mk: [
        S("2d", mk((3, 4)), (2, 2), (1, 2)),
        S("offset", mk((3, 4)), (2, 3), (4, 1), 1),
        S("overlapping", mk((6,)), (3, 3), (1, 1)),
    ]),
    shape_op("diagonal_copy", lambda mk: [
        S("default", mk((3, 4))),
        S("offset", mk((3, 4)), 1),
        S("dims", mk((2, 3, 4)), -1, 2, 0),
        S("out_of_range", mk((3, 4)), 0, 0, 2),
    ]),
    shape_op("expand_copy", lambda mk: [
        S("2d", mk((3, 1)), (3, 4)),
        S("new_dims", mk((3, 1)), (2, -1, 4)),
        S("implicit", mk((3, 1)), (3, 4), implicit=True),
        S("bad_size", mk((3, 2)), (3, 4)),
    ]),
    shape_op("narrow_copy", lambda mk: [
        S("dim1", mk((3, 5)), 1, 1, 3),
        S("negative_start", mk((3, 5)), 1, -2, 2),
        S("transposed", mk.transposed((3, 4)), 0, 1, 2),
        S("out_of_range", mk((3, 5)), 1, 4, 2),
    ]),
    shape_op("permute_copy", lambda mk: [
        S("3d", mk((2, 3, 4)), (2, 0, 1)),
        S("repeated_dim", mk((2, 3, 4)), (0, 0, 1)),
    ]),
    shape_op("select_copy", lambda mk: [
        S("dim1", mk((3, 4)), 1, 2),
        S("negative", mk((3, 4)), -1, -1),
        S("out_of_range", mk((3, 4)), 0, 5),
    ]),
    shape_op("slice_copy", lambda mk: [
        S("default", mk((3, 4))),
        S("dim1_step", mk((3, 5)), 1, 1, 5, 2),
        S("negative_bounds", mk((3, 5)), -1, -4, -1),
        S("past_end", mk((3, 5)), 0, 1, 10),
        S("end_before_start", mk((3, 5)), 1, 3, 1),
        S("transposed", mk.transposed((3, 4)), 1, 1),
        S("zero_step", mk((3, 4)), 0, 0, 2, 0),
        S("0dim", mk(())),
        S("out_of_range", mk((3, 4)), 2),
    ]),
    shape_op("split_copy", lambda mk: [
        S("int", mk((5, 4)), 2),
        S("int_dim1", mk((3, 4)), 3, 1),
        S("transposed", mk.transposed((3, 4)), 2, 1),
    ]),
    shape_op("split_with_sizes_copy", lambda mk: [
        S("dim1", mk((3, 4)), [1, 0, 3], 1),
        S("bad_sum", mk((3, 4)), [1, 1]),
    ]),
    shape_op("squeeze_copy", lambda mk: [
        S("all", mk((1, 3, 1, 2))),
        S("dim", mk((1, 3, 1, 2)), 2),
        S("dims", mk((1, 3, 1, 2)), (0, 2)),
        S("out_of_range", mk((1, 3)), 2),
    ]),
    shape_op("t_copy", lambda mk: [S("2d", mk((2, 3))), S("1d", mk((3,))), S("3d", mk((2, 3, 4)))]),
    shape_op("transpose_copy", lambda mk: [
        S("3d", mk((2, 3, 4)), 0, 2),
        S("transposed", mk.transposed((3, 4)), 0, 1),
        S("out_of_range", mk((2, 3)), 0, 2),
    ]),
    shape_op("unbind_copy", lambda mk: [S("dim0", mk((3, 4))), S("dim1", mk((3, 4)), 1), S("0dim", mk(()))]),
    shape_op("unfold_copy", lambda mk: [
        S("dim1", mk((3, 7)), 1, 3, 2),
        S("too_large", mk((3, 4)), 1, 5, 1),
    ]),
    shape_op("unsqueeze_copy", lambda mk: [S("front", mk((2, 3)), 0), S("out_of_range", mk((2, 3)), 3)]),
    shape_op("view_copy", lambda mk: [
        S("2d", mk((2, 3, 4)), (6, 4)),
        S("infer", mk((2, 3, 4)), (4, -1)),
        S("transposed", mk.transposed((3, 4)), (12,)),  # not expressible as a view: raises
        S("dtype", mk((2, 4), dtype="int16"), DType("bfloat16")),
        S("bad_size", mk((2, 3)), (5,)),
    ]),
    # Tensor methods.
    shape_op("unfold", lambda mk: [
        S("windows", mk((3, 7)), 1, 3, 2),
        S("overlapping", mk((8,)), 0, 4, 1),
        S("dim0", mk((5, 2)), 0, 2, 3),
        S("negative_dim", mk((2, 6)), -1, 6, 1),
        S("0dim", mk(()), 0, 1, 1),
        S("empty_windows", mk((3, 4)), 1, 0, 1),
        S("transposed", mk.transposed((4, 5)), 1, 2, 2),
        S("too_large", mk((3, 4)), 1, 5, 1),
        S("zero_step", mk((3, 4)), 1, 2, 0),
        S("negative_size", mk((3, 4)), 1, -1, 1),
        S("out_of_range", mk((3, 4)), 2, 1, 1),
    ], label="Tensor.unfold", fn=method("unfold")),
    Op("sum_to_size", lambda mk: [
        S("keepdim", mk((2, 3)), 1, 3),
        S("leading", mk((4, 2, 3)), (2, 3)),
        S("both", mk((4, 2, 3)), (1, 3)),
        S("same", mk((2, 3)), (2, 3)),
        S("transposed", mk.transposed((3, 4)), 3, 1),
        S("not_expandable", mk((2, 3)), (4, 2, 3)),
        S("bad_size", mk((2, 3)), (2, 2)),
    ], label="Tensor.sum_to_size", fn=method("sum_to_size")),
    # In-place view ops.
    in_place("t_", lambda mk: [S("2d", mk((2, 3))), S("1d", mk((3,))), S("3d", mk((2, 3, 4)))]),
    in_place("transpose_", lambda mk: [S("3d", mk((2, 3, 4)), 0, 2), S("transposed", mk.transposed((3, 4)), 0, 1),
                                       S("out_of_range", mk((2, 3)), 0, 2)]),
    in_place("swapaxes_", lambda mk: [S("3d", mk((2, 3, 4)), 0, 2), S("out_of_range", mk((2, 3)), 0, 2)]),
    in_place("swapdims_", lambda mk: [S("3d", mk((2, 3, 4)), -1, 0), S("out_of_range", mk((2, 3)), 0, 2)]),
    in_place("squeeze_", lambda mk: [
        S("all", mk((1, 3, 1, 2))),
        S("dim", mk((1, 3, 1, 2)), 2),
        S("dims", mk((1, 3, 1, 2)), (0, 2)),
        S("out_of_range", mk((1, 3)), 2),
    ]),
    in_place("unsqueeze_", lambda mk: [S("front", mk((2, 3)), 0), S("negative", mk((2, 3)), -1),
                                       S("out_of_range", mk((2, 3)), 3)]),
    in_place("as_strided_", lambda mk: [S("2d", mk((3, 4)), (2, 2), (1, 2)),
                                        S("offset", mk((3, 4)), (2, 3), (4, 1), 1)]),
]

GRADIENT_LABELS = """
    atleast_1d atleast_2d atleast_3d hstack vstack row_stack dstack column_stack hsplit vsplit dsplit tensor_split
    tensor_split.tensor split_with_sizes unsafe_split_with_sizes unsafe_split unsafe_chunk tile roll rot90 fliplr
    flipud moveaxis ravel kron meshgrid.ij meshgrid.xy cartesian_prod combinations block_diag
    alias_copy as_strided_copy diagonal_copy expand_copy narrow_copy permute_copy select_copy slice_copy split_copy
    split_with_sizes_copy squeeze_copy t_copy transpose_copy unbind_copy unfold_copy unsqueeze_copy view_copy
    Tensor.unfold Tensor.sum_to_size
    Tensor.t_ Tensor.transpose_ Tensor.swapaxes_ Tensor.swapdims_ Tensor.squeeze_ Tensor.unsqueeze_ Tensor.as_strided_
""".split()

NOT_DIFFERENTIABLE = {
    "detach_copy": "its result is detached from its input's history",
}

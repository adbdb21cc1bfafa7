"""The op-table rows of nn.functional's normalization family (see op_table.py), and of the convolutions
that tensorplay composes from the 2-D kernels (conv3d, conv_transpose3d, conv_tbc). The dropout forms are
random and have no rows; test_nn_norm_dropout_conv3d.py checks them."""

from op_table import FLOAT_DTYPES, Op, S


def nn_functional(name, samples, dtypes=FLOAT_DTYPES, contiguous_for_torch=False, **kw):
    """A row for torch.nn.functional.<name>, called by that path in both libraries (torch's module-level
    function of the same name, where there is one, takes other arguments).

    contiguous_for_torch: torch's implementation views its input where it would need a reshape, so it
    raises "view size is not compatible" for some strided layouts (an accident of the implementation,
    not a contract); torch is then given a contiguous copy of the input (same values), tensorplay the
    strided input itself."""
    def fn(m, *args, **kwargs):
        return getattr(m.nn.functional, name)(*args, **kwargs)

    def torch_fn(m, *args, **kwargs):
        if args and isinstance(args[0], m.Tensor):
            args = (args[0].contiguous(),) + args[1:]
        return fn(m, *args, **kwargs)

    return Op(name, samples, dtypes=dtypes, method=False, fn=fn,
              torch_fn=torch_fn if contiguous_for_torch else None, **kw)


# The convolutions sum tens of products: torch's 16-bit kernels and the 2-D kernels tensorplay composes
# them from round the partial sums differently, by an ulp or two of the sum (inputs are kept in [-1, 1]).
CONV_TOLERANCES = {"bfloat16": (3e-2, 5e-2), "float16": (3e-3, 5e-3)}


def positive(mk, shape):
    """Running variances."""
    return mk(shape, domain=(0.5, 2))


ROWS = [
    nn_functional("instance_norm", lambda mk: [
        S("3d", mk((2, 3, 5))),
        S("4d_affine", mk((2, 3, 4, 3)), weight=mk((3,)), bias=mk((3,))),
        S("5d", mk((1, 2, 2, 3, 2))),
        S("running_stats", mk((2, 3, 5)), mk((3,)), positive(mk, (3,)), momentum=0.2),
        S("eval_with_running_stats", mk((2, 3, 5)), mk((3,)), positive(mk, (3,)), mk((3,)), mk((3,)),
          use_input_stats=False),
        S("eps", mk((2, 3, 4)), eps=0.5),
        S("transposed", mk.transposed((2, 3, 5))),
        S("one_spatial_element", mk((2, 3, 1))),
        S("wrong_running_stats_size", mk((2, 3, 5)), mk((2,)), positive(mk, (2,))),
    ], tol={"bfloat16": (2e-2, 2e-2), "float16": (2e-3, 2e-3)}),
    nn_functional("local_response_norm", lambda mk: [
        S("3d", mk((2, 5, 4)), 3),
        S("4d", mk((2, 6, 3, 3)), 4, alpha=0.5, beta=0.6, k=2.0),
        S("5d", mk((1, 4, 2, 2, 3)), 2, alpha=0.3),
        S("size_above_channels", mk((2, 3, 4)), 5, alpha=0.2),
        S("transposed", mk.transposed((2, 5, 4)), 3),
        S("empty", mk((0, 3, 4)), 3),
        S("2d", mk((3, 4)), 2),
    # torch's 16-bit local_response_norm raises for 4-D and wider input (its CPU avg_pool3d has no
    # float16/bfloat16 kernel); tensorplay computes it. test_nn_norm_dropout_conv3d checks 3-D bfloat16.
    ], dtypes=("float32", "float64"), contiguous_for_torch=True),  # torch views 4-D and wider input
    nn_functional("rms_norm", lambda mk: [
        S("last_dim", mk((3, 4)), (4,)),
        S("two_dims_weight", mk((2, 3, 4)), (3, 4), mk((3, 4))),
        S("eps", mk((2, 5)), (5,), eps=1e-3),
        S("int_shape", mk((2, 5)), 5),
        S("transposed", mk.transposed((3, 4)), [4], mk((4,))),
        S("shape_mismatch", mk((3, 4)), (5,)),
        S("weight_mismatch", mk((3, 4)), (4,), mk((3,))),
    ], tol={"bfloat16": (2e-2, 1e-3)}),
    nn_functional("conv3d", lambda mk: [
        S("basic", mk((1, 2, 2, 3, 3)), mk((2, 2, 2, 2, 2)), mk((2,))),  # small: gradcheck runs it
        S("stride_padding_dilation", mk((1, 2, 6, 5, 6)), mk((4, 2, 3, 2, 2)), None, stride=(2, 1, 2),
          padding=(1, 0, 1), dilation=(2, 1, 1)),
        S("groups", mk((1, 4, 3, 4, 4)), mk((6, 2, 2, 2, 2)), groups=2),
        S("same", mk((1, 2, 4, 4, 4)), mk((2, 2, 2, 3, 3)), padding="same"),
        S("unbatched", mk((2, 3, 4, 4)), mk((2, 2, 2, 2, 2)), mk((2,))),
        S("transposed", mk.transposed((1, 1, 2, 3, 4)), mk((2, 1, 2, 2, 2))),
        S("wrong_channels", mk((1, 3, 3, 3, 3)), mk((2, 2, 1, 1, 1))),
        S("3d_input", mk((3, 3, 3)), mk((2, 3, 1, 1, 1))),
    ], domain=(-1, 1), tol=CONV_TOLERANCES),
    nn_functional("conv_transpose3d", lambda mk: [
        S("basic", mk((1, 2, 2, 3, 3)), mk((2, 1, 2, 2, 2)), mk((1,))),  # small: gradcheck runs it
        S("stride_output_padding_groups", mk((1, 4, 2, 3, 3)), mk((4, 2, 3, 2, 2)), None, stride=2, padding=1,
          output_padding=1, groups=2),
        S("dilation", mk((1, 2, 3, 3, 3)), mk((2, 3, 2, 2, 2)), dilation=(2, 1, 2), padding=(1, 0, 0)),
        S("unbatched", mk((2, 3, 3, 3)), mk((2, 2, 2, 2, 2))),
        S("transposed", mk.transposed((1, 1, 2, 3, 4)), mk((1, 2, 2, 2, 2))),
        S("wrong_channels", mk((1, 3, 3, 3, 3)), mk((2, 2, 1, 1, 1))),
    ], domain=(-1, 1), tol=CONV_TOLERANCES),
    nn_functional("conv_tbc", lambda mk: [
        S("basic", mk((5, 2, 3)), mk((3, 3, 4)), mk((4,))),
        S("pad", mk((5, 2, 3)), mk((2, 3, 4)), mk((4,)), 1),
        S("wrong_channels", mk((5, 2, 3)), mk((3, 2, 4)), mk((4,))),
    ], domain=(-1, 1), tol=CONV_TOLERANCES, contiguous_for_torch=True),  # torch views (time, batch) as one dim
]

"""The op-table rows of nn.functional's activation family (see op_table.py).

Each row calls torch.nn.functional.<name> and tensorplay.nn.functional.<name>. The integer and bool
dtypes are listed too: most activations refuse them (NotImplementedError, as in PyTorch), while
hardtanh, relu6 and threshold keep an integer dtype and softsign and tanhshrink promote it.
The in-place forms (`elu_`, `elu.inplace` for inplace=True) must return their input.
rrelu is in the table in eval mode only, where it is deterministic.
"""

from op_table import FLOAT_DTYPES, DType, Op, S, unary_samples

DTYPES = FLOAT_DTYPES + ("int64", "uint8", "bool")
INPLACE_DTYPES = ("float32", "int64", "bool")


def call(name):
    return lambda m, *args, **kwargs: getattr(m.nn.functional, name)(*args, **kwargs)


def act(name, samples=unary_samples, label="", dtypes=DTYPES, **kw):
    return Op(name, samples, fn=call(name), label=label, dtypes=dtypes, **kw)


def inplace(name, samples=unary_samples, **kw):
    """The in-place function `name_` and `name(..., inplace=True)`, in a float, an integer and bool."""
    keyword = Op(name, samples, fn=lambda m, *a, **k: getattr(m.nn.functional, name)(*a, inplace=True, **k),
                 label=f"{name}.inplace", dtypes=INPLACE_DTYPES, returns_self=True, **kw)
    function = Op(name + "_", samples, fn=call(name + "_"), dtypes=INPLACE_DTYPES, returns_self=True, **kw)
    return [keyword, function]


def with_args(*args, extra=(), **kwargs):
    """unary_samples with the op's own numbers after the input, plus extra(mk) samples."""
    def samples(mk):
        plain = [S(s.label, *s.args, *args, **kwargs) for s in unary_samples(mk)]
        return plain + [make(mk) for make in extra]
    return samples


def hardtanh_bounds(mk):
    return [
        S("bounds", mk((5, 7)), -0.5, 2.5),
        S("equal_bounds", mk((3, 4)), 1.0, 1.0),
        S("min_gt_max", mk((3, 4)), 2.0, 1.0),  # ValueError
        S("fractional_on_int", mk((3, 4)), -1.7, 2.7),  # truncated to -1, 2 for integers
    ]


def threshold_samples(mk):
    return [
        S("2d", mk((5, 7)), 0.5, 9.0),
        S("int_numbers", mk((5, 7)), 1, 2),
        S("negative_fraction", mk((5, 7)), -0.5, -2.5),  # truncated towards 0 for integers
        S("special", mk.special() if mk.is_float else mk((12,)), 0.5, 9.0),
        S("0dim", mk(()), 0.0, 1.0),
        S("empty", mk((0, 3)), 0.0, 1.0),
        S("transposed", mk.transposed((4, 3)), 0.0, -1.0),
    ]


def glu_samples(mk):
    return [
        S("last_dim", mk((5, 6))),
        S("dim0", mk((4, 3)), 0),
        S("negative_dim", mk((2, 4, 3)), -2),
        S("transposed", mk.transposed((4, 6))),
        S("empty", mk((0, 4))),
        S("odd", mk((3, 5))),  # RuntimeError
        S("0dim", mk(())),  # RuntimeError
        S("dim_out_of_range", mk((4, 4)), 2),  # IndexError
    ]


def softmin_samples(mk):
    return [
        S("dim1", mk((4, 5)), 1),
        S("dim0", mk((4, 5)), 0),
        S("negative_dim", mk((2, 3, 4)), -1),
        S("implicit_dim", mk((2, 3, 4))),  # dim 0 for 3-D, as in PyTorch (with a warning)
        S("dtype_float64", mk((4, 5)), 1, dtype=DType("float64")),
        S("special", mk.special((3, 4)) if mk.is_float else mk((3, 4)), 1),
        S("0dim", mk(()), 0),
        S("transposed", mk.transposed((4, 3)), 1),
    ]


def normalize_samples(mk):
    zeros = mk((3, 4))
    zeros[1] = 0  # a zero row: eps keeps the division finite
    return [
        S("default", mk((4, 5))),
        S("p1_dim0", mk((4, 5)), 1.0, 0),
        S("pinf", mk((4, 5)), float("inf")),
        S("3d_last_dim", mk((2, 3, 4)), dim=-1),
        S("zero_row", zeros, dim=1),
        S("eps", mk((4, 5)), eps=10.0),
        S("transposed", mk.transposed((4, 3))),
        S("1d_default_dim", mk((5,))),  # IndexError: dim 1
        S("1d_dim0", mk((5,)), dim=0),
    ]


ROWS = [
    act("elu"),
    act("elu", with_args(2.0), label="elu.alpha2"),
    act("elu", with_args(-0.5), label="elu.negative_alpha"),
    *inplace("elu"),
    act("celu"),
    act("celu", with_args(alpha=2.0, extra=[lambda mk: S("alpha0", mk((3, 4)), alpha=0.0)]),  # RuntimeError
        label="celu.alpha2"),
    *inplace("celu"),
    act("selu"),
    *inplace("selu"),
    act("glu", glu_samples),
    act("hardshrink"),
    act("hardshrink", with_args(2.0), label="hardshrink.lambd2"),
    act("hardsigmoid", domain=(-5, 5)),
    Op("hardsigmoid", unary_samples, fn=lambda m, x: m.nn.functional.hardsigmoid(x, inplace=True),
       label="hardsigmoid.inplace", dtypes=INPLACE_DTYPES, returns_self=True, domain=(-5, 5)),
    act("hardswish", domain=(-5, 5)),
    Op("hardswish", unary_samples, fn=lambda m, x: m.nn.functional.hardswish(x, inplace=True),
       label="hardswish.inplace", dtypes=INPLACE_DTYPES, returns_self=True, domain=(-5, 5)),
    act("hardtanh"),
    act("hardtanh", hardtanh_bounds, label="hardtanh.bounds"),
    *inplace("hardtanh"),
    act("relu6", domain=(-3, 8)),
    Op("relu6", unary_samples, fn=lambda m, x: m.nn.functional.relu6(x, inplace=True),
       label="relu6.inplace", dtypes=INPLACE_DTYPES, returns_self=True, domain=(-3, 8)),
    *inplace("relu"),
    act("leaky_relu"),
    act("leaky_relu", with_args(0.2), label="leaky_relu.slope0.2"),
    *inplace("leaky_relu"),
    act("rrelu"),  # eval mode: the mean slope
    act("rrelu", with_args(0.1, 0.5, False, extra=[lambda mk: S("lower_gt_upper", mk((3, 4)), 0.5, 0.1)]),
        label="rrelu.bounds"),  # lower_gt_upper: RuntimeError
    *inplace("rrelu"),
    act("threshold", threshold_samples),
    *inplace("threshold", threshold_samples),
    act("logsigmoid", domain=(-30, 30)),
    act("mish", domain=(-6, 6)),
    Op("mish", unary_samples, fn=lambda m, x: m.nn.functional.mish(x, inplace=True),
       label="mish.inplace", dtypes=INPLACE_DTYPES, returns_self=True),
    act("softshrink"),
    act("softshrink", with_args(0.0, extra=[lambda mk: S("negative_lambd", mk((3, 4)), -0.5)]),  # RuntimeError
        label="softshrink.lambd0"),
    act("softsign"),
    act("tanhshrink"),
    act("softmin", softmin_samples),
    act("normalize", normalize_samples),
]

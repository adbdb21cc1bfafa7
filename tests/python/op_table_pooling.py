"""The op-table rows of nn.functional's pooling family (see op_table.py).

Max pools run twice: on continuous values, and on whole numbers in [-1, 1] (the `.ties` rows),
where most windows hold several maxima and the indices must name torch's (the first in row-major
order). Each sample set ends with inputs torch refuses. The rows run in the floating dtypes and
int64: torch's kernels for some of these have no int64 (or no 16-bit) form and raise
NotImplementedError, which tensorplay must raise too. The first sample and the transposed one of
each set stay within 48 elements, so that test_gradients can gradcheck them.
"""

import numpy as np

from op_table import FLOAT_DTYPES, Op, S

DTYPES = FLOAT_DTYPES + ("int64",)

# torch's 16-bit average pools add up in the 16-bit type, rounding at every step; tensorplay's
# adaptive pools add up in float32 (or, in 2-D, in its own order). Cancelling sums end a few units
# in the last place apart, which is a larger relative error where the mean is near 0.
AVERAGE_16_BIT = {"float16": (4e-3, 1e-3), "bfloat16": (3e-2, 8e-3)}
# The p-th root of a window's sum near 0 (odd p, values of both signs) magnifies its rounding.
LP_TOLERANCE = {"float32": (1e-4, 1e-5), **AVERAGE_16_BIT}


def nn_op(name, samples, label="", dtypes=DTYPES, **kw):
    """torch.nn.functional.<name>, called as tensorplay.nn.functional.<name>."""
    return Op(name, samples, dtypes=dtypes, label=label, fn=lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k),
              **kw)


def max_pool1d_samples(mk):
    return [
        S("k3", mk((1, 2, 9)), 3),
        S("s2_p1_ceil", mk((2, 3, 10)), 3, 2, 1, ceil_mode=True),
        S("dilation2", mk((2, 3, 9)), 2, 1, 1, 2),
        S("unbatched", mk((3, 8)), 2),
        S("transposed", mk.transposed((2, 3, 8)), (3,), (2,)),
        S("empty_batch", mk((0, 3, 8)), 2),
        S("too_small", mk((2, 3, 2)), 3),
        S("pad_over_half", mk((2, 3, 8)), 2, padding=2),
        S("1d_input", mk((8,)), 2),
    ]


def max_pool3d_samples(mk):
    return [
        S("k2", mk((1, 1, 4, 4, 3)), 2),
        S("k3_s2_p1_ceil", mk((1, 2, 5, 6, 7)), 3, 2, 1, ceil_mode=True),
        S("rect_dilation", mk((1, 2, 5, 6, 7)), (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 2)),
        S("unbatched", mk((2, 4, 4, 5)), 2),
        S("transposed", mk.transposed((1, 1, 3, 4, 4)), 2, 1),
        S("empty_batch", mk((0, 2, 4, 4, 4)), 2),
        S("too_small", mk((1, 2, 4, 4, 4)), 5),
        S("stride0", mk((1, 2, 4, 4, 4)), 2, 0),
        S("pad_over_half", mk((1, 2, 4, 4, 4)), 2, padding=2),
        S("3d_input", mk((4, 4, 4)), 2),
    ]


def avg_pool1d_samples(mk):
    return [
        S("k3", mk((1, 2, 9)), 3),
        S("s2_p1_ceil", mk((2, 3, 10)), 3, 2, 1, ceil_mode=True),
        S("exclude_pad", mk((2, 3, 10)), 3, 2, 1, ceil_mode=True, count_include_pad=False),
        S("unbatched", mk((3, 8)), 2),
        S("transposed", mk.transposed((2, 3, 8)), 2, 1),
        S("too_small", mk((2, 3, 2)), 3),
        S("1d_input", mk((8,)), 2),
    ]


def avg_pool3d_samples(mk):
    return [
        S("k2", mk((1, 1, 4, 4, 3)), 2),
        S("k3_s2_p1_ceil", mk((1, 2, 5, 6, 7)), 3, 2, 1, ceil_mode=True),
        S("exclude_pad", mk((1, 2, 5, 6, 7)), 3, 2, 1, ceil_mode=True, count_include_pad=False),
        S("divisor_override", mk((1, 2, 4, 5, 6)), (2, 3, 2), (1, 2, 3), divisor_override=5),
        S("unbatched", mk((2, 4, 4, 5)), 2),
        S("transposed", mk.transposed((1, 1, 3, 4, 4)), 2, 1),
        S("too_small", mk((1, 2, 4, 4, 4)), 5),
        S("pad_over_half", mk((1, 2, 4, 4, 4)), 2, padding=2),
        S("3d_input", mk((4, 4, 4)), 2),
    ]


def adaptive_1d_samples(mk):
    return [
        S("uneven", mk((2, 3, 7)), 3),
        S("upsample", mk((2, 3, 3)), 5),
        S("tuple", mk((2, 3, 8)), (4,)),
        S("unbatched", mk((3, 7)), 2),
        S("transposed", mk.transposed((2, 3, 7)), 3),
        S("zero_output", mk((2, 3, 7)), 0),
        S("1d_input", mk((7,)), 2),
    ]


def adaptive_2d_samples(mk):
    return [
        S("uneven", mk((1, 2, 5, 4)), 3),
        S("upsample", mk((1, 2, 3, 3)), 5),
        S("none_keeps_dim", mk((1, 2, 7, 5)), (None, 2)),
        S("unbatched", mk((3, 7, 5)), 2),
        S("transposed", mk.transposed((1, 1, 5, 7)), 3),
        S("zero_output", mk((1, 2, 5, 4)), (0, 2)),
        S("2d_input", mk((7, 5)), 2),
    ]


def adaptive_3d_samples(mk):
    return [
        S("uneven", mk((1, 1, 3, 4, 4)), (2, 3, 3)),
        S("uneven_batched", mk((2, 2, 5, 6, 7)), (2, 4, 3)),
        S("upsample", mk((1, 2, 2, 3, 3)), (3, 4, 5)),
        S("none_keeps_dim", mk((1, 2, 5, 4, 7)), (None, 2, 3)),
        S("unbatched", mk((2, 5, 4, 6)), 2),
        S("transposed", mk.transposed((1, 1, 3, 4, 4)), 3),
        S("empty_batch", mk((0, 2, 4, 4, 4)), 2),
        S("zero_output", mk((1, 2, 3, 4, 4)), (2, 0, 2)),
        S("3d_input", mk((5, 4, 6)), 2),
    ]


def lp_pool_samples(n):
    shape = ((1, 3, 9), (1, 2, 4, 6), (1, 1, 3, 4, 4))[n - 1]

    def samples(mk):
        # Odd p: a negative sum keeps its sign, and its root is NaN. A 16-bit sum near 0 may land on
        # either side of it, depending on the order of the additions: those take positive values.
        signed = mk.dtype in ("float32", "float64")
        return [
            S("p2", mk(shape), 2, 3),
            S("p3_stride2_ceil", mk(shape, domain=None if signed else (0.1, 3)), 3, 2, 2, ceil_mode=True),
            S("p1.5", mk(shape, domain=(0.1, 3)), 1.5, 2),
            S("pinf", mk(shape), float("inf"), 2),
            S("pneg_inf", mk(shape), -float("inf"), 2, 1),
            S("too_small", mk(shape), 2, 10),
        ]
    return samples


def unpool_indices(mk, shape, kernel):
    """Indices as max_pool{n}d with kernel = stride gives them: each one inside its own window of
    the output (of shape spatial * kernel), in flat row-major form."""
    n = len(kernel)
    out_spatial = [s * k for s, k in zip(shape[-n:], kernel)]
    coords = [np.arange(s).reshape([-1 if d == i else 1 for d in range(n)]) * k
              + mk.rng.integers(0, k, shape) for i, (s, k) in enumerate(zip(shape[-n:], kernel))]
    return np.ravel_multi_index(np.broadcast_arrays(*coords), out_spatial).astype(np.int64)


def max_unpool_samples(n):
    kernel = (2,) * n
    shape = ((2, 3, 4), (1, 2, 3, 4), (1, 2, 2, 3, 2))[n - 1]
    unbatched = shape[1:]

    def samples(mk):
        default = [s * k for s, k in zip(shape[-n:], kernel)]
        return [
            S("k2", mk(shape), unpool_indices(mk, shape, kernel), 2),
            S("output_size", mk(shape), unpool_indices(mk, shape, kernel), 2, output_size=[d + 1 for d in default]),
            S("unbatched", mk(unbatched), unpool_indices(mk, unbatched, kernel), 2),
            S("transposed", mk.transposed(shape), unpool_indices(mk, shape, kernel), 2),
            S("bad_output_size", mk(shape), unpool_indices(mk, shape, kernel), 2, output_size=[d + 3 for d in default]),
            S("index_out_of_range", mk(shape), np.full(shape, 10 ** 6, np.int64), 2),
            S("int32_indices", mk(shape), unpool_indices(mk, shape, kernel).astype(np.int32), 2),
            S("indices_shape", mk(shape), unpool_indices(mk, shape, kernel)[..., :1], 2),
        ]
    return samples


def fractional_samples(n):
    shape = ((1, 2, 5, 4), (1, 1, 3, 4, 4))[n - 2]  # small enough for gradcheck
    out = ((2, 2), (1, 2, 2))[n - 2]
    big, big_out = ((2, 3, 11, 9), (5, 4)) if n == 2 else ((2, 2, 7, 9, 8), (3, 4, 5))

    def samples(mk):
        def u(shape=shape):
            """The pseudo-random windows, given, so that torch's and tensorplay's agree: multiples of
            1/64, which every floating dtype holds exactly."""
            return (mk.rng.integers(0, 58, (shape[0], shape[1], n)) / 64).tolist()
        other = "float32" if mk.dtype == "float64" else "float64"
        return [
            S("output_size", mk(shape), 2, out, samples=u()),
            S("indices", mk(shape), ((3, 2), 2)[n - 2], out, return_indices=True, samples=u()),
            S("output_ratio", mk(shape), 2, output_ratio=(0.5,) * n, samples=u()),
            S("unbatched", mk(shape[1:]), 2, out, samples=u((1, *shape[1:]))),
            S("transposed", mk.transposed(shape), 2, out, samples=u()),
            S("batched", mk(big), 2, big_out, samples=u(big)),
            S("pool_too_large", mk(shape), 6, out, samples=u()),
            S("samples_dtype", mk(shape), 2, out, samples=u(), samples_dtype=other),
            S("samples_batch", mk((2, *shape[1:])), 2, out, samples=u()),
        ]
    return samples


def fractional_row(n):
    """fractional_max_pool{n}d with its _random_samples made in the call from a list (in the
    input's dtype unless samples_dtype says): as an array they would be an input to differentiate."""
    name = f"fractional_max_pool{n}d"

    def call(m, x, *args, samples, samples_dtype=None, **kwargs):
        dtype = getattr(m, samples_dtype) if samples_dtype else x.dtype
        # The list (which the fuzzer mutates) is made an array by NumPy, the same for both libraries:
        # a list that is no array of numbers fails here, naming the op it was made for. Samples for
        # an input of a non-floating dtype (which the op refuses) are cast from float64, as torch's
        # tensor() would refuse out-of-range values before the op is reached.
        try:
            values = np.asarray(samples, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise type(e)(f"[{name}] _random_samples: {e}") from None
        floating = dtype in (m.float16, m.bfloat16, m.float32, m.float64)
        random_samples = m.tensor(values.tolist(), dtype=dtype if floating else m.float64, device=x.device)
        random_samples = random_samples if floating else random_samples.to(dtype)
        return getattr(m.nn.functional, name)(x, *args, _random_samples=random_samples, **kwargs)
    return Op(name, fractional_samples(n), dtypes=FLOAT_DTYPES, fn=call)


def max_rows(name, samples, **kw):
    """The max pool on continuous values, and (.ties) on whole numbers with its indices."""
    return [nn_op(name, samples, **kw),
            nn_op(name, samples, label=f"{name}.ties", kwargs={"return_indices": True}, integers=True, domain=(-1, 1),
                  **kw)]


ROWS = [
    *max_rows("max_pool1d", max_pool1d_samples),
    *max_rows("max_pool2d", lambda mk: [
        S("k3_s2_p1", mk((1, 2, 4, 5)), 3, 2, 1),
        S("batched", mk((2, 3, 9, 9)), 3, 2),
        S("ceil_dilation", mk((1, 2, 9, 8)), 2, 2, 1, 2, ceil_mode=True),
        S("unbatched", mk((3, 6, 7)), 2),
    ]),
    *max_rows("max_pool3d", max_pool3d_samples),
    *max_rows("adaptive_max_pool1d", adaptive_1d_samples),
    *max_rows("adaptive_max_pool2d", adaptive_2d_samples),
    *max_rows("adaptive_max_pool3d", adaptive_3d_samples),
    nn_op("avg_pool1d", avg_pool1d_samples),
    nn_op("avg_pool2d", lambda mk: [
        S("k3_s2_p1_exclude_pad", mk((1, 2, 4, 5)), 3, 2, 1, count_include_pad=False),
        S("batched", mk((2, 3, 9, 9)), 3, 2),
        S("ceil_divisor_override", mk((1, 2, 9, 8)), 2, 2, 1, ceil_mode=True, divisor_override=3),
    ]),
    nn_op("avg_pool3d", avg_pool3d_samples),
    nn_op("adaptive_avg_pool1d", adaptive_1d_samples),
    nn_op("adaptive_avg_pool2d", adaptive_2d_samples, dtypes=FLOAT_DTYPES, tol=AVERAGE_16_BIT),
    nn_op("adaptive_avg_pool3d", adaptive_3d_samples, tol=AVERAGE_16_BIT),
    nn_op("lp_pool1d", lp_pool_samples(1), tol=LP_TOLERANCE),
    nn_op("lp_pool2d", lp_pool_samples(2), tol=LP_TOLERANCE),
    nn_op("lp_pool3d", lp_pool_samples(3), tol=LP_TOLERANCE),
    nn_op("max_unpool1d", max_unpool_samples(1)),
    nn_op("max_unpool2d", max_unpool_samples(2)),
    nn_op("max_unpool3d", max_unpool_samples(3)),
    fractional_row(2),
    fractional_row(3),
]

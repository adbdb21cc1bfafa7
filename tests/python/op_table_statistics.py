"""Op-table rows of the torch namespace's statistics composites (tensorplay/_composites/statistics.py).

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import math

import numpy as np

from op_table import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LINALG_DTYPES, NUMPY_DTYPES, DType, Op, S, View,
                      distinct)

# Ops that reject integers: the float dtypes, and int64 to see them do so.
FLOATS_AND_INT = FLOAT_DTYPES + ("int64",)
# Ops whose kernels PyTorch has for float32 and float64 only: those, a 16-bit float and an integer to
# see the others refused.
DOUBLE_OR_FLOAT = ("float32", "float64", "bfloat16", "int64")
NUMERIC = FLOAT_DTYPES + INT_DTYPES


def with_nans(values, *places):
    values = values.astype(np.float64)
    for place in places:
        values[place] = math.nan
    return values


def floats(mk, values):
    return np.asarray(values).astype(NUMPY_DTYPES[mk.dtype])


def transposed_distinct(mk, shape):
    return View(distinct(mk, shape[::-1]), lambda t: t.transpose(0, 1))


# ---------------------------------------------------------------------------------------------
# Medians, modes, quantiles. A median along a dim of equal values may return any of their indices
# in PyTorch (it partitions, it does not sort), so its samples hold distinct values.

def median_samples(mk):
    x = distinct(mk, (4, 5))
    samples = [S("full", x), S("dim1", x, 1), S("dim0_keepdim", x, 0, True), S("even_dim0", distinct(mk, (4, 3)), 0)]
    if mk.is_float:
        nans = floats(mk, with_nans(distinct(mk, (4, 5)), (1, 2), (3, 0), (3, 4)))
        samples += [S("nan_dim1", nans, 1), S("nan_full", nans), S("special", mk.special())]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("0dim_dim0", mk(()), 0), S("empty_dim1", mk((0, 3)), 1),
                    S("empty_dim0", mk((0, 3)), 0), S("transposed_dim1", transposed_distinct(mk, (3, 4)), 1),
                    S("3d_dim-1_keepdim", distinct(mk, (2, 3, 4)), -1, keepdim=True)]
    return samples


def mode_samples(mk):
    samples = [S("dim_last", mk((4, 7))), S("dim0", mk((6, 3)), 0), S("dim1_keepdim", mk((3, 5)), 1, True)]
    if mk.is_float:
        samples.append(S("special", mk.special()))
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty_dim1", mk((0, 3)), 1), S("empty_dim0", mk((0, 3)), 0),
                    S("transposed", mk.transposed((3, 6))), S("3d_dim1", mk((2, 5, 3)), dim=1)]
    return samples


def quantile_samples(mk):
    x = mk((3, 5))
    q = mk((3,), domain=(0, 1))
    samples = [
        S("scalar_q", x, 0.3),
        S("tensor_q_dim1", x, q, 1),
        S("dim0_keepdim", x, 0.75, 0, True),
        S("keepdim_no_dim", x, q, keepdim=True),
        S("0dim_q_dim1", x, mk((), domain=(0, 1)), 1),
        S("lower", x, q, 1, interpolation="lower"),
        S("higher", x, 0.4, 0, interpolation="higher"),
        S("midpoint", x, q, 1, interpolation="midpoint"),
        S("nearest", x, np.array([0.125, 0.5, 0.875]).astype(NUMPY_DTYPES[mk.dtype]), 1, interpolation="nearest"),
        S("q_ends", x, np.array([0.0, 1.0]).astype(NUMPY_DTYPES[mk.dtype]), 1),
        S("bad_interpolation", x, 0.5, interpolation="cubic"),
        S("q_out_of_range", x, 1.5),
        S("tensor_q_out_of_range", x, np.array([0.5, -0.1]).astype(NUMPY_DTYPES[mk.dtype])),
        S("2d_q", x, mk((2, 2), domain=(0, 1))),
        S("empty", mk((0, 3)), 0.5),
    ]
    if mk.is_float:
        nans = floats(mk, with_nans(mk((3, 5)), (0, 1), (2, 0), (2, 1), (2, 2), (2, 3), (2, 4)))
        samples += [S("nan_dim1", nans, q, 1), S("nan_full", nans, 0.5)]
    if mk.layouts:
        samples += [S("0dim", mk(()), 0.5), S("0dim_dim0", mk(()), q, 0),
                    S("transposed_dim0", mk.transposed((3, 4)), q, 0)]
    return samples


# ---------------------------------------------------------------------------------------------
# Unique values, sorted search, histograms and counts.

def unique_samples(mk):
    samples = [
        S("1d", mk((12,))),
        S("2d_inverse_counts", mk((3, 5)), return_inverse=True, return_counts=True),
        S("counts", mk((3, 5)), return_counts=True),
        S("dim0", mk((6, 2)), dim=0, return_inverse=True, return_counts=True),
        S("dim1", mk((2, 7)), dim=1, return_inverse=True),
        S("unsorted", mk((9,)), sorted=False, return_inverse=True),
    ]
    if mk.is_float:
        samples.append(S("special", mk.special(), return_counts=True))
    if mk.layouts:
        samples += [S("0dim", mk(()), return_inverse=True), S("empty", mk((0, 3)), return_inverse=True,
                                                             return_counts=True),
                    S("empty_dim0", mk((0, 3)), dim=0, return_counts=True), S("empty_dim1", mk((0, 3)), dim=1),
                    S("0dim_dim0", mk(()), dim=0), S("transposed_dim0", mk.transposed((5, 2)), dim=0),
                    S("3d_dim1", mk((2, 4, 2)), dim=1, return_counts=True)]
    return samples


def searchsorted_samples(mk):
    boundaries = np.sort(mk((6,)))
    unsorted = mk((6,))
    order = np.argsort(unsorted.astype(np.float64), kind="stable")
    samples = [
        S("1d", boundaries, mk((3, 4))),
        S("right", boundaries, mk((3, 4)), right=True),
        S("side_right", boundaries, mk((5,)), side="right"),
        S("side_left_right", boundaries, mk((5,)), side="left", right=True),
        S("bad_side", boundaries, mk((5,)), side="middle"),
        S("nd", np.sort(mk((2, 5)), axis=-1), mk((2, 3))),
        S("nd_mismatch", np.sort(mk((2, 5)), axis=-1), mk((3, 3))),
        S("int_scalar", boundaries, 1),
        S("sorter", unsorted, mk((4,)), sorter=order),
        S("sorter_out_of_range", unsorted, mk((4,)), sorter=np.full(6, 6)),
        S("out_int32", boundaries, mk((4,)), out_int32=True),
        S("0dim_boundaries", mk(()), mk((4,))),
        S("float64_values", boundaries, mk((4,), dtype="float64")),
    ]
    if mk.is_float:
        samples.append(S("special", np.sort(mk.special()), mk.special(other=True)))
    if mk.layouts:
        samples += [S("0dim", boundaries, mk(())), S("empty_values", boundaries, mk((0, 3))),
                    S("empty_boundaries", mk((0,)), mk((3,))), S("noncontig", boundaries, mk.transposed((3, 4)))]
    return samples


def bucketize_samples(mk):
    boundaries = np.sort(mk((5,)))
    samples = [S("2d", mk((3, 4)), boundaries), S("right", mk((3, 4)), boundaries, right=True),
               S("out_int32", mk((4,)), boundaries, out_int32=True), S("2d_boundaries", mk((3,)), mk((2, 3)))]
    if mk.layouts:
        samples += [S("0dim", mk(()), boundaries), S("empty", mk((0, 2)), boundaries)]
    return samples


def histc_samples(mk):
    samples = [S("default", mk((30,))), S("bins7", mk((4, 5)), 7), S("range", mk((4, 5)), 4, -1, 2),
               S("one_value", floats(mk, [2.0, 2.0, 2.0]), 4), S("bad_range", mk((5,)), 4, 3, 1),
               S("bins0", mk((5,)), 0)]
    if mk.is_float:
        samples.append(S("infinite", floats(mk, [1.0, math.inf]), 3))
    if mk.layouts:
        samples += [S("0dim", mk(()), 3), S("empty", mk((0, 3)), 5), S("transposed", mk.transposed((3, 4)), 6)]
    return samples


def histogram_samples(mk):
    x = mk((4, 5))
    return [
        S("bins5", x, 5),
        S("range", x, 4, range=(-1.0, 2.0)),
        S("weight_density", x, 6, weight=mk((4, 5), domain=(0, 2)), density=True),
        S("edges", x, np.array([-3.0, -1.0, 0.5, 3.0]).astype(NUMPY_DTYPES[mk.dtype])),
        S("edges_density", x, np.array([-2.0, 0.0, 1.0]).astype(NUMPY_DTYPES[mk.dtype]), density=True),
        S("one_value", floats(mk, [1.0, 1.0]), 4),
        S("empty", mk((0,)), 3),
        S("bad_range", x, 3, range=(2.0, 1.0)),
        S("weight_shape", x, 3, weight=mk((5,))),
        S("transposed", mk.transposed((3, 4)), 4),
    ]


def histogramdd_samples(mk):
    points = mk((12, 2))
    return [
        S("bins3", points, 3),
        S("bins_list", points, [2, 4], weight=mk((12,), domain=(0, 2))),
        S("range_density", points, [3, 3], range=[-1.0, 1.0, -2.0, 2.0], density=True),
        S("edges", points, [np.array([-3.0, 0.0, 3.0]).astype(NUMPY_DTYPES[mk.dtype]),
                            np.array([-1.0, 1.0]).astype(NUMPY_DTYPES[mk.dtype])]),
        S("3d_points", mk((2, 5, 3)), 2),
        S("1d_input", mk((5,)), 2),
        S("wrong_bin_count", points, [2, 2, 2]),
    ]


def bincount_samples(mk):
    x = mk((15,), domain=(0, 6))
    return [
        S("plain", x),
        S("minlength", x, minlength=10),
        S("weights_float32", x, mk((15,), dtype="float32")),
        S("weights_float64", x, mk((15,), dtype="float64"), minlength=3),
        S("weights_int64", x, mk((15,), dtype="int64")),
        S("empty_minlength", mk((0,)), minlength=4),
        S("negative_minlength", x, minlength=-1),
        S("2d", mk((3, 2), domain=(0, 3))),
        S("weights_length", x, mk((4,), dtype="float32")),
    ]


def count_nonzero_samples(mk):
    x = mk((3, 4, 2))
    samples = [S("full", x), S("dim1", x, 1), S("dims", x, (0, 2)), S("repeated_dim", x, (0, 0))]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty", mk((0, 3)), 1), S("transposed", mk.transposed((3, 4)), 0)]
    return samples


# ---------------------------------------------------------------------------------------------
# Running extremes and log-sum-exps (whole numbers: ties, whose last index wins).

def cumulative_samples(mk):
    samples = [S("dim1", mk((3, 9)), 1), S("dim0", mk((6, 3)), 0), S("long_row", mk((2, 70)), -1)]
    if mk.is_float:
        samples.append(S("special", mk.special(), 0))
    if mk.layouts:
        samples += [S("0dim", mk(()), 0), S("empty", mk((0, 3)), 0), S("empty_dim1", mk((0, 3)), 1),
                    S("transposed", mk.transposed((4, 5)), 1), S("bad_dim", mk((3, 4)), 2)]
    return samples


def logcumsumexp_samples(mk):
    samples = [S("dim1", mk((3, 9)), 1), S("dim0", mk((6, 3)), 0), S("long_row", mk((2, 40)), -1)]
    if mk.is_float:
        samples += [S("special", mk.special(), 0),
                    S("wide_range", floats(mk, [-60.0, 0.0, -50.0, 30.0, -math.inf, 2.0]), 0)]
    if mk.layouts:
        samples += [S("0dim", mk(()), 0), S("empty", mk((0, 3)), 0), S("transposed", mk.transposed((4, 5)), 1)]
    return samples


# ---------------------------------------------------------------------------------------------
# Differences, gradients and integrals.

def diff_samples(mk):
    x = mk((3, 5))
    samples = [
        S("default", x),
        S("n2_dim0", x, 2, 0),
        S("n0", x, 0),
        S("n_past_size", x, 7),
        S("prepend_append", x, 1, 1, mk((3, 2)), mk((3, 1))),
        S("append_dim0", x, dim=0, append=mk((1, 5))),
        S("prepend_float32", x, prepend=mk((3, 1), dtype="float32")),
        S("prepend_wrong_shape", x, prepend=mk((2, 1))),
        S("prepend_wrong_dims", x, prepend=mk((5,))),
        S("negative_n", x, -1),
    ]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty", mk((0, 3)), 1, 0), S("transposed", mk.transposed((3, 4)))]
    return samples


def gradient_samples(mk):
    x = mk((4, 5))
    samples = [
        S("default", x),
        S("spacing", x, spacing=2.0),
        S("int_spacing", x, spacing=3),
        S("spacing_list", x, spacing=[0.5, 2.0]),
        S("dim1", x, dim=1),
        S("dims_edge_order2", mk((3, 4, 5)), spacing=1.5, dim=[0, 2], edge_order=2),
        # Whole-number coordinates: torch's gradient for float ones is a ZeroTensor, which the gradient
        # tests cannot read.
        S("coordinates", x, spacing=[np.array([0, 1, 3, 4]), np.array([0, 2, 3, 5, 6])]),
        S("coordinates_edge_order2", x, spacing=[np.array([0, 1, 3, 4, 7])], dim=1, edge_order=2),
        S("edge_order3", x, edge_order=3),
        S("too_short", mk((4, 2)), edge_order=2),
        S("short_unused_dim", mk((1, 5)), dim=1),
        S("spacing_list_length", x, spacing=[1.0, 2.0, 3.0]),
        S("spacing_dim_length", x, spacing=[1.0, 2.0], dim=1),
        S("2d_coordinates", x, spacing=[np.ones((4, 1)), np.arange(5.0)]),
        S("repeated_dim", x, dim=[0, 0]),
    ]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("transposed", mk.transposed((3, 4)), dim=0)]
    return samples


def trapezoid_samples(mk):
    y = mk((3, 5))
    samples = [
        S("default", y),
        S("dx", y, dx=0.5),
        S("int_dx_dim0", y, dx=2, dim=0),
        S("x_1d", y, np.array([0.0, 0.5, 1.5, 2.0, 4.0])),
        S("x_full", y, mk((3, 5), dtype="float64")),
        S("x_broadcast_dim0", y, mk((3, 1), dtype="float32"), dim=0),
        S("x_wrong_length", y, np.arange(4.0)),
        S("bool_dx", y, dx=True),
    ]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty", mk((2, 0))), S("transposed", mk.transposed((3, 4)), dim=0)]
    return samples


# ---------------------------------------------------------------------------------------------
# Covariances and reductions.

def cov_samples(mk):
    x = mk((3, 6))
    return [
        S("2d", x),
        S("1d", mk((6,))),
        S("correction0", x, correction=0),
        S("fweights", x, fweights=mk.index((6,), 4)),
        S("aweights", x, aweights=mk((6,), dtype="float32", domain=(0.1, 2))),
        S("both_weights_correction2", x, correction=2, fweights=mk.index((6,), 3) + 1,
          aweights=mk((6,), dtype="float64", domain=(0.1, 2))),
        S("no_dof", mk((2, 1))),
        S("3d", mk((2, 2, 2))),
        S("float_fweights", x, fweights=mk((6,), dtype="float32")),
        S("int_aweights", x, aweights=mk.index((6,), 3)),
        S("transposed", mk.transposed((3, 4))),
    ]


def corrcoef_samples(mk):
    return [S("2d", mk((3, 6))), S("1d", mk((6,))), S("constant_row", np.ones((2, 4), NUMPY_DTYPES[mk.dtype])),
            S("3d", mk((2, 2, 2))), S("transposed", mk.transposed((3, 4)))]


def aminmax_samples(mk):
    x = mk((3, 4))
    samples = [S("full", x), S("dim1", x, dim=1), S("dim0_keepdim", x, dim=0, keepdim=True),
               S("keepdim", x, keepdim=True), S("tuple_dim", x, dim=(0, 1))]
    if mk.is_float:
        samples.append(S("special", mk.special()))
    if mk.layouts:
        samples += [S("0dim", mk(())), S("0dim_dim0", mk(()), dim=0), S("empty", mk((0, 3))),
                    S("empty_dim1", mk((0, 3)), dim=1), S("empty_dim0", mk((0, 3)), dim=0),
                    S("transposed_dim1", mk.transposed((3, 4)), dim=1)]
    return samples


def nan_reduction_samples(mk):
    x = mk((3, 4))
    if mk.is_float:
        x = floats(mk, with_nans(x, (0, 1), (2, 0), (2, 1), (2, 2), (2, 3)))
    samples = [S("full", x), S("dim1", x, 1), S("dims_keepdim", mk((2, 3, 4)), (0, 2), True),
               S("dtype_float64", x, dtype=DType("float64")), S("dtype_int64", x, dtype=DType("int64"))]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty", mk((0, 3))), S("empty_dim1", mk((0, 3)), 1),
                    S("transposed_dim1", mk.transposed((3, 4)), 1)]
    return samples


def moments_samples(mk):
    x = mk((3, 4))
    samples = [S("full", x), S("dim1", x, 1), S("dim1_unbiased_false_keepdim", x, 1, False, True),
               S("unbiased_false", x, False), S("correction0_keepdim", x, dim=0, correction=0, keepdim=True),
               S("dims_correction2", mk((2, 3, 4)), dim=(0, 2), correction=2),
               S("dim_none_keepdim", x, None, keepdim=True), S("dof0", mk((3, 1)), 1)]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("transposed_dim1", mk.transposed((3, 4)), 1)]
    return samples


# ---------------------------------------------------------------------------------------------
# Membership and products.

def isin_samples(mk):
    return [
        S("2d", mk((3, 4)), mk((5,))),
        S("2d_test", mk((6,)), mk((2, 2))),
        S("invert", mk((3, 4)), mk((3,)), invert=True),
        S("assume_unique", mk((5,)), np.unique(mk((4,))), assume_unique=True),
        S("int_scalar", mk((3, 4)), 1),
        S("scalar_elements", 2, mk((4,))),
        S("empty_test", mk((3,)), mk((0,))),
        S("float64_test", mk((3, 4)), mk((5,), dtype="float64")),
        S("0dim", mk(()), mk((3,))),
        S("transposed", mk.transposed((3, 4)), mk.strided((4,))),
    ]


def inner_samples(mk):
    return [
        S("1d", mk((4,)), mk((4,))),
        S("2d", mk((3, 4)), mk((2, 4))),
        S("3d_1d", mk((2, 3, 4)), mk((4,))),
        S("0dim", mk(()), mk((2, 3))),
        S("mismatch", mk((3, 4)), mk((3, 5))),
        S("transposed", mk.transposed((3, 4)), mk((2, 4))),
        S("empty", mk((0, 4)), mk((2, 4))),
    ]


def vander_samples(mk):
    x = mk((4,), domain=(-2, 2))
    return [S("default", x), S("N5", x, 5), S("increasing", x, 3, True), S("N0", x, 0), S("N1", x, N=1),
            S("negative_N", x, -1), S("2d", mk((2, 2))), S("empty", mk((0,)), 3), S("strided", mk.strided((3,)))]


def chain_matmul_samples(mk):
    return [
        S("three", mk((2, 3)), mk((3, 4)), mk((4, 2))),
        S("two", mk((2, 3)), mk.transposed((3, 4))),
        S("one", mk((2, 3))),
        S("none"),
        S("1d", mk((2, 3)), mk((3,))),
        S("mismatch", mk((2, 3)), mk((4, 2))),
    ]


def matrix_power_samples(mk):
    return [
        S("n2", mk((3, 3)), 2),
        S("n3", mk((3, 3)), 3),
        S("n5", mk((3, 3), domain=(-1, 1)), 5),
        S("n6_batched", mk((2, 3, 3), domain=(-1, 1)), 6),
        S("n1", mk((3, 3)), 1),
        S("n0", mk((2, 3, 3)), 0),
        S("transposed", mk.transposed((3, 3)), 2),
        S("not_square", mk((2, 3)), 2),
        S("1d", mk((3,)), 2),
        S("float_n", mk((3, 3)), 2.0),
    ]


def frobenius_norm_samples(mk):
    x = mk((3, 4))
    return [S("dims", x, (0, 1)), S("dim1_keepdim", x, 1, True), S("no_dims", x, ()),
            S("three_dims", mk((2, 3, 4)), (0, 1, 2)), S("transposed", mk.transposed((3, 4)), (0,))]


def cumulative_inplace_samples(mk):
    samples = [S("dim1", mk((3, 4)), 1), S("dim0", mk((4, 3)), 0), S("dtype_same", mk((3, 4)), 1,
                                                                       dtype=DType(mk.dtype))]
    if mk.dtype != "float64":
        samples.append(S("dtype_other", mk((3, 4)), 1, dtype=DType("float64")))
    if mk.layouts:
        samples += [S("0dim", mk(()), 0), S("transposed", mk.transposed((3, 4)), 1)]
    return samples


def _method(name):
    return lambda m, x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


ROWS = [
    Op("median", median_samples),
    Op("nanmedian", median_samples),
    Op("mode", mode_samples, domain=(-2, 2), integers=True),
    Op("quantile", quantile_samples, dtypes=DOUBLE_OR_FLOAT),
    Op("nanquantile", quantile_samples, dtypes=DOUBLE_OR_FLOAT),
    Op("unique", unique_samples, domain=(-2, 2), integers=True),
    Op("unique_consecutive", unique_samples, domain=(-1, 1), integers=True),
    Op("searchsorted", searchsorted_samples, dtypes=NUMERIC + ("bool",), integers=True),
    Op("bucketize", bucketize_samples, dtypes=NUMERIC + ("bool",), integers=True),
    Op("histc", histc_samples, dtypes=FLOATS_AND_INT),
    Op("histogram", histogram_samples, dtypes=DOUBLE_OR_FLOAT + ("float16",)),
    Op("histogramdd", histogramdd_samples, dtypes=DOUBLE_OR_FLOAT),
    Op("bincount", bincount_samples, dtypes=INT_DTYPES + ("float32", "bool")),
    Op("count_nonzero", count_nonzero_samples, domain=(-1, 1), integers=True),
    Op("cummax", cumulative_samples, domain=(-3, 3), integers=True),
    Op("cummin", cumulative_samples, domain=(-3, 3), integers=True),
    Op("logcumsumexp", logcumsumexp_samples, dtypes=FLOATS_AND_INT),
    Op("diff", diff_samples),
    Op("gradient", gradient_samples, dtypes=FLOAT_DTYPES + ("int64", "uint8")),
    Op("trapezoid", trapezoid_samples, dtypes=FLOATS_AND_INT + ("bool",)),
    Op("trapz", trapezoid_samples, dtypes=("float32", "float64", "int64")),
    Op("cumulative_trapezoid", trapezoid_samples, dtypes=FLOATS_AND_INT + ("bool",)),
    Op("cov", cov_samples, dtypes=FLOATS_AND_INT + ("bool",)),
    Op("corrcoef", corrcoef_samples, dtypes=FLOATS_AND_INT),
    Op("aminmax", aminmax_samples, integers=True),
    Op("nanmean", nan_reduction_samples, dtypes=FLOATS_AND_INT),
    # torch's nansum kernel rounds a 16-bit sum differently from its sum (two units in the last place)
    Op("nansum", nan_reduction_samples, dtypes=ALL_DTYPES, tol={"float16": (2e-3, 1e-5)}),
    Op("var_mean", moments_samples, dtypes=FLOATS_AND_INT),
    Op("std_mean", moments_samples, dtypes=FLOATS_AND_INT, domain=(0.5, 3)),
    Op("isin", isin_samples, dtypes=NUMERIC + ("bool",), domain=(-3, 3), integers=True),
    Op("inner", inner_samples, dtypes=LINALG_DTYPES),
    Op("ger", lambda mk: [S("1d", mk((3,)), mk((4,))), S("strided", mk.strided((3,)), mk((2,))),
                          S("empty", mk((0,)), mk((4,))), S("2d", mk((2, 3)), mk((3,)))], dtypes=LINALG_DTYPES),
    Op("vander", vander_samples, dtypes=ALL_DTYPES),
    Op("chain_matmul", chain_matmul_samples, dtypes=LINALG_DTYPES, method=False,
       fn=lambda m, *matrices: m.chain_matmul(*matrices)),
    Op("matrix_power", matrix_power_samples, dtypes=LINALG_DTYPES + ("bool",), domain=(-1.5, 1.5)),
    Op("frobenius_norm", frobenius_norm_samples, dtypes=FLOATS_AND_INT),
    Op("cumsum_", cumulative_inplace_samples, label="Tensor.cumsum_", fn=_method("cumsum_"), returns_self=True,
       dtypes=("float32", "float64", "int64", "int8", "bool")),
    Op("cumprod_", cumulative_inplace_samples, label="Tensor.cumprod_", fn=_method("cumprod_"), returns_self=True,
       dtypes=("float32", "float64", "int64", "int8", "bool"), domain=(-1.5, 1.5)),
]

GRADIENT_LABELS = """
    median nanmedian mode quantile nanquantile cummax cummin logcumsumexp diff gradient trapezoid trapz
    cumulative_trapezoid cov corrcoef aminmax nanmean nansum var_mean std_mean inner ger chain_matmul
    matrix_power frobenius_norm Tensor.cumsum_ Tensor.cumprod_
""".split()

NOT_DIFFERENTIABLE = {
    "unique": "its values are a selection whose gradient torch does not implement",
    "unique_consecutive": "its values are a selection whose gradient torch does not implement",
    "searchsorted": "returns indices",
    "bucketize": "returns indices",
    "histc": "counts; torch has no gradient for it",
    "histogram": "counts; torch has no gradient for it",
    "histogramdd": "counts; torch has no gradient for it",
    "bincount": "counts of integers",
    "count_nonzero": "returns counts",
    "isin": "returns booleans",
    "vander": "torch's backward raises (its cumprod writes into a view of its result); tensorplay's differentiates",
}

"""Op-table rows of complex numbers: the ops between complex and real tensors (view_as_real,
view_as_complex, real, imag, complex, polar, angle, conj), and ALSO_COMPLEX, the rows of other
families that run in complex64 and complex128 as well (the ops with a complex form, csrc/tensorplay/ops/complex.h,
and the ops that move elements).

GRADIENT_LABELS lists the rows torch differentiates in real dtypes, COMPLEX_ONLY_GRADIENT_LABELS those
whose differentiable inputs are complex only; NOT_DIFFERENTIABLE gives every other row's label with
the reason (test_gradients.py reads the three). test_gradients checks every differentiable row with
complex dtypes by complex gradcheck and against torch's complex gradients."""

import numpy as np

from op_table import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, Op, S, View, unary_samples


def complex_samples(mk):
    samples = [S("2d", mk((3, 4)))]
    if mk.layouts:
        samples += [S("0dim", mk(())), S("empty", mk((0, 3))), S("transposed", mk.transposed((4, 3)))]
    return samples


def pairs_samples(mk):
    """Floats whose last dim holds (real, imaginary) pairs; a last dim of another size, or one that is
    not contiguous, is an error."""
    return [
        S("pairs", mk((3, 2))),
        S("batch", mk((2, 3, 2))),
        S("0dim_pair", mk((2,))),
        S("sliced_rows", View(mk((4, 2)), lambda t: t[1::2])),
        S("not_pairs", mk((3, 3))),
        S("transposed", mk.transposed((3, 2))),
        S("odd_offset", View(mk((7,)), lambda t: t[1:5].view(2, 2))),
    ]


def parts_samples(mk):
    """(real, imaginary) or (abs, angle) parts."""
    return [
        S("same_shape", mk((3, 4)), mk.other((3, 4))),
        S("broadcast", mk((3, 1)), mk.other((4,))),
        S("0dim", mk(()), mk.other(())),
        S("mixed_dtypes", mk((3,)), mk.other((3,), dtype="float64" if mk.dtype != "float64" else "float32")),
    ]


def resolved(name):
    """torch's conj is a lazy view, which NumPy cannot read: the conjugate is resolved (tensorplay's
    conj is computed already, and resolve_conj returns it)."""
    return lambda m, x: getattr(m, name)(x).resolve_conj()


ROWS = [
    Op("view_as_real", complex_samples, dtypes=COMPLEX_DTYPES + ("float32",)),
    Op("view_as_complex", pairs_samples, dtypes=("float32", "float64", "int64")),
    Op("real", complex_samples, dtypes=COMPLEX_DTYPES + ("float32", "int64")),
    Op("imag", complex_samples, dtypes=COMPLEX_DTYPES + ("float32",)),
    Op("complex", parts_samples, dtypes=("float32", "float64", "int64"), domain=(0, 3)),
    Op("polar", parts_samples, dtypes=("float32", "float64", "int64"), domain=(0, 3)),
    Op("angle", unary_samples, dtypes=COMPLEX_DTYPES + FLOAT_DTYPES + INT_DTYPES + ("bool",)),
    Op("conj", unary_samples, fn=resolved("conj"), dtypes=COMPLEX_DTYPES + ("float32", "int64", "bool")),
    Op("conj_physical", unary_samples, fn=resolved("conj_physical"),
       dtypes=COMPLEX_DTYPES + ("float32", "int64", "bool")),
]

GRADIENT_LABELS = "view_as_complex complex polar angle conj conj_physical".split()
COMPLEX_ONLY_GRADIENT_LABELS = "view_as_real real imag".split()
NOT_DIFFERENTIABLE = {}

# Rows of the other families that run in the complex dtypes too.
ALSO_COMPLEX = set("""
    neg abs sgn exp exp2 log log2 log10 sqrt rsqrt reciprocal sin cos tan sinh cosh tanh sigmoid square
    isnan isinf isfinite
    add add.alpha2 add.alpha_float sub sub.alpha2 sub.alpha_float rsub mul div pow eq ne where
    sum mean prod var std cumsum cumprod norm renorm dist frobenius_norm linalg.vector_norm linalg.matrix_norm
    matmul mm bmm dot vdot outer trace inner kron tensordot einsum addr ger chain_matmul matrix_power cross
    linalg.vecdot linalg.multi_dot linalg.vander
    clone cat stack flip transpose permute reshape t squeeze unsqueeze flatten narrow select split chunk unbind
    movedim diagonal index_select gather masked_fill
""".split())

"""Gradients of the ops in op_table.TABLE: gradcheck, against torch, and the gradients' dtypes.

The same table that test_ops.py checks forward results from drives three checks here, for every op whose
result is floating and differentiable with respect to at least one floating tensor input (GRADIENT_OPS):

* test_gradcheck (`gradcheck-<op>-<sample>`): every floating input becomes a float64 leaf that requires grad,
  and tensorplay.autograd.gradcheck compares tensorplay's Jacobians with float64 central differences.
* test_gradients_match_torch (`torch-<op>-<sample>`, and `...-float64`): the same float32 inputs in both libraries,
  and the same inputs in float64, a fixed random upstream gradient; every input's gradient must agree with torch's
  in None-ness, dtype, shape and values.
* test_gradient_dtypes (`dtype-<op>-<sample>`): samples whose floating inputs differ in dtype (float32 op
  float64, ...) or whose result has another dtype (dtype=float64), and casts (x.to(bfloat16), ...): each input's
  gradient has that input's dtype, and agrees with torch.
* test_complex_gradients (`complex-<op>-<sample>`): the ops that run in complex dtypes, on complex128 inputs
  (complex64 samples widened): complex gradcheck (each input and output counted as its real and imaginary
  parts), and each input's gradient against torch's for a complex upstream gradient.

Each op runs on a few of its own samples (see select_samples): the first usable one, a broadcast one and a
non-contiguous one where the table has them, and the extras in EXTRA_SAMPLES. A sample is usable when torch
runs it with finite results and gradients; for gradcheck the values are drawn continuous (no ties for
max/amax/maximum) and torch's own gradcheck must pass on it, so that no sample sits on a kink.
Ops that are not differentiable are listed in NOT_DIFFERENTIABLE with the reason; the coverage tests fail
when a table op is in neither list, or when an op listed as not differentiable has a nonzero torch gradient.
"""

import functools
import importlib
import warnings
import zlib
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
import torch

import op_table
import tensorplay
from op_table import NUMPY_DTYPES, TABLE, TOLERANCES, DType, Maker, Op, S, Sample, View
from shared import run_isolated

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOATING = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")

# ---------------------------------------------------------------------------------------------
# Which ops of the table are differentiable. Every op (by its label in the table) is in exactly one list.

BOOL_RESULT = "bool result: comparisons, logical ops and isnan-style tests have no gradient"
INTEGER_ONLY = "integer/bool-only op: torch refuses floating inputs, so there is nothing to differentiate"
INDEX_RESULT = "integer result (indices): not differentiable"
NO_DERIVATIVE = "torch has no derivative for it (backward raises 'derivative ... is not implemented')"

NOT_DIFFERENTIABLE = {
    **{name: BOOL_RESULT for name in """
        logical_not isnan isinf isfinite eq ne lt le gt ge logical_and logical_or logical_xor
        __eq__ __ne__ __lt__ __le__ __gt__ __ge__ all any""".split()},
    **{name: INTEGER_ONLY for name in """
        bitwise_not bitwise_and bitwise_or bitwise_xor __and__ __or__ __xor__ __invert__
        __rand__ __ror__ __rxor__ __iand__ __ior__ __ixor__""".split()},
    **{name: INDEX_RESULT for name in "argmax argmin nonzero".split()},
    **{name: NO_DERIVATIVE for name in "floor_divide __floordiv__ __ifloordiv__ __rfloordiv__.int __rfloordiv__.float"
       .split()},
    "__rmod__.int": "number % tensor: torch's remainder(Scalar, Tensor) has no derivative for the tensor",
    "__rmod__.float": "number % tensor: torch's remainder(Scalar, Tensor) has no derivative for the tensor",
    "argsort": INDEX_RESULT,
    "soft_margin_loss": "torch refuses a target that requires grad, and every floating input here does; its "
                        "gradient is tested in test_nn_losses_more.py",
}

# Every floating op of the table that torch differentiates (zero gradients of the flat ops included).
GRADIENT_OPS = """
    neg abs sign exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin acos atan sinh cosh tanh
    sigmoid erf erfinv
    floor ceil round round.decimals2 trunc relu silu gelu gelu.tanh softplus softplus.beta2
    nan_to_num nan_to_num.values clamp clamp.min clamp.max clamp.float_bounds clamp.min_gt_max clamp.tensor
    clip clip.tensor square
    add add.alpha2 add.alpha_float sub sub.alpha2 sub.alpha_float rsub rsub.alpha2 mul div div.trunc div.floor remainder
    pow pow.negative_base pow.scalar_base atan2 maximum minimum max.other min.other
    lerp addcmul addcmul.value addcmul.int_value addcdiv addcdiv.value where Tensor.where
    __add__ __sub__ __mul__ __truediv__ __mod__ __pow__ __neg__ __abs__
    __radd__.int __radd__.float __rsub__.int __rsub__.float __rmul__.int __rmul__.float
    __rtruediv__.int __rtruediv__.float __rpow__.int __rpow__.float __rpow__.negative_int_exponent
    __iadd__ __isub__ __imul__ __itruediv__ __imod__ __ipow__
    promote.tensor promote.0dim promote.scalar promote.iadd
    sum mean prod amax amin max min var std norm norm.int_p logsumexp cumsum cumprod softmax log_softmax
    matmul __matmul__ mm bmm addmm baddbmm dot mv outer vdot addmv addr addbmm tensordot einsum cross trace diagonal
    linalg.vecdot linalg.multi_dot linalg.vector_norm linalg.matrix_norm renorm dist cdist pdist cosine_similarity
    Tensor.view Tensor.view_as reshape permute transpose swapaxes t Tensor.T Tensor.expand Tensor.expand_as
    broadcast_to squeeze unsqueeze flatten unflatten Tensor.contiguous clone narrow select split chunk unbind cat stack
    Tensor.repeat flip movedim
    index_select gather scatter scatter_add masked_fill
    sort msort topk kthvalue
    elu elu.alpha2 elu.negative_alpha elu.inplace elu_ celu celu.alpha2 celu.inplace celu_ selu selu.inplace selu_
    glu hardshrink hardshrink.lambd2 hardsigmoid hardsigmoid.inplace hardswish hardswish.inplace hardtanh
    hardtanh.bounds hardtanh.inplace hardtanh_ relu6 relu6.inplace relu.inplace relu_ leaky_relu leaky_relu.slope0.2
    leaky_relu.inplace leaky_relu_ rrelu rrelu.bounds rrelu.inplace rrelu_ threshold threshold.inplace threshold_
    logsigmoid mish mish.inplace softshrink softshrink.lambd0 softsign tanhshrink softmin normalize
    margin_ranking_loss margin_ranking_loss.margin hinge_embedding_loss hinge_embedding_loss.margin
    multilabel_soft_margin_loss cosine_embedding_loss cosine_embedding_loss.margin multi_margin_loss
    multi_margin_loss.p2 multilabel_margin_loss poisson_nll_loss poisson_nll_loss.rate_full gaussian_nll_loss
    gaussian_nll_loss.full_eps triplet_margin_loss triplet_margin_loss.p1_swap triplet_margin_with_distance_loss
    mse_loss.weight l1_loss.weight huber_loss.weight linear_cross_entropy
    instance_norm local_response_norm rms_norm conv3d conv_transpose3d conv_tbc
    max_pool1d max_pool1d.ties max_pool2d max_pool2d.ties max_pool3d max_pool3d.ties adaptive_max_pool1d
    adaptive_max_pool1d.ties adaptive_max_pool2d adaptive_max_pool2d.ties adaptive_max_pool3d adaptive_max_pool3d.ties
    avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d lp_pool1d lp_pool2d
    lp_pool3d max_unpool1d max_unpool2d max_unpool3d fractional_max_pool2d fractional_max_pool3d
    pad pad.reflect pad.replicate pad.circular interpolate.nearest_1d interpolate.nearest interpolate.nearest_exact_3d
    interpolate.linear interpolate.bilinear interpolate.bicubic interpolate.trilinear interpolate.bilinear_antialias
    interpolate.bicubic_antialias interpolate.area unfold fold pixel_shuffle pixel_unshuffle channel_shuffle
    grid_sample grid_sample.nearest grid_sample.bicubic affine_grid
""".split()

# The composite families' rows files classify their own rows.
for family in op_table.COMPOSITE_FAMILIES:
    GRADIENT_OPS += family.GRADIENT_LABELS
    NOT_DIFFERENTIABLE.update(family.NOT_DIFFERENTIABLE)
# Rows whose differentiable inputs are complex only (view_as_real, ...): checked by the complex checks alone.
COMPLEX_ONLY_GRADIENT_OPS = (op_table.op_table_complex.COMPLEX_ONLY_GRADIENT_LABELS +
                             op_table.op_table_fft.COMPLEX_ONLY_GRADIENT_LABELS)

# Samples run besides the automatic choice, where the first usable sample misses the op's own backward path.
EXTRA_SAMPLES = {
    "max": ("dim1",),               # (values, indices): the gradient goes to the index, not spread over ties
    "min": ("dim1", "dim1_keepdim"),
    "amax": ("dim1", "dims0_2"),
    "amin": ("dims0_2_keepdim",),
    "sum": ("dim1", "dim1_keepdim", "dims0_2_keepdim", "strided_dim-1"),
    "mean": ("dims0_2", "dim1_keepdim"),
    "prod": ("dim1",),
    "var": ("dim1", "dim1_correction0"),
    "std": ("dim1_keepdim", "dim1_unbiased_false"),
    "norm": ("pinf", "p3.0_dim1"),
    "norm.int_p": ("p2_dim1",),
    "cumsum": ("dim1",),
    "addmm": ("beta_alpha", "float_beta_alpha"),
    "baddbmm": ("float_beta_alpha",),
    "__matmul__": ("1d@2d", "2d@1d", "3d@2d"),
    "einsum": ("trace", "three", "broadcast"),
    "linalg.vector_norm": ("inf_keepdim", "ord3", "ord_half", "zeros"),
    "linalg.matrix_norm": ("ord_inf", "ord_neg1"),
    "cdist": ("batched_p1", "pinf"),
    "renorm": ("dim1_p1",),
    "index_select": ("dim0",),      # repeated indices: their gradients add up
    "gather": ("dim0", "negative_dim"),
    "masked_fill": ("0dim_tensor_value",),  # the fill value is a tensor: it gets the masked positions' gradient
    "scatter": ("float_value",),
    "scatter_add": ("dim0",),
    "Tensor.view": ("2d",),
    "Tensor.expand": ("new_dims",),
    "broadcast_to": ("new_dims",),
    "squeeze": ("dim",),
    "unsqueeze": ("negative",),
    "select": ("negative",),
    "flatten": ("from1",),
    "Tensor.repeat": ("new_dims",),
    "flip": ("dims",),
    "split": ("list_dim1",),        # a zero-length piece
    "chunk": ("uneven",),
    "unbind": ("dim1",),
    "cat": ("dim1", "empty_1d_legacy"),  # the skipped 1-D empty tensor still gets a (0,) gradient
    "stack": ("dim_last",),
    "where": ("tensor_int_scalar", "broadcast_ranks"),
    "Tensor.where": ("scalar_other",),
    "lerp": ("tensor_weight",),
    "sub": ("0dim_other",),
    "rsub.alpha2": ("float_scalar",),
    "mul": ("broadcast_ranks", "int64_other"),
    "div": ("broadcast_ranks",),
    "maximum": ("broadcast_ranks",),
    "pow": ("broadcast_ranks", "int_scalar", "negative_int_exponent", "fractional_exponent"),
    "pow.negative_base": ("int_scalar",),
    "__mul__": ("float_scalar",),
    "__truediv__": ("int_scalar",),
    "__pow__": ("int_scalar", "float_scalar"),
}


# ---------------------------------------------------------------------------------------------
# Casts: not in the table (test_ops has no dtype conversions), but their gradients must come back in the
# source dtype. Dyadic values (multiples of 1/8 in [-3, 3]) with a gradcheck step of 2**-6 stay exact in
# bfloat16 and float16, so float64 central differences through a narrowing cast are exact, not rounded.

DYADIC_EPS = 2.0 ** -6


def cast_samples(source):
    def samples(mk):
        def dyadic(shape):
            return (mk.rng.integers(-24, 25, shape) / 8).astype(NUMPY_DTYPES[source])
        return [S("1d", dyadic((5,))), S("transposed", View(dyadic((4, 3)), lambda t: t.transpose(-2, -1)))]
    return samples


def cast(label, source, fn):
    return Op("to", cast_samples(source), label=label, fn=fn)


CASTS = [
    cast("to.bfloat16", "float32", lambda m, x: x.to(m.bfloat16)),
    cast("to.float16", "float32", lambda m, x: x.to(m.float16)),
    cast("to.float64", "float32", lambda m, x: x.to(m.float64)),
    cast("to.dtype_keyword", "float64", lambda m, x: x.to(dtype=m.float32)),
    cast("Tensor.double", "float32", lambda m, x: x.double()),
    cast("Tensor.float", "bfloat16", lambda m, x: x.float()),
    cast("Tensor.float.from_float16", "float16", lambda m, x: x.float()),
    cast("Tensor.half", "float64", lambda m, x: x.half()),
    cast("Tensor.bfloat16", "float32", lambda m, x: x.bfloat16()),
    # The gradient itself passes through bfloat16 on the way back: times 3 keeps gradcheck's unit seeds exact.
    cast("to.bfloat16_and_back", "float32", lambda m, x: x.to(m.bfloat16).to(m.float32) * 3),
    Op("type_as", lambda mk: [S("float32_as_float64", cast_samples("float32")(mk)[0].args[0],
                                mk((5,), dtype="float64"))],
       label="Tensor.type_as", fn=lambda m, x, y: x.type_as(y) * y),
]
CAST_LABELS = {op.label for op in CASTS}


# ---------------------------------------------------------------------------------------------
# Running an op on leaves: the sample's floating arrays (and View bases) become the leaves, in order.

def is_floating(array):
    return isinstance(array, np.ndarray) and array.dtype.name in FLOATING


def leaf_arrays(value):
    """The floating arrays of a sample argument that become leaves (a View's base, not the view)."""
    if isinstance(value, View):
        return leaf_arrays(value.base)
    if isinstance(value, np.ndarray):
        return [value] if is_floating(value) else []
    if isinstance(value, (list, dict)):
        return [a for v in (value.values() if isinstance(value, dict) else value) for a in leaf_arrays(v)]
    return []


def with_floats_as(value, dtype):
    """The sample argument with its floating arrays cast to dtype."""
    if isinstance(value, View):
        return View(with_floats_as(value.base, dtype), value.view)
    if is_floating(value):
        return value.astype(NUMPY_DTYPES[dtype])
    if isinstance(value, list):
        return [with_floats_as(v, dtype) for v in value]
    if isinstance(value, dict):
        return {k: with_floats_as(v, dtype) for k, v in value.items()}
    return value


def tensor_of(m, array):
    # torch.from_numpy has no bfloat16: through float32, which holds every bfloat16 exactly.
    if m is torch and array.dtype == BFLOAT16:
        return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
    return m.from_numpy(np.array(array, order="C", copy=True))  # (np.ascontiguousarray makes 0-dim 1-D)


def make_leaves(m, arrays):
    return [tensor_of(m, a).requires_grad_() for a in arrays]


def substitute(m, value, leaves):
    """The argument for module m: floating arrays are the next leaves (views applied), others plain tensors."""
    if isinstance(value, View):
        return value.view(substitute(m, value.base, leaves))
    if isinstance(value, np.ndarray):
        return next(leaves) if is_floating(value) else tensor_of(m, value)
    if isinstance(value, DType):
        return getattr(m, value)
    if isinstance(value, list):
        return [substitute(m, v, leaves) for v in value]
    if isinstance(value, dict):
        return {k: substitute(m, v, leaves) for k, v in value.items()}
    return value


def floating_outputs(result):
    """The floating tensors of a result (a tensor, or a tuple/list/namedtuple of them), in order."""
    if isinstance(result, (torch.Tensor, tensorplay.Tensor)):
        return [result] if result.is_floating_point() or result.is_complex() else []
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in floating_outputs(r)]
    return []


def op_callables(op):
    """(tensorplay fn, torch fn), each called as fn(m, *args, **kwargs): the op's primary form as in test_ops."""
    if op.fn is not None:
        return op.fn, op.torch_fn or op.fn
    if hasattr(torch, op.name):
        fn = lambda m, *args, **kwargs: getattr(m, op.name)(*args, **kwargs)  # noqa: E731
    else:
        fn = lambda m, x, *args, **kwargs: getattr(x, op.name)(*args, **kwargs)  # noqa: E731
    return fn, fn


@dataclass(eq=False)
class GradCase:
    id: str
    op: Op
    sample: Sample
    eps: float = 1e-6

    @property
    def arrays(self):
        return leaf_arrays([list(self.sample.args), self.sample.kwargs])

    def run(self, m, leaves):
        """The op's floating outputs, as a tuple, computed from leaves."""
        fn = op_callables(self.op)[0 if m is tensorplay else 1]
        it = iter(leaves)
        args = substitute(m, list(self.sample.args), it)
        kwargs = substitute(m, self.sample.kwargs, it)
        if self.op.returns_self and args and getattr(args[0], "requires_grad", False):
            args[0] = args[0].clone()  # an in-place op on a leaf is an error: on a non-leaf copy it is differentiable
        return tuple(floating_outputs(fn(m, *args, **kwargs)))


def op_samples(op, dtype, integers):
    """The op's samples from the table's Maker (the seed test_ops uses), floating arrays in dtype."""
    mk = Maker(dtype, zlib.crc32(f"{op.label}-{dtype}".encode()), op.domain, op.other_domain, op.nonzero_other,
               integers)
    return [Sample(s.label, s.args, {**op.kwargs, **s.kwargs}) for s in op.samples(mk)]


# ---------------------------------------------------------------------------------------------
# What torch does with a sample: the oracle decides which samples are usable.

def upstream(case, outputs):
    """A fixed random gradient for each output (standard normal values, in the output's dtype)."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))

    def seed(o):
        values = rng.standard_normal(tuple(o.shape))
        if o.is_complex():
            values = values + 1j * rng.standard_normal(tuple(o.shape))
        return np.asarray(values).astype(np.float32 if o.dtype == torch.bfloat16 else NUMPY_DTYPES[dtype_name(o)])
    return [seed(o) for o in outputs]


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def torch_gradient_kind(case):
    """'error' (torch raises), 'nonfloat' (no floating output), 'no_grad' (outputs don't require grad),
    'backward_error', 'empty', 'nonfinite', 'zero' (all gradients zero/None) or 'nonzero'."""
    arrays = case.arrays
    leaves = make_leaves(torch, arrays)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outputs = case.run(torch, leaves)
    except Exception:  # noqa: BLE001
        return "error"
    if not outputs:
        return "nonfloat"
    if not leaves or not all(o.requires_grad for o in outputs):
        return "no_grad"
    try:
        grads = torch.autograd.grad(outputs, leaves, [torch.from_numpy(u).to(o.dtype) for u, o in
                                                      zip(upstream(case, outputs), outputs)], allow_unused=True)
    except Exception:  # noqa: BLE001
        return "backward_error"
    if sum(o.numel() for o in outputs) == 0 or sum(x.numel() for x in leaves) == 0:
        return "empty"
    values = [o.detach() for o in outputs] + [g for g in grads if g is not None]
    if not all(torch.isfinite(v if v.is_complex() else v.double()).all() for v in values):
        return "nonfinite"
    return "zero" if all(g is None or not g.any() for g in grads) else "nonzero"


def torch_gradcheck_passes(case):
    """torch's own gradcheck, in fast mode (a random projection of the Jacobian: quick), or where that fails in
    the full mode (fast mode's random vectors are not exact in 16-bit floats, which the cast checks rely on)."""
    leaves = make_leaves(torch, case.arrays)

    def passes(fast):
        try:
            return torch.autograd.gradcheck(lambda *xs: case.run(torch, xs), leaves, eps=case.eps, atol=1e-5,
                                            rtol=1e-3, raise_exception=False, fast_mode=fast)
        except Exception:  # noqa: BLE001
            return False

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return passes(fast=True) or passes(fast=False)


def has_view(value):
    if isinstance(value, View):
        return True
    if isinstance(value, (list, tuple)):
        return any(has_view(v) for v in value)
    if isinstance(value, dict):
        return any(has_view(v) for v in value.values())
    return False


LAYOUTS = {
    "broadcast": lambda c: "broadcast" in c.sample.label,
    "non-contiguous": lambda c: has_view([list(c.sample.args), c.sample.kwargs]),
}


def select_samples(cases, usable):
    """The first usable case, the first usable broadcast one, the first usable one with a non-contiguous
    input, and the op's EXTRA_SAMPLES that are usable; in table order, without repeats."""
    picked, verdicts = [], {}

    def first(condition):
        for case in cases:
            if condition(case):
                if id(case) not in verdicts:
                    verdicts[id(case)] = usable(case)
                if verdicts[id(case)]:
                    return case
        return None

    extras = EXTRA_SAMPLES.get(cases[0].op.label, ()) if cases else ()
    for condition in (lambda c: True, *LAYOUTS.values(), *[lambda c, e=e: c.sample.label == e for e in extras]):
        case = first(condition)
        if case is not None and all(case is not p for p in picked):
            picked.append(case)
    order = {id(c): i for i, c in enumerate(cases)}
    return sorted(picked, key=lambda c: order[id(c)])


GRADCHECK_MAX_ELEMENTS = 48


def gradcheck_cases(op):
    """The op's float32 samples (the Maker gives broadcast/non-contiguous ones only for float32) drawn with
    continuous values (no ties) and cast to float64; usable when their inputs are small (gradcheck costs two
    forward evaluations per input element) and torch's own gradcheck passes on them."""
    eps = DYADIC_EPS if op.label in CAST_LABELS else 1e-6
    cases = [GradCase(f"gradcheck-{op.label}-{s.label}", op, in_float64(s), eps)
             for s in op_samples(op, "float32", integers=False)]
    return select_samples(cases, lambda c: all(a.size <= GRADCHECK_MAX_ELEMENTS for a in c.arrays) and
                          torch_gradient_kind(c) in ("zero", "nonzero") and torch_gradcheck_passes(c))


def in_float64(sample):
    return Sample(sample.label, with_floats_as(list(sample.args), "float64"), with_floats_as(sample.kwargs, "float64"))


def float32_cases(op, prefix):
    """The op's float32 samples exactly as test_ops makes them (mixed-dtype samples keep their dtypes)."""
    return [GradCase(f"{prefix}-{op.label}-{s.label}", op, s) for s in op_samples(op, "float32", op.integers)]


def float64_cases(op):
    """The float32 samples with their floats in float64 (the float64 Maker makes no broadcast or non-contiguous
    ones): a backward that makes a tensor of the default dtype gives float64 inputs float32 gradients."""
    return [GradCase(f"{c.id}-float64", op, in_float64(c.sample)) for c in float32_cases(op, "torch")]


def dtype_cases(op):
    """The op's samples made in float32 and in float64 whose floating inputs differ in dtype, or whose dtype=
    argument gives the result another dtype; the id ends with the inputs' dtypes, e.g. `-float32+float64`."""
    cases = []
    for dtype in ("float32", "float64"):
        for s in op_samples(op, dtype, op.integers):
            case = GradCase(f"dtype-{op.label}-{s.label}", op, s)
            case.id += "-" + "+".join(a.dtype.name for a in case.arrays)
            new = case.id not in {c.id for c in cases}
            if new and (is_mixed(case) or op.label in CAST_LABELS) and usable(case):
                cases.append(case)
    return cases


def is_mixed(case):
    """Floating inputs of several dtypes, or a dtype= argument that makes the result's dtype another."""
    dtypes = {a.dtype for a in case.arrays}
    return len(dtypes) > 1 or any(isinstance(v, DType) for v in [*case.sample.args, *case.sample.kwargs.values()])


TABLE_BY_LABEL = {op.label: op for op in TABLE}
GRADIENT_TABLE_OPS = [op for op in TABLE if op.label in GRADIENT_OPS]


def usable(case):
    return torch_gradient_kind(case) in ("zero", "nonzero")


GRADCHECK_CASES = [c for op in GRADIENT_TABLE_OPS + CASTS for c in gradcheck_cases(op)]
TORCH_CASES = [c for op in GRADIENT_TABLE_OPS for cases in (float32_cases(op, "torch"), float64_cases(op))
               for c in select_samples(cases, usable)]
DTYPE_CASES = [c for op in GRADIENT_TABLE_OPS + CASTS for c in dtype_cases(op)]


def params(cases):
    return [pytest.param(c, id=c.id) for c in cases]


# ---------------------------------------------------------------------------------------------
# isolate=True ops crashed the interpreter once: they run in a forked child, so that a crash fails one case.

class Failure(AssertionError):
    pass


def checked(check, case):
    """Runs check(case); a Failure becomes a test failure with its message alone (no traceback)."""
    try:
        (functools.partial(run_isolated, check, failure=Failure) if case.op.isolate else check)(case)
        failure = None
    except Failure as e:
        failure = str(e)
    if failure:
        pytest.fail(failure, pytrace=False)


# ---------------------------------------------------------------------------------------------
# 1. gradcheck in float64

def jacobian_report(fn, leaves, eps, rtol=1e-3, atol=1e-5):
    """Where tensorplay's analytical Jacobians differ from the numerical ones, in a few lines."""
    gc = importlib.import_module("tensorplay.autograd.gradcheck")
    lines = []
    outputs = fn(*leaves)
    for i in range(len(outputs)):
        for j, x in enumerate(leaves):
            numerical = gc._numerical_jacobian(fn, leaves, x, i, eps)
            analytical = gc._analytical_jacobian(fn, leaves, x, i)
            if numerical.shape != analytical.shape:
                lines.append(f"output {i} wrt input {j}: Jacobian shape numerical {numerical.shape}, "
                             f"analytical {analytical.shape}")
                continue
            bad = ~np.isclose(analytical, numerical, rtol=rtol, atol=atol)
            if not bad.any():
                continue
            k, n = np.unravel_index(np.argmax(np.where(bad, np.abs(analytical - numerical), -1)), bad.shape)
            line = (f"output {i} {tuple(outputs[i].shape)} wrt input {j} {tuple(x.shape)}: {bad.sum()} of {bad.size} "
                    f"entries differ; worst d out[{n}]/d in[{k}]: numerical {numerical[k, n]:.6g}, "
                    f"analytical {analytical[k, n]:.6g}")
            if not analytical[bad].any():
                line += " (analytical is 0 there)"
            elif np.allclose(analytical[bad] / np.where(numerical[bad] == 0, np.nan, numerical[bad]),
                             analytical[k, n] / numerical[k, n] if numerical[k, n] else np.nan):
                line += f" (analytical = {analytical[k, n] / numerical[k, n]:.4g} x numerical throughout)"
            lines.append(line)
            if bad.size <= 48:
                lines.append(f"  numerical:  {np.array2string(numerical, precision=4).replace(chr(10), '')}")
                lines.append(f"  analytical: {np.array2string(analytical, precision=4).replace(chr(10), '')}")
    return "\n".join(lines)


def check_gradcheck(case):
    leaves = make_leaves(tensorplay, case.arrays)

    def fn(*xs):
        return case.run(tensorplay, xs)

    try:
        passed = tensorplay.autograd.gradcheck(fn, leaves, eps=case.eps, atol=1e-5, rtol=1e-3)
    except tensorplay.autograd.GradcheckError as e:
        try:
            report = jacobian_report(fn, leaves, case.eps)
        except Exception:  # noqa: BLE001
            report = ""
        raise Failure("gradcheck: numerical and analytical Jacobians differ\n" + (report or str(e))) from None
    except Exception as e:  # noqa: BLE001
        try:  # gradcheck itself may fail while it reports a mismatch: say what the mismatch was
            report = jacobian_report(fn, leaves, case.eps)
        except Exception:  # noqa: BLE001
            report = ""
        raise Failure(f"tensorplay raised {type(e).__name__}: {e}"
                      + (f"\nJacobians (from gradcheck's own helpers):\n{report}" if report else "")) from None
    if passed is not True:
        raise Failure(f"gradcheck returned {passed!r}")


@pytest.mark.parametrize("case", params(GRADCHECK_CASES))
def test_gradcheck(case):
    checked(check_gradcheck, case)


# ---------------------------------------------------------------------------------------------
# 2. and 3. Gradients against torch's, and their dtypes

# (rtol, atol) by dtype. A gradient is only as precise as the least precise dtype it passed through: a float64
# input added to a float32 tensor gets a float32 gradient (summed in float32 by torch) cast to float64. So each
# gradient is compared at the loosest tolerance of its own dtype and the outputs' dtypes.
GRAD_TOLERANCES = {
    "float64": (1e-7, 1e-9),
    "complex128": (1e-7, 1e-9),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1e-2),
}
PRECISION_ORDER = ("float64", "complex128", "float32", "complex64", "float16", "bfloat16")  # the most precise first


def gradient_tolerance(grad_dtype, output_dtypes):
    return GRAD_TOLERANCES[max([grad_dtype, *output_dtypes], key=PRECISION_ORDER.index)]


def as_float64(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return (t.resolve_conj().to(torch.complex128) if t.is_complex() else t.double()).numpy()
    return np.asarray(t.numpy()).astype(np.complex128 if t.is_complex() else np.float64)


def fmt(array):
    return np.array2string(np.asarray(array), threshold=40, precision=6, separator=", ").replace("\n", "")


def close(ours, theirs, rtol, atol, what):
    got, want = as_float64(ours), as_float64(theirs)
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        raise Failure(f"{what}: values differ ({bad.sum()} of {bad.size} elements)\n"
                      f"  torch:      {fmt(want)}\n  tensorplay: {fmt(got)}")


def check_against_torch(case):
    arrays = case.arrays
    t_leaves = make_leaves(torch, arrays)
    t_outputs = case.run(torch, t_leaves)
    seeds = upstream(case, t_outputs)
    t_grads = torch.autograd.grad(t_outputs, t_leaves, [torch.from_numpy(u).to(o.dtype)
                                                        for u, o in zip(seeds, t_outputs)], allow_unused=True)

    leaves = make_leaves(tensorplay, arrays)
    try:
        outputs = case.run(tensorplay, leaves)
    except Exception as e:  # noqa: BLE001
        raise Failure(f"forward: tensorplay raised {type(e).__name__}: {e}") from None
    if len(outputs) != len(t_outputs):
        raise Failure(f"forward: {len(outputs)} floating outputs, torch {len(t_outputs)}")
    for i, (o, t) in enumerate(zip(outputs, t_outputs)):
        if dtype_name(o) != dtype_name(t) or tuple(o.shape) != tuple(t.shape):
            raise Failure(f"forward output {i}: {dtype_name(o)} {tuple(o.shape)}, torch {dtype_name(t)} "
                          f"{tuple(t.shape)}")
        close(o, t, *case.op.tol.get(dtype_name(t), TOLERANCES[dtype_name(t)]), f"forward output {i}")
        if not o.requires_grad:
            raise Failure(f"forward output {i} does not require grad (torch's does)")

    try:
        grads = tensorplay.autograd.grad(list(outputs), leaves, [tensor_of(tensorplay, u).to(o.dtype)
                                                                 for u, o in zip(seeds, outputs)], allow_unused=True)
    except Exception as e:  # noqa: BLE001
        raise Failure(f"backward: tensorplay raised {type(e).__name__}: {e}") from None
    if len(grads) != len(leaves):
        raise Failure(f"autograd.grad returned {len(grads)} gradients for {len(leaves)} inputs")
    for i, (g, t, x) in enumerate(zip(grads, t_grads, leaves)):
        what = f"gradient of input {i} ({dtype_name(x)} {tuple(x.shape)})"
        if t is None or g is None:
            if (t is None) != (g is None):
                raise Failure(f"{what}: torch {'None' if t is None else fmt(as_float64(t))}, "
                              f"tensorplay {'None' if g is None else fmt(as_float64(g))}")
            continue
        if dtype_name(g) != dtype_name(x):
            raise Failure(f"{what}: the gradient is {dtype_name(g)} (torch's is {dtype_name(t)})")
        if dtype_name(g) != dtype_name(t):
            raise Failure(f"{what}: dtype {dtype_name(g)}, torch {dtype_name(t)}")
        if tuple(g.shape) != tuple(t.shape):
            raise Failure(f"{what}: shape {tuple(g.shape)}, torch {tuple(t.shape)}")
        close(g, t, *gradient_tolerance(dtype_name(t), [dtype_name(o) for o in t_outputs]), what)


@pytest.mark.parametrize("case", params(TORCH_CASES))
def test_gradients_match_torch(case):
    checked(check_against_torch, case)


@pytest.mark.parametrize("case", params(DTYPE_CASES))
def test_gradient_dtypes(case):
    checked(check_against_torch, case)


# ---------------------------------------------------------------------------------------------
# 4. Complex gradients

def in_complex128(sample):
    """The sample with its complex arrays in complex128 and its real floating ones in float64."""
    def widen(value):
        if isinstance(value, View):
            return View(widen(value.base), value.view)
        if is_floating(value):
            return value.astype(np.complex128 if np.iscomplexobj(value) else np.float64)
        if isinstance(value, list):
            return [widen(v) for v in value]
        if isinstance(value, dict):
            return {k: widen(v) for k, v in value.items()}
        return value
    return Sample(sample.label, widen(list(sample.args)), widen(sample.kwargs))


def complex_cases(op):
    """The op's complex64 samples widened to complex128, picked as gradcheck_cases picks them; only samples
    with a complex input count."""
    cases = [GradCase(f"complex-{op.label}-{s.label}", op, in_complex128(s))
             for s in op_samples(op, "complex64", integers=False)]
    cases = [c for c in cases if any(np.iscomplexobj(a) for a in c.arrays)]
    return select_samples(cases, lambda c: all(a.size <= GRADCHECK_MAX_ELEMENTS for a in c.arrays) and
                          torch_gradient_kind(c) in ("zero", "nonzero") and torch_gradcheck_passes(c))


COMPLEX_GRADIENT_TABLE_OPS = [op for op in TABLE if (op.label in GRADIENT_OPS or op.label in
                                                     COMPLEX_ONLY_GRADIENT_OPS) and "complex64" in op.dtypes]
COMPLEX_CASES = [c for op in COMPLEX_GRADIENT_TABLE_OPS for c in complex_cases(op)]


def check_complex(case):
    check_gradcheck(case)
    check_against_torch(case)


@pytest.mark.parametrize("case", params(COMPLEX_CASES))
def test_complex_gradients(case):
    checked(check_complex, case)


# ---------------------------------------------------------------------------------------------
# The lists must keep covering the table.

@functools.cache
def torch_kinds(label):
    """torch_gradient_kind of each float32 sample of a table op."""
    op = TABLE_BY_LABEL[label]
    return {c.sample.label: torch_gradient_kind(c) for c in float32_cases(op, "kind")}


def test_every_table_op_is_classified():
    labels = [op.label for op in TABLE]
    both = sorted(set(GRADIENT_OPS) & set(NOT_DIFFERENTIABLE) | set(GRADIENT_OPS) & set(COMPLEX_ONLY_GRADIENT_OPS))
    assert not both, f"listed both as differentiable and not, or twice: {both}"
    listed = set(GRADIENT_OPS) | set(NOT_DIFFERENTIABLE) | set(COMPLEX_ONLY_GRADIENT_OPS)
    unknown = sorted(listed - set(labels))
    assert not unknown, f"not in the table: {unknown}"
    unlisted = [label for label in labels if label not in listed]
    assert not unlisted, f"table ops in neither GRADIENT_OPS nor NOT_DIFFERENTIABLE: {unlisted}"
    assert all(NOT_DIFFERENTIABLE.values()), "every exclusion needs its reason"


def test_differentiable_list_covers_every_floating_op():
    """An op whose result torch differentiates (nonzero gradient on some sample) must be in GRADIENT_OPS;
    an excluded op must have no nonzero torch gradient; a listed op must have a floating, differentiable result."""
    missing, wrongly_excluded, not_differentiable = [], [], []
    for op in TABLE:
        if op.label in COMPLEX_ONLY_GRADIENT_OPS:
            continue
        kinds = set(torch_kinds(op.label).values())
        if op.label in GRADIENT_OPS:
            if not kinds & {"zero", "nonzero"}:
                not_differentiable.append(f"{op.label} {sorted(kinds)}")
        elif "nonzero" in kinds:
            (wrongly_excluded if op.label in NOT_DIFFERENTIABLE else missing).append(op.label)
    assert not missing, f"differentiable table ops missing from GRADIENT_OPS: {missing}"
    assert not wrongly_excluded, f"NOT_DIFFERENTIABLE lists ops that torch differentiates: {wrongly_excluded}"
    assert not not_differentiable, f"GRADIENT_OPS lists ops without a differentiable sample: {not_differentiable}"


def test_every_differentiable_op_has_cases():
    """Each op of GRADIENT_OPS runs in every check, with its broadcast and non-contiguous samples where it has
    usable ones; so sample filtering cannot quietly drop an op."""
    problems = []
    for label in GRADIENT_OPS:
        for kind, cases in (("gradcheck", GRADCHECK_CASES), ("torch", TORCH_CASES)):
            if not any(c.op.label == label for c in cases):
                problems.append(f"{label}: no {kind} case")
    for op in CASTS:
        if not any(c.op is op for c in GRADCHECK_CASES) or not any(c.op is op for c in DTYPE_CASES):
            problems.append(f"{op.label}: no gradcheck or dtype case")
    for label in GRADIENT_OPS:  # gradcheck sees the same kinds of layout as the torch comparison
        def layouts(cases):
            return {kind for c in cases if c.op.label == label for kind, test in LAYOUTS.items() if test(c)}
        if layouts(TORCH_CASES) - layouts(GRADCHECK_CASES):
            missing = sorted(layouts(TORCH_CASES) - layouts(GRADCHECK_CASES))
            problems.append(f"{label}: gradcheck lacks {missing} samples")
    for op in COMPLEX_GRADIENT_TABLE_OPS:
        if not any(c.op is op for c in COMPLEX_CASES):
            problems.append(f"{op.label}: no complex case")
    for label, extras in EXTRA_SAMPLES.items():
        for extra in extras:
            if not any(c.op.label == label and c.sample.label == extra for c in TORCH_CASES):
                problems.append(f"{label}: extra sample {extra} is not usable")
    assert not problems, "\n".join(problems)


def test_dtype_cases_cover_mixed_dtypes_and_casts():
    ids = {c.id for c in DTYPE_CASES}
    for needed in ("dtype-promote.tensor-with_float64-float32+float64", "dtype-outer-mixed_dtype-float32+float64",
                   "dtype-where-other_float32-float64+float32", "dtype-cat-mixed_dtype-float64+float32",
                   "dtype-sum-dtype_float64-float32", "dtype-to.bfloat16-1d-float32",
                   "dtype-Tensor.float-1d-bfloat16", "dtype-to.dtype_keyword-transposed-float64"):
        assert needed in ids, needed


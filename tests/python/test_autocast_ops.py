"""Autocast op by op, against PyTorch.

tensorplay.autocast("cpu") casts each op's inputs as its row in the policy table says
(tensorplay.amp.policy_table). These tests run every op of that table under tensorplay's and
torch's CPU autocast on the same values and compare, and check the table itself against the
autocast kernels torch's dispatcher has:

* test_autocast_matches_torch (`<op>-<input dtypes>[-fp16autocast]`): each spec below runs under
  bfloat16 autocast (the CPU default) and under float16 autocast, with its floating inputs in
  float32, bfloat16, float16, float64, mixed (e.g. a bfloat16 input with float32 weights) and,
  where meaningful, int64. The outputs' dtypes must be torch's and their values agree within the
  output dtype's tolerance; where torch raises, tensorplay must raise the same exception type.
* test_every_table_op_has_a_spec: fails when an op of the table has no spec here.
* test_gradients_match_torch: float32 leaves through the lower-precision and float32 ops (and
  bfloat16 leaves through the float32 ones), backward outside the region: each gradient has its
  leaf's dtype and agrees with torch's.
* test_policy_matches_torch_dispatcher: an op has an autocast policy (anything but input_dtype)
  on a device iff torch registers an Autocast<device> kernel for it, bar the exceptions listed.
* test_mixed_dtypes_*: matmul-like ops reject mixed dtypes outside a region (naming both) and run
  them inside; test_promote_*: promote ops reject a float16/bfloat16 mix inside a bfloat16 region.

Where torch's result is an accident of its implementation and tensorplay deliberately differs,
torch_reference_case says what tensorplay is compared with instead, and a test of its own pins
the difference down (test_promote_with_float32_is_order_free, test_bce_with_logits_float64_input_
float32_target, test_bilinear_composite_runs_in_bfloat16_in_torch_only).

Every floating input value is a bfloat16 value that float16 also holds exactly, so casting the
inputs is exact in both libraries and only the op's own rounding can differ.
"""

import re
import zlib
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
import pytest
import torch

import tensorplay

FLOATING = ("float16", "bfloat16", "float32", "float64")


# =============================================================================================
# Spec inputs
# =============================================================================================

@dataclass(frozen=True)
class X:
    """A floating input of `shape` with values in [lo, hi]; it takes the dtype of the test case.
    nonzero keeps values at least 0.25 away from 0 (divisors)."""
    shape: tuple
    lo: float = -2.0
    hi: float = 2.0
    nonzero: bool = False


def x(*shape, lo=-2.0, hi=2.0, nonzero=False):
    return X(tuple(shape), lo, hi, nonzero)


class Ints:
    """A fixed int64 input (indices, class targets): the same in every case, never cast."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.int64)


def F(lib):
    return lib.nn.functional


def lstm_layer(lib, gates, h, c, w_hh):
    """One LSTM layer over 2 steps of 3 sequences from their input gates: tensorplay's fused layer, and
    the oneDNN layer (mkldnn_rnn_layer) that torch.lstm runs, given the gates through an identity
    input projection (exact in every dtype)."""
    if lib is tensorplay:
        return lib._C._lstm_layer(gates, [3, 3], h, c, w_hh, False)
    eye = torch.eye(gates.size(1), dtype=gates.dtype)
    out, h_n, c_n = torch.lstm(gates.view(2, 3, -1), (h[None], c[None]), [eye, w_hh], False, 1, 0.0, False, False,
                               False)
    return out.reshape(6, -1), h_n[0], c_n[0]


@dataclass
class Spec:
    """One call of a table op: fn(lib, *inputs) with lib = tensorplay or torch.

    variant: tells several specs of one op apart (the test ids read `op.variant-...`).
    ints: also run with every X input in int64 (ops for which integers are meaningful).
    tol: scales the output dtype's tolerance, for results whose rounding accumulates.
    grad: which inputs (positions) get gradients in the gradient tests; default every X.
    torch_lowers_inside: torch implements the op as a composite whose inner matmuls autocast
        lowers to the autocast dtype, while tensorplay runs it as one op in its inputs' dtype
        (the table's policy for both): the output dtypes agree, the values only to the autocast
        dtype's precision.
    input_dtypes: the input dtypes to run, where torch's op exists for fewer than cases_for's.
    """
    op: str
    fn: Callable
    inputs: tuple
    variant: str = ""
    ints: bool = False
    tol: float = 1.0
    grad: tuple = None
    torch_lowers_inside: bool = False
    input_dtypes: tuple = None

    @property
    def name(self):
        return f"{self.op}.{self.variant}" if self.variant else self.op

    @property
    def float_positions(self):
        return [i for i, a in enumerate(self.inputs) if isinstance(a, X)]


POS = dict(lo=0.25, hi=3.0)      # log, sqrt, rsqrt, ...
PROB = dict(lo=0.05, hi=0.95)    # probabilities
UNIT = dict(lo=-1.0, hi=1.0)

# =============================================================================================
# The specs: at least one per op of policy_table("cpu"), grouped as the table groups them.
# =============================================================================================

SPECS = [
    # --- matmuls and convolutions (lower_precision on CPU) ---------------------------------
    Spec("conv1d", lambda m, a, w, b: F(m).conv1d(a, w, b, padding=1), (x(2, 3, 7), x(4, 3, 3), x(4))),
    Spec("conv2d", lambda m, a, w, b: F(m).conv2d(a, w, b, padding=1), (x(2, 3, 5, 5), x(4, 3, 3, 3), x(4))),
    Spec("conv2d", lambda m, a, w: F(m).conv2d(a, w, stride=2), (x(1, 2, 6, 6), x(3, 2, 2, 2)), variant="nobias"),
    Spec("conv2d", lambda m, a, w: F(m).conv2d(a, w, padding="same"), (x(1, 2, 5, 5), x(3, 2, 3, 3)),
         variant="same"),
    Spec("conv_transpose2d", lambda m, a, w, b: F(m).conv_transpose2d(a, w, b, stride=2),
         (x(2, 3, 4, 4), x(3, 4, 3, 3), x(4))),
    Spec("mm", lambda m, a, b: m.mm(a, b), (x(4, 6), x(6, 3)), ints=True),
    Spec("bmm", lambda m, a, b: m.bmm(a, b), (x(2, 4, 6), x(2, 6, 3)), ints=True),
    Spec("addmm", lambda m, c, a, b: m.addmm(c, a, b), (x(4, 3), x(4, 6), x(6, 3))),
    Spec("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0), (x(3), x(4, 6), x(6, 3)),
         variant="broadcast"),
    Spec("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), (x(2, 4, 3), x(2, 4, 6), x(2, 6, 3))),
    Spec("matmul", lambda m, a, b: m.matmul(a, b), (x(2, 4, 6), x(6, 3)), ints=True),
    Spec("matmul", lambda m, a, b: m.matmul(a, b), (x(6), x(6)), variant="vector"),
    Spec("matmul", lambda m, a, b: a @ b, (x(4, 6), x(6, 3)), variant="operator"),
    Spec("linear", lambda m, a, w, b: F(m).linear(a, w, b), (x(4, 6), x(3, 6), x(3))),
    Spec("linear", lambda m, a, w: F(m).linear(a, w), (x(2, 4, 6), x(3, 6)), variant="nobias"),
    Spec("prelu", lambda m, a, w: F(m).prelu(a, w), (x(2, 3, 4), x(3, lo=0.05, hi=0.5))),
    Spec("scaled_dot_product_attention", lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v),
         (x(2, 4, 8, **UNIT), x(2, 5, 8, **UNIT), x(2, 5, 8)), tol=1.5),
    Spec("scaled_dot_product_attention",
         lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v, is_causal=True),
         (x(1, 2, 4, 8, **UNIT), x(1, 2, 4, 8, **UNIT), x(1, 2, 4, 8)), variant="causal", tol=1.5),
    Spec("mv", lambda m, a, v: m.mv(a, v), (x(4, 6), x(6)), ints=True),
    Spec("conv_transpose1d", lambda m, a, w, b: F(m).conv_transpose1d(a, w, b, stride=2, padding=1),
         (x(2, 3, 5), x(3, 4, 3), x(4))),
    Spec("addbmm", lambda m, c, a, b: m.addbmm(c, a, b, beta=0.5, alpha=2.0), (x(4, 3), x(2, 4, 6), x(2, 6, 3)),
         tol=1.5),
    Spec("linalg_vecdot", lambda m, a, b: m.linalg.vecdot(a, b), (x(3, 6), x(6))),
    Spec("addmv", lambda m, c, a, v: m.addmv(c, a, v, beta=0.5), (x(4), x(4, 6), x(6)), ints=True),
    Spec("addr", lambda m, c, a, b: m.addr(c, a, b, alpha=2.0), (x(4, 3), x(4), x(3)), ints=True),
    Spec("einsum", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), (x(2, 4, 6), x(2, 6, 3)), ints=True),
    Spec("einsum", lambda m, a, b: m.einsum("ii,i->", a, b), (x(4, 4), x(4)), variant="trace_like"),
    Spec("einsum", lambda m, a: m.einsum("...ij->...ji", a), (x(2, 3, 4),), variant="ellipsis"),
    Spec("linalg_multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), (x(4), x(4, 5), x(5, 3))),
    Spec("rnn_tanh_cell", lambda m, a, h, wi, wh, bi, bh: m.rnn_tanh_cell(a, h, wi, wh, bi, bh),
         (x(2, 3, **UNIT), x(2, 4, **UNIT), x(4, 3, **UNIT), x(4, 4, **UNIT), x(4, **UNIT), x(4, **UNIT))),
    Spec("rnn_relu_cell", lambda m, a, h, wi, wh: m.rnn_relu_cell(a, h, wi, wh),
         (x(2, 3, **UNIT), x(2, 4, **UNIT), x(4, 3, **UNIT), x(4, 4, **UNIT))),
    Spec("lstm_cell", lambda m, a, h, c, wi, wh, bi, bh: m.lstm_cell(a, (h, c), wi, wh, bi, bh),
         (x(2, 3, **UNIT), x(2, 4, **UNIT), x(2, 4, **UNIT), x(16, 3, **UNIT), x(16, 4, **UNIT), x(16, **UNIT),
          x(16, **UNIT)), tol=1.5),
    # torch.lstm reaches its lowered oneDNN layer for float32 and bfloat16 inputs only (others take
    # its cells), and oneDNN's float16 LSTM needs AVX512-FP16: bfloat16 autocast of those two.
    Spec("lstm_layer", lambda m, g, h, c, wh: lstm_layer(m, g, h, c, wh),
         (x(6, 16, **UNIT), x(3, 4, **UNIT), x(3, 4, **UNIT), x(16, 4, **UNIT)), tol=1.5,
         input_dtypes=("float32", "bfloat16")),
    Spec("gru_cell", lambda m, a, h, wi, wh, bi, bh: m.gru_cell(a, h, wi, wh, bi, bh),
         (x(2, 3, **UNIT), x(2, 4, **UNIT), x(12, 3, **UNIT), x(12, 4, **UNIT), x(12, **UNIT), x(12, **UNIT)),
         tol=1.5),

    # --- float32 on CUDA, their inputs' dtype on CPU ----------------------------------------
    Spec("exp", lambda m, a: m.exp(a), (x(3, 4),)),
    Spec("expm1", lambda m, a: m.expm1(a), (x(3, 4),)),
    Spec("log", lambda m, a: m.log(a), (x(3, 4, **POS),)),
    Spec("log10", lambda m, a: m.log10(a), (x(3, 4, **POS),)),
    Spec("log2", lambda m, a: m.log2(a), (x(3, 4, **POS),)),
    Spec("log1p", lambda m, a: m.log1p(a), (x(3, 4, **POS),)),
    Spec("reciprocal", lambda m, a: m.reciprocal(a), (x(3, 4, nonzero=True),)),
    Spec("rsqrt", lambda m, a: m.rsqrt(a), (x(3, 4, **POS),)),
    Spec("tan", lambda m, a: m.tan(a), (x(3, 4, **UNIT),)),
    Spec("acos", lambda m, a: m.acos(a), (x(3, 4, lo=-0.9, hi=0.9),)),
    Spec("asin", lambda m, a: m.asin(a), (x(3, 4, lo=-0.9, hi=0.9),)),
    Spec("cosh", lambda m, a: m.cosh(a), (x(3, 4),)),
    Spec("sinh", lambda m, a: m.sinh(a), (x(3, 4),)),
    Spec("erfinv", lambda m, a: m.erfinv(a), (x(3, 4, lo=-0.9, hi=0.9),)),
    Spec("pow", lambda m, a: m.pow(a, 2), (x(3, 4),), ints=True),
    Spec("pow", lambda m, a, b: m.pow(a, b), (x(3, 4, **POS), x(3, 4)), variant="tensor"),
    Spec("pow", lambda m, b: m.pow(2.0, b), (x(3, 4),), variant="scalar_base"),
    Spec("softplus", lambda m, a: F(m).softplus(a), (x(3, 4),)),
    Spec("softplus", lambda m, a: F(m).softplus(a, beta=2.0, threshold=1.0), (x(3, 4),), variant="beta"),
    Spec("layer_norm", lambda m, a, w, b: F(m).layer_norm(a, (5,), w, b), (x(3, 5), x(5), x(5))),
    Spec("layer_norm", lambda m, a: F(m).layer_norm(a, (2, 5)), (x(3, 2, 5),), variant="noaffine"),
    Spec("group_norm", lambda m, a, w, b: F(m).group_norm(a, 2, w, b), (x(2, 4, 3), x(4), x(4))),
    Spec("logsumexp", lambda m, a: m.logsumexp(a, dim=1), (x(3, 5),)),
    Spec("interpolate", lambda m, a: F(m).interpolate(a, scale_factor=2, mode="nearest"), (x(1, 2, 3, 3),)),
    Spec("interpolate", lambda m, a: F(m).interpolate(a, size=(5, 4), mode="bilinear", align_corners=False),
         (x(1, 2, 3, 3),), variant="bilinear"),
    Spec("cosine_similarity", lambda m, a, b: F(m).cosine_similarity(a, b), (x(3, 4), x(3, 4))),
    Spec("cosine_similarity", lambda m, a, b: m.cosine_similarity(a, b, dim=-1), (x(2, 3, 4), x(4)),
         variant="broadcast"),
    Spec("dist", lambda m, a, b: m.dist(a, b), (x(3, 4), x(3, 4))),
    Spec("dist", lambda m, a, b: m.dist(a, b, p=1), (x(3, 4), x(4)), variant="p1"),
    Spec("pdist", lambda m, a: F(m).pdist(a), (x(4, 3),)),
    Spec("renorm", lambda m, a: m.renorm(a, 2, 0, 1.0), (x(3, 4),)),

    # --- float32 on CPU ---------------------------------------------------------------------
    Spec("reflection_pad", lambda m, a: F(m).pad(a, (1, 2), mode="reflect"), (x(2, 3, 5),)),
    Spec("reflection_pad", lambda m, a: F(m).pad(a, (1, 1, 2, 0), mode="reflect"), (x(1, 2, 4, 4),),
         variant="2d"),
    Spec("replication_pad", lambda m, a: F(m).pad(a, (2, 1), mode="replicate"), (x(2, 3, 5),)),
    Spec("replication_pad", lambda m, a: F(m).pad(a, (0, 1, 1, 2), mode="replicate"), (x(1, 2, 4, 4),),
         variant="2d"),
    Spec("prod", lambda m, a: m.prod(a), (x(2, 4, lo=0.5, hi=1.5),), ints=True),
    Spec("prod", lambda m, a: m.prod(a, dim=1), (x(3, 4, lo=0.5, hi=1.5),), variant="dim"),
    Spec("cdist", lambda m, a, b: m.cdist(a, b), (x(3, 4), x(2, 4))),
    Spec("cdist", lambda m, a, b: m.cdist(a, b, p=1.0), (x(2, 3, 4), x(2, 5, 4)), variant="p1"),
    Spec("trace", lambda m, a: m.trace(a), (x(4, 4),), ints=True),

    # --- float32 unless dtype= on CUDA, their inputs' dtype on CPU ---------------------------
    Spec("sum", lambda m, a: m.sum(a), (x(3, 5),), ints=True),
    Spec("sum", lambda m, a: m.sum(a, dim=1), (x(3, 5),), variant="dim", ints=True),
    Spec("sum", lambda m, a: m.sum(a, dim=1, dtype=m.float64), (x(3, 5),), variant="dtype", ints=True),
    Spec("cumsum", lambda m, a: m.cumsum(a, dim=1), (x(3, 5),), ints=True, tol=1.5),
    Spec("cumprod", lambda m, a: m.cumprod(a, dim=1), (x(3, 5, lo=0.5, hi=1.5),), ints=True, tol=1.5),
    Spec("softmax", lambda m, a: F(m).softmax(a, dim=-1), (x(3, 5),)),
    Spec("softmax", lambda m, a: m.softmax(a, dim=0), (x(3, 5),), variant="torch_namespace"),
    Spec("log_softmax", lambda m, a: F(m).log_softmax(a, dim=1), (x(3, 5),)),
    Spec("norm", lambda m, a: m.norm(a), (x(3, 5),)),
    Spec("norm", lambda m, a: m.norm(a, p=1, dim=1), (x(3, 5),), variant="dim"),
    Spec("linalg_vector_norm", lambda m, a: m.linalg.vector_norm(a), (x(3, 5),)),
    Spec("linalg_vector_norm", lambda m, a: m.linalg.vector_norm(a, ord=float("inf"), dim=1, keepdim=True),
         (x(3, 5),), variant="inf"),
    Spec("linalg_vector_norm", lambda m, a: m.linalg.vector_norm(a, ord=3, dim=0, dtype=m.float64), (x(3, 5),),
         variant="dtype"),
    Spec("linalg_matrix_norm", lambda m, a: m.linalg.matrix_norm(a), (x(2, 3, 5),)),
    Spec("linalg_matrix_norm", lambda m, a: m.linalg.matrix_norm(a, ord=1), (x(3, 5),), variant="ord1"),

    # --- losses (float32 on CPU) ------------------------------------------------------------
    Spec("mse_loss", lambda m, a, t: F(m).mse_loss(a, t), (x(3, 4), x(3, 4))),
    Spec("mse_loss", lambda m, a, t: F(m).mse_loss(a, t, reduction="none"), (x(3, 4), x(3, 4)), variant="none"),
    Spec("l1_loss", lambda m, a, t: F(m).l1_loss(a, t), (x(3, 4), x(3, 4))),
    Spec("smooth_l1_loss", lambda m, a, t: F(m).smooth_l1_loss(a, t, beta=0.5), (x(3, 4), x(3, 4))),
    Spec("huber_loss", lambda m, a, t: F(m).huber_loss(a, t, delta=0.5), (x(3, 4), x(3, 4))),
    Spec("nll_loss", lambda m, a, t: F(m).nll_loss(a, t), (x(4, 5, lo=-3.0, hi=-0.1), Ints([0, 3, 4, 1]))),
    Spec("nll_loss", lambda m, a, t, w: F(m).nll_loss(a, t, weight=w, reduction="sum"),
         (x(4, 5, lo=-3.0, hi=-0.1), Ints([0, 3, 4, 1]), x(5, **POS)), variant="weight", grad=(0,)),
    Spec("cross_entropy", lambda m, a, t: F(m).cross_entropy(a, t), (x(4, 5), Ints([2, 0, 4, 1]))),
    Spec("cross_entropy", lambda m, a, t: F(m).cross_entropy(a, t, label_smoothing=0.1, reduction="none"),
         (x(4, 5), Ints([2, 0, 4, 1])), variant="smoothing"),
    Spec("binary_cross_entropy", lambda m, p, t: F(m).binary_cross_entropy(p, t), (x(3, 4, **PROB), x(3, 4, **PROB)),
         grad=(0,)),
    Spec("binary_cross_entropy_with_logits", lambda m, a, t: F(m).binary_cross_entropy_with_logits(a, t),
         (x(3, 4), x(3, 4, **PROB))),
    Spec("binary_cross_entropy_with_logits",
         lambda m, a, t, pw: F(m).binary_cross_entropy_with_logits(a, t, pos_weight=pw),
         (x(3, 4), x(3, 4, **PROB), x(4, **POS)), variant="pos_weight", grad=(0, 1)),
    Spec("kl_div", lambda m, a, t: F(m).kl_div(a, t, reduction="batchmean"), (x(3, 4, lo=-3.0, hi=-0.1),
                                                                               x(3, 4, **PROB))),

    # --- promote on CPU (cat, stack) / on CUDA (the rest) -------------------------------------
    Spec("cat", lambda m, a, b: m.cat([a, b]), (x(2, 3), x(1, 3)), ints=True),
    Spec("cat", lambda m, a, b, c: m.cat((a, b, c), dim=1), (x(2, 1), x(2, 3), x(2, 2)), variant="three"),
    Spec("stack", lambda m, a, b: m.stack([a, b], dim=1), (x(2, 3), x(2, 3)), ints=True),
    Spec("index_copy", lambda m, a, i, s: m.index_copy(a, 0, i, s), (x(5, 3), Ints([4, 0]), x(2, 3)), ints=True),
    Spec("index_copy", lambda m, a, i, s: a.index_copy(1, i, s), (x(2, 4), Ints([3, 1, 0]), x(2, 3)),
         variant="dim1", ints=True),
    Spec("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), (x(3, 4), x(3, 4), x(3, 4)), ints=False),
    Spec("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5), (x(3, 4), x(3, 4), x(3, 4, nonzero=True))),
    Spec("atan2", lambda m, a, b: m.atan2(a, b), (x(3, 4), x(3, 4))),
    # torch's bilinear is a composite (_trilinear) whose inner bmm runs in bfloat16 under CPU
    # autocast; tensorplay's is one op that keeps its inputs' dtype.
    Spec("bilinear", lambda m, a, b, w, bias: F(m).bilinear(a, b, w, bias), (x(3, 4), x(3, 5), x(2, 4, 5), x(2)),
         tol=1.5, torch_lowers_inside=True),
    Spec("dot", lambda m, a, b: m.dot(a, b), (x(6), x(6)), ints=True),
    Spec("vdot", lambda m, a, b: m.vdot(a, b), (x(6), x(6)), ints=True),
    Spec("cross", lambda m, a, b: m.cross(a, b, dim=1), (x(2, 3), x(2, 3)), ints=True),
    Spec("cross", lambda m, a, b: m.linalg.cross(a, b), (x(4, 3), x(1, 3)), variant="linalg"),
    Spec("tensordot", lambda m, a, b: m.tensordot(a, b, dims=([1, 0], [0, 2])), (x(3, 4, 2), x(4, 5, 3)), ints=True),
    Spec("tensordot", lambda m, a, b: m.tensordot(a, b, dims=1), (x(3, 4), x(4, 2)), variant="int"),
    Spec("index_put", lambda m, a, i, v: m.index_put(a, (i,), v), (x(5, 3), Ints([0, 3]), x(2, 3)), ints=True),
    Spec("index_put", lambda m, a, i, v: m.index_put(a, (i,), v, accumulate=True),
         (x(5, 3), Ints([1, 1, 4]), x(3, 3)), variant="accumulate", ints=True),
    Spec("scatter_add", lambda m, a, i, s: m.scatter_add(a, 1, i, s), (x(3, 4), Ints([[0, 2], [1, 1], [3, 0]]),
                                                                        x(3, 2)), ints=True),

    # --- their inputs' dtype on both devices --------------------------------------------------
    Spec("neg", lambda m, a: m.neg(a), (x(3, 4),), ints=True),
    Spec("abs", lambda m, a: m.abs(a), (x(3, 4),), ints=True),
    Spec("sign", lambda m, a: m.sign(a), (x(3, 4),), ints=True),
    Spec("exp2", lambda m, a: m.exp2(a), (x(3, 4),)),
    Spec("sqrt", lambda m, a: m.sqrt(a), (x(3, 4, **POS),)),
    Spec("sin", lambda m, a: m.sin(a), (x(3, 4),)),
    Spec("cos", lambda m, a: m.cos(a), (x(3, 4),)),
    Spec("atan", lambda m, a: m.atan(a), (x(3, 4),)),
    Spec("tanh", lambda m, a: m.tanh(a), (x(3, 4),)),
    Spec("sigmoid", lambda m, a: m.sigmoid(a), (x(3, 4),)),
    Spec("erf", lambda m, a: m.erf(a), (x(3, 4),)),
    Spec("floor", lambda m, a: m.floor(a), (x(3, 4),), ints=True),
    Spec("ceil", lambda m, a: m.ceil(a), (x(3, 4),), ints=True),
    Spec("trunc", lambda m, a: m.trunc(a), (x(3, 4),), ints=True),
    Spec("round", lambda m, a: m.round(a), (x(3, 4),), ints=True),
    Spec("relu", lambda m, a: F(m).relu(a), (x(3, 4),), ints=True),
    Spec("silu", lambda m, a: F(m).silu(a), (x(3, 4),)),
    Spec("gelu", lambda m, a: F(m).gelu(a), (x(3, 4),)),
    Spec("gelu", lambda m, a: F(m).gelu(a, approximate="tanh"), (x(3, 4),), variant="tanh"),
    # log(negative) is NaN, log(0) -inf, 1/0 +inf: each replaced
    Spec("nan_to_num", lambda m, a: m.nan_to_num(m.stack([m.log(a), m.log(m.relu(a)), m.relu(a).reciprocal()]),
                                                 nan=0.5, neginf=-5.0, posinf=7.0), (x(3, 4),)),
    Spec("clamp", lambda m, a: m.clamp(a, -0.5, 1.0), (x(3, 4),), ints=True),
    Spec("add", lambda m, a, b: m.add(a, b, alpha=2), (x(3, 4), x(3, 4)), ints=True),
    Spec("add", lambda m, a, b: a + b, (x(3, 4), x(4)), variant="operator", ints=True),
    Spec("sub", lambda m, a, b: m.sub(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("rsub", lambda m, a, b: m.rsub(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("mul", lambda m, a, b: m.mul(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("mul", lambda m, a: a * 3, (x(3, 4),), variant="scalar", ints=True),
    Spec("div", lambda m, a, b: m.div(a, b), (x(3, 4), x(3, 4, nonzero=True)), ints=True),
    Spec("floor_divide", lambda m, a, b: m.floor_divide(a, b), (x(3, 4), x(3, 4, nonzero=True)), ints=True),
    Spec("remainder", lambda m, a, b: m.remainder(a, b), (x(3, 4), x(3, 4, nonzero=True)), ints=True),
    Spec("maximum", lambda m, a, b: m.maximum(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("minimum", lambda m, a, b: m.minimum(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("lerp", lambda m, a, b: m.lerp(a, b, 0.25), (x(3, 4), x(3, 4))),
    Spec("lerp", lambda m, a, b, w: m.lerp(a, b, w), (x(3, 4), x(3, 4), x(3, 4, lo=0.0, hi=1.0)), variant="tensor"),
    Spec("where", lambda m, a, b: m.where(a > 0, a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("mean", lambda m, a: m.mean(a, dim=1), (x(3, 5),)),
    Spec("mean", lambda m, a: m.mean(a), (x(3, 5),), variant="all"),
    Spec("var", lambda m, a: m.var(a, dim=1), (x(3, 5),)),
    Spec("std", lambda m, a: m.std(a, dim=0, correction=0), (x(3, 5),)),
    Spec("amax", lambda m, a: m.amax(a, dim=1), (x(3, 5),), ints=True),
    Spec("amin", lambda m, a: m.amin(a, dim=0), (x(3, 5),), ints=True),
    Spec("max", lambda m, a: m.max(a), (x(3, 5),), ints=True),
    Spec("max", lambda m, a: m.max(a, dim=1), (x(3, 5),), variant="dim", ints=True),
    Spec("min", lambda m, a: m.min(a), (x(3, 5),), ints=True),
    Spec("min", lambda m, a: m.min(a, dim=0, keepdim=True), (x(3, 5),), variant="dim", ints=True),
    Spec("sort", lambda m, a: m.sort(a, dim=1, stable=True), (x(3, 5),), ints=True),
    Spec("topk", lambda m, a: m.topk(a, 2, dim=0), (x(3, 5),)),
    Spec("kthvalue", lambda m, a: m.kthvalue(a, 2, dim=1, keepdim=True), (x(3, 5),)),
    Spec("outer", lambda m, a, b: m.outer(a, b), (x(4), x(3)), ints=True),
    Spec("max_pool2d", lambda m, a: F(m).max_pool2d(a, 2), (x(1, 2, 4, 4),)),
    Spec("avg_pool2d", lambda m, a: F(m).avg_pool2d(a, 2), (x(1, 2, 4, 4),)),
    Spec("adaptive_avg_pool2d", lambda m, a: F(m).adaptive_avg_pool2d(a, (2, 3)), (x(1, 2, 4, 6),)),
    Spec("batch_norm", lambda m, a, rm, rv, w, b: F(m).batch_norm(a, rm, rv, w, b, training=False),
         (x(4, 3), x(3), x(3, **POS), x(3), x(3)), grad=(0, 3, 4)),
    Spec("batch_norm", lambda m, a: F(m).batch_norm(a, None, None, training=True), (x(4, 3, 2),),
         variant="batch_stats"),
    # training with running statistics: they are updated in place and returned, so their dtype
    # and values are compared too
    Spec("batch_norm", lambda m, a, rm, rv, w, b: (F(m).batch_norm(a, rm, rv, w, b, training=True, momentum=0.5),
                                                   rm, rv),
         (x(4, 3), x(3), x(3, **POS), x(3), x(3)), variant="train", grad=(0, 3, 4)),
    Spec("dropout", lambda m, a: F(m).dropout(a, p=0.5, training=False), (x(3, 4),)),
    Spec("dropout", lambda m, a: F(m).dropout(a, p=0.0, training=True), (x(3, 4),), variant="p0"),
    Spec("embedding", lambda m, i, w: F(m).embedding(i, w), (Ints([[0, 2], [4, 2]]), x(5, 3))),
    Spec("constant_pad_nd", lambda m, a: F(m).pad(a, (1, 2), value=0.5), (x(2, 3),), ints=True),
    Spec("constant_pad_nd", lambda m, a: F(m).pad(a, (1, 0, 0, 2)), (x(1, 2, 3),), variant="2d"),
    # Integer and bool ops: floating inputs raise in torch (bitwise) or give bool results.
    Spec("bitwise_not", lambda m, a: m.bitwise_not(a), (x(3, 4),), ints=True),
    Spec("bitwise_and", lambda m, a, b: m.bitwise_and(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("bitwise_or", lambda m, a, b: m.bitwise_or(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("bitwise_xor", lambda m, a, b: m.bitwise_xor(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("logical_not", lambda m, a: m.logical_not(a), (x(3, 4),), ints=True),
    Spec("logical_and", lambda m, a, b: m.logical_and(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("logical_or", lambda m, a, b: m.logical_or(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("logical_xor", lambda m, a, b: m.logical_xor(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("isnan", lambda m, a: m.isnan(m.log(a)), (x(3, 4),)),
    Spec("isinf", lambda m, a: m.isinf(m.log(m.relu(a))), (x(3, 4),)),
    Spec("isfinite", lambda m, a: m.isfinite(m.log(a)), (x(3, 4),)),
    Spec("eq", lambda m, a, b: m.eq(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("ne", lambda m, a, b: a != b, (x(3, 4), x(3, 4)), ints=True),
    Spec("lt", lambda m, a, b: m.lt(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("le", lambda m, a, b: m.le(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("gt", lambda m, a, b: m.gt(a, b), (x(3, 4), x(3, 4)), ints=True),
    Spec("ge", lambda m, a, b: m.ge(a, 0.5), (x(3, 4),), ints=True),
]


# =============================================================================================
# The cases: input dtypes x autocast dtype
# =============================================================================================

@dataclass(frozen=True)
class Case:
    """The dtype of each X input of a spec (by position among the X inputs; the last one repeats)
    and the autocast dtype."""
    dtypes: tuple
    autocast: str = "bfloat16"

    @property
    def id(self):
        label = "+".join(self.dtypes)
        return label if self.autocast == "bfloat16" else f"{label}-fp16autocast"

    def dtype_of(self, k):
        return self.dtypes[min(k, len(self.dtypes) - 1)]


def cases_for(spec):
    if spec.input_dtypes:
        return [Case((d,)) for d in spec.input_dtypes]
    n_float = len(spec.float_positions)
    out = [Case((d,)) for d in ("float32", "bfloat16", "float16", "float64")]
    if spec.ints:
        out.append(Case(("int64",)))
    if n_float >= 2:
        # the first floating input in a narrow (or double) dtype, the others float32: a bfloat16
        # activation with float32 weights, a cat of float32 and bfloat16, ...
        out += [Case(("bfloat16", "float32")), Case(("float16", "float32")), Case(("float64", "float32")),
                Case(("float32", "bfloat16"))]
    out += [Case((d,), "float16") for d in ("float32", "bfloat16", "float16")]
    if n_float >= 2:
        out += [Case(("float16", "float32"), "float16"), Case(("bfloat16", "float16"), "float16")]
    return out


ALL_CASES = [pytest.param(spec, case, id=f"{spec.name}-{case.id}") for spec in SPECS for case in cases_for(spec)]


# =============================================================================================
# Helpers: inputs in both libraries, running under autocast, comparing
# =============================================================================================

def dtype_name(dtype):
    return str(dtype).split(".")[-1]


def input_values(spec, integers=False):
    """A float64 (or int64) numpy array per X input; Ints inputs as they are."""
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    values = []
    for a in spec.inputs:
        if isinstance(a, Ints):
            values.append(a.values)
            continue
        v = rng.uniform(a.lo, a.hi, a.shape)
        if a.nonzero:
            v = np.where(v < 0, np.minimum(v, -0.25), np.maximum(v, 0.25))
        if integers:
            v = np.round(v)
            if a.nonzero:
                v[v == 0] = 1.0
            values.append(v.astype(np.int64))
            continue
        # exactly a bfloat16 value, which float16 holds exactly too: no rounding when either
        # library casts the input
        v = v.astype(ml_dtypes.bfloat16).astype(np.float64)
        v[np.abs(v) < 1e-3] = 0.0
        values.append(v)
    return values


def to_lib(lib, array, dtype_name_):
    t = lib.from_numpy(np.ascontiguousarray(array))
    return t.to(getattr(lib, dtype_name_))


def make_inputs(lib, spec, case, values):
    tensors, k = [], 0
    for a, v in zip(spec.inputs, values):
        if isinstance(a, Ints):
            tensors.append(to_lib(lib, v, "int64"))
        else:
            tensors.append(to_lib(lib, v, case.dtype_of(k)))
            k += 1
    return tensors


def flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def to_numpy(t):
    t = t.detach()
    if dtype_name(t.dtype) == "bfloat16":
        t = t.float()
    return np.array(t.numpy(), copy=True)


def outcome(fn):
    """("ok", value) or ("raised", exception)."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 -- the exception is the result being compared
        return "raised", e


def run_spec(lib, spec, case, values):
    inputs = make_inputs(lib, spec, case, values)
    with lib.autocast("cpu", dtype=getattr(lib, case.autocast)):
        return flatten(spec.fn(lib, *inputs))


# (rtol, atol) by the output dtype. bfloat16 keeps 8 significant bits (a rounding is up to 0.4%
# relative), float16 11. Values here are O(1).
TOLERANCES = {
    "bfloat16": (2e-2, 1e-2),
    "float16": (3e-3, 1e-3),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
}


def assert_same_result(got, want, scale=1.0, what="output", precision=None):
    """Same dtype and shape, values within the tolerance of the output dtype (or of `precision`
    when that is coarser: a result computed through a narrower dtype)."""
    assert dtype_name(got.dtype) == dtype_name(want.dtype), \
        f"{what}: dtype {dtype_name(got.dtype)}, torch gives {dtype_name(want.dtype)}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)}, torch {tuple(want.shape)}"
    g, w = to_numpy(got), to_numpy(want)
    name = dtype_name(want.dtype)
    if name in TOLERANCES:
        rtol, atol = TOLERANCES[name]
        if precision is not None:
            rtol, atol = max(rtol, TOLERANCES[precision][0]), max(atol, TOLERANCES[precision][1])
        np.testing.assert_allclose(g, w, rtol=rtol * scale, atol=atol * scale, equal_nan=True,
                                   err_msg=f"{what} ({name})")
    else:
        np.testing.assert_array_equal(g, w, err_msg=f"{what} ({name})")


def assert_same_outcome(tp_fn, torch_fn, scale=1.0, precision=None):
    (want_kind, want), (got_kind, got) = outcome(torch_fn), outcome(tp_fn)
    if want_kind == "raised":
        assert got_kind == "raised", f"torch raises {type(want).__name__}: {want}\nbut tensorplay returns {got}"
        assert isinstance(got, type(want)), \
            f"torch raises {type(want).__name__} ({want}), tensorplay {type(got).__name__} ({got})"
        return None
    assert got_kind == "ok", f"tensorplay raises {type(got).__name__}: {got}\n(torch returns {want})"
    assert len(got) == len(want), f"{len(got)} outputs, torch has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same_result(g, w, scale, what=f"output {i}", precision=precision)
    return got


# =============================================================================================
# 1. Every table op, every input dtype, both autocast dtypes: dtypes and values as torch's
# =============================================================================================

def test_every_table_op_has_a_spec():
    table = tensorplay.amp.policy_table("cpu")
    missing = sorted(set(table) - {s.op for s in SPECS})
    assert not missing, f"ops of policy_table('cpu') without a spec in SPECS: {missing}"
    unknown = sorted({s.op for s in SPECS} - set(table))
    assert not unknown, f"specs for ops the table does not know: {unknown}"
    assert set(tensorplay.amp.policy_table("cuda")) == set(table)


def test_spec_ids_are_unique():
    ids = [p.id for p in ALL_CASES]
    assert len(ids) == len(set(ids))


def torch_reference_case(spec, case):
    """The case torch runs for the expected result: the same one, except where torch's result is
    an accident of how it is implemented and tensorplay deliberately differs (listed here, and
    each pinned down in its own test below, so that the exception goes when torch changes)."""
    policy = tensorplay.amp.get_policy(spec.op, "cpu")
    first = case.dtype_of(0)
    others = {case.dtype_of(k) for k in range(1, len(spec.float_positions))}
    if policy == "promote" and case.autocast == "bfloat16" and first == "float16" and "float32" in others:
        # torch folds the inputs' dtypes from the region's bfloat16, in argument order, and
        # raises on a float16 met before any float32: cat([f16, f32]) raises, cat([f32, f16]) is
        # float32. tensorplay's promote is order-free: float32 wins whenever an input has it.
        # Expected: torch's result with every input already float32 (the values are exact).
        return Case(("float32",))
    if spec.op == "binary_cross_entropy_with_logits" and first == "float64" and others == {"float32"}:
        # torch's kernel computes in the target's dtype: a float64 input with a float32 target
        # gives float32 (outside autocast too), where type promotion says float64.
        # Expected: tensorplay's float64 result, as torch computes it with a float64 target.
        return Case(("float64",), case.autocast)
    return case


def coarsest_precision(spec, case):
    """The dtype whose precision bounds the result: the narrowest floating input (kl_div of a
    float64 input and a float32 target takes the target's log in float32, whose last bit two
    correct logs may round apart) or the region's dtype where torch computes in it."""
    dtypes = [case.dtype_of(k) for k in range(len(spec.float_positions))]
    if spec.torch_lowers_inside:
        dtypes.append(case.autocast)
    floating = [d for d in dtypes if d in TOLERANCES]
    return max(floating, key=lambda d: TOLERANCES[d][0], default=None)


@pytest.mark.parametrize("spec, case", ALL_CASES)
def test_autocast_matches_torch(spec, case):
    values = input_values(spec, integers=case.dtypes == ("int64",))
    reference = torch_reference_case(spec, case)
    assert_same_outcome(lambda: run_spec(tensorplay, spec, case, values),
                        lambda: run_spec(torch, spec, reference, values), scale=spec.tol,
                        precision=coarsest_precision(spec, case))


# The specs of ops that cast on CPU (lower_precision or float32): the policy tests and the
# gradient tests run these.
CASTING_SPECS = [pytest.param(s, id=s.name) for s in SPECS
                 if tensorplay.amp.get_policy(s.op, "cpu") in ("lower_precision", "float32")]


@pytest.mark.parametrize("spec", CASTING_SPECS)
def test_bfloat16_inputs_follow_the_cpu_policy(spec):
    """bfloat16 inputs of a float32-policy op give a float32 result, float32 inputs of a
    lower_precision op a bfloat16 one: the table, not just agreement with torch."""
    policy = tensorplay.amp.get_policy(spec.op, "cpu")
    start = "float32" if policy == "lower_precision" else "bfloat16"
    want = "bfloat16" if policy == "lower_precision" else "float32"
    case = Case((start,))
    outs = run_spec(tensorplay, spec, case, input_values(spec))
    floating = [dtype_name(o.dtype) for o in outs if dtype_name(o.dtype) in FLOATING]
    assert floating and all(d == want for d in floating), f"{policy} op on {start} inputs gave {floating}"


def test_float64_inputs_are_never_cast():
    a = np.linspace(-1, 1, 12).reshape(3, 4)
    for lib in (tensorplay, torch):
        t = to_lib(lib, a, "float64")
        with lib.autocast("cpu"):
            assert dtype_name(lib.mm(t, t.t()).dtype) == "float64"
            assert dtype_name(F(lib).mse_loss(t, t).dtype) == "float64"
            assert dtype_name(lib.cat([t, t]).dtype) == "float64"


# =============================================================================================
# 2. Gradients: float32 leaves, forward under autocast, backward outside
# =============================================================================================

def autocast_grads(lib, spec, values, leaf_dtype="float32"):
    """The gradients of spec's inputs (float32 leaves by default) through the op run under
    bfloat16 autocast, with backward outside the region; and the outputs' dtypes."""
    grad_positions = spec.grad if spec.grad is not None else spec.float_positions
    inputs = make_inputs(lib, spec, Case((leaf_dtype,)), values)
    for i in grad_positions:
        inputs[i].requires_grad_(True)
    with lib.autocast("cpu"):
        outs = flatten(spec.fn(lib, *inputs))
    rng = np.random.default_rng(7)
    loss = None
    for o in outs:
        if dtype_name(o.dtype) not in FLOATING:
            continue
        upstream = to_lib(lib, rng.uniform(-1, 1, tuple(o.shape)), "float32")
        term = (o.float() * upstream).sum()
        loss = term if loss is None else loss + term
    loss.backward()  # outside the region
    return [inputs[i].grad for i in grad_positions], [dtype_name(o.dtype) for o in outs]


GRADIENT_CASES = (
    # float32 leaves through every casting op: float32 gradients, computed in bfloat16 for the
    # lower_precision ops (the cast's backward widens them again)
    [pytest.param(s.values[0], "float32", id=f"{s.id}-float32") for s in CASTING_SPECS]
    # bfloat16 leaves through the float32 ops: the op and its backward run in float32, the
    # gradient comes back as bfloat16
    + [pytest.param(s.values[0], "bfloat16", id=f"{s.id}-bfloat16") for s in CASTING_SPECS
       if tensorplay.amp.get_policy(s.values[0].op, "cpu") == "float32"]
)


@pytest.mark.parametrize("spec, leaf_dtype", GRADIENT_CASES)
def test_gradients_match_torch(spec, leaf_dtype):
    values = input_values(spec)
    tp_grads, tp_out_dtypes = autocast_grads(tensorplay, spec, values, leaf_dtype)
    torch_grads, torch_out_dtypes = autocast_grads(torch, spec, values, leaf_dtype)
    assert tp_out_dtypes == torch_out_dtypes
    lower = tensorplay.amp.get_policy(spec.op, "cpu") == "lower_precision"
    for k, (g, w) in enumerate(zip(tp_grads, torch_grads)):
        assert w is not None and dtype_name(w.dtype) == leaf_dtype  # the oracle's own rule
        assert g is not None, f"input {k}: no gradient"
        assert dtype_name(g.dtype) == leaf_dtype, f"input {k}: gradient is {dtype_name(g.dtype)}, leaf {leaf_dtype}"
        got, want = to_numpy(g), to_numpy(w)
        if lower or leaf_dtype == "bfloat16":
            # a bfloat16 backward sums bfloat16 products: an element where they cancel is off by a
            # few units in the last place of the largest terms, so atol follows the magnitude
            rtol, atol = 3e-2, 1e-2 * max(1.0, np.abs(want).max())
        else:
            rtol, atol = 1e-4, 1e-5  # float32 throughout
        np.testing.assert_allclose(got, want, rtol=rtol * spec.tol, atol=atol * spec.tol,
                                   err_msg=f"gradient of input {k}")


def test_gradient_of_lower_precision_op_is_rounded_like_torch():
    """The linear layer's weight gradient under autocast passes through bfloat16: it differs from
    the float32 gradient in the same way in both libraries (not merely close to the exact one)."""
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (16, 32)).astype(ml_dtypes.bfloat16).astype(np.float64)
    w = rng.uniform(-2, 2, (8, 32)).astype(ml_dtypes.bfloat16).astype(np.float64)
    grads = {}
    for lib in (tensorplay, torch):
        ta, tw = to_lib(lib, a, "float32"), to_lib(lib, w, "float32").requires_grad_(True)
        with lib.autocast("cpu"):
            out = F(lib).linear(ta, tw)
        (out.float() ** 2).sum().backward()
        grads[lib.__name__] = to_numpy(tw.grad)
    exact = 2 * (a @ w.T).T @ a
    # both round (a float32 backward would be within 1e-5 of the exact gradient) ...
    assert not np.allclose(grads["torch"], exact, rtol=1e-5, atol=0)
    assert not np.allclose(grads["tensorplay"], exact, rtol=1e-5, atol=0)
    # ... and alike
    np.testing.assert_allclose(grads["tensorplay"], grads["torch"], rtol=2e-2, atol=5e-2)


# =============================================================================================
# 3. The policy table against torch's dispatcher
# =============================================================================================

# The aten ops a table op stands for, where the names differ (or one op has several overloads);
# any other op maps to the aten op of its own name.
ATEN_OPS = {
    # padding="same" calls the .padding overloads: torch registers those for AutocastCPU only; on
    # CUDA they decompose into aten::convolution, which is lowered there: the same policy.
    "conv1d": ["conv1d"],
    "conv2d": ["conv2d"],
    "conv_transpose2d": ["conv_transpose2d.input"],
    "pow": ["pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar"],
    "interpolate": ["upsample_nearest2d", "upsample_bilinear2d"],
    "reflection_pad": ["reflection_pad1d", "reflection_pad2d"],
    "replication_pad": ["replication_pad1d", "replication_pad2d"],
    "prod": ["prod", "prod.dim_int"],
    "sum": ["sum", "sum.dim_IntList"],
    "softmax": ["softmax.int"],
    "log_softmax": ["log_softmax.int"],
    "norm": ["norm.Scalar", "norm.ScalarOpt_dim"],
    "nll_loss": ["nll_loss", "nll_loss2d"],
    "lstm_layer": ["mkldnn_rnn_layer"],
    "cross_entropy": ["cross_entropy_loss"],
    "add": ["add.Tensor"],
    "sub": ["sub.Tensor"],
    "rsub": ["rsub.Tensor"],
    "mul": ["mul.Tensor"],
    "div": ["div.Tensor"],
    "remainder": ["remainder.Tensor"],
    "lerp": ["lerp.Scalar", "lerp.Tensor"],
    "where": ["where.self"],
    "mean": ["mean", "mean.dim"],
    "var": ["var.correction"],
    "std": ["std.correction"],
    "max": ["max", "max.dim"],
    "min": ["min", "min.dim"],
    "bitwise_and": ["bitwise_and.Tensor"],
    "bitwise_or": ["bitwise_or.Tensor"],
    "bitwise_xor": ["bitwise_xor.Tensor"],
    **{op: [f"{op}.Tensor"] for op in ("eq", "ne", "lt", "le", "gt", "ge")},
}

# Deliberate differences: (op, device) -> why tensorplay's policy differs from what torch's
# dispatcher registers. Keep this list short and explain each entry.
KNOWN_EXCEPTIONS = {
    # PyTorch has no AutocastCUDA kernel for cross_entropy_loss: on CUDA it decomposes into
    # log_softmax and nll_loss, both float32 there, so the loss ends up float32 anyway.
    # tensorplay's cross_entropy is one op and says float32 directly.
    ("cross_entropy", "cuda"): "float32",
    # torch lowers its CUDA LSTM in _cudnn_rnn's autocast kernel, which only its CUDA build registers.
    ("lstm_layer", "cuda"): "lower_precision",
}

DISPATCH_KEYS = {"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}


def torch_has_autocast_kernel(op, device):
    names = ATEN_OPS.get(op, [op])
    return {n: torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{n}", DISPATCH_KEYS[device]) for n in names}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("op", sorted(tensorplay.amp.policy_table("cpu")))
def test_policy_matches_torch_dispatcher(op, device):
    policy = tensorplay.amp.get_policy(op, device)
    kernels = torch_has_autocast_kernel(op, device)  # raises if an aten name above does not exist
    if (op, device) in KNOWN_EXCEPTIONS:
        assert policy == KNOWN_EXCEPTIONS[(op, device)] and not any(kernels.values()), \
            "a known exception no longer applies: update KNOWN_EXCEPTIONS"
        return
    # every overload the op stands for must agree with the policy; a composite has no kernel of
    # its own (torch decomposes it into ops that have one)
    casts = policy not in ("input_dtype", "composite")
    assert all(has == casts for has in kernels.values()), \
        f"{op} on {device}: tensorplay policy {policy!r}, torch Autocast kernels {kernels}"


def test_policy_table_devices_agree_with_get_policy():
    for device in ("cpu", "cuda"):
        table = tensorplay.amp.policy_table(device)
        assert table == {op: tensorplay.amp.get_policy(op, device) for op in table}
        assert set(table.values()) <= {"lower_precision", "float32", "float32_unless_dtype", "promote",
                                       "input_dtype", "banned", "composite"}


# =============================================================================================
# 4. Mixed dtypes that must raise
# =============================================================================================

# Matmul-like calls; the first tensor takes one dtype, the others another.
MATMUL_LIKE = {
    "mm": (lambda m, a, b: m.mm(a, b), [(4, 6), (6, 3)]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 4, 6), (2, 6, 3)]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), [(4, 3), (4, 6), (6, 3)]),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b), [(2, 4, 3), (2, 4, 6), (2, 6, 3)]),
    "matmul": (lambda m, a, b: m.matmul(a, b), [(2, 4, 6), (6, 3)]),
    "linear": (lambda m, a, w, b: F(m).linear(a, w, b), [(4, 6), (3, 6), (3,)]),
    "mv": (lambda m, a, v: m.mv(a, v), [(4, 6), (6,)]),
    "dot": (lambda m, a, b: m.dot(a, b), [(6,), (6,)]),
    "conv1d": (lambda m, a, w: F(m).conv1d(a, w), [(1, 2, 5), (3, 2, 3)]),
    "conv2d": (lambda m, a, w: F(m).conv2d(a, w), [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "conv_transpose2d": (lambda m, a, w: F(m).conv_transpose2d(a, w), [(1, 2, 3, 3), (2, 3, 2, 2)]),
    "scaled_dot_product_attention": (lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v),
                                     [(1, 3, 4), (1, 3, 4), (1, 3, 4)]),
}
DTYPE_PAIRS = [("float16", "bfloat16"), ("bfloat16", "float16"), ("float32", "bfloat16"), ("bfloat16", "float32"),
               ("float32", "float16"), ("float16", "float32")]


def matmul_inputs(lib, shapes, first, rest):
    rng = np.random.default_rng(11)
    return [to_lib(lib, rng.uniform(-1, 1, s), first if i == 0 else rest) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("first, rest", [pytest.param(a, b, id=f"{a}+{b}") for a, b in DTYPE_PAIRS])
@pytest.mark.parametrize("op", sorted(MATMUL_LIKE))
def test_mixed_dtypes_raise_outside_autocast(op, first, rest):
    fn, shapes = MATMUL_LIKE[op]
    kind, err = outcome(lambda: fn(torch, *matmul_inputs(torch, shapes, first, rest)))
    assert kind == "raised" and isinstance(err, RuntimeError), f"torch does not raise: {err}"
    with pytest.raises(RuntimeError) as info:
        fn(tensorplay, *matmul_inputs(tensorplay, shapes, first, rest))
    message = str(info.value)
    for name in (first, rest):
        # word boundaries: "float16" must not be found inside "bfloat16"
        assert re.search(rf"\b{name}\b", message), f"{name!r} not named in: {message}"


@pytest.mark.parametrize("first, rest", [pytest.param(a, b, id=f"{a}+{b}") for a, b in DTYPE_PAIRS])
@pytest.mark.parametrize("op", sorted(MATMUL_LIKE))
def test_mixed_dtypes_run_inside_autocast(op, first, rest):
    """The same calls inside a bfloat16 region: the lower_precision ops cast their inputs to
    bfloat16 and run; mv and dot (input_dtype on CPU) still raise, in both libraries."""
    fn, shapes = MATMUL_LIKE[op]

    def call(lib):
        inputs = matmul_inputs(lib, shapes, first, rest)
        with lib.autocast("cpu"):
            return [fn(lib, *inputs)]

    assert_same_outcome(lambda: call(tensorplay), lambda: call(torch))


PROMOTE_CALLS = {
    "cat": lambda m, a, b: m.cat([a, b]),
    "stack": lambda m, a, b: m.stack([a, b]),
}


@pytest.mark.parametrize("dtypes", [pytest.param(d, id="+".join(d)) for d in
                                    [("float16", "bfloat16"), ("bfloat16", "float16"), ("float16", "float16")]])
@pytest.mark.parametrize("op", sorted(PROMOTE_CALLS))
def test_promote_rejects_float16_in_bfloat16_region(op, dtypes):
    """Without a float32 input, a promote op cannot reconcile float16 with the region's bfloat16:
    torch raises, and so must tensorplay."""
    assert tensorplay.amp.get_policy(op, "cpu") == "promote"
    fn = PROMOTE_CALLS[op]

    def call(lib):
        a = to_lib(lib, np.ones((2, 3)), dtypes[0])
        b = to_lib(lib, np.ones((2, 3)), dtypes[1])
        with lib.autocast("cpu"):
            return fn(lib, a, b)

    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError) as info:
        call(tensorplay)
    assert re.search(r"\bfloat16\b", str(info.value)) and "bfloat16" in str(info.value), str(info.value)


@pytest.mark.parametrize("op", sorted(PROMOTE_CALLS))
def test_promote_with_float32_is_order_free(op):
    """With a float32 input, float32 wins and float16 / bfloat16 inputs are cast to it, in any
    order. torch is order-dependent here (a float16 before the first float32 raises), the one
    deliberate difference torch_reference_case allows for promote ops."""
    def call(lib, dtypes):
        tensors = [to_lib(lib, np.full((2, 3), i + 1.0), d) for i, d in enumerate(dtypes)]
        with lib.autocast("cpu"):
            return getattr(lib, op)(tensors)

    with pytest.raises(RuntimeError):
        call(torch, ("float16", "float32"))
    assert call(torch, ("float32", "float16")).dtype == torch.float32
    for dtypes in [("float32", "float16"), ("float16", "float32"), ("float32", "float16", "bfloat16"),
                   ("bfloat16", "float16", "float32")]:
        got = call(tensorplay, dtypes)
        assert dtype_name(got.dtype) == "float32", dtypes
        want = getattr(torch, op)([torch.full((2, 3), i + 1.0) for i in range(len(dtypes))])
        np.testing.assert_array_equal(to_numpy(got), want.numpy())


def test_bce_with_logits_float64_input_float32_target():
    """torch computes binary_cross_entropy_with_logits in the target's dtype (float64 input,
    float32 target: float32); tensorplay follows type promotion (float64). Pinned here, the other
    deliberate difference torch_reference_case allows."""
    a, t = np.linspace(-2, 2, 6), np.linspace(0.1, 0.9, 6)
    for lib, want in ((torch, "float32"), (tensorplay, "float64")):
        for region in (False, True):
            with lib.autocast("cpu", enabled=region):
                out = F(lib).binary_cross_entropy_with_logits(to_lib(lib, a, "float64"), to_lib(lib, t, "float32"))
            assert dtype_name(out.dtype) == want, (lib.__name__, region)


def test_bilinear_composite_runs_in_bfloat16_in_torch_only():
    """torch's bilinear lowers its inner matmul under CPU autocast (float32 result, bfloat16
    precision); tensorplay's runs in float32 (its table: input_dtype). Pinned here; the spec's
    torch_lowers_inside flag compares its values at bfloat16 precision for this reason."""
    rng = np.random.default_rng(5)
    a, b, w = (rng.uniform(-2, 2, s).astype(ml_dtypes.bfloat16).astype(np.float64)
               for s in ((3, 4), (3, 5), (2, 4, 5)))
    exact = np.einsum("ni,kij,nj->nk", a, w, b)
    results = {}
    for lib in (torch, tensorplay):
        with lib.autocast("cpu"):
            out = F(lib).bilinear(*(to_lib(lib, v, "float32") for v in (a, b, w)))
        assert dtype_name(out.dtype) == "float32"
        results[lib.__name__] = np.abs(to_numpy(out) - exact).max() / np.abs(exact).max()
    assert results["torch"] > 1e-4       # bfloat16 inside
    assert results["tensorplay"] < 1e-5  # float32 throughout

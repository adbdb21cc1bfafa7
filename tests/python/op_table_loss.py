"""The op-table rows of nn.functional's loss family (see op_table.py).

Each loss runs with reduction none, mean and sum on a plain batch in every float dtype, then, in the
layout dtypes, on a non-contiguous input and an empty batch. Targets are drawn in the loss's own
domain: signs for the margin losses, class indices, label lists ended by -1, counts, variances.
CTC and embedding_bag are tested in test_nn_losses_more.py and test_embedding_bag.py: they read
lengths and offsets as values, which the meta device cannot give.
"""

import numpy as np

from op_table import FLOAT_DTYPES, Op, S  # noqa: F401

REDUCTIONS = ("none", "mean", "sum")


def loss(name, samples, label=None, dtypes=FLOAT_DTYPES, **kw):
    """A row for nn.functional.<name> in both libraries."""
    def call(m, *args, **kwargs):
        return getattr(m.nn.functional, name)(*args, **kwargs)
    return Op(name, samples, dtypes=dtypes, label=label or name, fn=call, **kw)


def per_reduction(make, empty=True):
    """make(mk, shape) -> args; a sample per reduction on a (4, 5) batch, then non-contiguous and empty ones
    (empty=False: torch's kernel returns uninitialised memory as the mean of an empty batch)."""
    def samples(mk):
        out = [S(reduction, *make(mk, (4, 5)), reduction=reduction) for reduction in REDUCTIONS]
        if mk.layouts:
            out.append(S("noncontig", *make(mk, (4, 5), view=True), reduction="sum"))
            if empty:
                out.append(S("empty_mean", *make(mk, (0, 5)), reduction="mean"))
        return out
    return samples


def values(mk, shape, view=False):
    return mk.transposed(shape) if view else mk(shape)


def signs(mk, shape):
    return mk.rng.choice([-1.0, 1.0], shape).astype(mk(()).dtype)


def margin_ranking(mk, shape, view=False):
    return values(mk, shape, view), mk(shape), signs(mk, shape)


def hinge(mk, shape, view=False):
    return values(mk, shape, view), signs(mk, shape)


def multilabel_soft(mk, shape, view=False):
    return values(mk, shape, view), mk(shape, domain=(0, 1))


def cosine_embedding(mk, shape, view=False):
    return values(mk, shape, view), mk(shape), signs(mk, shape[:1])


def class_indices(mk, shape, view=False):
    return values(mk, shape, view), mk.index(shape[:1], shape[1])


def label_lists(mk, shape, view=False):
    """Labels of each row, then -1; a label may repeat."""
    labels = mk.index(shape, shape[1])
    if labels.size:
        labels[np.arange(shape[0]), mk.rng.integers(0, shape[1], shape[0])] = -1
    return values(mk, shape, view), labels


def poisson(mk, shape, view=False):
    return values(mk, shape, view), mk.rng.poisson(2.0, shape).astype(mk(()).dtype)


def poisson_positive(mk, shape, view=False):
    """Counts from 2: the Stirling term, which only counts above 1, jumps at 1 and has no finite gradient
    at 0, so finite differences there would not be derivatives."""
    input, counts = poisson(mk, shape, view)
    return input, counts + 2


def gaussian(mk, shape, view=False):
    return values(mk, shape, view), mk(shape), mk(shape, domain=(0.1, 2))


def triplet(mk, shape, view=False):
    return values(mk, shape, view), mk(shape), mk(shape)


def weighted(mk, shape, view=False):
    return values(mk, shape, view), mk(shape), mk(shape, domain=(0, 2))


def with_kwargs(samples, **kwargs):
    return lambda mk: [S(s.label, *s.args, **{**s.kwargs, **kwargs}) for s in samples(mk)]


def linear_cross_entropy_samples(mk):
    x, w, b = mk((4, 6)), mk((5, 6)), mk((5,))
    target = mk.index((4,), 5)
    out = [S(reduction, x, w, target, reduction=reduction) for reduction in REDUCTIONS]
    out += [S("bias_smoothing", x, w, target, linear_bias=b, label_smoothing=0.1),
            S("k_dimensional", x, mk((3, 2, 6)), mk.index((4, 2), 3), reduction="none")]
    if mk.layouts:
        out.append(S("noncontig", mk.transposed((4, 6)), w, target))
    return out


def weighted_loss(name):
    """torch 2.13's weight= of the regression losses, an elementwise weight given by keyword."""
    def call(m, input, target, weight, **kwargs):
        return getattr(m.nn.functional, name)(input, target, weight=weight, **kwargs)
    return Op(name, per_reduction(weighted), dtypes=FLOAT_DTYPES, label=f"{name}.weight", fn=call, tol=SIXTEEN_BIT)


# 16-bit losses sum a few rounded terms: one or two units in the last place.
SIXTEEN_BIT = {"bfloat16": (3e-2, 1e-2), "float16": (3e-3, 1e-3)}

ROWS = [
    loss("margin_ranking_loss", per_reduction(margin_ranking)),
    loss("margin_ranking_loss", with_kwargs(per_reduction(margin_ranking), margin=0.5),
         label="margin_ranking_loss.margin"),
    loss("hinge_embedding_loss", per_reduction(hinge)),
    loss("hinge_embedding_loss", with_kwargs(per_reduction(hinge), margin=2.0), label="hinge_embedding_loss.margin"),
    loss("soft_margin_loss", per_reduction(hinge), tol=SIXTEEN_BIT),
    loss("multilabel_soft_margin_loss", per_reduction(multilabel_soft), tol=SIXTEEN_BIT),
    loss("cosine_embedding_loss", per_reduction(cosine_embedding), tol=SIXTEEN_BIT),
    loss("cosine_embedding_loss", with_kwargs(per_reduction(cosine_embedding), margin=-0.2),
         label="cosine_embedding_loss.margin", tol=SIXTEEN_BIT),
    # torch's CPU kernels of the two multi-class margin losses refuse 16-bit floats.
    loss("multi_margin_loss", per_reduction(class_indices, empty=False)),
    loss("multi_margin_loss", with_kwargs(per_reduction(class_indices, empty=False), p=2, margin=0.5),
         label="multi_margin_loss.p2"),
    loss("multilabel_margin_loss", per_reduction(label_lists, empty=False)),
    loss("poisson_nll_loss", per_reduction(poisson), tol=SIXTEEN_BIT),
    loss("poisson_nll_loss", with_kwargs(per_reduction(poisson_positive), log_input=False, full=True),
         label="poisson_nll_loss.rate_full", domain=(0.1, 3), tol=SIXTEEN_BIT),
    loss("gaussian_nll_loss", per_reduction(gaussian), tol=SIXTEEN_BIT),
    # eps below the variances: a clamped variance's gradient is not the derivative (test_nn_losses_more has it).
    loss("gaussian_nll_loss", with_kwargs(per_reduction(gaussian), full=True, eps=0.05),
         label="gaussian_nll_loss.full_eps", tol=SIXTEEN_BIT),
    loss("triplet_margin_loss", per_reduction(triplet), tol=SIXTEEN_BIT),
    loss("triplet_margin_loss", with_kwargs(per_reduction(triplet), p=1, swap=True, margin=2.0),
         label="triplet_margin_loss.p1_swap", tol=SIXTEEN_BIT),
    loss("triplet_margin_with_distance_loss", per_reduction(triplet), tol=SIXTEEN_BIT),
    *[weighted_loss(name) for name in ("mse_loss", "l1_loss", "huber_loss")],
    loss("linear_cross_entropy", linear_cross_entropy_samples, tol=SIXTEEN_BIT),
]

"""Op-table rows of the torch namespace's nn_ops composites (tensorplay/_composites/nn_ops.py).

Rows only for the torch-level forms whose signature differs from nn.functional's (which have rows of
their own): arguments in ATen's order, reductions and modes as int enums, stride=() for the kernel
size, tuples where nn.functional returns one tensor. Labels are "torch.<name>". The recurrent ops get
their flat weight lists from the sample; the in-place forms are in test_composites_nn_ops.py, and so is
ctc_loss: it reads its lengths' values (so it has no meta form) and torch's backward gives the gradient
that log_softmax's backward turns into the true one, which is compared there through a log_softmax.

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

from op_table import FLOAT_DTYPES, Op, S

# The convolutions and recurrent layers sum many products: torch's 16-bit kernels and tensorplay's
# compositions round the partial sums differently, by an ulp or two of the sum.
SUMS_16_BIT = {"bfloat16": (3e-2, 5e-2), "float16": (3e-3, 5e-3)}


def torch_level(name, samples, label=None, dtypes=FLOAT_DTYPES, method=False, **kw):
    """A row for torch.<name> and tensorplay.<name>, called by that name in both libraries."""
    return Op(name, samples, dtypes=dtypes, label=label or f"torch.{name}", method=method,
              fn=lambda m, *args, **kwargs: getattr(m, name)(*args, **kwargs), **kw)


def positive(mk, shape):
    return mk(shape, domain=(0.5, 2))


def signs(mk, shape):
    return mk.rng.choice([-1.0, 1.0], shape).astype(mk(()).dtype)


def batch_norm_samples(mk):
    c = 3
    return [
        S("eval", mk((2, c, 4)), mk((c,)), mk((c,)), mk((c,)), positive(mk, (c,)), False, 0.1, 1e-5, False),
        S("training_running_stats", mk((4, c)), None, None, mk((c,)), positive(mk, (c,)), True, 0.2, 1e-5, True),
        S("training_no_stats", mk((2, c, 2, 3)), mk((c,)), None, None, None, True, 0.1, 1e-3, False),
        S("eval_without_stats", mk((2, c, 4)), None, None, None, None, False, 0.1, 1e-5, False),  # RuntimeError
    ]


def layer_norm_samples(mk):
    return [
        S("last_dim", mk((3, 4))),
        S("affine_two_dims", mk((2, 3, 4)), [3, 4], mk((3, 4)), mk((3, 4)), 1e-3, False),
        S("shape_mismatch", mk((3, 4)), [3]),
    ]


def group_norm_samples(mk):
    return [
        S("plain", mk((2, 4, 3)), 2),
        S("affine", mk((2, 6, 2, 2)), 3, mk((6,)), mk((6,)), 1e-3, True),
        S("not_divisible", mk((2, 5, 3)), 2),
    ]


def instance_norm_samples(mk):
    return [
        S("input_stats", mk((2, 3, 5)), None, None, None, None, True, 0.1, 1e-5, False),
        S("affine_running_stats", mk((2, 3, 4)), mk((3,)), mk((3,)), mk((3,)), positive(mk, (3,)), True, 0.2, 1e-5,
          False),
        S("running_stats", mk((2, 3, 4)), None, None, mk((3,)), positive(mk, (3,)), False, 0.1, 1e-5, False),
    ]


def norm_except_dim_samples(mk):
    return [
        S("default", mk((3, 4, 2))),
        S("dim1", mk((3, 4, 2)), 2, 1),
        S("last_dim_p1", mk.transposed((3, 4)), 1, 1),
        S("negative_dim", mk((3, 4, 2)), 3, -2),
        S("whole", mk((3, 4)), 2, -1),
        S("1d", mk((5,)), 2, 0),
        S("dim_out_of_range", mk((3, 4)), 2, 2),  # IndexError
    ]


def convolution_samples(mk):
    x = mk((2, 4, 5), domain=(-1, 1))
    return [
        S("conv1d", x, mk((3, 4, 2), domain=(-1, 1)), mk((3,)), [1], [1], [1], False, [0], 1),
        S("conv2d_groups", mk((1, 4, 4, 3), domain=(-1, 1)), mk((2, 2, 2, 2), domain=(-1, 1)), None, [1, 1], [0, 1],
          [1, 1], False, [0, 0], 2),
        S("transposed", x, mk((4, 2, 3), domain=(-1, 1)), mk((2,)), [2], [1], [1], True, [1], 1),
        S("2d_weight", x, mk((3, 4), domain=(-1, 1)), None, [1], [0], [1], False, [0], 1),  # RuntimeError
    ]


def constant_pad_samples(mk):
    return [
        S("last_dim", mk((2, 3)), [1, 2]),
        S("two_dims_value", mk((2, 3, 4)), [0, 1, 2, 0], 1),
        S("crop", mk((3, 4)), [-1, 1]),
    ]


def pool1d_samples(mk):
    return [
        S("default_stride", mk((2, 3, 8)), 2),
        S("empty_stride", mk((2, 3, 7)), 3, (), 1),
        S("stride_padding", mk((3, 9)), [3], [2], [1]),
    ]


def max_pool1d_samples(mk):
    return pool1d_samples(mk) + [S("dilation_ceil", mk((1, 2, 9)), 2, 2, 0, 2, True)]


def pool2d_samples(mk):
    return [
        S("default_stride", mk((1, 2, 4, 6)), 2),
        S("stride_padding", mk((1, 1, 5, 5)), [3, 2], [2, 1], [1, 0]),
    ]


def pool3d_samples(mk):
    return [
        S("default_stride", mk((1, 1, 3, 4, 4)), 2),
        S("stride_padding", mk((1, 3, 4, 4)), 2, 1, 1),
    ]


def grid_sampler_samples(mk, spatial=2, modes=((0, 0), (1, 1), (2, 2))):
    """(input, grid) with grid points from outside the input on each side to inside, in each
    (interpolation_mode, padding_mode) of modes."""
    grid_domain = (-1.3, 1.3)
    if spatial == 2:
        x, grid = mk((2, 2, 3, 4)), mk((2, 3, 2, 2), domain=grid_domain)
    else:
        x, grid = mk((1, 2, 2, 3, 4)), mk((1, 2, 3, 2, 3), domain=grid_domain)
    # torch returns uninitialized memory for a mode number out of range: no sample for that.
    return [S(f"modes{i}{p}", x, grid, i, p, i == 1) for i, p in modes]


def grid_sampler_3d_samples(mk):
    samples = grid_sampler_samples(mk, 3, ((0, 0), (1, 2)))
    return samples + [S("4d_input", mk((2, 2, 3, 4)), mk((2, 3, 2, 2)), 0, 0, False)]


def affine_grid_generator_samples(mk):
    return [
        S("2d", mk((2, 2, 3)), [2, 3, 4, 5], False),
        S("3d_align_corners", mk((2, 3, 4)), [2, 1, 2, 3, 4], True),
    ]


def embedding_samples(mk):
    weight = mk((6, 3))
    return [
        S("2d_indices", weight, mk.index((2, 4), 6)),
        S("padding_idx", weight, mk.index((5,), 6), 2),
        S("negative_padding_idx", weight, mk.index((5,), 6), -2),  # no padding row in ATen
        S("scale_grad_by_freq", weight, mk.index((7,), 3), -1, True),
        S("index_out_of_range", weight, mk.index((3,), 6) + 6),
    ]


def adaptive_max_pool1d_samples(mk):
    return [S("3d", mk((2, 3, 7)), 3), S("2d", mk((3, 8)), [4]), S("4d", mk((1, 2, 3, 4)), 2)]


# reduction as ATen's enum: 0 none, 1 mean, 2 sum; any other value reduces nothing.
REDUCTIONS = ((0, "none"), (1, "mean"), (2, "sum"), (5, "other"))


def per_reduction(make):
    return lambda mk: [S(f"reduction_{name}", *make(mk, (4, 5)), reduction=value) for value, name in REDUCTIONS]


def kl_div_samples(mk):
    samples = per_reduction(lambda mk, shape: (mk(shape), mk(shape, domain=(0.1, 1))))(mk)
    return samples + [
        S("log_target_positional_reduction", mk((3, 4)), mk((3, 4)), 2, log_target=True),
        S("string_reduction", mk((3, 4)), mk((3, 4)), "mean"),  # TypeError
    ]


def bce_with_logits_samples(mk):
    samples = per_reduction(lambda mk, shape: (mk(shape), mk(shape, domain=(0, 1))))(mk)
    return samples + [S("weights", mk((3, 4)), mk((3, 4), domain=(0, 1)), mk((4,), domain=(0, 2)),
                        mk((4,), domain=(0.5, 2)), 2)]


def margin_ranking_samples(mk):
    samples = per_reduction(lambda mk, shape: (mk(shape), mk(shape), signs(mk, shape)))(mk)
    return samples + [S("margin_positional", mk((5,)), mk((5,)), signs(mk, (5,)), 0.5, 2)]


def cosine_embedding_samples(mk):
    samples = per_reduction(lambda mk, shape: (mk(shape), mk(shape), signs(mk, shape[:1])))(mk)
    return samples + [S("margin_positional", mk((3, 4)), mk((3, 4)), signs(mk, (3,)), 0.2, 0)]


def hinge_samples(mk):
    samples = per_reduction(lambda mk, shape: (mk(shape), signs(mk, shape)))(mk)
    return samples + [S("margin_positional", mk((3, 4)), signs(mk, (3, 4)), 0.5, 2)]


def triplet_samples(mk):
    samples = per_reduction(lambda mk, shape: (mk(shape), mk(shape), mk(shape)))(mk)
    return samples + [S("all_positional", mk((3, 4)), mk((3, 4)), mk((3, 4)), 0.5, 1.0, 1e-6, True, 0)]


def poisson_nll_samples(mk):
    def counts(shape):
        return mk.rng.poisson(2.0, shape).astype(mk(()).dtype) + 2

    return [
        S("log_input_mean", mk((4, 5)), counts((4, 5)), True, False, 1e-8, 1),
        S("full_sum", mk((4, 5)), counts((4, 5)), True, True, 1e-8, 2),
        S("rates_none", mk((4, 5), domain=(0.5, 3)), counts((4, 5)), False, False, 1e-8, 0),
    ]


def recurrent_samples(gates, lstm=False):
    """(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) for
    ATen's flat recurrent ops: params are w_ih, w_hh, b_ih, b_hh per layer and direction. A hidden size
    of 3 keeps the one-layer weights small enough for gradcheck."""
    def params(mk, layers, directions, bias, hidden=3, size=3):
        def weight(*shape):
            return mk(shape, domain=(-0.5, 0.5))

        out = []
        for layer in range(layers):
            for _ in range(directions):
                inputs = size if layer == 0 else hidden * directions
                out += [weight(gates * hidden, inputs), weight(gates * hidden, hidden)]
                if bias:
                    out += [weight(gates * hidden), weight(gates * hidden)]
        return out

    def hx(mk, count, batch=2):
        state = mk((count, batch, 3), domain=(-0.5, 0.5))
        return [state, mk((count, batch, 3), domain=(-0.5, 0.5))] if lstm else state

    def samples(mk):
        return [
            S("one_layer", mk((5, 2, 3), domain=(-1, 1)), hx(mk, 1), params(mk, 1, 1, True), True, 1, 0.0, False,
              False, False),
            S("two_layers_bidirectional", mk((4, 2, 3), domain=(-1, 1)), hx(mk, 4), params(mk, 2, 2, True), True, 2,
              0.0, False, True, False),
            S("batch_first_no_bias", mk((2, 4, 3), domain=(-1, 1)), hx(mk, 1), params(mk, 1, 1, False), False, 1,
              0.0, False, False, True),
        ]
    return samples


ROWS = [
    torch_level("batch_norm", batch_norm_samples, tol=SUMS_16_BIT),
    torch_level("layer_norm", layer_norm_samples, tol=SUMS_16_BIT),
    torch_level("group_norm", group_norm_samples, tol=SUMS_16_BIT),
    torch_level("instance_norm", instance_norm_samples, tol=SUMS_16_BIT),
    torch_level("norm_except_dim", norm_except_dim_samples, domain=(0.25, 3)),
    torch_level("convolution", convolution_samples, tol=SUMS_16_BIT),
    torch_level("constant_pad_nd", constant_pad_samples),
    torch_level("avg_pool1d", pool1d_samples),
    torch_level("max_pool1d", max_pool1d_samples),
    torch_level("max_pool1d_with_indices", max_pool1d_samples),
    torch_level("max_pool2d", pool2d_samples),
    torch_level("max_pool3d", pool3d_samples),
    torch_level("adaptive_max_pool1d", adaptive_max_pool1d_samples),
    torch_level("grid_sampler", grid_sampler_samples, tol=SUMS_16_BIT),
    torch_level("grid_sampler_2d", grid_sampler_samples, tol=SUMS_16_BIT),
    torch_level("grid_sampler_3d", grid_sampler_3d_samples, tol=SUMS_16_BIT),
    torch_level("affine_grid_generator", affine_grid_generator_samples, tol=SUMS_16_BIT),
    torch_level("embedding", embedding_samples),
    torch_level("kl_div", kl_div_samples),
    torch_level("binary_cross_entropy_with_logits", bce_with_logits_samples),
    torch_level("margin_ranking_loss", margin_ranking_samples),
    torch_level("cosine_embedding_loss", cosine_embedding_samples),
    torch_level("hinge_embedding_loss", hinge_samples),
    torch_level("triplet_margin_loss", triplet_samples),
    torch_level("poisson_nll_loss", poisson_nll_samples),
    torch_level("hardshrink", lambda mk: [S("default", mk((3, 4))), S("lambd", mk.transposed((3, 4)), 1.0)],
                method=True),
    torch_level("prelu", lambda mk: [S("channels", mk((2, 3, 4)), mk((3,))), S("shared", mk((3, 4)), mk((1,)))],
                method=True),
    torch_level("lstm", recurrent_samples(4, lstm=True), tol=SUMS_16_BIT),
    torch_level("gru", recurrent_samples(3), tol=SUMS_16_BIT),
    torch_level("rnn_tanh", recurrent_samples(1), tol=SUMS_16_BIT),
    torch_level("rnn_relu", recurrent_samples(1), tol=SUMS_16_BIT),
]

GRADIENT_LABELS = """
torch.batch_norm torch.layer_norm torch.group_norm torch.instance_norm torch.norm_except_dim torch.convolution
torch.constant_pad_nd torch.avg_pool1d torch.max_pool1d torch.max_pool1d_with_indices torch.max_pool2d
torch.max_pool3d torch.adaptive_max_pool1d torch.grid_sampler torch.grid_sampler_2d torch.grid_sampler_3d
torch.affine_grid_generator torch.embedding torch.kl_div torch.binary_cross_entropy_with_logits
torch.margin_ranking_loss torch.cosine_embedding_loss torch.hinge_embedding_loss torch.triplet_margin_loss
torch.poisson_nll_loss torch.hardshrink torch.prelu torch.lstm torch.gru torch.rnn_tanh torch.rnn_relu
""".split()

NOT_DIFFERENTIABLE = {}

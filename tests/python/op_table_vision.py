"""The op-table rows of nn.functional's vision family (see op_table.py): padding, resampling, sliding
blocks, channel shuffles and the spatial transformer's affine_grid/grid_sample, called as
torch.nn.functional.<name> in both libraries."""

from op_table import ALL_DTYPES, FLOAT_DTYPES, SHAPE_DTYPES, Op, S

# The nearest modes and bilinear resample uint8 images too; int64 is refused, as by PyTorch.
NEAREST_DTYPES = FLOAT_DTYPES + ("uint8", "int64")
BILINEAR_DTYPES = FLOAT_DTYPES + ("uint8",)
# Reflection and replication pad every integer dtype and refuse bool.
PAD_DTYPES = FLOAT_DTYPES + ("int64", "uint8", "bool")
# Sliding blocks take floats and bool, and refuse the integer dtypes.
BLOCK_DTYPES = FLOAT_DTYPES + ("bool", "int64")
# Samples stay small: gradcheck takes those whose every input has at most 48 elements
# (test_gradients.py), and each differentiable row needs such a sample, non-contiguous ones included.
# 16-bit results of weighted sums: PyTorch rounds its intermediate sums (fold) or its weights
# (interpolation, in another order of operations) differently; two units in the last place at
# the inputs' magnitude (up to 8) bound the difference where the sum nearly cancels.
SUMS_16_BIT = {"bfloat16": (1.6e-2, 6.25e-2), "float16": (1e-3, 8e-3)}


def nn_functional(name, samples, label=None, **kw):
    """A function of torch.nn.functional, called the same way in both libraries."""
    return Op(f"nn.functional.{name}", samples, label=label or name, method=False,
              fn=lambda m, *args, **kwargs: getattr(m.nn.functional, name)(*args, **kwargs), **kw)


def constant_pad_samples(mk):
    samples = [
        S("1d", mk((2, 3, 5)), (2, 1)),
        S("3d_value", mk((2, 3, 4, 5)), (1, 0, 2, 1, 0, 1), value=2),
        S("negative", mk((3, 5)), (-1, 2, 1, -2)),
    ]
    if mk.layouts:
        samples += [
            S("transposed", mk.transposed((3, 4)), (1, 1, 0, 2)),
            S("empty", mk((0, 3)), (1, 1)),
            S("0dim", mk(()), (1, 1)),
        ]
    return samples


def gather_pad_samples(mk):
    """reflect and replicate (the mode comes with the row): 1-3 dims, batched and not."""
    samples = [
        S("1d", mk((2, 3, 5)), (2, 1)),
        S("2d", mk((2, 3, 4, 5)), (1, 2, 3, 0)),
        S("3d_unbatched", mk((2, 3, 4, 5)), (1, 1, 2, 0, 1, 2)),
        S("negative", mk((2, 3, 5)), (-2, 3)),
        S("too_wide", mk((2, 3, 4)), (4, 0)),  # reflect raises
        S("1d_input", mk((4,)), (1, 1)),
    ]
    if mk.layouts:
        samples += [
            S("transposed", mk.transposed((2, 4, 5)), (1, 2, 2, 1)),
            S("empty_batch", mk((0, 3, 4)), (1, 2)),
            S("empty_channels", mk((2, 0, 4)), (1, 2)),
        ]
    return samples


def circular_pad_samples(mk):
    samples = [
        S("1d", mk((2, 3, 5)), (2, 5)),
        S("2d_unbatched", mk((3, 4, 5)), (1, 2, 3, 0)),
        S("3d", mk((1, 2, 3, 4, 5)), (1, 0, 2, 1, 0, 3)),
        S("negative", mk((2, 3, 5)), (-2, 3)),
        S("wraps_twice", mk((2, 3, 4)), (5, 0)),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((2, 4, 5)), (1, 2, 2, 1))]
    return samples


def interpolate_samples(spatial):
    """Inputs with `spatial` dims resized by a size, a scale factor and a recomputed scale factor; at most
    48 elements, for gradcheck. No output dim is 1 (PyTorch's antialiased kernels give an output of
    width 1 the first row's value in every row)."""
    def samples(mk):
        shape = {1: (2, 3, 5), 2: (2, 2, 3, 4), 3: (1, 2, 3, 4, 2)}[spatial]
        out = [
            S("size", mk(shape), size=(7, 2, 5)[:spatial]),
            S("scale", mk(shape), scale_factor=(1.7, 0.6, 2.0)[:spatial]),
            S("scale_recompute", mk(shape), scale_factor=1.5, recompute_scale_factor=True),
            S("size_mismatch", mk(shape), size=(3,) * (spatial + 1)),
        ]
        if mk.layouts:
            out += [
                S("transposed", mk.transposed(shape), size=(3, 6, 2)[:spatial]),
                S("empty_batch", mk((0,) + shape[1:]), size=(2,) * spatial),
            ]
        return out
    return samples


def aligned(samples):
    """samples, and their first with align_corners=True."""
    def with_align(mk):
        out = samples(mk)
        first = out[0]
        return out + [S(first.label + "_align_corners", *first.args, **first.kwargs, align_corners=True)]
    return with_align


def unfold_samples(mk):
    samples = [
        S("k2", mk((2, 2, 4, 3)), 2),
        S("dilation_padding_stride", mk((1, 2, 6, 4)), (3, 2), dilation=(2, 1), padding=1, stride=(1, 2)),
        S("unbatched", mk((2, 4, 4)), 3, padding=(1, 0)),
        S("kernel_too_big", mk((1, 2, 3, 3)), 4),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((2, 2, 4, 3)), 2, stride=2)]
    return samples


def fold_samples(mk):
    samples = [
        S("k2", mk((2, 4, 6)), (3, 4), 2),
        S("overlapping", mk((1, 6, 8)), (4, 5), (3, 2), dilation=(1, 2), padding=(1, 0), stride=(1, 2)),
        S("unbatched", mk((8, 6)), (4, 4), 2, stride=(2, 1)),
        S("block_count_mismatch", mk((1, 4, 8)), (4, 4), 2),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((1, 8, 6)), (3, 4), 2)]
    return samples


def pixel_shuffle_samples(mk):
    samples = [
        S("r2", mk((2, 4, 2, 3)), 2),
        S("batch_dims", mk((2, 1, 9, 1, 2)), 3),
        S("channels_not_divisible", mk((1, 6, 2, 2)), 2),
        S("2d_input", mk((4, 4)), 2),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((1, 4, 3, 2)), 2)]
    return samples


def channel_shuffle_samples(mk):
    samples = [
        S("4d", mk((2, 6, 2, 2)), 3),
        S("3d", mk((2, 8, 3)), 2),
        S("not_divisible", mk((1, 5, 2)), 2),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((2, 4, 3)), 2)]
    return samples


def grid_samples(mk):
    """(input, grid) with grid points from outside the input on each side to inside."""
    grid_domain = (-1.3, 1.3)
    samples = [
        S("zeros", mk((2, 2, 3, 4)), mk((2, 3, 2, 2), domain=grid_domain), align_corners=False),
        S("border_align_corners", mk((2, 2, 3, 4)), mk((2, 3, 2, 2), domain=grid_domain), padding_mode="border",
          align_corners=True),
        S("reflection", mk((1, 2, 3, 4)), mk((1, 4, 2, 2), domain=grid_domain), padding_mode="reflection",
          align_corners=False),
        S("5d", mk((1, 2, 2, 3, 4)), mk((1, 2, 3, 2, 3), domain=grid_domain), align_corners=False),
        S("batch_mismatch", mk((2, 1, 3, 3)), mk((1, 2, 2, 2)), align_corners=False),
    ]
    if mk.layouts:
        samples += [S("transposed", mk.transposed((1, 2, 4, 5)), mk((1, 3, 2, 2), domain=grid_domain),
                      align_corners=True)]
    return samples


def affine_grid_samples(mk):
    return [
        S("2d", mk((2, 2, 3)), (2, 3, 4, 5), align_corners=False),
        S("2d_align_corners", mk((2, 2, 3)), (2, 1, 3, 2), align_corners=True),
        S("3d", mk((2, 3, 4)), (2, 1, 2, 3, 4), align_corners=False),
        S("theta_shape", mk((2, 3, 4)), (2, 1, 3, 2), align_corners=False),
    ]


ROWS = [
    nn_functional("pad", constant_pad_samples, dtypes=ALL_DTYPES),
    nn_functional("pad", gather_pad_samples, label="pad.reflect", dtypes=PAD_DTYPES, kwargs={"mode": "reflect"}),
    nn_functional("pad", gather_pad_samples, label="pad.replicate", dtypes=PAD_DTYPES,
                  kwargs={"mode": "replicate"}),
    nn_functional("pad", circular_pad_samples, label="pad.circular", dtypes=ALL_DTYPES, kwargs={"mode": "circular"}),
    nn_functional("interpolate", interpolate_samples(1), label="interpolate.nearest_1d", dtypes=NEAREST_DTYPES),
    nn_functional("interpolate", interpolate_samples(2), label="interpolate.nearest", dtypes=NEAREST_DTYPES),
    nn_functional("interpolate", interpolate_samples(3), label="interpolate.nearest_exact_3d", dtypes=NEAREST_DTYPES,
                  kwargs={"mode": "nearest-exact"}),
    nn_functional("interpolate", aligned(interpolate_samples(1)), label="interpolate.linear", dtypes=FLOAT_DTYPES,
                  tol=SUMS_16_BIT, kwargs={"mode": "linear"}),
    nn_functional("interpolate", aligned(interpolate_samples(2)), label="interpolate.bilinear", dtypes=BILINEAR_DTYPES,
                  tol=SUMS_16_BIT, kwargs={"mode": "bilinear"}),
    nn_functional("interpolate", aligned(interpolate_samples(2)), label="interpolate.bicubic", dtypes=FLOAT_DTYPES,
                  tol=SUMS_16_BIT, kwargs={"mode": "bicubic"}),
    nn_functional("interpolate", aligned(interpolate_samples(3)), label="interpolate.trilinear", dtypes=FLOAT_DTYPES,
                  tol=SUMS_16_BIT, kwargs={"mode": "trilinear"}),
    nn_functional("interpolate", aligned(interpolate_samples(2)), label="interpolate.bilinear_antialias",
                  dtypes=BILINEAR_DTYPES, tol=SUMS_16_BIT, kwargs={"mode": "bilinear", "antialias": True}),
    nn_functional("interpolate", aligned(interpolate_samples(2)), label="interpolate.bicubic_antialias",
                  dtypes=FLOAT_DTYPES, tol=SUMS_16_BIT, kwargs={"mode": "bicubic", "antialias": True}),
    nn_functional("interpolate", interpolate_samples(2), label="interpolate.area", dtypes=FLOAT_DTYPES, tol=SUMS_16_BIT,
                  kwargs={"mode": "area"}),
    nn_functional("unfold", unfold_samples, dtypes=BLOCK_DTYPES),
    nn_functional("fold", fold_samples, dtypes=BLOCK_DTYPES, tol=SUMS_16_BIT),
    nn_functional("pixel_shuffle", pixel_shuffle_samples, dtypes=SHAPE_DTYPES),
    nn_functional("pixel_unshuffle", lambda mk: [
        S("r2", mk((2, 3, 4, 6)), 2),
        S("unbatched", mk((1, 6, 3)), 3),
        S("height_not_divisible", mk((1, 1, 3, 4)), 2),
    ], dtypes=SHAPE_DTYPES),
    nn_functional("channel_shuffle", channel_shuffle_samples, dtypes=SHAPE_DTYPES),
    nn_functional("grid_sample", grid_samples, dtypes=FLOAT_DTYPES),
    nn_functional("grid_sample", grid_samples, label="grid_sample.nearest", dtypes=FLOAT_DTYPES,
                  kwargs={"mode": "nearest"}),
    nn_functional("grid_sample", lambda mk: grid_samples(mk)[:3], label="grid_sample.bicubic", dtypes=FLOAT_DTYPES,
                  kwargs={"mode": "bicubic"}),
    nn_functional("affine_grid", affine_grid_samples, dtypes=FLOAT_DTYPES, tol=SUMS_16_BIT),
]

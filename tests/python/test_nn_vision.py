"""Padding, resampling and the vision layers (nn.functional's vision family and its modules) against torch.

test_functional_matches_torch (ids `<function>-<variant>`): F.pad in its four modes over 1-3 dims
(negative padding included), F.interpolate in every mode (antialiased bilinear/bicubic too), size or
scale factor, align_corners and recompute_scale_factor (scale factors that leave a dim's size
unchanged, ratios whose source index lands near an integer, infinite inputs), fold/unfold,
pixel_(un)shuffle, channel_shuffle, grid_sample in every mode and padding mode with points outside
the input, affine_grid: values and the gradients of every floating input, in float32, and a subset
in float64 (where torch computes the indices in double). Then 16-bit float and uint8 results, the
errors torch raises (same exception class), the warnings, the modules (forward and gradients, repr,
attributes) built from one factory, and output dtypes under autocast. The op-table rows
(op_table_vision.py) add every dtype, meta and fuzzing.
"""

import warnings

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_functional, compare_module, same_outcome, tp_tensor


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def uniform(*shape, low=-1.0, high=1.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


def f(name, variant, *args, rtol=1e-4, atol=1e-5, **kwargs):
    return pytest.param(name, list(args), kwargs, rtol, atol, id=f"{name}-{variant}")


X3 = randn(2, 3, 7, seed=1)
X4 = randn(2, 3, 5, 6, seed=2)
X5 = randn(1, 2, 3, 4, 5, seed=3)
# Points from outside the input on each side to inside: padding_mode decides what they read.
GRID4 = uniform(2, 4, 3, 2, low=-1.6, high=1.6, seed=4)
GRID5 = uniform(1, 3, 2, 4, 3, low=-1.6, high=1.6, seed=5)

FUNCTIONAL_CASES = [
    # ---- pad ----
    f("pad", "constant_3d_value", X5, (1, 2, 0, 1, 2, 0), value=0.5),
    f("pad", "constant_negative", X4, (-1, 2, 1, -2)),
    f("pad", "constant_0dim_tensor_value", X3, (2, 1), value=torch.tensor(-1.5)),
    f("pad", "reflect_1d", X3, (2, 3), mode="reflect"),
    f("pad", "reflect_1d_unbatched", X3[0], (3, 1), mode="reflect"),
    f("pad", "reflect_2d", X4, (2, 1, 1, 3), mode="reflect"),
    f("pad", "reflect_2d_unbatched", X4[0], (1, 2, 4, 0), mode="reflect"),
    f("pad", "reflect_3d", X5, (1, 2, 3, 0, 2, 1), mode="reflect"),
    f("pad", "reflect_negative", X3, (-2, 3), mode="reflect"),
    f("pad", "replicate_1d", X3, (3, 1), mode="replicate"),
    f("pad", "replicate_2d", X4, (2, 1, 4, 3), mode="replicate"),
    f("pad", "replicate_3d", X5, (2, 0, 1, 3, 0, 2), mode="replicate"),
    f("pad", "replicate_3d_unbatched", X5[0], (1, 1, 2, 0, 1, 2), mode="replicate"),
    f("pad", "replicate_negative", X4, (1, -2, -1, 2), mode="replicate"),
    # Positions map to the input as if padded on both sides: cropping past the padding reflects the input.
    f("pad", "reflect_crop_past_padding", X3, (5, -6), mode="reflect"),
    f("pad", "replicate_crop_past_padding", X3, (-7, 2), mode="replicate"),
    f("pad", "circular_crop_everything", X3, (-7, 0), mode="circular"),
    f("pad", "circular_1d", X3, (2, 7), mode="circular"),
    f("pad", "circular_1d_unbatched", X3[0], (3, 1), mode="circular"),
    f("pad", "circular_2d", X4, (1, 2, 5, 3), mode="circular"),
    f("pad", "circular_3d", X5, (1, 2, 2, 0, 3, 1), mode="circular"),
    f("pad", "circular_negative", X4, (-2, 3, 1, -1), mode="circular"),
    # ---- interpolate: nearest ----
    f("interpolate", "nearest_1d_size", X3, size=11),
    f("interpolate", "nearest_1d_down", X3, size=3),
    f("interpolate", "nearest_1d_scale_1.7", X3, scale_factor=1.7),
    f("interpolate", "nearest_3d_size", X5, size=(4, 7, 3)),
    f("interpolate", "nearest_3d_scale", X5, scale_factor=(2, 0.6, 1.3)),
    f("interpolate", "nearest_2d_scale_same_size", X4, scale_factor=(1.1, 2.0)),  # H stays 5: copied
    f("interpolate", "nearest_2d_scale_0.3", randn(1, 2, 20, 20), scale_factor=0.3),
    f("interpolate", "nearest_exact_1d", X3, size=12, mode="nearest-exact"),
    f("interpolate", "nearest_exact_2d", X4, size=(8, 4), mode="nearest-exact"),
    f("interpolate", "nearest_exact_2d_scale", X4, scale_factor=1.5, mode="nearest-exact"),
    f("interpolate", "nearest_exact_3d", X5, scale_factor=(0.7, 1.5, 2), mode="nearest-exact"),
    f("interpolate", "nearest_exact_recompute", X4, scale_factor=1.7, mode="nearest-exact",
      recompute_scale_factor=True),
    # ---- interpolate: linear, bilinear, trilinear ----
    f("interpolate", "linear_up", X3, size=12, mode="linear"),
    f("interpolate", "linear_down_align", X3, size=4, mode="linear", align_corners=True),
    f("interpolate", "linear_scale_2.5", X3, scale_factor=2.5, mode="linear"),
    f("interpolate", "linear_scale_0.6_recompute", X3, scale_factor=0.6, mode="linear", recompute_scale_factor=True),
    f("interpolate", "linear_to_one", X3, size=1, mode="linear", align_corners=True),
    f("interpolate", "linear_scale_same_size", X3, scale_factor=1.1, mode="linear"),
    f("interpolate", "bilinear_scale_same_size", X4, scale_factor=(1.1, 1.5), mode="bilinear"),
    f("interpolate", "bilinear_unbatched_like_5", randn(1, 1, 5, 5), scale_factor=(3, 1 / 3), mode="bilinear"),
    f("interpolate", "trilinear_up", X5, size=(5, 6, 9), mode="trilinear"),
    f("interpolate", "trilinear_down_align", X5, size=(2, 3, 2), mode="trilinear", align_corners=True),
    f("interpolate", "trilinear_scale", X5, scale_factor=(1.5, 2.0, 0.5), mode="trilinear"),
    # ---- interpolate: bicubic ----
    f("interpolate", "bicubic_up", X4, size=(9, 11), mode="bicubic"),
    f("interpolate", "bicubic_up_align", X4, size=(9, 11), mode="bicubic", align_corners=True),
    f("interpolate", "bicubic_down", X4, size=(3, 4), mode="bicubic"),
    f("interpolate", "bicubic_scale", X4, scale_factor=1.7, mode="bicubic"),
    f("interpolate", "bicubic_scale_same_size", X4, scale_factor=(1.1, 2), mode="bicubic"),
    # ---- interpolate: antialiased bilinear and bicubic ----
    f("interpolate", "bilinear_antialias_down", randn(2, 3, 13, 11), size=(4, 5), mode="bilinear", antialias=True),
    f("interpolate", "bilinear_antialias_up_align", X4, size=(9, 7), mode="bilinear", antialias=True,
      align_corners=True),
    f("interpolate", "bicubic_antialias_down", randn(2, 3, 13, 11), size=(4, 6), mode="bicubic", antialias=True),
    f("interpolate", "bicubic_antialias_mixed_align", randn(1, 2, 9, 5), size=(4, 11), mode="bicubic",
      antialias=True, align_corners=True),
    # ---- interpolate: area (adaptive average pooling) ----
    f("interpolate", "area_1d_down", X3, size=3, mode="area"),
    f("interpolate", "area_2d_uneven", X4, size=(3, 4), mode="area"),
    f("interpolate", "area_2d_up", X4, size=(7, 9), mode="area"),
    f("interpolate", "area_2d_scale", X4, scale_factor=0.5, mode="area"),
    f("interpolate", "area_3d", X5, size=(2, 3, 2), mode="area"),
    f("interpolate", "area_special_values", np.array([[[1.0, np.inf, 2.0, -np.inf, np.nan, 3.0, 4.0]]], np.float32),
      size=3, mode="area"),
    f("interpolate", "linear_special_values", np.array([[[1.0, np.inf, 2.0, -np.inf, 3.0]]], np.float32), size=9,
      mode="linear"),
    f("interpolate", "bilinear_special_values", np.array([[[[1.0, np.inf], [-np.inf, 2.0]]]], np.float32),
      size=(3, 5), mode="bilinear"),
    # ---- upsample (deprecated aliases) ----
    f("upsample", "bilinear", X4, scale_factor=2, mode="bilinear"),
    f("upsample_nearest", "size", X4, size=(7, 8)),
    f("upsample_bilinear", "size", X4, size=(7, 8)),
    # ---- fold / unfold ----
    f("unfold", "k2", X4, 2),
    f("unfold", "k3_d2_p1_s2", randn(2, 3, 9, 8), (3, 2), dilation=(2, 1), padding=1, stride=(2, 3)),
    f("unfold", "unbatched", X4[0], 3, padding=(1, 0)),
    f("fold", "k2", randn(2, 12, 20), (5, 6), 2),
    f("fold", "overlapping", randn(2, 6, 24), (6, 7), (3, 2), dilation=(1, 2), padding=1, stride=(1, 2)),
    f("fold", "unbatched", randn(8, 8), (4, 5), 2, stride=(2, 1)),
    # ---- pixel / channel shuffles ----
    f("pixel_shuffle", "r2", randn(2, 8, 3, 4), 2),
    f("pixel_shuffle", "batch_dims", randn(2, 3, 9, 2, 3), 3),
    f("pixel_shuffle", "unbatched", randn(4, 3, 2), 2),
    f("pixel_unshuffle", "r2", randn(2, 3, 4, 6), 2),
    f("pixel_unshuffle", "batch_dims", randn(2, 1, 2, 6, 3), 3),
    f("channel_shuffle", "4d", randn(2, 6, 3, 4), 3),
    f("channel_shuffle", "3d", randn(2, 8, 5), 2),
    # ---- grid_sample ----
    *(f("grid_sample", f"{mode}_{padding}_align{align}", X4, GRID4, mode=mode, padding_mode=padding,
        align_corners=align)
      for mode in ("bilinear", "nearest", "bicubic") for padding in ("zeros", "border", "reflection")
      for align in (False, True)),
    *(f("grid_sample", f"5d_{mode}_{padding}_align{align}", X5, GRID5, mode=mode, padding_mode=padding,
        align_corners=align)
      for mode in ("bilinear", "nearest") for padding in ("zeros", "border", "reflection") for align in (False, True)),
    f("grid_sample", "one_pixel_reflection_align", randn(1, 2, 1, 4), uniform(1, 2, 3, 2, low=-2, high=2),
      padding_mode="reflection", align_corners=True),
    # ---- affine_grid ----
    f("affine_grid", "2d", randn(2, 2, 3), (2, 3, 4, 5), align_corners=False),
    f("affine_grid", "2d_align", randn(2, 2, 3), (2, 1, 3, 2), align_corners=True),
    f("affine_grid", "3d", randn(2, 3, 4), (2, 1, 2, 3, 4), align_corners=False),
    f("affine_grid", "3d_align", randn(1, 3, 4), (1, 2, 3, 2, 4), align_corners=True),
]


@pytest.mark.parametrize("name, args, kwargs, rtol, atol", FUNCTIONAL_CASES)
def test_functional_matches_torch(name, args, kwargs, rtol, atol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # upsample's deprecation
        compare_functional(name, args, kwargs, rtol, atol)


FLOAT64_IDS = ("interpolate-nearest_2d_scale_0.3", "interpolate-bicubic_antialias_down", "interpolate-bicubic_scale",
               "interpolate-trilinear_scale", "interpolate-area_2d_uneven", "interpolate-linear_scale_2.5",
               "grid_sample-bicubic_reflection_alignFalse", "grid_sample-5d_bilinear_reflection_alignTrue",
               "affine_grid-3d", "fold-overlapping")
FLOAT64_CASES = [c for c in FUNCTIONAL_CASES if c.id in FLOAT64_IDS]


@pytest.mark.parametrize("name, args, kwargs, rtol, atol", FLOAT64_CASES)
def test_functional_matches_torch_in_float64(name, args, kwargs, rtol, atol):
    args = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
    compare_functional(name, args, kwargs, 1e-10, 1e-12)


def test_float64_cases_exist():
    assert len(FLOAT64_CASES) == len(FLOAT64_IDS)


# ---------------------------------------------------------------------------------------------
# 16-bit floats and uint8

def run_both(fn, array, dtype, *more):
    want = fn(torch, torch.from_numpy(array).to(getattr(torch, dtype)), *[torch.from_numpy(m).to(getattr(torch, dtype))
                                                                       for m in more])
    got = fn(tensorplay, tp_tensor(array).to(getattr(tensorplay, dtype)), *[tp_tensor(m).to(getattr(tensorplay, dtype))
                                                                           for m in more])
    return got, want


REDUCED_CASES = {
    "pad_reflect": lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"),
    "pad_circular": lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1), mode="circular"),
    "nearest_exact": lambda m, x: m.nn.functional.interpolate(x, scale_factor=1.5, mode="nearest-exact"),
    "bilinear": lambda m, x: m.nn.functional.interpolate(x, size=(7, 9), mode="bilinear"),
    "bicubic": lambda m, x: m.nn.functional.interpolate(x, size=(7, 9), mode="bicubic", align_corners=True),
    "area": lambda m, x: m.nn.functional.interpolate(x, size=(3, 4), mode="area"),
    "unfold": lambda m, x: m.nn.functional.unfold(x, 2, padding=1),
    "pixel_shuffle": lambda m, x: m.nn.functional.pixel_shuffle(x, 1),
    "grid_sample": lambda m, x: m.nn.functional.grid_sample(
        x, m.from_numpy(GRID4[:, :, :, :].copy()).to(x.dtype), align_corners=False),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(REDUCED_CASES))
def test_16_bit_floats_keep_their_dtype_and_values(name, dtype):
    got, want = run_both(REDUCED_CASES[name], X4, dtype)
    assert_same(got, want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_uint8_images_resample_exactly_in_the_nearest_modes(mode):
    image = np.random.default_rng(0).integers(0, 256, (1, 3, 5, 7)).astype(np.uint8)
    want = torch.nn.functional.interpolate(torch.from_numpy(image), size=(8, 4), mode=mode)
    got = tensorplay.nn.functional.interpolate(tp_tensor(image), size=(8, 4), mode=mode)
    assert_same(got, want)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("channels", [3, 6])  # PyTorch's uint8 kernel for up to 4 channels, and its other one
@pytest.mark.parametrize("kwargs", [{"size": (9, 4)}, {"scale_factor": (0.45, 1.7), "align_corners": True},
                                    {"size": (3, 11), "antialias": True}, {"size": (2, 13), "align_corners": True},
                                    {"scale_factor": (2.6, 0.4), "antialias": True}],
                         ids=["size", "scale_align", "antialias", "size_align", "scale_antialias"])
def test_uint8_images_resample_in_fixed_point_like_torch(mode, channels, kwargs):
    """Exactly, saturated extremes included (bicubic overshoots past 0 and 255)."""
    rng = np.random.default_rng(1)
    image = np.where(rng.random((2, channels, 7, 6)) < 0.3, rng.choice([0, 255], (2, channels, 7, 6)),
                     rng.integers(0, 256, (2, channels, 7, 6))).astype(np.uint8)
    want = torch.nn.functional.interpolate(torch.from_numpy(image), mode=mode, **kwargs)
    got = tensorplay.nn.functional.interpolate(tp_tensor(image), mode=mode, **kwargs)
    assert_same(got, want)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_skips_nonfinite_inputs_outside_the_grid_points(mode):
    """A tap outside the input reads nothing under padding_mode="zeros": a NaN or infinity at the index
    it would clamp to stays out of the result and the gradients."""
    x = randn(1, 2, 3, 4)
    x[0, 0, 0, 0], x[0, 1, 0, 0] = np.nan, np.inf
    grid = np.array([[[[2.7, 0.3], [-2.9, -2.5]], [[0.1, -3.0], [0.2, 0.4]]]], np.float32)
    compare_functional("grid_sample", [x, grid], {"mode": mode, "align_corners": False}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["constant", "circular", "reflect", "replicate"])
def test_pad_of_integer_and_bool_tensors_like_torch(mode):
    x = np.random.default_rng(0).integers(-5, 5, (2, 3, 4))
    for dtype in ("int64", "bool"):
        same_outcome(lambda m: m.nn.functional.pad(m.from_numpy(x.copy()).to(getattr(m, dtype)), (1, 2), mode=mode
                                                   ).tolist())


# ---------------------------------------------------------------------------------------------
# Errors: the same exception class as torch

def t(m, *shape):
    return m.ones(*shape)


ERRORS = {
    "pad_unknown_mode": lambda m: m.nn.functional.pad(t(m, 2, 3, 4), (1, 1), mode="wrap"),
    "pad_odd_length": lambda m: m.nn.functional.pad(t(m, 2, 3, 4), (1, 1, 1), mode="reflect"),
    "pad_too_long": lambda m: m.nn.functional.pad(t(m, 2, 3), (1, 1, 1, 1, 1, 1), mode="replicate"),
    "pad_value_with_reflect": lambda m: m.nn.functional.pad(t(m, 2, 3, 4), (1, 1), mode="reflect", value=1.0),
    "pad_reflect_too_wide": lambda m: m.nn.functional.pad(t(m, 2, 3, 4), (4, 0), mode="reflect"),
    "pad_reflect_1d_input": lambda m: m.nn.functional.pad(t(m, 4), (1, 1), mode="reflect"),
    "pad_reflect_5d_by_2_dims": lambda m: m.nn.functional.pad(t(m, 1, 2, 3, 4, 5), (1, 1, 1, 1), mode="reflect"),
    "pad_replicate_empty": lambda m: m.nn.functional.pad(t(m, 2, 0, 4), (1, 1), mode="replicate"),
    "pad_reflect_bool": lambda m: m.nn.functional.pad(t(m, 2, 3, 4).bool(), (1, 1), mode="reflect"),
    "pad_circular_wraps_twice": lambda m: m.nn.functional.pad(t(m, 2, 3, 4), (5, 0), mode="circular"),
    "interpolate_both_size_and_scale": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4), 2, 2.0),
    "interpolate_neither": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4)),
    "interpolate_align_with_nearest": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4), 2, align_corners=True),
    "interpolate_size_length": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4, 4), size=(2, 2, 2)),
    "interpolate_scale_length": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4, 4), scale_factor=(2.0,)),
    "interpolate_float_size": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4, 4), size=(2.0, 3)),
    "interpolate_recompute_with_size": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4), 2,
                                                                            recompute_scale_factor=True),
    "interpolate_2d_input": lambda m: m.nn.functional.interpolate(t(m, 3, 4), size=2),
    "interpolate_bilinear_3d_input": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4), size=2, mode="bilinear"),
    "interpolate_linear_4d_input": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4), size=2, mode="linear"),
    "interpolate_unknown_mode": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4), size=2, mode="cubic"),
    "interpolate_antialias_lanczos_align": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4), size=2,
                                                                                mode="lanczos", antialias=True,
                                                                                align_corners=True),
    "interpolate_antialias_bfloat16": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4).bfloat16(), size=2,
                                                                           mode="bilinear", antialias=True),
    "interpolate_antialias_nearest": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4), size=2, antialias=True),
    "interpolate_zero_output": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4), scale_factor=0.1),
    "interpolate_empty_input": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 0, 4), size=(2, 2)),
    "interpolate_no_channels": lambda m: m.nn.functional.interpolate(t(m, 1, 0, 4, 4), size=(2, 2)),
    "interpolate_int64": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4, 4).long(), size=(2, 2)),
    "interpolate_area_uint8": lambda m: m.nn.functional.interpolate(t(m, 1, 2, 4).to(m.uint8), size=2, mode="area"),
    "unfold_2d_input": lambda m: m.nn.functional.unfold(t(m, 4, 4), 2),
    "unfold_kernel_too_big": lambda m: m.nn.functional.unfold(t(m, 1, 2, 4, 4), 5),
    "unfold_zero_stride": lambda m: m.nn.functional.unfold(t(m, 1, 2, 4, 4), 2, stride=0),
    "fold_channels_not_divisible": lambda m: m.nn.functional.fold(t(m, 1, 5, 9), (4, 4), 2),
    "fold_wrong_block_count": lambda m: m.nn.functional.fold(t(m, 1, 4, 8), (4, 4), 2),
    "pixel_shuffle_2d_input": lambda m: m.nn.functional.pixel_shuffle(t(m, 4, 4), 2),
    "pixel_shuffle_channels": lambda m: m.nn.functional.pixel_shuffle(t(m, 1, 6, 2, 2), 2),
    "pixel_unshuffle_height": lambda m: m.nn.functional.pixel_unshuffle(t(m, 1, 1, 3, 4), 2),
    "channel_shuffle_not_divisible": lambda m: m.nn.functional.channel_shuffle(t(m, 1, 5, 2, 2), 2),
    "channel_shuffle_zero_groups": lambda m: m.nn.functional.channel_shuffle(t(m, 1, 4, 2, 2), 0),
    "grid_sample_bad_mode": lambda m: m.nn.functional.grid_sample(t(m, 1, 1, 3, 3), t(m, 1, 2, 2, 2), mode="area",
                                                                  align_corners=False),
    "grid_sample_bad_padding": lambda m: m.nn.functional.grid_sample(t(m, 1, 1, 3, 3), t(m, 1, 2, 2, 2),
                                                                     padding_mode="wrap", align_corners=False),
    "grid_sample_bicubic_5d": lambda m: m.nn.functional.grid_sample(t(m, 1, 1, 3, 3, 3), t(m, 1, 2, 2, 2, 3),
                                                                    mode="bicubic", align_corners=False),
    "grid_sample_batch_mismatch": lambda m: m.nn.functional.grid_sample(t(m, 2, 1, 3, 3), t(m, 1, 2, 2, 2),
                                                                        align_corners=False),
    "grid_sample_last_dim": lambda m: m.nn.functional.grid_sample(t(m, 1, 1, 3, 3), t(m, 1, 2, 2, 3),
                                                                  align_corners=False),
    "grid_sample_dtype_mismatch": lambda m: m.nn.functional.grid_sample(t(m, 1, 1, 3, 3), t(m, 1, 2, 2, 2).double(),
                                                                        align_corners=False),
    "affine_grid_int_theta": lambda m: m.nn.functional.affine_grid(t(m, 1, 2, 3).long(), (1, 1, 2, 2), False),
    "affine_grid_theta_shape": lambda m: m.nn.functional.affine_grid(t(m, 1, 3, 4), (1, 1, 2, 2), False),
    "affine_grid_3d_size": lambda m: m.nn.functional.affine_grid(t(m, 1, 2, 3), (1, 1, 2), False),
    "affine_grid_empty_size": lambda m: m.nn.functional.affine_grid(t(m, 1, 2, 3), (1, 1, 0, 2), False),
    "circular_pad_module_rank": lambda m: m.nn.CircularPad2d(1)(t(m, 2, 3)),
    "pad_fill_overflows_uint8": lambda m: m.nn.functional.pad(t(m, 2, 3).to(m.uint8), (1, 1), value=-6),
    "pad_fill_overflows_float16": lambda m: m.nn.functional.pad(t(m, 2, 3).half(), (1, 1), value=7e4),
    "pad_float_padding": lambda m: m.nn.functional.pad(t(m, 2, 3), (1.0, 1)),
    "pad_mode_not_str": lambda m: m.nn.functional.pad(t(m, 2, 3), (1, 1), mode=3),
    "interpolate_output_overflows": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4), scale_factor=1e30,
                                                                         recompute_scale_factor=True),
    "interpolate_align_corners_not_bool": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4), 3, mode="linear",
                                                                               align_corners=[1]),
    "area_negative_size": lambda m: m.nn.functional.interpolate(t(m, 1, 1, 4, 4), size=(-1, 2), mode="area"),
    "pixel_shuffle_float_factor": lambda m: m.nn.functional.pixel_shuffle(t(m, 1, 4, 2, 2), 2.0),
    "unfold_kernel_none": lambda m: m.nn.functional.unfold(t(m, 1, 4, 2, 2), None),
    "grid_sample_int_input": lambda m: m.nn.functional.grid_sample(t(m, 1, 1, 3, 3).long(), t(m, 1, 2, 2, 2),
                                                                   align_corners=False),
    "grid_sample_0dim_input": lambda m: m.nn.functional.grid_sample(m.tensor(1.0), t(m, 1, 2, 2, 2),
                                                                    align_corners=False),
    "affine_grid_batch_mismatch": lambda m: m.nn.functional.affine_grid(t(m, 1, 2, 3), (2, 1, 2, 2), False),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_like_torch(name):
    same_outcome(ERRORS[name])


def test_empty_results_have_torch_shapes():
    """Adaptive pooling to nothing, and pixel_unshuffle's empty input returned as it is (PyTorch's
    backward of either fails, so only the forward is compared)."""
    same_outcome(lambda m: tuple(m.nn.functional.interpolate(m.ones(2, 3, 5, 6), size=(0, 3), mode="area").shape))
    same_outcome(lambda m: tuple(m.nn.functional.pixel_unshuffle(m.ones(0, 2, 4, 4), 2).shape))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_copies_a_dim_that_keeps_its_size(mode):
    """Forward only: PyTorch's backward resamples that dim with the scale factor its forward skipped."""
    x = randn(1, 2, 6, 9)
    want = torch.nn.functional.interpolate(torch.from_numpy(x), scale_factor=(1.1, 0.4), mode=mode, antialias=True)
    got = tensorplay.nn.functional.interpolate(tp_tensor(x), scale_factor=(1.1, 0.4), mode=mode, antialias=True)
    assert_same(got, want)


def test_deprecated_and_default_align_corners_warnings():
    x = tensorplay.ones(1, 1, 2, 2)
    for call in (lambda: tensorplay.nn.functional.upsample(x, scale_factor=2),
                 lambda: tensorplay.nn.functional.upsample_nearest(x, scale_factor=2),
                 lambda: tensorplay.nn.functional.upsample_bilinear(x, scale_factor=2)):
        with pytest.warns(UserWarning, match="deprecated"):
            call()
    with pytest.warns(UserWarning, match="align_corners=False"):
        tensorplay.nn.functional.grid_sample(x, tensorplay.zeros(1, 1, 1, 2))
    with pytest.warns(UserWarning, match="align_corners=False"):
        tensorplay.nn.functional.affine_grid(tensorplay.zeros(1, 2, 3), (1, 1, 2, 2))


# ---------------------------------------------------------------------------------------------
# Modules

def case(id, make, *args, rtol=1e-4, atol=1e-5):
    return pytest.param(make, list(args), rtol, atol, id=id)


MODULE_CASES = [
    case("ConstantPad1d", lambda nn: nn.ConstantPad1d((1, 2), 3.5), X3),
    case("ConstantPad2d", lambda nn: nn.ConstantPad2d(2, -1.0), X4),
    case("ConstantPad3d", lambda nn: nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 0.5), X5),
    case("ZeroPad1d", lambda nn: nn.ZeroPad1d(2), X3),
    case("ZeroPad2d", lambda nn: nn.ZeroPad2d((1, -1, 2, 0)), X4),
    case("ZeroPad3d", lambda nn: nn.ZeroPad3d(1), X5),
    case("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((3, 2)), X3),
    case("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(2), X4),
    case("ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 2, 0, 2, 1, 1)), X5),
    case("ReplicationPad1d", lambda nn: nn.ReplicationPad1d(3), X3),
    case("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 2, 3, 0)), X4),
    case("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(2), X5),
    case("CircularPad1d", lambda nn: nn.CircularPad1d((2, 4)), X3),
    case("CircularPad2d", lambda nn: nn.CircularPad2d(2), X4[0]),
    case("CircularPad3d", lambda nn: nn.CircularPad3d((1, 0, 2, 1, 0, 3)), X5),
    case("Fold", lambda nn: nn.Fold((5, 6), 2), randn(2, 12, 20)),
    case("Unfold", lambda nn: nn.Unfold((2, 3), dilation=1, padding=1, stride=2), X4),
    case("PixelShuffle", lambda nn: nn.PixelShuffle(2), randn(2, 8, 3, 4)),
    case("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(3), randn(2, 2, 6, 3)),
    case("ChannelShuffle", lambda nn: nn.ChannelShuffle(2), randn(2, 6, 3, 4)),
    case("Upsample-nearest", lambda nn: nn.Upsample(scale_factor=2), X4),
    case("Upsample-trilinear", lambda nn: nn.Upsample(size=(4, 5, 7), mode="trilinear", align_corners=True), X5),
    case("Upsample-bicubic_recompute", lambda nn: nn.Upsample(scale_factor=(1.5, 0.8), mode="bicubic",
                                                              recompute_scale_factor=True), X4),
    case("Upsample-linear", lambda nn: nn.Upsample(scale_factor=1.6, mode="linear"), X3),
    case("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(size=(7, 4)), X4),
    case("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), X4),
]


@pytest.mark.parametrize("make, args, rtol, atol", MODULE_CASES)
def test_module_matches_torch(make, args, rtol, atol):
    torch_module, tp_module = compare_module(make, args, rtol=rtol, atol=atol)
    assert repr(tp_module) == repr(torch_module)
    for name in ("padding", "value", "output_size", "kernel_size", "dilation", "stride", "upscale_factor",
                 "downscale_factor", "groups", "size", "scale_factor", "mode", "align_corners",
                 "recompute_scale_factor", "name"):
        assert getattr(tp_module, name, None) == getattr(torch_module, name, None), name


# ---------------------------------------------------------------------------------------------
# Autocast: the resampling ops run in their input's dtype, except grid_sample (on autocast's
# float32 list) and affine_grid (a matmul, lowered to the autocast dtype).

AUTOCAST_CASES = {
    "interpolate_linear": lambda m, x: m.nn.functional.interpolate(x[0], scale_factor=2, mode="linear"),
    "interpolate_bicubic": lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bicubic"),
    "interpolate_area": lambda m, x: m.nn.functional.interpolate(x, size=(2, 3), mode="area"),
    "interpolate_nearest": lambda m, x: m.nn.functional.interpolate(x, size=(2, 3)),
    "pad_circular": lambda m, x: m.nn.functional.pad(x, (1, 1, 2, 0), mode="circular"),
    "pad_reflect": lambda m, x: m.nn.functional.pad(x, (1, 1, 2, 0), mode="reflect"),
    "pad_reflect_3d": lambda m, x: m.nn.functional.pad(x, (1, 1, 2, 0, 1, 2), mode="reflect"),  # not autocast
    "pad_replicate_3d": lambda m, x: m.nn.functional.pad(x, (1, 1, 2, 0, 1, 2), mode="replicate"),
    "pad_circular_3d": lambda m, x: m.nn.functional.pad(x, (1, 1, 2, 0, 1, 2), mode="circular"),
    "unfold": lambda m, x: m.nn.functional.unfold(x, 2),
    "grid_sample": lambda m, x: m.nn.functional.grid_sample(x, m.zeros(2, 2, 2, 2, dtype=x.dtype),
                                                            align_corners=True),
    "grid_sample_float32_grid": lambda m, x: m.nn.functional.grid_sample(x, m.zeros(2, 2, 2, 2), align_corners=True),
    "affine_grid": lambda m, x: m.nn.functional.affine_grid(m.ones(2, 2, 3, dtype=x.dtype), (2, 1, 3, 2),
                                                            align_corners=True),
}


@pytest.mark.parametrize("region", ["bfloat16", "float16"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("name", list(AUTOCAST_CASES))
def test_dtypes_under_autocast_like_torch(name, dtype, region):
    """The 16-bit dtype that is not the region's included: the pieces of an op that PyTorch does not
    autocast (cat, stack) must not promote it either."""
    with torch.autocast("cpu", dtype=getattr(torch, region)):
        want = AUTOCAST_CASES[name](torch, torch.from_numpy(X4).to(getattr(torch, dtype)))
    with tensorplay.autocast("cpu", dtype=getattr(tensorplay, region)):
        got = AUTOCAST_CASES[name](tensorplay, tp_tensor(X4).to(getattr(tensorplay, dtype)))
    assert_same(got, want, rtol=2e-2, atol=2e-2)


def test_native_channel_shuffle_is_channel_shuffle():
    x = np.random.default_rng(0).standard_normal((2, 6, 3)).astype(np.float32)
    got = tensorplay.nn.functional.native_channel_shuffle(tensorplay.from_numpy(x.copy()), 3)
    want = torch.nn.functional.native_channel_shuffle(torch.from_numpy(x.copy()), 3)
    np.testing.assert_array_equal(got.numpy(), want.numpy())

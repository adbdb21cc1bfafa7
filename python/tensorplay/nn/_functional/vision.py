"""Padding and resampling."""

import math

from tensorplay._C import _nn
from tensorplay.nn._functional._utils import _pair

__all__ = ["pad", "interpolate"]


def pad(input, pad, mode="constant", value=None):
    return _nn.pad(input, list(pad), mode, 0.0 if value is None else float(value))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    if input.dim() != 4:
        raise NotImplementedError(f"interpolate: only 4-D inputs are supported, got {input.dim()}-D")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if mode not in ("nearest", "bilinear"):
        raise NotImplementedError(f"interpolate: mode '{mode}' is not supported (nearest, bilinear)")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    scales = None
    if size is None:
        scales = tuple(float(s) for s in _pair(scale_factor)) if not isinstance(scale_factor, float) else (
            scale_factor, scale_factor)
        size = [int(math.floor(input.shape[2 + i] * scales[i])) for i in range(2)]
        if recompute_scale_factor:
            scales = None
    return _nn.interpolate(input, list(_pair(size)), scales, mode, bool(align_corners))

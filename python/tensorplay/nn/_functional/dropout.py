"""Dropout."""

import warnings

from tensorplay import _C
from tensorplay._C import _nn

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

# SELU's negative saturation value, -scale * alpha: alpha dropout sets dropped elements to it.
_SELU_SATURATION = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    out = _nn.dropout(input, p, training)
    return input.copy_(out) if inplace and out is not input else out


def _dropout_impl(input, p, training, inplace, feature, alpha):
    """PyTorch's dropout family: a Bernoulli(1 - p) keep-mask, one draw per (sample, channel) for the
    feature forms; plain forms scale what is kept by 1/(1-p), alpha forms keep SELU's mean and
    variance by sending dropped elements to its saturation value and rescaling affinely."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = input.new_zeros(())
        return input.mul_(zero) if inplace else input.mul(zero)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (input.shape[0], input.shape[1]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    noise = (_C.rand(*shape, device=input.device) < 1 - p).to(input.dtype)
    if not alpha:
        noise = noise / (1 - p)
        return input.mul_(noise) if inplace else input.mul(noise)
    a = 1.0 / ((_SELU_SATURATION ** 2 * p + 1) * (1 - p)) ** 0.5
    shift = (noise - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p
    noise = noise * a
    return input.mul_(noise).add_(shift) if inplace else input.mul(noise).add(shift)


def _channel_dropout(input, p, training, inplace, batched):
    """Feature dropout of input, given a batch dim first where it lacks one."""
    if batched:
        return _dropout_impl(input, p, training, inplace, True, False)
    out = _dropout_impl(input.unsqueeze(0), p, training, inplace, True, False)
    # In place, the mask was applied through a view of input: input itself is the result.
    return input if inplace else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    # Like PyTorch, a 3-D input is read as (N, C, L), not as an unbatched (C, H, W).
    if dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, dim == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)

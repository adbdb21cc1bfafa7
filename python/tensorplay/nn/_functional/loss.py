"""Losses."""

import math

import tensorplay
from tensorplay.amp.composite_casts import float32_inputs
from tensorplay._C import _nn
from tensorplay.nn._functional._checks import _aten_name, _bool_arg, _tensor_arg
from tensorplay.nn._functional._checks import _named as _checks_named
from tensorplay.nn._functional._utils import _reduction
from tensorplay.nn._functional.distance import pairwise_distance
from tensorplay.nn._functional.linear import linear

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
    "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "linear_cross_entropy",
]


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _named(name):
    """Errors raised inside the loss name it; its NotImplementedErrors are the kernels' own, as torch's."""
    return _checks_named(name, kinds=(RuntimeError, ValueError, TypeError, IndexError))


def _float_arg(op, name, position, value):
    """A double argument as PyTorch's binding reads it: a number, or a tensor of one element."""
    if isinstance(value, tensorplay.Tensor) and value.dim() == 0 and not value.is_complex():
        return value.item()
    if isinstance(value, (bool, int, float)):
        return float(value)
    raise TypeError(f"{op}(): argument '{name}' (position {position}) must be float, not {type(value).__name__}")


def _scalar_arg(op, name, position, value):
    """A Scalar argument as PyTorch's binding reads it: a number, or a tensor of one element."""
    if isinstance(value, tensorplay.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, (bool, int, float, complex)):
        return value
    raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Number, not {type(value).__name__}")


def _filled_like(t, value):
    """ATen's empty_like(t).fill_(value): value in t's dtype."""
    return tensorplay.empty_like(t).fill_(value)


def _reduce(loss, reduction):
    """The elementwise loss reduced as reduction says (already checked by _check_reduction)."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_float_binary_kernel(kernel, input, target):
    """A kernel of PyTorch's that computes in the promoted dtype of floats only and writes input's dtype."""
    common = tensorplay.result_type(input, target)
    if not common.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_aten_name(common)}\'')
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type {_aten_name(common)} can't be cast to the desired output type "
                           f"{_aten_name(input.dtype)}")


def _weighted(loss, weight, reduction, mean_over_weight):
    """PyTorch's weighted l1/mse/huber: l1 and mse average over the sum of the weights, huber over the
    elements."""
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_over_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _values_readable(t):
    """Checks of values (an index out of range) are skipped on meta, as in PyTorch."""
    return t.device.type != "meta"


def _check_not_differentiable(op, argument, t):
    """PyTorch's kernel for op has no derivative for this argument: one that requires grad is an error."""
    if t is not None and t.requires_grad and tensorplay.is_grad_enabled():
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{argument}'. "
                           f"This input cannot have requires_grad True.")


_REDUCED_FLOATS = (tensorplay.bfloat16, tensorplay.float16)


def _check_float_kernel(kernel, t):
    """PyTorch's CPU kernel of some losses is for 32- and 64-bit floats only."""
    if t.dtype in _REDUCED_FLOATS or not t.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_aten_name(t.dtype)}\'')


def _log_sigmoid(x):
    # PyTorch's stable form: no exp of a large positive number.
    return tensorplay.minimum(x, tensorplay.zeros_like(x)) - tensorplay.log1p(tensorplay.exp(-x.abs()))


@_named("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        input, target = _weight_checks("mse_loss", input, target, weight)
        return _weighted((input - target).pow(2), weight, reduction, mean_over_weight=True)
    return _nn.mse_loss(input, target, reduction)


@_named("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        input, target = _weight_checks("l1_loss", input, target, weight)
        return _weighted((input - target).abs(), weight, reduction, mean_over_weight=True)
    return _nn.l1_loss(input, target, reduction)


def _weight_checks(op, input, target, weight):
    """PyTorch's order: the pair broadcast, then the weight's size."""
    _tensor_arg(op, "input", 1, input)
    _tensor_arg(op, "target", 2, target)
    shape = tuple(input.shape)
    input, target = tensorplay.broadcast_tensors(input, target)
    _tensor_arg(op, "weight", 6, weight, optional=True)
    if tuple(weight.shape) != shape:
        raise ValueError(f"[{op}] Weights and input must have the same size.")
    return input, target


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _nn.smooth_l1_loss(input, target, _reduction(size_average, reduce, reduction), beta)


@_named("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if weight is not None:
        input, target = _weight_checks("huber_loss", input, target, weight)
        _check_float_binary_kernel("huber_cpu", input, target)
        return _weighted(_huber(input, target, "none", delta), weight, reduction, mean_over_weight=False)
    if isinstance(input, tensorplay.Tensor) and isinstance(target, tensorplay.Tensor):
        tensorplay.broadcast_shapes(tuple(input.shape), tuple(target.shape))  # PyTorch broadcasts first
        _check_float_binary_kernel("huber_cpu", input, target)
        return _huber(input, target, reduction, delta)
    return _nn.huber_loss(input, target, reduction, delta)


def _huber(input, target, reduction, delta):
    """ATen's huber kernel computes in the promoted dtype and writes input's."""
    loss = _nn.huber_loss(input, target, reduction, delta)
    device = input.device.type
    if loss.dtype == input.dtype or (tensorplay.is_autocast_available(device)
                                     and tensorplay.is_autocast_enabled(device)):
        return loss  # under autocast it is computed in float32, as PyTorch does
    return loss.to(input.dtype)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nn.nll_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    if (isinstance(input, tensorplay.Tensor) and isinstance(target, tensorplay.Tensor)
            and tuple(input.shape) == tuple(target.shape) and not target.dtype.is_floating_point):
        raise RuntimeError(f"[cross_entropy] Expected floating point type for target with class probabilities, "
                           f"got {_aten_name(target.dtype)}")
    return _nn.cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index,
                             label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    return _nn.binary_cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                _reduction(size_average, reduce, reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    return _nn.kl_div(input, target, _reduction(size_average, reduce, reduction), log_target)


@_named("linear_cross_entropy")
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target). PyTorch's options choose a
    chunked evaluation that saves memory and gives the same values; here the logits are always whole."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), "
                           f"got {in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    # K-dimensional classes: one linear map onto all C * d_1 * ... * d_K logits, then reshaped.
    logits = linear(input, linear_weight.reshape(-1, in_features),
                    None if linear_bias is None else linear_bias.reshape(-1)).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


# ---------------------------------------------------------------------------------------------
# Margin and embedding losses, written as PyTorch's ATen kernels compute them.

@_named("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    for position, (name, t) in enumerate((("input1", input1), ("input2", input2), ("target", target)), 1):
        _tensor_arg("margin_ranking_loss", name, position, t)
    margin = _float_arg("margin_ranking_loss", "margin", 4, margin)
    input1, input2, target = float32_inputs(input1, input2, target)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


@_named("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    _tensor_arg("hinge_embedding_loss", "input", 1, input)
    _tensor_arg("hinge_embedding_loss", "target", 2, target)
    margin = _float_arg("hinge_embedding_loss", "margin", 3, margin)
    input, target = float32_inputs(input, target)
    zeros = tensorplay.zeros_like(input)
    # ATen's margin - input: the margin filled into input's dtype, then input subtracted.
    margin_term = tensorplay.where(target != 1, _filled_like(input, margin).sub(input).clamp(min=0), zeros)
    self_term = tensorplay.where(target != -1, input, zeros)
    return _reduce(margin_term + self_term, reduction)


@_named("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    _tensor_arg("soft_margin_loss", "input", 1, input)
    _tensor_arg("soft_margin_loss", "target", 2, target)
    _check_not_differentiable("soft_margin_loss", "target", target)
    input, target = float32_inputs(input, target)
    # ATen writes -input into a tensor of input's dtype and shape, then multiplies target into it in place.
    negated = -input
    shape = tuple(tensorplay.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {_sizes(input)} doesn't match the broadcast shape {_sizes(shape)}")
    if not input.dtype.is_floating_point:
        common = tensorplay.result_type(input, target)
        produced = common if common.is_floating_point else tensorplay.float32  # mul_, else exp_
        raise RuntimeError(f"result type {_aten_name(produced)} can't be cast to the desired output type "
                           f"{_aten_name(input.dtype)}")
    product = negated * target
    if product.dtype != input.dtype:
        product = product.to(input.dtype)
    return _reduce(tensorplay.log1p(tensorplay.exp(product)), reduction)


@_named("multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if not isinstance(input, tensorplay.Tensor):
        raise TypeError(f"log_sigmoid(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{_aten_name(input.dtype)}\'')
    loss = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


@_named("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    _tensor_arg("cosine_embedding_loss", "input1", 1, input1)
    _tensor_arg("cosine_embedding_loss", "input2", 2, input2)
    _tensor_arg("cosine_embedding_loss", "target", 3, target)
    margin = _float_arg("cosine_embedding_loss", "margin", 4, margin)
    target_dim = target.dim()
    if target_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target_dim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{_sizes(input1)} and {_sizes(input2)}.")
    if target_dim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{_sizes(input1)} and {_sizes(input2)}.")
    input1, input2, target = float32_inputs(input1, input2, target)
    eps = 1e-12  # keeps a zero vector's cosine finite
    dot = (input1 * input2).sum(target_dim)
    norms = (((input1 * input1).sum(target_dim) + eps) * ((input2 * input2).sum(target_dim) + eps)).sqrt()
    cos = dot / norms
    zeros = tensorplay.zeros_like(cos)
    loss = (tensorplay.where(target == 1, 1 - cos, zeros)
            + tensorplay.where(target == -1, (cos - margin).clamp(min=0), zeros))
    return _reduce(loss, reduction)


def _sizes(t):
    """A shape as ATen prints it: [2, 3]."""
    return "[" + ", ".join(str(s) for s in (t.shape if isinstance(t, tensorplay.Tensor) else t)) + "]"


@_named("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _tensor_arg("multi_margin_loss", "input", 1, input)
    _tensor_arg("multi_margin_loss", "target", 2, target)
    margin = _scalar_arg("multi_margin_loss", "margin", 4, margin)
    _tensor_arg("multi_margin_loss", "weight", 5, weight, optional=True)
    ndim = input.dim()
    if not ((ndim == 2 and input.size(1) != 0) or (ndim == 1 and input.size(0) != 0) or ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_sizes(input)}")
    frames = 1 if ndim <= 1 else input.size(0)
    classes = 1 if ndim == 0 else input.size(-1)
    if target.dim() > 1 or target.numel() != frames:
        raise RuntimeError(f"inconsistent target size, expected {frames} but got {_sizes(target)}")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {_sizes(weight)}")
    _check_not_differentiable("multi_margin_loss", "weight", weight)
    input, weight = float32_inputs(input, weight)
    _check_float_kernel("multi_margin_loss_cpu_kernel", input)
    if _values_readable(target) and target.numel() and ((target < 0) | (target >= classes)).any().item():
        raise RuntimeError("target out of range")
    x = input.reshape(frames, classes)
    y = target.reshape(frames, 1)
    z = (margin - x.gather(1, y) + x).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, y.reshape(-1)).unsqueeze(1)
    is_target = tensorplay.arange(classes, device=input.device).unsqueeze(0) == y
    loss = tensorplay.where(is_target, tensorplay.zeros_like(z), z).sum(1) / classes
    if reduction == "none":
        return loss if target.dim() > 0 else loss.reshape(())
    return _reduce(loss, reduction)


@_named("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    _tensor_arg("multilabel_margin_loss", "input", 1, input)
    _tensor_arg("multilabel_margin_loss", "target", 2, target)
    ndim = input.dim()
    if not ((ndim == 2 and input.size(1) != 0) or (ndim == 1 and input.size(0) != 0) or ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_sizes(input)}")
    if ndim <= 1:
        frames, classes = 1, (1 if ndim == 0 else input.size(0))
        consistent = target.dim() <= 1 and target.numel() == classes
    else:
        frames, classes = input.size(0), input.size(1)
        consistent = target.dim() == 2 and tuple(target.shape) == (frames, classes)
    if not consistent:
        raise RuntimeError(f"inconsistent target size: {_sizes(target)} for input of size: {_sizes(input)}")
    input, = float32_inputs(input)
    _check_float_kernel("multilabel_margin_loss_forward_out_frame", input)
    x = input.reshape(frames, classes)
    # The targets of a row are its labels up to the first negative one.
    listed = tensorplay.cumprod((target.reshape(frames, classes) >= 0).long(), 1).bool()
    labels = target.reshape(frames, classes).masked_fill(~listed, 0)
    is_target = tensorplay.zeros_like(x).scatter_add(1, labels, listed.to(x.dtype)) > 0
    # Every (listed target j, non-target d) pair: max(0, 1 - (x[j] - x[d])).
    z = (1 - x.gather(1, labels).unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)
    pairs = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = tensorplay.where(pairs, z, tensorplay.zeros_like(z)).sum((1, 2)) / classes
    if reduction == "none":
        return loss if ndim == 2 else loss.reshape(())
    return _reduce(loss, reduction)


@_named("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    for position, (name, t) in enumerate((("anchor", anchor), ("positive", positive), ("negative", negative)), 1):
        _tensor_arg("triplet_margin_loss", name, position, t)
    margin = _float_arg("triplet_margin_loss", "margin", 4, margin)
    p = _float_arg("triplet_margin_loss", "p", 5, p)
    eps = _float_arg("triplet_margin_loss", "eps", 6, eps)
    swap = _bool_arg("triplet_margin_loss", "swap", 7, swap)
    _check_triplet_dims(anchor, positive, negative)
    anchor, positive, negative = float32_inputs(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = tensorplay.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dist_pos - dist_neg).clamp(min=0), reduction)


@_named("triplet_margin_with_distance_loss")
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = tensorplay.minimum(dist_neg, distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp(min=0), reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


# ---------------------------------------------------------------------------------------------
# Likelihoods.

@_named("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    _tensor_arg("poisson_nll_loss", "input", 1, input)
    _tensor_arg("poisson_nll_loss", "target", 2, target)
    log_input = _bool_arg("poisson_nll_loss", "log_input", 3, log_input)
    full = _bool_arg("poisson_nll_loss", "full", 4, full)
    eps = _float_arg("poisson_nll_loss", "eps", 5, eps)
    input, target = float32_inputs(input, target)
    if log_input:
        loss = tensorplay.exp(input) - target * input
    else:
        loss = input - target * tensorplay.log(input + eps)
    if full:
        # Stirling's approximation of log(target!), which PyTorch adds for targets above 1 only.
        stirling = target * tensorplay.log(target) - target + 0.5 * tensorplay.log(2 * math.pi * target)
        # ATen adds it in place: the sum is cast to the loss's dtype.
        total = loss + stirling.masked_fill(target <= 1, 0)
        if total.dtype != loss.dtype:
            if total.dtype.is_floating_point and not loss.dtype.is_floating_point:
                raise RuntimeError(f"result type {_aten_name(total.dtype)} can't be cast to the desired output "
                                   f"type {_aten_name(loss.dtype)}")
            total = total.to(loss.dtype)
        loss = total
    return _reduce(loss, reduction)


@_named("gaussian_nll_loss")
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * tensorplay.ones_like(input)
    elif _values_readable(var) and (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):  # one variance per row of a batch
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
            pass  # heteroscedastic: var broadcasts along its one size-1 dim
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # Clamped for stability without the clamp showing in the gradient, as PyTorch does.
    var = var.clone()
    with tensorplay.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (tensorplay.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------
# Connectionist temporal classification.

def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The alpha (forward) recursion of Graves et al. in log space, one batched step per time step, so
    that autograd derives the gradient. Paths that cannot happen carry a very negative finite log
    probability rather than -inf: a logsumexp over -inf alone has a NaN gradient."""
    _check_reduction(reduction)
    log_probs, = float32_inputs(log_probs)
    _check_float_kernel("ctc_loss_cpu", log_probs)
    device = log_probs.device
    input_lengths = _as_lengths(input_lengths, device)
    target_lengths = _as_lengths(target_lengths, device)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
        input_lengths, target_lengths = input_lengths.reshape(1), target_lengths.reshape(1)
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.numel() != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.numel() != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    longest_input = int(input_lengths.max().item()) if batch else 0
    if longest_input > steps:
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {longest_input} "
                           f"(while checking arguments for ctc_loss_allocate_outputs)")
    labels = _padded_targets(targets, target_lengths, batch)

    # The extended label sequence: blank, l1, blank, l2, ..., blank.
    positions = 2 * labels.size(1) + 1
    extended = tensorplay.full((batch, positions), blank, dtype=tensorplay.int64, device=device)
    if labels.size(1):
        extended[:, 1::2] = labels
    # A step may skip the blank between two labels that differ (PyTorch looks at the labels alone: a
    # label equal to blank may be skipped to as well).
    skip = tensorplay.zeros((batch, positions), dtype=tensorplay.bool, device=device)
    if labels.size(1) > 1:
        skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    emissions = log_probs.gather(2, extended.unsqueeze(0).expand(steps, batch, positions))

    impossible = tensorplay.finfo(log_probs.dtype).min / 2
    floor = tensorplay.full((batch, 1), impossible, dtype=log_probs.dtype, device=device)
    # Before the first step all the mass sits on a virtual state left of position 0, which steps into
    # position 0 or 1 as position 0 steps into 1 or 2.
    alpha = tensorplay.cat([tensorplay.zeros_like(floor), floor.expand(batch, positions - 1)], 1)
    skip_floor = floor.expand(batch, positions)
    running = input_lengths.unsqueeze(1)
    for t in range(longest_input):
        stay = alpha
        advance = tensorplay.cat([floor, alpha[:, :-1]], 1)
        jump = tensorplay.cat([floor, floor, alpha[:, :-2]], 1)[:, :positions]
        jump = tensorplay.where(skip, jump, skip_floor)
        stepped = emissions[t] + tensorplay.stack([stay, advance, jump]).logsumexp(0)
        alpha = tensorplay.where(running > t, stepped, alpha)

    # A path ends on the blank after the last label or on the last label.
    last = (2 * target_lengths).unsqueeze(1)
    after_last = tensorplay.where(last > 0, alpha.gather(1, (last - 1).clamp(min=0)), floor)
    ends = tensorplay.cat([alpha.gather(1, last), after_last], 1)
    loss = -ends.logsumexp(1)
    unreachable = loss > -impossible / 2
    loss = tensorplay.where(unreachable, tensorplay.zeros_like(loss) if zero_infinity
                            else tensorplay.full_like(loss, math.inf), loss)
    if reduction == "mean":
        return (loss / target_lengths.clamp(min=1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss


def _as_lengths(lengths, device):
    if isinstance(lengths, tensorplay.Tensor):
        return lengths.to(tensorplay.int64)
    return tensorplay.tensor(lengths, dtype=tensorplay.int64, device=device)


def _padded_targets(targets, target_lengths, batch):
    """The targets as a (batch, longest target) matrix of labels, from either PyTorch layout: padded
    rows, or all targets concatenated in one 1-D tensor."""
    longest = int(target_lengths.max().item()) if batch else 0
    if targets.dim() == 2:
        if targets.size(1) < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.size(1)} for argument #2 'targets' (while checking arguments for "
                               f"ctc_loss_allocate_outputs)")
        return targets[:, :longest].to(tensorplay.int64)
    starts = tensorplay.cumsum(target_lengths, 0) - target_lengths
    index = starts.unsqueeze(1) + tensorplay.arange(longest, device=targets.device).unsqueeze(0)
    # Positions past a target's length read a neighbour's labels: the recursion never reaches them.
    index = index.clamp(max=max(targets.numel() - 1, 0))
    return targets.to(tensorplay.int64).reshape(-1)[index.reshape(-1)].reshape(batch, longest)

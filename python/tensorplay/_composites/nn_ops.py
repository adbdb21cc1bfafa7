"""The neural-network ops of the torch namespace, and the in-place and alias forms of existing ops.

PyTorch exposes many of nn.functional's ops at torch level too, under the signatures of their ATen
schemas: arguments in another order (torch.batch_norm takes weight first, torch.embedding the weight
before the indices), reductions as an int enum (0 none, 1 mean, 2 sum), modes as ints
(torch.grid_sampler), and flags that only select a backend (cudnn_enabled). Each is written over
tensorplay.nn.functional, which holds the math. The recurrent ops (torch.lstm, ...) run
nn.RNNBase's layer loop over a flat list of weights.

The in-place forms come in two kinds: torch-level functions for Tensor methods that tensorplay
already has (torch.abs_(x) is x.abs_()), and Tensor methods for ops that tensorplay has only
out of place (x.addmm_(a, b) writes x.addmm(a, b) into x)."""

import functools
import inspect
import numbers

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._composites._forms import inplace, with_out, write_out
from tensorplay.amp.composite_casts import outside_autocast
from tensorplay.linalg import vector_norm
from tensorplay.nn import functional as F
from tensorplay.nn._functional import dropout as _dropout, normalization as _normalization, sparse as _sparse
from tensorplay.nn._functional._checks import _aten_name, _named
from tensorplay.nn.modules.rnn import RNNBase

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout", "alpha_dropout_",
    "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle",
    "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "cosine_embedding_loss", "ctc_loss", "dropout", "dropout_", "embedding",
    "embedding_renorm_", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "group_norm", "gru", "hardshrink", "hinge_embedding_loss",
    "instance_norm", "kl_div", "layer_norm", "lstm", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices",
    "max_pool2d", "max_pool3d", "norm_except_dim", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle",
    "poisson_nll_loss", "prelu", "rms_norm", "rnn_relu", "rnn_tanh", "rrelu", "rrelu_", "selu", "selu_", "threshold",
    "threshold_", "triplet_margin_loss",
]
METHODS = ["hardshrink", "prelu"]


# ---------------------------------------------------------------------------------------------
# Arguments as PyTorch's binding reads them from the op's ATen schema.

def _int_like(value):
    """value as an int argument: a Python int (not a bool) or a one-element integral tensor; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, Tensor) and value.numel() == 1 and not value.is_floating_point() and value.dtype != _C.bool:
        return int(value.item())
    return None


def _argument(op, name, position, kind, value):
    """value checked and converted as an argument of schema type kind ("Tensor", "Tensor?", "Tensor[]", "int",
    "int[]", "int[n]" (which also takes one int), "float", "bool", "Scalar"; "?" allows None)."""
    if kind.endswith("?") and value is None:
        return None
    base = kind.rstrip("?")
    where = f"{op}(): argument '{name}' (position {position}) must be"
    got = type(value).__name__
    if base == "Tensor":
        if not isinstance(value, Tensor):
            raise TypeError(f"{where} {kind}, not {got}")
    elif base == "Tensor[]":
        if not isinstance(value, (list, tuple)) or not all(isinstance(t, Tensor) for t in value):
            raise TypeError(f"{where} tuple of Tensors, not {got}")
    elif base == "int":
        if _int_like(value) is None:
            raise TypeError(f"{where} int, not {got}")
        return _int_like(value)
    elif base.startswith("int["):
        if base != "int[]" and _int_like(value) is not None:
            return _int_like(value)
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{where} tuple of ints, not {got}")
        for i, item in enumerate(value):
            if _int_like(item) is None:
                raise TypeError(f"{where} tuple of ints, but found element of type {type(item).__name__} at pos {i}")
        return [_int_like(item) for item in value]
    elif base == "float":
        if isinstance(value, Tensor) and value.numel() == 1:
            return float(value.item())
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{where} float, not {got}")
        return float(value)
    elif base == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{where} bool, not {got}")
    elif base == "Scalar":
        if isinstance(value, Tensor) and value.numel() == 1:
            return value.item()
        if not isinstance(value, numbers.Number):
            raise TypeError(f"{where} Number, not {got}")
    return value


def _binding(**kinds):
    """The function reads its arguments as PyTorch's binding of its ATen schema does (kinds: parameter
    name -> schema type, see _argument), and the errors of the ops it is built on name it."""
    def decorate(fn):
        op = fn.__name__
        signature = inspect.signature(fn)
        positions = {name: i + 1 for i, name in enumerate(signature.parameters)}
        body = _named(op)(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{op}() {error}") from None
            for name, kind in kinds.items():
                if name in bound.arguments:
                    bound.arguments[name] = _argument(op, name, positions[name], kind, bound.arguments[name])
            return body(*bound.args, **bound.kwargs)
        return wrapper
    return decorate


# The ops whose torch-level signature is nn.functional's.
adaptive_avg_pool1d = F.adaptive_avg_pool1d
bilinear = F.bilinear
channel_shuffle = F.channel_shuffle
conv1d = F.conv1d
conv2d = F.conv2d
conv3d = F.conv3d
conv_tbc = F.conv_tbc
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d
conv_transpose3d = F.conv_transpose3d
pairwise_distance = F.pairwise_distance
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
prelu = F.prelu
rms_norm = F.rms_norm


# ---------------------------------------------------------------------------------------------
# Activations.

@_binding(input="Tensor", alpha="Scalar")
def celu(input, alpha=1.0):
    return F.celu(input, alpha)


@_binding(input="Tensor", alpha="Scalar")
def celu_(input, alpha=1.0):
    return F.celu_(input, alpha)


@_binding(input="Tensor")
def selu(input):
    return F.selu(input)


@_binding(input="Tensor")
def selu_(input):
    return F.selu_(input)


# ATen's rrelu also takes a generator for the training-mode slopes; nn.functional's draws from the
# default generator, so these leave that argument out.
@_binding(input="Tensor", lower="Scalar", upper="Scalar", training="bool")
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return F.rrelu(input, lower, upper, training)


@_binding(input="Tensor", lower="Scalar", upper="Scalar", training="bool")
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return F.rrelu_(input, lower, upper, training)


@with_out
@_binding(input="Tensor", threshold="Scalar", value="Scalar")
def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


@_binding(input="Tensor", threshold="Scalar", value="Scalar")
def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


@_binding(input="Tensor", lambd="Scalar", out="Tensor?")
def hardshrink(input, lambd=0.5, *, out=None):
    # PyTorch's hardshrink writes only into an out of the input's own dtype.
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError(f"hardshrink(): Found dtype {_aten_name(out.dtype)} but expected "
                           f"{_aten_name(input.dtype)}")
    result = F.hardshrink(input, lambd)
    return result if out is None else write_out("hardshrink", out, result)


# ---------------------------------------------------------------------------------------------
# Dropout: torch's forms take `train` positionally and refuse a bad p with a RuntimeError.

_DROPOUT = {"input": "Tensor", "p": "float", "train": "bool"}


def _check_p(p):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


@_binding(**_DROPOUT)
def dropout(input, p, train):
    _check_p(p)
    return F.dropout(input, p, train)


@_binding(**_DROPOUT)
def dropout_(input, p, train):
    _check_p(p)
    return F.dropout(input, p, train, inplace=True)


@_binding(**_DROPOUT)
def alpha_dropout(input, p, train):
    _check_p(p)
    return F.alpha_dropout(input, p, train)


@_binding(**_DROPOUT)
def alpha_dropout_(input, p, train):
    _check_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


@_binding(**_DROPOUT)
def feature_dropout(input, p, train):
    _check_p(p)
    return _dropout._dropout_impl(input, p, train, False, feature=True, alpha=False)


@_binding(**_DROPOUT)
def feature_dropout_(input, p, train):
    _check_p(p)
    return _dropout._dropout_impl(input, p, train, True, feature=True, alpha=False)


@_binding(**_DROPOUT)
def feature_alpha_dropout(input, p, train):
    _check_p(p)
    return F.feature_alpha_dropout(input, p, train)


@_binding(**_DROPOUT)
def feature_alpha_dropout_(input, p, train):
    _check_p(p)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# ---------------------------------------------------------------------------------------------
# Normalization.

_STATISTICS = {"weight": "Tensor?", "bias": "Tensor?", "running_mean": "Tensor?", "running_var": "Tensor?",
               "momentum": "float", "eps": "float"}


@_binding(input="Tensor", training="bool", cudnn_enabled="bool", **_STATISTICS)
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@_binding(input="Tensor", use_input_stats="bool", cudnn_enabled="bool", **_STATISTICS)
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    # nn.functional's computation without its refusal of a single spatial element, which is nn.functional's own.
    return _normalization._instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                                         eps)


@_binding(input="Tensor", normalized_shape="int[]", weight="Tensor?", bias="Tensor?", eps="float",
          cudnn_enable="bool")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


@_binding(input="Tensor", num_groups="int", weight="Tensor?", bias="Tensor?", eps="float", cudnn_enabled="bool")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


@_binding(v="Tensor", pow="int", dim="int")
def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of each slice of v along dim (over all of v for dim=-1), shaped to broadcast
    against v: weight normalization's norm."""
    if dim == -1:
        return vector_norm(v, pow)
    if v.dim() == 0:
        raise IndexError(f"norm_except_dim(): Dimension specified as {dim} but tensor has no dimensions")
    if not -v.dim() <= dim < v.dim():
        raise IndexError(f"norm_except_dim(): Dimension out of range (expected to be in range of "
                         f"[{-v.dim()}, {v.dim() - 1}], but got {dim})")
    dim %= v.dim()
    size = v.shape[dim]
    if size == 0:
        # PyTorch views v as (size, -1), which is ambiguous without elements.
        view = [-1, 0] if dim == v.dim() - 1 else [0, -1]
        raise RuntimeError(f"norm_except_dim(): cannot reshape tensor of 0 elements into shape {view} because the "
                           "unspecified dimension size -1 can be any value and is ambiguous")
    shape = [1] * v.dim()
    shape[dim] = size
    return vector_norm(v.movedim(dim, 0).reshape(size, v.numel() // size), pow, dim=1).reshape(shape)


# ---------------------------------------------------------------------------------------------
# Convolution, padding, pooling and sampling.

@_binding(input="Tensor", weight="Tensor", bias="Tensor?", stride="int[]", padding="int[]", dilation="int[]",
          transposed="bool", output_padding="int[]", groups="int")
@outside_autocast
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """conv{1,2,3}d or conv_transpose{1,2,3}d, by the weight's number of dims."""
    if weight.dim() not in (3, 4, 5):
        raise RuntimeError(f"convolution(): weight should have at least three dimensions, but got weight of size "
                           f"{list(weight.shape)}")
    spatial = weight.dim() - 2
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    conv = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    return conv(input, weight, bias, stride, padding, dilation, groups)


@_binding(input="Tensor", pad="int[]", value="Scalar")
def constant_pad_nd(input, pad, value=0):
    return F.pad(input, pad, "constant", value)


def _pool(spatial):
    """The binding of a max pool's torch-level form; an omitted or empty stride is the kernel size."""
    sized = f"int[{spatial}]"
    return _binding(input="Tensor", kernel_size=sized, stride=sized + "?", padding=sized, dilation=sized,
                    ceil_mode="bool")


@_binding(input="Tensor", kernel_size="int[1]", stride="int[1]?", padding="int[1]", ceil_mode="bool",
          count_include_pad="bool")
def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return F.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


@_pool(1)
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


@_pool(1)
def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


@_pool(2)
def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


@_pool(3)
def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


@_binding(input="Tensor", output_size="int[1]")
def adaptive_max_pool1d(input, output_size):
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


@_binding(theta="Tensor", size="int[]", align_corners="bool")
def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, size, align_corners)


# ATen numbers grid_sampler's modes in these orders.
_INTERPOLATION_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")
_GRID_SAMPLER = {"input": "Tensor", "grid": "Tensor", "interpolation_mode": "int", "padding_mode": "int",
                 "align_corners": "bool"}


@_binding(**_GRID_SAMPLER)
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    # torch does not check the mode numbers (its kernels read past their tables); these are refused.
    if not 0 <= interpolation_mode < len(_INTERPOLATION_MODES):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode to be 0 (bilinear), 1 (nearest) or "
                           f"2 (bicubic), but got: {interpolation_mode}")
    if not 0 <= padding_mode < len(_PADDING_MODES):
        raise RuntimeError(f"grid_sampler(): expected padding_mode to be 0 (zeros), 1 (border) or 2 (reflection), "
                           f"but got: {padding_mode}")
    return F.grid_sample(input, grid, _INTERPOLATION_MODES[interpolation_mode], _PADDING_MODES[padding_mode],
                         align_corners)


def _grid_sampler_nd(spatial):
    def op(input, grid, interpolation_mode, padding_mode, align_corners):
        if input.dim() == 0 or grid.dim() == 0:
            raise IndexError(f"grid_sampler_{spatial}d(): Dimension specified as 0 but tensor has no dimensions")
        if input.dim() != spatial + 2 or grid.dim() != spatial + 2:
            raise RuntimeError(f"grid_sampler(): expected {spatial + 2}D input and grid with same number of "
                               f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
                               f"{list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    op.__name__ = op.__qualname__ = f"grid_sampler_{spatial}d"
    return _binding(**_GRID_SAMPLER)(op)


grid_sampler_2d = _grid_sampler_nd(2)
grid_sampler_3d = _grid_sampler_nd(3)


# ---------------------------------------------------------------------------------------------
# Embeddings.

@_binding(weight="Tensor", indices="Tensor", padding_idx="int", scale_grad_by_freq="bool", sparse="bool")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # ATen reads any negative padding_idx as "no padding row".
    padding_idx = padding_idx if padding_idx >= 0 else None
    return F.embedding(indices, weight, padding_idx, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@_binding(input="Tensor", indices="Tensor", max_norm="float", norm_type="float")
def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescales, in place, each row of the embedding matrix input that indices looks up and whose
    norm exceeds max_norm, to norm max_norm."""
    _sparse._no_grad_embedding_renorm_(input, indices, max_norm, norm_type)
    return input


# ---------------------------------------------------------------------------------------------
# Losses: the reduction is ATen's enum: 0 none, 1 mean, 2 sum; ATen reduces only for mean and sum,
# so any other value is read as none.

def _reduction(reduction):
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def _not_integral(op, *tensors):
    for t in tensors:
        if not t.is_floating_point():
            raise RuntimeError(f"{op}: Integral inputs not supported.")


@_binding(input="Tensor", target="Tensor", weight="Tensor?", pos_weight="Tensor?", reduction="int")
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


@_binding(input1="Tensor", input2="Tensor", target="Tensor", margin="float", reduction="int")
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


@_binding(log_probs="Tensor", targets="Tensor", blank="int", reduction="int", zero_infinity="bool")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False):
    # ATen has two forms: the lengths as int lists or as tensors.
    for name, position, lengths in (("input_lengths", 3, input_lengths), ("target_lengths", 4, target_lengths)):
        if not isinstance(lengths, Tensor):
            _argument("ctc_loss", name, position, "int[]", lengths)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


@_binding(input="Tensor", target="Tensor", margin="float", reduction="int")
def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


@_binding(input="Tensor", target="Tensor", reduction="int", log_target="bool")
def kl_div(input, target, reduction=1, *, log_target=False):
    _not_integral("kl_div", input, target)
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


@_binding(input1="Tensor", input2="Tensor", target="Tensor", margin="float", reduction="int")
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


@_binding(input="Tensor", target="Tensor", log_input="bool", full="bool", eps="float", reduction="int")
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


@_binding(anchor="Tensor", positive="Tensor", negative="Tensor", margin="float", p="float", eps="float",
          swap="bool", reduction="int")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=1):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


# ---------------------------------------------------------------------------------------------
# Recurrent layers over flat weights.

class _FlatRecurrent:
    """What nn.RNNBase's layer loop reads of a module, from torch.lstm's (and gru's, ...) arguments:
    params holds, for each layer and direction, w_ih, w_hh, then b_ih, b_hh with biases, then w_hr
    for an LSTM with projections."""

    _run = RNNBase._run
    _run_direction = RNNBase._run_direction

    def __init__(self, mode, params, has_biases, num_layers, dropout, train, bidirectional, batch_first, projected):
        self.mode = mode
        self.bias = has_biases
        self.num_layers = num_layers
        self.dropout = dropout
        self.training = train
        self.bidirectional = bidirectional
        self.batch_first = batch_first
        self.proj_size = 1 if projected else 0
        per_direction = 2 + 2 * has_biases + projected
        if len(params) != per_direction * num_layers * (2 if bidirectional else 1):
            raise RuntimeError("got an incorrect number of RNN parameters")
        self.all_weights = [params[i:i + per_direction] for i in range(0, len(params), per_direction)]


# The schema types of the recurrent ops' two forms, by the type of their hidden state.
_PADDED_FORM = ("Tensor", "{hx}", "Tensor[]", "bool", "int", "float", "bool", "bool", "bool")
_PACKED_FORM = ("Tensor", "Tensor", "{hx}", "Tensor[]", "bool", "int", "float", "bool", "bool")


def _recurrent_arguments(name, hx_kind, args):
    """args checked against the op's two forms, as PyTorch's binding chooses between them: (the packed
    form?, the arguments converted)."""
    for packed, kinds in ((False, _PADDED_FORM), (True, _PACKED_FORM)):
        if len(args) != len(kinds):
            continue
        try:
            return packed, [_argument(name, "", i + 1, kind.format(hx=hx_kind), value)
                            for i, (kind, value) in enumerate(zip(kinds, args))]
        except TypeError:
            continue
    got = ", ".join(type(value).__name__ if not isinstance(value, Tensor) else "Tensor" for value in args)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got})")


def _recurrent(mode, args):
    """Runs torch.lstm/gru/rnn_tanh/rnn_relu in either of ATen's forms: (input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first) on a padded batch, or (data, batch_sizes,
    hx, params, has_biases, num_layers, dropout, train, bidirectional) on a packed one. Returns the
    output and the final states."""
    name = mode.lower()
    packed, args = _recurrent_arguments(name, "Tensor[]" if mode == "LSTM" else "Tensor", args)
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first, batch_sizes = False, batch_sizes.tolist()
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        batch_sizes = None
        # The dims that PyTorch's kernel reaches first: the batch dim of a 2-D input is missing.
        if data.dim() == 2:
            raise IndexError(f"{name}(): Dimension out of range (expected to be in range of [-2, 1], but got 2)")
        if data.dim() != 3:
            raise RuntimeError(f"{name}: Expected input to be 3D, got {data.dim()}D instead")
    state = tuple(hx) if mode == "LSTM" else (hx,)
    projected = mode == "LSTM" and len(state) == 2 and state[0].dim() == 3 and state[1].dim() == 3 \
        and state[0].size(2) != state[1].size(2)
    layers = _FlatRecurrent(mode, list(params), has_biases, num_layers, dropout, train, bidirectional, batch_first,
                            projected)
    output, final = _named(name)(layers._run)(data, batch_sizes, state)
    return (output, *final)


def lstm(*args):
    """torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    -> (output, h_n, c_n); or with packed input (data, batch_sizes, hx, ...), without batch_first."""
    return _recurrent("LSTM", args)


def gru(*args):
    """torch.gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    -> (output, h_n); or with packed input (data, batch_sizes, hx, ...), without batch_first."""
    return _recurrent("GRU", args)


def rnn_tanh(*args):
    """torch.rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    -> (output, h_n); or with packed input (data, batch_sizes, hx, ...), without batch_first."""
    return _recurrent("RNN_TANH", args)


def rnn_relu(*args):
    """torch.rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    -> (output, h_n); or with packed input (data, batch_sizes, hx, ...), without batch_first."""
    return _recurrent("RNN_RELU", args)


# ---------------------------------------------------------------------------------------------
# In-place and alias forms.

# Torch-level functions of Tensor methods: torch.abs_(x) is x.abs_().
TORCH_LEVEL_METHODS = (
    "abs_", "acos_", "addmv_", "asin_", "atan_", "ceil_", "clamp_", "clip_", "conj_physical_", "cos_", "cosh_",
    "detach_", "erf_", "exp2_", "exp_", "expm1_", "floor_", "log10_", "log1p_", "log2_", "log_", "nan_to_num_", "neg_",
    "negative_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_",
    "square_", "tan_", "tanh_", "trunc_",
)

# Ops that tensorplay has only out of place, whose in-place Tensor method (`name_`) is written here.
INPLACE_OF = (
    "absolute", "addbmm", "addmm", "addmv", "addr", "arctan2", "baddbmm", "divide", "greater", "greater_equal",
    "less", "less_equal", "multiply", "negative", "not_equal", "renorm", "subtract", "true_divide",
)


def _function_of_method(name):
    def op(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name}(input, ...): input.{name}(...)."
    return op


def _inplace_of_method(name):
    return inplace(getattr(Tensor, name))


for _name in TORCH_LEVEL_METHODS:
    globals()[_name] = _function_of_method(_name)
    __all__.append(_name)

for _name in INPLACE_OF:
    globals()[_name + "_"] = _inplace_of_method(_name)
    METHODS.append(_name + "_")

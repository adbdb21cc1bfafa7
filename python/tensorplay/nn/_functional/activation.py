"""Activations and the softmax family.

Most are composites of tensor ops, so that gradients, autocast, the meta device and every dtype
come with them. Where PyTorch's own backward differs from the composite's at a kink (hardtanh
passes no gradient at its bounds, clamp does), the composite is arranged to give PyTorch's.
"""

import functools
import numbers
import warnings

from tensorplay import _C
from tensorplay._C import _nn
from tensorplay._dtypes import finfo

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "threshold", "threshold_",
    "hardtanh", "hardtanh_", "elu", "elu_", "celu", "celu_", "selu", "selu_", "glu", "gelu", "silu", "mish",
    "hardsigmoid", "hardswish", "logsigmoid", "hardshrink", "softshrink", "tanhshrink", "softsign", "tanh",
    "sigmoid", "softplus", "softmax", "softmin", "log_softmax", "gumbel_softmax", "normalize",
]

# SELU's constants (Klambauer et al., 2017), as PyTorch spells them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

_MISSING = object()


def _number(op, name, position, value):
    """value as the Number that PyTorch's binding takes (a 0-dim tensor is read as its value)."""
    if isinstance(value, _C.Tensor) and value.dim() == 0:
        return value.item()
    if isinstance(value, numbers.Real):
        return value
    raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Number, not {type(value).__name__}")


def _renamed(error, op):
    """The error of an op that `op` is composed of, reworded to name `op`, which is what the caller called."""
    message = str(error)
    if message.startswith("[") and "] " in message:
        message = message[message.index("] ") + 2:]
    return type(error)(f"[{op}] {message}")


def _op(*number_args, flags=()):
    """Checks the arguments of an nn.functional op as PyTorch's binding does (the input is a tensor, the
    number_args are numbers, the flags bools) and makes the errors of the ops it is composed of name it."""
    def wrap(fn):
        op = fn.__name__
        params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        numbers_at = [(i, name) for i, name in enumerate(params) if name in number_args]
        flags_at = [(i, name) for i, name in enumerate(params) if name in flags]

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            input = args[0] if args else kwargs.get(params[0], _MISSING)
            if input is not _MISSING and not isinstance(input, _C.Tensor):
                raise TypeError(f"{op}(): argument '{params[0]}' (position 1) must be Tensor, "
                                f"not {type(input).__name__}")
            if numbers_at:
                args = list(args)
                for i, name in numbers_at:
                    if i < len(args):
                        args[i] = _number(op, name, i + 1, args[i])
                    elif name in kwargs:
                        kwargs[name] = _number(op, name, i + 1, kwargs[name])
            for i, name in flags_at:
                flag = args[i] if i < len(args) else kwargs.get(name, False)
                if not isinstance(flag, bool):
                    raise TypeError(f"{op}(): argument '{name}' (position {i + 1}) must be bool, "
                                    f"not {type(flag).__name__}")
            try:
                return fn(*args, **kwargs)
            except (TypeError, ValueError, IndexError, RuntimeError) as error:
                if op in str(error):
                    raise
                raise _renamed(error, op) from None
        return checked
    return wrap


def _dtype_name(input):
    return str(input.dtype).split(".")[-1]


def _require_floating(input, name):
    if not input.is_floating_point():
        raise NotImplementedError(f"[{name}] not implemented for '{_dtype_name(input)}'")


def _in_place(input, out_of):
    # Writing into an expanded tensor is refused before anything else, as in PyTorch.
    if input.numel() and any(stride == 0 and size > 1 for size, stride in zip(input.shape, input.stride())):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    # The op's backward may need its input, which copy_ overwrites: run it on a clone, which the graph keeps
    # instead. copy_ then returns the input itself, with its version bumped, as PyTorch's in-place forms do.
    return input.copy_(out_of(input.clone()))


@_op()
def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


@_op()
def relu_(input):
    return input.relu_()


@_op()
def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _leaky_relu(input, negative_slope):
    _require_floating(input, "leaky_relu")
    return _C.where(input > 0, input, input * negative_slope)


@_op("negative_slope")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _in_place(input, lambda x: _leaky_relu(x, negative_slope))
    return _leaky_relu(input, negative_slope)


@_op("negative_slope")
def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


@_op()
def prelu(input, weight):
    return _nn.prelu(input, weight)


def _rrelu(input, lower, upper, training):
    if lower > upper:
        raise RuntimeError("[rrelu] Lower bound should be less than or equal to the upper bound")
    _require_floating(input, "rrelu")
    if not training:
        return _leaky_relu(input, (lower + upper) / 2)
    slope = _C.rand_like(input) * (upper - lower) + lower
    return _C.where(input > 0, input, input * slope)


@_op("lower", "upper", flags=("training",))
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if inplace:
        return _in_place(input, lambda x: _rrelu(x, lower, upper, training))
    return _rrelu(input, lower, upper, training)


@_op("lower", "upper", flags=("training",))
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _at_or_below(input, threshold):
    """Where threshold() replaces the input, compared as PyTorch compares."""
    if input.dtype == _C.bool:
        raise NotImplementedError("[threshold] not implemented for 'bool'")
    if input.is_floating_point():
        # 16-bit floats are compared in float32, against the threshold unrounded to 16 bits.
        return (input.float() if input.dtype in (_C.float16, _C.bfloat16) else input) <= threshold
    # An integer input is compared with the threshold converted to its type: truncated, and refused when out
    # of range (fill_ checks as PyTorch does; masked_fill does the same for the value).
    return input <= _C.zeros((), dtype=input.dtype, device=input.device).fill_(threshold)


@_op("threshold", "value")
def threshold(input, threshold, value, inplace=False):
    # masked_fill_ needs no clone (its backward keeps only the mask), and writes into an expanded input as
    # PyTorch's threshold_ does.
    mask = _at_or_below(input, threshold)
    return input.masked_fill_(mask, value) if inplace else input.masked_fill(mask, value)


@_op("threshold", "value")
def threshold_(input, threshold, value):
    return input.masked_fill_(_at_or_below(input, threshold), value)


def _hardtanh(input, min_val, max_val):
    if input.dtype == _C.bool:
        raise RuntimeError("[hardtanh] Bool inputs not supported for hardtanh")
    if not input.is_floating_point():
        # Integer bounds are truncated to the input's type and cannot promote it.
        min_val, max_val = int(min_val), int(max_val)
        if input.dtype == _C.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("[hardtanh] cannot do hardtanh on an unsigned type with negative limits")
        return input.clamp(min_val, max_val)
    # The value is clamp's; the gradient passes strictly between the bounds only (not at them, nor at NaN).
    inside = (input > min_val) & (input < max_val)
    return _C.where(inside, input, input.detach().clamp(min_val, max_val))


@_op("min_val", "max_val")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _in_place(input, lambda x: _hardtanh(x, min_val, max_val))
    return _hardtanh(input, min_val, max_val)


@_op("min_val", "max_val")
def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def _elu(input, alpha, scale, input_scale, name):
    _require_floating(input, name)
    # The exponential branch sees no positive values: where() would pass their zero gradient through exp's
    # infinity as NaN.
    negative = _C.expm1(input.clamp(max=0) * input_scale) * (alpha * scale)
    return _C.where(input > 0, input * scale, negative)


@_op("alpha")
def elu(input, alpha=1.0, inplace=False):
    if inplace:
        return _in_place(input, lambda x: _elu(x, alpha, 1.0, 1.0, "elu"))
    return _elu(input, alpha, 1.0, 1.0, "elu")


@_op("alpha")
def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def _celu(input, alpha):
    if alpha == 0:
        raise RuntimeError("[celu] ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, alpha, 1.0, 1.0 / alpha, "celu")


@_op("alpha")
def celu(input, alpha=1.0, inplace=False):
    if inplace:
        return _in_place(input, lambda x: _celu(x, alpha))
    return _celu(input, alpha)


@_op("alpha")
def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def _selu(input):
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, "selu")


@_op()
def selu(input, inplace=False):
    return _in_place(input, _selu) if inplace else _selu(input)


@_op()
def selu_(input):
    return selu(input, inplace=True)


@_op()
def glu(input, dim=-1):
    ndim = input.dim()
    if ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -ndim <= dim < ndim:
        raise IndexError(f"[glu] Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    dim %= ndim
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"[glu] Halving dimension must be even, but dimension {dim} is size {size}")
    _require_floating(input, "glu")
    half = size // 2
    return input.narrow(dim, 0, half) * input.narrow(dim, half, half).sigmoid()


@_op()
def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


@_op()
def silu(input, inplace=False):
    return _in_place(input, lambda x: x.silu()) if inplace else input.silu()


def _mish(input):
    _require_floating(input, "mish")
    return input * softplus(input).tanh()


@_op()
def mish(input, inplace=False):
    return _in_place(input, _mish) if inplace else _mish(input)


def _hardsigmoid(input):
    _require_floating(input, "hardsigmoid")
    return (_hardtanh(input, -3.0, 3.0) + 3) / 6


@_op()
def hardsigmoid(input, inplace=False):
    return _in_place(input, _hardsigmoid) if inplace else _hardsigmoid(input)


def _hardswish(input):
    _require_floating(input, "hardswish")
    # x * hardsigmoid(x), unscaled until the end as in PyTorch: -inf gives NaN, and no gradient reaches the
    # flat pieces through the clamp, so it is 0 at -3 and 1 at 3.
    return input * (_hardtanh(input, -3.0, 3.0) + 3) / 6


@_op()
def hardswish(input, inplace=False):
    return _in_place(input, _hardswish) if inplace else _hardswish(input)


@_op()
def logsigmoid(input):
    _require_floating(input, "logsigmoid")
    return -softplus(-input)


def _zero_or_nan(input):
    """0 inside a shrink op's band, but NaN stays NaN; no gradient either way, as in PyTorch."""
    return _C.where(input.isnan(), input.detach(), 0)


@_op("lambd")
def hardshrink(input, lambd=0.5):
    _require_floating(input, "hardshrink")
    return _C.where((input < -lambd) | (input > lambd), input, _zero_or_nan(input))


@_op("lambd")
def softshrink(input, lambd=0.5):
    _require_floating(input, "softshrink")
    largest = finfo(input.dtype).max
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"[softshrink] lambda must be in range [0, {largest:g}] for input dtype "
                           f"{_dtype_name(input)}, but found {lambd}")
    return _C.where(input > lambd, input - lambd, _C.where(input < -lambd, input + lambd, _zero_or_nan(input)))


@_op()
def tanhshrink(input):
    return input - input.tanh()


@_op()
def softsign(input):
    return input / (input.abs() + 1)


@_op()
def tanh(input):
    return input.tanh()


@_op()
def sigmoid(input):
    return input.sigmoid()


@_op("beta", "threshold")
def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


def _softmax_dim(name, ndim, stacklevel):
    # One frame more than PyTorch's: the _op wrapper.
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel + 1)
    return 0 if ndim in (0, 1, 3) else 1


@_op()
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.softmax(_softmax_dim("softmax", input.dim(), _stacklevel) if dim is None else dim, dtype)


@_op()
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return (-input).softmax(_softmax_dim("softmin", input.dim(), _stacklevel) if dim is None else dim, dtype)


@_op()
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.log_softmax(_softmax_dim("log_softmax", input.dim(), _stacklevel) if dim is None else dim, dtype)


@_op("tau", "eps")
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=3)  # past the _op wrapper
    if not logits.is_floating_point():  # PyTorch's exponential_ refuses it, with a RuntimeError
        raise RuntimeError("[gumbel_softmax] Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_dtype_name(logits)}")
    # Gumbel(0, 1) noise is -log(E) for E ~ Exponential(1) = -log(U). 16-bit floats draw U in float32: in
    # bfloat16 one draw in 256 would be 0, an infinite sample.
    noise_dtype = _C.float32 if logits.dtype in (_C.float16, _C.bfloat16) else logits.dtype
    uniform = _C.rand_like(logits, dtype=noise_dtype)
    gumbels = (-(-uniform.log()).log()).to(logits.dtype)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft  # the reparameterization trick
    # Straight through: the forward is one-hot, the gradient is the soft sample's.
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _C.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


@_op("eps")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    result = input / denom
    return result if out is None else out.copy_(result)

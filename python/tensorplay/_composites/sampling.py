"""Sampling: the random draws of the torch namespace beyond rand/randn/randint/randperm, as composites of
those. The discrete laws (multinomial, bernoulli, poisson, binomial, geometric_, random_ and randint_like)
and the continuous ones (normal's four overloads, exponential_, cauchy_, log_normal_), each taking
generator=, and the default generator's seed functions at the torch level.

Each law is drawn with the algorithm PyTorch's CPU kernels use (inverse transform, the exponential race
for draws without replacement, Knuth's products and Hormann's transformed rejection for Poisson and
binomial counts), in float64 and then rounded to the result's dtype. The stream differs from PyTorch's;
the laws do not. Rejection loops are vectorized: each round redraws only the elements still rejected.

PyTorch treats a draw as constant in its parameters: a result requires grad when a parameter does, and
the parameters' gradients are zeros (binomial's backward is an error, as in PyTorch)."""

import math
import numbers
import warnings

import ml_dtypes
import numpy as np

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay._composites._forms import write_out
from tensorplay._dtypes import aten_name, cpp_type_name
from tensorplay._composites.statistics import searchsorted
from tensorplay._tensor import tensor as _tensor
from tensorplay.autograd.function import Function
from tensorplay.random import initial_seed, manual_seed, seed

__all__ = ["_standard_gamma", "_standard_gamma_grad", "bernoulli", "binomial", "initial_seed", "manual_seed",
           "multinomial", "normal", "poisson",
           "rand_like", "randint_like", "randn_like", "seed"]
METHODS = ["bernoulli", "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "multinomial",
           "random_"]

_WORK = _C.float64

# ---- Argument checks, worded as PyTorch's bindings word them ----

def _type(value):
    return type(value).__name__


def _check_tensor(op, name, value, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {_type(value)}")


def _check_int(op, name, value, position):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be int, not {_type(value)}")
    return int(value)


def _check_float(op, name, value, position):
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be float, not {_type(value)}")
    return float(value)


def _check_generator(op, generator):
    if generator is not None and not isinstance(generator, _C.Generator):
        raise TypeError(f"{op}(): argument 'generator' must be torch.Generator, not {_type(generator)}")


def _check_floating(kernel, dtype):
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{aten_name(dtype)}\'')


def _is_meta(t):
    return t.device.type == "meta"


# ---- The parameters' gradients ----

class _Draw(Function):
    """A draw as a function of its tensor parameters, with zero gradients for them."""

    @staticmethod
    def forward(ctx, sample, *params):
        ctx.params = [(p.shape, p.dtype, p.device) for p in params]
        return sample

    @staticmethod
    def backward(ctx, grad):
        return (None, *(_C.zeros(shape, dtype=dtype, device=device) for shape, dtype, device in ctx.params))


class _BinomialDraw(Function):
    """A binomial draw: PyTorch defines no derivative for it, so backward through it is an error."""

    @staticmethod
    def forward(ctx, sample, count, prob):
        return sample

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::binomial is not implemented")


def _drawn(sample, *params, draw=_Draw):
    """sample, differentiable in the tensor params as PyTorch makes a draw (with zero gradients)."""
    params = [p for p in params if isinstance(p, Tensor)]
    if _C.is_grad_enabled() and any(p.requires_grad for p in params):
        return draw.apply(sample, *params)
    return sample


# ---- Standard draws, in float64 ----

def _uniform(shape, device, generator):
    """Uniform on [0, 1)."""
    return _C.rand(tuple(shape), generator=generator, dtype=_WORK, device=device)


def _standard_exponential(shape, device, generator):
    """Exponential with rate 1, by inverse transform; never 0 or inf, as 1 - u lies in (0, 1]."""
    return _uniform(shape, device, generator).neg_().log1p_().neg_()


def _flat(t, shape):
    return t.to(_WORK).expand(shape).reshape(-1)


def _until_accepted(shape, device, propose, *params, dtype=_WORK):
    """The draw of shape whose element i is the first proposal accepted for it. propose(*params) takes
    the flat params of the elements it proposes for and returns (values, accepted) for them; the first
    round proposes for every element, each later round only for those still rejected."""
    params = [p.reshape(-1) for p in params]
    if not params:
        count = math.prod(shape)
        # Parameterless proposals are told how many to make by an index of the elements pending.
        params = [_C.arange(count, device=device)]
    values, accepted = propose(*params)
    result = values.to(dtype)
    pending = (~accepted).nonzero().reshape(-1)
    while pending.numel():
        values, accepted = propose(*(p[pending] for p in params))
        result[pending[accepted]] = values[accepted].to(dtype)
        pending = pending[~accepted]
    return result.reshape(tuple(shape))


# ---- multinomial ----

def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """num_samples category indices drawn from each row of input's weights, with or without replacement.
    Without replacement the draws follow the law of successive draws, each from the renormalized weights
    of the categories not yet drawn: the exponential race (Gumbel-top-k) of the weights."""
    _check_tensor("multinomial", "input", input, 1)
    num_samples = _check_int("multinomial", "num_samples", num_samples, 2)
    if not isinstance(replacement, bool):
        raise TypeError(f"multinomial(): argument 'replacement' (position 3) must be bool, not {_type(replacement)}")
    _check_generator("multinomial", generator)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{aten_name(input.dtype)}")
    if out is not None and isinstance(out, Tensor) and out.dtype != _C.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {aten_name(out.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    result = _multinomial(input, num_samples, replacement, generator)
    return result if out is None else write_out("multinomial", out, result)


def _multinomial(input, num_samples, replacement, generator):
    shape = (*input.shape[:-1], num_samples)
    if _is_meta(input) or input.numel() == 0:
        return _C.empty(shape, dtype=_C.int64, device=input.device)
    # Double precision: 16-bit weights summed in their own dtype would lose small categories.
    weights = input.detach().to(_WORK)
    if not replacement or num_samples == 1:
        if not ((weights.max() < math.inf) & (weights.min() >= 0)).item():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (weights.sum(-1) == 0).any().item():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # Each category's time of arrival in a race of exponential clocks with rates the weights; the
        # first num_samples to arrive are distributed as successive draws without replacement.
        arrival = _standard_exponential(weights.shape, input.device, generator) / weights
        if num_samples == 1:
            return arrival.argmin(-1, keepdim=True)
        return arrival.neg().topk(num_samples, -1).indices
    if not (weights >= 0).all().item():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if not weights.isfinite().all().item():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    cumulative = weights.cumsum(-1)
    total = cumulative[..., -1:]
    if (total <= 0).any().item():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    # Inverse transform; a category of weight 0 is an empty interval that no draw lands in.
    points = _uniform(shape, input.device, generator) * total
    drawn = searchsorted(cumulative, points, right=True)
    # Rounding can carry a point onto the total itself: it belongs to the last category of nonzero weight.
    positions = _C.arange(weights.shape[-1], device=input.device)
    last = ((weights > 0) * positions).argmax(-1, keepdim=True)
    return _C.minimum(drawn, last.expand(shape))


# ---- bernoulli ----

def _check_probabilities(p):
    if not _is_meta(p) and not ((p >= 0) & (p <= 1)).all().item():
        raise RuntimeError("bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def _check_probability(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")


def _num(value):
    """A float as PyTorch's messages print it: 1 rather than 1.0."""
    return int(value) if math.isfinite(value) and value == int(value) else value


def _bernoulli_draw(shape, p, device, generator):
    """1.0 with probability p (a number or a tensor broadcast to shape), else 0.0, in float64."""
    p = p.detach().to(_WORK) if isinstance(p, Tensor) else p
    return (_uniform(shape, device, generator) < p).to(_WORK)


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 1 with probability input (or p, when given), else 0, in input's dtype."""
    _check_tensor("bernoulli", "input", input, 1)
    _check_generator("bernoulli", generator)
    if p is None:
        _check_floating("bernoulli_tensor_cpu_p_", input.dtype)
        _check_probabilities(input)
        probability = input
    else:
        probability = _check_float("bernoulli", "p", p, 2)
        _check_probability(probability)
    sample = _bernoulli_draw(input.shape, probability, input.device, generator).to(input.dtype)
    result = _drawn(sample, input)
    if out is None:
        return result
    # The draw is written straight into out in out's dtype, whatever input's: 0 and 1 fit every dtype.
    return write_out("bernoulli", out, result.to(out.dtype) if isinstance(out, Tensor) else result)


def bernoulli_(input, p=0.5, *, generator=None):
    """Fills input with draws of 1 with probability p (a number, or a tensor broadcastable to input)."""
    _check_generator("bernoulli_", generator)
    if isinstance(p, Tensor):
        _check_floating("bernoulli_tensor_cpu_p_", p.dtype)
        p = p.expand(input.shape)
        _check_probabilities(p)
    else:
        p = _check_float("bernoulli_", "p", p, 1)
        _check_probability(p)
    return input.copy_(_bernoulli_draw(input.shape, p, input.device, generator))


# ---- normal ----

_NORMAL_SIGNATURES = (
    "normal() received an invalid combination of arguments - got ({got}), but expected one of:\n"
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)\n")


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, Tensor)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Draws from normal laws: one per element of mean and std broadcast together (either may be a
    number), or, for a number mean and std, a tensor of the given size."""
    _check_generator("normal", generator)
    if _is_number(mean) and _is_number(std):
        if size is None or isinstance(size, numbers.Number):
            got = ", ".join(_type(a) for a in (mean, std, size) if a is not None)
            raise TypeError(_NORMAL_SIGNATURES.format(got=got))
        _check_std(std)
        shape = tuple(_check_int("normal", "size", n, 3) for n in size)
        for n in shape:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
        dtype = dtype or (out.dtype if isinstance(out, Tensor) else _C.get_default_dtype())
        _check_floating("normal_kernel_cpu", dtype)
        result = (_C.randn(shape, generator=generator, dtype=_WORK, device=device) * std + mean).to(dtype)
        result.requires_grad_(requires_grad)
        return result if out is None else write_out("normal", out, result)
    if size is not None or not all(isinstance(a, (Tensor, numbers.Real)) for a in (mean, std)):
        got = ", ".join(_type(a) for a in (mean, std, size) if a is not None)
        raise TypeError(_NORMAL_SIGNATURES.format(got=got))
    like = mean if isinstance(mean, Tensor) else std
    _check_floating("normal_kernel_cpu", out.dtype if isinstance(out, Tensor) else like.dtype)
    if isinstance(std, Tensor):
        if not _is_meta(std) and not (std.detach() >= 0).all().item():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(std)
    shape = _C.broadcast_shapes(tuple(getattr(mean, "shape", ())), tuple(getattr(std, "shape", ())))
    work_mean = mean.detach().to(_WORK) if isinstance(mean, Tensor) else mean
    work_std = std.detach().to(_WORK) if isinstance(std, Tensor) else std
    sample = (_C.randn(tuple(shape), generator=generator, dtype=_WORK, device=like.device) * work_std
              + work_mean).to(like.dtype)
    result = _drawn(sample, mean, std)
    return result if out is None else write_out("normal", out, result)


def _check_std(std):
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(float(std))}")


# ---- poisson ----

def poisson(input, generator=None):
    """Draws a Poisson count of rate input for each element, in input's dtype."""
    _check_tensor("poisson", "input", input, 1)
    _check_generator("poisson", generator)
    _check_floating("poisson_cpu", input.dtype)
    if _is_meta(input):
        return _drawn(_C.empty_like(input), input)
    rate = input.detach().to(_WORK)
    if not (rate >= 0).all().item():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    small = rate < 10
    counts = _C.where(small, _poisson_small(rate.where(small, 0.0), input.device, generator),
                      _poisson_large(rate.where(~small, 10.0), input.device, generator))
    return _drawn(counts.to(input.dtype), input)


def _poisson_small(rate, device, generator):
    """Inversion by sequential search: the count k at which the cumulative distribution first exceeds
    a uniform. Rates below 10 need few steps; past the cap the remaining mass is below 1e-30, so the
    cap only stops a search that rounding kept from ending."""
    u = _uniform(rate.shape, device, generator)
    count = _C.zeros(rate.shape, dtype=_WORK, device=device)
    mass = rate.neg().exp()
    cumulative = mass.clone()
    for k in range(1, 100):
        beyond = u >= cumulative
        if not beyond.any().item():
            break
        count = count + beyond.to(_WORK)
        mass = mass * rate / k
        cumulative = cumulative + mass
    return count


def _poisson_large(rate, device, generator):
    """Hormann's transformed rejection with squeeze (PTRS), for rates of 10 and more; infinite rates
    give infinite counts."""
    infinite = rate == math.inf
    counts = _until_accepted(rate.shape, device, lambda lam: _ptrs_round(lam, device, generator),
                             rate.where(~infinite, 10.0))
    return counts.where(~infinite, math.inf)


def _ptrs_round(lam, device, generator):
    root = lam.sqrt()
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    u = _uniform(lam.shape, device, generator) - 0.5
    v = _uniform(lam.shape, device, generator)
    us = 0.5 - u.abs()
    k = ((2 * a / us + b) * u + lam + 0.43).floor()
    squeezed = (us >= 0.07) & (v <= v_r)
    possible = (k >= 0) & ((us >= 0.013) | (v <= us))
    log_density = _poisson_log_pmf(k.clamp(min=0), lam)
    accepted = squeezed | (possible & ((v * inv_alpha / (a / (us * us) + b)).log() <= log_density))
    return k, accepted


def _log_factorial(k):
    """log(k!) by Stirling's series with its tail tabulated below 10 (as PyTorch's kernels), which keeps
    its precision where lgamma's absolute error would swamp the log-densities of large counts."""
    tail = _stirling_tail(k)
    return (k + 0.5) * (k + 1).log() - (k + 1) + 0.5 * math.log(2 * math.pi) + tail


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
         0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], for counts k >= 0."""
    table = _tensor(_TAIL, dtype=_WORK, device=k.device)
    kp1_squared = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1_squared) / kp1_squared) / (k + 1)
    return _C.where(k <= 9, table[k.clamp(max=9).to(_C.int64)], series)


def _poisson_log_pmf(k, lam):
    # -lam + k log(lam) - log(k!), with the large terms cancelled analytically: k log(lam / (k + 1))
    # is computed as k log1p(...) so that it keeps its precision for rates far above 2^53.
    return (k * ((lam - k - 1) / (k + 1)).log1p() - 0.5 * (k + 1).log() + (k + 1 - lam)
            - 0.5 * math.log(2 * math.pi) - _stirling_tail(k))


# ---- gamma ----

def _standard_gamma_grad(self, output):
    """d output / d self for draws output of Gamma(self, 1), their quantiles held fixed (the implicit
    reparameterisation of Figurnov, Mohamed and Mnih, 2018): a kernel (csrc/tensorplay/cpu/special.cpp)."""
    _check_tensor("_standard_gamma_grad", "self", self, 1)
    _check_tensor("_standard_gamma_grad", "output", output, 2)
    _check_floating("_standard_gamma_grad_cpu", self.dtype)
    dtype = self.dtype
    compute = _WORK if dtype == _C.float64 else _C.float32
    return _C._special_function("_standard_gamma_grad", self.to(compute), output.to(compute)).to(dtype)


class _StandardGammaDraw(Function):
    """A gamma draw as a function of its concentration, differentiated by _standard_gamma_grad."""

    @staticmethod
    def forward(ctx, sample, alpha):
        ctx.save_for_backward(sample, alpha)
        return sample

    @staticmethod
    def backward(ctx, grad):
        sample, alpha = ctx.saved_tensors
        return None, grad * _standard_gamma_grad(alpha, sample)


def _standard_gamma(self, generator=None):
    """Draws of Gamma(self, 1), elementwise: Marsaglia and Tsang's squeezed rejection from a cubed
    normal (2000) for concentrations of 1 and more, and for smaller ones a draw at concentration + 1
    scaled by u^(1 / concentration). Differentiable in self (rsample's reparameterisation)."""
    _check_tensor("_standard_gamma", "self", self, 1)
    _check_generator("_standard_gamma", generator)
    _check_floating("_standard_gamma_cpu", self.dtype)
    if _is_meta(self):
        return _C.empty_like(self)
    alpha = self.detach().to(_WORK)
    boosted = alpha.where(alpha >= 1, alpha + 1)
    d = boosted - 1.0 / 3
    c = 1 / (9 * d).sqrt()

    def propose(d, c):
        x = _C.randn(tuple(d.shape), generator=generator, dtype=_WORK, device=d.device)
        v = (1 + c * x).pow(3)
        u = _uniform(d.shape, d.device, generator)
        positive = v > 0
        log_v = v.where(positive, 1.0).log()
        accepted = positive & ((u < 1 - 0.0331 * x.pow(4)) | (u.log() < 0.5 * x * x + d * (1 - v + log_v)))
        return d * v, accepted
    draws = _until_accepted(alpha.shape, self.device, propose, d.where(d > 0, 1.0), c.where(d > 0, 1.0))
    small = alpha < 1
    if bool(small.any()):
        u = _uniform(alpha.shape, self.device, generator)
        draws = draws.where(~small, draws * u.pow(1 / alpha.where(small, 1.0)))
    # Never exactly 0, whose logarithm the densities take.
    draws = draws.clamp(min=float(np.finfo(np.float32 if self.dtype != _C.float64 else np.float64).tiny))
    draws = draws.where(alpha > 0, math.nan).to(self.dtype)
    if _C.is_grad_enabled() and self.requires_grad:
        return _StandardGammaDraw.apply(draws, self)
    return draws


# ---- binomial ----

def binomial(count, prob, generator=None):
    """Draws the number of successes in count trials of probability prob, elementwise (broadcast)."""
    _check_tensor("binomial", "count", count, 1)
    _check_tensor("binomial", "prob", prob, 2)
    _check_generator("binomial", generator)
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{aten_name(t.dtype)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {aten_name(prob.dtype)} but expected {aten_name(count.dtype)}")
    if count.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f'"binomial_cpu" not implemented for \'{aten_name(count.dtype)}\'')
    shape = tuple(_C.broadcast_shapes(tuple(count.shape), tuple(prob.shape)))
    if _is_meta(count) or _is_meta(prob):
        sample = _C.empty(shape, dtype=count.dtype, device="meta")
    else:
        sample = _binomial(_flat(count.detach(), shape), _flat(prob.detach(), shape), count.device,
                           generator).reshape(shape).to(count.dtype)
    return _drawn(sample, count, prob, draw=_BinomialDraw)


def _binomial(n, p, device, generator):
    # Draw with the smaller of p and 1 - p and reflect: both algorithms are fastest for small success odds.
    flip = p > 0.5
    q = _C.where(flip, 1 - p, p)
    degenerate = (n <= 0) | (q <= 0) | ~n.isfinite() | q.isnan()
    large = ~degenerate & (n * q >= 10)
    small = ~degenerate & ~large
    # Each algorithm runs on every element, with harmless parameters where the other one's result is taken.
    successes = _binomial_inversion(n.where(small, 0.0), q.where(small, 0.5), device, generator)
    if large.any().item():
        successes = _C.where(large, _until_accepted(n.shape, device, lambda n, q: _btrs_round(n, q, device, generator),
                                                    n.where(large, 20.0), q.where(large, 0.5)), successes)
    successes = _C.where(flip, n - successes, successes)
    # PyTorch's edge cases: no trials or no chance gives 0, certainty gives count, a NaN gives NaN.
    successes = _C.where((n <= 0) | (p <= 0), 0.0, _C.where(p >= 1, n, successes))
    infinite = (n == math.inf) & (p > 0)
    return _C.where(n.isnan() | p.isnan(), math.nan, _C.where(infinite, math.inf, successes))


def _binomial_inversion(n, q, device, generator):
    """Counts the geometric waiting times between successes that fit in n trials (n * q < 10, so few)."""
    log_miss = (-q).log1p()
    trials = _C.zeros(n.shape, dtype=_WORK, device=device)
    successes = _C.zeros(n.shape, dtype=_WORK, device=device)
    active = _C.ones(n.shape, dtype=_C.bool, device=device)
    while active.any().item():
        trials = trials + (_uniform(n.shape, device, generator).log() / log_miss).ceil()
        active = active & (trials <= n)
        successes = successes + active.to(_WORK)
    return successes


def _btrs_round(n, p, device, generator):
    """A round of Hormann's transformed rejection (BTRS) for n * p >= 10 and p <= 1/2."""
    spq = (n * p * (1 - p)).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * spq
    m = ((n + 1) * p).floor()
    u = _uniform(n.shape, device, generator) - 0.5
    v = _uniform(n.shape, device, generator)
    us = 0.5 - u.abs()
    k = ((2 * a / us + b) * u + c).floor()
    inside = (k >= 0) & (k <= n)
    squeezed = (us >= 0.07) & (v <= v_r)
    kc = k.clamp(min=0).minimum(n)
    bound = ((m + 0.5) * ((m + 1) / (r * (n - m + 1))).log() + (n + 1) * ((n - m + 1) / (n - kc + 1)).log()
             + (kc + 0.5) * (r * (n - kc + 1) / (kc + 1)).log() + _stirling_tail(m) + _stirling_tail(n - m)
             - _stirling_tail(kc) - _stirling_tail(n - kc))
    accepted = inside & (squeezed | ((v * alpha / (a / (us * us) + b)).log() <= bound))
    return k, accepted


# ---- In-place draws of Tensor ----

def _fill(input, values):
    """Writes float64 draws into input, rounded to its dtype, through a differentiable copy_ (the
    previous values get zero gradient, as PyTorch's in-place draws give them)."""
    return input.copy_(values)


def exponential_(input, lambd=1.0, *, generator=None):
    """Fills input with draws from the exponential law of rate lambd."""
    lambd = _check_float("exponential_", "lambd", lambd, 1)
    _check_generator("exponential_", generator)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {aten_name(input.dtype)}")
    return _fill(input, _standard_exponential(input.shape, input.device, generator) / lambd)


def cauchy_(input, median=0.0, sigma=1.0, *, generator=None):
    """Fills input with draws from the Cauchy law of the given median and scale sigma."""
    median = _check_float("cauchy_", "median", median, 1)
    sigma = _check_float("cauchy_", "sigma", sigma, 2)
    _check_generator("cauchy_", generator)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {cpp_type_name(input.dtype)}")
    angle = (_uniform(input.shape, input.device, generator) - 0.5) * math.pi
    return _fill(input, angle.tan() * sigma + median)


def log_normal_(input, mean=1.0, std=2.0, *, generator=None):
    """Fills input with exp of draws from the normal law of the given mean and std."""
    mean = _check_float("log_normal_", "mean", mean, 1)
    std = _check_float("log_normal_", "std", std, 2)
    _check_generator("log_normal_", generator)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    _check_floating("log_normal_cpu", input.dtype)
    normal_draw = _C.randn(tuple(input.shape), generator=generator, dtype=_WORK, device=input.device)
    return _fill(input, (normal_draw * std + mean).exp())


def geometric_(input, p, *, generator=None):
    """Fills input with the number of trials of success probability p up to the first success (>= 1)."""
    p = _check_float("geometric_", "p", p, 1)
    _check_generator("geometric_", generator)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    if input.dtype == _C.bool:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    # Inverse transform: 1 - u lies in (0, 1], and only u = 0 exactly would give 0 trials.
    survival = 1 - _uniform(input.shape, input.device, generator)
    trials = (survival.log() / math.log1p(-p)).ceil().clamp(min=1)
    return _fill(input, trials)


# ---- random_ and randint_like: uniform integers ----

_FLOAT_FORMATS = {_C.float16: np.float16, _C.bfloat16: ml_dtypes.bfloat16, _C.float32: np.float32,
                  _C.float64: np.float64}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


# The floating dtypes' significand bits (with the implicit one) and largest finite values.
_DIGITS = {_C.float16: 11, _C.bfloat16: 8, _C.float32: 24, _C.float64: 53}
_FLOAT_MAX = {_C.float16: 65504.0, _C.bfloat16: 3.3895313892515355e38, _C.float32: 3.4028234663852886e38,
              _C.float64: 1.7976931348623157e308}


def _digits(dtype):
    return _DIGITS[dtype]


def _rounded(value, dtype):
    """value rounded to dtype and back to an integer, as PyTorch's casts do; value itself where dtype
    overflows (the range check then refuses it)."""
    with np.errstate(over="ignore"):
        rounded = float(np.array(float(value)).astype(_FLOAT_FORMATS[dtype]))
    return int(rounded) if math.isfinite(rounded) else value


def _update_from(low, dtype):
    """The lowest integer of [low, ...) that survives rounding to dtype, as PyTorch moves it."""
    rounded = _rounded(low + 1, dtype)
    if rounded < low:
        n = abs(low + 1).bit_length() - 1
        low = rounded + (1 << (n - _digits(dtype) + 1))
    return low


def _update_to(high, dtype):
    rounded = _rounded(high - 1, dtype)
    if rounded >= high:
        n = abs(high - 1).bit_length() - 1
        high = rounded - (1 << (n - _digits(dtype) + 1))
    return high


def _dtype_range(dtype):
    if dtype.is_floating_point:
        return -_FLOAT_MAX[dtype], _FLOAT_MAX[dtype]
    if dtype == _C.bool:
        return 0, 1
    info = np.iinfo(str(dtype).split(".")[-1])
    return int(info.min), int(info.max)


def _check_range(low, high_inclusive, dtype):
    smallest, largest = _dtype_range(dtype)
    for value, name in ((low, "from"), (high_inclusive, "to - 1")):
        if not smallest <= value <= largest:
            raise RuntimeError(f"{name} is out of bounds for {cpp_type_name(dtype)}")
    if dtype.is_floating_point:
        digits = _digits(dtype)
        for value, name in ((low, "from"), (high_inclusive, "to - 1")):
            if not -(1 << digits) <= value <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{cpp_type_name(dtype)} can support discrete uniform distribution only within this "
                              "range. This warning will become an error in version 1.7 release, please fix the "
                              "code in advance", UserWarning, stacklevel=4)


def _random_bounds(dtype, args):
    """The inclusive bounds [low, high] that random_(*args) draws from in dtype, checked as PyTorch's."""
    if not args:
        if dtype.is_floating_point:
            return 0, 1 << _digits(dtype)
        return 0, _dtype_range(dtype)[1]
    low, high = (0, args[0]) if len(args) == 1 else args
    if high is not None:
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        if dtype.is_floating_point:
            low, high = _update_from(low, dtype), _update_to(high, dtype)
            if not low < high:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={low} >= to={high}")
        _check_range(low, high - 1, dtype)
        return low, high - 1
    if low == _INT64_MIN:
        if dtype not in (_C.int64, _C.float32, _C.float64, _C.bfloat16):
            if dtype in (_C.bool, _C.float16):
                raise NotImplementedError(f'"random_full_64_bits_range_kernel_cpu" not implemented for '
                                          f"'{aten_name(dtype)}'")
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        return _INT64_MIN, _INT64_MAX
    if dtype.is_floating_point:
        high = min(1 << _digits(dtype), _INT64_MAX)
        low = _update_from(low, dtype)
        if not low < high:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                               f"to dtype, but got from={low} > to_inc={high}")
    else:
        high = _dtype_range(dtype)[1]
    _check_range(low, high, dtype)
    return low, high


def _uniform_integers(shape, low, high, device, generator):
    """Integers uniform on [low, high] (inclusive, within int64), as int64."""
    span = high - low + 1
    if span <= _INT64_MAX:
        return _C.randint(0, span, tuple(shape), generator=generator, device=device) + low
    # More than 2^63 values: 64 uniform bits, redrawn where they fall outside [low, high] (at most
    # half of them).
    def propose(index):
        upper = _C.randint(-(1 << 31), 1 << 31, tuple(index.shape), generator=generator, device=device)
        lower = _C.randint(0, 1 << 32, tuple(index.shape), generator=generator, device=device)
        bits = upper * (1 << 32) + lower
        return bits, (bits >= low) & (bits <= high)
    return _until_accepted(shape, device, propose, dtype=_C.int64)


def random_(input, *args, generator=None, **kwargs):
    """Fills input with integers drawn uniformly: random_() from [0, 2^mantissa] for floating dtypes and
    [0, max] for integral ones, random_(to) from [0, to), random_(from, to) from [from, to) (to=None: up
    to random_()'s top)."""
    args = _random_args(args, kwargs)
    _check_generator("random_", generator)
    low, high = _random_bounds(input.dtype, args)
    if input.numel() == 0:
        return input
    values = _uniform_integers(input.shape, low, high, input.device, generator)
    return input.copy_(values.to(input.dtype))


def _random_args(args, kwargs):
    """random_'s overloads: (), (to), (from, to) and the keywords to= and from=."""
    if "from" in kwargs:
        args = (*args, kwargs.pop("from"))
    if "to" in kwargs:
        args = (*args, kwargs.pop("to")) if args else (kwargs.pop("to"),)
    if kwargs or len(args) > 2 or any(not (isinstance(a, numbers.Integral) and not isinstance(a, bool))
                                      for a in args[:1]) or (len(args) == 2 and args[1] is not None and (
            isinstance(args[1], bool) or not isinstance(args[1], numbers.Integral))):
        got = ", ".join([_type(a) for a in args] + [f"{k}={_type(v)}" for k, v in kwargs.items()])
        raise TypeError(f"random_() received an invalid combination of arguments - got ({got}), but expected one "
                        "of:\n * (*, torch.Generator generator = None)\n * (int from, int to, *, torch.Generator "
                        "generator = None)\n * (int to, *, torch.Generator generator = None)\n")
    return tuple(None if a is None else int(a) for a in args)


def randint_like(input, low=None, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, pin_memory=False):
    """A tensor of input's shape (and dtype and device unless given) of integers uniform on [low, high);
    randint_like(input, high) draws from [0, high)."""
    _check_tensor("randint_like", "input", input, 1)
    if low is None and high is None:
        raise TypeError("randint_like(): missing the required argument 'high'")
    if high is None:
        low, high = 0, low
    elif low is None:
        low = 0
    if isinstance(low, Tensor):
        low = low.item()
    if isinstance(high, Tensor):
        high = high.item()
    for name, value, position in (("low", low, 2), ("high", high, 3)):
        _check_int("randint_like", name, value, position)
    _check_generator("randint_like", generator)
    kwargs = {"dtype": dtype, "device": device}
    if memory_format is not None:
        kwargs["memory_format"] = memory_format
    result = _C.empty_like(input, **{k: v for k, v in kwargs.items() if v is not None})
    return random_(result, low, high, generator=generator).requires_grad_(requires_grad)


def _like(kernel, fill, input, generator, dtype, layout, device, requires_grad, memory_format, pin_memory):
    options = {"dtype": dtype, "layout": layout, "device": device, "memory_format": memory_format}
    options = {k: v for k, v in options.items() if v is not None}
    if generator is None:
        return kernel(input, requires_grad=requires_grad, pin_memory=pin_memory, **options)
    _check_generator(kernel.__name__, generator)
    result = _C.empty_like(input, **options)
    return fill(result, generator=generator).requires_grad_(requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    """A tensor like input of draws uniform on [0, 1), from generator when given."""
    return _like(_C.rand_like, Tensor.uniform_, input, generator, dtype, layout, device, requires_grad,
                 memory_format, pin_memory)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    """A tensor like input of standard normal draws, from generator when given."""
    return _like(_C.randn_like, Tensor.normal_, input, generator, dtype, layout, device, requires_grad,
                 memory_format, pin_memory)

"""Transforms y = f(x) between constrained sets, with log |det df/dx| (torch.distributions.transforms):
what TransformedDistribution pushes a base distribution through, and what biject_to and
transform_to map unconstrained parameters with."""

import functools
import math
import numbers
import weakref

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.utils import broadcast_all

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
    "identity_transform",
]


def _sum_rightmost(value, dims):
    """value summed over its rightmost dims dims."""
    return value.reshape(*value.shape[:value.dim() - dims], -1).sum(-1) if dims > 0 else value


class Transform:
    """An invertible (or at least computable) map y = f(x) from `domain` to `codomain`. With
    cache_size=1 the last (x, y) pair is remembered, so that inverting a value the transform made
    returns its input exactly (and without computing)."""

    domain = constraints.real
    codomain = constraints.real
    bijective = False

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (the same object each time while it lives)."""
        inverse = self._inv() if self._inv is not None else None
        if inverse is None:
            inverse = _InverseTransform(self)
            self._inv = weakref.ref(inverse)
        return inverse

    @property
    def sign(self):
        """+1 or -1: whether the (scalar, bijective) map increases or decreases."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return id(self)

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        cached_x, cached_y = self._cached_x_y
        if x is cached_x:
            return cached_y
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        cached_x, cached_y = self._cached_x_y
        if y is cached_y:
            return cached_x
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |det dy/dx| at (x, y), over the batch (the event dims reduced)."""
        raise NotImplementedError

    def forward_shape(self, shape):
        """The shape of f(x) for x of this shape."""
        return shape

    def inverse_shape(self, shape):
        """The shape of the inverse at y of this shape."""
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, as a transform: it holds its forward transform and calls it backwards."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __hash__(self):
        return hash((_InverseTransform, self._inv))

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied in order: parts[-1](...parts[0](x)). Its event dims are the most any part needs,
    carried through the parts that change them; the log-det sums the parts' over those dims."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    def __hash__(self):
        return hash((ComposeTransform, *self.parts))

    @functools.cached_property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim  # the event dims the first part must take
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim \
            else domain

    @functools.cached_property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return constraints.independent(codomain, event_dim - codomain.event_dim) if event_dim > codomain.event_dim \
            else codomain

    @property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self):
        inverse = self._inv() if self._inv is not None else None
        if inverse is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inv = weakref.ref(inverse)
            inverse._inv = weakref.ref(self)
        return inverse

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return tensorplay.zeros_like(x)
        # Intermediate values (the cached last one is y itself, so that caches line up).
        values = [x]
        for part in self.parts[:-1]:
            values.append(part(values[-1]))
        values.append(y)
        total, event_dim = 0, self.domain.event_dim
        for part, a, b in zip(self.parts, values[:-1], values[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its rightmost reinterpreted_batch_ndims batch dims taken as event dims (its
    log-det summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """The event reshaped from in_shape to out_shape (same number of elements); log-det 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tensorplay.Size(in_shape), tensorplay.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape,
                                                                            cache_size=cache_size)

    def _call(self, x):
        batch = x.shape[:x.dim() - len(self.in_shape)]
        return x.reshape(tuple(batch) + tuple(self.out_shape))

    def _inverse(self, y):
        batch = y.shape[:y.dim() - len(self.out_shape)]
        return y.reshape(tuple(batch) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = x.shape[:x.dim() - len(self.in_shape)]
        return x.new_zeros(batch)

    def _replace_event(self, shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(old)}")
        return tuple(shape[:cut]) + tuple(new)

    def forward_shape(self, shape):
        return self._replace_event(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._replace_event(shape, self.out_shape, self.in_shape)


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def __hash__(self):
        return hash(ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    def __hash__(self):
        return id(self)

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return tensorplay.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return tensorplay.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _clipped_sigmoid(x):
    """sigmoid(x) kept inside (0, 1) by its dtype's smallest steps, so that its logit stays finite."""
    info = tensorplay.finfo(x.dtype)
    return tensorplay.clamp(tensorplay.sigmoid(x), min=info.tiny, max=1.0 - info.eps)


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def __hash__(self):
        return hash(SigmoidTransform)

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = tensorplay.finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - tensorplay.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        softplus = tensorplay.nn.functional.softplus
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def __hash__(self):
        return hash(SoftplusTransform)

    def _call(self, x):
        return tensorplay.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -tensorplay.nn.functional.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def __hash__(self):
        return hash(TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return tensorplay.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|.
        return 2.0 * (math.log(2.0) - x - tensorplay.nn.functional.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not invertible: the inverse gives the positive root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def __hash__(self):
        return hash(AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, on events of event_dim dims (its log-det summed over them)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                      self._event_dim)

    @property
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else AffineTransform(self.loc, self.scale, self._event_dim,
                                                                           cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False

        def same(a, b):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                return a == b
            return bool((tensorplay.as_tensor(a) == tensorplay.as_tensor(b)).all())
        return same(self.loc, other.loc) and same(self.scale, other.scale)

    def __hash__(self):
        return id(self)

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, numbers.Real):
            result = tensorplay.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = _sum_rightmost(result.expand(tensorplay.broadcast_shapes(result.shape, x.shape)),
                                    self._event_dim)
        else:
            result = result.expand(tensorplay.broadcast_shapes(result.shape, x.shape))
        return result

    def forward_shape(self, shape):
        return tensorplay.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by softmax (not invertible: the inverse is one of its preimages, log y)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def __hash__(self):
        return hash(SoftmaxTransform)

    def _call(self, x):
        e = (x - x.max(-1, keepdim=True).values).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """Real vectors of length K - 1 to the K-simplex, bijectively: each coordinate takes a fraction
    sigmoid(x_i - log(K - 1 - i)) of the stick left (the shift makes x = 0 the simplex's centre)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def __hash__(self):
        return hash(StickBreakingTransform)

    @staticmethod
    def _shift(n, like):
        """log(n - i) for i = 0 .. n - 1."""
        return tensorplay.arange(n, 0, -1, dtype=like.dtype, device=like.device).log()

    def _call(self, x):
        fractions = _clipped_sigmoid(x - self._shift(x.size(-1), x))
        left = (1 - fractions).cumprod(-1)  # the stick left after each piece
        pad = tensorplay.nn.functional.pad
        return pad(fractions, [0, 1], value=1) * pad(left, [1, 0], value=1)

    def _inverse(self, y):
        pieces = y[..., :-1]
        left = (1 - pieces.cumsum(-1)).clamp(min=tensorplay.finfo(y.dtype).tiny)
        return pieces.log() - left.log() + self._shift(pieces.size(-1), y)

    def log_abs_det_jacobian(self, x, y):
        # dy_i/dx_i = y_i (1 - fraction_i): log y_i + log sigmoid(-shifted x_i).
        shifted = x - self._shift(x.size(-1), x)
        return (-shifted + tensorplay.nn.functional.logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strictly lower part
    kept, the diagonal exponentiated (not bijective: the upper part is dropped)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def __hash__(self):
        return hash(LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: L L^T for L the lower Cholesky transform's."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def __hash__(self):
        return hash(PositiveDefiniteTransform)

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(tensorplay.linalg.cholesky(y))


def _tril_positions(n, device):
    """The (row, column) indices of an n x n matrix's strictly lower triangle, row by row."""
    rows, cols = tensorplay.tril_indices(n, n, -1, device=device)
    return rows, cols


class CorrCholeskyTransform(Transform):
    """Vectors of D (D - 1) / 2 reals to Cholesky factors of D x D correlation matrices, bijectively:
    tanh makes each a partial correlation r in (-1, 1), laid row by row below the diagonal, and
    each row is then a stick broken on the unit sphere: w_ij = r_ij sqrt(1 - sum_{k<j} w_ik^2),
    w_ii = sqrt(1 - sum_{k<i} w_ik^2)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    def __hash__(self):
        return hash(CorrCholeskyTransform)

    @staticmethod
    def _size(count):
        n = int(round((1 + math.sqrt(1 + 8 * count)) / 2))
        if n * (n - 1) // 2 != count:
            raise ValueError("Incorrect size")
        return n

    def _call(self, x):
        n = self._size(x.size(-1))
        eps = tensorplay.finfo(x.dtype).eps
        r = tensorplay.tanh(x).clamp(min=-1 + eps, max=1 - eps)
        rows, cols = _tril_positions(n, x.device)
        partial = x.new_zeros(*x.shape[:-1], n, n)
        partial[..., rows, cols] = r
        # The fraction of each row's squared length left before column j: prod_{k<j} (1 - r_ik^2).
        left = (1 - partial.pow(2)).sqrt().cumprod(-1)
        left = tensorplay.nn.functional.pad(left[..., :-1], [1, 0], value=1.0)
        return (partial + tensorplay.eye(n, dtype=x.dtype, device=x.device)) * left

    def _inverse(self, y):
        n = y.size(-1)
        squared_left = 1 - y.pow(2).cumsum(-1)
        shifted = tensorplay.nn.functional.pad(squared_left[..., :-1], [1, 0], value=1.0)
        partial = y / shifted.sqrt()
        rows, cols = _tril_positions(n, y.device)
        return tensorplay.atanh(partial[..., rows, cols].clamp(min=-1, max=1))

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # tanh contributes log(1 - r^2) = log(1 - tanh(x)^2) for each entry; the stick-breaking, for
        # w_ij, half the log of the squared length left before it: log prod_{k<j} (1 - r_ik^2) / 2,
        # which is log(1 - sum_{k<j} w_ik^2) / 2.
        squared_left = 1 - y.pow(2).cumsum(-1)
        n = y.size(-1)
        rows, cols = _tril_positions(n, y.device)
        shifted = tensorplay.nn.functional.pad(squared_left[..., :-1], [1, 0], value=1.0)
        stick = 0.5 * shifted[..., rows, cols].log().sum(-1)
        tanh = (2.0 * (math.log(2.0) - x - tensorplay.nn.functional.softplus(-2.0 * x))).sum(-1)
        return tanh + stick

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = self._size(shape[-1])
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)


class CatTransform(Transform):
    """Each transform of tseq on its slice of dim (lengths[i] long, 1 by default)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("CatTransform expects a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform got {len(self.transforms)} transforms and {len(self.lengths)} lengths")
        self.dim = dim

    @functools.cached_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _slices(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise ValueError(f"CatTransform's dim {self.dim} is out of range for a value of {value.dim()} dims")
        if value.size(self.dim) != self.length:
            raise ValueError(f"CatTransform expects {self.length} entries along dim {self.dim}, got "
                             f"{value.size(self.dim)}")
        start = 0
        for length in self.lengths:
            yield value.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return tensorplay.cat([t(part) for t, part in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return tensorplay.cat([t.inv(part) for t, part in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        dim = self.dim if self.dim < 0 else self.dim - x.dim()  # counted from the right
        for t, xs, ys, length in zip(self.transforms, self._slices(x), self._slices(y), self.lengths):
            term = t.log_abs_det_jacobian(xs, ys)
            # A transform of fewer event dims than the whole has its extra dims summed.
            term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        if -dim <= self.event_dim:  # dim is inside the event: the slices' terms add up
            return sum(terms)
        return tensorplay.cat(terms, dim + self.event_dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Each transform of tseq on its own index of dim."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("StackTransform expects a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise ValueError(f"StackTransform's dim {self.dim} is out of range for a value of {value.dim()} dims")
        if value.size(self.dim) != len(self.transforms):
            raise ValueError(f"StackTransform expects {len(self.transforms)} entries along dim {self.dim}, got "
                             f"{value.size(self.dim)}")
        return [value.select(self.dim, i) for i in range(value.size(self.dim))]

    def _call(self, x):
        return tensorplay.stack([t(part) for t, part in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return tensorplay.stack([t.inv(part) for t, part in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [t.log_abs_det_jacobian(xs, ys) for t, xs, ys in zip(self.transforms, self._slices(x),
                                                                      self._slices(y))]
        return tensorplay.stack(terms, self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's CDF as a transform from its support to the unit interval (its log-det is the
    density's logarithm)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                           cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

"""Distribution, the base of every distribution: its batch and event shapes, the validation of its
parameters and of the values given to it, and the interface the distributions fill in."""

import warnings

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A batch of distributions over events: `batch_shape` independent (differently parameterised)
    distributions, each drawing values of `event_shape`.

    With validation on (the default outside `python -O`; `set_default_validate_args` or the
    `validate_args` argument change it) the parameters are checked against `arg_constraints` when
    the distribution is made, and the values given to `log_prob`, `cdf`, ... against `support`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tensorplay.Size(batch_shape)
        self._event_shape = tensorplay.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.")
            return
        for name, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None), lazy_property):
                continue  # derived when first asked for from the parameter given (logits from probs): checked as that
            value = getattr(self, name)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                 f"invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint of each parameter, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the values lie in."""
        raise NotImplementedError

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded (not copied) to batch_shape."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """Draws of shape sample_shape + batch_shape + event_shape, without gradient."""
        with tensorplay.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """Draws through which gradients reach the parameters (the reparameterisation trick)."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(tensorplay.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return tensorplay.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        if not isinstance(sample_shape, tensorplay.Size):
            sample_shape = tensorplay.Size(sample_shape)
        return tensorplay.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """PyTorch's checks of a value given to log_prob and friends: a tensor whose rightmost dims
        are the event's, broadcastable with the batch, inside the support."""
        if not isinstance(value, tensorplay.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {tuple(value.shape)} vs "
                             f"{tuple(self._event_shape)}.")
        actual = tuple(value.shape[:event_dim_start])
        expected = tuple(self._batch_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {tuple(value.shape)} vs "
                                 f"{tuple(self._batch_shape) + tuple(self._event_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """The instance an expand() fills in: a bare one of this class, which a subclass with its own
        __init__ must make itself."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, new, batch_shape, *parameters):
        """Finishes an expand(): new gets those of this distribution's tensor `parameters` it has,
        expanded to batch_shape, its shapes, and this distribution's validation setting (its
        parameters, expanded, were checked already)."""
        batch_shape = tensorplay.Size(batch_shape)
        for name in parameters:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        def shown(value):  # a parameter of one element by its value, others by their shape
            return value.item() if value.numel() == 1 else value.size()
        parameters = ", ".join(f"{k}: {shown(self.__dict__[k])}" for k in self.arg_constraints if k in self.__dict__)
        return f"{self.__class__.__name__}({parameters})"

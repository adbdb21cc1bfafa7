"""Parameter: a tensor that a Module registers as one of its learnable weights."""

from tensorplay._C import Tensor


class Parameter(Tensor):
    """A Tensor subclass marking a module's learnable weight: assigning one to a Module attribute
    registers it, so it appears in parameters() and state_dict(). It shares data's memory."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from tensorplay import empty
            data = empty(0)
        return Tensor._make_subclass(cls, data.detach(), requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # __new__ built the object; Tensor's own __init__ must not run again

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (Parameter, (self.detach(), self.requires_grad))


class Buffer:
    """Marks a tensor assigned to a Module attribute as a buffer (PyTorch's nn.Buffer)."""

    def __init__(self, data, *, persistent=True):
        self.data = data
        self.persistent = persistent


class UninitializedTensorMixin:
    """A parameter or buffer of a lazy module whose shape is not known yet: it holds no data until
    materialize() gives it a shape, and then becomes a plain cls_to_become."""

    def __init__(self, *args, **kwargs):
        pass  # __new__ built the object; Tensor's own __init__ must not run again

    def materialize(self, shape, device=None, dtype=None):
        from tensorplay import empty

        device = self.data.device if device is None else device
        dtype = self.data.dtype if dtype is None else dtype
        self.data = empty(*shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        return memo[id(self)]


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


def _empty_data(device, dtype):
    from tensorplay import empty

    return empty(0, device=device, dtype=dtype)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor._make_subclass(cls, _empty_data(device, dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        buffer = Tensor._make_subclass(cls, _empty_data(device, dtype), requires_grad)
        buffer.persistent = persistent
        return buffer

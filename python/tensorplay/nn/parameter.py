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

"""autograd.Function: a user-defined op with its own forward and backward in Python.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)
"""

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay.autograd.grad_mode import no_grad


class FunctionCtx:
    """What forward leaves for backward: saved tensors and flags about the outputs."""

    def __init__(self):
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._node = None
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors or None, got {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The saved tensors, checked against in-place changes since they were saved."""
        if self._node is None:
            return tuple(self._to_save)
        return tuple(_C._unpack_saved(self._node))

    def mark_dirty(self, *tensors):
        """Declares inputs that forward modified in place."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that have no gradient (indices, masks)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether backward receives zeros (True, the default) or None for outputs without a gradient."""
        self._materialize_grads = value


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call with apply(*args)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        records = _C.is_grad_enabled() and any(ctx.needs_input_grad)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        if not records:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # An input returned unchanged (and not marked dirty) is returned as a new alias, so that it
        # can carry this Function's history without rewriting the input's.
        # A non-differentiable mark on such an input carries over to its alias.
        dirty = ctx._dirty
        non_differentiable = list(ctx._non_differentiable)
        aliased = []
        for o in outs:
            if isinstance(o, Tensor) and any(o is a for a in args) and not any(o is d for d in dirty):
                alias = o.detach()
                if any(o is n for n in ctx._non_differentiable):
                    non_differentiable.append(alias)
                o = alias
            aliased.append(o)
        outs = tuple(aliased)

        def backward(*grads):
            return cls.backward(ctx, *grads)

        ctx._node = _C._record_function(cls.__name__ + "Backward", backward, list(args), list(outs),
                                        non_differentiable, list(dirty), list(ctx._to_save),
                                        ctx._materialize_grads)
        return outs[0] if single else outs

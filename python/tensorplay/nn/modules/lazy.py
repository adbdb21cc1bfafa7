"""The lazy modules, whose parameters take their shapes from the first input: LazyModuleMixin and
LazyLinear (the lazy convolutions and norms live with their eager forms)."""

import itertools

from tensorplay.autograd.grad_mode import no_grad
from tensorplay.nn.modules.linear import Linear
from tensorplay.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

# torch.nn exports the uninitialized tensor classes too; tensorplay.nn exports what this list names.
__all__ = ["LazyLinear", "UninitializedBuffer", "UninitializedParameter"]


class LazyModuleMixin:
    """Mixed in before a module class: its parameters start as UninitializedParameter/UninitializedBuffer,
    and a forward pre-hook runs initialize_parameters(*input) on the first call, after which the module
    turns into cls_to_become (LazyLinear into Linear). Loading a state dict materialises them too."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        # An uninitialized parameter is saved as itself: detaching it would lose what marks it lazy.
        destination = super().state_dict(*args, destination=destination, prefix=prefix, keep_vars=keep_vars)
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            if is_lazy(value) and prefix + name in destination:
                destination[prefix + name] = value
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Materialises each uninitialized parameter and buffer with the shape of its entry, then loads."""
        with no_grad():
            for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
                loaded = state_dict.get(name)
                if is_lazy(value) and loaded is not None and not is_lazy(loaded):
                    value.materialize(loaded.shape)
        return super().load_state_dict(state_dict, strict, assign)

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. "
                           "Run a dummy forward pass to correctly initialize the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        # Built without bias, and with an empty weight, which is replaced at the first forward anyway.
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

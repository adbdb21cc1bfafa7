"""tensorplay._dynamo.config: torch._dynamo.config's settings that programs set, with PyTorch's
defaults. Nothing reads them here; an unknown name is an AttributeError, as in PyTorch, so a typo
does not pass unnoticed."""

import contextlib
import sys
import types

_DEFAULTS = {
    "suppress_errors": False, "verbose": False, "cache_size_limit": 8, "recompile_limit": 8,
    "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256, "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False, "optimize_ddp": True, "automatic_dynamic_shapes": True,
    "assume_static_by_default": True, "inline_inbuilt_nn_modules": True, "specialize_int": False,
    "dynamic_shapes": True, "force_parameter_static_shapes": True, "guard_nn_modules": True,
    "raise_on_ctx_manager_usage": True,
}


class _ConfigModule(types.ModuleType):
    """A module whose attributes are exactly the known settings."""

    def __getattr__(self, name):
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __setattr__(self, name, value):
        if name not in _DEFAULTS and not name.startswith("_"):
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        super().__setattr__(name, value)

    @contextlib.contextmanager
    def patch(self, *args, **changes):
        """Sets the settings given (as keywords or one dict) for the block, then restores them."""
        if args:
            changes = {**args[0], **changes} if isinstance(args[0], dict) else {args[0]: args[1], **changes}
        previous = {name: getattr(self, name) for name in changes}
        for name, value in changes.items():
            setattr(self, name, value)
        try:
            yield
        finally:
            for name, value in previous.items():
                setattr(self, name, value)


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _ConfigModule

"""Names that nn.functional exports for code written for TorchScript and for the __torch_function__
protocol: the Tensor type, DType (an int there), the helpers that chose between two functions by a
flag, and the protocol's helpers (tensorplay.overrides)."""

from tensorplay import Tensor
from tensorplay.overrides import (handle_torch_function, has_torch_function, has_torch_function_unary,
                                  has_torch_function_variadic)

__all__ = ["DType", "Tensor", "assert_int_or_pair", "boolean_dispatch", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic"]

DType = int


def assert_int_or_pair(arg, arg_name, message):
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false, as its argument `arg_name` (by keyword, or at
    position arg_index; `default` when absent) is true or false."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    fn.__doc__ = if_true.__doc__ or if_false.__doc__
    fn.__module__, fn.__name__, fn.__qualname__ = module_name, func_name, func_name
    return fn

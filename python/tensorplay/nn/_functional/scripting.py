"""Names that nn.functional exports for code written for TorchScript: the Tensor type, DType (an
int there), and the helpers that chose between two functions by a flag."""

from tensorplay import Tensor

__all__ = ["DType", "Tensor", "assert_int_or_pair", "boolean_dispatch"]

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

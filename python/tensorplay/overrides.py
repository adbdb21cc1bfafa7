"""The __torch_function__ protocol's helpers, for code that calls them itself: an object whose type
defines __torch_function__ takes over a function called with it. tensorplay's own ops do not
consult the protocol, and tensorplay.Tensor does not define it, so plain tensors never take over."""

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic"]


def _overloaded_args(relevant_args):
    """The arguments whose types define __torch_function__, one per type, subclasses before their
    base classes and otherwise in argument order."""
    types, args = [], []
    for arg in relevant_args:
        kind = type(arg)
        if kind in types or not hasattr(kind, "__torch_function__"):
            continue
        index = next((i for i, seen in enumerate(args) if issubclass(kind, type(seen))), len(args))
        types.append(kind)
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args):
    return bool(_overloaded_args(relevant_args))


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """public_api(*args, **kwargs) as the first overloading argument's __torch_function__ implements
    it; a TypeError when every one returns NotImplemented."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(arg) for arg in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(arg) for arg in overloaded]}")

"""functional_call: runs a module with some of its parameters and buffers replaced by given
tensors, for the duration of the call only."""

import contextlib
import warnings

from tensorplay._C import Tensor

_MISSING = object()


def _untie_named_tensors_map(module, parameters_and_buffers):
    """The given tensors, extended to every name that shares a tensor with a given name (tied
    weights); two different values for one tied tensor are an error."""
    all_named_tensors = dict(module.named_parameters(remove_duplicate=False))
    all_named_tensors.update(module.named_buffers(remove_duplicate=False))
    names_by_tensor = {}
    for name, tensor in all_named_tensors.items():
        names_by_tensor.setdefault(id(tensor), set()).add(name)
    tied_names_map = {name: names for names in names_by_tensor.values() if len(names) > 1 for name in names}
    given_tied = {name for name in parameters_and_buffers if name in tied_names_map}
    for given_name in given_tied:
        tied_names = tied_names_map[given_name]
        values = {id(parameters_and_buffers[name]) for name in tied_names if name in parameters_and_buffers}
        if len(tied_names & given_tied) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied_names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for given_name in given_tied:
        for tied_name in tied_names_map[given_name]:
            untied[tied_name] = parameters_and_buffers[given_name]
    return untied


def _swap_tensor(module, name, tensor):
    """Puts tensor (or _MISSING: nothing) under module.<name>; returns what was there."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_all(module, named_tensors):
    originals = {}
    for path, tensor in named_tensors.items():
        prefix, _, name = path.rpartition(".")
        originals[path] = _swap_tensor(module.get_submodule(prefix), name, tensor)
    return originals


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    if tie_weights:
        parameters_and_buffers = _untie_named_tensors_map(module, parameters_and_buffers)
    if strict:
        keys = set(parameters_and_buffers)
        valid = {name for name, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
        errors = []
        if keys - valid:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, sorted(keys - valid)))}.")
        if valid - keys:
            errors.append(f"Missing key(s): {', '.join(map(repr, sorted(valid - keys)))}.")
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errors))
    originals = {}
    try:
        originals = _swap_all(module, parameters_and_buffers)
        yield
    finally:
        _swap_all(module, originals)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated in torch in favour of torch.func.functional_call, which it equals."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)

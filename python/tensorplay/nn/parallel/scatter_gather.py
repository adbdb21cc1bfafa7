"""scatter and gather, as torch.nn.parallel's on a machine without GPUs: containers are walked as in
PyTorch, and the tensors in them, which would be split across or collected from GPUs, raise
PyTorch's errors."""

from tensorplay import _C

__all__ = ["scatter", "gather"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim=0):
    """Splits the tensors in `inputs` into one chunk per GPU in `target_gpus`, copying everything
    else once per GPU."""
    def scatter_map(obj):
        if isinstance(obj, _C.Tensor):
            raise AttributeError("module 'tensorplay._C' has no attribute '_scatter'")
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def gather(outputs, target_device, dim=0):
    """Collects the per-GPU `outputs` (matching containers) onto `target_device`, concatenating
    tensors along `dim`."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, _C.Tensor):
            raise AssertionError("Gather function not implemented for CPU tensors")
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)

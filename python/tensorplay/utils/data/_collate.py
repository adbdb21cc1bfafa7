"""default_collate and default_convert: turning samples into batches of tensors.

Collation is driven by ``default_collate_fn_map``, a type -> function registry, exactly like
torch.utils.data._utils.collate; containers (mappings, namedtuples, sequences) are handled by
``collate`` itself, recursing into their fields.
"""

import collections.abc
import copy
import re

import numpy as np

import tensorplay
from tensorplay import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtype kinds with no tensor equivalent: byte strings, unicode strings and objects.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _rebuild_mapping(mapping, values):
    """A mapping like `mapping` (same type, when it can be built) holding `values`."""
    try:
        if isinstance(mapping, collections.abc.MutableMapping):
            # Copy-and-update keeps any extra attributes a custom mapping type carries.
            clone = copy.copy(mapping)
            clone.update(values)
            return clone
        return type(mapping)(values)
    except TypeError:
        # The type supports neither copy()/update() nor construction from a dict.
        return values


def _rebuild_sequence(sequence, values):
    """A sequence like `sequence` (same type, when it can be built) holding the list `values`."""
    try:
        if isinstance(sequence, collections.abc.MutableSequence):
            clone = copy.copy(sequence)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(sequence)(values)
    except TypeError:
        # E.g. range, which cannot be built from a list.
        return values


def default_convert(data):
    """Converts NumPy arrays and scalars in data (recursively) to tensors; leaves everything else as is.

    Used instead of default_collate when automatic batching is off (batch_size=None).
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return tensorplay.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as in torch
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates a list of samples: leaf types through collate_fn_map, containers field by field.

    collate_fn_map maps a type (or tuple of types) to ``fn(batch, *, collate_fn_map)``; an exact type
    match wins, then the first key the element is an instance of, in insertion order.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(
            elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(sample) == elem_size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # Columns stay tuples as in torch, so a column of strings comes back as a tuple.
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as in torch
        return _rebuild_sequence(elem, columns)

    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return tensorplay.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([tensorplay.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return tensorplay.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    # Python floats are doubles; torch keeps them float64 here rather than the default dtype.
    return tensorplay.tensor(batch, dtype=tensorplay.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    # Also reached by bools (a subclass of int): tensor() gives bool for all-bool batches.
    return tensorplay.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,  # memmap too, as a subclass
    # NumPy's string scalars are deliberately absent: they fall through to the TypeError.
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stacks a list of samples into a batch, keeping the samples' structure.

    Tensors are stacked along a new first dimension (shapes must match); NumPy arrays and scalars
    become tensors first; Python ints become an int64 tensor, floats a float64 tensor and bools a
    bool tensor; str and bytes stay a list. Mappings are collated key by key, namedtuples field by
    field (keeping their type), other sequences are transposed and collated position by position
    (tuples become lists).
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)

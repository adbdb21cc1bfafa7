"""The long tail of the torch namespace, written in Python as composites of the ops that have kernels,
so that gradients, autocast, every dtype and every device follow from their parts.

One file per family. Each lists its torch-level functions in `__all__` and the names that are also
Tensor methods (the in-place forms among them) in `METHODS`; this package gathers the functions (for
tensorplay's namespace) and binds the methods."""

from tensorplay._C import Tensor
from tensorplay._composites import (creation, decompositions, indexing, linalg, nn_ops, pointwise, sampling, shape,
                                    sparse_coo, state, statistics, stft, tensor_api)

FAMILIES = (creation, decompositions, indexing, linalg, nn_ops, pointwise, sampling, shape, sparse_coo, state,
            statistics, stft, tensor_api)

for _family in FAMILIES:
    globals().update((_name, getattr(_family, _name)) for _name in _family.__all__)
    for _name in _family.METHODS:
        setattr(Tensor, _name, getattr(_family, _name))

__all__ = [name for family in FAMILIES for name in family.__all__]

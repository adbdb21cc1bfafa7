"""Argument helpers shared by the families of nn.functional."""

import numbers


def _single(x):
    return (x,) if isinstance(x, numbers.Integral) else tuple(x)


def _pair(x):
    return (x, x) if isinstance(x, numbers.Integral) else tuple(x)


def _triple(x):
    return (x, x, x) if isinstance(x, numbers.Integral) else tuple(x)


def _reduction(size_average, reduce, reduction):
    """The legacy size_average/reduce flags, mapped to reduction as PyTorch does."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"

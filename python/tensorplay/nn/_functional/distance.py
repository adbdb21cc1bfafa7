"""Distances between rows."""

from tensorplay import _C

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _C.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    # PyTorch adds eps to the difference, so identical rows are eps * d**(1/p) apart.
    dim = -1 if max(x1.dim(), x2.dim()) > 0 else 0
    return _C._linalg.vector_norm(x1 - x2 + eps, p, [dim], keepdim, None)


def pdist(input, p=2):
    return _C.pdist(input, p)

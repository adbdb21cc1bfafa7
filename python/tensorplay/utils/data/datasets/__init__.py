"""Datasets read from files on disk (torchvision's names and fields)."""

from tensorplay.utils.data.datasets.idx import read_idx
from tensorplay.utils.data.datasets.mnist import MNIST, FashionMNIST

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

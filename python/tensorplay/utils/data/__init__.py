"""Datasets, samplers and the DataLoader, with torch.utils.data's API and semantics.

Loading happens in the main process only: ``num_workers > 0`` raises NotImplementedError.
"""

from tensorplay.utils.data._collate import default_collate, default_convert
from tensorplay.utils.data.dataloader import DataLoader, _DatasetKind, get_worker_info
from tensorplay.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from tensorplay.utils.data import datasets
from tensorplay.utils.data.distributed import DistributedSampler
from tensorplay.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "_DatasetKind",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]

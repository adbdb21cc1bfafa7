"""DistributedSampler: each of num_replicas processes loads its own share of a dataset, as
torch.utils.data.DistributedSampler does."""

import tensorplay
from tensorplay.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


def _from_process_group(query):
    """query(tensorplay.distributed), for the world size or rank of the default process group."""
    try:
        import tensorplay.distributed as dist  # imported here: the sampler works in builds without it
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return query(dist)


class DistributedSampler(Sampler):
    """Yields the indices of the dataset that belong to `rank`: every num_replicas-th index of one
    order shared by all ranks, shuffled by seed + epoch (call set_epoch before each epoch).

    Without drop_last, the order is padded by repeating its head so every rank gets
    ceil(len / num_replicas) indices; with drop_last, its tail is cut to len // num_replicas per rank.
    num_replicas and rank default to the default process group's world size and rank.

    >>> sampler = DistributedSampler(range(10), num_replicas=4, rank=1, shuffle=False)
    >>> list(sampler)
    [1, 5, 9]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _from_process_group(lambda dist: dist.get_world_size())
        if rank is None:
            rank = _from_process_group(lambda dist: dist.get_rank())
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last:
            self.num_samples = len(dataset) // num_replicas
        else:
            self.num_samples = -(-len(dataset) // num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            generator = tensorplay.Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = tensorplay.randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif n:
            indices = (indices * -(-self.total_size // n))[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which seeds the next pass's shuffle (with seed), so each epoch has its own order."""
        self.epoch = epoch

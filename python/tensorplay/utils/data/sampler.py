"""Samplers: iterables over dataset indices (or batches of indices) that drive a DataLoader."""

import itertools
from typing import Generic, TypeVar

import numpy as np

import tensorplay

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)


def _seeded_generator():
    """A fresh Generator seeded from the global RNG, so tensorplay.manual_seed makes runs reproducible."""
    seed = tensorplay.randint(0, 2**63 - 1, (), dtype=tensorplay.int64).item()
    generator = tensorplay.Generator()
    generator.manual_seed(seed)
    return generator


class Sampler(Generic[_T_co]):
    """Base class for samplers. Subclasses implement __iter__ and, optionally, __len__."""

    def __iter__(self):
        raise NotImplementedError

    # No default __len__, for the same reason as Dataset.


class SequentialSampler(Sampler):
    """Yields 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Yields random indices: a fresh permutation per pass, or independent draws with replacement.

    num_samples defaults to len(data_source); without replacement, more than that many samples are
    taken from consecutive permutations.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # Read lazily: the dataset's size may change after the sampler is built.
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _seeded_generator() if self.generator is None else self.generator
        if self.replacement:
            # Drawn in chunks of 32 so an early break does not pay for the whole epoch.
            for _ in range(self.num_samples // 32):
                yield from tensorplay.randint(n, (32,), dtype=tensorplay.int64, generator=generator).tolist()
            yield from tensorplay.randint(n, (self.num_samples % 32,), dtype=tensorplay.int64,
                                          generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from tensorplay.randperm(n, generator=generator).tolist()
            yield from tensorplay.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """Yields the given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in tensorplay.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Yields num_samples indices into weights, each drawn with probability proportional to its weight."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = tensorplay.as_tensor(weights, dtype=tensorplay.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement, self.generator)

    def __len__(self):
        return self.num_samples


def _multinomial(weights, num_samples, replacement, generator):
    """torch.multinomial for a 1-D weight vector, built on tensorplay.rand so generator drives it."""
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if weights.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > len(weights):
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    uniform = tensorplay.rand(num_samples if replacement else len(weights), generator=generator,
                              dtype=tensorplay.float64).numpy()
    if replacement:
        cumulative = np.cumsum(weights)
        picks = np.searchsorted(cumulative, uniform * cumulative[-1], side="right")
        # Rounding in the cumulative sum can push a draw past the last category with weight.
        return np.minimum(picks, np.flatnonzero(weights)[-1]).tolist()
    # Sampling without replacement is the order of exponential "arrival times" with rates = weights;
    # zero weights never arrive and so come last.
    with np.errstate(divide="ignore", invalid="ignore"):
        arrival = -np.log1p(-uniform) / weights
    return np.argsort(arrival, kind="stable")[:num_samples].tolist()


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of batch_size (the last may be shorter)."""

    def __init__(self, sampler, batch_size, drop_last):
        # No isinstance(sampler, Iterable) check: objects with only __getitem__ are iterable too.
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        batch = list(itertools.islice(sampler_iter, self.batch_size))
        while batch:
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch
            batch = list(itertools.islice(sampler_iter, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

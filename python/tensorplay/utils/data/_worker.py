"""What runs in a DataLoader worker process: its seeding, its identity (get_worker_info) and its loop.

A worker takes (index, indices) tasks from its own queue and puts (index, batch) results on the
queue all workers share; the main process sends tasks round-robin and puts the results back in
order (dataloader.py). Tensors cross between the processes pickled (tensorplay/_pickling.py).

Seeding is PyTorch's: each worker's tensorplay generator and Python's random module start from
base_seed + worker_id (base_seed drawn once per iteration from the loader's generator, or from the
global one), and NumPy's global generator from a hash of (base_seed, worker_id) that NumPy's own
SeedSequence computes, so that workers never share a stream.
"""

import dataclasses
import queue
import random
import sys
import traceback

__all__ = ["WorkerInfo", "get_worker_info"]

# How long a worker waits on its task queue before checking that the main process still lives.
_POLL_SECONDS = 5.0


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """The worker a call runs in: its id (0 .. num_workers - 1), the number of workers, its seed,
    and its copy of the dataset (an IterableDataset uses these to split its items between workers)."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None


def get_worker_info():
    """The WorkerInfo of the DataLoader worker this runs in, or None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with the worker's traceback and
    raised there again as the same type."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError's str() quotes its message: keep it readable
            message = KeyErrorMessage(message)
        try:
            error = self.exc_type(message)
        except Exception:  # an exception type whose constructor wants other arguments
            raise RuntimeError(message) from None
        raise error


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """A worker's word that its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Tells a persistent worker that a new epoch starts (its iterable dataset starts over)."""


def numpy_seed(base_seed, worker_id):
    import numpy as np
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4)


def _seed(base_seed, worker_id):
    import tensorplay
    seed = base_seed + worker_id
    random.seed(seed)
    tensorplay.manual_seed(seed)
    if "numpy" in sys.modules:
        import numpy as np
        np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


def worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    import tensorplay
    from tensorplay.utils.data.dataloader import _DatasetKind

    try:
        tensorplay.set_num_threads(1)  # the workers share the machine; one thread each, as in PyTorch
        seed = _seed(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        exhausted = False
        while True:
            try:
                task = index_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(task, ResumeIteration):
                data_queue.put((task, None))
                exhausted = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None or done_event.is_set():
                break
            if exhausted:
                continue
            idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = IterableDatasetStopIteration(worker_id)
                        exhausted = True
                    else:
                        data = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()

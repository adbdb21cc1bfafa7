"""DataLoader(num_workers > 0) as PyTorch has it: the same batches in the same order as num_workers=0,
PyTorch's per-worker seeding (tensorplay, Python's random, NumPy), worker_init_fn and get_worker_info,
IterableDataset split by worker, persistent workers, exceptions and killed workers reported in the
main process, timeouts, both start methods, and no worker left running."""

import multiprocessing
import os
import random
import time

import numpy as np
import pytest
from torch.utils.data._utils.worker import _generate_state

import tensorplay as tp
from tensorplay.utils import data
from tensorplay.utils.data._worker import numpy_seed


class Squares(data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": tp.tensor([float(i), float(i * i)]), "i": i}


class Draws(data.Dataset):
    """Each item: the worker's draws from Python's random, NumPy and tensorplay, and its id."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = data.get_worker_info()
        return tp.tensor([random.random(), np.random.rand(), tp.rand(1).item(), info.id, info.seed % 1000])


class Range(data.IterableDataset):
    """0..n-1, each worker taking every num_workers-th item when split, or all of them when not."""

    def __init__(self, n, split=True):
        self.n, self.split = n, split

    def __iter__(self):
        info = data.get_worker_info()
        if info is None or not self.split:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Failing(data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4:
            raise KeyError("item 4 is missing")
        return i


class Killing(data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), 9)
        return i


class SendsThenDies(data.Dataset):
    """Worker 0 sends index 0's batch (its storage shared from that worker), then dies on index 2."""
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            time.sleep(0.3)  # batch 0 has left the worker's queue for the pipe
            os.kill(os.getpid(), 9)
        return tp.full((3,), float(i))


class Slow(data.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(3)
        return i


class Pids(data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return os.getpid()


def batches(loader):
    return [(b["x"].tolist(), b["i"].tolist()) for b in loader]


@pytest.mark.parametrize("context", [None, "spawn"])
def test_the_same_batches_in_the_same_order_as_without_workers(context):
    expected = batches(data.DataLoader(Squares(23), batch_size=4))
    assert batches(data.DataLoader(Squares(23), batch_size=4, num_workers=3, multiprocessing_context=context)) == \
        expected
    shuffled = [batches(data.DataLoader(Squares(23), batch_size=4, shuffle=True, num_workers=w,
                                        generator=tp.Generator().manual_seed(5))) for w in (0, 2)]
    assert shuffled[0] == shuffled[1] and shuffled[0] != expected
    assert multiprocessing.active_children() == []


def test_unordered_delivery_gives_every_batch():
    got = batches(data.DataLoader(Squares(20), batch_size=3, num_workers=2, in_order=False, prefetch_factor=4))
    assert sorted(got, key=lambda b: b[1]) == batches(data.DataLoader(Squares(20), batch_size=3))


def test_seeding_follows_pytorch():
    def run(seed):
        return data.DataLoader(Draws(), batch_size=2, num_workers=2, generator=tp.Generator().manual_seed(seed))

    first, again, other = (tp.cat(list(run(s))) for s in (1, 1, 2))
    assert first.tolist() == again.tolist() and first.tolist() != other.tolist()
    by_worker = {int(row[3]): row for row in first}
    assert by_worker[0][:3].tolist() != by_worker[1][:3].tolist()  # workers never share a stream
    for base_seed, worker_id in ((0, 0), (12345, 3), (2 ** 62 + 7, 1)):
        assert list(numpy_seed(base_seed, worker_id)) == list(_generate_state(base_seed, worker_id))


def _init(worker_id):
    np.random.seed(100 + worker_id)


def test_worker_init_fn_and_worker_info():
    rows = tp.cat(list(data.DataLoader(Draws(), batch_size=2, num_workers=2, worker_init_fn=_init)))
    for row in rows:
        assert row[3].item() in (0, 1)
    first_draw = {int(r[3]): r[1].item() for r in reversed(list(rows))}
    for worker_id, value in first_draw.items():
        assert value == pytest.approx(np.random.RandomState(100 + worker_id).rand())
    assert data.get_worker_info() is None


def test_iterable_datasets_split_by_worker():
    items = sorted(x for b in data.DataLoader(Range(17), batch_size=3, num_workers=3) for x in b.tolist())
    assert items == list(range(17))
    repeated = sorted(x for b in data.DataLoader(Range(5, split=False), batch_size=2, num_workers=2)
                      for x in b.tolist())
    assert repeated == sorted(list(range(5)) * 2)


def test_persistent_workers_serve_every_epoch():
    loader = data.DataLoader(Pids(), batch_size=1, num_workers=2, persistent_workers=True)
    epochs = [sorted({b.item() for b in loader}) for _ in range(3)]
    assert epochs[0] == epochs[1] == epochs[2] and len(epochs[0]) == 2
    iterable = data.DataLoader(Range(6), batch_size=2, num_workers=2, persistent_workers=True)
    assert [sorted(x for b in iterable for x in b.tolist()) for _ in range(2)] == [list(range(6))] * 2


def test_an_exception_in_a_worker_is_raised_in_the_main_process():
    with pytest.raises(KeyError, match=r"Caught KeyError in DataLoader worker process \d+\.\nOriginal Traceback"):
        list(data.DataLoader(Failing(), batch_size=1, num_workers=2))
    assert multiprocessing.active_children() == []


def test_a_killed_worker_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by signal: Killed"):
        list(data.DataLoader(Killing(), batch_size=1, num_workers=2))
    assert multiprocessing.active_children() == []


def test_a_worker_killed_after_sending_a_batch_is_the_same_error():
    """The batch's storage is fetched from its dead sender when the main process gets to it: that
    lost connection is the worker's death too, not a ConnectionResetError."""
    batches_ = iter(data.DataLoader(SendsThenDies(), batch_size=1, num_workers=2))
    time.sleep(1.0)  # worker 0 has sent batch 0 and died by now
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by signal: Killed"):
        list(batches_)
    assert multiprocessing.active_children() == []


def test_timeout():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(data.DataLoader(Slow(), num_workers=1, timeout=1))


def test_batches_arrive_in_shared_memory_and_leave_nothing_behind():
    before = {name for name in os.listdir("/dev/shm") if not name.startswith("sem.")}
    loaded = list(data.DataLoader(Squares(10), batch_size=4, num_workers=2))
    assert all(batch["x"].is_shared() for batch in loaded)  # as PyTorch's are: mapped, not copied
    assert batches(data.DataLoader(Squares(10), batch_size=4)) == [(b["x"].tolist(), b["i"].tolist()) for b in loaded]
    del loaded
    assert {name for name in os.listdir("/dev/shm") if not name.startswith("sem.")} == before

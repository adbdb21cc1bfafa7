"""tensorplay.multiprocessing: tensors in shared memory (share_memory_, is_shared), sent between
processes through it with the fork and spawn start methods (writes on either side seen on the
other), PyTorch's refusal of non-leaf tensors, and nothing left in /dev/shm, even by a killed process."""

import os
import signal

import pytest
import torch

import tensorplay as tp
import tensorplay.multiprocessing as mp


def shm_entries():
    return {name for name in os.listdir("/dev/shm") if not name.startswith("sem.")}


def test_share_memory_moves_the_storage_and_its_views():
    base = tp.arange(8.0)
    view = base[2:].view(2, 3)
    assert not base.is_shared() and not base.untyped_storage().is_shared()
    assert base.share_memory_() is base
    assert base.is_shared() and view.is_shared() and base.untyped_storage().is_shared()
    assert view.tolist() == [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]
    view[0, 0] = 100.0
    assert base[2].item() == 100.0
    assert base.share_memory_() is base  # already shared: nothing moves
    empty = tp.ones(0)
    assert empty.share_memory_() is empty


def _add_one(inbox, outbox):
    tensor = inbox.get()
    outbox.put(tensor.is_shared())
    tensor.add_(1)
    outbox.put(tensor.sum().item())


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensors_sent_to_a_process_share_memory_with_it(method):
    before = shm_entries()
    context = mp.get_context(method)
    inbox, outbox = context.Queue(), context.Queue()
    process = context.Process(target=_add_one, args=(inbox, outbox))
    process.start()
    tensor = tp.arange(4.0)
    inbox.put(tensor)
    assert outbox.get(timeout=60) is True
    assert outbox.get(timeout=60) == 10.0
    process.join(timeout=60)
    assert tensor.tolist() == [1.0, 2.0, 3.0, 4.0] and tensor.is_shared()
    assert shm_entries() == before


def _hold_and_die(inbox, pipe):
    tensor = inbox.get()
    pipe.send(tensor.shape[0])  # a pipe's send returns once written (a queue's is asynchronous)
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_killed_process_leaves_nothing_in_dev_shm():
    before = shm_entries()
    context = mp.get_context("spawn")
    inbox = context.Queue()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_hold_and_die, args=(inbox, sender))
    process.start()
    inbox.put(tp.ones(1000))
    assert receiver.poll(60) and receiver.recv() == 1000
    process.join(timeout=60)
    assert process.exitcode == -signal.SIGKILL
    assert shm_entries() == before


def test_non_leaf_tensors_that_require_grad_are_refused():
    x = tp.ones(2, requires_grad=True)
    queue = mp.get_context("spawn").SimpleQueue()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        queue.put(x * 2)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        torch.multiprocessing.get_context("spawn").SimpleQueue().put(torch.ones(2, requires_grad=True) * 2)


def test_the_module_is_a_drop_in_for_multiprocessing():
    import multiprocessing
    for name in ("Process", "Queue", "Pool", "get_context", "set_start_method", "cpu_count", "Manager"):
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    with pytest.raises(ValueError, match="unknown strategy"):
        mp.set_sharing_strategy("telepathy")


def _write_rank(rank, directory, world_size):
    with open(os.path.join(directory, f"rank{rank}"), "w") as f:
        f.write(f"{rank}/{world_size} {tp.ones(2).sum().item()}")


def _fail_on_one(rank):
    if rank == 1:
        raise ValueError("rank 1 gives up")


def _kill_one(rank):
    if rank == 0:
        os.kill(os.getpid(), signal.SIGKILL)


def test_spawn_runs_every_rank_and_reports_failures(tmp_path):
    assert mp.spawn(_write_rank, args=(str(tmp_path), 2), nprocs=2) is None
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0/2 2.0", "1/2 2.0"]
    with pytest.raises(mp.ProcessRaisedException, match=r"-- Process 1 terminated with the following error:\n"
                                                        r"Traceback(.|\n)*ValueError: rank 1 gives up"):
        mp.spawn(_fail_on_one, nprocs=2)
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with signal SIGKILL"):
        mp.spawn(_kill_one, nprocs=2)
    context = mp.start_processes(_write_rank, args=(str(tmp_path), 1), nprocs=1, join=False, start_method="fork")
    while not context.join():
        pass
    assert len(context.pids()) == 1

"""tensorplay.futures.Future, as torch.futures.Future behaves: set once, wait, then, callbacks,
errors; and the futures of collectives (Work.get_future)."""

import threading

import pytest

import tensorplay as tp
import tensorplay.distributed as dist
from tensorplay.futures import Future, collect_all, wait_all


def test_set_wait_then_and_callbacks():
    future, seen = Future(), []
    future.add_done_callback(lambda f: seen.append(f.value()))
    doubled = future.then(lambda f: f.value() * 2)
    assert not future.done()
    threading.Timer(0.05, future.set_result, [21]).start()
    assert future.wait() == 21 and future.done() and seen == [21]
    assert doubled.wait() == 42
    future.add_done_callback(lambda f: seen.append("late"))
    assert seen == [21, "late"]
    with pytest.raises(RuntimeError, match="Future can only be marked completed once"):
        future.set_result(1)


def test_exceptions_propagate_through_then():
    future = Future()
    future.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        future.wait()
    with pytest.raises(ValueError, match="bad"):
        future.then(lambda f: f.value() + 1).wait()
    with pytest.raises(TypeError):
        Future().set_exception("not an exception")


def test_collect_all_and_wait_all():
    futures = [Future() for _ in range(3)]
    for i, f in enumerate(futures):
        f.set_result(i)
    assert [f.value() for f in collect_all(futures).wait()] == [0, 1, 2]
    assert wait_all(futures) == [0, 1, 2]


@pytest.mark.skipif(not dist.is_available(), reason="tensorplay was built without Gloo")
def test_work_future_completes_with_the_result():
    group = dist.ProcessGroupGloo(dist.HashStore(), 0, 1)
    t = tp.ones(3)
    future = dist.all_reduce(t, group=group, async_op=True).get_future()
    (result,) = future.wait()
    assert tp.equal(result, t) and future.done()
    assert future.then(lambda f: f.value()[0].sum().item()).wait() == 3.0

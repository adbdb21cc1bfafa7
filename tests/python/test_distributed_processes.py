"""tensorplay.distributed across real processes: the three init methods, and the failures a job meets
(a rank that never joins, dies, or hangs; a bad init_method). Each rank is a subprocess with a hard
time limit, so that nothing here can hang the test run."""

import pytest

import tensorplay.distributed as dist
from distributed_helpers import free_port, launch

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="tensorplay was built without Gloo")


def test_env_tcp_and_file_init_methods(tmp_path):
    body = """
        method = os.environ["METHOD"]
        if method == "env://":
            dist.init_process_group("gloo")
        else:
            dist.init_process_group(backend="gloo", init_method=method, rank=rank, world_size=world)
        t = tp.tensor([float(rank + 1)])
        dist.all_reduce(t)
        print(dist.get_rank(), dist.get_world_size(), dist.get_backend(), dist.is_initialized(), t.item())
        dist.destroy_process_group()
        print(dist.is_initialized())
    """
    for method in ["env://", f"tcp://127.0.0.1:{free_port()}", f"file://{tmp_path}/rendezvous"]:
        results = launch(tmp_path, body, 3, env={"METHOD": method})
        for rank, (code, out, err) in enumerate(results):
            assert code == 0, err
            assert out.split() == [str(rank), "3", "gloo", "True", "6.0", "False"], (method, out)


def test_a_rank_that_never_joins_is_named(tmp_path):
    body = """
        try:
            dist.init_process_group("gloo", timeout=timedelta(seconds=2))
        except dist.DistStoreError as e:
            print(e)
    """
    [(code, out, err)] = launch(tmp_path, body, 3, ranks=[0])
    assert code == 0, err
    assert "timed out after 2000 ms: 1 of 3 joined; waiting for ranks 1, 2" in out


def test_a_rank_that_dies_is_named_by_the_survivors(tmp_path):
    body = """
        dist.init_process_group("gloo", timeout=timedelta(seconds=20))
        t = tp.ones(1000)
        dist.all_reduce(t)
        if rank == 2:
            os._exit(9)  # gone without a word, as a killed process is
        start = time.monotonic()
        try:
            dist.all_reduce(t)
        except RuntimeError as e:
            print(f"{time.monotonic() - start:.1f}", e, flush=True)
        try:
            dist.barrier()
        except RuntimeError as e:
            print("then:", e)
    """
    results = launch(tmp_path, body, 3)
    assert results[2][0] == 9
    for rank in (0, 1):
        code, out, err = results[rank]
        assert code == 0, err
        first, then = out.splitlines()
        seconds, message = first.split(" ", 1)
        # Usually at once; at worst at the timeout (20 s) and the few seconds spent naming absent
        # ranks: Gloo leaves a receive posted before its peer died waiting for the timeout.
        assert float(seconds) < 27
        assert message.startswith("[all_reduce #") and f"] rank {rank}: " in message
        assert "(float32[1000], world 3)" in message
        assert then == "then: " + message + " (the process group is broken since this error; create a new one)"
    # The dead rank's neighbour in the ring sends to it, and so learns at once which rank is gone.
    assert any("rank 2 closed the connection" in out for _, out, _ in results[:2])


def test_a_rank_that_hangs_is_named_after_the_timeout(tmp_path):
    body = """
        dist.init_process_group("gloo", timeout=timedelta(seconds=2))
        if rank == 1:
            time.sleep(15)  # stuck in its own code; never reaches the collective
            os._exit(0)
        try:
            dist.all_reduce(tp.ones(10))
        except RuntimeError as e:
            print(e)
    """
    results = launch(tmp_path, body, 3)
    for rank in (0, 2):
        code, out, err = results[rank]
        assert code == 0, err
        assert f"[all_reduce #0] rank {rank}: timed out after 2000 ms" in out
        assert "rank 1 never reached it (float32[10], world 3)" in out


def test_monitored_barrier_names_the_missing_ranks(tmp_path):
    body = """
        dist.init_process_group("gloo", timeout=timedelta(seconds=20))
        dist.monitored_barrier(timeout=timedelta(seconds=5))
        if rank >= 2:
            time.sleep(8)
            os._exit(0)
        try:
            dist.monitored_barrier(timeout=timedelta(seconds=1), wait_all_ranks=True)
            print("passed")
        except RuntimeError as e:
            print(e)
    """
    results = launch(tmp_path, body, 4)
    assert results[0][1] == "[monitored_barrier #1] rank 0: ranks 2, 3 did not arrive within 1000 ms (world 4)\n"
    assert results[1][1] == ("[monitored_barrier #1] rank 1: rank 0 did not release the barrier within 1000 ms (it "
                             "names the ranks it missed) (world 4)\n")


def test_bad_init_methods(tmp_path):
    body = """
        for method, kwargs in [("bogus://x", dict(rank=0, world_size=1)), ("env://", {}),
                               ("tcp://127.0.0.1:1", {})]:
            try:
                dist.init_process_group("gloo", init_method=method, **kwargs)
            except (RuntimeError, ValueError) as e:
                print(type(e).__name__, e)
        for backend in ["nccl", "foo"]:
            try:
                dist.init_process_group(backend, init_method="file:///tmp/x", rank=0, world_size=1)
            except (RuntimeError, ValueError) as e:
                print(type(e).__name__, e)
        try:
            dist.get_rank()
        except ValueError as e:
            print(type(e).__name__, e)
    """
    [(code, out, err)] = launch(tmp_path, body, 1, env={"RANK": None, "MASTER_ADDR": None})
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "RuntimeError No rendezvous handler for bogus://"
    assert lines[1].startswith("ValueError Error initializing torch.distributed using env:// rendezvous: "
                               "environment variable RANK expected")
    assert lines[2].startswith("ValueError Error initializing torch.distributed using tcp:// rendezvous: rank and "
                               "world_size must be given")
    assert lines[3] == "RuntimeError Distributed package doesn't have NCCL built in"
    assert lines[4].startswith("ValueError Unknown backend type 'foo'")
    assert lines[5] == ("ValueError Default process group has not been initialized, please make sure to call "
                        "init_process_group.")


def test_without_the_call_check_collectives_still_agree(tmp_path):
    """TP_DISTRIBUTED_DEBUG=OFF skips comparing the ranks' calls; the collectives are the same."""
    body = """
        dist.init_process_group("gloo")
        t = tp.full((1000,), float(rank))
        dist.all_reduce(t)
        outputs = [tp.empty(2) for _ in range(world)]
        dist.all_gather(outputs, tp.full((2,), float(rank)))
        print(t[0].item(), [o.tolist() for o in outputs])
    """
    for code, out, err in launch(tmp_path, body, 3, env={"TP_DISTRIBUTED_DEBUG": "OFF"}):
        assert code == 0, err
        assert out.strip() == "3.0 [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]"


def test_subgroups_cut_the_world_and_reduce_apart(tmp_path):
    body = """
        dist.init_process_group("gloo")
        for bad in (None, 3, 0, 8):
            try:
                dist.new_subgroups(bad)
            except ValueError as e:
                print("error:", e)
        mine, groups = dist.new_subgroups(2)
        t = tp.tensor([float(rank)])
        dist.all_reduce(t, group=mine)
        print(dist.get_process_group_ranks(mine), len(groups), t.item())
        mine, groups = dist.new_subgroups_by_enumeration([[0, 3], [1, 2]])
        t = tp.tensor([float(rank)])
        dist.all_reduce(t, group=mine)
        print(dist.get_process_group_ranks(mine), [g == dist.GroupMember.NON_GROUP_MEMBER for g in groups], t.item())
        try:
            dist.new_subgroups_by_enumeration([[0, 1], [1, 2]])
        except ValueError as e:
            print("error:", e)
        dist.destroy_process_group()
    """
    results = launch(tmp_path, body, 4)
    pairs = [[0, 1], [0, 1], [2, 3], [2, 3]]
    crossed = [[0, 3], [1, 2], [1, 2], [0, 3]]
    for rank, (code, out, err) in enumerate(results):
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].startswith("error: Default group size only takes effect when CUDA is available.")
        assert lines[1:4] == ["error: The world size (4) must be divisible by 'group_size=3'",
                              "error: The arg 'group_size' (0) must be positive",
                              "error: The arg 'group_size' (8) must not exceed the world size (4)"]
        assert lines[4] == f"{pairs[rank]} 2 {float(sum(pairs[rank]))}"
        assert lines[5] == f"{crossed[rank]} {[rank not in (0, 3), rank not in (1, 2)]} {float(sum(crossed[rank]))}"
        assert lines[6] == "error: Rank 1 has appeared in both subgroup [0, 1] and [1, 2]"


def test_a_registered_rendezvous_handler_is_used_for_its_scheme(tmp_path):
    body = """
        def handler(url, timeout):
            print("url:", url, timeout.total_seconds())
            yield dist.HashStore(), 0, 1
        dist.register_rendezvous_handler("mine", handler)
        try:
            dist.register_rendezvous_handler("env", handler)
        except RuntimeError as e:
            print("error:", e)
        dist.init_process_group("gloo", init_method="mine://here", rank=0, world_size=1, timeout=timedelta(seconds=9))
        print(dist.get_rank(), dist.get_world_size())
        dist.destroy_process_group()
    """
    [(code, out, err)] = launch(tmp_path, body, 1)
    assert code == 0, err
    assert out.splitlines() == ["error: Rendezvous handler for env:// already registered",
                                "url: mine://here?rank=0&world_size=1 9.0", "0 1"]

"""Every collective on Gloo, against NumPy: world sizes 2, 3 and 4, one thread per rank in this
process (each rank its own ProcessGroupGloo over one HashStore), every dtype and every ReduceOp."""

import concurrent.futures
import functools
from datetime import timedelta

import ml_dtypes
import numpy as np
import pytest
import torch

import tensorplay as tp
import tensorplay.distributed as dist
from distributed_helpers import free_port

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="tensorplay was built without Gloo")

WORLD_SIZES = [2, 3, 4]
DTYPES = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64, tp.bool,
          tp.complex64, tp.complex128]
NUMPY = {tp.uint8: np.uint8, tp.int8: np.int8, tp.int16: np.int16, tp.int32: np.int32, tp.int64: np.int64,
         tp.float16: np.float16, tp.bfloat16: ml_dtypes.bfloat16, tp.float32: np.float32, tp.float64: np.float64,
         tp.bool: np.bool_, tp.complex64: np.complex64, tp.complex128: np.complex128}
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
TIMEOUT = 60  # seconds any one collective may take before the test fails instead of hanging


class Ranks:
    """world ProcessGroupGloo objects in this process, and a thread per rank to call them from."""

    def __init__(self, world):
        self.world = world
        store = dist.HashStore()
        self.pool = concurrent.futures.ThreadPoolExecutor(world)
        make = functools.partial(dist.ProcessGroupGloo, dist.PrefixStore(f"w{world}", store), size=world,
                                 timeout=timedelta(seconds=TIMEOUT))
        self.groups = self.run(lambda rank, _: make(rank=rank))

    def run(self, fn):
        """[fn(rank, group) for each rank], each called on its own thread."""
        groups = getattr(self, "groups", [None] * self.world)
        futures = [self.pool.submit(fn, rank, groups[rank]) for rank in range(self.world)]
        return [f.result(timeout=TIMEOUT) for f in futures]


@pytest.fixture(scope="module", params=WORLD_SIZES, ids=lambda w: f"world{w}")
def ranks(request):
    r = Ranks(request.param)
    yield r
    r.groups = None
    r.pool.shutdown()


def rank_values(dtype, rank, shape=(2, 3)):
    """Small values that differ by rank and that no reduction overflows, in dtype."""
    n = int(np.prod(shape))
    values = (np.arange(n) + rank) % 3 + 1
    if dtype == tp.bool:
        values = (np.arange(n) + rank) % 2
    if dtype.is_complex:
        values = values + 1j * ((np.arange(n) * (rank + 1)) % 2)
    return values.reshape(shape).astype(NUMPY[dtype])


def to_tensor(array):
    return tp.from_numpy(array.copy()) if array.dtype != ml_dtypes.bfloat16 else \
        tp.from_numpy(array.astype(np.float32)).to(tp.bfloat16)


def to_numpy(tensor):
    if tensor.dtype == tp.bfloat16:
        return tensor.float().numpy().astype(ml_dtypes.bfloat16)
    return tensor.numpy()


def supported(dtype, op):
    if op in ("BAND", "BOR", "BXOR"):
        return not (dtype.is_floating_point or dtype.is_complex)
    if op == "AVG":
        return dtype.is_floating_point or dtype.is_complex
    if dtype.is_complex:
        return op in ("SUM", "AVG")
    return True


def numpy_reduce(arrays, op):
    exact = [a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) if a.dtype.kind == "f" or
             a.dtype == ml_dtypes.bfloat16 or np.iscomplexobj(a) else a for a in arrays]
    if arrays[0].dtype == np.bool_:
        fn = {"SUM": np.logical_or, "MAX": np.logical_or, "BOR": np.logical_or, "PRODUCT": np.logical_and,
              "MIN": np.logical_and, "BAND": np.logical_and, "BXOR": np.logical_xor}[op]
    else:
        fn = {"SUM": np.add, "AVG": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum,
              "BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}[op]
    result = functools.reduce(fn, exact)
    if op == "AVG":
        result = result / len(arrays)
    return np.asarray(result).astype(arrays[0].dtype)


def error_type(dtype):
    return ValueError if dtype.is_complex else RuntimeError


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_all_reduce(ranks, dtype, op):
    inputs = [rank_values(dtype, r) for r in range(ranks.world)]
    reduce_op = getattr(dist.ReduceOp, op)

    def call(rank, group):
        t = to_tensor(inputs[rank])
        if not supported(dtype, op):
            with pytest.raises(error_type(dtype), match=f"all_reduce.*{op}"):
                dist.all_reduce(t, reduce_op, group=group)
            return None
        dist.all_reduce(t, reduce_op, group=group)
        return to_numpy(t)

    results = ranks.run(call)
    if supported(dtype, op):
        expected = numpy_reduce(inputs, op)
        for result in results:
            assert result.dtype == expected.dtype
            np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("op", ["SUM", "PRODUCT"])
def test_long_float32_reductions(ranks, op):
    """float32 sums and products take a vectorised kernel: Gloo hands it segments of every length,
    vector tails included."""
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(0.5, 1.5, 100_003).astype(np.float32) for _ in range(ranks.world)]

    def call(rank, group):
        t = tp.from_numpy(inputs[rank].copy())
        dist.all_reduce(t, getattr(dist.ReduceOp, op), group=group)
        return t.numpy()

    expected = numpy_reduce(inputs, op)
    for result in ranks.run(call):
        np.testing.assert_allclose(result, expected, rtol=1e-6)


@pytest.mark.parametrize("dtype, op", [(d, op) for d in [tp.int32, tp.float32, tp.bfloat16, tp.complex64]
                                       for op in ["SUM", "MAX", "AVG"] if supported(d, op)], ids=str)
def test_reduce_and_reduce_scatter(ranks, dtype, op):
    world = ranks.world
    inputs = [rank_values(dtype, r, (world, 2)) for r in range(world)]
    expected = numpy_reduce(inputs, op)
    reduce_op = getattr(dist.ReduceOp, op)

    def call(rank, group):
        t = to_tensor(inputs[rank])
        dist.reduce(t, dst=1, op=reduce_op, group=group)
        out = tp.empty(2, dtype=dtype)
        source = to_tensor(inputs[rank])
        dist.reduce_scatter_tensor(out, source, reduce_op, group=group)
        np.testing.assert_array_equal(to_numpy(source), inputs[rank])  # the input is left as it was
        return to_numpy(t), to_numpy(out)

    for rank, (reduced, scattered) in enumerate(ranks.run(call)):
        np.testing.assert_array_equal(reduced, expected if rank == 1 else inputs[rank])
        np.testing.assert_array_equal(scattered, expected[rank])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_data_movement(ranks, dtype):
    """broadcast, all_gather, all_gather_into_tensor, gather, scatter, all_to_all_single."""
    world = ranks.world
    inputs = [rank_values(dtype, r, (world, 3)) for r in range(world)]

    def call(rank, group):
        got = {}
        t = to_tensor(inputs[rank])
        dist.broadcast(t, src=world - 1, group=group)
        got["broadcast"] = to_numpy(t)
        outputs = [tp.empty((world, 3), dtype=dtype) for _ in range(world)]
        dist.all_gather(outputs, to_tensor(inputs[rank]), group=group)
        got["all_gather"] = np.stack([to_numpy(o) for o in outputs])
        flat = tp.empty((world * world, 3), dtype=dtype)
        dist.all_gather_into_tensor(flat, to_tensor(inputs[rank]), group=group)
        got["all_gather_into_tensor"] = to_numpy(flat)
        gathered = [tp.empty((world, 3), dtype=dtype) for _ in range(world)] if rank == 0 else None
        dist.gather(to_tensor(inputs[rank]), gathered, dst=0, group=group)
        got["gather"] = np.stack([to_numpy(g) for g in gathered]) if rank == 0 else None
        out = tp.empty((world, 3), dtype=dtype)
        dist.scatter(out, [to_tensor(inputs[r]) for r in range(world)] if rank == 1 else None, src=1, group=group)
        got["scatter"] = to_numpy(out)
        exchanged = tp.empty((world, 3), dtype=dtype)
        dist.all_to_all_single(exchanged, to_tensor(inputs[rank]), group=group)
        got["all_to_all_single"] = to_numpy(exchanged)
        return got

    stacked = np.stack(inputs)
    for rank, got in enumerate(ranks.run(call)):
        np.testing.assert_array_equal(got["broadcast"], inputs[world - 1])
        np.testing.assert_array_equal(got["all_gather"], stacked)
        np.testing.assert_array_equal(got["all_gather_into_tensor"], stacked.reshape(world * world, 3))
        if rank == 0:
            np.testing.assert_array_equal(got["gather"], stacked)
        np.testing.assert_array_equal(got["scatter"], inputs[rank])
        np.testing.assert_array_equal(got["all_to_all_single"], stacked[:, rank])


def test_non_contiguous_tensors(ranks):
    """Results land in strided tensors (a transpose, a step slice) as in contiguous ones."""
    world = ranks.world

    def call(rank, group):
        base = tp.arange(12, dtype=tp.float32).view(3, 4) * (rank + 1)
        t = base.t()
        dist.all_reduce(t, group=group)
        strided = tp.zeros(8)[::2]
        strided += rank
        dist.broadcast(strided, src=0, group=group)
        outputs = [tp.zeros(4, 2).t() for _ in range(world)]
        dist.all_gather(outputs, tp.full((2, 4), float(rank)), group=group)
        return base.numpy(), strided.numpy(), [o.numpy() for o in outputs]

    scale = sum(range(1, world + 1))
    for base, strided, outputs in ranks.run(call):
        np.testing.assert_array_equal(base, np.arange(12, dtype=np.float32).reshape(3, 4) * scale)
        np.testing.assert_array_equal(strided, np.zeros(4))
        for r, o in enumerate(outputs):
            np.testing.assert_array_equal(o, np.full((2, 4), r))


def test_bfloat16_sums_accumulate_in_float32(ranks):
    """1 on rank 0 and 2**-8 on the others: bfloat16 steps would drop a 2**-8 added to 1, while the
    float32 sum is rounded once."""
    world = ranks.world

    def call(rank, group):
        t = tp.full((5,), 1.0 if rank == 0 else 2 ** -8, dtype=tp.bfloat16)
        dist.all_reduce(t, group=group)
        return t.float().numpy()

    expected = np.float32(ml_dtypes.bfloat16(1 + (world - 1) * 2 ** -8))
    for result in ranks.run(call):
        np.testing.assert_array_equal(result, np.full(5, expected))


@pytest.mark.parametrize("dtype", [tp.bfloat16, tp.float16], ids=str)
def test_16bit_reductions_round_once(ranks, dtype):
    """16-bit floats travel as themselves and are summed in float32 in rank order, then rounded once:
    random values, an element count no world size divides, a strided tensor, and each reducing
    collective (a non-root rank's reduce input is left as it was)."""
    world = ranks.world
    rng = np.random.default_rng(world)
    inputs = [rng.standard_normal((7, 2)).astype(NUMPY[dtype]) for _ in range(world)]
    wide = [a.astype(np.float32) for a in inputs]
    total = functools.reduce(np.add, wide)
    expected = {"SUM": total.astype(NUMPY[dtype]), "AVG": (total / np.float32(world)).astype(NUMPY[dtype])}
    scatter_inputs = [rng.standard_normal(world * 3).astype(NUMPY[dtype]) for _ in range(world)]
    scattered = functools.reduce(np.add, [a.astype(np.float32) for a in scatter_inputs]).astype(NUMPY[dtype])

    def call(rank, group):
        got = {}
        for op in ("SUM", "AVG"):
            t = to_tensor(np.ascontiguousarray(inputs[rank].T)).t()  # 7 x 2, strided
            dist.all_reduce(t, getattr(dist.ReduceOp, op), group=group)
            got[op] = to_numpy(t.contiguous())
        t = to_tensor(inputs[rank][:, 0].copy())
        dist.reduce(t, dst=world - 1, group=group)
        got["reduce"] = to_numpy(t)
        out = tp.empty(3, dtype=dtype)
        dist.reduce_scatter_tensor(out, to_tensor(scatter_inputs[rank]), group=group)
        got["reduce_scatter"] = to_numpy(out)
        return got

    for rank, got in enumerate(ranks.run(call)):
        for op in ("SUM", "AVG"):
            np.testing.assert_array_equal(got[op], expected[op])
        np.testing.assert_array_equal(got["reduce"], expected["SUM"][:, 0] if rank == world - 1 else inputs[rank][:, 0])
        np.testing.assert_array_equal(got["reduce_scatter"], scattered[3 * rank:3 * rank + 3])


def test_async_work(ranks):
    def call(rank, group):
        t = tp.ones(1000) * rank
        work = dist.all_reduce(t, group=group, async_op=True)
        assert work.wait(timedelta(seconds=TIMEOUT))
        assert work.is_completed() and work.is_success() and work.exception() is None
        (result,) = work.result()
        assert result is t or tp.equal(result, t)
        barrier = dist.barrier(group=group, async_op=True)
        barrier.wait()
        return float(t[0])

    assert ranks.run(call) == [float(sum(range(ranks.world)))] * ranks.world


def test_blocking_calls_complete_in_order_after_queued_async_ones(ranks):
    """A call without async_op returns once it has run, and after every call made before it; the
    calls' fingerprints stay matched across a monitored barrier (which is not checked)."""
    world = ranks.world

    def call(rank, group):
        queued = [tp.full((1000,), float(rank + i)) for i in range(4)]
        works = [dist.all_reduce(t, group=group, async_op=True) for t in queued]
        now = tp.full((3,), float(rank))
        done = group._impl.all_reduce(now, dist.ReduceOp.SUM, async_op=False)
        in_order = done.is_completed() and all(w.is_completed() for w in works)
        dist.monitored_barrier(group=group, timeout=timedelta(seconds=TIMEOUT))
        root = tp.full((2,), float(rank))
        dist.broadcast(root, src=world - 1, group=group)
        return in_order, [float(t[0]) for t in queued], now.tolist(), root.tolist()

    total = float(sum(range(world)))
    for in_order, queued, now, root in ranks.run(call):
        assert in_order
        assert queued == [total + world * i for i in range(4)]
        assert now == [total] * 3
        assert root == [float(world - 1)] * 2


def test_send_recv(ranks):
    """A ring of sends; receives from a named rank and from any rank (which says who sent)."""
    world = ranks.world

    def call(rank, group):
        right, left = (rank + 1) % world, (rank - 1) % world
        send = dist.isend(tp.full((3,), float(rank)), dst=right, group=group, tag=7)
        got = tp.empty(3)
        dist.recv(got, src=left, group=group, tag=7)
        send.wait()
        anywhere = tp.empty(2, dtype=tp.int64)
        if rank == 0:
            sources = []
            for _ in range(world - 1):
                sources.append(dist.recv(anywhere, group=group, tag=9))
                assert anywhere.tolist() == [sources[-1]] * 2
            return got.tolist(), sorted(sources)
        dist.send(tp.full((2,), rank, dtype=tp.int64), dst=0, group=group, tag=9)
        return got.tolist(), None

    results = ranks.run(call)
    for rank, (got, sources) in enumerate(results):
        assert got == [float((rank - 1) % world)] * 3
    assert results[0][1] == list(range(1, world))


def test_sequence_numbers_and_mismatch(ranks):
    """Ranks that call differently shaped collectives all get an error naming every rank's call, and
    the group stays usable (no data had moved)."""
    world = ranks.world

    def call(rank, group):
        with pytest.raises(RuntimeError) as error:
            dist.all_reduce(tp.ones(4 + rank), group=group)
        t = tp.ones(2)
        dist.all_reduce(t, group=group)
        return str(error.value), t.tolist()

    for rank, (message, after) in enumerate(ranks.run(call)):
        assert f"rank {rank}: the ranks called different collectives" in message
        for r in range(world):
            assert f"rank {r} all_reduce #" in message and f"float32[{4 + r}]" in message
        assert after == [float(world)] * 2


def test_object_collectives(ranks):
    world = ranks.world

    def call(rank, group):
        objects = [None] * world
        dist.all_gather_object(objects, {"rank": rank, "data": list(range(rank))}, group=group)
        sent = ["hello", {"n": 3}] if rank == 0 else [None, None]
        dist.broadcast_object_list(sent, src=0, group=group)
        gathered = [None] * world if rank == 1 else None
        dist.gather_object(rank * 10, gathered, dst=1, group=group)
        mine = [None]
        dist.scatter_object_list(mine, [f"to {r}" for r in range(world)] if rank == 0 else None, src=0, group=group)
        return objects, sent, gathered, mine[0]

    for rank, (objects, sent, gathered, mine) in enumerate(ranks.run(call)):
        assert objects == [{"rank": r, "data": list(range(r))} for r in range(world)]
        assert sent == ["hello", {"n": 3}]
        assert gathered == ([r * 10 for r in range(world)] if rank == 1 else None)
        assert mine == f"to {rank}"


def test_argument_errors(ranks):
    world = ranks.world

    def call(rank, group):
        with pytest.raises(RuntimeError, match=r"\[broadcast\] root 7 is out of range for world size"):
            dist.broadcast(tp.ones(1), src=7, group=group)
        with pytest.raises(ValueError, match="Group rank 7 is not part of group"):
            dist.broadcast(tp.ones(1), group_src=7, group=group)
        with pytest.raises(RuntimeError, match=r"\[all_gather\] tensor_list has 1 tensors"):
            dist.all_gather([tp.ones(1)], tp.ones(1), group=group)
        with pytest.raises(RuntimeError, match=r"\[all_gather\] an output tensor is float32\[2\]"):
            dist.all_gather([tp.ones(2)] * world, tp.ones(1), group=group)
        with pytest.raises(ValueError, match="gather_list`` must be specified on destination rank"):
            dist.gather(tp.ones(1), None, dst=rank, group=group)
        with pytest.raises(ValueError, match="destination rank should not be the same"):
            dist.send(tp.ones(1), dst=rank, group=group)
        with pytest.raises(TypeError, match="tensor_list"):
            dist.all_gather(tp.ones(1), tp.ones(1), group=group)
        return True

    assert all(ranks.run(call))


def test_world_of_one():
    group = dist.ProcessGroupGloo(dist.HashStore(), 0, 1)
    t = tp.arange(4.)
    dist.all_reduce(t, dist.ReduceOp.AVG, group=group)
    out = [tp.empty(4)]
    dist.all_gather(out, t, group=group)
    dist.barrier(group=group)
    assert t.tolist() == [0, 1, 2, 3] and out[0].tolist() == [0, 1, 2, 3]


@pytest.mark.filterwarnings("ignore:`torch.distributed.all_(reduce|gather)_coalesced` will be deprecated")
def test_coalesced_and_single_forms(ranks):
    """all_reduce_coalesced and all_gather_coalesced over tensors of several shapes (a complex one
    beside its real dtype), synchronous and as Futures; all_gather_single and reduce_scatter_single,
    PyTorch's other names for the tensor forms."""
    world = ranks.world

    def inputs(rank):
        return [tp.full((3,), float(rank + 1)), tp.arange(4.).reshape(2, 2) * (rank + 1),
                tp.tensor([complex(rank, 1)])]

    def call(rank, group):
        got = {}
        tensors = inputs(rank)
        assert dist.all_reduce_coalesced(tensors, group=group) is None
        got["sum"] = [t.tolist() for t in tensors]
        tensors = inputs(rank)
        future = dist.all_reduce_coalesced(tensors, dist.ReduceOp.AVG, group=group, async_op=True)
        got["avg"] = [t.tolist() for t in future.wait()]
        outputs = [[tp.empty(3), tp.empty(2, 2), tp.empty(1, dtype=tp.complex64)] for _ in range(world)]
        dist.all_gather_coalesced(outputs, inputs(rank), group=group)
        got["gathered"] = [[t.tolist() for t in ts] for ts in outputs]
        single = tp.empty(world, 2)
        dist.all_gather_single(single, tp.full((2,), float(rank)), group=group)
        got["all_gather_single"] = single.tolist()
        out = tp.empty(2)
        dist.reduce_scatter_single(out, tp.arange(2. * world), group=group)
        got["reduce_scatter_single"] = out.tolist()
        return got

    ranks_sum = sum(range(1, world + 1))
    for rank, got in enumerate(ranks.run(call)):
        assert got["sum"] == [[float(ranks_sum)] * 3, [[0.0, ranks_sum], [2.0 * ranks_sum, 3.0 * ranks_sum]],
                              [complex(sum(range(world)), world)]]
        assert got["avg"] == [[ranks_sum / world] * 3, [[0.0, ranks_sum / world], [2 * ranks_sum / world,
                                                                                   3 * ranks_sum / world]],
                              [complex(sum(range(world)) / world, 1)]]
        assert got["gathered"] == [[t.tolist() for t in inputs(r)] for r in range(world)]
        assert got["all_gather_single"] == [[float(r)] * 2 for r in range(world)]
        assert got["reduce_scatter_single"] == [float(world * (2 * rank)), float(world * (2 * rank + 1))]


def test_coalesced_forms_warn_and_check_like_torch():
    group = dist.ProcessGroupGloo(dist.HashStore(), 0, 1)
    with pytest.warns(FutureWarning, match="`torch.distributed.all_reduce_coalesced` will be deprecated"):
        dist.all_reduce_coalesced(tp.ones(2), group=group)
    with pytest.warns(FutureWarning, match="`torch.distributed.all_gather_coalesced` will be deprecated"):
        dist.all_gather_coalesced([[tp.empty(2)]], [tp.ones(2)], group=group)
    with pytest.warns(FutureWarning):
        with pytest.raises(ValueError, match="Invalid usage of tensors with different dtypes"):
            dist.all_reduce_coalesced([tp.ones(2), tp.ones(2, dtype=tp.float64)], group=group)
        with pytest.raises(ValueError, match="all_reduce does not support .*MAX on complex tensors"):
            dist.all_reduce_coalesced([tp.ones(2, dtype=tp.complex64)], dist.ReduceOp.MAX, group=group)
        with pytest.raises(TypeError, match="output_tensor_lists should be a list"):
            dist.all_gather_coalesced((tp.ones(2),), [tp.ones(2)], group=group)
        with pytest.raises(TypeError, match="input_tensor_list"):
            dist.all_gather_coalesced([[tp.ones(2)]], tp.ones(2), group=group)


def test_all_to_all_with_uneven_splits(ranks):
    """Rank s sends (s + d) % 3 rows of 2 values to rank d (some none, rank 0 none at all when the
    world is 3), each row naming its sender, receiver and index; all_to_all with tensors of different
    shapes likewise."""
    world = ranks.world

    def rows(src, dst):
        return 0 if src == 0 and world == 3 else (src + dst) % 3

    def call(rank, group):
        sent = [[float(100 * rank + 10 * dst + k), -1.0] for dst in range(world) for k in range(rows(rank, dst))]
        received = tp.full((sum(rows(src, rank) for src in range(world)), 2), float("nan"))
        dist.all_to_all_single(received, tp.tensor(sent).reshape(-1, 2), [rows(src, rank) for src in range(world)],
                               [rows(rank, dst) for dst in range(world)], group=group)
        outputs = [tp.empty(rows(src, rank) + 1, 3) for src in range(world)]
        dist.all_to_all(outputs, [tp.full((rows(rank, dst) + 1, 3), float(10 * rank + dst)) for dst in range(world)],
                        group=group)
        return received.tolist(), [o.tolist() for o in outputs]

    for rank, (received, outputs) in enumerate(ranks.run(call)):
        assert received == [[float(100 * src + 10 * rank + k), -1.0] for src in range(world)
                            for k in range(rows(src, rank))]
        assert outputs == [[[float(10 * src + rank)] * 3] * (rows(src, rank) + 1) for src in range(world)]


def test_all_to_all_splits_that_disagree_raise_on_every_rank(ranks):
    """Rank 0 expects one row more from the last rank than that rank sends: every rank raises, naming
    them, before any data moves (Gloo would abort the process), and the group goes on working."""
    world = ranks.world

    def call(rank, group):
        expected = [1] * world
        if rank == 0:
            expected[world - 1] = 2
        message = rf"\[all_to_all_single #\d+\] rank {rank}: rank {world - 1} sends 1 rows to rank 0, whose " \
                  r"output_split_sizes expect 2"
        with pytest.raises(RuntimeError, match=message):
            dist.all_to_all_single(tp.empty(sum(expected)), tp.zeros(world), expected, [1] * world, group=group)
        t = tp.ones(2)
        dist.all_reduce(t, group=group)
        return t.tolist()

    assert ranks.run(call) == [[float(world)] * 2] * world


def test_all_to_all_split_sizes_are_checked_like_torch():
    group = dist.ProcessGroupGloo(dist.HashStore(), 0, 1)
    with pytest.raises(RuntimeError, match="Split sizes doesn't match total dim 0 size"):
        dist.all_to_all_single(tp.empty(3), tp.zeros(3), [3], [2], group=group)
    with pytest.raises(RuntimeError, match="Number of tensor splits not equal to group size"):
        dist.all_to_all_single(tp.empty(3), tp.zeros(3), [1, 2], [3], group=group)
    with pytest.raises(RuntimeError, match="all_to_all_single.*they must agree but in their first dimension"):
        dist.all_to_all_single(tp.empty(3, 2), tp.zeros(3), group=group)
    out = tp.empty(2, 2)
    dist.all_to_all_single(out, tp.arange(4.).reshape(2, 2), [2], [2], group=group)
    assert out.tolist() == [[0, 1], [2, 3]]


def test_list_forms_and_point_to_point_batches(ranks):
    """all_to_all and reduce_scatter (the list forms), batch_isend_irecv, send/recv_object_list."""
    world = ranks.world

    def call(rank, group):
        got = {}
        outputs = [tp.empty(2) for _ in range(world)]
        dist.all_to_all(outputs, [tp.full((2,), float(10 * rank + r)) for r in range(world)], group=group)
        got["all_to_all"] = [o.tolist() for o in outputs]
        out = tp.empty(3)
        dist.reduce_scatter(out, [tp.full((3,), float(rank + r)) for r in range(world)], group=group)
        got["reduce_scatter"] = out.tolist()
        right, left = (rank + 1) % world, (rank - 1) % world
        received = tp.empty(4)
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, tp.full((4,), float(rank)), right, group),
                                        dist.P2POp(dist.irecv, received, left, group)])
        for work in works:
            work.wait()
        got["batch"] = received.tolist()
        if rank == 0:
            dist.send_object_list([{"to": 1}, "two"], dst=1, group=group)
        elif rank == 1:
            objects = [None, None]
            got["sender"] = dist.recv_object_list(objects, group=group)
            got["objects"] = objects
        return got

    for rank, got in enumerate(ranks.run(call)):
        assert got["all_to_all"] == [[float(10 * r + rank)] * 2 for r in range(world)]
        assert got["reduce_scatter"] == [float(sum(r + rank for r in range(world)))] * 3
        assert got["batch"] == [float((rank - 1) % world)] * 4
        if rank == 1:
            assert got["sender"] == 0 and got["objects"] == [{"to": 1}, "two"]


@pytest.mark.parametrize("lib", ["tensorplay", "torch"])
def test_store_errors_are_pytorchs_dist_errors(lib):
    """A store's timeouts raise DistStoreError, a refused connection DistNetworkError: both DistErrors,
    which are RuntimeErrors."""
    d = dist if lib == "tensorplay" else torch.distributed
    assert issubclass(d.DistStoreError, d.DistError) and issubclass(d.DistNetworkError, d.DistError)
    assert issubclass(d.DistBackendError, d.DistError) and issubclass(d.DistError, RuntimeError)
    short = timedelta(milliseconds=200)
    store = d.HashStore()
    store.set_timeout(short)
    with pytest.raises(d.DistStoreError):
        store.get("never set")
    with pytest.raises(d.DistStoreError):
        d.PrefixStore("p", store).wait(["never set"])
    with pytest.raises(d.DistNetworkError):
        d.TCPStore("127.0.0.1", free_port(), is_master=False, timeout=short)
    with pytest.raises(d.DistStoreError):
        d.TCPStore("127.0.0.1", 0, world_size=2, is_master=True, timeout=short)


def test_small_helpers(monkeypatch):
    assert dist.supports_complex(dist.ReduceOp.SUM) and dist.supports_complex(dist.ReduceOp.AVG)
    assert not any(dist.supports_complex(getattr(dist.ReduceOp, op)) for op in ("MAX", "MIN", "PRODUCT", "BAND"))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert dist.get_node_local_rank(fallback_rank=3) == 1
    with pytest.raises(ValueError, match="Expected ``op`` to be of type"):
        dist.P2POp(dist.all_reduce, tp.ones(1), 0)

"""The process groups and their collectives, with torch.distributed's names, signatures, defaults and
errors. A ProcessGroup here is a thin Python handle (its global ranks, its backend) on a C++ process
group, which runs the collectives on a worker thread and returns a Work; ``async_op=False`` waits on
it at once. Ranks given to the functions (``src``, ``dst``) are global ranks, as in PyTorch; the
group-local ones are ``group_src``/``group_dst``."""

import fcntl
import io
import os
import pickle
import socket
import struct
import threading
import warnings
from datetime import timedelta

import tensorplay
from tensorplay._C import _distributed as _dist
from tensorplay.distributed import rendezvous
from tensorplay.distributed.store import PrefixStore
from tensorplay.futures import Future

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ProcessGroupGloo", "ReduceOp", "Work", "group", "init_process_group",
    "destroy_process_group", "is_initialized", "is_gloo_available", "is_nccl_available", "is_mpi_available",
    "is_ucc_available", "is_xccl_available", "is_backend_available", "is_torchelastic_launched", "get_rank",
    "get_world_size", "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks", "new_group",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "gather",
    "scatter", "all_to_all_single", "barrier", "monitored_barrier", "send", "recv", "isend", "irecv",
    "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list", "get_default_backend_for_device",
    "default_pg_timeout", "all_to_all", "reduce_scatter", "P2POp", "batch_isend_irecv", "send_object_list",
    "recv_object_list", "get_node_local_rank", "supports_complex", "get_pg_count", "new_subgroups",
    "new_subgroups_by_enumeration", "register_rendezvous_handler", "timedelta", "all_gather_single",
    "reduce_scatter_single", "all_reduce_coalesced", "all_gather_coalesced",
]

Work = _dist.Work
default_pg_timeout = timedelta(minutes=30)


def _work_future(work):
    """A Future of the tensors work writes, complete once work is."""
    return Future(_completes_by=lambda: (work.wait(), work.result())[1], _ready=work.is_completed)


Work.get_future = _work_future


class ReduceOp:
    """How reducing collectives combine: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``,
    ``BAND``, ``BOR``, ``BXOR`` (values of ``ReduceOp.RedOpType``, as in PyTorch)."""

    RedOpType = _dist.RedOpType
    SUM = _dist.RedOpType.SUM
    AVG = _dist.RedOpType.AVG
    PRODUCT = _dist.RedOpType.PRODUCT
    MIN = _dist.RedOpType.MIN
    MAX = _dist.RedOpType.MAX
    BAND = _dist.RedOpType.BAND
    BOR = _dist.RedOpType.BOR
    BXOR = _dist.RedOpType.BXOR


class Backend(str):
    """A backend's name: ``Backend.GLOO == "gloo"``. Names are lower-cased as PyTorch does."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    default_device_backend_map = {"cpu": GLOO}
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None


class ProcessGroup:
    """A group of ranks (the default group, or one from ``new_group``). ``rank()`` and ``size()`` are
    this process's rank in the group and the group's size."""

    def __init__(self, impl, ranks, backend, name):
        self._impl = impl
        self._ranks = list(ranks)
        self._backend = backend
        self._name = name

    def rank(self):
        return self._impl.rank()

    def size(self):
        return self._impl.size()

    def name(self):
        return self._backend

    @property
    def group_name(self):
        return self._name

    def __repr__(self):
        return f"<tensorplay.distributed.ProcessGroup {self._name!r} ranks={self._ranks} backend={self._backend}>"


class ProcessGroupGloo(ProcessGroup):
    """A Gloo group over store, made directly (as torch.distributed.ProcessGroupGloo): what tests and
    programs that run several ranks in one process (one thread each) use instead of the default
    group. Every rank must make its own over the same store."""

    def __init__(self, store, rank, size, timeout=default_pg_timeout):
        impl = _dist.ProcessGroupGloo(store, rank, size, timeout,
                                      _local_address(os.environ.get("MASTER_ADDR", "127.0.0.1")))
        super().__init__(impl, range(size), Backend.GLOO, "gloo")


class _World:
    """The default group and the groups made from it. One per process."""

    def __init__(self):
        self.lock = threading.Lock()
        self.default = None
        self.store = None
        self.groups = []
        self.group_count = 0


_world = _World()


def _default_group():
    if _world.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _world.default


def _resolve(group):
    return _default_group() if group is None else group


def _is_member(group):
    return group is not GroupMember.NON_GROUP_MEMBER


def is_initialized():
    return _world.default is not None


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    return backend.lower() == Backend.GLOO


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_default_backend_for_device(device):
    device_type = tensorplay.device(device).type
    if device_type != "cpu":
        raise ValueError(f"Default backend not registered for device : {device_type}")
    return Backend.GLOO


def _check_backend(backend):
    if backend is None:
        return Backend.GLOO
    name = str(backend).lower()
    # PyTorch's "cpu:gloo,cuda:nccl" form: the CPU part is what tensorplay runs.
    if ":" in name:
        parts = dict(part.split(":", 1) for part in name.split(","))
        name = parts.get("cpu", Backend.GLOO)
    if name == Backend.GLOO:
        return Backend.GLOO
    if name in (Backend.NCCL, Backend.UCC, Backend.MPI, Backend.XCCL):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in")
    raise ValueError(f"Unknown backend type {backend!r}: tensorplay.distributed has the 'gloo' backend")


def _local_address(master_addr):
    """The address the other ranks reach this one on: TP_SOCKET_HOST, or the address of the interface
    GLOO_SOCKET_IFNAME names (as in PyTorch), or else that of the interface that routes to the master."""
    if os.environ.get("TP_SOCKET_HOST"):
        return os.environ["TP_SOCKET_HOST"]
    if os.environ.get("GLOO_SOCKET_IFNAME"):
        return _interface_address(os.environ["GLOO_SOCKET_IFNAME"].split(",")[0])
    if not master_addr:
        return ""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((socket.gethostbyname(master_addr), 9))  # no packet is sent: it only routes
            return probe.getsockname()[0]
    except OSError:
        return ""


def _interface_address(name):
    siocgifaddr = 0x8915
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            answer = fcntl.ioctl(s.fileno(), siocgifaddr, struct.pack("256s", name[:15].encode()))
        except OSError as error:
            raise RuntimeError(f"GLOO_SOCKET_IFNAME={name}: no IPv4 address on that interface ({error.strerror})")
    return socket.inet_ntoa(answer[20:24])


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins this process to the default group: through ``store`` when given, else through
    ``init_method`` (``env://`` by default: MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE)."""
    with _world.lock:
        if _world.default is not None:
            raise ValueError("trying to initialize the default process group twice!")
        backend = _check_backend(backend)
        timeout = default_pg_timeout if timeout is None else timeout
        if not isinstance(timeout, timedelta):
            raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
        if store is not None:
            if init_method is not None:
                raise ValueError("Cannot specify both init_method and store.")
            if world_size <= 0 or rank < 0:
                raise ValueError("world_size and rank must be specified when store is given")
            master_addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
        else:
            store, rank, world_size, master_addr = rendezvous.rendezvous(
                init_method or "env://", rank, world_size, timeout)
        impl = _dist.ProcessGroupGloo(PrefixStore("default_pg", store), rank, world_size, timeout,
                                      _local_address(master_addr))
        pg = ProcessGroup(impl, range(world_size), backend, group_name or "0")
        _world.default, _world.store = pg, store
        _world.groups = [pg]
        GroupMember.WORLD = group.WORLD = pg


def destroy_process_group(group=None):
    """Ends group (the default: every group). The group's collectives still running finish first."""
    with _world.lock:
        if group is None or group is _world.default:
            _world.default = _world.store = None
            _world.groups = []
            _world.group_count = 0
            GroupMember.WORLD = globals()["group"].WORLD = None
        elif group in _world.groups:
            _world.groups.remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the ranks. Every rank of the default group must call it, in the same order;
    a rank outside ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``."""
    default = _default_group()
    world = default.size()
    ranks = sorted(range(world) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < world:
            raise ValueError(f"The new group's rank should be within the world_size set by init_process_group: "
                             f"got rank {r} with world size {world}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be unique, got {ranks}")
    backend = _check_backend(backend or default._backend)
    timeout = default._impl.timeout if timeout is None else timeout
    with _world.lock:
        _world.group_count += 1
        name = str(_world.group_count)
    me = default.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    impl = _dist.ProcessGroupGloo(PrefixStore(f"group_{name}", _world.store), ranks.index(me), len(ranks), timeout,
                                  _local_address(os.environ.get("MASTER_ADDR", "")))
    pg = ProcessGroup(impl, ranks, backend, name)
    _world.groups.append(pg)
    return pg


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """The ranks of group (the default group) cut into consecutive subgroups of group_size: (this
    rank's subgroup, every subgroup). Every rank must call it."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                         "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    ranks = get_process_group_ranks(group) if group is not None else list(range(get_world_size()))
    if len(ranks) < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({len(ranks)})")
    if len(ranks) % group_size != 0:
        raise ValueError(f"The world size ({len(ranks)}) must be divisible by 'group_size={group_size}'")
    return new_subgroups_by_enumeration([ranks[start:start + group_size] for start in range(0, len(ranks), group_size)],
                                        timeout=timeout, backend=backend, pg_options=pg_options, group_desc=group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """A subgroup for each list of (global) ranks: (this rank's subgroup or None, every subgroup). Every
    rank must call it; no rank may be in two lists."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    subgroups, mine, seen = [], None, {}
    me = get_rank()
    for ranks in ranks_per_subgroup_list:
        subgroup = new_group(ranks=ranks, timeout=timeout, backend=backend, pg_options=pg_options,
                             group_desc=group_desc)
        subgroups.append(subgroup)
        for rank in ranks:
            if rank in seen:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {seen[rank]} and {ranks}")
            seen[rank] = ranks
            if rank == me:
                mine = subgroup
    return mine, subgroups


def get_rank(group=None):
    """This process's rank in group (-1 when it is not a member)."""
    if not _is_member(group):
        return -1
    return _resolve(group).rank()


def get_world_size(group=None):
    if not _is_member(group):
        return -1
    return _resolve(group).size()


def get_backend(group=None):
    if not _is_member(group):
        raise ValueError("Invalid process group specified")
    return _resolve(group)._backend


def get_process_group_ranks(group):
    return list(_resolve(group)._ranks)


def get_global_rank(group, group_rank):
    pg = _resolve(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg.group_name}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _resolve(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg.group_name}")
    return pg._ranks.index(global_rank)


def _group_rank(pg, rank, group_rank, what):
    """The group rank of a src/dst argument given either as a global rank or as a group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can only specify {what} or group_{what}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg.group_name}")
        return group_rank
    rank = 0 if rank is None else rank
    # In a group of every rank, global and group ranks agree: the process group checks the range.
    return rank if pg._ranks == list(range(pg.size())) else get_group_rank(pg, rank)


def _tensor(value, name):
    if not isinstance(value, tensorplay.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type tensorplay.Tensor\n"
                        f"             but got {type(value)} instead.")


def _tensor_list(value, name):
    if not isinstance(value, list) or not all(isinstance(t, tensorplay.Tensor) for t in value):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[tensorplay.Tensor]\n"
                        f"             but got {type(value)} instead.")


def _finish(work, async_op):
    """What a collective returns: its Work with async_op; else None, once it completed (the group ran
    it before returning when it was given async_op=False)."""
    if async_op:
        return work
    work.wait()
    return None


def _reduce_op(op):
    if not isinstance(op, _dist.RedOpType):
        raise TypeError(f"Invalid function argument: op must be a ReduceOp, got {op!r}")
    return op


def register_rendezvous_handler(scheme, handler):
    """init_method URLs of scheme meet through handler(url, timeout=...), which yields (store, rank,
    world_size) with rank and world_size from the URL's query (added to it when the caller gives them)."""
    rendezvous.register_rendezvous_handler(scheme, handler)


def supports_complex(reduceOp):
    """Whether reduceOp applies to complex tensors (SUM and AVG do)."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    return _finish(_resolve(group)._impl.all_reduce(tensor, _reduce_op(op), async_op=async_op), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    return _finish(pg._impl.broadcast(tensor, _group_rank(pg, src, group_src, "src"), async_op=async_op), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    root = _group_rank(pg, dst, group_dst, "dst")
    return _finish(pg._impl.reduce(tensor, root, _reduce_op(op), async_op=async_op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _tensor_list(tensor_list, "tensor_list")
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    return _finish(_resolve(group)._impl.all_gather(tensor_list, tensor, async_op=async_op), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _tensor(output_tensor, "output_tensor")
    _tensor(input_tensor, "input_tensor")
    if not _is_member(group):
        return None
    work = _resolve(group)._impl.all_gather_into_tensor(output_tensor, input_tensor, async_op=async_op)
    return _finish(work, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _tensor(output, "output")
    _tensor(input, "input")
    if not _is_member(group):
        return None
    work = _resolve(group)._impl.reduce_scatter_tensor(output, input, _reduce_op(op), async_op=async_op)
    return _finish(work, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    root = _group_rank(pg, dst, group_dst, "dst")
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _tensor_list(gather_list, "gather_list")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    return _finish(pg._impl.gather(gather_list or [], tensor, root, async_op=async_op), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "src")
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _tensor_list(scatter_list, "scatter_list")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    return _finish(pg._impl.scatter(tensor, scatter_list or [], root, async_op=async_op), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """input's rows (first dimension) to the ranks in order, input_split_sizes[i] rows (equal blocks
    when None) to rank i; output receives output_split_sizes[i] rows from rank i, in rank order."""
    _tensor(output, "output")
    _tensor(input, "input")
    if not _is_member(group):
        return None
    work = _resolve(group)._impl.all_to_all_single(output, input, list(output_split_sizes or []),
                                                   list(input_split_sizes or []), async_op=async_op)
    return _finish(work, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """input_tensor_list[i] goes to rank i, whose output_tensor_list[me] receives it (tensors of any
    shapes, of one dtype): one all_to_all_single of the tensors' elements laid end to end."""
    _tensor_list(output_tensor_list, "output_tensor_list")
    _tensor_list(input_tensor_list, "input_tensor_list")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    if len(input_tensor_list) != pg.size() or len(output_tensor_list) != pg.size():
        raise ValueError(f"all_to_all: the tensor lists must have world size {pg.size()} tensors, got "
                         f"{len(output_tensor_list)} and {len(input_tensor_list)}")
    dtypes = {t.dtype for t in output_tensor_list + input_tensor_list}
    if len(dtypes) != 1:
        raise ValueError(f"all_to_all: the tensors must have one dtype, got {sorted(str(d) for d in dtypes)}")
    flat = _flat(input_tensor_list)
    received = flat.new_empty(sum(t.numel() for t in output_tensor_list))
    work = pg._impl.all_to_all_single(received, flat, [t.numel() for t in output_tensor_list],
                                      [t.numel() for t in input_tensor_list])

    def unflatten():
        work.wait()
        _unflatten_into(output_tensor_list, received)
        return output_tensor_list

    return _finish(_Deferred(work, unflatten), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output = input_list[me], reduced across the ranks (every rank gives world size tensors)."""
    _tensor(output, "output")
    _tensor_list(input_list, "input_list")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list must have world size {pg.size()} tensors, got {len(input_list)}")
    for t in input_list:
        if t.shape != output.shape or t.dtype != output.dtype:
            raise ValueError(f"reduce_scatter: every input must be the output's {output.dtype}{list(output.shape)}, "
                             f"got {t.dtype}{list(t.shape)}")
    work = pg._impl.reduce_scatter_tensor(output, tensorplay.stack(input_list), _reduce_op(op), async_op=async_op)
    return _finish(work, async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """all_gather_into_tensor under the name PyTorch also gives it."""
    return all_gather_into_tensor(output_tensor, input_tensor, group=group, async_op=async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter_tensor under the name PyTorch also gives it."""
    return reduce_scatter_tensor(output, input, op=op, group=group, async_op=async_op)


def _deprecated_coalesced(name):
    warnings.warn(f"`torch.distributed.{name}` will be deprecated. If you must use it, please revisit our "
                  "documentation later at https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=3)


def _same_dtype(tensors):
    """PyTorch's check: one dtype throughout, a complex tensor counting as its real dtype."""
    first = None
    for t in tensors:
        dtype = t.dtype.to_real() if t.is_complex() else t.dtype
        if first is None:
            first = dtype
        elif dtype != first:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {first} and  {t.dtype}")


def _flat(tensors):
    """The tensors' elements one after another, in one buffer."""
    return tensorplay.cat([t.reshape(-1) for t in tensors])


def _unflatten_into(tensors, flat):
    """The inverse of _flat: each tensor takes its elements back from flat."""
    offset = 0
    for t in tensors:
        t.copy_(flat[offset:offset + t.numel()].view(t.shape))
        offset += t.numel()


def _real_views(tensors):
    """Complex tensors as their real pairs, so that they join real ones of their precision in one buffer."""
    return [tensorplay.view_as_real(t) if t.is_complex() else t for t in tensors]


def _coalesced(work, finish, async_op):
    """What the coalesced collectives return: a Future of their tensors with async_op (as PyTorch's do),
    else None once they are written."""
    deferred = _Deferred(work, finish)
    if async_op:
        return deferred.get_future()
    deferred.wait()
    return None


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """all_reduce of every tensor of the list, as one collective over their elements laid end to end."""
    _deprecated_coalesced("all_reduce_coalesced")
    if isinstance(tensors, tensorplay.Tensor):
        tensors = [tensors]
    _tensor_list(tensors, "tensor")
    _same_dtype(tensors)
    if not _is_member(group):
        return None
    op = _reduce_op(op)
    if any(t.is_complex() for t in tensors) and not supports_complex(op):
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    views = _real_views(tensors)
    flat = _flat(views)
    work = _resolve(group)._impl.all_reduce(flat, op, async_op=async_op)

    def finish():
        work.wait()
        _unflatten_into(views, flat)
        return tensors

    return _coalesced(work, finish, async_op)


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """output_tensor_lists[r][i] = rank r's input_tensor_list[i], as one all-gather of each rank's
    inputs laid end to end."""
    _deprecated_coalesced("all_gather_coalesced")
    if not _is_member(group):
        return None
    _tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for outputs in output_tensor_lists:
        _tensor_list(outputs, "output_tensor_lists")
        _same_dtype(outputs)
    pg = _resolve(group)
    if len(output_tensor_lists) != pg.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists has {len(output_tensor_lists)} lists but the "
                         f"world size is {pg.size()}")
    for outputs in output_tensor_lists:
        if [(tuple(o.shape), o.dtype) for o in outputs] != [(tuple(i.shape), i.dtype) for i in input_tensor_list]:
            raise ValueError("all_gather_coalesced: each output list must hold tensors of the inputs' shapes and "
                             "dtypes")
    flat = _flat(_real_views(input_tensor_list))
    gathered = flat.new_empty((pg.size(), flat.numel()))
    work = pg._impl.all_gather_into_tensor(gathered, flat, async_op=async_op)

    def finish():
        work.wait()
        for outputs, block in zip(output_tensor_lists, gathered):
            _unflatten_into(_real_views(outputs), block)
        return output_tensor_lists

    return _coalesced(work, finish, async_op)


def barrier(group=None, async_op=False, device_ids=None):
    if not _is_member(group):
        return None
    return _finish(_resolve(group)._impl.barrier(async_op=async_op), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """Like barrier, but rank 0 names the ranks that did not arrive within timeout."""
    if not _is_member(group):
        return None
    pg = _resolve(group)
    pg._impl.monitored_barrier(pg._impl.timeout if timeout is None else timeout, wait_all_ranks)


def _peer(pg, rank, group_rank, what):
    peer = _group_rank(pg, rank, group_rank, what)
    if peer == pg.rank():
        noun = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {noun} rank: {noun} rank should not be the same as the rank of the current "
                         "process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    return pg._impl.send(tensor, _peer(pg, dst, group_dst, "dst"), tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into tensor; from any rank when neither src nor group_src is given."""
    _tensor(tensor, "tensor")
    if not _is_member(group):
        return None
    pg = _resolve(group)
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src")
    return pg._impl.recv(tensor, peer, tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Returns the sender's global rank (-1 when this rank is not in group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return get_global_rank(_resolve(group), work._source_rank())


class P2POp:
    """One send or receive for batch_isend_irecv: op is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag}, tensor={self.tensor.dtype}" \
               f"{list(self.tensor.shape)})"


def batch_isend_irecv(p2p_op_list):
    """Starts every send and receive of the list; returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its node: LOCAL_RANK (the launcher sets it), else fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context and "
                       "want the code to run locally instead.")


def get_pg_count():
    """How many process groups this process has made (the default one included)."""
    return (1 if _world.default is not None else 0) + _world.group_count


class _Deferred:
    """A Work whose completion runs finish() once (for collectives made of a Work and a copy)."""

    def __init__(self, work, finish):
        self._work, self._finish, self._result = work, finish, None

    def wait(self, timeout=None):
        if self._finish is not None:
            self._result, self._finish = self._finish(), None
        return True

    def is_completed(self):
        return self._finish is None

    def is_success(self):
        return self._finish is None

    def exception(self):
        return self._work.exception()

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        return Future(_completes_by=self.result, _ready=self.is_completed)


# ---- Python objects, pickled into uint8 tensors ----

def _to_tensor(obj):
    buffer = io.BytesIO()
    pickle.Pickler(buffer).dump(obj)
    data = bytearray(buffer.getbuffer())
    return tensorplay.frombuffer(data, dtype=tensorplay.uint8) if data else tensorplay.empty(0, dtype=tensorplay.uint8)


def _from_tensor(tensor, size):
    return pickle.loads(bytes(tensor[:size].numpy().tobytes()))


def _gather_sizes(pg, local):
    sizes = [tensorplay.zeros(1, dtype=tensorplay.int64) for _ in range(pg.size())]
    pg._impl.all_gather(sizes, tensorplay.tensor([local.numel()], dtype=tensorplay.int64), async_op=False)
    return [int(s.item()) for s in sizes]


def all_gather_object(object_list, obj, group=None):
    """Fills object_list with every rank's obj (picklable), in rank order."""
    if not _is_member(group):
        return
    pg = _resolve(group)
    local = _to_tensor(obj)
    sizes = _gather_sizes(pg, local)
    padded = tensorplay.zeros(max(sizes), dtype=tensorplay.uint8)
    padded[:local.numel()] = local
    outputs = [tensorplay.empty(max(sizes), dtype=tensorplay.uint8) for _ in sizes]
    pg._impl.all_gather(outputs, padded, async_op=False)
    for i, (out, size) in enumerate(zip(outputs, sizes)):
        object_list[i] = _from_tensor(out, size)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    if not _is_member(group):
        return
    pg = _resolve(group)
    root = _group_rank(pg, dst, group_dst, "dst")
    if pg.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    gathered = [None] * pg.size()
    all_gather_object(gathered, obj, group)
    if pg.rank() == root:
        object_gather_list[:] = gathered


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces object_list's items on every rank with src's (picklable objects)."""
    if not _is_member(group):
        return
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "src")
    if pg.rank() == root:
        tensors = [_to_tensor(obj) for obj in object_list]
        sizes = tensorplay.tensor([t.numel() for t in tensors], dtype=tensorplay.int64)
    else:
        sizes = tensorplay.zeros(len(object_list), dtype=tensorplay.int64)
    pg._impl.broadcast(sizes, root, async_op=False)
    total = int(sizes.sum().item())
    data = tensorplay.cat(tensors) if pg.rank() == root and tensors else tensorplay.empty(total, dtype=tensorplay.uint8)
    pg._impl.broadcast(data, root, async_op=False)
    if pg.rank() != root:
        offset = 0
        for i, size in enumerate(sizes.tolist()):
            object_list[i] = _from_tensor(data[offset:offset + size], size)
            offset += size


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False):
    """Sends object_list's objects (picklable) to dst, whose recv_object_list receives them."""
    if not _is_member(group):
        return
    pg = _resolve(group)
    peer = _peer(pg, dst, group_dst, "dst")
    tensors = [_to_tensor(obj) for obj in object_list]
    pg._impl.send(tensorplay.tensor([t.numel() for t in tensors], dtype=tensorplay.int64), peer, 0).wait()
    if tensors:
        pg._impl.send(tensorplay.cat(tensors), peer, 0).wait()


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None, use_batch=False):
    """Fills object_list with the objects send_object_list sent (from any rank when src is None); returns
    the sender's rank."""
    if not _is_member(group):
        return -1
    pg = _resolve(group)
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src")
    sizes = tensorplay.zeros(len(object_list), dtype=tensorplay.int64)
    work = pg._impl.recv(sizes, peer, 0)
    work.wait()
    sender = work._source_rank()
    data = tensorplay.empty(int(sizes.sum().item()), dtype=tensorplay.uint8)
    if data.numel():
        pg._impl.recv(data, sender, 0).wait()
    offset = 0
    for i, size in enumerate(sizes.tolist()):
        object_list[i] = _from_tensor(data[offset:offset + size], size)
        offset += size
    return get_global_rank(pg, sender)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    if not _is_member(group):
        return
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    objects = list(scatter_object_input_list) if pg.rank() == root else [None] * pg.size()
    broadcast_object_list(objects, group_src=root, group=group)
    scatter_object_output_list[0] = objects[pg.rank()]


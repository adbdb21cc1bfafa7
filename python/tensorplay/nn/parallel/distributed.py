"""DistributedDataParallel: each rank runs the whole module on its share of the batch, and the
gradients are averaged across ranks during backward, so every rank steps with the same gradients.

How (docs/distributed.md has the longer story):
- At construction the ranks check that their parameters agree (names, shapes, dtypes) and take
  rank 0's parameters and buffers.
- Gradients travel in buckets: flat buffers of a few parameters' gradients, one dtype each. The
  first iteration sends one bucket of everything (with find_unused_parameters: buckets in reverse
  parameter order); then the buckets are rebuilt once in the order the gradients arrived (rank
  0's order, so that every rank agrees), the first up to 1 MiB and the rest up to
  ``bucket_cap_mb``, as PyTorch 2.13's DDP builds them.
- A hook on each parameter's gradient accumulation copies the gradient into its bucket; when a
  bucket is full, its all-reduce starts at once on the process group's worker thread, while
  backward goes on computing the next gradients. The last gradient of the iteration waits for every
  bucket and writes the averages back into ``.grad``.
- ``register_comm_hook`` replaces the all-reduce of a bucket (the hooks of
  ``tensorplay.distributed.algorithms.ddp_comm_hooks``: compressing to float16 or bfloat16 halves
  the bytes on the wire).
"""

import contextlib
import itertools
import sys
import time

import tensorplay
import tensorplay.distributed as dist
from tensorplay.distributed.algorithms.ddp_comm_hooks import default_hooks
from tensorplay.distributed.buckets import GradBucket, bucket_indices
from tensorplay.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    """Parameters whose gradients are reduced together, and the flat buffer they travel in."""

    def __init__(self, index, params):
        self.index = index
        self.params = params
        numel = sum(p.numel() for p in params)
        self.buffer = tensorplay.zeros(numel, dtype=params[0].dtype)
        self.views = []
        offset = 0
        for p in params:
            self.views.append(self.buffer[offset:offset + p.numel()].view(p.shape))
            offset += p.numel()
        self.pending = len(params)
        self.future = None


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel on CPU process groups (Gloo). ``device_ids`` and
    ``output_device`` must be None (there is one CPU device)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        if device_ids is not None and list(device_ids) not in ([], [-1]) or output_device not in (None, -1):
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with single-"
                             f"device/multiple-device GPU modules or CPU modules, but got device_ids {device_ids}, "
                             f"output_device {output_device}, and module parameters on cpu.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        if self.process_group is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        # The smaller first bucket, with the default cap only (as PyTorch's BucketCapacityConfig has it).
        self._first_bucket_bytes = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._param_names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._comm_hook = None  # (state, hook) once registered; default_hooks.allreduce_hook until then
        self._check_same_parameters()
        if init_sync:
            self._sync_module_states()
        self._buckets_rebuilt = False
        self._arrival_order = []
        self._build_buckets(self._initial_buckets())
        self._expect_reduction = False
        # Whether a bucket's all-reduce starts as soon as it is full (False: all of them once backward
        # is done; for measuring what the overlap buys). _timeline: the last iteration's events.
        self._overlap = True
        self._timeline = []
        self._handles = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(self._params)]

    # ---- construction ----

    def _check_same_parameters(self):
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in zip(self._param_names, self._params)]
        everyone = [None] * self.process_group.size()
        dist.all_gather_object(everyone, mine, group=self.process_group)
        reference = everyone[0]
        for rank, theirs in enumerate(everyone):
            if theirs == reference:
                continue
            if len(theirs) != len(reference):
                raise RuntimeError(f"DistributedDataParallel: the ranks' modules differ: rank 0 has "
                                   f"{len(reference)} parameters, rank {rank} has {len(theirs)}")
            for ours, other in zip(reference, theirs):
                if ours != other:
                    raise RuntimeError(f"DistributedDataParallel: the ranks' modules differ: parameter {ours[0]!r} "
                                       f"is {ours[2]}{list(ours[1])} on rank 0 but {other[0]!r} is "
                                       f"{other[2]}{list(other[1])} on rank {rank}")

    def _sync_module_states(self):
        """Every rank takes rank 0's parameters and buffers."""
        source = dist.get_global_rank(self.process_group, 0)
        with tensorplay.no_grad():
            for tensor in itertools.chain(self.module.parameters(), self.module.buffers()):
                dist.broadcast(tensor, src=source, group=self.process_group)

    def _initial_buckets(self):
        """Before the first iteration, the order gradients arrive in is a guess (the reverse of the
        definition order). Unless some parameters may get no gradient, PyTorch makes one bucket of
        everything, to be rebuilt once the order is known; so does this."""
        if self.static_graph or not self.find_unused_parameters:
            limits = [sys.maxsize]
        elif self._first_bucket_bytes < self.bucket_bytes_cap:
            limits = [self._first_bucket_bytes, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        sizes = [(p.numel() * p.element_size(), p.dtype) for p in self._params]
        indices, _ = bucket_indices(sizes, limits)
        return list(reversed(indices))

    def _build_buckets(self, bucket_indices):
        self._buckets = [_Bucket(b, [self._params[i] for i in indices]) for b, indices in enumerate(bucket_indices)]
        self._where = {}
        for bucket in self._buckets:
            for slot, i in enumerate(bucket_indices[bucket.index]):
                self._where[i] = (bucket, slot)
        self._bucket_indices = bucket_indices
        if self.gradient_as_bucket_view:
            for bucket in self._buckets:
                for p, view in zip(bucket.params, bucket.views):
                    if p.grad is not None:
                        view.copy_(p.grad)
                        p.grad = view

    def _should_rebuild_buckets(self):
        # With find_unused_parameters the arrival order may change from one iteration to the next.
        return (self.require_backward_grad_sync and not self._buckets_rebuilt and bool(self._arrival_order)
                and (self.static_graph or not self.find_unused_parameters))

    def _rebuild_buckets(self):
        """Once, after the first iteration: buckets in the order rank 0's gradients arrived."""
        self._buckets_rebuilt = True
        order = [self._arrival_order]
        dist.broadcast_object_list(order, src=dist.get_global_rank(self.process_group, 0), group=self.process_group)
        order = order[0]
        if sorted(order) != list(range(len(self._params))):
            return  # not every parameter got a gradient: keep the buckets as they are
        sizes = [(self._params[i].numel() * self._params[i].element_size(), self._params[i].dtype) for i in order]
        indices, _ = bucket_indices(sizes, [self._first_bucket_bytes, self.bucket_bytes_cap], order)
        self._build_buckets(indices)

    # ---- one iteration ----

    def forward(self, *inputs, **kwargs):
        if self._expect_reduction:
            self._fail_unfinished_reduction()
        if self._should_rebuild_buckets():
            self._rebuild_buckets()
        if self.broadcast_buffers and self.require_forward_param_sync:
            source = dist.get_global_rank(self.process_group, 0)
            with tensorplay.no_grad():
                for buffer in self.module.buffers():
                    dist.broadcast(buffer, src=source, group=self.process_group)
        output = self.module(*inputs, **kwargs)
        if tensorplay.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(output)
        return output

    def _prepare_for_backward(self, output):
        self._expect_reduction = True
        self._ready = set()
        for bucket in self._buckets:
            bucket.pending = len(bucket.params)
            bucket.future = None
        self._buckets_launched = 0
        self._timeline = [("forward done", time.perf_counter())]
        self._used = None
        if self.find_unused_parameters:
            used = self._reachable_parameters(output)
            self._used = [i in used for i in range(len(self._params))]
            for i, is_used in enumerate(self._used):
                if not is_used:
                    self._mark_ready(i, None)

    def _reachable_parameters(self, output):
        """Indices of the parameters the autograd graph of output reaches."""
        index = {id(p): i for i, p in enumerate(self._params)}
        # Holding the nodes keeps each one's Python object (and so its id) for the whole walk.
        seen, found = {}, set()
        stack = [t.grad_fn for t in _tensors_in(output) if t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen[id(node)] = node
            variable = getattr(node, "variable", None)
            if variable is not None and id(variable) in index:
                found.add(index[id(variable)])
            stack.extend(next_node for next_node, _ in node.next_functions)
        return found

    def _make_hook(self, i):
        def hook(param):
            if self._expect_reduction and i not in self._ready:
                self._mark_ready(i, param)
        return hook

    def _mark_ready(self, i, param):
        """Parameter i's gradient is final for this iteration (param None: it gets none here)."""
        self._ready.add(i)
        if not self._buckets_rebuilt and param is not None:
            self._arrival_order.append(i)
        bucket, slot = self._where[i]
        view = bucket.views[slot]
        if param is None or param.grad is None:
            view.zero_()
        elif self.gradient_as_bucket_view:
            if param.grad.data_ptr() != view.data_ptr():
                view.copy_(param.grad)
                param.grad = view
        else:
            view.copy_(param.grad)
        bucket.pending -= 1
        if len(self._ready) == len(self._params):
            self._timeline.append(("backward's last gradient", time.perf_counter()))
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        """Starts the all-reduce of each full bucket, in bucket order: every rank must call its
        collectives in the same order, whichever bucket filled first here."""
        buckets = self._buckets
        if not self._overlap and any(b.pending for b in buckets):
            return
        while self._buckets_launched < len(buckets) and buckets[self._buckets_launched].pending == 0:
            bucket = buckets[self._buckets_launched]
            state, hook = self._comm_hook or (None, default_hooks.allreduce_hook)
            grad_bucket = GradBucket(bucket.index, bucket.buffer, bucket.params, bucket.views,
                                     bucket.index == len(buckets) - 1)
            bucket.future = hook(self.process_group if state is None else state, grad_bucket)
            self._buckets_launched += 1
            self._timeline.append((f"bucket {bucket.index} all-reduce started", time.perf_counter()))
        if self._buckets_launched == len(buckets):
            self._finish_reduction()

    def _finish_reduction(self):
        """Waits for every bucket and writes the averaged gradients to the parameters."""
        self._expect_reduction = False
        if self._used is not None:
            used = tensorplay.tensor(self._used, dtype=tensorplay.int32)
            dist.all_reduce(used, group=self.process_group)
            used_anywhere = used.tolist()
        for bucket in self._buckets:
            result = bucket.future.wait()
            if result is not bucket.buffer:
                bucket.buffer.copy_(result.view(-1))
        with tensorplay.no_grad():
            for i, p in enumerate(self._params):
                if self._used is not None and not used_anywhere[i]:
                    continue
                bucket, slot = self._where[i]
                view = bucket.views[slot]
                if self.gradient_as_bucket_view:
                    p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)
        self._timeline.append(("gradients averaged", time.perf_counter()))

    def _fail_unfinished_reduction(self):
        missing = [i for i in range(len(self._params)) if i not in self._ready]
        self._expect_reduction = False
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. This error "
            "indicates that your module has parameters that were not used in producing loss. You can enable unused "
            "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
            "participate in calculating loss.\nParameter indices which did not receive grad for rank "
            f"{self.process_group.rank()}: {' '.join(map(str, missing))}\nParameters which did not receive grad: "
            f"{', '.join(self._param_names[i] for i in missing)}")

    # ---- the rest of PyTorch's interface ----

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it reduces all of them."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    def register_comm_hook(self, state, hook):
        """hook(state, bucket) -> Future of the bucket's reduced buffer replaces the all-reduce."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook = (state, hook)

    def _get_ddp_logging_data(self):
        """The entries of PyTorch's DDP logging data that describe the buckets."""
        sizes = [b.buffer.numel() * b.buffer.element_size() for b in self._buckets]
        return {"bucket_sizes": ", ".join(map(str, sizes)), "bucket_cap_bytes": self.bucket_bytes_cap,
                "gradient_as_bucket_view": int(self.gradient_as_bucket_view)}

    def _bucket_assignment(self):
        """The parameter indices of each bucket, in reduction order (for tests and curious readers)."""
        return [list(b) for b in self._bucket_indices]


def _tensors_in(value):
    if isinstance(value, tensorplay.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)


"""The profiler's older interface (torch.autograd.profiler): `profile` as a context manager over a
block, and `record_function`, which the newer tensorplay.profiler shares.

Spans come from the C++ core (csrc/tensorplay/profiler/): each op in the policy table opens one on entry,
beside autocast, named as PyTorch names ops ("aten::mm"); the autograd engine opens one per node it
runs ("autograd::engine::evaluate_function: MmBackward0" around "MmBackward0"); record_function
opens the user's own. A profile records every thread. Ops written in Python as composites of other
ops show as the ops they are made of."""

import contextlib
import json

from tensorplay import _C
from tensorplay.autograd.profiler_util import EventList, FunctionEvent, estimate_flops

__all__ = ["profile", "record_function"]


class record_function(contextlib.ContextDecorator):
    """A named range in the profile, around a block (`with record_function("forward"):`) or a
    function (as a decorator). Records nothing when no profile is open."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._handles = []

    def __enter__(self):
        self._handles.append(_C._profiler.push_range(self.name))
        return self

    def __exit__(self, *exc):
        _C._profiler.pop_range(self._handles.pop())
        return False


def events_from_records(records, record_shapes=True, with_flops=False):
    """FunctionEvents from the recorder's tuples, children linked to parents; times in microseconds
    from the earliest span's start. with_flops counts each op's FLOPs from its inputs, which are
    recorded for that even when record_shapes is off (and then not kept)."""
    if not records:
        return []
    origin = min(r[1] for r in records)
    events = []
    for i, (name, start, end, thread, parent, shapes, dtypes, concrete, memory, autocast, casts,
            user) in enumerate(records):
        shapes = json.loads(shapes) if shapes else []
        concrete = json.loads(concrete) if concrete else []
        flops = estimate_flops(name, shapes, concrete) if with_flops else 0
        if not record_shapes:
            shapes, dtypes, concrete = [], "", []
        event = FunctionEvent(i, name, thread, (start - origin) / 1000, (end - origin) / 1000,
                              input_shapes=shapes,
                              input_dtypes=[d.strip() for d in dtypes[1:-1].split(",")] if len(dtypes) > 2 else [],
                              self_cpu_memory_usage=memory, autocast_dtype=autocast, autocast_casts=casts,
                              is_user_annotation=user, concrete_inputs=concrete, flops=flops)
        events.append(event)
    for event, record in zip(events, records):
        if record[4] >= 0:
            event.cpu_parent = events[record[4]]
            events[record[4]].cpu_children.append(event)
    events.sort(key=lambda e: (e.time_range[0], -e.time_range[1]))
    return events


class _Recording:
    """One recording on the C++ recorder, from start() to stop(), and the user ranges opened in it;
    with_stack adds the Python calls (profiler/python_tracer.py)."""

    def __init__(self, record_shapes, profile_memory, with_flops=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        _C._profiler.start(record_shapes or with_flops, profile_memory)
        self._tracer = None
        if with_stack:
            from tensorplay.profiler.python_tracer import PythonTracer

            self._tracer = PythonTracer()
            self._tracer.start()

    def stop(self):
        if self._tracer is not None:
            self._tracer.stop()
        events = events_from_records(_C._profiler.stop(), self.record_shapes, self.with_flops)
        return EventList(events, profile_memory=self.profile_memory, with_flops=self.with_flops)


class profile:
    """Profiles the ops run in a block: `with profile(record_shapes=True) as prof: ...`, then
    `prof.key_averages().table(sort_by="self_cpu_time_total")`. The spans are in
    `prof.function_events`. use_cuda/use_device name devices this build does not have."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        if use_cuda or use_device not in (None, "cpu"):
            raise RuntimeError(f"profile: tensorplay has no {'cuda' if use_cuda else use_device} device to profile")
        if not use_cpu:
            raise ValueError("profile: tensorplay profiles the CPU only; use_cpu=False leaves nothing to record")
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.function_events = None
        self._recording = None

    def __enter__(self):
        if self.enabled:
            if self._recording is not None:
                raise RuntimeError("Profiler context manager is not reentrant")
            self._recording = _Recording(self.record_shapes, self.profile_memory, self.with_flops, self.with_stack)
        return self

    def __exit__(self, *exc):
        if self._recording is not None:
            self.function_events = self._recording.stop()
            self._recording = None
        return False

    def _check_finished(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        self._check_finished()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finished()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finished()
        return self.function_events.total_average()

    def export_chrome_trace(self, path):
        self._check_finished()
        return self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check_finished()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        self._check_finished()
        return self.table()


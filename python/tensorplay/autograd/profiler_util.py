"""What a profile recorded, as PyTorch's profiler shows it (torch.autograd.profiler_util): one
FunctionEvent per span (an op, a backward node, a record_function range), an EventList of them with
key_averages(), table() and export_chrome_trace(), and FunctionEventAvg for the averages.

Times are in microseconds. A span's self time is its total time less its children's totals; its
memory is what the allocator handed out less what it took back while the span was innermost, and
the total adds the children's."""

import collections
import json
import math
import os

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def _pair(value):
    return list(value) * 2 if len(value) == 1 else list(value)


def estimate_flops(name, input_shapes, concrete_inputs):
    """The floating-point operations of one op, for the ops and by the formulas PyTorch's profiler
    counts with with_flops (a multiply-add is 2); 0 for any other op."""
    try:
        if name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"):
            a, b = input_shapes[-2:] if name in ("aten::mm", "aten::bmm") else input_shapes[1:3]
            return 2 * math.prod(a) * b[-1]
        if name == "aten::conv2d":
            (n, _, h, w), weight = input_shapes[0], input_shapes[1]
            stride, padding, dilation = (_pair(concrete_inputs[i]) for i in (3, 4, 5))
            out = [(size + 2 * p - d * (k - 1) - 1) // s + 1
                   for size, p, d, k, s in zip((h, w), padding, dilation, weight[2:], stride)]
            return 2 * n * math.prod(out) * math.prod(weight)
        if name in ("aten::mul", "aten::add"):
            return math.prod(input_shapes[0])  # the first input's elements, as PyTorch counts them
    except (IndexError, TypeError, ValueError):
        pass  # an overload the formula does not cover (e.g. a list where a tensor was expected)
    return 0


class FunctionEvent:
    """One span: its name (key), thread, start and end, the spans opened inside it (cpu_children)."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, input_dtypes=None,
                 self_cpu_memory_usage=0, autocast_dtype=None, autocast_casts=0, is_user_annotation=False,
                 concrete_inputs=None, flops=0):
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = (start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.concrete_inputs = concrete_inputs if concrete_inputs is not None else []
        self._self_memory = self_cpu_memory_usage
        self.autocast_dtype = autocast_dtype
        self.autocast_casts = autocast_casts
        self.is_user_annotation = is_user_annotation
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.device_type = "CPU"
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.node_id = -1
        self.stack = []
        self.scope = 0
        self.flops = flops
        self.overload_name = ""

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range[1] - self.time_range[0]

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count

    @property
    def cpu_memory_usage(self):
        return self._self_memory + sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self._self_memory

    # (a CPU build: no device times)
    device_time = device_time_total = self_device_time_total = cuda_time = cuda_time_total = 0
    device_memory_usage = self_device_memory_usage = 0

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={_format_time(self.cpu_time_total)} start_us={self.time_range[0]:.3f} "
                f"end_us={self.time_range[1]:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """The spans of one key (a name, and the input shapes when grouped by them) added up."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.cpu_children = None
        self.cpu_parent = None
        self.is_user_annotation = False
        self.autocast_dtype = None
        self.autocast_casts = 0
        self.device_type = "CPU"
        self.is_async = self.is_remote = self.is_legacy = False
        self.node_id = 0
        self.stack = None
        self.scope = None
        self.flops = 0
        self.overload_name = None

    device_time = device_time_total = self_device_time_total = cuda_time = 0
    device_memory_usage = self_device_memory_usage = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.autocast_dtype = self.autocast_dtype or other.autocast_dtype
        self.autocast_casts += other.autocast_casts
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events (FunctionEvent or FunctionEventAvg) with PyTorch's views of them."""

    def __init__(self, *args, profile_memory=False, with_flops=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One FunctionEventAvg per name (and per input shapes, with group_by_input_shape), in the
        order the names first occur."""
        averages = collections.defaultdict(FunctionEventAvg)
        for event in self:
            key = (event.key, str(event.input_shapes)) if group_by_input_shape else event.key
            averages[key].add(event)
        result = EventList(averages.values(), profile_memory=self._profile_memory, with_flops=self._with_flops)
        if not group_by_input_shape:
            for average in result:
                average.input_shapes = None
        return result

    def total_average(self):
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's profiler prints them, sorted by sort_by (an attribute such as
        "cpu_time_total", "self_cpu_time_total", "self_cpu_memory_usage", "count"), descending.
        Where autocast cast an op's inputs, an "Autocast" column says to which dtype and how often."""
        return _build_table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                            top_level_events_only, self._profile_memory, time_unit, self._with_flops)

    def export_chrome_trace(self, path):
        """Writes the spans in the Trace Event Format that chrome://tracing and Perfetto open."""
        pid = os.getpid()
        trace = []
        for event in self:
            args = {}
            if event.input_shapes:
                args["Input Dims"] = event.input_shapes
                args["Input type"] = event.input_dtypes
            if event.autocast_dtype is not None:
                args["Autocast dtype"] = event.autocast_dtype
                args["Autocast casts"] = event.autocast_casts
            trace.append({"ph": "X", "cat": "user_annotation" if event.is_user_annotation else "cpu_op",
                          "name": event.name, "pid": pid, "tid": event.thread, "ts": event.time_range[0],
                          "dur": event.cpu_time_total, "args": args})
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": trace, "displayTimeUnit": "ms",
                       "traceName": os.fspath(path)}, f)


def _format_time(time_us, unit=None):
    if unit == "s" or (unit is None and time_us >= 1e6):
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and time_us >= 1e3):
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_memory(nbytes):
    for limit, suffix in ((1024 ** 3, "Gb"), (1024 ** 2, "Mb"), (1024, "Kb")):
        if abs(nbytes) >= limit:
            return f"{nbytes / limit:.2f} {suffix}"
    return f"{nbytes} B"


def _build_table(events, sort_by, row_limit, max_name_width, max_shapes_width, header, top_level_only,
                 profile_memory, time_unit, with_flops=False):
    if not events:
        return ""
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_only:
        rows = [e for e in rows if e.cpu_parent is None]
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    has_shapes = any(e.input_shapes for e in events)
    has_memory = profile_memory or any(e.cpu_memory_usage for e in events)
    has_autocast = any(e.autocast_dtype is not None for e in events)

    name_width = min(max(len(e.key) for e in events) + 4, max_name_width)
    columns = [("Name", name_width), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12), ("CPU total", 12),
               ("CPU time avg", 12)]
    if has_memory:
        columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
    columns.append(("# of Calls", 12))
    if has_autocast:
        columns.append(("Autocast", 22))
    if has_shapes:
        columns.append(("Input Shapes", min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width)))
    counted = [e.flops for e in events if e.flops > 0]
    if with_flops and counted:
        # One unit for the column, from the smallest count, as PyTorch scales it.
        power = int(max(0, min(math.log10(min(counted)) / 3, len(_FLOP_UNITS) - 1)))
        flops_scale = 10.0 ** (-3 * power)
        columns.append((f"Total {_FLOP_UNITS[power]}", 12))

    def line(cells):
        return "".join(f"{cell:>{width}}  " for cell, (_, width) in zip(cells, columns))

    separator = "".join("-" * width + "  " for _, width in columns)
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    out = [separator]
    if header is not None:
        out = [separator, header, separator]
    out += [line([name for name, _ in columns]), separator]
    for e in rows:
        name = e.key if len(e.key) < name_width - 3 else e.key[:name_width - 6] + "..."
        cells = [name, f"{e.self_cpu_time_total / total * 100:.2f}%", _format_time(e.self_cpu_time_total, time_unit),
                 f"{e.cpu_time_total / total * 100:.2f}%", _format_time(e.cpu_time_total, time_unit),
                 _format_time(e.cpu_time, time_unit)]
        if has_memory:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        cells.append(str(e.count))
        if has_autocast:
            cells.append(f"{e.autocast_dtype} ({e.autocast_casts} casts)" if e.autocast_dtype else "")
        if has_shapes:
            shapes = str(e.input_shapes)
            width = next(w for name, w in columns if name == "Input Shapes")
            cells.append(shapes if len(shapes) < width - 3 else shapes[:width - 6] + "...")
        if with_flops and counted:
            cells.append(f"{e.flops * flops_scale:8.3f}" if e.flops > 0 else "--")
        out.append(line(cells))
    out.append(separator)
    out.append(f"Self CPU time total: {_format_time(sum(e.self_cpu_time_total for e in events), time_unit)}")
    return "\n".join(out) + "\n"

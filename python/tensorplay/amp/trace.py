"""Tracing autocast: what ran in which dtype, and why.

    with tensorplay.amp.trace() as t:
        with tensorplay.autocast("cpu"):
            loss = loss_fn(model(x), y)
    t.summary()

records, for every op the autocast layer dispatched on this thread, the op, its input dtypes,
the policy in force, the dtype it computed in, its output dtypes, the casts made and how many of
them the weight cache served. With no trace open the layer records nothing.
"""

from collections import Counter, namedtuple

from tensorplay import _C

__all__ = ["trace", "Trace", "TraceEntry"]

TraceEntry = namedtuple(
    "TraceEntry", ["op", "device_type", "input_dtypes", "policy", "compute_dtype", "output_dtypes", "casts",
                   "cache_hits"]
)


def _dtype_name(dtype):
    return str(dtype).replace("tensorplay.", "") if dtype is not None else "-"


def _dtypes_name(dtypes):
    return ", ".join(_dtype_name(d) for d in dtypes) or "-"


class Trace:
    """The entries recorded while the trace was open, oldest first."""

    def __init__(self):
        self._trace = _C._amp._Trace()

    @property
    def entries(self):
        return [TraceEntry(**e) for e in self._trace.entries]

    def __len__(self):
        return len(self._trace.entries)

    def clear(self):
        self._trace.clear()

    def table(self) -> str:
        """The entries as a text table, identical calls merged into one row with a count."""
        calls = Counter()
        casts = Counter()
        hits = Counter()
        for e in self.entries:
            key = (e.op, e.device_type, _dtypes_name(e.input_dtypes), e.policy, _dtype_name(e.compute_dtype),
                   _dtypes_name(e.output_dtypes))
            calls[key] += 1
            casts[key] += e.casts
            hits[key] += e.cache_hits
        header = ("op", "device", "inputs", "policy", "compute", "outputs", "calls", "casts", "cache hits")
        rows = [header] + [(*key, str(calls[key]), str(casts[key]), str(hits[key])) for key in calls]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]

        def line(row):
            return "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()

        rule = "  ".join("-" * w for w in widths)
        return "\n".join([line(header), rule] + [line(r) for r in rows[1:]])

    def summary(self):
        """Prints ``table()``."""
        print(self.table())

    def __repr__(self):
        return f"<tensorplay.amp.Trace with {len(self)} entries>"


class trace:
    """Opens a Trace on this thread for the ``with`` block; traces nest and the innermost records."""

    def __init__(self):
        self._result = None

    def __enter__(self) -> Trace:
        self._result = Trace()
        self._result._trace.open()
        return self._result

    def __exit__(self, exc_type, exc_value, traceback):
        self._result._trace.close()
        return False

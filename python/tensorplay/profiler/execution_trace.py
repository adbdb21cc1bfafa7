"""torch.profiler.ExecutionTraceObserver: the ops a program ran, as a graph of nodes in the
execution-trace JSON that PyTorch writes (the Chakra schema's layout: each node with its id, name,
control parent, inputs and attributes), from the same recorder as the profiler. tensorplay records
the inputs' shapes and dtypes, not their values or the outputs: those lists are left empty."""

import datetime
import json
import os
import time

from tensorplay import _C
from tensorplay.autograd.profiler import events_from_records

__all__ = ["ExecutionTraceObserver"]

_SCHEMA = "1.1.1-chakra.0.0.4"
_ROOT_NAME = "[pytorch|profiler|execution_trace|process]"
_THREAD_NAME = "[pytorch|profiler|execution_trace|thread]"


class ExecutionTraceObserver:
    """observer = ExecutionTraceObserver().register_callback("trace.json"); observer.start(); ...;
    observer.stop() writes the trace; unregister_callback() when done."""

    def __init__(self):
        self._path = None
        self._registered = False
        self._running = False
        self._start_ts = 0

    def register_callback(self, output_file_path):
        self._path = os.fspath(output_file_path)
        self._registered = True
        return self

    def unregister_callback(self):
        if self._running:
            self.stop()
        self._registered = False

    def is_registered(self):
        return self._registered

    def is_running(self):
        return self._running

    def get_output_file_path(self):
        return self._path

    def cleanup(self):
        self.unregister_callback()

    def start(self):
        if not self._registered:
            raise RuntimeError("ExecutionTraceObserver: register_callback(output_file_path) before start()")
        if not self._running:
            _C._profiler.start(True, False)
            self._running = True
            self._start_ts = time.monotonic_ns() // 1000

    def stop(self):
        if not self._running:
            return
        events = events_from_records(_C._profiler.stop())
        self._running = False
        self._write(events)

    def _write(self, events):
        nodes = [{"id": 1, "name": _ROOT_NAME, "ctrl_deps": 1, **_no_values([], []), "attrs": _attrs(0, 0)}]
        thread_nodes = {}
        ids = {}
        for event in events:  # in start order: a parent is numbered before its children
            if event.thread not in thread_nodes:
                thread_nodes[event.thread] = len(nodes) + 1
                nodes.append({"id": thread_nodes[event.thread], "name": _THREAD_NAME, "ctrl_deps": 1,
                              **_no_values([], []), "attrs": _attrs(0, len(thread_nodes))})
            ids[id(event)] = len(nodes) + 1
            parent = ids[id(event.cpu_parent)] if event.cpu_parent is not None else thread_nodes[event.thread]
            nodes.append({"id": ids[id(event)], "name": event.name, "ctrl_deps": parent,
                          **_no_values(event.input_shapes, event.input_dtypes),
                          "attrs": _attrs(len(ids), len(thread_nodes))})
        trace = {"schema": _SCHEMA, "pid": os.getpid(),
                 "time": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"), "start_ts": self._start_ts,
                 "nodes": nodes, "finish_ts": time.monotonic_ns() // 1000}
        with open(self._path, "w") as f:
            json.dump(trace, f)


def _no_values(shapes, dtypes):
    return {"inputs": {"values": [], "shapes": shapes, "types": dtypes, "strides": []},
            "outputs": {"values": [], "shapes": [], "types": [], "strides": []}}


def _attrs(rf_id, tid):
    return [{"name": "rf_id", "type": "uint64", "value": rf_id}, {"name": "tid", "type": "uint64", "value": tid}]

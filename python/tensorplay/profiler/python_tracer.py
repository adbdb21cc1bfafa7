"""with_stack=True: the Python calls of a profiled block as spans of their own, as PyTorch's Python
tracer records them, so that each op sits under the Python function that called it: a span named
"file(line): function" for each Python function (the file relative to its sys.path entry, the line
where the span starts), one named by the builtin's repr for each builtin called, and
"nn.Module: Name_k" around each module's call (k numbers a class's instances in the recording).

The calls come from sys.setprofile in the thread that starts the recording and threading.setprofile
in the threads started during it; the frames already running at the start get their spans then."""

import os
import sys
import threading

from tensorplay import _C


class PythonTracer:
    def __init__(self):
        from tensorplay.nn.modules.module import Module

        self._module_call = Module.__call__.__code__
        self._module_names = {}  # id(module) -> "Linear_0", ...
        self._class_counts = {}
        self._prefixes = sorted({os.path.join(os.path.abspath(p), "") for p in sys.path if p}, key=len,
                                reverse=True)
        self._threads = threading.local()
        self._active = False
        self._previous = None, None

    def start(self):
        self._active = True
        running = []
        frame = sys._getframe()
        while frame is not None:
            running.append(frame)
            frame = frame.f_back
        for frame in reversed(running):
            self._call(frame)
        self._previous = sys.getprofile(), threading.getprofile()  # (cProfile's, say)
        threading.setprofile(self._event)
        sys.setprofile(self._event)

    def stop(self):
        """Stops recording calls, giving back the profile functions there were; the spans still open
        end with the profile."""
        self._active = False
        sys.setprofile(self._previous[0])
        threading.setprofile(self._previous[1])

    # ---- the events ----
    def _event(self, frame, event, arg):
        if not self._active:
            sys.setprofile(None)  # a thread started during the recording that outlived it
            return
        if event == "call":
            self._call(frame)
        elif event == "return":
            self._return(frame)
        elif event == "c_call":
            self._open(("c", frame), [_C._profiler.push_range(repr(arg), False)])
        elif event in ("c_return", "c_exception"):
            stack = self._stack()
            if stack and stack[-1][0] == ("c", frame):
                self._close(stack.pop()[1])

    def _call(self, frame):
        handles = []
        if frame.f_code is self._module_call and "self" in frame.f_locals:
            handles.append(_C._profiler.push_range(f"nn.Module: {self._module_name(frame.f_locals['self'])}", False))
        handles.append(_C._profiler.push_range(self._frame_name(frame), False))
        self._open(frame, handles)

    def _return(self, frame):
        stack = self._stack()
        # (A frame whose call came before the recording has no span: nothing to close.)
        if any(key is frame for key, _ in stack):
            while stack:
                key, handles = stack.pop()
                self._close(handles)
                if key is frame:
                    break

    # ---- this thread's open spans: (frame or ("c", frame), handles), innermost last ----
    def _stack(self):
        if not hasattr(self._threads, "stack"):
            self._threads.stack = []
        return self._threads.stack

    def _open(self, key, handles):
        self._stack().append((key, handles))

    @staticmethod
    def _close(handles):
        for handle in reversed(handles):
            _C._profiler.pop_range(handle)

    # ---- names ----
    def _frame_name(self, frame):
        path = frame.f_code.co_filename
        for prefix in self._prefixes:
            if path.startswith(prefix):
                path = path[len(prefix):]
                break
        return f"{path}({frame.f_lineno}): {frame.f_code.co_name}"

    def _module_name(self, module):
        key = id(module)
        if key not in self._module_names:
            name = type(module).__name__
            self._module_names[key] = f"{name}_{self._class_counts.get(name, 0)}"
            self._class_counts[name] = self._class_counts.get(name, 0) + 1
        return self._module_names[key]

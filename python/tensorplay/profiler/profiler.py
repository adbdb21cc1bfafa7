"""torch.profiler.profile and its schedule: which steps of a loop are recorded, and what happens to
each recording."""

import enum
import gzip
import os
import socket
import time
import warnings

from tensorplay import _C
from tensorplay.autograd.profiler import _Recording

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What a profile records. PyTorch's numbering; only CPU exists in this build."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step, as a schedule says."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action of each step: skip_first steps of nothing, then cycles of `wait` steps of nothing,
    `warmup` steps of warming up and `active` steps recorded, the last of which saves the recording
    (on_trace_ready). `repeat` cycles, or endlessly when 0; skip_first_wait drops the first cycle's
    wait."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Invalid step {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _record_always(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each recording into dir_name as
    `<worker_name>.<time in ns>.pt.trace.json[.gz]`, the files TensorBoard's profiler plugin reads."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())
            os.remove(path)
    return handler


class profile:
    """Records the ops, backward nodes and record_function ranges run while it is active, on every
    thread. Without a schedule it records from start to stop (a `with` block); with one, `step()`
    marks the end of each step of a loop, and each recording ends with on_trace_ready(prof)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        if not activities:
            raise AssertionError("No valid profiler activities found")
        unsupported = activities - supported_activities()
        if unsupported:
            warnings.warn(f"Profiling {', '.join(sorted(a.name for a in unsupported))} is not supported by this "
                          "build; only the CPU is recorded", stacklevel=2)
        self.activities = activities
        self.schedule = schedule or _record_always
        self._has_schedule = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recording = None
        self._step_range = -1
        self._record_steps = False  # ProfilerStep#N ranges, once step() has been called
        self._events = None

    # ---- the loop ----
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._enter(self.current_action)

    def stop(self):
        self._close_step()
        if self._recording is not None:
            self._finish(save=self.on_trace_ready is not None)

    def step(self):
        """Ends a step of the loop: the schedule decides whether the next one is recorded, and a
        recording that ends here is handed to on_trace_ready."""
        self._close_step()
        self._record_steps = True
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous in _RECORDING and (previous is ProfilerAction.RECORD_AND_SAVE
                                       or self.current_action not in _RECORDING):
            self._finish(save=previous is ProfilerAction.RECORD_AND_SAVE)
        self._enter(self.current_action)

    def _enter(self, action):
        if action in _RECORDING and self._recording is None:
            self._recording = _Recording(self.record_shapes, self.profile_memory, self.with_flops, self.with_stack)
        if self._recording is not None and self._record_steps:
            self._step_range = _C._profiler.push_range(f"ProfilerStep#{self.step_num}")

    def _close_step(self):
        if self._step_range >= 0:
            _C._profiler.pop_range(self._step_range)
            self._step_range = -1

    def _finish(self, save):
        self._events = self._recording.stop()
        self._recording = None
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ---- what was recorded ----
    def events(self):
        """The spans of the last recording, an EventList of FunctionEvents."""
        if self._events is None:
            raise AssertionError("Profiler didn't finish running")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path):
        return self.events().export_chrome_trace(path)

    @property
    def profiler(self):  # (PyTorch's profile.profiler is the autograd-level profile: the same events here)
        return self

"""tensorplay.profiler, as torch.profiler: `profile` over a block or a training loop (with a
`schedule` of steps to skip, warm up and record, and `on_trace_ready` called with each recording),
`record_function` for the user's own ranges, `tensorboard_trace_handler` to write each recording as a
Chrome trace that TensorBoard's profiler plugin and Perfetto open, and `ExecutionTraceObserver` for
the graph of ops a program ran.

    with tensorplay.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        train_step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

The spans are recorded by the C++ core (see tensorplay.autograd.profiler). Beyond PyTorch's columns,
a table shows an "Autocast" column where autocast cast an op's inputs: the dtype it ran in and the
number of tensors cast."""

from tensorplay.autograd.profiler import record_function
from tensorplay.profiler.execution_trace import ExecutionTraceObserver
from tensorplay.profiler.profiler import (ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,
                                          tensorboard_trace_handler)

__all__ = ["ExecutionTraceObserver", "ProfilerAction", "ProfilerActivity", "kineto_available", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]


def kineto_available():
    """True, as in PyTorch's builds: the activity-based profiler (`profile(activities=...)`) is
    available. tensorplay's recorder is its own, not Kineto."""
    return True

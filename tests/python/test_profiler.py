"""tensorplay.profiler and tensorplay.autograd.profiler: what a profile records (ops, backward
nodes, the user's ranges, on every thread), its table, averages and Chrome trace, and the schedule of
a profiled loop, each against PyTorch's."""

import json
import threading
import warnings

import pytest
import torch

import tensorplay as tp
from tensorplay.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def train_step(model, x, y):
    with record_function("forward"):
        loss = tp.nn.functional.cross_entropy(model(x), y)
    with record_function("backward"):
        loss.backward()
    return loss


@pytest.fixture
def model():
    tp.manual_seed(0)
    return tp.nn.Sequential(tp.nn.Linear(8, 16), tp.nn.ReLU(), tp.nn.Linear(16, 4))


def names(events):
    return {e.name for e in events}


def test_a_training_step_records_its_ops_backward_nodes_and_ranges(model):
    x, y = tp.randn(5, 8), tp.tensor([0, 1, 2, 3, 0])
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train_step(model, x, y)
    recorded = names(prof.events())
    assert {"forward", "backward", "aten::linear", "aten::relu"} <= recorded
    assert "autograd::engine::evaluate_function: ReluBackward0" in recorded
    assert "ReluBackward0" in recorded
    # The forward ops lie inside the "forward" range, the backward nodes inside "backward".
    by_name = {e.name: e for e in prof.events()}
    assert by_name["aten::relu"].cpu_parent.name == "forward"
    node = by_name["ReluBackward0"]
    assert node.cpu_parent.name == "autograd::engine::evaluate_function: ReluBackward0"
    assert node.cpu_parent.cpu_parent.name == "backward"


def test_times_add_up(model):
    x, y = tp.randn(64, 8), tp.randint(0, 4, (64,))
    with profile() as prof:
        for _ in range(3):
            train_step(model, x, y)
    events = prof.events()
    for e in events:
        assert e.time_range[0] <= e.time_range[1]
        children = sum(c.cpu_time_total for c in e.cpu_children)
        assert children <= e.cpu_time_total + 1e-3
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - children)
        for c in e.cpu_children:  # a child lies within its parent
            assert e.time_range[0] <= c.time_range[0] and c.time_range[1] <= e.time_range[1]
    top = [e for e in events if e.cpu_parent is None]
    assert events.self_cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in top), rel=1e-9)
    averages = prof.key_averages()
    forward = next(a for a in averages if a.key == "forward")
    assert forward.count == 3
    assert forward.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in events if e.name == "forward"))
    assert forward.cpu_time == pytest.approx(forward.cpu_time_total / 3)


def test_the_table_has_pytorchs_columns_and_sorts(model):
    x, y = tp.randn(5, 8), tp.tensor([0, 1, 2, 3, 0])
    with profile() as prof:
        train_step(model, x, y)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    lines = table.splitlines()
    for column in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"):
        assert column in lines[1]
    assert "CPU Mem" not in lines[1] and "Input Shapes" not in lines[1]
    assert lines[-1].startswith("Self CPU time total: ")
    assert len(lines) == 3 + 5 + 2  # separator, header, separator, the rows, separator, total
    averages = sorted(prof.key_averages(), key=lambda a: a.cpu_time_total, reverse=True)
    assert lines[3].split()[0] == averages[0].key.split()[0]
    # The same shape as PyTorch's own table of the same program.
    with torch.profiler.profile() as torch_prof:
        torch.mm(torch.randn(3, 3), torch.randn(3, 3))
    torch_lines = torch_prof.key_averages().table().splitlines()
    assert lines[1].split("  ")[-9:] == torch_lines[1].split("  ")[-9:]


def test_input_shapes_and_memory_are_recorded_when_asked():
    a, b = tp.randn(300, 400), tp.randn(400, 500)
    with profile(record_shapes=True, profile_memory=True) as prof:
        tp.mm(a, b)
        tp.mm(a[:10], b)
    table = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in table and "CPU Mem" in table and "Self CPU Mem" in table
    mms = [e for e in prof.events() if e.name == "aten::mm"]
    assert [e.input_shapes for e in mms] == [[[300, 400], [400, 500]], [[10, 400], [400, 500]]]
    assert mms[0].input_dtypes == ["float32", "float32"]
    assert len([a for a in prof.key_averages(group_by_input_shape=True) if a.key == "aten::mm"]) == 2
    assert len([a for a in prof.key_averages() if a.key == "aten::mm"]) == 1
    with profile(record_shapes=True) as prof:
        tp.add(tp.randn(2), tp.randn(2, dtype=tp.bfloat16), alpha=2)
        tp.sum(tp.ones(2, 3), 1)
    add, total = (e for e in prof.events() if e.name in ("aten::add", "aten::sum"))
    assert (add.input_shapes, add.input_dtypes) == ([[2], [2], []], ["float32", "bfloat16", "Scalar"])
    assert len(total.input_shapes) == len(total.input_dtypes) and total.input_shapes[0] == [2, 3]
    assert mms[0].cpu_memory_usage >= 300 * 500 * 4  # its output


def test_views_factories_and_the_casts_autocast_makes_are_recorded():
    a = tp.randn(4, 5)
    with profile() as prof:
        with tp.autocast("cpu"):
            tp.mm(a, a.t().contiguous())
        tp.zeros(3).reshape(1, 3).expand(2, 3)
    recorded = names(prof.events())
    assert {"aten::t", "aten::contiguous", "aten::to", "aten::zeros", "aten::reshape", "aten::expand"} <= recorded
    assert sum(e.name == "aten::to" for e in prof.events()) >= 2  # autocast's two casts to bfloat16


def test_autocast_says_what_it_ran_an_op_in():
    a, b = tp.randn(4, 5), tp.randn(5, 3)
    with profile() as prof:
        with tp.autocast("cpu"):
            tp.mm(a, b)
        tp.mm(a, b)
    mms = [e for e in prof.events() if e.name == "aten::mm"]
    assert [(e.autocast_dtype, e.autocast_casts) for e in mms] == [("bfloat16", 2), (None, 0)]
    assert "bfloat16 (2 casts)" in prof.key_averages().table()


def test_the_chrome_trace_holds_every_span(tmp_path, model):
    with profile(record_shapes=True) as prof:
        train_step(model, tp.randn(5, 8), tp.tensor([0, 1, 2, 3, 0]))
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = trace["traceEvents"]
    assert len(spans) == len(prof.events())
    assert all(s["ph"] == "X" and s["dur"] >= 0 and isinstance(s["tid"], int) for s in spans)
    assert {s["name"] for s in spans} == names(prof.events())
    assert next(s for s in spans if s["name"] == "forward")["cat"] == "user_annotation"
    assert next(s for s in spans if s["name"] == "aten::relu")["cat"] == "cpu_op"


def test_every_thread_is_recorded():
    def work():
        tp.relu(tp.randn(10))

    with profile() as prof:
        work()
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    relus = [e for e in prof.events() if e.name == "aten::relu"]
    assert len(relus) == 2 and relus[0].thread != relus[1].thread


def test_nothing_is_recorded_outside_a_profile_and_ranges_are_harmless_there():
    with record_function("outside"):
        tp.relu(tp.randn(3))
    with profile() as prof:
        pass
    assert len(prof.events()) == 0
    with profile() as prof:
        tp.relu(tp.randn(3))
    assert "outside" not in names(prof.events())


def test_record_function_is_a_decorator_and_nests():
    @record_function("outer")
    def outer():
        with record_function("inner"):
            return tp.relu(tp.randn(3))

    with profile() as prof:
        outer()
    inner = next(e for e in prof.events() if e.name == "inner")
    assert inner.cpu_parent.name == "outer"
    assert next(e for e in prof.events() if e.name == "aten::relu").cpu_parent is inner


def test_one_profile_at_a_time():
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass


@pytest.mark.parametrize("kwargs", [
    dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
    dict(wait=2, warmup=1, active=1, repeat=2, skip_first_wait=1),
    dict(wait=0, warmup=2, active=3),
    dict(wait=3, warmup=1, active=1, repeat=1),
])
def test_schedule_matches_pytorch(kwargs):
    ours, theirs = schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(step).name for step in range(20)] == [theirs(step).name for step in range(20)]


def test_schedule_checks_its_arguments_as_pytorch_does():
    for bad in (dict(wait=1, warmup=1, active=0), dict(wait=-1, warmup=1, active=1)):
        with pytest.raises(AssertionError) as ours:
            schedule(**bad)
        with pytest.raises(AssertionError) as theirs:
            torch.profiler.schedule(**bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=1, warmup=0, active=1)


def test_a_scheduled_loop_records_the_active_steps_and_hands_each_recording_over():
    recordings = []

    def on_trace_ready(prof):
        recordings.append(sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep#")}))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=plan, on_trace_ready=on_trace_ready) as prof:
        for step in range(10):
            with record_function(f"work{step}"):
                tp.relu(tp.randn(4))
            prof.step()
    assert recordings == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    assert {e.name for e in prof.events() if e.name.startswith("work")} == {"work6", "work7"}


def test_tensorboard_trace_handler_writes_a_trace_per_recording(tmp_path):
    handler = tp.profiler.tensorboard_trace_handler(str(tmp_path / "log"), worker_name="worker0")
    with profile(on_trace_ready=handler):
        tp.relu(tp.randn(4))
    (path,) = (tmp_path / "log").iterdir()
    assert path.name.startswith("worker0.") and path.name.endswith(".pt.trace.json")
    assert any(s["name"] == "aten::relu" for s in json.loads(path.read_text())["traceEvents"])


def test_the_older_interface():
    with tp.autograd.profiler.profile(record_shapes=True) as prof:
        with tp.autograd.profiler.record_function("block"):
            tp.mm(tp.randn(2, 3), tp.randn(3, 2))
    assert {"block", "aten::mm"} <= names(prof.function_events)
    assert "aten::mm" in prof.key_averages().table()
    assert prof.self_cpu_time_total > 0
    with pytest.raises(RuntimeError):
        tp.autograd.profiler.profile(use_cuda=True)


def test_the_names_are_pytorchs():
    def program(lib):
        a = lib.randn(4, 4, requires_grad=True)
        lib.mm(a, a).relu().sum().backward()

    recorded = {}
    for lib, prof in ((tp, profile()), (torch, torch.profiler.profile())):
        with prof:
            program(lib)
        recorded[lib] = names(prof.events())
    shared = {"aten::mm", "aten::relu", "aten::sum", "MmBackward0", "ReluBackward0", "SumBackward0",
              "autograd::engine::evaluate_function: MmBackward0"}
    assert shared <= recorded[torch] and shared <= recorded[tp]


def test_supported_activities_and_actions_are_pytorchs():
    assert tp.profiler.supported_activities() == {ProfilerActivity.CPU}
    assert [a.name for a in ProfilerAction] == [a.name for a in torch.profiler.ProfilerAction]
    assert {a.name: a.value for a in ProfilerActivity} == {n: int(v) for n, v in
                                                            torch.profiler.ProfilerActivity.__members__.items()}
    assert tp.profiler.kineto_available() is True


def test_the_execution_trace_is_the_graph_of_the_ops_run(tmp_path):
    path = tmp_path / "et.json"
    observer = tp.profiler.ExecutionTraceObserver().register_callback(str(path))
    assert observer.is_registered() and not observer.is_running()
    assert observer.get_output_file_path() == str(path)
    observer.start()
    with record_function("block"):
        tp.relu(tp.mm(tp.randn(2, 3), tp.randn(3, 2)))
    observer.stop()
    observer.unregister_callback()
    trace = json.loads(path.read_text())
    assert set(trace) >= {"schema", "pid", "time", "start_ts", "nodes", "finish_ts"}
    nodes = {n["id"]: n for n in trace["nodes"]}
    by_name = {n["name"]: n for n in trace["nodes"]}
    assert nodes[by_name["aten::mm"]["ctrl_deps"]]["name"] == "block"
    assert by_name["aten::mm"]["inputs"]["shapes"] == [[2, 3], [3, 2]]
    assert by_name["aten::relu"]["inputs"]["types"] == ["float32"]
    for node in trace["nodes"]:  # every node's parent is a node
        assert node["ctrl_deps"] in nodes
    with pytest.raises(RuntimeError, match="register_callback"):
        tp.profiler.ExecutionTraceObserver().start()


def flops_program(lib):
    """Each op PyTorch counts FLOPs for, with broadcasting, a strided, padded, dilated, grouped
    convolution, and linear and matmul (which count through addmm and bmm)."""
    lib.manual_seed(0)
    a, b = lib.randn(16, 1), lib.randn(16, 64)
    c, d = lib.randn(4, 5), lib.randn(5, 3)
    image, weight = lib.randn(2, 4, 9, 7), lib.randn(8, 2, 3, 3)
    x3, y3 = lib.randn(2, 4, 5), lib.randn(2, 5, 3)
    linear = lib.nn.Linear(5, 3)
    with lib.profiler.profile(with_flops=True) as prof:
        a + b
        b + a
        a * b
        lib.nn.functional.conv2d(image, weight, None, (2, 1), (0, 2), (2, 1), 2)
        lib.addmm(lib.zeros(3), c, d)
        lib.baddbmm(lib.zeros(2, 4, 3), x3, y3)
        lib.mm(c, d)
        lib.matmul(x3, y3)
        linear(c)
    return prof


def test_with_flops_counts_what_pytorch_counts():
    ours, theirs = flops_program(tp), flops_program(torch)
    counted = {e.key: e.flops for e in theirs.key_averages() if e.flops}
    assert {e.key: e.flops for e in ours.key_averages() if e.flops} == counted
    assert counted["aten::conv2d"] == 15552  # the formula's test: strides, padding, dilation, groups
    assert "Total FLOPs" in ours.key_averages().table()
    # The inputs were recorded for the counts only: without record_shapes the events keep none.
    assert all(e.input_shapes == [] for e in ours.events())


def test_concrete_inputs_are_pytorchs():
    image, weight = tp.randn(2, 4, 9, 7), tp.randn(8, 2, 3, 3)
    with profile(record_shapes=True) as prof:
        tp.nn.functional.conv2d(image, weight, None, (2, 1), (0, 2), (2, 1), 2)
    conv = next(e for e in prof.events() if e.name == "aten::conv2d")
    assert conv.concrete_inputs == [None, None, None, [2, 1], [0, 2], [2, 1], 2]
    assert conv.flops == 0  # counted only with with_flops


# ---- with_stack: the Python calls as spans ----

def _ancestors(event):
    chain = []
    while event.cpu_parent is not None:
        event = event.cpu_parent
        chain.append(event.name)
    return chain


def _caller(m, x):
    return _linear(m)(x).relu()


_LINEARS = {}


def _linear(m):
    if m not in _LINEARS:
        m.manual_seed(0)
        _LINEARS[m] = m.nn.Linear(4, 3)
    return _LINEARS[m]


def _profiled_call(m):
    x = m.randn(2, 4)
    with m.profiler.profile(with_stack=True) as prof:
        _caller(m, x)
        _linear(m)(x)
    return prof.events()


@pytest.mark.parametrize("m", [tp, torch])
def test_with_stack_records_python_calls_and_modules_around_the_ops(m):
    """As in PyTorch: each op under the Python function that called it ("file(line): function", the
    file relative to its sys.path entry, the line where the span starts), each module call under
    "nn.Module: <class>_<k>", builtins named by their repr."""
    events = _profiled_call(m)
    relu = next(e for e in events if e.name == "aten::relu")
    caller = next(e for e in events if e.name.endswith(": _caller"))
    assert caller.name == f"test_profiler.py({_caller.__code__.co_firstlineno}): _caller"
    parent = relu.cpu_parent
    if parent.name.startswith("<built-in method relu"):  # (torch's Tensor methods are builtins)
        parent = parent.cpu_parent
    assert parent.name == caller.name
    addmms = [e for e in events if e.name == "aten::addmm"]
    assert len(addmms) == 2
    first, second = (_ancestors(e) for e in addmms)
    assert "nn.Module: Linear_0" in first and caller.name in first  # the same module, called twice
    assert "nn.Module: Linear_0" in second and caller.name not in second
    assert not any(e.is_user_annotation for e in events)


@pytest.mark.parametrize("m", [tp, torch])
def test_without_with_stack_only_ops_are_recorded(m):
    x = m.randn(2, 4)
    with m.profiler.profile() as prof:
        _caller(m, x)
    assert not any(": _caller" in e.name or e.name.startswith("nn.Module") for e in prof.events())


def test_with_stack_follows_threads_and_exceptions_and_gives_back_the_profile_function():
    def raises():
        tp.ones(2).neg()
        raise ValueError("expected")

    def worker():
        tp.ones(3).exp()

    previous = lambda frame, event, arg: None  # noqa: E731  (another tool's profile function)
    import sys
    sys.setprofile(previous)
    try:
        with profile(with_stack=True) as prof:
            try:
                raises()
            except ValueError:
                pass
            tp.ones(2).abs()  # after the exception unwound: not under raises()
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
        assert sys.getprofile() is previous
    finally:
        sys.setprofile(None)
    events = prof.events()
    by_name = {e.name: e for e in events}
    assert any(n.endswith(": raises") for n in _ancestors(by_name["aten::neg"]))
    assert not any(n.endswith(": raises") for n in _ancestors(by_name["aten::abs"]))
    assert any(n.endswith(": worker") for n in _ancestors(by_name["aten::exp"]))

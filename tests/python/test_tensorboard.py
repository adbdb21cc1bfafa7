"""tensorplay.utils.tensorboard.SummaryWriter writes what torch.utils.tensorboard.SummaryWriter
writes: the same calls are made with both, on the same data, and tensorboard's EventAccumulator reads
back the same scalars, histograms (every field), images (decoded pixels), text and hyperparameter
records from both logs, run directories included. add_graph reads its graph off autograd rather than
a tracer, so its GraphDef is compared with PyTorch's where the two mean the same: parameters, module
scopes, the ops both name alike, inputs and outputs."""

import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import tensorplay

pytest.importorskip("tensorboard")
Image = pytest.importorskip("PIL.Image")
torch_tensorboard = pytest.importorskip("torch.utils.tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import metadata as hparams_metadata  # noqa: E402

from tensorplay.utils import tensorboard  # noqa: E402
from tensorplay.utils.tensorboard._graph import op_kind  # noqa: E402

RNG = np.random.default_rng(0)
DATA = {
    "normal": RNG.standard_normal(1000).astype(np.float32),
    "chw": RNG.random((3, 4, 5)).astype(np.float32),
    "batch": RNG.random((10, 1, 4, 5)).astype(np.float32),
    "hwc_uint8": (RNG.random((6, 7, 3)) * 255).astype(np.uint8),
    "hw": RNG.random((4, 6)).astype(np.float32),
}


def write(root, module, log_dir):
    """The same calls, with `root`'s tensors, through `module`'s SummaryWriter."""
    def t(name):
        return root.from_numpy(DATA[name].copy())

    with module.SummaryWriter(log_dir) as w:
        w.add_scalar("loss", 0.5, 1)
        w.add_scalar("loss", root.tensor(0.25), 2, walltime=1234.5)
        w.add_scalar("new_style", 3, 3, new_style=True)
        w.add_scalar("double", 3.5, 3, new_style=True, double_precision=True)
        w.add_histogram("default_bins", t("normal"), 0)
        w.add_histogram("auto_bins", t("normal"), 1, bins="auto")
        w.add_histogram("max_bins", t("normal"), 2, max_bins=7)
        w.add_histogram("ten_bins_max_three", t("normal"), 2, bins=10, max_bins=3)
        w.add_histogram("zeros_and_one", root.tensor([0.0, 0.0, 1.0]), 3)
        w.add_histogram("ints", root.arange(10), 4)
        w.add_image("chw", t("chw"), 0)
        w.add_images("batch", t("batch"), 0)
        w.add_image("hwc_uint8", t("hwc_uint8"), 0, dataformats="HWC")
        w.add_image("hw", t("hw"), 0, dataformats="HW")
        w.add_text("note", "hello **world**", 5)
        w.add_scalars("run/x", {"a": 1.0, "b": 2.0}, 3)
        w.add_scalars("run/x", {"a": 1.5}, 4)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "flag": True, "n": 3, "skip": None, "t": root.tensor([0.5])},
                      {"acc": 0.9}, run_name="hp", hparam_domain_discrete={"opt": ["sgd", "adam"]})
    with module.SummaryWriter(log_dir, purge_step=1) as w:  # a rerun from step 1 replaces what followed
        w.add_scalar("loss", 0.125, 1)


HPARAMS_TAGS = ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info")


def read(log_dir):
    """Everything EventAccumulator reads back, per run directory, keyed by (run, kind, tag)."""
    found = {}
    for run_dir, _, files in sorted(os.walk(log_dir)):
        if not any(f.startswith("events.out.tfevents") for f in files):
            continue
        run = os.path.relpath(run_dir, log_dir)
        acc = EventAccumulator(run_dir, size_guidance={"scalars": 0, "histograms": 0, "images": 0, "tensors": 0})
        acc.Reload()
        tags = acc.Tags()
        for tag in tags["scalars"]:
            found[run, "scalar", tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
        for tag in tags["histograms"]:
            found[run, "histogram", tag] = [(e.step, e.histogram_value) for e in acc.Histograms(tag)]
        for tag in tags["images"]:
            found[run, "image", tag] = [
                (e.step, e.width, e.height, np.asarray(Image.open(io.BytesIO(e.encoded_image_string))).tolist())
                for e in acc.Images(tag)]
        for tag in tags["tensors"]:
            found[run, "tensor", tag] = [(e.step, str(e.tensor_proto), acc.SummaryMetadata(tag).plugin_data.plugin_name)
                                         for e in acc.Tensors(tag)]
        for tag in HPARAMS_TAGS:
            if tag in acc.summary_metadata:
                found[run, "hparams", tag] = acc.SummaryMetadata(tag).plugin_data.content
    return found


def test_logs_read_back_as_torchs(tmp_path):
    write(torch, torch_tensorboard, tmp_path / "torch")
    write(tensorplay, tensorboard, tmp_path / "tensorplay")
    theirs, ours = read(tmp_path / "torch"), read(tmp_path / "tensorplay")
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key] == theirs[key], key
    assert ours["hp", "scalar", "acc"][0][1] == pytest.approx(0.9)
    assert {run for run, _, _ in ours} == {".", "hp", "run_x_a", "run_x_b"}


def test_values_read_back(tmp_path):
    """What was written, independently of PyTorch's writer."""
    with tensorboard.SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_histogram("weights", tensorplay.tensor([1.0, 2.0, 2.0, 3.0]), 7)
        w.add_image("red", tensorplay.tensor([[[1.0]], [[0.0]], [[0.0]]]), 1)
        w.add_text("note", "done", 2)
        w.add_hparams({"t": tensorplay.tensor(0.5), "opt": "adam"}, {"m": 1.0}, run_name="hp")  # 0-d: torch fails
    found = read(tmp_path)
    assert found[".", "scalar", "loss"] == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3))]
    (step, histogram), = found[".", "histogram", "weights"]
    assert step == 7 and (histogram.min, histogram.max, histogram.num, histogram.sum) == (1, 3, 4, 8)
    assert histogram.sum_squares == 18 and sum(histogram.bucket) == 4
    assert found[".", "image", "red"] == [(1, 1, 1, [[[255, 0, 0]]])]
    (step, proto, plugin), = found[".", "tensor", "note/text_summary"]
    assert step == 2 and 'string_val: "done"' in proto and plugin == "text"
    start_record = found["hp", "hparams", "_hparams_/session_start_info"]
    start = hparams_metadata.parse_session_start_info_plugin_data(start_record)
    assert start.hparams["t"].number_value == 0.5 and start.hparams["opt"].string_value == "adam"


def test_writer_without_a_directory_logs_under_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with tensorboard.SummaryWriter(comment="_lr0.1") as w:
        w.add_scalar("x", 1.0)
        log_dir = w.get_logdir()
    assert os.path.dirname(log_dir) == "runs" and log_dir.endswith("_lr0.1")
    assert read(log_dir)[".", "scalar", "x"][0][1] == 1.0


def test_close_then_log_opens_a_new_file(tmp_path):
    w = tensorboard.SummaryWriter(tmp_path)
    w.add_scalar("x", 1.0, 0)
    w.close()
    w.add_scalar("x", 2.0, 1)
    w.flush()
    w.close()
    assert len(os.listdir(tmp_path)) == 2
    assert read(tmp_path)[".", "scalar", "x"] == [(0, 1.0), (1, 2.0)]


def test_errors(tmp_path):
    with tensorboard.SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="Tensor should contain one element"):
            w.add_scalar("x", tensorplay.ones(2))
        with pytest.raises(ValueError, match="The input has no element."):
            w.add_histogram("h", tensorplay.ones(0))
        with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary."):
            w.add_hparams([], {})
        with pytest.raises(NotImplementedError, match="numpy array or tensorplay tensor are expected"):
            w.add_scalar("x", "one")


MISSING_PACKAGE = """
import sys
sys.modules["tensorboard"] = None  # as if it were not installed
try:
    import {module}
except ImportError as error:
    print(type(error).__name__, error)
"""


def test_import_without_tensorboard_names_the_package():
    def attempt(module):
        done = subprocess.run([sys.executable, "-c", MISSING_PACKAGE.format(module=module)], capture_output=True,
                              text=True, timeout=120, check=True)
        return done.stdout.strip()

    ours = attempt("tensorplay.utils.tensorboard")
    assert ours == attempt("torch.utils.tensorboard")
    assert ours.startswith("ModuleNotFoundError") and "tensorboard" in ours


def graph_models(root):
    """Models of `root` (tensorplay or torch) for add_graph, with their inputs: a Linear, a submodule
    (Linear and ReLU) and an op of the model's own; a root parameter on two inputs."""
    nn = root.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return root.relu(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 3)
            self.block = Block()
            self.out = nn.Linear(3, 2)

        def forward(self, x):
            return self.out(self.block(self.fc1(x)) + 1)

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(root.ones(3))

        def forward(self, a, b):
            return a * self.scale + b

    return {"net": (Net(), root.ones(2, 4)), "pair": (Pair(), (root.ones(2, 3), root.ones(2, 3)))}


def read_graph(log_dir):
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    assert acc.Tags()["graph"] and acc.Tags()["run_metadata"] == ["step1"]
    return {n.name: n for n in acc.Graph().node}, acc.RunMetadata("step1")


def logged_graph(module, model, inputs, log_dir):
    with module.SummaryWriter(log_dir) as w:
        w.add_graph(model, inputs)
    return read_graph(log_dir)


def scope(name):
    return name.rpartition("/")[0]


def parameter_name(name):
    """ "Net/Block[block]/Linear[fc]/weight" -> "block.fc.weight" (a module scope names its attribute in brackets)."""
    parts = name.split("/")
    return ".".join([re.fullmatch(r".*\[(.*)\]", p).group(1) for p in parts[1:-1]] + [parts[-1]])


def reaches(nodes, source, target):
    """Whether an edge path leads from node `source` to node `target`."""
    stack, seen = [target], set()
    while stack:
        name = stack.pop()
        if name == source:
            return True
        if name not in seen:
            seen.add(name)
            stack.extend(nodes[name].input)
    return False


def shapes(node):
    return [[d.size for d in shape.dim] for shape in node.attr["_output_shapes"].list.shape]


@pytest.mark.parametrize("name", ["net", "pair"])
def test_graph_matches_torchs(tmp_path, name):
    theirs, their_metadata = logged_graph(torch_tensorboard, *graph_models(torch)[name], tmp_path / "torch")
    model, inputs = graph_models(tensorplay)[name]
    ours, our_metadata = logged_graph(tensorboard, model, inputs, tmp_path / "tensorplay")
    assert our_metadata == their_metadata

    # The tracer reads each parameter through a prim::GetAttr node "<scope>/<name>/<name>.<k>".
    their_parameters = {parameter_name(scope(n)): n for n, node in theirs.items() if node.op == "prim::GetAttr"}
    our_parameters = {parameter_name(n): n for n, node in ours.items() if node.op == "Parameter"}
    assert sorted(our_parameters) == sorted(their_parameters) == sorted(dict(model.named_parameters()))
    for path, n in our_parameters.items():
        assert ours[n].attr["attr"].s.decode() == f"name: {path}"
        assert shapes(ours[n]) == [list(dict(model.named_parameters())[path].shape)]

    def ops(nodes):
        return {n: node for n, node in nodes.items()
                if node.op not in ("IO Node", "Parameter", "prim::GetAttr", "prim::Constant")}

    # The same module scopes hold ops; each parameter feeds ops of the same scope; the ops both
    # name alike (relu, add, mul; not aten::linear, which autograd records as t and addmm) sit in
    # the same scopes.
    assert {scope(n) for n in ops(ours)} == {scope(n) for n in ops(theirs)}
    for path in our_parameters:
        consumers = [{scope(n) for n, node in ops(nodes).items() if parameters[path] in node.input}
                     for nodes, parameters in ((ours, our_parameters), (theirs, their_parameters))]
        assert consumers[0] == consumers[1] != set(), path
    shared = {node.op for node in ops(ours).values()} & {node.op for node in ops(theirs).values()}
    assert shared == ({"aten::relu", "aten::add"} if name == "net" else {"aten::mul", "aten::add"})
    for kind in shared:
        assert (sorted(scope(n) for n, node in ops(ours).items() if node.op == kind)
                == sorted(scope(n) for n, node in ops(theirs).items() if node.op == kind)), kind

    io = sorted(n for n, node in ours.items() if node.op == "IO Node")
    assert io == sorted(n for n, node in theirs.items() if node.op == "IO Node")
    for n in io:
        assert shapes(ours[n]) == shapes(theirs[n]), n
        if n.startswith("input/"):
            assert reaches(ours, n, "output/output.1"), n
    for n in our_parameters.values():
        assert reaches(ours, n, "output/output.1"), n


def test_graph_edges_follow_the_ops(tmp_path):
    """Each op node's inputs are the nodes of its forward op's inputs, under the innermost module."""
    model, x = graph_models(tensorplay)["net"]
    nodes, _ = logged_graph(tensorboard, model, x, tmp_path)
    ops = {n: (node.op, sorted(node.input)) for n, node in nodes.items() if node.op.startswith("aten::")}
    assert ops == {
        "Net/Linear[fc1]/t": ("aten::t", ["Net/Linear[fc1]/weight"]),
        "Net/Linear[fc1]/addmm": ("aten::addmm", ["Net/Linear[fc1]/bias", "Net/Linear[fc1]/t", "input/x"]),
        "Net/Block[block]/Linear[fc]/t": ("aten::t", ["Net/Block[block]/Linear[fc]/weight"]),
        "Net/Block[block]/Linear[fc]/addmm": ("aten::addmm", [
            "Net/Block[block]/Linear[fc]/bias", "Net/Block[block]/Linear[fc]/t", "Net/Linear[fc1]/addmm"]),
        "Net/Block[block]/relu": ("aten::relu", ["Net/Block[block]/Linear[fc]/addmm"]),
        "Net/add": ("aten::add", ["Net/Block[block]/relu"]),  # the constant 1 leaves no node
        "Net/Linear[out]/t": ("aten::t", ["Net/Linear[out]/weight"]),
        "Net/Linear[out]/addmm": ("aten::addmm", ["Net/Linear[out]/bias", "Net/Linear[out]/t", "Net/add"]),
    }
    assert list(nodes["output/output.1"].input) == ["Net/Linear[out]/addmm"]
    assert nodes["Net/add"].attr["attr"].s == b"grad_fn: AddBackward0"
    # Shapes are known for the outputs of module calls only.
    assert shapes(nodes["Net/Block[block]/relu"]) == [[2, 3]] and shapes(nodes["Net/add"]) == []


def test_graph_of_a_model_without_parameters_leaves_the_model_as_it_was(tmp_path):
    """No input requires grad and no parameter exists, yet the ops are recorded (on a copy of the
    input), and neither the input, the grad mode nor the modules' training flags change."""
    nn = tensorplay.nn

    class Double(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU()
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.act(x)) * 2

    model = Double()
    model.drop.eval()
    x = tensorplay.ones(2, 3)
    with tensorplay.no_grad():
        nodes, _ = logged_graph(tensorboard, model, x, tmp_path)
        assert not tensorplay.is_grad_enabled()
    assert model.training and model.act.training and not model.drop.training
    assert not x.requires_grad and x.grad_fn is None
    assert {n: node.op for n, node in nodes.items()} == {
        "input/x": "IO Node", "Double/ReLU[act]/relu": "aten::relu", "Double/mul": "aten::mul",
        "output/output.1": "IO Node"}
    assert reaches(nodes, "input/x", "output/output.1")


def test_graph_with_an_integer_input(tmp_path):
    """An integer input cannot require grad: its node stands alone, the ops on it start at the weight."""
    model = tensorplay.nn.Sequential(tensorplay.nn.Embedding(5, 3), tensorplay.nn.Linear(3, 1))
    nodes, _ = logged_graph(tensorboard, model, tensorplay.tensor([[1, 2]]), tmp_path)
    assert nodes["Sequential/Embedding[0]/embedding"].op == "aten::embedding"
    assert reaches(nodes, "Sequential/Embedding[0]/weight", "output/output.1")
    assert shapes(nodes["input/input"]) == [[1, 2]] and not reaches(nodes, "input/input", "output/output.1")
    assert model[0].weight.grad is None


@pytest.mark.parametrize("node_name, kind", [
    ("AddmmBackward0", "aten::addmm"),
    ("TBackward0", "aten::t"),
    ("MaxPool2DWithIndicesBackward0", "aten::max_pool2d_with_indices"),
    ("Log1PBackward0", "aten::log1p"),
    ("NativeLayerNormBackward0", "aten::native_layer_norm"),
    ("DivBackward2", "aten::div"),
    ("GeluBackwardBackward0", "aten::gelu_backward"),
    ("ScaleBackward", "Scale"),  # a custom autograd.Function
])
def test_op_kind(node_name, kind):
    assert op_kind(node_name) == kind

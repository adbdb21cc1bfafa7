"""The graph SummaryWriter.add_graph logs, read off the autograd graph of one run of the model.

PyTorch traces the model with torch.jit.trace; tensorplay has no tracer, so the model is run once with
gradients recorded and the graph is walked back from the outputs' grad_fn through next_functions.
A backward node stands for the forward op that made it (AddmmBackward0 -> aten::addmm), an
AccumulateGrad node for the leaf it accumulates into: a parameter, named by its module path as
PyTorch names it ("Net/Linear[fc1]/weight"), or an input ("input/x"). Nodes are laid out as
PyTorch's (`_output_shapes` and `attr` attributes, RunMetadata with one CPU or GPU device), so
TensorBoard draws them alike. Only what autograd records is there:

- An op leaves a node only if one of its inputs requires grad. The inputs are therefore run as
  detached copies that require grad; integer inputs cannot, so the ops on them leave no node
  (an embedding lookup still shows, through its weight). Buffers, constants (the `1` of `x + 1`),
  frozen parameters and ops without a gradient (argmax, comparisons, detach) are absent.
- An op is placed in the innermost module whose call made it: a call's ops are the nodes reached
  from its outputs' grad_fns before the grad_fns of its positional tensor arguments. A tensor that
  reaches a module another way (a keyword argument, an attribute an earlier call set, a global)
  brings its history into that module.
- Shapes are known where a tensor is seen: inputs, parameters, outputs and every module call's
  outputs. The other ops inside a module carry no shape.
- One forward op may leave several nodes (Linear is t and addmm) where the tracer shows one
  (aten::linear).
"""

import inspect
import re

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from tensorplay import _C
from tensorplay.autograd.grad_mode import enable_grad

__all__ = ["graph", "op_kind"]


def op_kind(node_name):
    """The forward op a backward node stands for: "AddmmBackward0" -> "aten::addmm". A node is
    named after its op in title case ("max_pool2d" -> "MaxPool2D"), so a capital starts a word unless
    it follows a digit. A custom autograd.Function's node ("ScaleBackward") has no number and stands
    for the Function ("Scale")."""
    match = re.fullmatch(r"(\w+?)Backward(\d*)", node_name)
    if match is None:
        return node_name
    op, number = match.groups()
    if not number:
        return op
    return "aten::" + re.sub(r"(?<=[A-Za-z])(?=[A-Z])", "_", op).lower()


def _tensors(value):
    """The tensors in `value`, looking into lists, tuples and dicts."""
    if isinstance(value, _C.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _is_leaf(node):
    return node.name().endswith("AccumulateGrad")


def _shapes(shapes):
    """The `_output_shapes` attribute: one shape per output of the node."""
    return AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in s])
                                                     for s in shapes]))


class _Scopes:
    """Hooks on every submodule that note, during one run, the module call each backward node was
    made in ("Net/Block[block]/Linear[fc]"), and the shapes of the calls' outputs."""

    def __init__(self, model):
        root = type(model).__name__
        self.by_path = {"": root}  # module path ("block.fc") -> scope
        self.by_module = {}
        for path, module in model.named_modules():
            if path:
                parent, _, attr = path.rpartition(".")
                self.by_path[path] = f"{self.by_path[parent]}/{type(module).__name__}[{attr}]"
                self.by_module[module] = self.by_path[path]
        self.scope = {}  # backward node -> scope of the innermost call that made it
        self.shapes = {}  # backward node -> {output_nr: shape}
        self._arguments = []  # per call in progress: the grad_fns of its tensor arguments

    def enter(self, module, args):
        self._arguments.append({t.grad_fn for t in _tensors(args) if t.grad_fn is not None})

    def exit(self, module, args, output):
        self.claim(self.by_module[module], _tensors(output), self._arguments.pop())

    def claim(self, scope, outputs, arguments):
        """Gives `scope` to the nodes not yet placed between `outputs` and `arguments`. Inner calls
        end first, so a node keeps the innermost scope."""
        for t in outputs:
            if t.grad_fn is not None:
                self.shapes.setdefault(t.grad_fn, {})[t.output_nr] = list(t.shape)
        stack, seen = [t.grad_fn for t in outputs], set()
        while stack:
            node = stack.pop()
            if node is None or node in seen or node in arguments or _is_leaf(node):
                continue
            seen.add(node)
            self.scope.setdefault(node, scope)
            stack.extend(n for n, _ in node.next_functions)


def _run(model, args, scopes):
    """`model(*args)` in eval mode with gradients recorded and `scopes` hooked on its submodules;
    the modules' hooks and training flags are restored after."""
    modules = [m for path, m in model.named_modules() if path]
    training = {m: m.training for _, m in model.named_modules()}
    handles = []
    try:
        model.train(False)
        for m in modules:
            handles += [m.register_forward_pre_hook(scopes.enter), m.register_forward_hook(scopes.exit)]
        with enable_grad():
            return model(*args)
    finally:
        for handle in handles:
            handle.remove()
        for m, mode in training.items():
            m.training = mode


def _input_names(model, count):
    """The names of forward's positional parameters, as the tracer names the graph's inputs;
    "input.1", ... past them (a *args forward)."""
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    try:
        names = [p.name for p in inspect.signature(model.forward).parameters.values() if p.kind in positional]
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"input.{i + 1}" for i in range(count)]


def _post_order(roots):
    """The backward nodes reachable from `roots`, each after the nodes of its inputs."""
    order, seen = [], set()
    stack = [(node, False) for node in reversed(roots) if node is not None]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((n, False) for n, _ in reversed(node.next_functions) if n is not None and n not in seen)
    return order


def graph(model, args, verbose=False):
    """The GraphDef of one run of the module `model` on `args` (a tensor or a tuple of them), with
    the RunMetadata PyTorch logs beside it."""
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    # A copy that requires grad records the ops on it: without one, an op on the input alone
    # (the first layer of a model, or any op of a model without parameters) leaves no node.
    args = tuple(a.detach().requires_grad_() if isinstance(a, _C.Tensor) and (a.is_floating_point() or a.is_complex())
                 else a for a in args)
    scopes = _Scopes(model)
    outputs = _tensors(_run(model, args, scopes))
    scopes.claim(scopes.by_path[""], outputs, set())

    nodes, names, taken = [], {}, set()  # names: backward node, or id() of an input -> node name

    def add(name, op, inputs=(), attr="", shapes=None):
        unique, k = name, 0
        while unique in taken:
            k += 1
            unique = f"{name}.{k}"
        taken.add(unique)
        node = NodeDef(name=unique, op=op, input=list(inputs), attr={"attr": AttrValue(s=attr.encode())})
        if shapes is not None:
            node.attr["_output_shapes"].CopyFrom(_shapes(shapes))
        nodes.append(node)
        return unique

    for name, a in zip(_input_names(model, len(args)), args):
        if isinstance(a, _C.Tensor):
            names[id(a)] = add(f"input/{name}", "IO Node", shapes=[list(a.shape)])
    parameters = {id(p): path for path, p in model.named_parameters()}
    for node in _post_order([t.grad_fn for t in outputs]):
        if _is_leaf(node):
            leaf = node.variable
            path = parameters.get(id(leaf))
            if id(leaf) in names:  # an input
                names[node] = names[id(leaf)]
            elif path is None:  # a tensor made inside forward with requires_grad=True
                names[node] = add(f"{scopes.by_path['']}/tensor", "Tensor", shapes=[list(leaf.shape)])
            else:
                owner, _, attr = path.rpartition(".")
                names[node] = add(f"{scopes.by_path[owner]}/{attr}", "Parameter", attr=f"name: {path}",
                                  shapes=[list(leaf.shape)])
            continue
        grad_fn = node.name()
        kind = op_kind(grad_fn)
        inputs = [names[n] for n, _ in node.next_functions if n is not None]
        shapes = scopes.shapes.get(node, {})  # logged only when every output's shape was seen
        shapes = [shapes[nr] for nr in sorted(shapes)] if sorted(shapes) == list(range(len(shapes))) else []
        names[node] = add(f"{scopes.scope[node]}/{kind.rpartition('::')[2]}", kind, inputs, f"grad_fn: {grad_fn}",
                          shapes or None)
    for i, t in enumerate(outputs):
        source = names.get(t.grad_fn) if t.grad_fn is not None else names.get(id(t))  # an input returned as is
        add(f"output/output.{i + 1}", "IO Node", [source] if source else [], shapes=[list(t.shape)])

    device = next((t.device for t in outputs + [a for a in args if isinstance(a, _C.Tensor)]), None)
    device = "/device:CPU:0" if device is None or device.type == "cpu" else f"/device:GPU:{device.index or 0}"
    graph_def = GraphDef(node=nodes, versions=VersionDef(producer=22))
    if verbose:
        print(graph_def)
    return graph_def, RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device=device)]))

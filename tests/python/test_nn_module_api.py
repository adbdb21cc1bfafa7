"""The nn.Module API against torch.nn.Module's behaviour.

Most tests run one scenario twice, as scenario(torch) and scenario(tensorplay), and require the same
result, or the same exception class (same_outcome). Scenarios return plain summaries (names, types,
shapes, flags) so that the comparison is exact.
"""

import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, copy_state, same_outcome, to_numpy, tp_tensor


def names(pairs):
    return [name for name, _ in pairs]


def shapes(pairs):
    return [(name, tuple(value.shape)) for name, value in pairs]


def types(pairs):
    return [(name, type(value).__name__) for name, value in pairs]


def build_net(lib):
    """A nested model with parameters, persistent and non-persistent buffers and every container."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.bn = nn.BatchNorm2d(2)
            self.scale = nn.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.block = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2))
            self.heads = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 1, bias=False)])
            self.named = nn.ModuleDict({"act": nn.Tanh(), "norm": nn.LayerNorm(2)})
            self.plain_tensor = lib.zeros(3)   # neither a parameter nor a buffer
            self.number = 7

        def forward(self, x):
            x = self.bn(self.conv(x)).flatten(1)
            x = self.named["norm"](self.named["act"](self.block(x)))
            return self.heads[1](self.heads[0](x)) * self.scale

    return Net()


def build_shared(lib):
    """Tied weights and one module registered under two names."""
    nn = lib.nn

    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(4, 4)
            self.decoder = nn.Linear(4, 4)
            self.decoder.weight = self.encoder.weight
            self.act = nn.ReLU()
            self.act_again = self.act
            self.stack = nn.Sequential(self.encoder, nn.Linear(4, 3))

        def forward(self, x):
            return self.stack(self.act(self.decoder(self.encoder(x))))

    return Shared()


MODELS = {"Net": build_net, "Shared": build_shared}

VIEWS = {
    "named_parameters": lambda m: shapes(m.named_parameters()),
    "parameters": lambda m: [tuple(p.shape) for p in m.parameters()],
    "named_parameters_prefix": lambda m: names(m.named_parameters(prefix="model")),
    "named_parameters_no_recurse": lambda m: names(m.named_parameters(recurse=False)),
    "named_parameters_keep_duplicates": lambda m: names(m.named_parameters(remove_duplicate=False)),
    "named_buffers": lambda m: shapes(m.named_buffers()),
    "buffers": lambda m: [tuple(b.shape) for b in m.buffers()],
    "named_buffers_prefix_no_recurse": lambda m: names(m.named_buffers(prefix="x", recurse=False)),
    "named_modules": lambda m: types(m.named_modules()),
    "named_modules_prefix": lambda m: names(m.named_modules(prefix="root")),
    "named_modules_keep_duplicates": lambda m: names(m.named_modules(remove_duplicate=False)),
    "modules": lambda m: [type(x).__name__ for x in m.modules()],
    "named_children": lambda m: types(m.named_children()),
    "children": lambda m: [type(x).__name__ for x in m.children()],
    "state_dict": lambda m: shapes(m.state_dict().items()),
    "state_dict_prefix": lambda m: list(m.state_dict(prefix="p.")),
    "dir_has_members": lambda m: sorted(set(dir(m)) & {"conv", "bn", "scale", "steps", "cache", "encoder", "act"}),
}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("model", list(MODELS))
def test_traversal_matches_torch(model, view):
    """Names, order, prefixes and deduplication of the traversal methods and state_dict."""
    same_outcome(lambda lib: VIEWS[view](MODELS[model](lib)))


def test_forward_of_nested_model_matches_torch():
    torch_net, tp_net = build_net(torch), build_net(tensorplay)
    copy_state(torch_net, tp_net)
    x = np.random.default_rng(0).standard_normal((3, 1, 4, 4)).astype(np.float32)
    assert_same(tp_net(tp_tensor(x)), torch_net(torch.from_numpy(x)))


def test_shared_parameter_is_one_object():
    net = build_shared(tensorplay)
    assert net.decoder.weight is net.encoder.weight
    assert net.stack[0] is net.encoder
    params = list(net.parameters())
    assert len(params) == len({id(p) for p in params})


# ---------------------------------------------------------------------------------------------
# Registration and its errors


def _module(lib):
    return lib.nn.Module()


def _sub(lib, body):
    """A Module subclass whose __init__ runs body(self, lib) before calling Module.__init__."""

    class Early(lib.nn.Module):
        def __init__(self):
            body(self, lib)
            super().__init__()

    return Early


def _scenario_summary(m):
    return (names(m.named_parameters()), names(m.named_buffers()), list(m.state_dict()), names(m.named_children()))


def _set(m, name, value):
    setattr(m, name, value)
    return m


REGISTRATION = {
    # successful registrations
    "attr_parameter": lambda lib: _scenario_summary(_set(_module(lib), "w", lib.nn.Parameter(lib.ones(2)))),
    "attr_module": lambda lib: _scenario_summary(_set(_module(lib), "lin", lib.nn.Linear(2, 3))),
    "attr_plain_tensor_not_registered": lambda lib: _scenario_summary(_set(_module(lib), "t", lib.ones(2))),
    "register_parameter_None": lambda lib: _registered(lib, lambda m: m.register_parameter("w", None)),
    "register_buffer_None": lambda lib: _registered(lib, lambda m: m.register_buffer("b", None)),
    "register_buffer_non_persistent": lambda lib: _registered(
        lib, lambda m: m.register_buffer("b", lib.ones(2), persistent=False)),
    "attr_Buffer_non_persistent": lambda lib: _scenario_summary(
        _set(_module(lib), "b", lib.nn.Buffer(lib.ones(2), persistent=False))),
    "add_module": lambda lib: _registered(lib, lambda m: m.add_module("sub", lib.nn.ReLU())),
    "register_module": lambda lib: _registered(lib, lambda m: m.register_module("sub", lib.nn.ReLU())),
    "add_module_None": lambda lib: _registered(lib, lambda m: m.add_module("sub", None)),
    "assign_tensor_to_buffer_name_keeps_it_a_buffer": lambda lib: _registered(
        lib, lambda m: (m.register_buffer("b", lib.ones(2)), setattr(m, "b", lib.zeros(3)))),
    "assign_None_to_parameter_name": lambda lib: _registered(
        lib, lambda m: (setattr(m, "w", lib.nn.Parameter(lib.ones(2))), setattr(m, "w", None))),
    "parameter_replaces_buffer": lambda lib: _registered(
        lib, lambda m: (m.register_buffer("x", lib.ones(2)), setattr(m, "x", lib.nn.Parameter(lib.ones(2))))),
    "module_replaces_parameter": lambda lib: _registered(
        lib, lambda m: (setattr(m, "x", lib.nn.Parameter(lib.ones(2))), setattr(m, "x", lib.nn.ReLU()))),
    "delattr_parameter_buffer_module": lambda lib: _registered(lib, _add_then_delete),
    # errors: the exception class must be torch's
    "register_parameter_dotted_name": lambda lib: _registered(
        lib, lambda m: m.register_parameter("a.b", lib.nn.Parameter(lib.ones(1)))),
    "register_parameter_empty_name": lambda lib: _registered(
        lib, lambda m: m.register_parameter("", lib.nn.Parameter(lib.ones(1)))),
    "register_parameter_non_str_name": lambda lib: _registered(
        lib, lambda m: m.register_parameter(3, lib.nn.Parameter(lib.ones(1)))),
    "register_parameter_existing_attribute": lambda lib: _registered(
        lib, lambda m: (setattr(m, "x", 5), m.register_parameter("x", lib.nn.Parameter(lib.ones(1))))),
    "register_parameter_plain_tensor": lambda lib: _registered(lib, lambda m: m.register_parameter("w", lib.ones(1))),
    "register_buffer_dotted_name": lambda lib: _registered(lib, lambda m: m.register_buffer("a.b", lib.ones(1))),
    "register_buffer_empty_name": lambda lib: _registered(lib, lambda m: m.register_buffer("", lib.ones(1))),
    "register_buffer_non_tensor": lambda lib: _registered(lib, lambda m: m.register_buffer("b", [1.0, 2.0])),
    "register_buffer_existing_parameter": lambda lib: _registered(
        lib, lambda m: (setattr(m, "x", lib.nn.Parameter(lib.ones(1))), m.register_buffer("x", lib.ones(1)))),
    "register_buffer_existing_attribute": lambda lib: _registered(
        lib, lambda m: (setattr(m, "x", 5), m.register_buffer("x", lib.ones(1)))),
    "add_module_non_module": lambda lib: _registered(lib, lambda m: m.add_module("sub", lib.ones(1))),
    "add_module_dotted_name": lambda lib: _registered(lib, lambda m: m.add_module("a.b", lib.nn.ReLU())),
    "add_module_empty_name": lambda lib: _registered(lib, lambda m: m.add_module("", lib.nn.ReLU())),
    "add_module_existing_attribute": lambda lib: _registered(
        lib, lambda m: (setattr(m, "x", 5), m.add_module("x", lib.nn.ReLU()))),
    "assign_tensor_to_parameter_name": lambda lib: _registered(
        lib, lambda m: (setattr(m, "w", lib.nn.Parameter(lib.ones(2))), setattr(m, "w", lib.ones(2)))),
    "assign_non_module_to_module_name": lambda lib: _registered(
        lib, lambda m: (setattr(m, "sub", lib.nn.ReLU()), setattr(m, "sub", 3))),
    "assign_non_tensor_to_buffer_name": lambda lib: _registered(
        lib, lambda m: (m.register_buffer("b", lib.ones(2)), setattr(m, "b", 3))),
    "parameter_before_init": lambda lib: _sub(lib, lambda self, l: setattr(self, "w", l.nn.Parameter(l.ones(1))))(),
    "module_before_init": lambda lib: _sub(lib, lambda self, l: setattr(self, "m", l.nn.ReLU()))(),
    "register_buffer_before_init": lambda lib: _sub(lib, lambda self, l: self.register_buffer("b", l.ones(1)))(),
    "missing_attribute": lambda lib: _module(lib).does_not_exist,
    "module_with_arguments": lambda lib: lib.nn.Module(3),
    "base_forward_not_implemented": lambda lib: _module(lib)(lib.ones(1)),
}


def _registered(lib, action):
    m = _module(lib)
    action(m)
    return _scenario_summary(m)


def _add_then_delete(m):
    lib = torch if isinstance(m, torch.nn.Module) else tensorplay
    m.w = lib.nn.Parameter(lib.ones(1))
    m.register_buffer("b", lib.ones(1), persistent=False)
    m.sub = lib.nn.ReLU()
    m.keep = lib.nn.Tanh()
    del m.w, m.b, m.sub
    return m


@pytest.mark.parametrize("scenario", list(REGISTRATION))
def test_registration_matches_torch(scenario):
    same_outcome(REGISTRATION[scenario])


def test_registered_members_are_reachable_as_attributes():
    m = build_net(tensorplay)
    assert isinstance(m.scale, tensorplay.nn.Parameter)
    assert m.steps is dict(m.named_buffers())["steps"]
    assert m.conv is dict(m.named_children())["conv"]
    assert m.number == 7 and isinstance(m.plain_tensor, tensorplay.Tensor)


def test_get_submodule_and_get_parameter():
    for lib in (torch, tensorplay):
        m = build_net(lib)
        assert m.get_submodule("block.2") is m.block[2]
        assert m.get_parameter("heads.1.weight") is m.heads[1].weight
    same_outcome(lambda lib: build_net(lib).get_submodule("block.7"))
    same_outcome(lambda lib: build_net(lib).get_parameter("block.0.nothing"))


# ---------------------------------------------------------------------------------------------
# state_dict and load_state_dict


def test_state_dict_values_are_detached_and_share_memory():
    net = build_net(tensorplay)
    state = net.state_dict()
    assert isinstance(state, OrderedDict)
    assert not state["conv.weight"].requires_grad
    assert not isinstance(state["conv.weight"], tensorplay.nn.Parameter)
    with tensorplay.no_grad():
        state["conv.weight"].fill_(0.25)
    np.testing.assert_array_equal(to_numpy(net.conv.weight), 0.25)


def test_state_dict_keep_vars_returns_the_parameters():
    net = build_net(tensorplay)
    state = net.state_dict(keep_vars=True)
    assert state["conv.weight"] is net.conv.weight
    assert state["bn.running_mean"] is net.bn.running_mean


def test_load_state_dict_copies_values_into_the_same_objects():
    src, dst = build_net(tensorplay), build_net(tensorplay)
    with tensorplay.no_grad():
        src.bn.running_mean.fill_(3.0)
        src.scale.fill_(-2.0)
    weight = dst.conv.weight
    result = dst.load_state_dict(src.state_dict())
    assert dst.conv.weight is weight
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for name, value in src.state_dict().items():
        np.testing.assert_array_equal(to_numpy(dst.state_dict()[name]), to_numpy(value), err_msg=name)
    x = tp_tensor(np.ones((2, 1, 4, 4), dtype=np.float32))
    np.testing.assert_array_equal(to_numpy(dst.eval()(x)), to_numpy(src.eval()(x)))


def _edited_state(lib, drop=(), extra=()):
    net = build_net(lib)
    state = net.state_dict()
    for key in drop:
        del state[key]
    for key in extra:
        state[key] = lib.ones(1)
    return net, state


LOAD_CASES = {
    "missing": dict(drop=("block.2.bias", "bn.running_var")),
    "unexpected": dict(extra=("block.9.weight", "extra")),
    "missing_and_unexpected": dict(drop=("scale",), extra=("scales",)),
}


@pytest.mark.parametrize("case", list(LOAD_CASES))
def test_load_state_dict_strict_raises_runtime_error_naming_the_keys(case):
    messages = {}
    for lib in (torch, tensorplay):
        net, state = _edited_state(lib, **LOAD_CASES[case])
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(state)
        messages[lib.__name__] = str(info.value)
    for key in LOAD_CASES[case].get("drop", ()):
        assert "Missing key(s) in state_dict" in messages["tensorplay"] and f'"{key}"' in messages["tensorplay"]
    for key in LOAD_CASES[case].get("extra", ()):
        assert "Unexpected key(s) in state_dict" in messages["tensorplay"] and f'"{key}"' in messages["tensorplay"]
    assert messages["tensorplay"] == messages["torch"]


@pytest.mark.parametrize("case", list(LOAD_CASES))
def test_load_state_dict_non_strict_returns_missing_and_unexpected_keys(case):
    def scenario(lib):
        net, state = _edited_state(lib, **LOAD_CASES[case])
        result = net.load_state_dict(state, strict=False)
        return list(result.missing_keys), list(result.unexpected_keys), tuple(result._fields)

    same_outcome(scenario)


@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_shape_mismatch_raises_even_when_not_strict(strict):
    def scenario(lib):
        net, state = _edited_state(lib)
        state["block.0.weight"] = lib.ones(5, 5)
        net.load_state_dict(state, strict=strict)

    same_outcome(scenario)


def test_load_state_dict_ignores_non_persistent_buffers():
    same_outcome(lambda lib: list(build_net(lib).load_state_dict(build_net(lib).state_dict())))


# ---------------------------------------------------------------------------------------------
# Modes, conversions, gradients


def _training_flags(m):
    return [(name, sub.training) for name, sub in m.named_modules()]


MODES = {
    "default": lambda m: m,
    "eval": lambda m: m.eval(),
    "train_False": lambda m: m.train(False),
    "eval_then_train": lambda m: m.eval().train(),
    "child_eval_only": lambda m: (m.block.eval(), m)[1],
}


@pytest.mark.parametrize("mode", list(MODES))
def test_train_eval_set_flags_recursively(mode):
    same_outcome(lambda lib: _training_flags(MODES[mode](build_net(lib))))


def test_train_and_eval_return_self():
    net = build_net(tensorplay)
    assert net.train() is net and net.eval() is net


def test_train_rejects_non_bool_like_torch():
    same_outcome(lambda lib: build_net(lib).train("yes"))


def _dtypes_after(lib, convert):
    net = build_net(lib)
    convert(net, lib)
    return [(name, str(t.dtype).split(".")[-1]) for name, t in
            list(net.named_parameters()) + list(net.named_buffers())]


CONVERSIONS = {
    "to_float64": lambda m, lib: m.to(lib.float64),
    "to_dtype_kwarg": lambda m, lib: m.to(dtype=lib.float64),
    "double": lambda m, lib: m.double(),
    "half": lambda m, lib: m.half(),
    "bfloat16": lambda m, lib: m.bfloat16(),
    "double_then_float": lambda m, lib: m.double().float(),
    "to_cpu": lambda m, lib: m.to("cpu"),
    "to_int_dtype": lambda m, lib: m.to(lib.int32),
}


@pytest.mark.parametrize("conversion", list(CONVERSIONS))
def test_dtype_conversion_of_params_and_buffers_matches_torch(conversion):
    """Floating parameters and buffers take the dtype; num_batches_tracked stays int64."""
    same_outcome(lambda lib: _dtypes_after(lib, CONVERSIONS[conversion]))


def test_to_dtype_keeps_the_same_parameter_objects():
    net = build_net(tensorplay)
    weight, scale = net.conv.weight, net.scale
    out = net.to(tensorplay.float64)
    assert out is net
    assert net.conv.weight is weight and net.scale is scale
    assert net.conv.weight is net.conv.weight
    assert weight.dtype == tensorplay.float64 and weight.requires_grad and weight.is_leaf
    assert isinstance(weight, tensorplay.nn.Parameter)
    assert net.bn.running_mean.dtype == tensorplay.float64
    assert net.bn.num_batches_tracked.dtype == tensorplay.int64
    y = net(tp_tensor(np.ones((2, 1, 4, 4))))
    assert y.dtype == tensorplay.float64
    y.sum().backward()
    assert weight.grad.dtype == tensorplay.float64


def test_to_dtype_converts_existing_gradients_like_torch():
    def scenario(lib):
        lin = lib.nn.Linear(3, 2)
        lin(lib.ones(1, 3)).sum().backward()
        lin.double()
        return str(lin.weight.grad.dtype).split(".")[-1], str(lin.weight.dtype).split(".")[-1]

    same_outcome(scenario)


def _grads_after_zero_grad(lib, set_to_none):
    net = build_net(lib)
    net(lib.ones(2, 1, 4, 4)).sum().backward()
    grad = net.conv.weight.grad
    if set_to_none is None:
        net.zero_grad()
    else:
        net.zero_grad(set_to_none=set_to_none)
    summary = [(name, None if p.grad is None else float(p.grad.abs().sum())) for name, p in net.named_parameters()]
    return summary, net.conv.weight.grad is grad


@pytest.mark.parametrize("set_to_none", [None, True, False], ids=["default", "True", "False"])
def test_zero_grad(set_to_none):
    """Default and True: grads become None; False: the same grad tensors, zeroed in place."""
    same_outcome(lambda lib: _grads_after_zero_grad(lib, set_to_none))


def test_apply_visits_children_first_and_returns_self():
    def scenario(lib):
        net = build_net(lib)
        seen = []
        result = net.apply(lambda m: seen.append(type(m).__name__))
        return seen, result is net

    same_outcome(scenario)


def test_apply_can_reinitialise_weights():
    net = build_net(tensorplay)

    def init(m):
        if isinstance(m, tensorplay.nn.Linear):
            tensorplay.nn.init.constant_(m.weight, 0.5)

    net.apply(init)
    for lin in (net.block[0], net.block[2], net.heads[0], net.heads[1]):
        np.testing.assert_array_equal(to_numpy(lin.weight), 0.5)


def test_requires_grad_():
    def scenario(lib):
        net = build_net(lib)
        result = net.requires_grad_(False)
        flags = [p.requires_grad for p in net.parameters()]
        x = lib.ones(2, 1, 4, 4, requires_grad=True)
        net(x).sum().backward()
        frozen_grads = [p.grad is None for p in net.parameters()]
        net.block.requires_grad_()
        return result is net, flags, frozen_grads, x.grad is not None, [p.requires_grad for p in net.parameters()]

    same_outcome(scenario)


def test_parameter_grad_is_the_same_object_and_accumulates():
    net = build_net(tensorplay)
    x = tp_tensor(np.ones((2, 1, 4, 4), dtype=np.float32))
    net(x).sum().backward()
    p = net.block[0].weight
    assert p.grad is p.grad
    assert net.block[0].weight is net.block[0].weight
    first = to_numpy(p.grad)
    net(x).sum().backward()
    np.testing.assert_allclose(to_numpy(p.grad), 2 * first, rtol=1e-6)
    assert dict(net.named_parameters())["conv.weight"] is net.conv.weight


def test_parameter_basics_match_torch():
    def scenario(lib):
        t = lib.ones(3)
        p = lib.nn.Parameter(t)
        frozen = lib.nn.Parameter(lib.ones(2), requires_grad=False)
        with lib.no_grad():
            t.mul_(2.0)  # a Parameter shares its data's memory
        return (type(p).__name__, isinstance(p, lib.Tensor), p.requires_grad, p.is_leaf, frozen.requires_grad,
                p.tolist(), tuple(lib.nn.Parameter().shape))

    same_outcome(scenario)


def test_parameter_repr_matches_torch():
    t = repr(torch.nn.Parameter(torch.tensor([1.0, -2.5])))
    p = repr(tensorplay.nn.Parameter(tensorplay.tensor([1.0, -2.5])))
    assert p == t.replace("torch", "tensorplay")


def test_deepcopy_gives_independent_parameters_and_keeps_ties():
    net = build_shared(tensorplay)
    clone = copy.deepcopy(net)
    assert clone.decoder.weight is clone.encoder.weight
    assert clone.encoder.weight is not net.encoder.weight
    assert isinstance(clone.encoder.weight, tensorplay.nn.Parameter)
    np.testing.assert_array_equal(to_numpy(clone.encoder.weight), to_numpy(net.encoder.weight))
    with tensorplay.no_grad():
        clone.encoder.weight.fill_(0.0)
    assert not (to_numpy(net.encoder.weight) == 0).all()


# ---------------------------------------------------------------------------------------------
# Hooks


def _hook_scenario(lib, setup):
    lin = lib.nn.Linear(2, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        lin.bias.copy_(lib.tensor([0.5, -0.5]))
    calls = []
    handles = setup(lin, calls, lib)
    x = lib.tensor([[1.0, -1.0]])
    first = lin(x).tolist()
    for h in handles:
        h.remove()
    second = lin(x).tolist()
    return first, second, calls


HOOKS = {
    "pre_hook_returns_tensor": lambda lin, calls, lib: [
        lin.register_forward_pre_hook(lambda m, args: (calls.append(("pre", type(args).__name__, len(args))),
                                                       args[0] * 2)[1])],
    "pre_hook_returns_tuple": lambda lin, calls, lib: [
        lin.register_forward_pre_hook(lambda m, args: (args[0] + 1,))],
    "pre_hook_returns_None": lambda lin, calls, lib: [
        lin.register_forward_pre_hook(lambda m, args: calls.append(("pre", m is lin)))],
    "forward_hook_replaces_output": lambda lin, calls, lib: [
        lin.register_forward_hook(lambda m, args, out: (calls.append(("post", type(args).__name__, out.tolist())),
                                                        out * 0 + 7)[1])],
    "forward_hook_returns_None": lambda lin, calls, lib: [
        lin.register_forward_hook(lambda m, args, out: calls.append(("post", args[0].tolist())))],
    "hooks_run_in_registration_order": lambda lin, calls, lib: [
        lin.register_forward_pre_hook(lambda m, args: (calls.append("pre1"), args[0] + 1)[1]),
        lin.register_forward_pre_hook(lambda m, args: (calls.append("pre2"), args[0] * 3)[1]),
        lin.register_forward_hook(lambda m, args, out: (calls.append("post1"), out - 1)[1]),
        lin.register_forward_hook(lambda m, args, out: (calls.append("post2"), out * 10)[1]),
    ],
    "removed_hook_does_not_run": lambda lin, calls, lib: _remove_now(
        lin.register_forward_hook(lambda m, args, out: calls.append("should not run"))),
}


def _remove_now(handle):
    handle.remove()
    return []


@pytest.mark.parametrize("hook", list(HOOKS))
def test_forward_hooks_match_torch(hook):
    """The output with the hooks, the output after handle.remove(), and what the hooks saw."""
    same_outcome(lambda lib: _hook_scenario(lib, HOOKS[hook]))


def test_hooks_on_submodules_fire_inside_parent_forward():
    def scenario(lib):
        net = build_net(lib)
        calls = []
        for name, m in net.named_modules():
            m.register_forward_hook(lambda mod, args, out, name=name: calls.append(name))
        net(lib.ones(2, 1, 4, 4))
        return calls

    same_outcome(scenario)


# ---------------------------------------------------------------------------------------------
# repr


def normalise_torch_repr(text):
    return text.replace("torch", "tensorplay")


REPRS = {
    "Linear": lambda nn: nn.Linear(3, 4),
    "Linear_no_bias": lambda nn: nn.Linear(3, 4, bias=False),
    "Bilinear": lambda nn: nn.Bilinear(2, 3, 4),
    "Conv1d": lambda nn: nn.Conv1d(2, 4, 3, stride=2, padding=1),
    "Conv2d": lambda nn: nn.Conv2d(3, 8, 3),
    "Conv2d_options": lambda nn: nn.Conv2d(4, 8, (3, 5), stride=(2, 1), padding=(1, 2), dilation=2, groups=2,
                                           bias=False),
    "Conv2d_same": lambda nn: nn.Conv2d(3, 4, 3, padding="same"),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
    "MaxPool2d": lambda nn: nn.MaxPool2d(2),
    "MaxPool2d_options": lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
    "AvgPool2d": lambda nn: nn.AvgPool2d(3, stride=2, padding=1),
    "AdaptiveAvgPool2d": lambda nn: nn.AdaptiveAvgPool2d((1, 1)),
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(4),
    "BatchNorm2d_options": lambda nn: nn.BatchNorm2d(4, eps=1e-3, momentum=None, affine=False),
    "LayerNorm": lambda nn: nn.LayerNorm(4),
    "LayerNorm_no_affine": lambda nn: nn.LayerNorm((2, 3), elementwise_affine=False),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "Dropout": lambda nn: nn.Dropout(0.25),
    "Embedding": lambda nn: nn.Embedding(10, 3),
    "Embedding_padding_idx": lambda nn: nn.Embedding(10, 3, padding_idx=0),
    "Flatten": lambda nn: nn.Flatten(),
    "Unflatten": lambda nn: nn.Unflatten(1, (2, 3)),
    "Identity": lambda nn: nn.Identity(),
    "ReLU": lambda nn: nn.ReLU(),
    "ReLU_inplace": lambda nn: nn.ReLU(inplace=True),
    "LeakyReLU": lambda nn: nn.LeakyReLU(0.2),
    "GELU_tanh": lambda nn: nn.GELU("tanh"),
    "SiLU": lambda nn: nn.SiLU(),
    "Tanh": lambda nn: nn.Tanh(),
    "Sigmoid": lambda nn: nn.Sigmoid(),
    "Softmax": lambda nn: nn.Softmax(dim=1),
    "LogSoftmax": lambda nn: nn.LogSoftmax(dim=-1),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(8, 2),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
    "CrossEntropyLoss": lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1),
    "MSELoss": lambda nn: nn.MSELoss(reduction="sum"),
    "Sequential": lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU()),
    "Sequential_OrderedDict": lambda nn: nn.Sequential(OrderedDict(fc=nn.Linear(2, 3), act=nn.Tanh())),
    "ModuleList_repeated": lambda nn: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
    "ModuleDict": lambda nn: nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.Sequential(nn.ReLU())}),
    "empty_Sequential": lambda nn: nn.Sequential(),
}


@pytest.mark.parametrize("module", list(REPRS))
def test_repr_matches_torch(module):
    assert repr(REPRS[module](tensorplay.nn)) == normalise_torch_repr(repr(REPRS[module](torch.nn)))


def test_repr_of_nested_model_matches_torch():
    assert repr(build_net(tensorplay)) == normalise_torch_repr(repr(build_net(torch)))


# ---------------------------------------------------------------------------------------------
# Containers


def _layers(nn, n):
    """Distinguishable modules: Linear(1, 1), Linear(2, 2), ..."""
    return [nn.Linear(i + 1, i + 1) for i in range(n)]


def _layout(container):
    return [(name, repr(m)) for name, m in container.named_children()], list(container.state_dict())


def _seq(lib):
    return lib.nn.Sequential(*_layers(lib.nn, 4))


def _mlist(lib):
    return lib.nn.ModuleList(_layers(lib.nn, 4))


def _mdict(lib):
    nn = lib.nn
    return nn.ModuleDict({"z": nn.Linear(1, 1), "a": nn.Linear(2, 2), "m": nn.ReLU()})


def _mutate(make, action):
    def scenario(lib):
        container = make(lib)
        result = action(container, lib)
        return _layout(container), _describe(result, container)

    return scenario


def _describe(value, container):
    """A comparable summary of what an indexing/mutation call returned."""
    if value is container:
        return "self"
    if isinstance(value, (torch.nn.Module, tensorplay.nn.Module)):
        return type(value).__name__, repr(value), _layout(value)
    if isinstance(value, (list, tuple)):
        return [_describe(v, container) for v in value]
    return value


CONTAINERS = {
    # Sequential
    "Sequential-len": _mutate(_seq, lambda c, lib: len(c)),
    "Sequential-index": _mutate(_seq, lambda c, lib: c[1]),
    "Sequential-negative_index": _mutate(_seq, lambda c, lib: c[-1]),
    "Sequential-slice": _mutate(_seq, lambda c, lib: c[1:3]),
    "Sequential-step_slice": _mutate(_seq, lambda c, lib: c[::2]),
    "Sequential-index_out_of_range": _mutate(_seq, lambda c, lib: c[4]),
    "Sequential-iterate": _mutate(_seq, lambda c, lib: [repr(m) for m in c]),
    "Sequential-append": _mutate(_seq, lambda c, lib: c.append(lib.nn.ReLU())),
    "Sequential-extend": _mutate(_seq, lambda c, lib: c.extend([lib.nn.ReLU(), lib.nn.Tanh()])),
    "Sequential-insert": _mutate(_seq, lambda c, lib: c.insert(1, lib.nn.ReLU())),
    "Sequential-pop": _mutate(_seq, lambda c, lib: c.pop(1)),
    "Sequential-setitem": _mutate(_seq, lambda c, lib: c.__setitem__(2, lib.nn.ReLU())),
    "Sequential-del_index_renumbers": _mutate(_seq, lambda c, lib: c.__delitem__(1)),
    "Sequential-del_slice_renumbers": _mutate(_seq, lambda c, lib: c.__delitem__(slice(0, 2))),
    "Sequential-del_then_append": _mutate(_seq, lambda c, lib: (c.__delitem__(0), c.append(lib.nn.ReLU()))[1]),
    "Sequential-add": _mutate(_seq, lambda c, lib: c + lib.nn.Sequential(lib.nn.ReLU())),
    "Sequential-OrderedDict_names": _mutate(
        lambda lib: lib.nn.Sequential(OrderedDict(first=lib.nn.Linear(1, 1), second=lib.nn.ReLU())),
        lambda c, lib: (c.first is c[0], repr(c[1]))),
    "Sequential-forward_order": _mutate(
        lambda lib: lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh()),
        lambda c, lib: c(lib.tensor([-1.0, 0.5])).tolist()),
    # ModuleList
    "ModuleList-len": _mutate(_mlist, lambda c, lib: len(c)),
    "ModuleList-index": _mutate(_mlist, lambda c, lib: c[2]),
    "ModuleList-negative_index": _mutate(_mlist, lambda c, lib: c[-2]),
    "ModuleList-slice": _mutate(_mlist, lambda c, lib: c[1:]),
    "ModuleList-index_out_of_range": _mutate(_mlist, lambda c, lib: c[-5]),
    "ModuleList-iterate": _mutate(_mlist, lambda c, lib: [repr(m) for m in c]),
    "ModuleList-append": _mutate(_mlist, lambda c, lib: c.append(lib.nn.ReLU())),
    "ModuleList-extend": _mutate(_mlist, lambda c, lib: c.extend([lib.nn.ReLU(), lib.nn.Tanh()])),
    "ModuleList-iadd": _mutate(_mlist, lambda c, lib: c.__iadd__([lib.nn.ReLU()])),
    "ModuleList-add": _mutate(_mlist, lambda c, lib: c + lib.nn.ModuleList([lib.nn.ReLU()])),
    "ModuleList-insert": _mutate(_mlist, lambda c, lib: c.insert(1, lib.nn.ReLU())),
    "ModuleList-insert_front": _mutate(_mlist, lambda c, lib: c.insert(0, lib.nn.ReLU())),
    "ModuleList-insert_at_end": _mutate(_mlist, lambda c, lib: c.insert(4, lib.nn.ReLU())),
    "ModuleList-pop": _mutate(_mlist, lambda c, lib: c.pop(0)),
    "ModuleList-setitem": _mutate(_mlist, lambda c, lib: c.__setitem__(-1, lib.nn.ReLU())),
    "ModuleList-del_index": _mutate(_mlist, lambda c, lib: c.__delitem__(1)),
    "ModuleList-del_slice": _mutate(_mlist, lambda c, lib: c.__delitem__(slice(1, 3))),
    "ModuleList-empty": _mutate(lambda lib: lib.nn.ModuleList(), lambda c, lib: len(c)),
    # ModuleDict
    "ModuleDict-keys_in_insertion_order": _mutate(_mdict, lambda c, lib: list(c.keys())),
    "ModuleDict-values": _mutate(_mdict, lambda c, lib: [repr(m) for m in c.values()]),
    "ModuleDict-items": _mutate(_mdict, lambda c, lib: [(k, repr(m)) for k, m in c.items()]),
    "ModuleDict-iterate_yields_keys": _mutate(_mdict, lambda c, lib: list(c)),
    "ModuleDict-getitem": _mutate(_mdict, lambda c, lib: c["a"]),
    "ModuleDict-missing_key": _mutate(_mdict, lambda c, lib: c["nope"]),
    "ModuleDict-contains": _mutate(_mdict, lambda c, lib: ("a" in c, "b" in c)),
    "ModuleDict-len": _mutate(_mdict, lambda c, lib: len(c)),
    "ModuleDict-setitem": _mutate(_mdict, lambda c, lib: c.__setitem__("new", lib.nn.Tanh())),
    "ModuleDict-replace": _mutate(_mdict, lambda c, lib: c.__setitem__("z", lib.nn.Tanh())),
    "ModuleDict-del": _mutate(_mdict, lambda c, lib: c.__delitem__("a")),
    "ModuleDict-pop": _mutate(_mdict, lambda c, lib: c.pop("z")),
    "ModuleDict-update_dict": _mutate(_mdict, lambda c, lib: c.update({"q": lib.nn.ReLU(), "a": lib.nn.Tanh()})),
    "ModuleDict-update_pairs": _mutate(_mdict, lambda c, lib: c.update([("q", lib.nn.ReLU())])),
    "ModuleDict-clear": _mutate(_mdict, lambda c, lib: c.clear()),
    "ModuleDict-from_pairs": _mutate(lambda lib: lib.nn.ModuleDict([("b", lib.nn.ReLU()), ("a", lib.nn.Tanh())]),
                                     lambda c, lib: list(c.keys())),
}


@pytest.mark.parametrize("scenario", list(CONTAINERS))
def test_container_matches_torch(scenario):
    """The container's registered children and state_dict after the call, and what it returned."""
    same_outcome(CONTAINERS[scenario])


def test_container_children_are_registered_parameters():
    model = tensorplay.nn.Sequential(tensorplay.nn.Linear(2, 3), tensorplay.nn.ModuleList([tensorplay.nn.Linear(3, 3)]))
    assert len(list(model.parameters())) == 4
    assert model[1][0].weight is list(model.parameters())[2]

"""ParameterList, ParameterDict, Container, DataParallel and the lazy modules against torch.

The containers: the same sequence of operations runs in both libraries, and the registered
parameter names, the values held, the reprs and the errors must agree. The lazy modules: built
from one factory in both libraries, they must stay uninitialized until their first forward, then
become torch's `cls_to_become` with torch's parameter shapes; after copying torch's weights across
both compute the same outputs and gradients (compare_module on the materialised pair).
"""

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, compare_module, copy_state, same_outcome, to_numpy, tp_tensor
from tensorplay.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def tensor_of(m, array):
    return torch.from_numpy(array.copy()) if m is torch else tp_tensor(array)


def normalised_repr(module):
    """The repr, with the library's name and the legacy type names made comparable."""
    return repr(module).replace("tensorplay.", "torch.")


# ---------------------------------------------------------------------------------------------
# ParameterList

def build_parameter_list(m):
    plist = m.nn.ParameterList([m.nn.Parameter(tensor_of(m, randn(2, 3))), tensor_of(m, randn(4, seed=1))])
    plist.append(tensor_of(m, randn(1, seed=2)))
    plist.extend([m.nn.Parameter(tensor_of(m, randn(2, seed=3))), "not a tensor"])
    plist += [tensor_of(m, randn(3, seed=4))]
    plist[1] = tensor_of(m, randn(5, seed=5))
    return plist


def test_parameter_list_registers_what_it_holds_like_torch():
    theirs, ours = build_parameter_list(torch), build_parameter_list(tensorplay)
    assert len(ours) == len(theirs) == 6
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for p, t in zip(ours.parameters(), theirs.parameters()):
        assert isinstance(p, tensorplay.nn.Parameter) and p.requires_grad
        assert_same(p, t)
    assert ours[4] == "not a tensor" and ours[-1] is list(ours)[-1]
    assert normalised_repr(ours) == repr(theirs)
    sliced = ours[1:5:2]
    assert type(sliced) is tensorplay.nn.ParameterList and len(sliced) == 2 and sliced[0] is ours[1]
    assert "0" not in dir(ours)


def test_parameter_list_parameters_train_inside_a_model():
    class Model(tensorplay.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = tensorplay.nn.ParameterList([tensorplay.ones(3) * i for i in range(1, 4)])

        def forward(self, x):
            for w in self.weights:
                x = x * w
            return x.sum()

    model = Model()
    model(tensorplay.ones(3)).backward()
    assert [n for n, _ in model.named_parameters()] == ["weights.0", "weights.1", "weights.2"]
    np.testing.assert_allclose(to_numpy(model.weights[0].grad), [6, 6, 6])


PARAMETER_LIST_ERRORS = {
    "index_out_of_range": lambda m: m.nn.ParameterList([m.ones(2)])[1],
    "negative_out_of_range": lambda m: m.nn.ParameterList([m.ones(2)])[-2],
    "setitem_out_of_range": lambda m: m.nn.ParameterList().__setitem__(0, m.ones(1)),
    "extend_with_tensor": lambda m: m.nn.ParameterList().extend(m.ones(2)),
    "extend_with_number": lambda m: m.nn.ParameterList().extend(3),
    "float_index": lambda m: m.nn.ParameterList([m.ones(2)])[0.0],
    "called": lambda m: m.nn.ParameterList([m.ones(2)])(m.ones(2)),
}


@pytest.mark.parametrize("name", list(PARAMETER_LIST_ERRORS))
def test_parameter_list_errors_match_torch(name):
    same_outcome(PARAMETER_LIST_ERRORS[name])


# ---------------------------------------------------------------------------------------------
# ParameterDict

def build_parameter_dict(m):
    pdict = m.nn.ParameterDict({"b": tensor_of(m, randn(2)), "a": m.nn.Parameter(tensor_of(m, randn(3, seed=1)))})
    pdict.update(OrderedDict([("z", tensor_of(m, randn(1, seed=2))), ("c", "text")]))
    pdict.update([("y", tensor_of(m, randn(2, 2, seed=3)))])
    pdict["x"] = tensor_of(m, randn(4, seed=4))
    pdict.setdefault("w", tensor_of(m, randn(1, seed=5)))
    pdict.setdefault("x", None)
    return pdict


def test_parameter_dict_keeps_torch_order_and_registers_parameters():
    theirs, ours = build_parameter_dict(torch), build_parameter_dict(tensorplay)
    # A plain dict is taken in sorted key order, an OrderedDict or a list of pairs in its own order.
    assert list(ours) == list(theirs) == ["a", "b", "z", "c", "y", "x", "w"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key in ["a", "b", "z", "y", "x", "w"]:
        assert isinstance(ours[key], tensorplay.nn.Parameter)
        assert_same(ours[key], theirs[key], what=key)
    assert ours["c"] == "text" and "c" in ours and "q" not in ours
    assert normalised_repr(ours) == repr(theirs)


def test_parameter_dict_mapping_methods_match_torch():
    results = {}
    for m in (torch, tensorplay):
        pdict = build_parameter_dict(m)
        popped_key, _ = pdict.popitem()
        pdict.pop("a")
        del pdict["b"]
        merged = pdict | m.nn.ParameterDict({"n": tensor_of(m, randn(1))})
        reverse = m.nn.ParameterDict({"n": tensor_of(m, randn(1))}).__ror__(pdict)
        pdict |= {"m": tensor_of(m, randn(2))}
        copied = pdict.copy()
        fresh = pdict.fromkeys(["k1", "k2"], tensor_of(m, randn(2)))
        results[m] = (popped_key, list(pdict.keys()), list(merged), list(reverse), list(copied),
                      list(reversed(pdict)), list(fresh), pdict.get("missing", "default"), len(pdict),
                      [type(v).__name__ for v in pdict.values()], [k for k, _ in pdict.items()])
        copied.clear()
        assert len(copied) == 0 and len(pdict) > 0
    assert results[tensorplay] == results[torch]


PARAMETER_DICT_ERRORS = {
    "missing_key": lambda m: m.nn.ParameterDict()["a"],
    "non_string_key": lambda m: m.nn.ParameterDict().__setitem__(1, m.ones(1)),
    "update_not_iterable": lambda m: m.nn.ParameterDict().update(3),
    "update_bad_pair_length": lambda m: m.nn.ParameterDict().update([("a", m.ones(1), 1)]),
    "update_pair_not_iterable": lambda m: m.nn.ParameterDict().update([3]),
    "called": lambda m: m.nn.ParameterDict()(m.ones(1)),
    "pop_missing": lambda m: m.nn.ParameterDict().pop("a"),
}


@pytest.mark.parametrize("name", list(PARAMETER_DICT_ERRORS))
def test_parameter_dict_errors_match_torch(name):
    same_outcome(PARAMETER_DICT_ERRORS[name])


# ---------------------------------------------------------------------------------------------
# Container and DataParallel

def test_container_is_deprecated_and_registers_its_keyword_modules():
    for m in (torch, tensorplay):
        with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
            container = m.nn.Container(first=m.nn.Linear(2, 3), second=m.nn.ReLU())
        assert [name for name, _ in container.named_children()] == ["first", "second"]
        assert [name for name, _ in container.named_parameters()] == ["first.weight", "first.bias"]


def test_data_parallel_forwards_to_its_module_and_prefixes_its_state():
    def make(nn):
        return nn.DataParallel(nn.Sequential(nn.Linear(4, 3), nn.Tanh()))

    torch_model, tp_model = make(torch.nn), make(tensorplay.nn)
    assert list(tp_model.state_dict()) == list(torch_model.state_dict()) == ["module.0.weight", "module.0.bias"]
    assert isinstance(tp_model.module, tensorplay.nn.Sequential)
    assert tp_model.device_ids == torch_model.device_ids == []
    assert repr(tp_model) == repr(torch_model)
    compare_module(make, [randn(5, 4)], kwargs=None)
    x = tp_tensor(randn(2, 4))
    assert_same(tp_model(x), tp_model.module(x))


# ---------------------------------------------------------------------------------------------
# Uninitialized parameters and lazy modules

def test_uninitialized_parameter_and_buffer_behave_like_torch():
    param = UninitializedParameter(dtype=tensorplay.float64)
    assert isinstance(param, tensorplay.nn.Parameter) and is_lazy(param) and param.requires_grad
    assert repr(param) == repr(torch.nn.UninitializedParameter()) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        param.shape
    duplicate = copy.deepcopy(param)
    assert type(duplicate) is UninitializedParameter and duplicate.data.dtype == tensorplay.float64
    param.materialize((2, 3))
    assert type(param) is tensorplay.nn.Parameter and tuple(param.shape) == (2, 3)
    assert param.dtype == tensorplay.float64 and not is_lazy(param)
    buffer = UninitializedBuffer(persistent=False)
    assert repr(buffer) == "<UninitializedBuffer>" and not buffer.requires_grad and buffer.persistent is False
    buffer.materialize((4,), dtype=tensorplay.float16)
    assert type(buffer) is tensorplay.Tensor and buffer.dtype == tensorplay.float16 and tuple(buffer.shape) == (4,)


X1 = randn(2, 3, 9, seed=1)
X2 = randn(2, 3, 6, 5, seed=2)
X3 = randn(2, 3, 4, 5, 4, seed=3)

LAZY_CASES = [
    ("LazyLinear", lambda nn: nn.LazyLinear(4), randn(3, 5)),
    ("LazyLinear-no_bias_3d", lambda nn: nn.LazyLinear(2, bias=False), randn(2, 3, 5)),
    ("LazyConv1d", lambda nn: nn.LazyConv1d(4, 3, padding=1), X1),
    ("LazyConv1d-unbatched", lambda nn: nn.LazyConv1d(4, 2, bias=False), X1[0]),
    ("LazyConv2d-groups", lambda nn: nn.LazyConv2d(6, 3, groups=3, stride=2), X2),
    ("LazyConv3d", lambda nn: nn.LazyConv3d(2, 2, padding=(1, 0, 1)), X3),
    ("LazyConvTranspose1d", lambda nn: nn.LazyConvTranspose1d(2, 3, stride=2), X1),
    ("LazyConvTranspose2d", lambda nn: nn.LazyConvTranspose2d(4, 2, output_padding=1, stride=2), X2),
    ("LazyConvTranspose3d-unbatched", lambda nn: nn.LazyConvTranspose3d(2, 2), X3[0]),
    ("LazyBatchNorm1d", lambda nn: nn.LazyBatchNorm1d(), randn(6, 3)),
    ("LazyBatchNorm2d-no_affine", lambda nn: nn.LazyBatchNorm2d(affine=False), X2),
    ("LazyBatchNorm3d-no_stats", lambda nn: nn.LazyBatchNorm3d(track_running_stats=False), X3),
    ("LazyInstanceNorm1d", lambda nn: nn.LazyInstanceNorm1d(affine=True), X1),
    ("LazyInstanceNorm2d-no_bias", lambda nn: nn.LazyInstanceNorm2d(affine=True, bias=False), X2),
    ("LazyInstanceNorm3d", lambda nn: nn.LazyInstanceNorm3d(), X3),
]


@pytest.mark.parametrize("name, make, x", LAZY_CASES, ids=[c[0] for c in LAZY_CASES])
def test_lazy_module_materialises_like_torch_then_computes_like_it(name, make, x):
    torch_module, tp_module = make(torch.nn), make(tensorplay.nn)
    assert repr(tp_module) == repr(torch_module)
    assert tp_module.has_uninitialized_params()
    assert list(tp_module.state_dict()) == list(torch_module.state_dict())
    for key, value in tp_module.state_dict().items():
        assert is_lazy(value) == torch.nn.parameter.is_lazy(torch_module.state_dict()[key]), key
    torch_module.train()
    torch_module(torch.from_numpy(x))
    tp_module(tp_tensor(x))
    assert type(tp_module).__name__ == type(torch_module).__name__
    assert type(tp_module) is getattr(tensorplay.nn, type(torch_module).__name__)
    assert not any(is_lazy(v) for v in tp_module.state_dict(keep_vars=True).values())
    assert repr(tp_module) == repr(torch_module)
    shapes = {k: tuple(v.shape) for k, v in tp_module.state_dict().items()}
    assert shapes == {k: tuple(v.shape) for k, v in torch_module.state_dict().items()}
    # With torch's (initialised, once-trained) weights and statistics, both compute the same.
    compare_module(lambda nn: torch_module if nn is torch.nn else tp_module, [x], train=True)


def test_lazy_module_takes_dtype_and_runs_the_hook_only_once():
    module = tensorplay.nn.LazyLinear(3, dtype=tensorplay.float64)
    calls = []
    original = module.initialize_parameters
    module.initialize_parameters = lambda *args: calls.append(1) or original(*args)
    module(tensorplay.ones(2, 4, dtype=tensorplay.float64))
    module(tensorplay.ones(2, 4, dtype=tensorplay.float64))
    assert calls == [1]
    assert module.weight.dtype == tensorplay.float64 and tuple(module.weight.shape) == (3, 4)
    assert not hasattr(module, "_initialize_hook")


def test_a_deep_copy_of_a_lazy_model_materialises_on_its_own():
    model = tensorplay.nn.Sequential(tensorplay.nn.LazyLinear(3), tensorplay.nn.LazyBatchNorm1d())
    twin = copy.deepcopy(model)
    twin(tensorplay.ones(4, 5))
    assert type(twin[0]) is tensorplay.nn.Linear and type(model[0]) is tensorplay.nn.LazyLinear
    model(tensorplay.ones(4, 2))
    assert tuple(model[0].weight.shape) == (3, 2) and tuple(twin[0].weight.shape) == (3, 5)


def test_lazy_initialisation_follows_the_default_schemes():
    """The materialised parameters are initialised as the eager module's are: uniform within
    1/sqrt(fan_in) for Linear/Conv, ones and zeros for norms."""
    linear = tensorplay.nn.LazyLinear(50)
    linear(tensorplay.ones(1, 16))
    assert np.abs(to_numpy(linear.weight)).max() <= 0.25 and np.abs(to_numpy(linear.weight)).std() > 0.05
    norm = tensorplay.nn.LazyBatchNorm1d()
    norm(tensorplay.ones(4, 3))
    np.testing.assert_array_equal(to_numpy(norm.weight), np.ones(3))
    np.testing.assert_array_equal(to_numpy(norm.bias), np.zeros(3))
    np.testing.assert_array_equal(to_numpy(norm.running_var) >= 0, np.ones(3, bool))
    assert int(norm.num_batches_tracked.item()) == 1


def test_lazy_module_in_a_model_trains_with_an_optimizer_created_after_the_first_forward():
    torch.manual_seed(0)
    model = tensorplay.nn.Sequential(tensorplay.nn.LazyLinear(8), tensorplay.nn.ReLU(), tensorplay.nn.LazyLinear(1))
    x, y = tp_tensor(randn(16, 5)), tp_tensor(randn(16, 1, seed=1))
    model(x)
    assert type(model[0]) is tensorplay.nn.Linear and tuple(model[2].weight.shape) == (1, 8)
    optimizer = tensorplay.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_load_state_dict_materialises_a_lazy_module_like_torch():
    source = torch.nn.Linear(5, 3)
    state = {k: tp_tensor(v) for k, v in source.state_dict().items()}
    theirs = torch.nn.LazyLinear(3)
    theirs.load_state_dict(source.state_dict())
    module = tensorplay.nn.LazyLinear(3)
    module.load_state_dict(state)
    assert not is_lazy(module.weight) and not is_lazy(module.bias)
    assert tuple(module.weight.shape) == tuple(theirs.weight.shape) == (3, 5)
    # Still lazy in type until the first forward, as in torch: the hook then finds nothing to infer.
    assert type(module).__name__ == type(theirs).__name__ == "LazyLinear"
    assert_same(module.weight, source.weight)
    x = randn(2, 5)
    assert_same(module(tp_tensor(x)), source(torch.from_numpy(x)), what="output after load")
    assert type(module) is tensorplay.nn.Linear


LAZY_ERRORS = {
    "conv_wrong_rank": lambda m: m.nn.LazyConv2d(3, 2)(m.ones(2, 3)),
    "conv_groups_do_not_divide": lambda m: m.nn.LazyConv1d(4, 2, groups=2)(m.ones(1, 3, 5)),
    "batchnorm_wrong_rank": lambda m: m.nn.LazyBatchNorm2d()(m.ones(2, 3)),
    "instance_norm_wrong_rank": lambda m: m.nn.LazyInstanceNorm3d()(m.ones(2, 3)),
    "lazy_conv_transpose_reflect": lambda m: m.nn.LazyConvTranspose2d(3, 2, padding_mode="reflect"),
}


@pytest.mark.parametrize("name", list(LAZY_ERRORS))
def test_lazy_errors_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_outcome(LAZY_ERRORS[name])

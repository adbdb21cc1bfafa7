"""tensorplay.compile, tensorplay._dynamo, tensorplay.compiler, tensorplay.jit and tensorplay.onnx:
the names programs touch around compiled, scripted or exported models. compile checks its arguments
as torch.compile does and returns the model itself, which runs eagerly; the decorators return what
they decorate; compiling TorchScript and exporting ONNX raise NotImplementedError."""

import warnings

import pytest
import torch

import tensorplay
import tensorplay._dynamo
import tensorplay.compiler
from call_outcomes import outcome


def step(x):
    return x * 2 + 1


@pytest.fixture(scope="module", autouse=True)
def torch_compile_imported():
    """torch.compile imports its compiler on first use, which warns; that happens here, so that the
    import's warnings stay out of the comparisons."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.compile(step)


@pytest.fixture
def fresh_notice(monkeypatch):
    """As if compile had not warned yet in this process."""
    monkeypatch.setattr(tensorplay.compiler, "_warned", False)


def test_compile_returns_the_model_and_warns_once(fresh_notice):
    model = tensorplay.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="tensorplay has no graph compiler yet") as caught:
        assert tensorplay.compile(model) is model
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tensorplay.compile(step, mode="max-autotune", fullgraph=True) is step
        assert tensorplay.compile(model, dynamic=True, backend="eager") is model
    x = tensorplay.ones(3)
    assert tensorplay.equal(tensorplay.compile(step)(x), step(x))
    assert list(tensorplay.compile(model).state_dict()) == ["weight", "bias"]


def test_compile_as_a_decorator(fresh_notice):
    with pytest.warns(UserWarning):
        @tensorplay.compile
        def plain(x):
            return x + 1

    @tensorplay.compile(mode="reduce-overhead", dynamic=False)
    def configured(x):
        return x - 1

    assert plain(tensorplay.zeros(1)).item() == 1 and configured(tensorplay.zeros(1)).item() == -1
    assert configured.__name__ == "configured"


def test_disabled_compile_says_nothing(fresh_notice):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tensorplay.compile(step, disable=True) is step


@pytest.mark.parametrize("expression", [
    "T.compile(step, mode='max-autotune', options={'a': 1})",
    "T.compile(step, mode='foo')",
    "T.compile(step, backend='nonexistent')",
    "T.compile(1)",
    "T.compile('x')",
    "T.compile()(None)",
    "callable(T.compile(step, mode='foo', backend='eager'))",
    "T.compile(step, backend=lambda gm, inputs: gm) is not None",
    "T.compiler.is_compiling()",
    "T.compiler.is_dynamo_compiling()",
    "T.compiler.is_exporting()",
    "T.compiler.get_default_backend()",
    "T.compiler.list_backends()",
    "T.compiler.list_backends(exclude_tags=())",
    "T.compiler.list_backends(exclude_tags=('debug',))",
    "T.compiler.reset()",
    "T.compiler.cudagraph_mark_step_begin()",
    "T.compiler.allow_in_graph(step) is step",
    "T.compiler.assume_constant_result(step) is step",
    "T._dynamo.is_compiling()",
    "T._dynamo.reset()",
    "T._dynamo.list_backends()",
    "T._dynamo.allow_in_graph(step) is step",
    "T._dynamo.disallow_in_graph(step) is step",
    "T._dynamo.mark_dynamic(T.zeros(3), 0)",
    "T._dynamo.maybe_mark_dynamic(T.zeros(3), 0)",
    "T._dynamo.mark_static(T.zeros(3))",
    "T._dynamo.graph_break()",
    "T._dynamo.optimize('nonexistent')",
    "T._dynamo.config.suppress_errors",
    "T._dynamo.config.cache_size_limit",
    "T._dynamo.config.recompile_limit",
    "T._dynamo.config.capture_scalar_outputs",
    "T._dynamo.config.no_such_setting",
    "setattr(T._dynamo.config, 'no_such_setting', 1)",
    "T.jit.is_scripting()",
    "T.jit.is_tracing()",
    "T.jit.ignore(step) is step",
    "T.jit.ignore(drop=True)(step) is step",
    "T.jit.ignore(drop_on_export=True)(step) is step",
    "T.jit.ignore(3)",
    "T.jit.unused(step) is step",
    "T.jit.export(step) is step",
    "T.jit.annotate(int, 3)",
    "isinstance(T.nn.Linear(2, 2), T.jit.ScriptModule)",
    "T.onnx.is_in_onnx_export()",
    "issubclass(T.onnx.OnnxExporterError, RuntimeError)",
])
def test_answers_as_torch(expression, monkeypatch):
    monkeypatch.setattr(tensorplay.compiler, "_warned", True)  # compile's notice is tested above
    assert outcome(tensorplay, expression, {"step": step}) == outcome(torch, expression, {"step": step})


def test_decorators_keep_the_function(monkeypatch):
    """torch wraps a disabled function in one that runs it uncompiled; here it is the function."""
    monkeypatch.setattr(tensorplay.compiler, "_warned", True)
    for decorate in (tensorplay.compiler.disable, tensorplay._dynamo.disable, tensorplay._dynamo.optimize("eager"),
                     tensorplay.compiler.nested_compile_region, tensorplay.jit.script_if_tracing):
        assert decorate(step) is step
    assert tensorplay.compiler.disable(recursive=False)(step) is step


def test_dynamo_config_patch_restores():
    config = tensorplay._dynamo.config
    with config.patch(suppress_errors=True, cache_size_limit=64):
        assert config.suppress_errors is True and config.cache_size_limit == 64
    assert config.suppress_errors is False and config.cache_size_limit == 8
    config.suppress_errors = True
    try:
        assert tensorplay._dynamo.config.suppress_errors is True
    finally:
        config.suppress_errors = False


@pytest.mark.parametrize("call", [
    lambda: tensorplay.jit.script(step),
    lambda: tensorplay.jit.trace(step, (tensorplay.ones(1),)),
    lambda: tensorplay.jit.save(step, "model.pt"),
    lambda: tensorplay.jit.load("model.pt"),
    lambda: tensorplay.jit.ScriptModule(),
])
def test_torchscript_is_not_implemented(call):
    with pytest.raises(NotImplementedError, match="tensorplay has no TorchScript compiler"):
        call()


def test_onnx_export_is_not_implemented(tmp_path):
    with pytest.raises(NotImplementedError, match="cannot export models to ONNX"):
        tensorplay.onnx.export(tensorplay.nn.Linear(2, 2), (tensorplay.ones(1, 2),), tmp_path / "model.onnx")
    assert not (tmp_path / "model.onnx").exists()

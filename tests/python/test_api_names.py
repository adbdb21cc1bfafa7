"""Every public name of the namespaces a training script touches exists in tensorplay: torch.nn's
module classes, torch.nn.functional, nn.init, nn.utils, nn.utils.rnn, torch.optim's optimizers,
optim.swa_utils, torch.autograd and torch.random, as PyTorch 2.13 lists them. A name left out is in EXCLUDED with its reason;
a name that is excluded but now exists fails too, so the list stays short and true.

Each name's behaviour is tested where its family is (test_nn_*.py, test_optim*.py, the op table);
this test keeps a program from stopping at the first name we lack."""

import importlib
import inspect

import pytest
import torch

import tensorplay

NAMESPACES = ("nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "optim", "optim.swa_utils", "autograd",
              "random")

FLOAT8 = "a float8 scaled matmul (or its scaling enums): tensorplay has no float8 dtypes"

EXCLUDED = {
    ("nn.functional", "scaled_mm"): FLOAT8,
    ("nn.functional", "scaled_grouped_mm"): FLOAT8,
    ("nn.functional", "ScalingType"): FLOAT8,
    ("nn.functional", "SwizzleType"): FLOAT8,
    ("autograd", "NestedIOFunction"): "the pre-1.0 Function with instance methods; PyTorch 2.13's own fails on "
                                      "use (its forward calls a _do_forward that no base class has)",
}


def public_names(namespace):
    """The public names of torch.<namespace> that a program can use: module classes in nn,
    optimizers in optim, and functions and classes elsewhere (typing aliases and C++ binding types
    left out)."""
    module = importlib.import_module(f"torch.{namespace}")
    names = set()
    for name in getattr(module, "__all__", dir(module)):
        obj = getattr(module, name, None)
        if name.startswith("_") or obj is None or inspect.ismodule(obj):
            continue
        if namespace == "nn":
            if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
                names.add(name)
        elif namespace == "optim":
            if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer):
                names.add(name)
        elif inspect.isclass(obj):
            if not getattr(obj, "__module__", "").startswith(("torch._C", "typing", "collections")):
                names.add(name)
        elif callable(obj) and getattr(obj, "__module__", "") != "typing":
            names.add(name)
    return names


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_name_exists(namespace):
    ours = importlib.import_module(f"tensorplay.{namespace}")
    excluded = {name for (ns, name) in EXCLUDED if ns == namespace}
    missing = sorted(name for name in public_names(namespace) - excluded if not hasattr(ours, name))
    assert not missing, f"tensorplay.{namespace} lacks {missing}"
    stale = sorted(name for name in excluded if hasattr(ours, name))
    assert not stale, f"EXCLUDED lists names tensorplay.{namespace} now has: {stale}"

"""Helpers shared by the nn / optim test files: moving values between torch and tensorplay, copying
a torch module's weights into a tensorplay module, and running the same call in both libraries.

The tests build every model twice from one factory, `make(torch)` and `make(tensorplay)`, since
tensorplay copies torch's API; torch's initialised parameters and buffers are then copied into the
tensorplay module (copy_state), so both compute with the same weights.
"""

import ml_dtypes
import numpy as np
import torch

import tensorplay

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# float32 forward/backward agreement; individual tests loosen this where the maths is long.
RTOL, ATOL = 1e-4, 1e-5


def dtype_name(dtype):
    """'float32' for torch.float32 and tensorplay.float32 alike."""
    return str(dtype).split(".")[-1]


def to_numpy(t):
    """A float64/int64/bool numpy copy of a torch or tensorplay tensor (bfloat16 widened first)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy().copy()
    t = t.detach()
    if t.dtype == tensorplay.bfloat16:
        t = t.float()
    return np.array(t.numpy(), copy=True)


def tp_tensor(array, requires_grad=False, dtype=None):
    """A tensorplay leaf with the values of a numpy array or torch tensor."""
    if isinstance(array, torch.Tensor):
        array = array.detach()
        if array.dtype == torch.bfloat16:
            array = array.float().numpy().astype(BFLOAT16)
        else:
            array = array.numpy()
    out = tensorplay.from_numpy(np.array(array, copy=True, order="C"))
    if dtype is not None:
        out = out.to(dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def torch_tensor(array, requires_grad=False, dtype=None):
    out = torch.from_numpy(np.array(array, copy=True, order="C"))
    if dtype is not None:
        out = out.to(dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def assert_same(tp_value, torch_value, rtol=RTOL, atol=ATOL, what="value"):
    """tensorplay's tensor has torch's shape and dtype and values within rtol/atol."""
    assert isinstance(tp_value, tensorplay.Tensor), f"{what}: expected a tensorplay.Tensor, got {type(tp_value)}"
    assert tuple(tp_value.shape) == tuple(torch_value.shape), (
        f"{what}: shape {tuple(tp_value.shape)} != torch's {tuple(torch_value.shape)}")
    assert dtype_name(tp_value.dtype) == dtype_name(torch_value.dtype), (
        f"{what}: dtype {tp_value.dtype} != torch's {torch_value.dtype}")
    got, want = to_numpy(tp_value), to_numpy(torch_value)
    if got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def copy_state(torch_module, tp_module):
    """Copies every parameter and buffer of torch_module into tp_module (same names required)."""
    tp_state = tp_module.state_dict(keep_vars=True)
    torch_state = torch_module.state_dict(keep_vars=True)
    assert list(tp_state) == list(torch_state), "state_dict keys differ from torch's"
    with tensorplay.no_grad():
        for name, value in torch_state.items():
            target = tp_state[name]
            assert tuple(target.shape) == tuple(value.shape), f"{name}: shape {target.shape} != {value.shape}"
            target.copy_(tp_tensor(value).to(target.dtype))
    # Non-persistent buffers are not in state_dict; copy them by name as well.
    tp_buffers = dict(tp_module.named_buffers())
    for name, value in torch_module.named_buffers():
        if name not in torch_state and name in tp_buffers:
            with tensorplay.no_grad():
                tp_buffers[name].copy_(tp_tensor(value))


def upstream_grad(shape, seed, dtype=np.float32):
    """A fixed random gradient to feed backward() with, so that every output element matters."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


class NoGrad:
    """Marks a floating numpy input that must not require grad (a loss target, a mask...)."""

    def __init__(self, array):
        self.array = array


class Transposed:
    """A floating input passed as a non-contiguous view: the leaf holds the array with its last two
    axes swapped, and the argument is leaf.transpose(-1, -2), which has the array's values."""

    def __init__(self, array):
        self.array = array


def make_inputs(values, dtype=None):
    """torch and tensorplay versions of call arguments: floating numpy arrays become leaves that
    require grad (unless wrapped in NoGrad), other arrays plain tensors, anything else passes as is.
    Returns (torch_args, tp_args, [(index, torch_leaf, tp_leaf), ...])."""
    torch_args, tp_args, leaves = [], [], []
    for i, value in enumerate(values):
        if isinstance(value, Transposed):
            stored = np.swapaxes(value.array, -1, -2)
            t = torch_tensor(stored, requires_grad=True, dtype=dtype)
            p = tp_tensor(stored, requires_grad=True, dtype=getattr(tensorplay, dtype_name(dtype)) if dtype else None)
            leaves.append((i, t, p))
            torch_args.append(t.transpose(-1, -2))
            tp_args.append(p.transpose(-1, -2))
            assert not tp_args[-1].is_contiguous()
        elif isinstance(value, NoGrad):
            array = value.array
            cast = dtype if (dtype is not None and np.issubdtype(array.dtype, np.floating)) else None
            torch_args.append(torch_tensor(array, dtype=cast))
            tp_args.append(tp_tensor(array, dtype=getattr(tensorplay, dtype_name(cast)) if cast else None))
        elif isinstance(value, np.ndarray):
            floating = np.issubdtype(value.dtype, np.floating)
            cast = dtype if (dtype is not None and floating) else None
            t = torch_tensor(value, dtype=cast)
            p = tp_tensor(value, dtype=getattr(tensorplay, dtype_name(cast)) if cast else None)
            if floating:
                t.requires_grad_(True)
                p.requires_grad_(True)
                leaves.append((i, t, p))
            torch_args.append(t)
            tp_args.append(p)
        else:
            torch_args.append(value)
            tp_args.append(value)
    return torch_args, tp_args, leaves


def tensors_of(output):
    """The tensors of an output (a tensor, or a tuple such as MultiheadAttention's (out, weights))."""
    if isinstance(output, (tuple, list)):
        return list(output)
    return [output]


def backward_both(torch_outputs, tp_outputs, seed=0):
    """Back-propagates the same random upstream gradient through the differentiable outputs."""
    torch_roots, tp_roots, torch_grads, tp_grads = [], [], [], []
    for k, (t, p) in enumerate(zip(torch_outputs, tp_outputs)):
        if t is None or not t.requires_grad:
            continue
        g = upstream_grad(tuple(t.shape), seed + k)
        torch_roots.append(t)
        torch_grads.append(torch.from_numpy(g).to(t.dtype))
        tp_roots.append(p)
        tp_grads.append(tp_tensor(g).to(p.dtype))
    if torch_roots:
        torch.autograd.backward(torch_roots, torch_grads)
        tensorplay.autograd.backward(tp_roots, tp_grads)
    return bool(torch_roots)


def compare_outputs(tp_out, torch_out, rtol, atol):
    torch_list, tp_list = tensors_of(torch_out), tensors_of(tp_out)
    assert len(tp_list) == len(torch_list), f"{len(tp_list)} outputs, torch has {len(torch_list)}"
    for k, (p, t) in enumerate(zip(tp_list, torch_list)):
        if t is None:
            assert p is None, f"output {k}: torch returns None, tensorplay {type(p)}"
            continue
        assert_same(p, t, rtol, atol, what=f"output {k}")
    return tp_list, torch_list


def compare_leaf_grads(leaves, rtol, atol, names=None):
    for i, t, p in leaves:
        label = names[i] if names else f"input {i}"
        if t.grad is None:
            assert p.grad is None, f"grad of {label}: torch has none, tensorplay has one"
            continue
        assert p.grad is not None, f"grad of {label}: tensorplay has none"
        assert_same(p.grad, t.grad, rtol, atol, what=f"grad of {label}")


def compare_module(make, args, kwargs=None, rtol=RTOL, atol=ATOL, train=False, dtype=None, check_grads=True):
    """Builds make(torch.nn) and make(tensorplay.nn), copies torch's weights across, runs both on
    the same inputs and checks outputs, input gradients and every parameter's gradient."""
    torch_module = make(torch.nn)
    tp_module = make(tensorplay.nn)
    copy_state(torch_module, tp_module)
    torch_module.train(train)
    tp_module.train(train)
    if dtype is not None:
        torch_module.to(dtype)
        tp_module.to(getattr(tensorplay, dtype_name(dtype)))
    torch_args, tp_args, leaves = make_inputs(args, dtype)
    torch_out = torch_module(*torch_args, **(kwargs or {}))
    tp_out = tp_module(*tp_args, **(convert_kwargs(kwargs) or {}))
    tp_list, torch_list = compare_outputs(tp_out, torch_out, rtol, atol)
    if not check_grads:
        return torch_module, tp_module
    backward_both(torch_list, tp_list)
    compare_leaf_grads(leaves, rtol, atol)
    tp_params = dict(tp_module.named_parameters())
    for name, t in torch_module.named_parameters():
        p = tp_params[name]
        if t.grad is None:
            assert p.grad is None, f"grad of parameter {name}: torch has none, tensorplay has one"
        else:
            assert p.grad is not None, f"grad of parameter {name}: tensorplay has none"
            assert_same(p.grad, t.grad, rtol, atol, what=f"grad of parameter {name}")
    return torch_module, tp_module


def convert_kwargs(kwargs):
    """torch tensors in kwargs (masks) become tensorplay tensors."""
    if kwargs is None:
        return None
    return {k: tp_tensor(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


def compare_functional(name, args, kwargs=None, rtol=RTOL, atol=ATOL):
    """Calls torch.nn.functional.<name> and tensorplay.nn.functional.<name> on the same inputs and
    compares the results and the gradients of every floating input."""
    torch_args, tp_args, leaves = make_inputs(args)
    torch_out = getattr(torch.nn.functional, name)(*torch_args, **(kwargs or {}))
    tp_out = getattr(tensorplay.nn.functional, name)(*tp_args, **(convert_kwargs(kwargs) or {}))
    tp_list, torch_list = compare_outputs(tp_out, torch_out, rtol, atol)
    if backward_both(torch_list, tp_list):
        compare_leaf_grads(leaves, rtol, atol)


def outcome(fn, *args):
    """('ok', value) or ('raises', exception class name) - for comparing error behaviour."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return ("raises", type(exc).__name__)


def same_outcome(scenario):
    """Runs scenario(torch) and scenario(tensorplay); both succeed with equal results or both raise
    the same exception class."""
    want = outcome(scenario, torch)
    got = outcome(scenario, tensorplay)
    assert got == want, f"tensorplay: {got}, torch: {want}"

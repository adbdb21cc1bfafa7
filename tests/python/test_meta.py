"""The meta device: tensors with shapes, dtypes and strides and no data.

Every op of the op table (test_ops.CASES, in each op's first dtype) runs with its inputs on the
meta device and must give what it gives on the CPU: the same shapes, dtypes and strides, or the
same kind of error, except for checks of values (an index out of range), which meta cannot make,
as in PyTorch. Shapes and dtypes are checked against PyTorch's meta device too, where PyTorch has
a meta kernel, and gradients on meta against gradients on the CPU. Then what a user does with
meta: build a model too big for memory, count its parameters, materialise it.
"""

import numpy as np
import pytest
import torch

import tensorplay as tp
from op_table import View
from test_ops import CASES, convert, exception_kind, run

META = "meta"


def on_meta(m, value):
    """value (a converted sample argument) with its tensors moved to meta, views taken there."""
    if isinstance(value, View):
        return value.view(on_meta(m, value.base))
    if isinstance(value, np.ndarray):
        return convert(m, value).to(META)
    if isinstance(value, list):
        return [on_meta(m, v) for v in value]
    if isinstance(value, dict):
        return {k: on_meta(m, v) for k, v in value.items()}
    return convert(m, value)


def tensors(result):
    """The tensors of a result (a tensor, a tuple of them, a named tuple), in order."""
    if isinstance(result, (tp.Tensor, torch.Tensor)):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in tensors(r)]
    return []


def layout(t, strides=True):
    dtype = str(t.dtype).split(".")[-1]
    return (tuple(t.shape), dtype, t.stride() if strides else None)


def meta_case_outcome(case):
    """(cpu result, cpu error, meta result, meta error, torch meta result, torch meta error)."""
    args, kwargs = case.sample.args, case.sample.kwargs
    cpu, cpu_error = run(case.fn, tp, convert(tp, list(args)), convert(tp, kwargs))
    meta, meta_error = run(case.fn, tp, on_meta(tp, list(args)), on_meta(tp, kwargs))
    theirs, their_error = run(case.torch_fn, torch, on_meta(torch, list(args)), on_meta(torch, kwargs))
    return cpu, cpu_error, meta, meta_error, theirs, their_error


# Every op in every call form and sample, in the op's first dtype: meta runs the same checks,
# promotion and allocation as the CPU for every dtype, so more dtypes would repeat the same path.
META_CASES = [case for case in CASES if case.dtype == case.op.dtypes[0]]


@pytest.mark.parametrize("case", META_CASES, ids=[case.id for case in META_CASES])
def test_op_on_meta_matches_the_cpu(case):
    cpu, cpu_error, meta, meta_error, theirs, their_error = meta_case_outcome(case)
    if meta_error is not None:
        kind = exception_kind(meta_error)
        assert kind is not None, f"meta raised {type(meta_error).__name__}: {meta_error}"
        if cpu_error is not None:
            assert exception_kind(cpu_error) is kind, f"cpu raised {cpu_error!r}, meta {meta_error!r}"
        else:  # only an op that must read values may fail on meta, and PyTorch's fails too
            assert their_error is not None, f"meta raised {meta_error!r}; the cpu and torch's meta return"
        return
    if cpu_error is not None:  # a check of values, which meta skips as PyTorch's does
        assert their_error is None, f"cpu raised {cpu_error!r}, torch's meta {their_error!r}; meta returned"
        return
    ours, on_cpu = tensors(meta), tensors(cpu)
    assert len(ours) == len(on_cpu), f"meta returned {meta!r}, cpu {cpu!r}"
    for t in ours:
        assert t.device.type == META
    assert [layout(t) for t in ours] == [layout(t) for t in on_cpu]
    if their_error is None:  # PyTorch has no meta kernel for some ops
        assert [layout(t, False) for t in ours] == [layout(t, False) for t in tensors(theirs)]


GRADIENT_CASES = [case for case in META_CASES if case.dtype == "float32" and not case.returns_self]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=[case.id for case in GRADIENT_CASES])
def test_gradients_on_meta_match_the_cpu(case):
    """Backward on meta gives each input a gradient of the shape, dtype and strides the CPU gives
    (where the forward runs on the CPU: the forward test covers the rest)."""
    results = []
    for place in ("cpu", META):
        args = convert(tp, list(case.sample.args)) if place == "cpu" else on_meta(tp, list(case.sample.args))
        leaves = [a for a in args if isinstance(a, tp.Tensor) and a.is_floating_point() and a.is_leaf]
        for leaf in leaves:
            leaf.requires_grad_()
        kwargs = convert(tp, case.sample.kwargs) if place == "cpu" else on_meta(tp, case.sample.kwargs)
        out, error = run(case.fn, tp, args, kwargs)
        differentiable = [t for t in tensors(out) if t.requires_grad]
        if error is not None or not differentiable:
            assert place == "cpu", f"meta raised {error!r} where the cpu returned"
            return
        _, error = run(lambda m: sum(t.sum() for t in differentiable).backward(), tp, [], {})
        results.append(exception_kind(error) if error else [None if p.grad is None else layout(p.grad) for p in leaves])
    assert results[0] == results[1]


# ---------------------------------------------------------------------------------------------
# The device, its tensors and their data


def test_meta_device_and_factories():
    assert repr(tp.device("meta")) == "device(type='meta')"
    for t in (tp.ones(2, 3, device="meta"), tp.empty(2, 3, device=tp.device("meta")), tp.zeros(2, 3).to("meta")):
        assert t.is_meta and t.device == tp.device("meta") and t.shape == (2, 3) and t.stride() == (3, 1)
    assert tp.empty_strided((2, 3), (1, 2), device="meta").stride() == (1, 2)
    assert tp.randn(4, device="meta").dtype == tp.float32 and tp.randperm(10 ** 12, device="meta").shape == (10 ** 12,)


@pytest.mark.parametrize("expr", [
    "m.ones(2, 3, device='meta')", "m.ones(2, device='meta', dtype=m.bool)", "m.empty(0, device='meta')",
    "m.tensor(1.0, device='meta')", "m.ones(2, device='meta', requires_grad=True)",
    "m.ones(2, device='meta', requires_grad=True) * 2", "m.ones(3, 2, device='meta', dtype=m.int64)",
])
def test_meta_repr_like_torch(expr):
    ours, theirs = repr(eval(expr, {"m": tp})), repr(eval(expr, {"m": torch}))
    assert ours == theirs.replace("torch.", "tensorplay.")


@pytest.mark.parametrize("read,kind", [
    (lambda t: t.sum().item(), RuntimeError), (lambda t: t.tolist(), NotImplementedError),
    (lambda t: t.numpy(), TypeError), (lambda t: t.cpu(), NotImplementedError),
    (lambda t: bool(t.sum() > 0), RuntimeError), (lambda t: float(t.sum()), RuntimeError),
    (lambda t: t.nonzero(), NotImplementedError),
], ids=["item", "tolist", "numpy", "cpu", "bool", "float", "nonzero"])
def test_reading_data_of_a_meta_tensor_is_a_clear_error(read, kind):
    for m in (torch, tp):
        with pytest.raises(kind, match="meta|no data"):
            read(m.ones(2, 3, device="meta"))


def test_meta_and_cpu_tensors_do_not_mix():
    for m in (torch, tp):
        with pytest.raises(RuntimeError, match="device"):
            m.ones(2, device="meta") + m.ones(2)


def test_default_device_for_a_block_and_for_the_thread():
    with tp.device("meta"):
        assert tp.zeros(2).is_meta and tp.tensor([1.0]).is_meta and tp.get_default_device() == tp.device("meta")
        with tp.device("cpu"):
            assert tp.zeros(2).device.type == "cpu"
        assert tp.arange(3).is_meta
    assert tp.get_default_device() == tp.device("cpu") and not tp.zeros(2).is_meta
    tp.set_default_device("meta")
    try:
        assert tp.ones(2).is_meta
    finally:
        tp.set_default_device(None)
    assert not tp.ones(2).is_meta


def test_a_model_too_big_for_memory_builds_on_meta_and_materialises():
    """12 GB of float32 weights: built, counted and run on meta; then a small one materialised on the CPU."""
    with tp.device("meta"):
        big = tp.nn.Sequential(*[tp.nn.Linear(16384, 16384) for _ in range(12)])
    assert sum(p.numel() for p in big.parameters()) == 12 * (16384 * 16384 + 16384)
    out = big(tp.ones(8, 16384, device="meta"))
    assert out.is_meta and out.shape == (8, 16384)
    out.sum().backward()
    assert big[0].weight.grad.is_meta and big[0].weight.grad.shape == (16384, 16384)

    with tp.device("meta"):
        model = tp.nn.Sequential(tp.nn.Conv2d(1, 4, 3), tp.nn.BatchNorm2d(4), tp.nn.Flatten(), tp.nn.Linear(4 * 26 * 26, 10))
    model.to_empty(device="cpu")
    assert all(not t.is_meta for t in list(model.parameters()) + list(model.buffers()))
    for module in model:
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
    assert model(tp.ones(2, 1, 28, 28)).shape == (2, 10)


def test_autocast_leaves_meta_tensors_in_their_dtype():
    """As in PyTorch, autocast is not available for meta: its ops run in their inputs' dtype."""
    for m in (torch, tp):
        with m.autocast("cpu"):
            assert (m.ones(2, 2, device="meta") @ m.ones(2, 2, device="meta")).dtype == m.float32

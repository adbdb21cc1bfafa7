"""Tensor.__getitem__, __setitem__ and index_put_ against PyTorch.

Each case is the text between the brackets, evaluated against a tensorplay tensor and a torch tensor holding the same
data; `T(...)` makes an index tensor in the library under test, and `mask` is a full-shape boolean mask.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

import tensorplay as tp


def as_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()
    array = np.array(t.numpy())
    return array.astype(np.float32) if array.dtype in (np.dtype(ml_dtypes.bfloat16), np.float16) else array


def assert_same(ours, theirs):
    assert isinstance(ours, tp.Tensor), type(ours)
    assert repr(ours.dtype).split(".")[-1] == repr(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(as_numpy(ours), as_numpy(theirs))


def names(module, x):
    """What an index or value expression can use: the tensor, T and V to make tensors, and a boolean mask."""
    mask = np.arange(x.numel()).reshape(tuple(x.shape)) % 3 == 0
    return {"T": module.tensor, "V": lambda data: module.tensor(data).to(x.dtype), "m": module, "x": x,
            "mask": module.from_numpy(mask)}


def evaluate(code, module, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation warnings about list indices
        return eval(code, names(module, x))


def base(module, shape, dtype="int64"):
    n = int(np.prod(shape))
    return module.from_numpy(np.arange(n).reshape(shape).astype(dtype))


SHAPE_3D = (2, 3, 4)
SHAPE_4D = (2, 3, 4, 5)

INDICES_3D = [
    # ints
    "0", "1", "-1", "-2", "1, 2", "1, -1, -4", "1, 2, 3", "-1, -3", "0, :, 3",
    # slices
    ":", "::2", "1:", ":-1", "-2:", ":, 1:3", ":, :, ::3", ":, ::2, 1::2", "1:2, 0:3:2, -3:-1",
    # out-of-range and empty slices
    "5:", ":100", "-100:", "-100:100", "1:0", "1:1", ":, 10:", ":, -10:2", "0:2:5",
    # None and Ellipsis
    "None", "None, 1", ":, None, :, None", "..., None", "None, ..., None", "0, None, 1", "...", "..., 1", "1, ...",
    "..., ::2", "1, ..., 2", "..., 0, :", "None, None", "0, 0, 0, None",
    # Python bools
    "True", "False", "None, True", "1, True", "..., False", "True, 0", "True, True", "False, ..., 1",
    # 0-dim tensors
    "T(1)", "T(-1)", "T(1), T(2)", ":, T(-1)", "T(True)", "T(False)", "T(1), ..., T(0)",
    # boolean masks
    "mask", "x > 100", "x >= 0", "T([True, False])", "T([False, False])",
    "T([[True, False, True], [False, False, True]])",
    ":, T([True, False, True])", ":, :, T([True, False, False, True])", "T([False, True]), :, T([0, 2])",
    "[True, False]", "0, T([True, False, True])", "..., T([True, True, False, False])", "1, mask[1]",
    "T([True, False]), T([True, False, True])",
    # integer index tensors and lists
    "T([0, 1, 1])", "[0, 1, 1]", "T([-1, 0])", "T([[0, 1], [1, 0]])", ":, T([2, 0])", ":, [2, 0]", "..., [3, 3, 0]",
    "T([0, 1]), T([1, 2])", "[0, 1], [1, 2]", "T([0, 1]), T([1, 2]), T([3, 0])",
    ":, T([0, 2]), T([1, 3])", "T([0, 1]), :, T([1, 3])", "T([[0], [1]]), T([0, 2])", "T([[0], [1]]), :, T([0, 2, 3])",
    "T([0, 1]), :, 1", "1, :, T([0, 2])", ":, 1, T([0, 2])", "T([1, 0]), 2", "T([], dtype=m.int64)",
    "T([], dtype=m.int64), :, T([], dtype=m.int64)", "T([0, 1], dtype=m.int32)", ":, T([[2]])",
    # combinations
    "T([1, 0]), ..., None", "None, T([0, 1]), ::2", "..., T([1, 3])", "1:, T([0, 2])", "T([0, 1]), 1:, None",
    "None, T([0, 1]), None, T([1, 2])", "T([1]), ::2, T([3])", "0, mask[0]",
    "True, T([0, 1])", "T(1), T([0, 2])", "::2, T([[0, 1]]), -1",
]

INDICES_4D = [
    "1, :, T([0, 2]), T([1, 3])", ":, T([0, 1]), :, T([2, 3])", "..., T([0, 1]), T([2, 3])",
    "T([0, 1]), ..., T([2, 3])",
    "T([[0], [1]]), :, :, T([[1, 2]])", ":, ::2, T([1, 3]), 1:4", "None, T([0, 1]), None, T([1, 2])",
    ":, T([[True, False, True, False], [False, True, True, True], [False, False, False, True]])",
    "-1, -1, -1, -1", "1, 2, 3, 4", "..., 2", ":, :, :, ::4", "1, ..., None, 2",
    "T([0, 1]), T([0, 2]), T([1, 3]), T([4, 0])", "T([0]), :, T([1]), :", ":, T([2, 0]), T([[1], [3]]), 0",
    "mask", "1, mask[0]", ":, 1, mask[0, 0]", "T([True, False]), T([True, False, True]), 1:",
    "None, ..., None, T([0, 4])",
]

CASES = [("3d", i) for i in INDICES_3D] + [("4d", i) for i in INDICES_4D]
SHAPES = {"3d": SHAPE_3D, "4d": SHAPE_4D}


@pytest.mark.parametrize("dims,index", CASES, ids=[f"{d}[{i}]" for d, i in CASES])
def test_getitem(dims, index):
    ours_base, theirs_base = base(tp, SHAPES[dims]), base(torch, SHAPES[dims])
    theirs = evaluate(f"x[{index}]", torch, theirs_base)
    ours = evaluate(f"x[{index}]", tp, ours_base)
    assert_same(ours, theirs)
    # Basic indexing gives a view, advanced indexing a copy: after a write to the base both must still agree.
    ours_base.add_(1000)
    theirs_base.add_(1000)
    assert_same(ours, theirs)


@pytest.mark.parametrize("index", ["1", "1:, ::2", "..., 2", "None, 0, :, 1:3", ":, -1", "0, 1, 2"])
def test_basic_getitem_strides_match(index):
    ours = evaluate(f"x[{index}]", tp, base(tp, SHAPE_3D))
    theirs = evaluate(f"x[{index}]", torch, base(torch, SHAPE_3D))
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()


@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16", "float16", "bool", "uint8", "int8", "int16"])
def test_advanced_getitem_keeps_dtype(name):
    ours = tp.arange(24).reshape(2, 3, 4).to(getattr(tp, name))[tp.tensor([1, 0]), ::2]
    theirs = torch.arange(24).reshape(2, 3, 4).to(getattr(torch, name))[torch.tensor([1, 0]), ::2]
    assert_same(ours, theirs)


def test_getitem_of_non_contiguous_tensor():
    ours = tp.arange(60).reshape(3, 4, 5).permute(2, 0, 1)[::2]
    theirs = torch.arange(60).reshape(3, 4, 5).permute(2, 0, 1)[::2]
    for index in ["1, T([0, 2])", "T([0, 2]), :, T([3, 1])", "x > 30", "..., T([True, False, True, True])"]:
        assert_same(evaluate(f"x[{index}]", tp, ours), evaluate(f"x[{index}]", torch, theirs))


# ---- setitem ----

SETITEMS = [
    # (index, value); V(...) makes a value tensor of the target's dtype.
    ("1", "5"), ("1", "2.7"), ("-1, 0", "-3"), ("..., 0", "7"), (":, 1:, ::2", "V([1, 2])"),
    (":, 1:, ::2", "V([[1], [2]])"), ("0", "V([[1, 2, 3, 4]])"), ("0", "m.ones(1, 3, 4, dtype=x.dtype)"),
    ("T([0, 1]), :, T([1, 3])", "-1"), ("T([0, 1]), :, T([1, 3])", "V([[1, 2, 3], [4, 5, 6]])"),
    ("T([0, 1]), :, T([1, 3])", "V([10, 20, 30])"), ("mask", "0"), ("mask", "V(9)"), ("mask", "V(range(8))"),
    ("T([True, False])", "V([1, 2, 3, 4])"), ("T([1, 0])", "x[T([0, 1])]"), (":, T([2, 0])", "V([[7], [8]])"),
    ("T([0, 1]), T([1, 2])", "V([[5], [6]])"), ("None, 1", "2"), ("True", "1"), ("False", "1"), ("T(1)", "3"),
    ("T(1), T(2)", "V(4)"), ("1, 2, 3", "100"), ("...", "0"), ("1:1", "5"), (":", "x.flip(0)"),
    ("[0, 1], [1, 1], [2, 3]", "V([11, 12])"), (":, T([True, False, True])", "4"), ("1, 1:3", "True"),
    ("T([0, 1]), 0, 0", "2.5"), ("mask", "T(1.5, dtype=m.bfloat16)"),
    # Basic indexing converts a tensor value of another dtype, as copy_ does.
    ("0", "T([1.7, 2.7, 3.9, 0.5])"), ("1", "T([True, False, True, True])"), ("..., 1", "T(2.5, dtype=m.float64)"),
    (":, 0", "T([[1.5, 0, 250, 3], [0.25, 1, 2, 3.5]], dtype=m.float64)"), ("1, 1:", "T([3, 0, 1, 2], dtype=m.uint8)"),
]
SETITEM_DTYPES = ["int64", "float32", "bool", "bfloat16", "uint8"]
SETITEM_CASES = [(d, i, v) for d in SETITEM_DTYPES for i, v in SETITEMS]


def set_both(code, ours, theirs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation warnings about list indices
        exec(code, names(torch, theirs))
        exec(code, names(tp, ours))


@pytest.mark.parametrize("dtype,index,value", SETITEM_CASES,
                         ids=[f"{d}-x[{i}] = {v}" for d, i, v in SETITEM_CASES])
def test_setitem(dtype, index, value):
    ours = base(tp, SHAPE_3D).to(getattr(tp, dtype))
    theirs = base(torch, SHAPE_3D).to(getattr(torch, dtype))
    set_both(f"x[{index}] = {value}", ours, theirs)
    assert_same(ours, theirs)


# (A bool mask with a one-element value fills instead, converting; see test_mask_fill_converts_one_value.)
ADVANCED_WITH_OTHER_DTYPE = [("T([0, 1])", "float32", "int64"), ("mask", "int64", "m.ones(8)"),
                             ("T([True, False])", "bfloat16", "m.ones(3, 4)"), (":, T([2, 0])", "float32", "float64"),
                             ("T([0, 1])", "float32", "m.tensor(1, dtype=m.int64)")]


@pytest.mark.parametrize("index,target,source", ADVANCED_WITH_OTHER_DTYPE,
                         ids=[f"{t}[{i}] = {s}" for i, t, s in ADVANCED_WITH_OTHER_DTYPE])
def test_advanced_setitem_with_other_dtype_tensor_raises_like_torch(index, target, source):
    # torch's index_put_ does not convert a value tensor's dtype; it raises RuntimeError.
    value = source if source.startswith("m.") else f"m.ones(1, dtype=m.{source})"
    code = f"x[{index}] = {value}"
    with pytest.raises(RuntimeError):
        exec(code, names(torch, base(torch, SHAPE_3D).to(getattr(torch, target))))
    with pytest.raises(RuntimeError):
        exec(code, names(tp, base(tp, SHAPE_3D).to(getattr(tp, target))))


@pytest.mark.parametrize("index", ["mask", "T([True, False])", "0, mask[0]"])
def test_mask_fill_converts_one_value(index):
    # With a lone bool mask and a one-element value, PyTorch fills (converting the dtype).
    for value in ["m.ones(1)", "m.tensor(2.5)"]:
        ours, theirs = base(tp, SHAPE_3D), base(torch, SHAPE_3D)
        set_both(f"x[{index}] = {value}", ours, theirs)
        assert_same(ours, theirs)


@pytest.mark.parametrize("index,value", [("1, T([0, 2])", "T([7, 8, 9, 10])"), (":, :, 1", "0"), ("mask", "-1"),
                                         ("T([0, 2]), :, :, T([True, False, True, False])", "T([[1], [2], [3]])")])
def test_setitem_into_4d_non_contiguous(index, value):
    ours = base(tp, SHAPE_4D).permute(3, 1, 0, 2)[1:]
    theirs = base(torch, SHAPE_4D).permute(3, 1, 0, 2)[1:]
    set_both(f"x[{index}] = {value}", ours, theirs)
    assert_same(ours, theirs)


def test_setitem_through_a_view_writes_the_base():
    ours, theirs = base(tp, SHAPE_3D), base(torch, SHAPE_3D)
    set_both("v = x[1]; v[T([0, 2]), 1] = -5; v[:, 3] = 0", ours, theirs)
    assert_same(ours, theirs)


# ---- index errors ----

BAD_INDICES = [
    "2", "-3", "0, 5", "0, -4", ":, :, 4", "T([2])", "T([0, -3])", "T([0]), T([0]), T([0]), T([0])",
    "0, 0, 0, 0", "None, 0, 0, 0, 0", "T([True, False, True])", "T([0, 1]), T([0, 1, 2])", "::-1", "::0", "1.5",
    "T([0.5])", "T([0, 1], dtype=m.int16)", ":, T([[True, True, True, True]])", "x, x",
]


@pytest.mark.parametrize("index", BAD_INDICES)
def test_bad_getitem_raises_like_torch(index):
    with pytest.raises(Exception) as theirs:
        evaluate(f"x[{index}]", torch, base(torch, SHAPE_3D))
    with pytest.raises(Exception) as ours:
        evaluate(f"x[{index}]", tp, base(tp, SHAPE_3D))
    assert type(ours.value) is type(theirs.value), f"torch: {theirs.value!r}, tensorplay: {ours.value!r}"


@pytest.mark.parametrize("index", ["0, 5", "..., 9", "None, 5", "0, None, 7", "True, 0, 9", "None, ..., -9",
                                   "T([0]), 7", ":, :, 4"])
def test_out_of_range_integer_is_reported_as_torch_reports_it(index):
    # PyTorch names the item's position in the index, not a dim of the tensor or of the view.
    with pytest.raises(IndexError) as theirs:
        evaluate(f"x[{index}]", torch, base(torch, SHAPE_3D))
    with pytest.raises(IndexError) as ours:
        evaluate(f"x[{index}]", tp, base(tp, SHAPE_3D))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("index", ["2", "0, 5", "T([2])", "0, 0, 0, 0", "T([True, False, True])", "::-1"])
def test_bad_setitem_raises_like_torch(index):
    with pytest.raises(Exception) as theirs:
        exec(f"x[{index}] = 1", names(torch, base(torch, SHAPE_3D)))
    with pytest.raises(Exception) as ours:
        exec(f"x[{index}] = 1", names(tp, base(tp, SHAPE_3D)))
    assert type(ours.value) is type(theirs.value), f"torch: {theirs.value!r}, tensorplay: {ours.value!r}"


@pytest.mark.parametrize("index,value", [("0", "T([1, 2])"), (":, 1", "m.ones(3, 2, dtype=m.int64)"),
                                         ("T([0, 1])", "m.ones(3, 3, 4, dtype=m.int64)"), ("mask", "T([1, 2])")])
def test_setitem_with_unbroadcastable_value_raises_like_torch(index, value):
    with pytest.raises(Exception) as theirs:
        exec(f"x[{index}] = {value}", names(torch, base(torch, SHAPE_3D)))
    with pytest.raises(Exception) as ours:
        exec(f"x[{index}] = {value}", names(tp, base(tp, SHAPE_3D)))
    assert type(ours.value) is type(theirs.value), f"torch: {theirs.value!r}, tensorplay: {ours.value!r}"


def test_index_into_0_dim_tensor_raises_index_error():
    for module in (torch, tp):
        with pytest.raises(IndexError):
            module.tensor(5)[0]


def test_failed_setitem_leaves_tensor_unchanged():
    x = base(tp, SHAPE_3D)
    with pytest.raises(IndexError):
        x[tp.tensor([0, 5])] = -1
    np.testing.assert_array_equal(x.numpy(), np.arange(24).reshape(SHAPE_3D))


# ---- index_put_ ----

INDEX_PUTS = [
    # (shape, dtype, indices, values, accumulate)
    ((5,), "float32", "(T([0, 1, 1, 3, 0, 0]),)", "T([1., 2, 3, 4, 5, 6])", True),
    ((5,), "int64", "(T([4, 4, 4, 4]),)", "T([1, 2, 3, 4])", True),
    ((5,), "float32", "(T([0, 0, 2]),)", "T(1.5)", True),
    ((5,), "float64", "(T([1, 3]),)", "T([7., 8.], dtype=m.float64)", False),
    ((3, 4), "float32", "(T([0, 0, 2]), T([1, 1, 3]))", "T([1., 2, 3])", True),
    ((3, 4), "float32", "(T([0, 0, 2]),)", "T([1., 2, 3, 4])", True),
    ((3, 4), "int32", "(T([[0, 0], [2, 2]]), T([1]))", "T([[1, 2], [3, 4]], dtype=m.int32)", True),
    ((3, 4), "float32", "(T([1, 2]), T([0, 3]))", "T([5., 6.])", False),
    ((3, 4), "float32", "(T([True, False, True]),)", "T([1., 2, 3, 4])", True),
    ((2, 3, 4), "float32", "(T([0, 1, 0]), T([2, 2, 2]), T([3, 3, 3]))", "T(2.)", True),
    ((2, 3, 4), "bfloat16", "(T([0, 0, 0, 0]), T([1, 1, 1, 1]))", "T([0.25] * 4, dtype=m.bfloat16)", True),
    ((6,), "float32", "(T(list(range(6)) * 50),)", "m.ones(300)", True),
]


@pytest.mark.parametrize("shape,dtype,indices,values,accumulate", INDEX_PUTS,
                         ids=[f"{s}-{d}-{i}-{v}-acc={a}" for s, d, i, v, a in INDEX_PUTS])
def test_index_put_(shape, dtype, indices, values, accumulate):
    results = []
    for module in (tp, torch):
        x = module.arange(int(np.prod(shape))).reshape(shape).to(getattr(module, dtype))
        ns = names(module, x)
        out = x.index_put_(eval(indices, ns), eval(values, ns), accumulate=accumulate)
        assert out is x
        results.append(x)
    assert_same(*results)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_out_of_place(accumulate):
    results = []
    for module in (tp, torch):
        x = module.zeros(3, 4)
        out = module.index_put(x, (module.tensor([0, 0, 2]), module.tensor([1, 1, 0])), module.tensor([1.0, 2, 3]),
                               accumulate=accumulate) if accumulate else \
            module.index_put(x, (module.tensor([0, 2]), module.tensor([1, 0])), module.tensor([1.0, 3]))
        assert float(x.abs().sum()) == 0
        results.append(out)
    assert_same(*results)


def test_index_put_out_of_range_raises_like_torch():
    with pytest.raises(Exception) as theirs:
        torch.zeros(3).index_put_((torch.tensor([3]),), torch.tensor(1.0), accumulate=True)
    with pytest.raises(Exception) as ours:
        tp.zeros(3).index_put_((tp.tensor([3]),), tp.tensor(1.0), accumulate=True)
    assert type(ours.value) is type(theirs.value), f"torch: {theirs.value!r}, tensorplay: {ours.value!r}"


@pytest.mark.parametrize("call", [
    lambda m, x: x.index_put_((m.tensor([0, 1]),), m.ones(3, 4)),
    lambda m, x: m.index_put(x, (m.tensor([0, 2]),), m.ones(2, 5)),
    lambda m, x: x.__setitem__(m.tensor([0, 1]), m.ones(3, 4)),
], ids=["index_put_", "index_put", "setitem"])
def test_values_that_do_not_broadcast_to_the_result_raise_like_torch(call):
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape"):
        call(torch, torch.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"\[index_put_\] shape mismatch: value tensor of shape \[.*\] cannot be "
                                           r"broadcast to indexing result of shape \[2, 4\]"):
        call(tp, tp.zeros(3, 4))

"""Tensor creation, NumPy interop, Python protocols, metadata, views, versions, random numbers, devices and repr.

PyTorch is the oracle. Most cases are written once as an expression in `m`, evaluated with m = tensorplay and
m = torch, so the test id is the expression itself.
"""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

import tensorplay as tp


def run(expr, module, **names):
    return eval(expr, {"m": module, "np": np, "math": math, **names})


def dtype_name(dtype):
    return repr(dtype).split(".")[-1]


def as_numpy(t):
    """A tensorplay or torch tensor as a NumPy array; the 16-bit floats widened to float32."""
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()
    array = np.array(t.numpy())
    return array.astype(np.float32) if array.dtype in (np.dtype(ml_dtypes.bfloat16), np.float16) else array


def assert_same(ours, theirs, rtol=0.0, atol=0.0, values=True):
    assert isinstance(ours, tp.Tensor), type(ours)
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if values:
        if rtol or atol:
            np.testing.assert_allclose(as_numpy(ours), as_numpy(theirs), rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(as_numpy(ours), as_numpy(theirs))


def check_expr(expr, rtol=0.0, atol=0.0, values=True, **names):
    assert_same(run(expr, tp, **names), run(expr, torch, **names), rtol=rtol, atol=atol, values=values)


# ---- factories ----

FACTORIES = [
    "m.zeros(2, 3)", "m.zeros((2, 3))", "m.zeros([2, 3])", "m.zeros(m.Size([2, 3]))", "m.zeros(0)", "m.zeros(())",
    "m.zeros(2, 0, 3)", "m.zeros(2, 3, dtype=m.int32)", "m.zeros(4, dtype=m.bool)", "m.zeros(3, dtype=m.bfloat16)",
    "m.ones(2, 3)", "m.ones(5, dtype=m.int64)", "m.ones(4, dtype=m.bool)", "m.ones(2, 2, dtype=m.bfloat16)",
    "m.ones(3, dtype=m.float16)", "m.ones(2, 2, dtype=m.uint8)", "m.ones((), dtype=m.float64)",
    "m.full((2, 3), 1)", "m.full((2,), True)", "m.full((2,), False)", "m.full((2, 2), 1.5)", "m.full((), 3)",
    "m.full((2, 2), 7, dtype=m.float16)", "m.full((3,), 2.7, dtype=m.int64)", "m.full((3,), -1, dtype=m.int8)",
    "m.full([2, 1], float('inf'))", "m.full((0, 2), 5)", "m.full((2,), 1.5, dtype=m.bfloat16)",
    "m.full((2,), 1, dtype=m.bool)", "m.full((2,), 300, dtype=m.int16)",
    "m.scalar_tensor(3)", "m.scalar_tensor(2.5, dtype=m.float64)",
    "m.eye(3)", "m.eye(2, 4)", "m.eye(4, 2)", "m.eye(0)", "m.eye(1)", "m.eye(3, dtype=m.int64)", "m.eye(3, 0)",
    "m.eye(n=2, m=3)", "m.eye(3, dtype=m.bool)", "m.eye(2, dtype=m.bfloat16)",
]


@pytest.mark.parametrize("expr", FACTORIES)
def test_factory(expr):
    check_expr(expr)


SHAPE_ONLY_FACTORIES = [
    "m.empty(2, 3)", "m.empty((4,))", "m.empty(0, 2)", "m.empty(2, dtype=m.int16)", "m.empty((), dtype=m.bool)",
    "m.empty_like(m.ones(2, 3, dtype=m.float64))", "m.empty_strided((2, 3), (1, 2))",
    "m.rand(2, 3)", "m.rand((4,))", "m.rand(3, dtype=m.float64)", "m.rand(2, dtype=m.bfloat16)",
    "m.randn(2, 3)", "m.randn(5, dtype=m.float16)", "m.randint(5, (3,))", "m.randint(2, 9, (2, 2))",
    "m.randint(0, 5, (4,), dtype=m.int32)", "m.randperm(7)", "m.randperm(4, dtype=m.int32)", "m.randperm(0)",
    "m.rand_like(m.ones(2, 3))", "m.randn_like(m.ones(3, dtype=m.float64))",
]


@pytest.mark.parametrize("expr", SHAPE_ONLY_FACTORIES)
def test_factory_shape_and_dtype(expr):
    check_expr(expr, values=False)


def test_empty_strided_strides():
    assert tp.empty_strided((2, 3), (1, 2)).stride() == torch.empty_strided((2, 3), (1, 2)).stride()


def read_only(array):
    array.flags.writeable = False
    return array


# Arrays that are not plain writable memory: read-only, broadcast (stride 0), unaligned.
ODD_ARRAYS = {
    "read_only": (lambda: read_only(np.arange(6.0, dtype=np.float32).reshape(2, 3)), "not writable"),
    "broadcast": (lambda: np.broadcast_to(np.arange(3.0), (2, 3)), "not writable"),
    "unaligned": (lambda: np.arange(13, dtype=np.uint8)[1:].view(np.float32), "not aligned"),
}


@pytest.mark.parametrize("kind", list(ODD_ARRAYS))
def test_from_numpy_of_odd_arrays_works_with_a_warning(kind):
    make, warning = ODD_ARRAYS[kind]
    with pytest.warns(UserWarning, match=warning):
        ours = tp.from_numpy(make())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.from_numpy(make())
    assert_same(ours, theirs)
    if kind != "unaligned":  # shared, as in PyTorch (an unaligned array is copied)
        assert ours.stride() == theirs.stride()


LIKE_SOURCES = {
    "int": "m.from_numpy(np.arange(6).reshape(2, 3))",
    "float": "m.from_numpy(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))",
    "double_t": "m.from_numpy(np.arange(6.0).reshape(2, 3)).t()",
    "bool": "m.from_numpy(np.array([True, False]))",
}
LIKE_FACTORIES = [
    "m.zeros_like(x)", "m.ones_like(x)", "m.full_like(x, 7)", "m.full_like(x, 2.5)", "m.full_like(x, True)",
    "m.zeros_like(x, dtype=m.float64)", "m.ones_like(x, dtype=m.bfloat16)", "m.full_like(x, 3, dtype=m.int8)",
]


@pytest.mark.parametrize("source", list(LIKE_SOURCES))
@pytest.mark.parametrize("expr", LIKE_FACTORIES)
def test_like_factory(expr, source):
    ours = run(expr, tp, x=run(LIKE_SOURCES[source], tp))
    theirs = run(expr, torch, x=run(LIKE_SOURCES[source], torch))
    assert_same(ours, theirs)
    assert ours.stride() == theirs.stride()


ARANGES = [
    "m.arange(5)", "m.arange(0)", "m.arange(2, 10)", "m.arange(0, 10, 3)", "m.arange(10, 0, -2)", "m.arange(0, -5, -1)",
    "m.arange(-3, 3)", "m.arange(10, 10)", "m.arange(5.0)", "m.arange(0.5, 3)", "m.arange(0, 5, 1.0)",
    "m.arange(0, 1, 0.1)", "m.arange(-3, 3, 0.5)", "m.arange(1, -1, -0.25)", "m.arange(0.1, 1, 0.3)",
    "m.arange(5, dtype=m.float32)", "m.arange(-1.5, 1.5, 0.5, dtype=m.float64)", "m.arange(6, dtype=m.int32)",
    "m.arange(0, 10, 2, dtype=m.int16)", "m.arange(0, 1, 0.125, dtype=m.bfloat16)", "m.arange(8, dtype=m.float16)",
    "m.arange(1, 4, dtype=m.uint8)", "m.arange(0, 2.9, 1)", "m.arange(start=1, end=4)",
    "m.arange(0, 1e6, 1e5)", "m.arange(-1e-3, 1e-3, 1e-4, dtype=m.float64)",
]


@pytest.mark.parametrize("expr", ARANGES)
def test_arange(expr):
    check_expr(expr, rtol=1e-6, atol=1e-12)


LINSPACES = [
    "m.linspace(0, 1, 5)", "m.linspace(0, 1, 0)", "m.linspace(3, 7, 1)", "m.linspace(-1, 1, 7)",
    "m.linspace(0, 10, 11, dtype=m.int64)", "m.linspace(1, 0, 4)", "m.linspace(0, 1, 100)", "m.linspace(2, 2, 3)",
    "m.linspace(0, 1, 2)", "m.linspace(-5, 5, 10, dtype=m.float64)", "m.linspace(0, 7, 5, dtype=m.int32)",
    "m.linspace(0.5, 1.5, 3, dtype=m.bfloat16)", "m.linspace(0, 100, 1001)", "m.linspace(10, -10, 6)",
]


@pytest.mark.parametrize("expr", LINSPACES)
def test_linspace(expr):
    check_expr(expr, rtol=1e-6, atol=1e-6)


# ---- tensor() and as_tensor() ----

TENSOR_DATA = [
    "3", "-7", "3.5", "True", "False", "2 ** 40", "1e300", "[1, 2, 3]", "[1.5, 2.5]", "[True, False]", "[1, 2.5]",
    "[True, 2]", "[True, 2.5]", "[[1, 2], [3, 4]]", "((1, 2), (3, 4))", "[(1, 2), [3, 4]]", "[]", "[[]]", "[[], []]",
    "[[[1.0]]]", "[-0.0, float('inf'), float('nan')]", "[[1, 2.0], [3, 4]]", "(1,)", "[0.1, 0.2, 0.3]",
    "np.array([1.5, 2.5])", "np.array([1, 2], dtype=np.int32)", "np.array([1, 2], dtype=np.int16)",
    "np.array([1, 2], dtype=np.uint8)", "np.array([True, False])", "np.array([1.5], dtype=np.float16)",
    "np.array([1.5, 2.0], dtype=np.float32)", "np.arange(6).reshape(2, 3)", "np.arange(6.0).reshape(2, 3).T",
    "np.arange(5)[::2]", "np.float64(1.5)", "np.int32(4)", "np.float32(2.5)", "np.bool_(True)", "np.array(3.0)",
    "[np.float64(1.5), np.float64(2.5)]", "[np.float32(1.5), 2]",
]


@pytest.mark.parametrize("data", TENSOR_DATA)
def test_tensor_from_data(data):
    check_expr(f"m.tensor({data})")


TENSOR_WITH_DTYPE = [
    "m.tensor([1, 2], dtype=m.float32)", "m.tensor([1.7, -1.7], dtype=m.int64)", "m.tensor(3, dtype=m.float16)",
    "m.tensor([0.1, 1e-5], dtype=m.bfloat16)", "m.tensor([0, 2, 0], dtype=m.bool)", "m.tensor([1.5], dtype=m.float64)",
    "m.tensor(np.array([1.5, 2.5]), dtype=m.float32)", "m.tensor([[1, 2]], dtype=m.uint8)",
    "m.tensor(m.tensor([1, 2]), dtype=m.float64)", "m.tensor([m.tensor(1.5), m.tensor(2.5)])",
    "m.tensor(m.ones(2, 3))", "m.tensor(np.array([1, 2], dtype=np.int8), dtype=m.int32)",
]


@pytest.mark.parametrize("expr", TENSOR_WITH_DTYPE)
def test_tensor_with_dtype_or_tensors(expr):
    check_expr(expr)


@pytest.mark.parametrize("data", ["[[1, 2], [3]]", "[[1], 2]", "'abc'", "[1, 'a']", "{1: 2}", "[None]",
                                  "np.arange(5)[::-1]"])
def test_tensor_rejects_bad_data(data):
    with pytest.raises(Exception) as theirs:
        run(f"m.tensor({data})", torch)
    with pytest.raises(Exception) as ours:
        run(f"m.tensor({data})", tp)
    assert type(ours.value) is type(theirs.value), f"torch: {theirs.value!r}, tensorplay: {ours.value!r}"


def test_tensor_copies_its_data():
    array = np.arange(3.0)
    t = tp.tensor(array)
    array[0] = 100
    assert t.tolist() == [0.0, 1.0, 2.0]
    source = tp.ones(2)
    copy = tp.tensor(source)
    source.fill_(5)
    assert copy.tolist() == [1.0, 1.0]


def test_as_tensor_shares_numpy_memory():
    array = np.arange(4.0)
    t = tp.as_tensor(array)
    array[1] = 42
    assert t[1].item() == 42
    assert t.dtype is tp.float64
    assert t.data_ptr() == array.ctypes.data


def test_as_tensor_of_tensor_is_the_same_object():
    x = tp.ones(3)
    assert tp.as_tensor(x) is x


def test_as_tensor_with_new_dtype_copies():
    array = np.arange(4.0)
    t = tp.as_tensor(array, dtype=tp.float32)
    array[0] = 9
    assert t.dtype is tp.float32 and t[0].item() == 0


@pytest.mark.parametrize("data", ["[1, 2]", "[1.5]", "np.arange(3)", "3", "(True, False)"])
def test_as_tensor_matches_torch(data):
    check_expr(f"m.as_tensor({data})")


# ---- from_numpy and numpy() ----

NUMPY_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_]


@pytest.mark.parametrize("np_dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_numpy_dtype_and_sharing(np_dtype):
    array = (np.arange(6) % 3).astype(np_dtype).reshape(2, 3)
    ours, theirs = tp.from_numpy(array), torch.from_numpy(array.copy())
    assert_same(ours, theirs)
    assert ours.data_ptr() == array.ctypes.data
    array[0, 1] = 1 if np_dtype is np.bool_ else 2
    assert ours[0, 1].item() == array[0, 1]
    ours[1, 2] = 0
    assert array[1, 2] == 0


def test_from_numpy_bfloat16_shares_memory():
    array = np.array([1.0, 2.5, -3.0], dtype=ml_dtypes.bfloat16)
    t = tp.from_numpy(array)
    assert t.dtype is tp.bfloat16
    assert t.tolist() == [1.0, 2.5, -3.0]
    array[0] = 8
    assert t[0].item() == 8.0
    t.add_(1)
    assert array.astype(np.float32).tolist() == [9.0, 3.5, -2.0]


def test_from_numpy_strided_array_keeps_strides():
    array = np.arange(24.0).reshape(4, 6)[::2, 1::3]
    ours, theirs = tp.from_numpy(array), torch.from_numpy(array)
    assert_same(ours, theirs)
    assert ours.stride() == theirs.stride()
    array[1, 1] = -1
    assert ours[1, 1].item() == -1


@pytest.mark.parametrize("expr", ["np.arange(4)[::-1]", "np.arange(12.0).reshape(3, 4)[:, ::-2]"])
def test_from_numpy_negative_strides_raise_value_error(expr):
    with pytest.raises(ValueError):
        torch.from_numpy(eval(expr))
    with pytest.raises(ValueError):
        tp.from_numpy(eval(expr))


@pytest.mark.parametrize("expr", ["np.array(['a'])", "np.array([object()])", "[1, 2]", "3.0"])
def test_from_numpy_rejects_non_arrays_with_type_error(expr):
    with pytest.raises(TypeError):
        torch.from_numpy(eval(expr))
    with pytest.raises(TypeError):
        tp.from_numpy(eval(expr))


def test_from_numpy_keeps_array_alive():
    t = tp.from_numpy(np.arange(1000.0))
    assert t.sum().item() == sum(range(1000))


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"])
def test_numpy_dtype_matches_torch(name):
    ours = tp.zeros(2, dtype=getattr(tp, name)).numpy()
    assert ours.dtype == torch.zeros(2, dtype=getattr(torch, name)).numpy().dtype


def test_numpy_shares_memory_both_ways():
    t = tp.zeros(3)
    array = t.numpy()
    assert array.ctypes.data == t.data_ptr()
    array[0] = 5
    assert t[0].item() == 5
    t.add_(1)
    assert array.tolist() == [6.0, 1.0, 1.0]


def test_numpy_of_bfloat16_is_ml_dtypes_and_shared():
    t = tp.tensor([1.0, 2.0]).bfloat16()
    array = t.numpy()
    assert array.dtype == np.dtype(ml_dtypes.bfloat16)
    array[1] = 4
    assert t[1].item() == 4.0


def test_numpy_of_non_contiguous_tensor_is_a_strided_view():
    base = tp.arange(12.0).reshape(3, 4)
    ours = base.t()[1:].numpy()
    theirs = torch.arange(12.0).reshape(3, 4).t()[1:].numpy()
    assert ours.shape == theirs.shape and ours.strides == theirs.strides
    np.testing.assert_array_equal(ours, theirs)
    ours[0, 0] = -1
    assert base[0, 1].item() == -1


def test_np_asarray_of_tensor():
    np.testing.assert_array_equal(np.asarray(tp.arange(4)), np.arange(4))


# ---- Python protocols ----

PROTOCOL_TENSORS = [
    "m.tensor(2.5)", "m.tensor(7)", "m.tensor(True)", "m.tensor([1.5])", "m.tensor([3])", "m.tensor([[1, 2], [3, 4]])",
    "m.tensor([1.25, -2.5]).bfloat16()", "m.tensor([0.1]).half()", "m.tensor([[True], [False]])",
    "m.arange(6).reshape(2, 3).t()", "m.zeros(0)", "m.zeros(2, 0)", "m.tensor(-3, dtype=m.int8)",
    "m.tensor([200], dtype=m.uint8)", "m.tensor(1e20, dtype=m.float64)",
]


def _protocols(t):
    """What Python sees of a tensor: each protocol's result, or the exception type it raises."""
    results = {}
    for name, fn in {
        "tolist": lambda: t.tolist(), "item": lambda: t.item(), "len": lambda: len(t),
        "iter": lambda: [row.tolist() for row in t], "bool": lambda: bool(t), "float": lambda: float(t),
        "int": lambda: int(t), "types": lambda: [type(v) for v in np.ravel(np.array(t.tolist(), dtype=object))],
        "item_type": lambda: type(t.item()),
    }.items():
        try:
            results[name] = fn()
        except Exception as e:
            results[name] = type(e)
    return results


@pytest.mark.parametrize("expr", PROTOCOL_TENSORS)
def test_python_protocols(expr):
    ours, theirs = _protocols(run(expr, tp)), _protocols(run(expr, torch))
    assert ours == theirs


def test_index_protocol():
    values = [10, 20, 30, 40]
    assert values[tp.tensor(2)] == 30
    with pytest.raises(TypeError):
        values[tp.tensor(1.5)]


# ---- metadata ----

METADATA_TENSORS = [
    "m.arange(24).reshape(2, 3, 4)", "m.arange(24).reshape(2, 3, 4).transpose(0, 2)",
    "m.arange(24.0).reshape(2, 3, 4)[:, 1:, ::2]", "m.zeros(3, 1).expand(3, 4)", "m.zeros(0, 3)", "m.ones(())",
    "m.arange(10, dtype=m.int16)[::3]", "m.ones(4, 5, dtype=m.bfloat16).t()", "m.ones(2, 3, dtype=m.bool)[1]",
    "m.arange(12.0, dtype=m.float64).reshape(3, 4)[1:, 2:]", "m.ones(5, 1, 3).squeeze(1)", "m.ones(3).unsqueeze(0)",
    "m.arange(30).reshape(5, 6).permute(1, 0)[::2]", "m.arange(6).reshape(2, 3)[:, :1]",
]


@pytest.mark.parametrize("expr", METADATA_TENSORS)
def test_metadata(expr):
    ours, theirs = run(expr, tp), run(expr, torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert tuple(ours.size()) == tuple(theirs.size())
    assert [ours.size(d) for d in range(-ours.dim(), ours.dim())] == [theirs.size(d) for d in range(-theirs.dim(),
                                                                                                      theirs.dim())]
    assert ours.dim() == theirs.dim() and ours.ndim == theirs.ndim
    assert ours.numel() == theirs.numel() and tp.numel(ours) == torch.numel(theirs)
    assert ours.stride() == theirs.stride()
    assert [ours.stride(d) for d in range(ours.dim())] == [theirs.stride(d) for d in range(theirs.dim())]
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.element_size() == theirs.element_size()
    assert ours.storage_offset() == theirs.storage_offset()
    assert isinstance(ours.data_ptr(), int)
    assert_same(ours, theirs)


def test_size_type_and_repr():
    shape = tp.zeros(2, 3).shape
    assert isinstance(shape, tp.Size) and isinstance(shape, tuple)
    assert shape == (2, 3)
    assert repr(shape) == repr(torch.zeros(2, 3).shape).replace("torch.", "tensorplay.")
    assert repr(tp.zeros(()).shape) == repr(torch.zeros(()).shape).replace("torch.", "tensorplay.")
    assert repr(tp.Size([4])) == "tensorplay.Size([4])"
    assert str(shape) == str(torch.zeros(2, 3).shape).replace("torch.", "tensorplay.")
    assert isinstance(shape[1:], tp.Size) and shape[1:] == (3,)
    assert shape.numel() == 6
    assert tp.zeros(2, 3).size() == shape


def test_data_ptr_of_views_is_offset_by_storage_offset():
    base = tp.arange(24, dtype=tp.int32).reshape(2, 3, 4)
    assert base[1].data_ptr() == base.data_ptr() + 12 * 4
    assert base[1, 2, 3].data_ptr() == base.data_ptr() + 23 * 4
    assert base[:, 1:].data_ptr() == base.data_ptr() + 4 * 4
    assert base.transpose(0, 2).data_ptr() == base.data_ptr()


# ---- views share storage ----

VIEWS = [
    "x[1]", "x[:, 1]", "x[..., 2]", "x[1:, ::2]", "x[:, :, 1:3]", "x.view(6, 4)", "x.view(-1)", "x.reshape(4, 6)",
    "x.transpose(0, 1)", "x.permute(2, 0, 1)", "x.narrow(2, 1, 2)", "x.select(1, -1)", "x.unsqueeze(1)",
    "x[None]", "x.flatten()", "x.flatten(1)", "x.unflatten(2, (2, 2))", "x[0].t()", "x.mT", "x.movedim(0, 2)",
    "x[:, 1:2]", "x.swapaxes(0, 2)", "x.unbind(1)[2]", "x.split(2, dim=2)[1]",
    "x.chunk(3, dim=1)[1]", "x.as_strided((2, 2), (5, 1), 3)", "x.view_as(m.zeros(4, 6))", "x[1].squeeze()",
]


@pytest.mark.parametrize("expr", VIEWS)
def test_view_shares_storage(expr):
    bases = {name: module.arange(24.0).reshape(2, 3, 4) for name, module in (("tp", tp), ("torch", torch))}
    ours, theirs = run(expr, tp, x=bases["tp"]), run(expr, torch, x=bases["torch"])
    assert_same(ours, theirs)
    assert ours.stride() == theirs.stride()
    assert ours.data_ptr() - bases["tp"].data_ptr() == theirs.data_ptr() - bases["torch"].data_ptr()
    # A write through the view must land in the base, exactly where torch's lands.
    ours.mul_(-1).add_(0.5)
    theirs.mul_(-1).add_(0.5)
    assert_same(bases["tp"], bases["torch"])
    # And a write to the base shows through the view.
    bases["tp"].add_(100)
    bases["torch"].add_(100)
    assert_same(ours, theirs)


@pytest.mark.parametrize("expr", ["x.reshape(-1)", "x.contiguous()", "x.flatten()", "x.reshape(4, 3)"])
def test_non_contiguous_reshape_copies(expr):
    bases = {"tp": tp.arange(12.0).reshape(3, 4).t(), "torch": torch.arange(12.0).reshape(3, 4).t()}
    ours, theirs = run(expr, tp, x=bases["tp"]), run(expr, torch, x=bases["torch"])
    assert_same(ours, theirs)
    ours.fill_(-1)
    theirs.fill_(-1)
    assert_same(bases["tp"], bases["torch"])


def test_contiguous_of_contiguous_is_the_same_object():
    x = tp.ones(3)
    assert x.contiguous() is x


# ---- _version ----

IN_PLACE = [
    "x.add_(1)", "x.sub_(1)", "x.mul_(2)", "x.div_(2)", "x.copy_(m.ones(2, 3))", "x.fill_(3)", "x.zero_()",
    "x.__setitem__(0, 5.0)", "x.__setitem__((slice(None), 1), m.ones(2))", "x.__setitem__(x > 2, 0.0)",
    "x.__setitem__(m.tensor([0, 1]), 1.0)", "x.clamp_(0, 1)", "x.uniform_()", "x.normal_()", "x.exp_()",
    "x.masked_fill_(x > 1, 0.0)", "x.index_put_((m.tensor([0]),), m.tensor(1.0))", "x.__iadd__(1)", "x.__imul__(x)",
]


@pytest.mark.parametrize("expr", IN_PLACE)
def test_in_place_op_bumps_version(expr):
    x = tp.arange(6.0).reshape(2, 3)
    before = x._version
    run(expr, tp, x=x)
    assert x._version > before


@pytest.mark.parametrize("expr", IN_PLACE)
def test_version_is_shared_by_views(expr):
    base = tp.arange(12.0).reshape(2, 2, 3)
    view = base[1]
    other_view = base.view(4, 3)
    before = base._version
    assert view._version == before == other_view._version
    run(expr, tp, x=view)
    assert base._version > before
    assert view._version == base._version == other_view._version


@pytest.mark.parametrize("expr", ["x + 1", "x.sum()", "x[0]", "x.t()", "x.clone()", "x.exp()", "x.view(3, 2)",
                                  "x.contiguous()", "x.to(m.float64)", "x.numpy()", "x.tolist()"])
def test_out_of_place_op_keeps_version(expr):
    x = tp.arange(6.0).reshape(2, 3)
    before = x._version
    run(expr, tp, x=x)
    assert x._version == before


# ---- random numbers ----

RANDOM = ["m.rand(50)", "m.randn(50)", "m.randint(0, 100, (50,))", "m.randperm(50)", "m.rand(3, 4, dtype=m.float64)",
          "m.randn(20, dtype=m.bfloat16)", "m.rand_like(m.ones(10))", "m.randn_like(m.ones(10))",
          "m.ones(30).uniform_(-2, 2)", "m.ones(30).normal_(1, 3)"]


@pytest.mark.parametrize("expr", RANDOM)
def test_manual_seed_reproduces(expr):
    tp.manual_seed(1234)
    first = run(expr, tp)
    tp.manual_seed(1234)
    second = run(expr, tp)
    tp.manual_seed(4321)
    other = run(expr, tp)
    np.testing.assert_array_equal(as_numpy(first), as_numpy(second))
    assert not np.array_equal(as_numpy(first), as_numpy(other))


def test_manual_seed_returns_a_generator_and_sets_initial_seed():
    g = tp.manual_seed(77)
    assert isinstance(g, tp.Generator)
    assert tp.initial_seed() == 77
    assert g.initial_seed() == 77


@pytest.mark.parametrize("fn", ["m.rand(20, generator=g)", "m.randn(20, generator=g)",
                                "m.randint(0, 10, (20,), generator=g)", "m.randperm(20, generator=g)",
                                "m.empty(20).uniform_(generator=g)", "m.empty(20).normal_(generator=g)"])
def test_generators_are_independent_reproducible_streams(fn):
    g1 = tp.Generator().manual_seed(5)
    g2 = tp.Generator().manual_seed(5)
    a = run(fn, tp, g=g1)
    tp.manual_seed(0)
    b = run(fn, tp, g=g2)
    np.testing.assert_array_equal(as_numpy(a), as_numpy(b))
    # Drawing from a generator leaves the default stream where it was.
    tp.manual_seed(11)
    expected = tp.rand(5)
    tp.manual_seed(11)
    run(fn, tp, g=tp.Generator().manual_seed(3))
    np.testing.assert_array_equal(as_numpy(tp.rand(5)), as_numpy(expected))
    # Two differently seeded generators give different streams.
    c = run(fn, tp, g=tp.Generator().manual_seed(6))
    assert not np.array_equal(as_numpy(a), as_numpy(c))


def test_generator_state_round_trip():
    g = tp.Generator().manual_seed(9)
    tp.rand(7, generator=g)
    state = g.get_state()
    a = tp.rand(10, generator=g)
    g.set_state(state)
    b = tp.rand(10, generator=g)
    np.testing.assert_array_equal(as_numpy(a), as_numpy(b))


def test_generator_manual_seed_returns_self():
    g = tp.Generator()
    assert g.manual_seed(3) is g
    assert g.initial_seed() == 3
    assert g.device == tp.device("cpu")


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_rand_is_in_unit_interval(name):
    tp.manual_seed(0)
    values = as_numpy(tp.rand(100_000, dtype=getattr(tp, name))).astype(np.float64)
    assert values.min() >= 0.0 and values.max() < 1.0
    assert abs(values.mean() - 0.5) < 0.01
    assert len(np.unique(values)) > (100 if name in ("float16", "bfloat16") else 90_000)


@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16"])
def test_randn_moments(name):
    tp.manual_seed(0)
    values = as_numpy(tp.randn(100_000, dtype=getattr(tp, name))).astype(np.float64)
    assert abs(values.mean()) < 0.02
    assert abs(values.std() - 1) < 0.02
    # A normal sample of this size has roughly 0.27% beyond 3 sigma.
    assert 0.001 < np.mean(np.abs(values) > 3) < 0.005


@pytest.mark.parametrize("low,high", [(0, 2), (-5, 5), (3, 4), (100, 1000), (-2 ** 40, 2 ** 40)])
def test_randint_bounds(low, high):
    tp.manual_seed(0)
    values = tp.randint(low, high, (20_000,))
    assert values.dtype is tp.int64
    array = values.numpy()
    assert array.min() >= low and array.max() < high
    if high - low <= 10:
        assert set(array.tolist()) == set(range(low, high))


def test_randint_with_high_only():
    values = tp.randint(3, (1000,)).numpy()
    assert set(values.tolist()) == {0, 1, 2}


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000])
def test_randperm_is_a_permutation(n):
    values = tp.randperm(n)
    assert values.dtype is tp.int64
    assert sorted(values.tolist()) == list(range(n))


def test_uniform_in_place():
    x = tp.zeros(50_000)
    assert x.uniform_(2, 5) is x
    values = x.numpy()
    assert values.min() >= 2 and values.max() < 5
    assert abs(values.mean() - 3.5) < 0.05


def test_normal_in_place():
    x = tp.zeros(50_000, dtype=tp.float64)
    assert x.normal_(3, 2) is x
    values = x.numpy()
    assert abs(values.mean() - 3) < 0.05
    assert abs(values.std() - 2) < 0.05


def test_uniform_on_a_non_contiguous_view_fills_only_the_view():
    x = tp.zeros(4, 6)
    x[:, ::2].uniform_(1, 2)
    values = x.numpy()
    assert (values[:, 1::2] == 0).all()
    assert ((values[:, ::2] >= 1) & (values[:, ::2] < 2)).all()


# ---- devices ----

@pytest.mark.parametrize("spec", ["'cpu'", "'cuda'", "'cuda:0'", "'cuda:3'", "'cuda', 1", "'cpu', 0"])
def test_device_attributes(spec):
    ours, theirs = eval(f"tp.device({spec})"), eval(f"torch.device({spec})")
    assert ours.type == theirs.type
    assert ours.index == theirs.index
    assert str(ours) == str(theirs)
    assert repr(ours) == repr(theirs)


def test_device_equality_and_hash():
    assert tp.device("cpu") == tp.device("cpu")
    assert tp.device("cuda:0") == tp.device("cuda", 0)
    assert tp.device("cuda:0") != tp.device("cuda:1")
    assert tp.device("cuda") != tp.device("cuda:0")
    assert len({tp.device("cpu"), tp.device("cpu"), tp.device("cuda:1")}) == 2


def test_tensor_device():
    x = tp.zeros(2)
    assert x.device == tp.device("cpu")
    assert str(x.device) == "cpu"
    assert repr(x.device) == "device(type='cpu')"
    assert x.is_cpu and not x.is_cuda
    assert tp.zeros(2, device="cpu").device == tp.device("cpu")
    assert tp.zeros(2, device=tp.device("cpu")).device.type == "cpu"
    assert x.to("cpu").device.type == "cpu"
    assert x.cpu().device.type == "cpu"


def test_cuda_is_not_available():
    assert tp.cuda.is_available() is False
    assert tp.cuda.device_count() == 0


@pytest.mark.parametrize("expr", ["tp.zeros(2, device='cuda')", "tp.ones(2, device='cuda:0')",
                                  "tp.tensor([1.0], device='cuda')", "tp.ones(2).to('cuda')", "tp.ones(2).cuda()",
                                  "tp.arange(3, device=tp.device('cuda', 0))", "tp.rand(2, device='cuda')"])
def test_cuda_tensor_request_raises_runtime_error(expr):
    with pytest.raises(RuntimeError):
        eval(expr)


@pytest.mark.parametrize("spec", ["'cuda:x'", "'tpu'", "'cuda:-1'", "'CPU'", "''", "'cuda:'", "'cuda: 1'",
                                  "'cuda:0:1'", "'cuda:0', 1", "'cuda', -1"])
def test_malformed_device_raises_runtime_error(spec):
    with pytest.raises(RuntimeError):
        eval(f"torch.device({spec})")
    with pytest.raises(RuntimeError):
        eval(f"tp.device({spec})")


# ---- repr ----

RNG = np.random.default_rng(0)
REPR_NAMES = {
    "rand20": RNG.random(20).astype(np.float32),
    "randn_2d": RNG.standard_normal((4, 5)).astype(np.float32),
    "rand_big": RNG.random((40, 40)).astype(np.float32),
    "randn_3d_big": RNG.standard_normal((12, 10, 10)).astype(np.float32),
    "small_sci": (RNG.random(30) * 1e-5).astype(np.float32),
    "ints_big": RNG.integers(-1000, 1000, 2000),
    "rand_f64": RNG.random(7),
}
REPRS = [
    # integers
    "m.tensor([1, 2, 3])", "m.tensor([-1, 10, -100])", "m.tensor([[1, 22], [333, -4]])",
    "m.tensor([1, 2], dtype=m.int32)", "m.tensor([1, 2], dtype=m.int16)", "m.tensor([-1, 2], dtype=m.int8)",
    "m.tensor([0, 255], dtype=m.uint8)", "m.tensor(7)", "m.tensor(-7, dtype=m.int32)", "m.tensor([2 ** 40, -3])",
    # floats with 4 decimals and integer-valued floats
    "m.tensor([1.5, 2.25, 3.125])", "m.tensor([0.1, 0.2, 0.3])", "m.tensor([1., 2., 3.])", "m.tensor([-1., 0., 100.])",
    "m.tensor([0.12345, 1.0])", "m.tensor([100.5, 2.25])", "m.tensor([-0.0, 1.0])", "m.tensor([0., 0.])",
    "m.tensor([1.23456789])", "m.tensor([-2.5, 3.75])", "m.tensor([999.5, 1.0])", "m.tensor([0.0001, 1.0])",
    "m.tensor([12345.678])", "m.tensor([1e7 + 0.5])",
    # scientific notation
    "m.tensor([1e-5, 1.0])", "m.tensor([1e9, 1.0])", "m.tensor([1e-5])", "m.tensor([123456789.0])",
    "m.tensor([1e-10, 1e10])", "m.tensor([1000.5, 1.0])", "m.tensor([1e8, 1.0])", "m.tensor([2e8, 1.0])",
    "m.tensor([1e-4, 1.0])", "m.tensor([9.9e-5, 0.5])", "m.tensor([1.0, 1001.0])", "m.tensor([1.0, 1000.0])",
    "m.tensor([-1e-5, 1e-7])", "m.tensor(1e-5)", "m.tensor(1e9)", "m.tensor([1e38, -1e38])",
    # NaN and inf
    "m.tensor([float('nan'), float('inf'), -float('inf'), 1.5])", "m.tensor([float('nan'), 1.0, 2.0])",
    "m.tensor([float('inf'), -float('inf')])", "m.tensor([float('nan')])", "m.tensor([float('nan'), 1e-5])",
    "m.tensor([0., float('nan')])", "m.tensor(float('nan'))", "m.tensor(float('-inf'))",
    "m.tensor([float('inf'), 1e9, 1.0])", "m.tensor([[float('nan'), 2.0], [3.5, float('inf')]])",
    # 0-dim
    "m.tensor(3.5)", "m.tensor(True)", "m.tensor(False)", "m.tensor(2.0)", "m.tensor(2.5, dtype=m.float64)",
    "m.tensor(0.1, dtype=m.bfloat16)", "m.tensor(-0.0)",
    # empty
    "m.zeros(0)", "m.zeros(2, 0)", "m.zeros(0, 3, dtype=m.float64)", "m.zeros(0, dtype=m.int32)",
    "m.zeros(0, dtype=m.int64)", "m.zeros(1, 0, 2)", "m.zeros(0, dtype=m.bool)", "m.zeros(0, dtype=m.bfloat16)",
    # 2-D and 3-D
    "m.arange(6.0).reshape(2, 3)", "m.arange(24).reshape(2, 3, 4)", "m.arange(24.0).reshape(2, 3, 4) / 7",
    "m.from_numpy(randn_2d)", "m.arange(8.0).reshape(2, 2, 2) - 3.5", "m.ones(1, 1, 1)", "m.eye(3)",
    "m.tensor([[True, False], [False, True]])", "m.arange(6).reshape(3, 2).t()", "m.arange(16.0).reshape(2, 2, 2, 2)",
    # line wrapping and summarisation
    "m.from_numpy(rand20)", "m.arange(50.0)", "m.arange(100)", "m.arange(2000.0)", "m.arange(1001)",
    "m.from_numpy(rand_big)", "m.from_numpy(randn_3d_big)", "m.from_numpy(small_sci)", "m.from_numpy(ints_big)",
    "m.arange(1001.0) * 1e-6", "m.arange(30.0).reshape(1, 30)", "m.arange(3000).reshape(3, 1000)",
    "m.arange(2000.0).reshape(1000, 2)", "m.arange(1000.0)", "m.ones(2000, dtype=m.bool)",
    # dtype suffixes
    "m.from_numpy(rand_f64)", "m.tensor([1.5, 2.0], dtype=m.float64)", "m.tensor([0.1, 0.2], dtype=m.float16)",
    "m.tensor([0.1, 1.5, 3.0], dtype=m.bfloat16)", "m.tensor([1e-5, 1.0], dtype=m.float16)",
    "m.tensor([65504.0, -65504.0], dtype=m.float16)", "m.tensor([3e38, 1.0], dtype=m.bfloat16)",
    "m.arange(2000.0, dtype=m.float16)", "m.tensor([True, False])", "m.arange(60, dtype=m.int32)",
    "m.tensor([[1, 2], [3, 4]], dtype=m.uint8)", "m.tensor([float('nan'), 1.0], dtype=m.bfloat16)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_matches_torch(expr):
    ours = run(expr, tp, **REPR_NAMES)
    theirs = run(expr, torch, **{k: v.copy() for k, v in REPR_NAMES.items()})
    assert repr(ours) == repr(theirs).replace("torch.", "tensorplay.")


@pytest.mark.parametrize("expr", ["m.tensor([1.5, 2.0])", "m.tensor([1.5, 2.0], dtype=m.float64)",
                                  "m.tensor([1, 2])", "m.zeros(2, 0, dtype=m.float32)"])
def test_repr_with_float64_default_dtype(expr):
    tp.set_default_dtype(tp.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(run(expr, tp)) == repr(run(expr, torch)).replace("torch.", "tensorplay.")
    finally:
        tp.set_default_dtype(tp.float32)
        torch.set_default_dtype(torch.float32)


def test_str_equals_repr():
    x = tp.tensor([1.5, 2.0])
    assert str(x) == repr(x) == str(torch.tensor([1.5, 2.0])).replace("torch.", "tensorplay.")

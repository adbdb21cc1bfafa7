"""The creation and global-state composites (tensorplay/_composites/creation.py, state.py) against
PyTorch, for what the op table cannot express: out=, in-place and torch-level in-place forms, memory
sharing (frombuffer, asarray, from_file), keyword forms, warnings, errors, global state, torch.cond and
printing."""

import array
import contextlib
import math
import os
import pathlib
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp

LIBS = (torch, tp)


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def same(ours, theirs, exact=True):
    """ours (tensorplay) has theirs' (torch's) dtype, shape and values."""
    assert isinstance(ours, tp.Tensor)
    assert dtype_name(ours) == dtype_name(theirs) and tuple(ours.shape) == tuple(theirs.shape)
    got = np.asarray(ours.detach().double().tolist())
    want = theirs.detach().double().numpy()
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def outcome(fn):
    """fn's result, or its exception's type and message; warnings recorded as (category, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 (the exception is what is compared)
            result = (type(e), str(e).split("\n")[0])
    # torch's C++ warnings end with where they were raised; its texts say PyTorch where ours say tensorplay.
    texts = [(w.category, str(w.message).split(" (Triggered internally")[0].replace("PyTorch does", "tensorplay does"))
             for w in caught]
    return result, texts


def both(fn):
    """fn(torch) and fn(tensorplay), as outcome() gives them."""
    return outcome(lambda: fn(torch)), outcome(lambda: fn(tp))


def raises_like_torch(fn, match=None):
    """fn raises in both libraries, the same exception type; tensorplay's message matches `match`."""
    (theirs, _), (ours, _) = both(fn)
    assert isinstance(theirs, tuple) and isinstance(theirs[0], type), f"torch returned {theirs!r}"
    assert isinstance(ours, tuple) and ours[0] is theirs[0], f"torch raised {theirs}, tensorplay gave {ours}"
    if match is not None:
        assert match in ours[1], ours[1]


# ---------------------------------------------------------------------------------------------
# Windows, logspace, range: keywords, requires_grad, out=, errors

@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_window_keywords_and_requires_grad(name):
    for kwargs in ({"window_length": 6, "periodic": False}, {"window_length": 6, "dtype": "float64"},
                   {"window_length": 3, "requires_grad": True, "dtype": "float64"}):
        make = lambda m: getattr(m, name)(**{k: getattr(m, v) if k == "dtype" else v for k, v in kwargs.items()})
        ours, theirs = make(tp), make(torch)
        same(ours, theirs, exact=False)
        assert ours.requires_grad == theirs.requires_grad and ours.is_leaf
    for bad, match in [((-1,), "non-negative window_length, got window_length=-1"), ((5.0,), "must be int"),
                       ((True,), "must be int"), ((5, 1), "periodic")]:
        raises_like_torch(lambda m: getattr(m, name)(*bad), match)
    raises_like_torch(lambda m: getattr(m, name)(4, dtype=m.int64), f"{name} expects floating point dtypes")


def test_window_alpha_beta_positional():
    same(tp.hamming_window(7, False, 0.3, 0.2, dtype=tp.float64),
         torch.hamming_window(7, False, 0.3, 0.2, dtype=torch.float64), exact=False)
    same(tp.kaiser_window(8, True, 5.5, dtype=tp.float64), torch.kaiser_window(8, True, 5.5, dtype=torch.float64),
         exact=False)


def test_logspace_tensor_bounds_out_and_errors():
    same(tp.logspace(tp.tensor(0.0), tp.tensor(2), 3), torch.logspace(torch.tensor(0.0), torch.tensor(2), 3))
    for m_dtype in ("int64", "float64"):
        ours = tp.empty(5, dtype=getattr(tp, m_dtype))
        theirs = torch.empty(5, dtype=getattr(torch, m_dtype))
        assert tp.logspace(0, 2, 3, out=ours) is ours  # out's dtype is the result's; out takes its size silently
        torch.logspace(0, 2, 3, out=theirs)
        same(ours, theirs)
    raises_like_torch(lambda m: m.logspace(0, 2, 3, dtype=m.float64, out=m.empty(3)), "does not match dtype of out")
    raises_like_torch(lambda m: m.logspace(0, 2, 3, out=m.empty(3, requires_grad=True)), "automatic differentiation")
    raises_like_torch(lambda m: m.logspace(0, 2, -1), "number of steps must be non-negative")
    raises_like_torch(lambda m: m.logspace(m.tensor([0.0]), 2, 3), "0-dimensional")
    raises_like_torch(lambda m: m.logspace(0, 2, 3.0), "steps")
    raises_like_torch(lambda m: m.logspace("a", 2, 3), "start")
    raises_like_torch(lambda m: m.logspace(0, 2, 3, dtype=m.int64, requires_grad=True))
    assert tp.logspace(0, 2, 3, requires_grad=True).requires_grad
    assert tp.logspace(0, 2, 4, device="meta").shape == (4,)


def test_range_warns_resizes_out_and_rejects_bad_bounds():
    (theirs, their_warnings), (ours, our_warnings) = both(lambda m: m.range(1, 4, 0.5))
    same(ours, theirs)
    assert our_warnings == their_warnings and our_warnings[0][0] is UserWarning
    for dtype in ("int64", "float32"):
        ours, theirs = tp.empty(2, dtype=getattr(tp, dtype)), torch.empty(2, dtype=getattr(torch, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # only range's own warning
            warnings.filterwarnings("ignore", "torch.range is deprecated")
            assert tp.range(0, 4, out=ours) is ours
            torch.range(0, 4, out=theirs)
        same(ours, theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(tp.range(start=1, end=3), torch.range(start=1, end=3))
        same(tp.range(tp.tensor(0.0), 2), torch.range(torch.tensor(0.0), 2))
        assert tp.range(0, 2, requires_grad=True).requires_grad
        assert tp.range(0, 2, device="meta").shape == (3,)
        for args, match in [((4,), "end"), ((4, 1), "upper bound and lower bound inconsistent with step sign"),
                            ((1, 4, 0), "step must be nonzero"), ((1, math.nan), "unsupported range: 1 -> nan"),
                            (("a", 1), "start")]:
            raises_like_torch(lambda m: m.range(*args), match)
        raises_like_torch(lambda m: m.range(0, 2, dtype=m.float64, out=m.empty(3)), "does not match")
        raises_like_torch(lambda m: m.range(0, 1, dtype=m.bool), "Bool")


# ---------------------------------------------------------------------------------------------
# fill, fill_, zero_

def test_fill_keeps_input_in_the_graph_and_differentiates_the_value():
    grads = []
    for m in LIBS:
        x = m.arange(6.0).reshape(2, 3).requires_grad_()
        value = m.tensor(2.0, requires_grad=True)
        result = m.fill(input=x, value=value)
        assert result.requires_grad
        (result * m.arange(6.0).reshape(2, 3)).sum().backward()
        grads.append((x.grad.tolist(), value.grad.item()))
    assert grads[0] == grads[1]
    raises_like_torch(lambda m: m.fill(m.ones(2), "a"))
    raises_like_torch(lambda m: m.fill(m.ones(2), m.ones(2)), "0-dimension value tensor")
    raises_like_torch(lambda m: m.fill(m.ones(2), 1, out=m.ones(2)))


@pytest.mark.parametrize("name,args", [("fill_", (3,)), ("fill_", (2.5,)), ("zero_", ())])
def test_torch_level_fill__and_zero__write_into_input(name, args):
    for dtype in ("float32", "int64", "bool"):
        ours, theirs = tp.ones(2, 3, dtype=getattr(tp, dtype)), torch.ones(2, 3, dtype=getattr(torch, dtype))
        assert getattr(tp, name)(ours, *args) is ours
        getattr(torch, name)(theirs, *args)
        same(ours, theirs)
    raises_like_torch(lambda m: getattr(m, name)(3, *args))


def test_fill__through_autograd():
    grads = []
    for m in LIBS:
        leaf = m.ones(3, requires_grad=True)
        x = leaf * 2
        assert m.fill_(x, 5) is x
        (x * leaf).sum().backward()
        grads.append(leaf.grad.tolist())
    assert grads[0] == grads[1]


# ---------------------------------------------------------------------------------------------
# empty_permuted, new_empty_strided

@pytest.mark.parametrize("size,layout", [((2, 3, 4), (2, 0, 1)), ((2, 0, 4), (2, 0, 1)), ((), ()), ((5,), (0,)),
                                         ((2, 3, 4, 5), (0, 2, 3, 1))])
def test_empty_permuted_strides(size, layout):
    ours, theirs = tp.empty_permuted(size, layout), torch.empty_permuted(size, layout)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    meta = tp.empty_permuted(size, layout, device="meta", dtype=tp.int8)
    assert meta.is_meta and meta.stride() == theirs.stride() and meta.dtype == tp.int8


def test_empty_permuted_requires_grad_and_errors():
    ours = tp.empty_permuted((2, 3), (1, 0), requires_grad=True)
    assert ours.requires_grad and ours.is_leaf
    for size, layout, match in [((2, 3, 4), (2, 0), "len(size) = 3 is not equal to len(physical_layout) = 2"),
                                ((2, 3, 4), (2, 0, 0), "Duplicate dim not allowed"),
                                ((2, 3, 4), (2, 0, 3), "but got 3 at index 2"),
                                ((2, 3, 4), (-1, 0, 1), "but got -1 at index 0"),
                                ((2, -3), (1, 0), "negative dimension")]:
        raises_like_torch(lambda m: m.empty_permuted(size, layout), match)
    raises_like_torch(lambda m: m.empty_permuted((2, 3), (1, 0), dtype=m.int64, requires_grad=True))


def test_new_empty_strided():
    for kwargs in ({}, {"dtype": "float64", "requires_grad": True}):
        make = lambda m: m.ones(2, dtype=m.int8).new_empty_strided(
            (2, 3), (1, 2), **{k: getattr(m, v) if k == "dtype" else v for k, v in kwargs.items()})
        ours, theirs = make(tp), make(torch)
        assert (ours.stride(), dtype_name(ours), ours.requires_grad) == \
               (theirs.stride(), dtype_name(theirs), theirs.requires_grad)
    assert tp.ones(2, device="meta").new_empty_strided((2, 3), (3, 1)).is_meta
    raises_like_torch(lambda m: m.ones(2).new_empty_strided((2, 3), (1,)))
    raises_like_torch(lambda m: m.ones(2).new_empty_strided((2,), (1,), m.float64))


# ---------------------------------------------------------------------------------------------
# frombuffer

def int32_bytes():
    return bytearray(np.array([1, 2, 3], dtype=np.int32).tobytes())


@pytest.mark.parametrize("kwargs", [{}, {"count": 2}, {"offset": 4}, {"count": -2}, {"offset": 4, "count": 1}])
def test_frombuffer_shares_memory(kwargs):
    results = []
    for m in LIBS:
        buffer = int32_bytes()
        t = m.frombuffer(buffer, dtype=m.int32, **kwargs)
        t[0] = 7  # seen by the buffer
        buffer[-4] = 9  # seen by the tensor, where it covers the last element
        results.append((t.tolist(), bytes(buffer)))
    assert results[0] == results[1]


def test_frombuffer_dtypes_and_buffer_kinds():
    for m_dtype, data in [("bfloat16", b"\x80\x3f\x00\x40"), ("bool", b"\x01\x00"), ("float16", b"\x00\x3c"),
                          ("int8", b"\xff\x01\x02")]:
        same(tp.frombuffer(bytearray(data), dtype=getattr(tp, m_dtype)),
             torch.frombuffer(bytearray(data), dtype=getattr(torch, m_dtype)))
    for make in (lambda: array.array("i", [1, 2, 3]), lambda: memoryview(int32_bytes())[4:],
                 lambda: np.arange(3, dtype=np.int32)):
        same(tp.frombuffer(make(), dtype=tp.int32), torch.frombuffer(make(), dtype=torch.int32))
    ours = tp.frombuffer(bytearray(8), dtype=tp.float32, requires_grad=True)
    assert ours.requires_grad and ours.is_leaf


def test_frombuffer_warns_once_for_a_read_only_buffer():
    (theirs, their_warnings), (ours, our_warnings) = both(lambda m: m.frombuffer(b"\x01\x02", dtype=m.uint8))
    same(ours, theirs)
    tp.set_warn_always(True)  # the warning is given once per program otherwise
    try:
        _, our_warnings = outcome(lambda: tp.frombuffer(b"\x01\x02", dtype=tp.uint8))
        _, again = outcome(lambda: tp.frombuffer(b"\x01\x02", dtype=tp.uint8))
    finally:
        tp.set_warn_always(False)
    assert our_warnings and again and our_warnings[0][0] is UserWarning
    assert "The given buffer is not writable" in our_warnings[0][1]


@pytest.mark.parametrize("call,match", [
    ("m.frombuffer(b, dtype=m.int32, offset=1)", "buffer length (11 bytes) after offset (1 bytes)"),
    ("m.frombuffer(b, dtype=m.int32, count=4)", "requested buffer length (4 * 4 bytes)"),
    ("m.frombuffer(b, dtype=m.int32, count=0)", "both buffer length (12) and count (0) must not be 0"),
    ("m.frombuffer(b, dtype=m.int32, offset=-1)", "offset (-1 bytes) must be non-negative"),
    ("m.frombuffer(b, dtype=m.int32, offset=12)", "offset (12 bytes)"),
    ("m.frombuffer(b, dtype=m.int64)", "multiple of element size (8)"),
    ("m.frombuffer(bytearray(), dtype=m.uint8)", "both buffer length (0)"),
    ("m.frombuffer([1, 2], dtype=m.uint8)", "buffer protocol"),
    ("m.frombuffer(np.arange(6.0)[::2], dtype=m.float64)", "could not retrieve buffer"),
    ("m.frombuffer(b, dtype='int32')", "dtype"),
    ("m.frombuffer(b, dtype=m.int32, count=1.0)", "count"),
    ("m.frombuffer(b, m.int32)", None),
    ("m.frombuffer(b)", None),
    ("m.frombuffer(bytearray(8), dtype=m.int32, requires_grad=True)", None),
])
def test_frombuffer_errors(call, match):
    raises_like_torch(lambda m: eval(call, {"m": m, "b": int32_bytes(), "np": np}), match)


# ---------------------------------------------------------------------------------------------
# asarray

def asarray_outcome(m, make_obj, kwargs):
    """What asarray did: aliased (the same object), requires_grad, leaf, dtype, device; and whether obj's
    own requires_grad changed."""
    obj = make_obj(m)
    kwargs = {k: getattr(m, v) if k == "dtype" else v for k, v in kwargs.items()}
    result = m.asarray(obj, **kwargs)
    return (result is obj, result.requires_grad, result.is_leaf, result.grad_fn is not None, dtype_name(result),
            result.device.type, obj.requires_grad)


TENSORS = {
    "leaf_requiring_grad": lambda m: m.arange(3.0).requires_grad_(),
    "non_leaf": lambda m: m.arange(3.0).requires_grad_() * 2,
    "plain": lambda m: m.arange(3.0),
}
ASARRAY_KWARGS = [{}, {"dtype": "float64"}, {"device": "meta"}, {"copy": True}, {"copy": True, "dtype": "float64"},
                  {"requires_grad": True, "dtype": "float64"}, {"requires_grad": True, "copy": True},
                  {"requires_grad": False, "dtype": "float64"}, {"copy": False}, {"requires_grad": False},
                  {"requires_grad": True}, {"dtype": "float32"}]


@pytest.mark.parametrize("kwargs", ASARRAY_KWARGS, ids=str)
@pytest.mark.parametrize("kind", TENSORS)
def test_asarray_of_a_tensor(kind, kwargs):
    (theirs, their_warnings), (ours, our_warnings) = both(lambda m: asarray_outcome(m, TENSORS[kind], kwargs))
    assert ours == theirs
    assert [c for c, _ in our_warnings] == [c for c, _ in their_warnings]


def test_asarray_alias_errors():
    raises_like_torch(lambda m: m.asarray(m.arange(3.0), dtype=m.float64, copy=False),
                      "can't alias tensor with dtype 'Float' into dtype 'Double'.")
    raises_like_torch(lambda m: m.asarray(np.arange(3.0), dtype=m.float32, copy=False),
                      "can't alias tensor with dtype 'Double' into dtype 'Float'.")
    raises_like_torch(lambda m: m.asarray([1, 2], copy=False), "can't alias arbitrary sequence into a tensor.")
    raises_like_torch(lambda m: m.asarray(np.arange(6.0)[::-1]), "negative")
    raises_like_torch(lambda m: m.asarray([1], m.float64))
    raises_like_torch(lambda m: m.asarray([1, 2], requires_grad=True))
    raises_like_torch(lambda m: m.asarray("ab"))
    raises_like_torch(lambda m: m.asarray(None))


def test_asarray_shares_numpy_and_buffer_memory():
    for copy in (None, False, True):
        results = []
        for m in LIBS:
            a, b = np.arange(3.0), bytearray(8)
            m.asarray(a, copy=copy).fill_(5)
            m.asarray(b, copy=copy).fill_(1)
            results.append((a.tolist(), bytes(b)))
        assert results[0] == results[1]
    a = np.arange(6.0).reshape(2, 3).T
    ours, theirs = tp.asarray(a), torch.asarray(a)
    assert ours.stride() == theirs.stride()
    same(ours, theirs)


@pytest.mark.parametrize("obj", [[1, 2.5], [1, 2], 3.5, 3, True, [np.float32(1), 2], np.float32(1), np.int16(3),
                                 b"\x01\x02\x03\x04", [], (1, 2), range(3), array.array("i", [1, 2])], ids=repr)
def test_asarray_of_python_objects(obj):
    (theirs, _), (ours, _) = both(lambda m: m.asarray(obj))
    same(ours, theirs)


def test_asarray_dtype_device_and_requires_grad_of_copies():
    same(tp.asarray([1, 2], dtype=tp.float16), torch.asarray([1, 2], dtype=torch.float16))
    same(tp.asarray(np.arange(3), dtype=tp.float32), torch.asarray(np.arange(3), dtype=torch.float32))
    assert tp.asarray([1.0, 2.0], requires_grad=True).requires_grad
    assert tp.asarray(bytearray(8), dtype=tp.int64, device="meta").shape == (1,)
    a = np.arange(3.0)
    a.flags.writeable = False
    (_, their_warnings), (_, our_warnings) = both(lambda m: m.asarray(a))
    assert [c for c, _ in our_warnings] == [c for c, _ in their_warnings] == [UserWarning]
    (_, their_warnings), (_, our_warnings) = both(lambda m: m.asarray(a, copy=True))
    assert our_warnings == their_warnings == []


# ---------------------------------------------------------------------------------------------
# from_file: a tensor over a memory-mapped file

def float_file(directory, name="data.bin", count=10):
    path = directory / name
    np.arange(count, dtype=np.float32).tofile(path)
    return str(path)


FROM_FILE = {
    "size 0 maps nothing": lambda m, f: m.from_file(f),
    "float32": lambda m, f: m.from_file(f, size=10),
    "fewer elements": lambda m, f: m.from_file(f, size=4, dtype=m.float32),
    "float64 bytes": lambda m, f: m.from_file(f, size=5, dtype=m.float64),
    "bfloat16 bytes": lambda m, f: m.from_file(f, size=20, dtype=m.bfloat16),
    "float16 bytes": lambda m, f: m.from_file(f, size=20, dtype=m.float16),
    "int16 bytes": lambda m, f: m.from_file(f, size=20, dtype=m.int16),
    "uint8 bytes": lambda m, f: m.from_file(f, False, 40, dtype=m.uint8),
    "int64 bytes": lambda m, f: m.from_file(f, None, 5, dtype=m.int64),
    "a bytes filename": lambda m, f: m.from_file(f.encode(), size=4),
    "the filename keyword": lambda m, f: m.from_file(filename=f, size=2),
    "size None": lambda m, f: m.from_file(f, size=None),
    "requires_grad": lambda m, f: m.from_file(f, size=4, requires_grad=True),
    "a strided layout and the cpu": lambda m, f: m.from_file(f, size=3, layout=m.strided, device="cpu"),
    "the default dtype": lambda m, f: with_default_dtype(m, m.float64, lambda: m.from_file(f, size=5)),
}


def with_default_dtype(m, dtype, fn):
    saved = m.get_default_dtype()
    m.set_default_dtype(dtype)
    try:
        return fn()
    finally:
        m.set_default_dtype(saved)


@pytest.mark.parametrize("case", list(FROM_FILE))
def test_from_file_reads_the_bytes_as_torch(case, tmp_path):
    f = float_file(tmp_path)
    theirs, ours = FROM_FILE[case](torch, f), FROM_FILE[case](tp, f)
    same(ours, theirs)
    assert ours.requires_grad == theirs.requires_grad and ours.is_leaf and ours.is_contiguous()


FROM_FILE_ERRORS = {
    "a file too small": lambda m, f: m.from_file(f, False, 11),
    "a file too small, shared None": lambda m, f: m.from_file(f, None, 41, dtype=m.uint8),
    "a negative size": lambda m, f: m.from_file(f, size=-1),
    "a negative size, shared": lambda m, f: m.from_file(f, True, size=-1),
    "a missing file": lambda m, f: m.from_file(f + ".missing", size=4),
    "a directory": lambda m, f: m.from_file(os.path.dirname(f), size=2),
    "a directory, shared": lambda m, f: m.from_file(os.path.dirname(f), True, size=2),
    "pinned": lambda m, f: m.from_file(f, size=4, pin_memory=True),
    "pinned and empty": lambda m, f: m.from_file(f, size=0, pin_memory=True),
    "an int shared": lambda m, f: m.from_file(f, 1, size=4),
    "an int filename": lambda m, f: m.from_file(3, size=4),
    "a path filename": lambda m, f: m.from_file(pathlib.Path(f), size=4),
    "an int requires_grad": lambda m, f: m.from_file(f, size=4, requires_grad=1),
    "an int pin_memory": lambda m, f: m.from_file(f, size=4, pin_memory=1),
    "a float size": lambda m, f: m.from_file(f, size=4.0),
    "a bool size": lambda m, f: m.from_file(f, size=True),
    "a string dtype": lambda m, f: m.from_file(f, size=1, dtype="float32"),
    "an int layout": lambda m, f: m.from_file(f, size=1, layout=1),
    "four positional": lambda m, f: m.from_file(f, True, 1, m.float32),
    "an unknown keyword": lambda m, f: m.from_file(f, foo=1),
}
@pytest.mark.parametrize("case", list(FROM_FILE_ERRORS))
def test_from_file_errors_as_torch(case, tmp_path):
    f = float_file(tmp_path)
    (theirs, _), (ours, _) = both(lambda m: FROM_FILE_ERRORS[case](m, f))
    assert isinstance(theirs, tuple) and isinstance(ours, tuple) and ours[0] is theirs[0], (theirs, ours)
    assert ours[1] == theirs[1]


def test_from_file_refuses_other_devices_and_layouts(tmp_path):
    f = float_file(tmp_path)
    with pytest.raises(RuntimeError, match="built without CUDA"):
        tp.from_file(f, size=1, device="cuda")
    for m in LIBS:
        with pytest.raises(NotImplementedError):
            m.from_file(f, size=1, device="meta")
        with pytest.raises(NotImplementedError):
            m.from_file(f, size=1, layout=m.sparse_coo)


def test_from_file_shared_writes_reach_the_file(tmp_path):
    results = []
    for m in LIBS:
        f = float_file(tmp_path, f"{m.__name__}.bin", count=4)
        t = m.from_file(f, True, size=4)
        t[0] = 100  # reaches the file
        with open(f, "r+b") as file:  # and the file's changes reach the tensor
            file.seek(4)
            file.write(np.float32(7).tobytes())
        other = m.from_file(f, True, size=4)  # two shared mappings see each other's writes
        other[2] = 42
        results.append((t.tolist(), np.fromfile(f, dtype=np.float32).tolist()))
        del t, other
    assert results[0] == results[1] == ([100.0, 7.0, 42.0, 3.0], [100.0, 7.0, 42.0, 3.0])


def test_from_file_private_writes_stay_in_the_tensor(tmp_path):
    results = []
    for m in LIBS:
        f = float_file(tmp_path, f"{m.__name__}.bin", count=4)
        t = m.from_file(f, False, size=4)
        t[1] = -1
        results.append((t.tolist(), np.fromfile(f, dtype=np.float32).tolist()))
    assert results[0] == results[1] == ([0.0, -1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0])


def test_from_file_shared_creates_and_grows_the_file(tmp_path):
    results = []
    for m in LIBS:
        grown = float_file(tmp_path, f"{m.__name__}.bin", count=4)
        created = str(tmp_path / f"{m.__name__}.new")
        t = m.from_file(grown, True, size=8)
        u = m.from_file(created, True, size=3, dtype=m.int16)
        nothing = m.from_file(str(tmp_path / f"{m.__name__}.none"), True, size=0)
        results.append((t.tolist(), os.path.getsize(grown), u.tolist(), os.path.getsize(created),
                        os.path.exists(str(tmp_path / f"{m.__name__}.none")), nothing.shape == (0,)))
    assert results[0] == results[1] == ([0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0], 32, [0, 0, 0], 6, False, True)


# ---------------------------------------------------------------------------------------------
# Global state

@contextlib.contextmanager
def restored(*pairs):
    """Runs the block, then calls each (setter, value) in both libraries, restoring their state."""
    try:
        yield
    finally:
        for setter, value in pairs:
            for m in LIBS:
                getattr(m, setter)(value)


def use_deterministic_algorithms(m):
    """m's use_deterministic_algorithms. torch's first imports its compiler's config (seconds), to set a
    flag of its own beside the one it reads back: its C function is the same switch without that."""
    return torch._C._set_deterministic_algorithms if m is torch else tp.use_deterministic_algorithms


def test_deterministic_algorithms_state():
    def session(m):
        use = use_deterministic_algorithms(m)
        read = lambda: (m.are_deterministic_algorithms_enabled(), m.is_deterministic_algorithms_warn_only_enabled(),
                        m.get_deterministic_debug_mode())
        steps = [read()]
        for call in [lambda: use(True), lambda: use(True, warn_only=True), lambda: use(False, warn_only=True),
                     lambda: use(mode=True),
                     *[lambda v=v: m.set_deterministic_debug_mode(v)
                       for v in ("warn", "error", "default", 1, 2, 0, True)]]:
            call()
            steps.append(read())
        return steps
    with restored(("set_deterministic_debug_mode", 0)):
        assert session(tp) == session(torch)
    for call, match in [("use(1)", "must be bool, not int"), ("use(True, warn_only=1)", "warn_only"),
                        ("m.set_deterministic_debug_mode(3)", "expected 0, 1, or 2, but got 3"),
                        ("m.set_deterministic_debug_mode('WARN')", "but got WARN"),
                        ("m.set_deterministic_debug_mode(1.0)",
                         "debug_mode must be str or int, but got <class 'float'>")]:
        raises_like_torch(lambda m: eval(call, {"m": m, "use": use_deterministic_algorithms(m)}), match)
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        tp.use_deterministic_algorithms(True, True)  # warn_only is keyword-only, as in torch's signature


def test_float32_matmul_precision_state():
    with restored(("set_float32_matmul_precision", "highest")):
        for value in ("high", "low", "HIGH", "medium", "highest"):
            (theirs, their_warnings), (ours, our_warnings) = both(
                lambda m: (m.set_float32_matmul_precision(value), m.get_float32_matmul_precision()))
            assert ours == theirs and our_warnings == their_warnings
    raises_like_torch(lambda m: m.set_float32_matmul_precision(1), "expects a str, but got int")


def test_warn_always_and_flush_denormal():
    with restored(("set_warn_always", False)):
        for m in LIBS:
            assert m.is_warn_always_enabled() is False
            m.set_warn_always(True)
            assert m.is_warn_always_enabled() is True
    raises_like_torch(lambda m: m.set_warn_always(1), "expects a bool, but got int")
    raises_like_torch(lambda m: m.set_flush_denormal(1), "flush_denormal expects a bool, but got int")
    assert tp.set_flush_denormal(True) is False  # tensorplay cannot switch it: "unsupported", as PyTorch says it


def test_interop_threads_are_set_once(monkeypatch):
    """The number may be set once per program, and before the inter-op pool starts: no test starts
    torch's, so its first set here is its first in the program; tensorplay's state is made fresh."""
    from tensorplay._composites import state
    monkeypatch.setattr(state, "_interop_threads", None)

    def session(m):
        out = [m.get_num_interop_threads() > 0, m.init_num_threads()]
        for value in (0, 2.0, True, 3, 3):
            out.append(outcome(lambda: m.set_num_interop_threads(value))[0])
        return out + [m.get_num_interop_threads()]
    assert session(tp) == session(torch)


def test_set_default_tensor_type():
    try:
        for value in ("torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor", "torch.FloatTensor"):
            for m in LIBS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m.set_default_tensor_type(value)
            assert dtype_name(tp.tensor([1.5])) == dtype_name(torch.tensor([1.5]))
        for value, match in [("torch.LongTensor", "only floating-point types"), ("torch.Foo", "has no attribute 'Foo'"),
                             ("float", "No module named 'float'"), (3, "invalid type object"),
                             ("torch.cuda.FloatTensor", "not available")]:
            raises_like_torch(lambda m: m.set_default_tensor_type(value), match)
        raises_like_torch(lambda m: m.set_default_tensor_type(m.float64), "invalid type object")
    finally:
        for m in LIBS:
            m.set_default_dtype(m.float32)
    with restored(("set_warn_always", False)):
        for m in LIBS:  # the deprecation warning is given once per program otherwise
            m.set_warn_always(True)
        (_, their_warnings), (_, our_warnings) = both(lambda m: m.set_default_tensor_type("torch.FloatTensor"))
    assert our_warnings == their_warnings and our_warnings[0][0] is UserWarning


# ---------------------------------------------------------------------------------------------
# Predicates

def test_predicates_match_torch():
    def predicates(m):
        x = m.ones(2, 3)
        return [m.get_device(x), x.get_device(), m.ones(1, device="meta").get_device(),
                m.is_nonzero(m.tensor([1.0])), m.is_nonzero(m.tensor(0)), m.tensor([False]).is_nonzero(),
                m.is_nonzero(m.tensor(math.nan)), m.is_nonzero(m.tensor(-0.0)),
                m.is_same_size(x, m.ones(2, 3)), m.is_same_size(x, m.ones(3, 2)),
                x.is_same_size(m.ones(2, 3, dtype=m.int8)),
                [m.is_signed(m.ones(1, dtype=getattr(m, d))) for d in
                 ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool")],
                x.is_signed(), m.is_inference(x), m.is_distributed(x), x.is_distributed(), m.is_vulkan_available(),
                m.is_storage(x), m.is_storage(3)]
    assert predicates(tp) == predicates(torch)
    with tp.inference_mode():
        assert tp.is_inference(tp.ones(1))


@pytest.mark.parametrize("call,match", [
    ("m.is_nonzero(m.ones(2))", "more than one value is ambiguous"),
    ("m.is_nonzero(m.ones(0))", "with no values is ambiguous"),
    ("m.is_nonzero(m.ones(1, device='meta'))", "meta"),
    ("m.is_nonzero(1)", "must be Tensor, not int"),
    ("m.is_same_size(m.ones(1), 3)", "argument 'other' (position 2) must be Tensor, not int"),
    ("m.get_device(3)", "must be Tensor, not int"),
    ("m.is_distributed(3)", "must be Tensor, not int"),
    ("m.is_signed(3)", None),
    ("m.is_inference(3)", None),
])
def test_predicate_errors(call, match):
    raises_like_torch(lambda m: eval(call, {"m": m}), match)


@pytest.mark.parametrize("obj", ["ones", "long", "bfloat16", "bool", "ndarray", 3, "a", None, "Linear", "type"])
def test_typename(obj):
    def name(m):
        value = {"ones": m.ones(2), "long": m.ones(2, dtype=m.int64), "bfloat16": m.ones(2, dtype=m.bfloat16),
                 "bool": m.ones(2, dtype=m.bool), "ndarray": np.ones(2), "Linear": m.nn.Linear(2, 2),
                 "type": int}.get(obj, obj)
        return m.typename(value).replace("tensorplay", "torch")
    assert name(tp) == name(torch)


# ---------------------------------------------------------------------------------------------
# The legacy autocast state functions

LEGACY_READS = ["get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "get_autocast_ipu_dtype", "get_autocast_xla_dtype",
                "is_autocast_cpu_enabled", "is_autocast_ipu_enabled", "is_autocast_xla_enabled"]


def test_legacy_autocast_state_and_warnings():
    def session(m):
        read = lambda: [str(getattr(m, n)()).split(".")[-1] for n in LEGACY_READS] + [
            m.is_autocast_enabled("cpu"), str(m.get_autocast_dtype("cpu")).split(".")[-1],
            str(m.get_autocast_dtype("cuda")).split(".")[-1]]
        steps = [read()]
        for call in [lambda: m.set_autocast_cpu_dtype(m.float16), lambda: m.set_autocast_cpu_enabled(True),
                     lambda: m.set_autocast_gpu_dtype(m.bfloat16), lambda: m.set_autocast_ipu_dtype(m.bfloat16),
                     lambda: m.set_autocast_ipu_enabled(True), lambda: m.set_autocast_xla_dtype(m.float16),
                     lambda: m.set_autocast_xla_enabled(True)]:
            call()
            steps.append(read())
        return steps
    defaults = [("set_autocast_cpu_enabled", False), ("set_autocast_ipu_enabled", False),
                ("set_autocast_xla_enabled", False)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            assert outcome(lambda: session(tp)) == outcome(lambda: session(torch))
        finally:
            for m in LIBS:
                for setter, value in defaults:
                    getattr(m, setter)(value)
                m.set_autocast_cpu_dtype(m.bfloat16)
                m.set_autocast_gpu_dtype(m.float16)
                m.set_autocast_ipu_dtype(m.float16)
                m.set_autocast_xla_dtype(m.bfloat16)
    (_, their_warnings), (_, our_warnings) = both(lambda m: [getattr(m, n)() for n in LEGACY_READS])
    assert our_warnings == their_warnings and {c for c, _ in our_warnings} == {DeprecationWarning}
    raises_like_torch(lambda m: m.set_autocast_cpu_dtype("a"), "dtype must be a torch.dtype (got str)")
    raises_like_torch(lambda m: m.set_autocast_cpu_enabled(1), "enabled must be a bool (got int)")


# ---------------------------------------------------------------------------------------------
# torch.cond, eagerly (with a tensor pred torch compiles the branches: its errors about them are its
# compiler's, RuntimeErrors all; tensorplay's are RuntimeErrors that say what the branch did)

def four(m):
    return m.arange(4.0)


COND = {
    "a bool": lambda m: m.cond(True, lambda a: a + 1, lambda a: a - 1, (four(m),)),
    "an int": lambda m: m.cond(0, lambda a: a + 1, lambda a: a - 1, (four(m),)),
    "a float, a list of operands": lambda m: m.cond(0.5, lambda a: a * 2, lambda a: a / 2, [four(m)]),
    "a NumPy float": lambda m: m.cond(np.float64(0.0), lambda: 1, lambda: 2),
    "a constant pred checks nothing": lambda m: m.cond(True, lambda a, b: (a, b), None, (1, "s")),
    "a constant pred may alias": lambda m: (lambda x: m.cond(True, lambda a: a, None, (x,)) is x)(four(m)),
    "a bool tensor": lambda m: m.cond(m.tensor(True), lambda a: a + 1, lambda a: a - 1, (four(m),)),
    "a float tensor": lambda m: m.cond(m.tensor(0.0), lambda a: a + 1, lambda a: a - 1, (four(m),)),
    "a one-element 2-D tensor": lambda m: m.cond(m.tensor([[False]]), lambda a: a + 1, lambda a: a - 1, (four(m),)),
    "a NaN tensor is true": lambda m: m.cond(m.tensor(math.nan), lambda a: a + 1, lambda a: a - 1, (four(m),)),
    "tuple, list and dict outputs with ints": lambda m: m.cond(
        m.tensor([2]), lambda a: ((a + 1, 3), [a * 2], {"k": a - 1}), lambda a: ((a + 0, 4), [a * 1], {"k": a / 1}),
        (four(m),)),
    "nested operands": lambda m: m.cond(m.tensor(True), lambda a, b: a + b[0] + b[1]["z"], lambda a, b: a * 1,
                                        (four(m), [four(m), {"z": four(m)}])),
    "no operands": lambda m: m.cond(m.tensor(False), lambda: m.ones(2), lambda: m.zeros(2)),
    "no outputs": lambda m: m.cond(m.tensor(True), lambda a: (), lambda a: (), (four(m),)),
}


@pytest.mark.parametrize("case", list(COND))
def test_cond_runs_the_branch_pred_picks(case):
    (theirs, _), (ours, _) = both(COND[case])
    assert plain(ours) == plain(theirs)


def plain(value):
    """value with its tensors as (dtype, values) and its containers as lists (and dicts), tagged by kind."""
    if isinstance(value, (tp.Tensor, torch.Tensor)):
        return "tensor", str(value.dtype).split(".")[-1], value.tolist()
    if isinstance(value, dict):
        return "dict", {k: plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [plain(v) for v in value]
    return value


COND_ERRORS = {
    "a string pred": lambda m: m.cond("yes", lambda a: a, lambda a: a, (four(m),)),
    "a None pred": lambda m: m.cond(None, lambda a: a, lambda a: a, (four(m),)),
    "a NumPy int pred": lambda m: m.cond(np.int64(0), lambda: 1, lambda: 2),
    "a two-element pred": lambda m: m.cond(m.tensor([True, False]), lambda a: a, lambda a: a, (four(m),)),
    "an empty pred": lambda m: m.cond(m.tensor([], dtype=m.bool), lambda a: a, lambda a: a, (four(m),)),
    "a branch that is not callable": lambda m: m.cond(m.tensor(True), 1, lambda a: a, (four(m),)),
    "a number operand": lambda m: m.cond(m.tensor(True), lambda a: a, lambda a: a, (1,)),
    "a None operand": lambda m: m.cond(m.tensor(True), lambda a, b: a + 1, lambda a, b: a, (four(m), None)),
    "a dict of operands": lambda m: m.cond(m.tensor(True), lambda a: a, lambda a: a, {"a": four(m)}),
    "a tensor of operands": lambda m: m.cond(m.tensor(True), lambda a: a, lambda a: a, four(m)),
    "a meta pred": lambda m: m.cond(m.empty((), device="meta", dtype=m.bool), lambda a: a + 1, lambda a: a - 1,
                                    (four(m),)),
}


@pytest.mark.parametrize("case", list(COND_ERRORS))
def test_cond_refuses_a_bad_pred_or_operands_as_torch(case):
    (theirs, _), (ours, _) = both(COND_ERRORS[case])
    assert ours == (theirs[0], theirs[1].replace("torch.", "tensorplay."))


def test_cond_refuses_what_compiling_the_branch_refuses():
    refused = {
        "None": (lambda a: None, True), "a float": (lambda a: 1.5, True), "a bool": (lambda a: True, True),
        "the operand": (lambda a: a, False), "a view of it": (lambda a: a[:2], False),
        "one tensor twice": (lambda a: (lambda c: (c, c))(a + 1), False),
        "a change in place": (lambda a: (a.add_(1), a + 0)[1], False),
    }
    for name, (branch, even_without_grad) in refused.items():
        for m in LIBS:
            with pytest.raises(RuntimeError):
                m.cond(m.tensor(True), branch, branch, (four(m),))
            with m.no_grad():
                if even_without_grad:
                    with pytest.raises(RuntimeError):
                        m.cond(m.tensor(True), branch, branch, (four(m),))
                else:  # where no gradient is recorded, branches may change and return their operands
                    x = four(m)
                    ours = m.cond(m.tensor(True), branch, branch, (x,))
                    assert not isinstance(ours, tuple) or ours[0] is ours[1]
    with pytest.raises(RuntimeError, match="cond: a branch's outputs must be tensors or ints, but got NoneType"):
        tp.cond(tp.tensor(True), lambda a: None, lambda a: None, (four(tp),))
    with pytest.raises(RuntimeError, match="cond: a branch returned an operand"):
        tp.cond(tp.tensor(True), lambda a: a, lambda a: a, (four(tp),))
    with pytest.raises(RuntimeError, match="cond: a branch changed an operand in place"):
        tp.cond(tp.tensor(True), lambda a: a.mul_(2) * 1, lambda a: a, (four(tp),))


def test_cond_differentiates_the_branch_taken():
    grads = []
    for m in LIBS:
        x = m.ones(3, requires_grad=True)
        for pred in (m.tensor(True), m.tensor(False), True):
            m.cond(pred, lambda a: (a * 3).sum(), lambda a: (a * a * 2).sum(), (x,)).backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [10.0, 10.0, 10.0]


def test_thread_safe_generator_is_none_outside_thread_workers():
    assert tp.thread_safe_generator() is None and torch.thread_safe_generator() is None
    assert tp.thread_safe_generator is tp.random.thread_safe_generator


# ---------------------------------------------------------------------------------------------
# Printing

PRINTED = [
    lambda m: m.arange(12.0).reshape(3, 4) / 7,
    lambda m: m.arange(2000.0).reshape(40, 50),
    lambda m: m.tensor([1e-5, 1.0, 3e3]),
    lambda m: m.tensor([1.5, math.nan, math.inf, -math.inf]),
    lambda m: m.arange(30),
    lambda m: m.tensor(3.14159),
    lambda m: m.tensor([True, False]),
    lambda m: m.arange(100).reshape(10, 10),
]
PRINT_OPTIONS = [{}, {"precision": 2}, {"precision": 8}, {"threshold": 5}, {"edgeitems": 1, "threshold": 10},
                 {"linewidth": 40}, {"profile": "short"}, {"profile": "full"}, {"sci_mode": True}, {"sci_mode": False},
                 {"profile": "short", "precision": 6}, {"edgeitems": 0, "threshold": 5}]


@pytest.mark.parametrize("options", PRINT_OPTIONS, ids=str)
def test_set_printoptions_prints_as_torch(options):
    try:
        for m in LIBS:
            m.set_printoptions(**options)
        for make in PRINTED:
            assert repr(make(tp)) == repr(make(torch)).replace("torch.", "tensorplay.")
        assert tp._tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    finally:
        for m in LIBS:
            m.set_printoptions(profile="default")


def test_printoptions_context_restores():
    with tp._tensor_str.printoptions(precision=1, sci_mode=True):
        assert repr(tp.tensor([1.25])) == "tensor([1.2e+00])"
    assert repr(tp.tensor([1.25])) == "tensor([1.2500])"

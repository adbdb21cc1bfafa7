"""Tensors, parameters, modules, Sizes, dtypes, devices and generators pickle and deep-copy as
PyTorch's do: values, dtypes and geometry survive; requires_grad, gradients and attributes too; views
pickled or copied together share memory again; only graph leaves deep-copy."""

import copy
import multiprocessing
import pickle

import numpy as np
import pytest
import torch

import tensorplay as tp

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def round_trip(obj, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_values_dtypes_and_geometry_survive(dtype, protocol):
    t = tp.arange(24).reshape(2, 3, 4).to(getattr(tp, dtype))
    for view in (t, t.transpose(0, 2), t[1, ::2], t[0, 0, 0], t[:, :0]):
        back = round_trip(view, protocol)
        assert back.dtype == view.dtype and back.shape == view.shape and back.stride() == view.stride()
        assert back.tolist() == view.tolist()


def test_views_pickled_together_share_memory_again():
    base = tp.arange(12.0)
    rows, column = base.view(3, 4), base.view(3, 4)[:, 1]
    base2, rows2, column2 = round_trip((base, rows, column))
    base2[5] = 100.0
    assert rows2[1, 1].item() == 100.0 and column2[1].item() == 100.0
    alone = round_trip(column)  # pickled alone, a view still brings its whole storage
    assert alone.tolist() == [1.0, 5.0, 9.0] and alone.storage_offset() == 1


def test_requires_grad_attributes_and_parameters():
    x = tp.ones(3, requires_grad=True)
    x.note = "kept"
    back = round_trip(x)
    assert back.requires_grad and back.is_leaf and back.note == "kept"
    p = tp.nn.Parameter(tp.ones(2), requires_grad=False)
    assert isinstance(round_trip(p), tp.nn.Parameter) and not round_trip(p).requires_grad


def test_modules_with_tied_weights_pickle_and_deep_copy():
    shared = tp.nn.Linear(2, 2)
    net = tp.nn.Sequential(shared, tp.nn.ReLU(), shared)
    for copied in (round_trip(net), copy.deepcopy(net)):
        assert copied[0].weight is copied[2].weight
        assert copied[0].weight.tolist() == shared.weight.tolist()
        assert copied[0].weight.data_ptr() != shared.weight.data_ptr()
        x = tp.ones(1, 2)
        assert copied(x).tolist() == net(x).tolist()


def test_deepcopy_follows_pytorch():
    x = tp.arange(4.0, requires_grad=True)
    x.grad = tp.full((4,), 2.0)
    x.tag = ["a"]
    y = copy.deepcopy(x)
    assert y.requires_grad and y.is_leaf and y.grad.tolist() == [2.0] * 4 and y.tag == ["a"] and y.tag is not x.tag
    assert y.data_ptr() != x.data_ptr()
    base = tp.arange(6.0)
    a, b = copy.deepcopy((base, base[2:]))
    a[3] = -1.0
    assert b[1].item() == -1.0 and base[3].item() == 3.0
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph leaves\)"):
        copy.deepcopy(x * 2)
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph leaves\)"):
        copy.deepcopy(torch.arange(4.0, requires_grad=True) * 2)


def test_small_objects():
    assert round_trip(tp.Size([2, 3])) == (2, 3) and isinstance(round_trip(tp.Size([2, 3])), tp.Size)
    assert round_trip(tp.bfloat16) is tp.bfloat16 and round_trip(tp.complex64) is tp.complex64
    assert round_trip(tp.device("cpu")) == tp.device("cpu")
    meta = round_trip(tp.empty(2, 3, device="meta"))
    assert meta.is_meta and meta.shape == (2, 3)


def test_generators_keep_their_state():
    g = tp.Generator().manual_seed(11)
    tp.rand(3, generator=g)
    copied = round_trip(g)
    assert tp.rand(4, generator=copied).tolist() == tp.rand(4, generator=g).tolist()
    assert copied.initial_seed() == 11


def _double(t):
    return t * 2


def test_tensors_cross_to_a_spawned_process():
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        result = pool.map(_double, [tp.arange(3.0), tp.ones(2, dtype=tp.bfloat16)])
    assert result[0].tolist() == [0.0, 2.0, 4.0] and result[1].dtype == tp.bfloat16


def test_numpy_arrays_inside_pickles_are_independent_copies():
    t = tp.arange(3.0)
    back = round_trip(t)
    back[0] = 7.0
    assert t[0].item() == 0.0 and np.asarray(back.numpy()).flags.writeable


def test_a_shallow_copy_shares_memory_as_in_pytorch():
    for lib in (tp, torch):
        t = lib.arange(4.0, requires_grad=True)
        shallow = copy.copy(t)
        with lib.no_grad():
            shallow[0] = 9.0
        assert t[0].item() == 9.0 and shallow.requires_grad and shallow is not t

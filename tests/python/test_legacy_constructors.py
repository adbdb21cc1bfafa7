"""torch.Tensor(...) and the typed tensor classes (FloatTensor, LongTensor, ...) against torch."""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same

TYPED = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]

CALLS = [((), {}), ((2, 3), {}), ((0,), {}), (([[1, 2], [3, 4]],), {}), (([1.7, -2.2],), {}), (((1, 0, 1),), {}),
         ((np.arange(3),), {}), ((), {"size": (2, 3)}), (([1, 2],), {"device": "cpu"})]


def dtype_name(dtype):
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("cls", ["Tensor"] + TYPED)
@pytest.mark.parametrize("args,kwargs", CALLS, ids=lambda v: repr(v)[:30])
def test_constructs_what_torch_constructs(cls, args, kwargs):
    try:
        expected = getattr(torch, cls)(*args, **kwargs)
    except RuntimeError:  # a value the dtype cannot hold (-2.2 as uint8)
        with pytest.raises(RuntimeError):
            getattr(tensorplay, cls)(*args, **kwargs)
        return
    got = getattr(tensorplay, cls)(*args, **kwargs)
    assert got.shape == expected.shape
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)
    if args and not isinstance(args[0], int) and "size" not in kwargs:  # data, not uninitialised sizes
        assert_same(got, expected)


def test_sizes_object_and_default_dtype():
    assert tensorplay.Tensor(tensorplay.Size([2, 4])).shape == (2, 4)
    tensorplay.set_default_dtype(tensorplay.float64)
    try:
        assert tensorplay.Tensor(2).dtype == tensorplay.float64
    finally:
        tensorplay.set_default_dtype(tensorplay.float32)


def test_a_tensor_argument_shares_its_data():
    x = tensorplay.ones(3)
    alias = tensorplay.Tensor(x)
    alias[0] = 5
    assert x[0].item() == 5


@pytest.mark.parametrize("cls", TYPED)
def test_isinstance_answers_by_dtype(cls):
    for dtype in ("float32", "float64", "int64", "bool", "bfloat16"):
        t, x = torch.zeros(2, dtype=getattr(torch, dtype)), tensorplay.zeros(2, dtype=getattr(tensorplay, dtype))
        assert isinstance(x, getattr(tensorplay, cls)) == isinstance(t, getattr(torch, cls)), dtype
    assert getattr(tensorplay, cls).dtype == getattr(tensorplay, dtype_name(getattr(torch, cls).dtype))


def test_subclasses_and_parameters_construct_as_before():
    class Mine(tensorplay.Tensor):
        pass

    mine = Mine(2, 3)
    assert type(mine) is Mine and mine.shape == (2, 3)
    p = tensorplay.nn.Parameter(tensorplay.ones(2))
    assert type(p) is tensorplay.nn.Parameter and p.requires_grad


@pytest.mark.parametrize("args", [(2, "a"), (-1,), ("abc",)], ids=repr)
def test_bad_arguments_raise_as_in_torch(args):
    with pytest.raises(Exception) as expected:
        torch.Tensor(*args)
    with pytest.raises(expected.type):
        tensorplay.Tensor(*args)

"""DLPack both ways: tensors shared without a copy with NumPy and PyTorch, through __dlpack__ and
through capsules, for every dtype the other library has (bfloat16 with PyTorch), and strided views."""

import gc

import numpy as np
import pytest
import torch
import torch.utils.dlpack

import tensorplay as tp

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bfloat16", "complex64",
          "complex128"]


def values(dtype):
    return torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_reads_a_tensorplay_tensor_in_place(dtype):
    ours = tp.from_dlpack(values(dtype).clone())
    theirs = torch.from_dlpack(ours)
    assert theirs.dtype == getattr(torch, dtype) and theirs.tolist() == ours.tolist()
    assert theirs.data_ptr() == ours.data_ptr()


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorplay_reads_a_torch_tensor_in_place(dtype):
    theirs = values(dtype)
    ours = tp.from_dlpack(theirs)
    assert ours.dtype == getattr(tp, dtype) and ours.tolist() == theirs.tolist()
    assert ours.data_ptr() == theirs.data_ptr()


@pytest.mark.parametrize("view", [lambda t: t.t(), lambda t: t[1:, ::2], lambda t: t[0, 0], lambda t: t[:0]],
                         ids=["transposed", "sliced", "0dim", "empty"])
def test_views_keep_their_strides(view):
    ours = view(tp.arange(12.0).reshape(3, 4))
    theirs = torch.from_dlpack(ours)
    assert tuple(theirs.shape) == tuple(ours.shape) and tuple(theirs.stride()) == tuple(ours.stride())
    assert theirs.tolist() == ours.tolist()
    back = tp.from_dlpack(view(torch.arange(12.0).reshape(3, 4)))
    assert tuple(back.stride()) == tuple(ours.stride()) and back.tolist() == ours.tolist()


def test_writes_reach_the_other_library_both_ways():
    ours = tp.zeros(3)
    array = np.from_dlpack(ours)  # read-only: NumPy's rule for DLPack's unversioned capsules
    ours[0] = 5.0
    assert array.tolist() == [5.0, 0.0, 0.0]
    theirs = torch.from_dlpack(ours)
    theirs[1] = 6.0
    assert ours.tolist() == [5.0, 6.0, 0.0]
    source = np.zeros(2)
    shared = tp.from_dlpack(source)
    shared.add_(1)
    assert source.tolist() == [1.0, 1.0]


def test_capsules_travel_both_ways():
    capsule = tp.utils.dlpack.to_dlpack(tp.tensor([1.0, 2.0]))
    assert torch.utils.dlpack.from_dlpack(capsule).tolist() == [1.0, 2.0]
    assert tp.from_dlpack(torch.utils.dlpack.to_dlpack(torch.tensor([3, 4]))).tolist() == [3, 4]


def test_the_shared_memory_outlives_its_producer():
    consumer = torch.from_dlpack(tp.arange(4.0) * 2)
    imported = tp.from_dlpack(torch.arange(4.0) * 3)
    gc.collect()
    assert consumer.tolist() == [0.0, 2.0, 4.0, 6.0] and imported.tolist() == [0.0, 3.0, 6.0, 9.0]


def test_device_and_errors():
    assert tp.ones(1).__dlpack_device__() == (1, 0)
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        tp.ones(1, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="from_dlpack"):
        tp.from_dlpack(object())
    with pytest.raises(TypeError, match="from_dlpack"):
        tp.from_dlpack(torch.ones(2, dtype=torch.uint16))

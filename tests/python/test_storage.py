"""Storages as PyTorch shows them: untyped_storage() (bytes shared by every view), the deprecated
typed storage(), UntypedStorage's own construction and writes, Tensor.set_ in each of its forms,
and the deprecated non-inplace resize. Each case runs with both libraries and must agree."""

import warnings

import pytest
import torch

import tensorplay as tp
from shared import LIBS


@pytest.mark.parametrize("m", LIBS)
def test_views_share_one_untyped_storage(m):
    t = m.arange(4, dtype=m.int16)
    storage = t.untyped_storage()
    assert (len(storage), storage.nbytes(), storage.size(), storage.element_size()) == (8, 8, 8, 1)
    assert storage.tolist() == [0, 0, 1, 0, 2, 0, 3, 0] and storage[2] == 1
    assert t[1:].untyped_storage().data_ptr() == storage.data_ptr() == t.data_ptr()
    assert m.arange(4, dtype=m.int16).untyped_storage().data_ptr() != storage.data_ptr()
    assert not storage.is_shared() and str(storage.device) == "cpu"


def test_storages_print_as_torchs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in (lambda m: m.tensor([1, 2], dtype=m.int16).untyped_storage(),
                     lambda m: m.tensor([1.5, 2.0]).storage(), lambda m: m.UntypedStorage(0)):
            assert repr(call(tp)) == repr(call(torch))


def test_typed_storage_warns_once_per_process(monkeypatch):
    """As PyTorch's, which is why torch itself cannot be asked here: an earlier test may have used
    its warning up."""
    from tensorplay import storage
    monkeypatch.setattr(storage, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tp.ones(1).storage()
        tp.ones(1).storage()
    assert [str(w.message)[:35] for w in caught] == ["TypedStorage is deprecated. It will"]


@pytest.mark.parametrize("m", LIBS)
def test_typed_storage_counts_elements(m):
    t = m.tensor([1.5, -2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        storage = t.storage()
    assert (storage.size(), len(storage), storage.element_size(), storage.nbytes()) == (3, 3, 4, 12)
    assert storage.tolist() == [1.5, -2.0, 3.0] and storage[1] == -2.0 and storage.dtype == m.float32
    storage[0] = 7.0
    assert t.tolist() == [7.0, -2.0, 3.0]
    assert type(storage.untyped()) is m.UntypedStorage


@pytest.mark.parametrize("m", LIBS)
def test_untyped_storage_writes(m):
    storage = m.UntypedStorage([1, 2, 3])
    assert storage.tolist() == [1, 2, 3]
    storage.fill_(7)
    storage[0] = 3
    assert storage.tolist() == [3, 7, 7]
    copy = m.UntypedStorage(3).copy_(storage)
    assert copy.tolist() == [3, 7, 7] and copy.data_ptr() != storage.data_ptr()
    assert storage.clone().tolist() == [3, 7, 7] and len(m.UntypedStorage(5)) == 5


@pytest.mark.parametrize("m", LIBS)
def test_set_shares_memory_in_each_form(m):
    source = m.arange(4, dtype=m.int16)
    storage = source.untyped_storage()
    window = m.empty(0, dtype=m.int16).set_(storage, 1, (2,))
    assert window.tolist() == [1, 2] and window.storage_offset() == 1
    assert m.empty(0, dtype=m.int16).set_(storage).tolist() == [0, 1, 2, 3]
    strided = m.empty(0, dtype=m.int16).set_(storage, 0, (2, 2), (1, 2))
    assert strided.tolist() == [[0, 2], [1, 3]]
    alias = m.empty(0, dtype=m.int16).set_(source[1:])
    alias[0] = 9
    assert source.tolist() == [0, 9, 2, 3] and alias.storage_offset() == 1
    emptied = m.ones(3).set_()
    assert tuple(emptied.shape) == (0,)


@pytest.mark.parametrize("m", LIBS)
def test_set_errors(m):
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        m.empty(0).set_(m.arange(3))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        m.ones(2, requires_grad=True).set_(m.zeros(2))


def test_set_beyond_the_storage_is_refused():
    """PyTorch grows the storage; tensorplay's storages have a fixed size, so it refuses."""
    with pytest.raises(RuntimeError, match=r"set_.*out of bounds for storage of size 8"):
        tp.empty(0).set_(tp.arange(2.0).untyped_storage(), 0, (10,))


@pytest.mark.parametrize("m", LIBS)
def test_non_inplace_resize_is_deprecated_and_keeps_the_element_count(m):
    t = m.arange(4.0)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert t.resize(2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert tuple(t.resize_as(m.ones(4, 1)).shape) == (4, 1)
    with pytest.raises(RuntimeError, match="requested resize to 3 \\(3 elements in total\\)"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.resize(3)

"""The shape composites (tensorplay/_composites/shape.py) where op_table cannot reach: in-place view
ops, out=, keyword forms, warnings, aliasing and errors, each against PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp
from tensorplay._composites import shape as shape_family


def pair(values, dtype="float32"):
    array = np.asarray(values, dtype=dtype)
    return tp.tensor(array), torch.from_numpy(array.copy())


def same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) == isinstance(theirs, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def raises_like(fn):
    """fn(tensorplay) raises the exception class fn(torch) raises, with a message naming the op."""
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(tp)
    return str(ours.value)


ARANGE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

IN_PLACE_VIEWS = [
    ("t_", np.arange(6, dtype=np.float32).reshape(2, 3), ()),
    ("transpose_", ARANGE, (0, 2)),
    ("swapaxes_", ARANGE, (-1, 1)),
    ("swapdims_", ARANGE, (1, 0)),
    ("squeeze_", ARANGE.reshape(1, 2, 1, 12), ()),
    ("squeeze_", ARANGE.reshape(1, 2, 1, 12), (2,)),
    ("unsqueeze_", ARANGE, (1,)),
    ("as_strided_", ARANGE, ((3, 2), (1, 5), 2)),
]


@pytest.mark.parametrize("name,values,args", IN_PLACE_VIEWS, ids=[f"{n}{a}" for n, _, a in IN_PLACE_VIEWS])
def test_in_place_view_ops_change_the_tensor_itself(name, values, args):
    ours, theirs = pair(values)
    version = ours._version
    assert getattr(ours, name)(*args) is ours
    getattr(theirs, name)(*args)
    same(ours, theirs)
    assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
    assert ours._version > version  # tensors saved for backward see the change


@pytest.mark.parametrize("name,values,args", IN_PLACE_VIEWS, ids=[f"{n}{a}" for n, _, a in IN_PLACE_VIEWS])
def test_in_place_view_ops_carry_the_gradient(name, values, args):
    grads = []
    for m in (tp, torch):
        leaf = m.tensor(values.tolist(), requires_grad=True)
        y = leaf * m.arange(values.size, dtype=m.float32).reshape(values.shape)
        getattr(y, name)(*args)
        (y * m.arange(y.numel(), dtype=m.float32).reshape(y.shape)).sum().backward()
        grads.append(leaf.grad)
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy())


def test_in_place_view_op_on_a_leaf_that_requires_grad():
    message = raises_like(lambda m: m.ones(2, 3, requires_grad=True).t_())
    assert "t_" in message
    leaf = tp.ones(2, 3, requires_grad=True)
    with tp.no_grad():
        assert leaf.t_() is leaf
    assert tuple(leaf.shape) == (3, 2)


def test_torch_level_as_strided_():
    ours, theirs = pair(np.arange(6))
    assert tp.as_strided_(ours, (2, 2), (1, 2), 1) is ours
    same(ours, torch.as_strided_(theirs, (2, 2), (1, 2), 1))


def test_in_place_view_ops_refuse_bad_dims():
    for name, args in [("transpose_", (0, 2)), ("squeeze_", (5,)), ("unsqueeze_", (4,)), ("swapaxes_", (0, 3))]:
        message = raises_like(lambda m: getattr(m.ones(2, 3), name)(*args))
        assert name.rstrip("_") in message


# ---------------------------------------------------------------------------------------------
# out=

@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack", "column_stack"])
def test_stacks_write_out_in_its_dtype(name):
    outs = []
    for m in (tp, torch):
        out = m.empty(0, dtype=m.float64)
        result = getattr(m, name)([m.ones(2, dtype=m.int64), m.zeros(2, dtype=m.int64)], out=out)
        assert result is out
        outs.append(out)
    same(*outs)
    message = raises_like(lambda m: getattr(m, name)([m.ones(2)], out=m.empty(0, dtype=m.int64)))
    assert name in message


def test_kron_out():
    outs = []
    for m in (tp, torch):
        out = m.empty(0)
        assert m.kron(m.tensor([[1.0, 2.0]]), m.tensor([3.0, 4.0]), out=out) is out
        outs.append(out)
    same(*outs)


@pytest.mark.parametrize("name,args", [("t_copy", ()), ("transpose_copy", (0, 1)), ("expand_copy", ((2, 2, 3),)),
                                       ("diagonal_copy", ()), ("view_copy", ((3, 2),)), ("alias_copy", ()),
                                       ("narrow_copy", (1, 1, 2)), ("unfold_copy", (1, 2, 1)),
                                       ("slice_copy", (1, 0, 3, 2)), ("select_copy", (0, 1))])
def test_copy_forms_write_out_of_their_own_dtype_only(name, args):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    outs = []
    for m in (tp, torch):
        out = m.empty(0)
        assert getattr(m, name)(m.tensor(values), *args, out=out) is out
        outs.append(out)
    same(*outs)
    raises_like(lambda m: getattr(m, name)(m.tensor(values), *args, out=m.empty(0, dtype=m.float64)))


def test_copy_forms_own_their_memory_and_are_contiguous():
    for name, args in [("t_copy", ()), ("expand_copy", ((4, 3),)), ("alias_copy", ()), ("permute_copy", ((1, 0),))]:
        ours, theirs = pair(np.arange(3, dtype=np.float32).reshape(1, 3) if name == "expand_copy"
                            else np.arange(6, dtype=np.float32).reshape(2, 3))
        result, expected = getattr(tp, name)(ours, *args), getattr(torch, name)(theirs, *args)
        assert result.stride() == expected.stride()
        result.fill_(-1)
        assert (ours.numpy() >= 0).all()


@pytest.mark.parametrize("name,args", [("split_copy", (2,)), ("split_with_sizes_copy", ([1, 3],)),
                                       ("unbind_copy", (0,))])
def test_copy_forms_with_several_results_write_a_list(name, args):
    values = np.arange(8, dtype=np.float32).reshape(4, 2)
    results = []
    for m in (tp, torch):
        expected = getattr(m, name)(m.tensor(values), *args)
        # split_copy casts into out as copy_ does; the others take only their own dtype, and resize.
        out = [m.empty(tuple(t.shape), dtype=m.float64) if name == "split_copy" else m.empty(0) for t in expected]
        assert getattr(m, name)(m.tensor(values), *args, out=out) is None
        results.append(out)
    same(*results)
    raises_like(lambda m: getattr(m, name)(m.tensor(values), *args, out=[m.empty(0)]))
    if name != "split_copy":
        raises_like(lambda m: getattr(m, name)(m.tensor(values), *args, out=[m.empty(0, dtype=m.float64)] * 2))


# ---------------------------------------------------------------------------------------------
# Keyword forms and argument kinds.

KEYWORD_FORMS = [
    lambda m, x: m.tensor_split(x, sections=3, dim=1),
    lambda m, x: m.tensor_split(x, indices=[1, 2]),
    lambda m, x: m.tensor_split(x, tensor_indices_or_sections=m.tensor([1, 3]), dim=1),
    lambda m, x: x.tensor_split(m.tensor(2), 1),
    lambda m, x: m.hsplit(x, sections=2),
    lambda m, x: x.vsplit(indices=[1]),
    lambda m, x: m.tile(x, dims=(2, 1)),
    lambda m, x: x.tile(2, 1, 1),
    lambda m, x: x.sum_to_size(size=(1, 4)),
    lambda m, x: x.sum_to_size(m.Size([3, 1])),
    lambda m, x: m.view_copy(x, dtype=m.int32),
    lambda m, x: m.split_with_sizes(x, split_sizes=[1, 3], dim=1),
    lambda m, x: m.unsafe_chunk(x, chunks=2, dim=1),
    lambda m, x: m.rot90(x, k=-1, dims=[1, 0]),
    lambda m, x: m.roll(x, shifts=(1, -1), dims=(0, 1)),
    lambda m, x: m.combinations(x[0], r=3, with_replacement=True),
    lambda m, x: m.moveaxis(x, source=0, destination=1),
    lambda m, x: m.slice_copy(x, dim=1, start=-3, step=2),
    lambda m, x: m.expand_copy(x, size=(2, 3, 4), implicit=True),
    lambda m, x: x.unfold(dimension=1, size=2, step=2),
]


@pytest.mark.parametrize("form", KEYWORD_FORMS, ids=[str(i) for i in range(len(KEYWORD_FORMS))])
def test_keyword_forms(form):
    ours, theirs = pair(np.arange(12, dtype=np.float32).reshape(3, 4))
    same(form(tp, ours), form(torch, theirs))


def test_atleast_forms():
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for args in [(2.5,), (1.0, [2.0, 3.0]), ([[1.0]],)]:
            ours = getattr(tp, name)(*[tp.tensor(a) for a in args])
            same(ours, getattr(torch, name)(*[torch.tensor(a) for a in args]))
        same(getattr(tp, name)([tp.tensor(1.0)]), getattr(torch, name)([torch.tensor(1.0)]))
        assert getattr(tp, name)() == getattr(torch, name)()


def test_meshgrid_warns_once_without_indexing(monkeypatch):
    monkeypatch.setattr(shape_family, "_meshgrid_warned", False)
    x, y = tp.arange(2), tp.arange(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same(tp.meshgrid(x, y), torch.meshgrid(torch.arange(2), torch.arange(3), indexing="ij"))
        tp.meshgrid(x, y)
        tp.meshgrid(x, y, indexing="xy")
    assert [str(w.message) for w in caught] == [
        "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."]


def test_block_diag_promotes_as_torch_does():
    for blocks in [[np.ones((2, 2), np.int32), np.array(2.0, np.float64)],  # a 0-dim tensor: the category decides
                   [np.ones((2, 2), np.float32), np.array(2.0, np.float64)],
                   [np.ones((2,), np.bool_), np.array(3, np.int64)],
                   [np.zeros((0,), np.float32), np.ones((2, 0), np.float16)]]:
        same(tp.block_diag(*[tp.tensor(b) for b in blocks]), torch.block_diag(*[torch.from_numpy(b) for b in blocks]))
    same(tp.block_diag(), torch.block_diag())


def test_unfold_is_a_view_and_sums_overlapping_gradients():
    grads = []
    for m in (tp, torch):
        x = m.arange(10.0, requires_grad=True)
        windows = (x * 1).unfold(0, 4, 1)
        (windows * m.arange(28.0).reshape(7, 4)).sum().backward()
        grads.append(x.grad)
    same(*grads)
    x = tp.zeros(6)
    x.unfold(0, 2, 2).fill_(1)
    assert x.tolist() == [1.0] * 6


def test_splits_share_their_input_memory():
    written = []
    for m in (tp, torch):
        x = m.zeros(5, 6)
        for fill, parts in enumerate((m.tensor_split(x, 3), m.hsplit(x, [4]), m.unsafe_split(x, 4),
                                      x.split_with_sizes([1, 5], 1), m.unsafe_chunk(x, 3, 1)), start=1):
            parts[-1].fill_(fill)
        written.append(x)
    same(*written)


@pytest.mark.parametrize("call", [
    lambda m: m.hstack(m.ones(2)),
    lambda m: m.hstack([m.ones(2), 1]),
    lambda m: m.tile(m.ones(2), 2.5),
    lambda m: m.tensor_split(m.ones(4), 1.5),
    lambda m: m.roll(m.ones(2), 1.0),
    lambda m: m.kron(m.ones(2), [1.0]),
    lambda m: m.fliplr([[1.0]]),
    lambda m: m.combinations([1.0, 2.0]),
    lambda m: m.meshgrid(m.ones(2), 3, indexing="ij"),
    lambda m: m.block_diag(m.ones(2), [1.0]),
    lambda m: m.t_copy(None),
    lambda m: m.split_copy(m.ones(4), 2, out=m.empty(0)),
], ids=lambda f: "")
def test_wrong_argument_kinds_are_type_errors(call):
    raises_like(call)


@pytest.mark.parametrize("call,name", [
    (lambda m: m.hstack([]), "hstack"),
    (lambda m: m.vsplit(m.ones(3), 1), "vsplit"),
    (lambda m: m.hsplit(m.ones(2, 3), 2), "hsplit"),
    (lambda m: m.tensor_split(m.ones(2, 3), 2, 2), "tensor_split"),
    (lambda m: m.tensor_split(m.ones(2, 3), m.tensor([1], dtype=m.int32)), "tensor_split"),
    (lambda m: m.roll(m.ones(2, 3), (1, 2), 0), "roll"),
    (lambda m: m.rot90(m.ones(2, 3), 1, (0, 0)), "rot90"),
    (lambda m: m.meshgrid(m.ones(2), m.ones(2, dtype=m.int64), indexing="ij"), "meshgrid"),
    (lambda m: m.meshgrid(m.ones(2), indexing="ji"), "meshgrid"),
    (lambda m: m.cartesian_prod(), "cartesian_prod"),
    (lambda m: m.combinations(m.ones(3), -2), "combinations"),
    (lambda m: m.block_diag(m.ones(1, 1, 1)), "block_diag"),
    (lambda m: m.ones(2, 3).sum_to_size(3, 3), "sum_to_size"),
    (lambda m: m.ones(2, 3).unfold(1, 4, 1), "unfold"),
    (lambda m: m.narrow_copy(m.ones(2, 3), 1, 4, 1), "narrow_copy"),
    (lambda m: m.slice_copy(m.ones(2, 3), 1, 0, 2, 0), "slice_copy"),
    (lambda m: m.unsafe_split(m.ones(2, 3), 1, 2), "unsafe_split"),
])
def test_errors_name_the_op(call, name):
    assert name in raises_like(call)

"""Memory formats (channels_last) and resize_, against torch: the strides each call gives, the values
it keeps, and its errors."""

import pytest
import torch

import tensorplay
import tensorplay as tp
from nn_testing import assert_same

FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")

SHAPES = [(2, 3, 4, 5), (2, 3, 1, 1), (2, 1, 4, 4), (0, 3, 2, 2), (2, 3, 4, 5, 2), (3, 4)]


def both(shape):
    data = torch.randn(shape).numpy()
    return torch.tensor(data), tensorplay.tensor(data)


def fmt(lib, name):
    return getattr(lib, name)


def outcome(fn):
    """fn()'s result, or the class of the exception it raised."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return type(e)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", FORMATS[:3])
def test_contiguous_takes_the_format_strides(shape, name):
    t, x = both(shape)
    expected = outcome(lambda: t.contiguous(memory_format=fmt(torch, name)))
    got = outcome(lambda: x.contiguous(memory_format=fmt(tensorplay, name)))
    if isinstance(expected, type):
        assert got is expected
        return
    assert got.stride() == expected.stride()
    assert_same(got, expected)
    assert got.is_contiguous(memory_format=fmt(tensorplay, name)) == expected.is_contiguous(memory_format=fmt(torch, name))
    assert got.is_contiguous() == expected.is_contiguous()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_is_contiguous_in_each_format(shape):
    t, x = both(shape)
    for layout in ("contiguous_format", "channels_last", "channels_last_3d"):
        tt = outcome(lambda: t.contiguous(memory_format=fmt(torch, layout)))
        if isinstance(tt, type):
            continue
        xx = x.contiguous(memory_format=fmt(tensorplay, layout))
        for name in FORMATS[:3]:
            assert (xx.is_contiguous(memory_format=fmt(tensorplay, name)) ==
                    tt.is_contiguous(memory_format=fmt(torch, name))), (layout, name)


@pytest.mark.parametrize("name", FORMATS)
def test_new_tensors_in_a_format(name):
    t, x = both((2, 3, 4, 5))
    t_cl, x_cl = t.contiguous(memory_format=torch.channels_last), x.contiguous(memory_format=tensorplay.channels_last)
    calls = [
        (lambda lib, a: lib.empty(2, 3, 4, 5, memory_format=fmt(lib, name))),
        (lambda lib, a: lib.empty_like(a, memory_format=fmt(lib, name))),
        (lambda lib, a: lib.zeros_like(a, memory_format=fmt(lib, name))),
        (lambda lib, a: lib.ones_like(a, memory_format=fmt(lib, name))),
        (lambda lib, a: lib.full_like(a, 7, memory_format=fmt(lib, name))),
        (lambda lib, a: a.clone(memory_format=fmt(lib, name))),
        (lambda lib, a: lib.clone(a, memory_format=fmt(lib, name))),
        (lambda lib, a: a.to(memory_format=fmt(lib, name))),
        (lambda lib, a: a.to(lib.float64, memory_format=fmt(lib, name))),
    ]
    for call in calls:
        for tt, xx in ((t, x), (t_cl, x_cl)):
            expected = outcome(lambda: call(torch, tt))
            got = outcome(lambda: call(tensorplay, xx))
            if isinstance(expected, type):
                assert got is expected
                continue
            assert got.stride() == expected.stride()
            if call not in (calls[0], calls[1]):
                assert_same(got, expected)


def test_channels_last_values_flow_through_ops_and_gradients():
    t, x = both((2, 3, 5, 5))
    w_t, w_x = both((4, 3, 3, 3))
    t = t.contiguous(memory_format=torch.channels_last).requires_grad_()
    x = x.contiguous(memory_format=tensorplay.channels_last).requires_grad_()
    w_t.requires_grad_()
    w_x.requires_grad_()
    out_t = (torch.nn.functional.conv2d(t, w_t).relu() * 2).sum()
    out_x = (tensorplay.nn.functional.conv2d(x, w_x).relu() * 2).sum()
    out_t.backward()
    out_x.backward()
    assert_same(out_x, out_t, rtol=1e-5, atol=1e-5)
    assert_same(x.grad, t.grad, rtol=1e-5, atol=1e-5)
    assert_same(w_x.grad, w_t.grad, rtol=1e-5, atol=1e-5)


def test_memory_formats_print_and_compare():
    assert repr(tensorplay.channels_last) == "tensorplay.channels_last"
    assert isinstance(tensorplay.channels_last, tensorplay.memory_format)
    assert tensorplay.channels_last != tensorplay.contiguous_format
    with pytest.raises(TypeError):
        tensorplay.ones(2, 2).contiguous(memory_format="channels_last")


@pytest.mark.parametrize("module", ["Conv2d", "ConvTranspose2d", "Conv3d", "ConvTranspose3d"])
def test_module_and_conv_weights_take_a_memory_format(module):
    three_d = module.endswith("3d")
    name = "channels_last_3d" if three_d else "channels_last"
    convert = "convert_conv3d_weight_memory_format" if three_d else "convert_conv2d_weight_memory_format"
    for lib in (torch, tensorplay):
        model = lib.nn.Sequential(getattr(lib.nn, module)(3, 4, 3), lib.nn.ReLU())
        before = model[0].weight
        assert getattr(lib.nn.utils, convert)(model, fmt(lib, name)) is model
        assert model[0].weight is before  # the Parameter object stays: optimizers keep their references
        assert model[0].weight.is_contiguous(memory_format=fmt(lib, name))
    t_model = torch.nn.Conv2d(3, 4, 3).to(memory_format=torch.channels_last)
    x_model = tensorplay.nn.Conv2d(3, 4, 3).to(memory_format=tensorplay.channels_last)
    assert x_model.weight.stride() == t_model.weight.stride()
    assert x_model.bias.stride() == t_model.bias.stride()


@pytest.mark.parametrize("sizes", [(4, 4), (1,), (0,), (2, 3), (3, 2, 2)], ids=str)
def test_resize_keeps_the_storage_values(sizes):
    t, x = both((2, 3))
    t.resize_(*sizes)
    x.resize_(*sizes)
    assert x.shape == t.shape and x.stride() == t.stride()
    kept = min(6, t.numel())  # the elements the old storage held; the rest is uninitialised
    assert_same(x.flatten()[:kept], t.flatten()[:kept])


def test_resize_in_a_format_and_as_another_tensor():
    t, x = both((2, 3))
    assert x.resize_(2, 3, 4, 5, memory_format=tensorplay.channels_last).stride() == \
        t.resize_(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    assert x.resize_as_(tensorplay.ones(5, 2)).shape == t.resize_as_(torch.ones(5, 2)).shape


def test_resize_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match="require grad"):
        tensorplay.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="negative dimension"):
        tensorplay.ones(2).resize_(-1)
    with pytest.raises(RuntimeError, match="rank 4"):
        tensorplay.ones(2).resize_(2, 3, memory_format=tensorplay.channels_last)


@pytest.mark.parametrize("view", [
    lambda m: m.arange(12.0).reshape(3, 4)[:, ::2],
    lambda m: m.arange(12.0).reshape(3, 4)[:, ::2].t(),
    lambda m: m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)[:, :, ::2],
    lambda m: m.ones(3, 1).expand(3, 4),
    lambda m: m.ones(1, 3).expand(4, 3).t(),
    lambda m: m.arange(48.0).reshape(2, 3, 4, 2).permute(0, 3, 1, 2)[:, :, :, ::2],
    lambda m: m.ones(2, 1, 3).expand(2, 4, 3)[:, :, ::2],
    lambda m: m.arange(60.0).reshape(3, 4, 5)[::2, :, 1:].transpose(0, 2),
], ids=["sliced", "sliced_t", "permuted_sliced", "expanded", "expanded_t", "channels_sliced", "expanded_sliced",
        "sliced_transposed"])
def test_copies_of_layouts_that_are_not_dense_keep_the_order_of_dims_as_torch(view):
    """preserve_format makes such a copy dense in the order its strides give the dims."""
    ours, theirs = view(tp), view(torch)
    for copy in (lambda t: t.clone(), lambda t: t.double(), lambda t: tp.empty_like(t) if isinstance(t, tp.Tensor)
                 else torch.empty_like(t)):
        assert tuple(copy(ours).stride()) == tuple(copy(theirs).stride())
    assert ours.clone().tolist() == theirs.clone().tolist()

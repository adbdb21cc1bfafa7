"""The Tensor API that is not an op (tensorplay/_composites/tensor_api.py): type(), layout, dim_order,
the is_* flags, the matrix views and conjugations, the legacy new(), apply_/map_/map2_, as_subclass and
the memory calls a CPU build refuses. Every expectation is torch's answer to the same call; names that
print differently only by package ('tensorplay.FloatTensor' for 'torch.FloatTensor') count as equal."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp
from tensorplay._composites import state

DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool")


def normalized(value):
    """value in a form comparable across the two libraries."""
    if isinstance(value, (torch.Tensor, tp.Tensor)):
        dtype = str(value.dtype).split(".")[-1]
        if value.device.type == "meta":
            return ("meta tensor", dtype, tuple(value.shape))
        lib = torch if isinstance(value, torch.Tensor) else tp
        values = value.detach().to(lib.float64).numpy().ravel().tolist()
        # An empty tensor's strides address nothing (tensorplay.tensor([]) has stride (0,), torch's (1,)).
        strides = tuple(value.stride()) if value.numel() else None
        return ("tensor", dtype, tuple(value.shape), strides, tuple("nan" if v != v else v for v in values))
    if isinstance(value, (tuple, list)):
        return tuple(normalized(v) for v in value)
    if isinstance(value, (str, torch.dtype, tp.dtype, torch.layout, tp.layout)):
        return str(value).replace("tensorplay.", "torch.")
    return value


def outcome(m, fn):
    """fn(m)'s result, or the kind of exception it raised (warnings silenced)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m)
    except Exception as e:  # noqa: BLE001 - the kind is what is compared
        return type(e)


def check(fn):
    """fn behaves in tensorplay as in torch: the same result, or the same kind of exception."""
    theirs, ours = outcome(torch, fn), outcome(tp, fn)
    if isinstance(theirs, type) and issubclass(theirs, Exception):
        assert ours is theirs, f"torch raised {theirs.__name__}, tensorplay gave {ours!r}"
    else:
        assert not (isinstance(ours, type) and issubclass(ours, Exception)), \
            f"torch gave {theirs!r}, tensorplay raised {ours.__name__}"
        assert normalized(ours) == normalized(theirs)
    return ours


def raises_naming(error, op, fn):
    """fn(tensorplay) raises error, with a message that names op; torch raises the same kind."""
    with pytest.raises(error):
        fn(torch)
    with pytest.raises(error, match=op.replace("(", r"\(").replace(")", r"\)")):
        fn(tp)


def recorded_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


@pytest.fixture
def fresh_warn_once():
    """Forgets which once-a-process warnings were given, so that a test sees them."""
    saved = set(state._warned)
    state._warned.clear()
    yield
    state._warned.clear()
    state._warned.update(saved)


# ---------------------------------------------------------------------------------------------
# type(): the legacy type name, and casts by dtype, name or class.

@pytest.mark.parametrize("dtype", DTYPES)
def test_type_names_the_legacy_type(dtype):
    check(lambda m: m.ones(2, dtype=getattr(m, dtype)).type())
    check(lambda m: m.ones(2, dtype=getattr(m, dtype), device="meta").type())


TYPE_CASTS = {
    "dtype": lambda m, x: x.type(m.int32),
    "dtype keyword": lambda m, x: x.type(dtype=m.float64),
    "name": lambda m, x: x.type("torch.DoubleTensor"),
    "bfloat16 name": lambda m, x: x.type("torch.BFloat16Tensor"),
    "bytes name": lambda m, x: x.type(b"torch.LongTensor"),
    "Tensor is the default dtype": lambda m, x: x.long().type(m.Tensor),
    "torch.Tensor by name": lambda m, x: x.long().type("torch.Tensor"),
    "legacy class": lambda m, x: x.type(m.DoubleTensor),
    "non_blocking": lambda m, x: x.type(m.float64, True),
    "async": lambda m, x: x.type(m.float64, **{"async": True}),
    "None is the name": lambda m, x: x.type(None),
    "unknown name": lambda m, x: x.type("torch.FooTensor"),
    "name with a space": lambda m, x: x.type("torch.FloatTensor "),
    "dtype name is not a type name": lambda m, x: x.type("torch.float64"),
    "meta name": lambda m, x: x.type("torch.meta.FloatTensor"),
    "cuda name": lambda m, x: x.type("torch.cuda.FloatTensor"),
    "not a Tensor class": lambda m, x: x.type(float),
    "Tensor subclass": lambda m, x: x.type(m.nn.Parameter),
    "a number": lambda m, x: x.type(3),
    "a device": lambda m, x: x.type(m.device("cpu")),
    "non_blocking not bool": lambda m, x: x.type(m.float64, 3),
    "unknown keyword": lambda m, x: x.type(m.float64, copy=True),
    "too many arguments": lambda m, x: x.type(m.float64, True, 4),
    "memory format": lambda m, x: x.reshape(1, 2, 2, 1).type(m.float64, memory_format=m.channels_last).stride(),
    "memory format, same dtype": lambda m, x: x.expand(2, 3, 2, 2).type(m.float32,
                                                                        memory_format=m.channels_last).stride(),
    "memory format alone": lambda m, x: x.type(memory_format=m.channels_last),
}


@pytest.mark.parametrize("case", list(TYPE_CASTS))
def test_type_casts_as_torch(case):
    check(lambda m: TYPE_CASTS[case](m, m.arange(4.0).reshape(2, 2)))


def test_type_returns_self_when_nothing_changes_and_casts_differentiably():
    x = tp.ones(2, requires_grad=True)
    assert x.type(tp.float32) is x and x.type("torch.FloatTensor") is x and x.type(x.type()) is x
    y = x.type(tp.float64)
    y.sum().backward()
    assert y.dtype == tp.float64 and x.grad.tolist() == [1.0, 1.0]


def test_typename():
    for obj in (lambda m: m.ones(2), lambda m: m.ones(2, dtype=m.int64), lambda m: 3, lambda m: "a",
                lambda m: m.nn.Linear, lambda m: m.nn.Linear(1, 1), lambda m: m.nn.Parameter(m.ones(1)),
                lambda m: None):
        check(lambda m: m.typename(obj(m)))


# ---------------------------------------------------------------------------------------------
# Layouts and the flags of what tensorplay does not have.

def test_layouts():
    public = sorted(n for n in dir(torch) if isinstance(getattr(torch, n), torch.layout) and not n.startswith("_"))
    assert sorted(n for n in dir(tp) if isinstance(getattr(tp, n), tp.layout)) == public
    check(lambda m: m.ones(2).layout)
    check(lambda m: m.ones(2, device="meta").layout)
    check(lambda m: repr(m.sparse_csr))
    check(lambda m: m.ones(2).layout is m.strided)
    check(lambda m: m.strided == m.sparse_coo)
    check(lambda m: m.layout())
    check(lambda m: m.strided < m.sparse_coo)
    check(lambda m: setattr(m.ones(2), "layout", m.sparse_coo))
    assert repr(tp.layout) == "<class 'tensorplay.layout'>"
    assert pickle.loads(pickle.dumps(tp.sparse_bsr)) is tp.sparse_bsr
    assert copy.deepcopy(tp.strided) is tp.strided


FLAGS = ["is_mps", "is_xpu", "is_ipu", "is_xla", "is_mtia", "is_maia", "is_vulkan", "is_mkldnn", "is_quantized",
         "is_sparse", "is_sparse_csr", "is_nested", "name"]


@pytest.mark.parametrize("flag", FLAGS)
def test_flags_read_as_torch_and_are_read_only(flag):
    check(lambda m: getattr(m.ones(2), flag))
    check(lambda m: getattr(m.ones(2, device="meta"), flag))
    check(lambda m: setattr(m.ones(2), flag, True))


def test_pinned_and_shared_memory():
    check(lambda m: m.ones(2).is_pinned())
    check(lambda m: m.ones(2, device="meta").is_pinned())
    check(lambda m: m.ones(2).is_shared())
    check(lambda m: m.ones(2).is_pinned("foo"))
    assert recorded_warnings(lambda: tp.ones(2).is_pinned("cpu")) == [
        (DeprecationWarning, "The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this "
                             "argument.")]
    for device in (None, "cpu", "meta", "foo"):
        raises_naming(RuntimeError, "pin_memory()" if device != "foo" else "foo",
                      lambda m: m.ones(2).pin_memory(device))
    raises_naming(RuntimeError, "pin_memory()", lambda m: m.ones(2).pin_memory(device="cpu"))
    check(lambda m: m.ones(2, device="meta").pin_memory())


def test_record_stream_is_refused_on_the_cpu():
    raises_naming(RuntimeError, "record_stream()", lambda m: m.ones(2).record_stream(None))
    check(lambda m: m.ones(2).record_stream())


def test_volatile_is_removed_with_torch_warnings():
    x = tp.ones(2)
    assert recorded_warnings(lambda: x.volatile) == [
        (UserWarning, "volatile was removed (Variable.volatile is always False)")]
    assert x.volatile is False
    removed = [(UserWarning, "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.")]
    assert recorded_warnings(lambda: setattr(x, "volatile", True)) == removed
    assert recorded_warnings(lambda: delattr(x, "volatile")) == removed
    assert not x.requires_grad


def test_data_pointers():
    x = tp.arange(6.0).reshape(2, 3)[1:]
    assert x.const_data_ptr() == x.data_ptr() != 0
    check(lambda m: m.empty(2, device="meta").const_data_ptr())


IS_SET_TO = {
    "itself": lambda m: (lambda a: a.is_set_to(a))(m.ones(2)),
    "a full view": lambda m: (lambda a: a.is_set_to(a.view(2)))(m.ones(2)),
    "a detached alias": lambda m: (lambda a: a.is_set_to(a.detach()))(m.ones(2)),
    "a transpose": lambda m: (lambda a: a.is_set_to(a.t()))(m.ones(2, 2)),
    "another view shape": lambda m: (lambda a: a.is_set_to(a.view(1, 2)))(m.ones(2)),
    "equal values elsewhere": lambda m: m.ones(2).is_set_to(m.ones(2)),
    "empty tensors": lambda m: m.ones(0).is_set_to(m.ones(0)),
    "an empty tensor itself": lambda m: (lambda a: a.is_set_to(a))(m.ones(0)),
    "same offset": lambda m: (lambda a: a[1:].is_set_to(a[1:]))(m.ones(3)),
    "other offset": lambda m: (lambda a: a[1:].is_set_to(a[2:]))(m.ones(3)),
    "a dtype view": lambda m: (lambda a: a.view(m.int32).is_set_to(a))(m.ones(3)),
    "keyword": lambda m: m.ones(2).is_set_to(tensor=m.ones(2)),
    "not a tensor": lambda m: m.ones(2).is_set_to(3),
    "meta": lambda m: (lambda a: a.is_set_to(a))(m.empty(2, device="meta")),
}


@pytest.mark.parametrize("case", list(IS_SET_TO))
def test_is_set_to(case):
    check(IS_SET_TO[case])


DIM_ORDERS = {
    "contiguous": lambda m: m.ones(2, 3, 4).dim_order(),
    "transposed": lambda m: m.ones(2, 3).t().dim_order(),
    "permuted": lambda m: m.ones(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order(ambiguity_check=True),
    "5-d permuted": lambda m: m.ones(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1).dim_order(),
    "scrambled": lambda m: m.ones(5, 4, 3, 2).permute(3, 1, 0, 2).dim_order(),
    "0-d": lambda m: m.tensor(1.0).dim_order(),
    "strided 1-d": lambda m: m.ones(4)[::2].dim_order(),
    "sliced": lambda m: m.ones(2, 3, 4, 5)[:, :, ::2].transpose(1, 3).dim_order(),
    "meta": lambda m: m.ones(2, 3, device="meta").t().dim_order(),
    "size-1 dims": lambda m: m.ones(2, 1, 4, 1).dim_order(),
    "size-1 dims checked": lambda m: m.ones(2, 1, 4, 1).dim_order(ambiguity_check=True),
    "expanded": lambda m: m.ones(2, 3).expand(4, 2, 3).dim_order(),
    "expanded checked": lambda m: m.ones(2, 3).expand(4, 2, 3).dim_order(ambiguity_check=True),
    "expanded transposed": lambda m: m.ones(3, 3).expand(2, 3, 3).transpose(0, 2).dim_order(),
    "zero strides": lambda m: m.ones(60).as_strided((3, 4, 5), (1, 0, 3)).dim_order(),
    "equal strides": lambda m: m.ones(60).as_strided((3, 4, 5), (2, 2, 1)).dim_order(),
    "equal strides checked": lambda m: m.ones(60).as_strided((3, 4, 5), (2, 2, 1)).dim_order(ambiguity_check=True),
    "channels last, size-1 spatial": lambda m: m.ones(6).as_strided((2, 3, 1, 1), (3, 1, 3, 3)).dim_order(),
    "channels last": lambda m: m.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).dim_order(
        ambiguity_check=[m.contiguous_format, m.channels_last]),
    "one format of two": lambda m: m.ones(2, 3, 4, 5).dim_order(ambiguity_check=[m.contiguous_format,
                                                                                 m.channels_last]),
    "in both formats": lambda m: m.ones(2, 1, 4, 5).dim_order(ambiguity_check=[m.contiguous_format,
                                                                               m.channels_last]),
    "in no format": lambda m: m.ones(6).as_strided((2, 3, 1, 1), (3, 1, 3, 3)).dim_order(
        ambiguity_check=[m.channels_last]),
    "not a bool or list": lambda m: m.ones(2, 3).dim_order(ambiguity_check=3),
    "a tuple": lambda m: m.ones(2, 3).dim_order(ambiguity_check=(m.contiguous_format,)),
    "a list of other things": lambda m: m.ones(2, 3).dim_order(ambiguity_check=[3]),
    "positional": lambda m: m.ones(2, 3).dim_order(True),
}


@pytest.mark.parametrize("case", list(DIM_ORDERS))
def test_dim_order(case):
    check(DIM_ORDERS[case])


# ---------------------------------------------------------------------------------------------
# Matrix views and conjugation (the identity on real tensors).

VIEWS = {
    "H": lambda m, x: x.H,
    "mH": lambda m, x: x.mH,
    "mT": lambda m, x: x.mT,
    "T": lambda m, x: x.T,
    "adjoint": lambda m, x: x.adjoint(),
    "torch.adjoint": lambda m, x: m.adjoint(x),
}


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 3), (2, 3, 4), (1, 2, 3, 4)], ids=str)
@pytest.mark.parametrize("view", list(VIEWS))
def test_matrix_views(view, shape):
    def viewed(m):
        x = m.arange(float(np.prod(shape))).reshape(shape)
        y = VIEWS[view](m, x)
        return y, y is x, y.data_ptr() == x.data_ptr()
    check(viewed)


@pytest.mark.parametrize("view", list(VIEWS))
def test_matrix_view_gradients(view):
    def grads(m):
        x = m.arange(24.0).reshape(2, 3, 4) if view in ("mH", "mT", "adjoint", "torch.adjoint") else \
            m.arange(6.0).reshape(2, 3)
        x.requires_grad_()
        (VIEWS[view](m, x) * m.arange(float(x.numel())).reshape(VIEWS[view](m, x).shape)).sum().backward()
        return x.grad
    check(grads)


def test_matrix_view_errors_name_the_view():
    raises_naming(RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches",
                  lambda m: m.ones(2, 3, 4).H)
    raises_naming(RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor.",
                  lambda m: m.ones(3).H)
    for view in ("mT", "mH"):
        raises_naming(RuntimeError, f"tensor.{view} is only supported on matrices or batches of matrices",
                      lambda m: getattr(m.ones(3), view))
    raises_naming(RuntimeError, "tensor.adjoint()", lambda m: m.adjoint(m.ones(3)))
    raises_naming(TypeError, "adjoint()", lambda m: m.adjoint([1.0]))


@pytest.mark.parametrize("view, message", [
    ("T", "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."),
    ("mT", "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases."),
    ("H", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj()."),
    ("mH", "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj()."),
    ("adjoint", "adjoint() is deprecated on 0-D tensors. Consider using x.conj()."),
])
def test_zero_dim_views_warn_once_a_process(view, message, fresh_warn_once):
    x = tp.tensor(2.0)
    assert recorded_warnings(lambda: VIEWS[view](tp, x)) == [(UserWarning, message)]
    assert recorded_warnings(lambda: VIEWS[view](tp, x)) == []


def test_T_of_other_ranks_warns_once(fresh_warn_once):
    caught = recorded_warnings(lambda: tp.ones(2, 3, 4).T)
    assert len(caught) == 1 and caught[0][1].startswith("The use of `x.T` on tensors of dimension other than 2")
    assert recorded_warnings(lambda: tp.ones(3).T) == []
    assert recorded_warnings(lambda: tp.ones(2, 3).T) == []


CONJUGATIONS = ["conj", "resolve_conj", "resolve_neg", "conj_physical"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CONJUGATIONS + ["is_complex", "is_conj", "is_neg"])
def test_conjugation_of_real_tensors(name, dtype):
    def call(m):
        x = m.ones(2, 3, dtype=getattr(m, dtype))
        function, method = getattr(m, name)(x), getattr(x, name)()
        return function, method, function is x, method is x
    check(call)


@pytest.mark.parametrize("name", CONJUGATIONS + ["is_complex", "is_conj", "is_neg"])
def test_conjugation_takes_tensors(name):
    raises_naming(TypeError, f"{name}()", lambda m: getattr(m, name)(3))
    check(lambda m: getattr(m, name)(input=m.ones(2)))


def test_conjugation_passes_gradients_through():
    def grads(m):
        x = m.arange(3.0, requires_grad=True)
        (m.conj_physical(m.resolve_neg(m.resolve_conj(x.conj()))) * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return x.grad
    check(grads)


def test_conj_physical_out():
    check(lambda m: (lambda o: (m.conj_physical(m.arange(3.0), out=o) is o, o))(m.zeros(3)))
    check(lambda m: (lambda o: (m.conj_physical(m.arange(3.0), out=o), o))(m.zeros(0)))
    caught = recorded_warnings(lambda: tp.conj_physical(tp.ones(2), out=tp.zeros(3)))
    assert len(caught) == 1 and "was resized since it had shape [3]" in caught[0][1]
    # Its kernel writes out without casting: out must have input's dtype.
    raises_naming(RuntimeError, "conj_physical(): Found dtype Float but expected Long",
                  lambda m: m.conj_physical(m.ones(2, dtype=m.int64), out=m.zeros(2)))
    raises_naming(RuntimeError, "conj_physical(): Found dtype Long but expected Float",
                  lambda m: m.conj_physical(m.ones(2), out=m.zeros(2, dtype=m.int64)))
    raises_naming(TypeError, "conj_physical(): argument 'out' must be Tensor, not int",
                  lambda m: m.conj_physical(m.ones(2), out=3))
    # torch writes out and leaves a backward that raises when called; tensorplay refuses at the call, as
    # every out= form does.
    with pytest.raises(RuntimeError, match=r"conj_physical\W+functions with out=... arguments don.t support"):
        tp.conj_physical(tp.ones(2, requires_grad=True), out=tp.zeros(2))


def test_conj_physical_in_place():
    def in_place(m):
        x = m.arange(3.0)
        before = x._version
        return x.conj_physical_() is x, x, x._version > before
    check(in_place)
    check(lambda m: m.ones(2, device="meta").conj_physical_())
    raises_naming(RuntimeError, "conj_physical_", lambda m: m.ones(2, requires_grad=True).conj_physical_())
    check(lambda m: m.ones(2).conj_physical_(1))

    def grads(m):
        x = m.arange(3.0, requires_grad=True)
        y = x * 2
        y.conj_physical_()
        (y * y).sum().backward()
        return x.grad, y.grad_fn is not None
    check(grads)


# ---------------------------------------------------------------------------------------------
# new(): the legacy constructor.

NEW = {
    "sizes": lambda m, x: x.new(2, 3).shape,
    "sizes strides": lambda m, x: x.new(2, 3, 4).stride(),
    "a Size": lambda m, x: x.new(m.Size([2, 3])).shape,
    "an empty Size": lambda m, x: x.new(m.Size([])).shape,
    "size keyword": lambda m, x: x.new(size=(2,)).shape,
    "a NumPy int size": lambda m, x: x.new(np.int64(3)).shape,
    "an integer scalar size": lambda m, x: x.new(2, m.tensor(3)).shape,
    "nothing": lambda m, x: x.new(),
    "a tuple is data": lambda m, x: x.new((2, 3)),
    "a list": lambda m, x: x.new([2.5, 3]),
    "nested lists": lambda m, x: x.new([[1, 2], [3, 4]]),
    "an empty list": lambda m, x: x.new([]),
    "a range": lambda m, x: x.new(range(3)),
    "an array": lambda m, x: x.new(np.ones(3)),
    "tensors in a list": lambda m, x: x.new([m.tensor(1), m.tensor(2)]),
    "data keyword": lambda m, x: x.new(data=[2]),
    "the cpu device": lambda m, x: x.new(2, 3, device="cpu").shape,
    "no device": lambda m, x: x.new(2, 3, device=None).shape,
    "another device": lambda m, x: x.new([1, 2], device="meta"),
    "a tensor": lambda m, x: x.new(m.ones(2, 3).t()),
    "other keyword": lambda m, x: x.new(other=m.ones(2)),
    "a tensor and a device": lambda m, x: x.new(m.ones(2), device="cpu"),
    "a tensor of another dtype": lambda m, x: x.new(m.ones(2, dtype=m.int64)),
    "an integer scalar tensor": lambda m, x: x.new(m.tensor(3)),
    "a tensor and a size": lambda m, x: x.new(m.ones(2), 3),
    "a negative size": lambda m, x: x.new(-1),
    "a float size": lambda m, x: x.new(2, 3.0),
    "a float": lambda m, x: x.new(2.5),
    "a bool": lambda m, x: x.new(True),
    "bools": lambda m, x: x.new(True, 2),
    "a string": lambda m, x: x.new("a"),
    "a dict": lambda m, x: x.new({1: 2}),
    "None": lambda m, x: x.new(None),
    "two lists": lambda m, x: x.new([1], [2]),
    "a dtype keyword": lambda m, x: x.new(2, dtype=m.int64),
    "requires_grad keyword": lambda m, x: x.new(2, requires_grad=True),
    "an int size keyword": lambda m, x: x.new(size=3),
    "two keywords": lambda m, x: x.new(data=[1], size=(2,)),
}


@pytest.mark.parametrize("dtype", ["float32", "bool"])
@pytest.mark.parametrize("case", list(NEW))
def test_new(case, dtype):
    check(lambda m: NEW[case](m, m.ones(2, 3, dtype=getattr(m, dtype))))


def test_new_of_a_tensor_aliases_it_with_its_history():
    for lib in (tp, torch):
        base = lib.ones(2, requires_grad=True)
        alias = lib.ones(3).new(base * 1)
        assert alias.requires_grad
        (alias * lib.tensor([2.0, 3.0])).sum().backward()
        assert base.grad.tolist() == [2.0, 3.0]
    x = tp.ones(2)
    assert x.new(x).data_ptr() == x.data_ptr() and x.new(x) is not x


def test_new_on_meta():
    check(lambda m: m.ones(2, 3, device="meta").new(2))
    check(lambda m: m.ones(2, 3, device="meta").new([1, 2]))
    check(lambda m: m.ones(2, 3, device="meta").new(device="cpu"))


def test_new_errors_name_new():
    raises_naming(RuntimeError, "new", lambda m: m.ones(2).new(-1))
    raises_naming(TypeError, "new()", lambda m: m.ones(2).new(2.5))
    raises_naming(TypeError, "new()", lambda m: m.ones(2).new(m.ones(2, dtype=m.int64)))


# ---------------------------------------------------------------------------------------------
# apply_, map_, map2_: Python callables, element by element.

@pytest.mark.parametrize("dtype", DTYPES)
def test_apply_and_map_values(dtype):
    def applied(m):
        d = getattr(m, dtype)
        x = m.arange(6).reshape(2, 3).to(d)
        y = m.arange(3).flip(0).to(d)
        seen = []
        x.apply_(lambda v: seen.append(type(v).__name__) or v)
        x.map_(y, lambda a, b: a if isinstance(a, bool) else a + b)
        x.map2_(y, m.ones(2, 1, dtype=d), lambda a, b, c: a if isinstance(a, bool) else a * 2 - b + c)
        return x, seen
    check(applied)


STORES = {
    "truncating float to int": ("int64", lambda v: 2.7),
    "truncating negative float": ("int64", lambda v: -2.7),
    "int division": ("int64", lambda v: v / 3),
    "int8 overflow": ("int8", lambda v: v * 200),
    "int8 float bound": ("int8", lambda v: 127.9),
    "int8 negative float bound": ("int8", lambda v: -128.9),
    "int32 overflow": ("int32", lambda v: 2**40),
    "int64 unpack overflow": ("int64", lambda v: 2**70),
    "int64 edge": ("int64", lambda v: 2.0**63),
    "nan to int": ("int64", lambda v: float("nan")),
    "inf to int": ("int64", lambda v: float("inf")),
    "uint8 wraps negative ints": ("uint8", lambda v: v - 2),
    "uint8 lowest wrap": ("uint8", lambda v: -255),
    "uint8 below the wrap": ("uint8", lambda v: -256),
    "uint8 overflow": ("uint8", lambda v: 256),
    "uint8 negative float": ("uint8", lambda v: -0.5),
    "NumPy int": ("int64", lambda v: np.int8(3)),
    "bool result to float": ("float32", lambda v: True),
    "float32 to inf": ("float32", lambda v: 1e50),
    "float16 to inf": ("float16", lambda v: 1e6),
    "bfloat16": ("bfloat16", lambda v: v + 0.001),
    "huge int to float": ("float32", lambda v: 2**1100),
    "NumPy float": ("float32", lambda v: np.float64(5.0)),
    "string to float": ("float32", lambda v: "3"),
    "None to float": ("float32", lambda v: None),
    "string to int": ("int64", lambda v: "a"),
    "NumPy float to int": ("int16", lambda v: np.float32(3.5)),
    "float to bool": ("bool", lambda v: 0.5),
    "negative int to bool": ("bool", lambda v: -5),
    "huge int to bool": ("bool", lambda v: 2**70),
    "None to bool": ("bool", lambda v: None),
    "not callable": ("float32", 3),
    "raising": ("float32", lambda v: 1 / 0),
}


@pytest.mark.parametrize("case", list(STORES))
def test_apply_converts_results_as_torch(case):
    dtype, fn = STORES[case]
    check(lambda m: m.ones(3, dtype=getattr(m, dtype)).apply_(fn))


def test_apply_with_tensor_results():
    check(lambda m: m.ones(3).apply_(lambda v: m.tensor(5.0)))
    check(lambda m: m.ones(3, dtype=m.int64).apply_(lambda v: m.tensor(3)))
    check(lambda m: m.ones(3, dtype=m.int64).apply_(lambda v: m.tensor(3.5)))


LAYOUTS = {
    "returns self and writes": lambda m: (lambda a: (a.apply_(lambda v: v * 2) is a, a))(m.arange(4.0)),
    "transposed": lambda m: m.arange(6.0).reshape(2, 3).t().apply_(lambda v: v + 1),
    "a strided view writes its base": lambda m: (lambda a: (a[::2].apply_(lambda v: v + 1), a))(m.arange(4.0)),
    "expanded: later elements see earlier writes": lambda m: m.arange(4.0).expand(2, 4).apply_(lambda v: v + 1),
    "0-d": lambda m: m.tensor(2.0).apply_(lambda v: v * 3),
    "empty": lambda m: m.ones(0).apply_(lambda v: 1 / 0),
    "meta calls nothing": lambda m: m.empty(4, device="meta").apply_(lambda v: 1 / 0),
    "meta checks no callable": lambda m: m.empty(4, device="meta").apply_(3),
    "map_ onto itself": lambda m: (lambda a: a.map_(a, lambda x, y: x + y))(m.arange(3.0)),
    "map_ broadcasts other": lambda m: m.ones(2, 3).map_(m.arange(3.0), lambda a, b: a + b),
    "map_ keywords": lambda m: m.ones(3).map_(other=m.arange(3.0), callable=lambda a, b: a - b),
    "map2_ keywords": lambda m: m.ones(3).map2_(x=m.ones(3), y=m.arange(3.0), callable=lambda a, b, c: a + c),
    "no version bump": lambda m: (lambda a: (a.apply_(lambda v: v), a.map_(a, lambda v, w: v), a._version))(
        m.ones(3)),
}


@pytest.mark.parametrize("case", list(LAYOUTS))
def test_apply_and_map_through_layouts(case):
    check(LAYOUTS[case])


MAP_ERRORS = {
    "apply_ keyword": (TypeError, None, lambda m: m.ones(3).apply_(callable=lambda v: v)),
    "requires grad": (RuntimeError, "apply_()", lambda m: m.ones(3, requires_grad=True).apply_(lambda v: v)),
    "meta requires grad": (RuntimeError, "apply_()",
                           lambda m: m.ones(3, device="meta", requires_grad=True).apply_(lambda v: v)),
    "other requires grad": (RuntimeError, "map_()",
                            lambda m: m.ones(3).map_(m.ones(3, requires_grad=True), lambda a, b: a)),
    "y requires grad": (RuntimeError, "map2_()",
                        lambda m: m.ones(3).map2_(m.ones(3), m.ones(3, requires_grad=True), lambda a, b, c: a)),
    "other dtype": (TypeError, "map_: expected", lambda m: m.ones(3).map_(m.arange(3), lambda a, b: a)),
    "y dtype": (TypeError, "map2_: expected .* for argument 'y'",
                lambda m: m.ones(3).map2_(m.ones(3), m.arange(3), lambda a, b, c: a)),
    "other device": (TypeError, "map_: expected", lambda m: m.ones(3).map_(m.ones(3, device="meta"), lambda a, b: a)),
    "other not a tensor": (TypeError, "map_()", lambda m: m.ones(3).map_(3, lambda a, b: a)),
    "y not a tensor": (TypeError, "map2_()", lambda m: m.ones(3).map2_(m.ones(3), 3, lambda a, b, c: a)),
    "other does not broadcast": (RuntimeError, "map_", lambda m: m.ones(2, 3).map_(m.ones(2), lambda a, b: a)),
    "other has more dims": (RuntimeError, "map_", lambda m: m.ones(3).map_(m.ones(2, 3), lambda a, b: a)),
    "x does not broadcast": (RuntimeError, "map2_",
                             lambda m: m.ones(3).map2_(m.ones(2), m.ones(3), lambda a, b, c: a)),
    "callable of one argument": (TypeError, None, lambda m: m.ones(3).map_(m.ones(3), lambda a: a)),
}


@pytest.mark.parametrize("case", list(MAP_ERRORS))
def test_apply_and_map_errors(case):
    error, op, fn = MAP_ERRORS[case]
    if op is None:
        check(fn)
    else:
        raises_naming(error, op, fn)


# ---------------------------------------------------------------------------------------------
# as_subclass and module_load.

class Sub(tp.Tensor):
    pass


class TorchSub(torch.Tensor):
    pass


def test_as_subclass_is_a_differentiable_view():
    for lib, cls in ((tp, Sub), (torch, TorchSub)):
        x = lib.arange(6.0).reshape(2, 3).t().requires_grad_()
        y = x.as_subclass(cls)
        assert type(y) is cls and y is not x and y.data_ptr() == x.data_ptr() and y.stride() == x.stride()
        assert y.requires_grad and not y.is_leaf
        (y * lib.arange(6.0).reshape(3, 2)).sum().backward()
        assert x.grad.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    check(lambda m: type(m.nn.Parameter(m.ones(2)).as_subclass(m.Tensor)).__name__)
    check(lambda m: type(m.ones(2).as_subclass(cls=m.nn.Parameter)).__name__)
    check(lambda m: (lambda a: (a.as_subclass(m.Tensor).add_(1), a))(m.ones(2)))
    raises_naming(TypeError, "cls must be a type", lambda m: m.ones(2).as_subclass(3))
    raises_naming(TypeError, "does not inherit from Tensor", lambda m: m.ones(2).as_subclass(int))


MODULE_LOADS = {
    "copies": lambda m: (lambda a, b: (a.module_load(b), a, a.module_load(b) is a))(m.ones(2), m.zeros(2)),
    "casts": lambda m: (lambda a, b: (a.module_load(b), a))(m.ones(2), m.arange(2)),
    "assign": lambda m: (lambda a, b: (a.module_load(b, assign=True), a.module_load(b, True) is b, a))(
        m.ones(2), m.zeros(2, dtype=m.float64)),
    "detaches": lambda m: m.ones(2).module_load(m.zeros(2, requires_grad=True), assign=True).requires_grad,
    "a leaf that requires grad": lambda m: m.ones(2, requires_grad=True).module_load(m.zeros(2)),
    "shapes differ": lambda m: m.ones(2).module_load(m.zeros(3)),
}


@pytest.mark.parametrize("case", list(MODULE_LOADS))
def test_module_load(case):
    check(MODULE_LOADS[case])


# ---------------------------------------------------------------------------------------------
# Copies to devices without kernels: xpu, ipu, mtia are refused as PyTorch's CPU build refuses them
# (the same kinds of error; the message says tensorplay was built without the device, as for CUDA).

DEVICE_COPY_ARGUMENTS = {
    "none": lambda m, t, op: getattr(t, op)(),
    "an index": lambda m, t, op: getattr(t, op)(0),
    "the cpu": lambda m, t, op: getattr(t, op)("cpu"),
    "the cpu device": lambda m, t, op: getattr(t, op)(m.device("cpu")),
    "no device": lambda m, t, op: getattr(t, op)("foo"),
    "a float device": lambda m, t, op: getattr(t, op)(1.5),
    "a bool device": lambda m, t, op: getattr(t, op)(True),
    "non_blocking": lambda m, t, op: getattr(t, op)(non_blocking=True),
    "an int non_blocking": lambda m, t, op: getattr(t, op)(non_blocking=1),
    "a memory format": lambda m, t, op: getattr(t, op)(memory_format=m.channels_last),
    "an int memory format": lambda m, t, op: getattr(t, op)(memory_format=1),
    "an unknown keyword": lambda m, t, op: getattr(t, op)(foo=1),
    "three positional": lambda m, t, op: getattr(t, op)(None, False, None),
}


@pytest.mark.parametrize("op", ["xpu", "ipu", "mtia"])
@pytest.mark.parametrize("case", list(DEVICE_COPY_ARGUMENTS))
def test_copies_to_devices_without_kernels_are_refused_as_torch(op, case):
    check(lambda m: DEVICE_COPY_ARGUMENTS[case](m, m.ones(2), op))
    check(lambda m: DEVICE_COPY_ARGUMENTS[case](m, m.ones(2, device="meta"), op))


@pytest.mark.parametrize("op", ["xpu", "mtia"])  # (torch's ipu("ipu:1") fails in its dispatcher instead)
def test_copies_to_a_device_of_their_own_kind_are_refused_as_torch(op):
    check(lambda m: getattr(m.ones(2), op)(f"{op}:1"))


@pytest.mark.parametrize("op, error, device", [("xpu", AssertionError, "XPU"), ("ipu", RuntimeError, "IPU"),
                                               ("mtia", AssertionError, "MTIA")])
def test_copies_to_devices_without_kernels_say_so(op, error, device):
    with pytest.raises(error, match=f"^tensorplay was built without {device} support$"):
        getattr(tp.ones(2), op)()
    raises_naming(RuntimeError, f"Invalid device, must be {'MTIA' if op == 'mtia' else op} device",
                  lambda m: getattr(m.ones(2), op)("cpu"))
    raises_naming(TypeError, f"{op}(): argument 'non_blocking' must be bool, not int",
                  lambda m: getattr(m.ones(2), op)(non_blocking=1))
    raises_naming(TypeError, f"{op}(): argument 'device' (position 1) must be torch.device, not float",
                  lambda m: getattr(m.ones(2), op)(1.5))
    raises_naming(RuntimeError, "Cannot access accelerator device when none is available.",
                  lambda m: getattr(m.ones(2), op)(0))


# ---------------------------------------------------------------------------------------------
# What a dense tensor answers to the calls made for sparse and quantized tensors.

TO_DENSE = {
    "itself": lambda m: (lambda t: (t.to_dense(), t.to_dense() is t))(m.arange(6.0).reshape(2, 3)),
    "its own dtype": lambda m: (lambda t: t.to_dense(dtype=m.float32) is t)(m.ones(2)),
    "None dtype": lambda m: (lambda t: t.to_dense(None) is t)(m.ones(2)),
    "another dtype": lambda m: m.arange(6.0).to_dense(m.float64),
    "an integer tensor to float": lambda m: m.arange(3).to_dense(dtype=m.float32),
    "masked_grad": lambda m: [(lambda t: t.to_dense(masked_grad=g) is t)(m.ones(2)) for g in (True, False, None)],
    "an int masked_grad": lambda m: m.ones(2).to_dense(masked_grad=1),
    "a string dtype": lambda m: m.ones(2).to_dense(dtype="float"),
    "an unknown keyword": lambda m: m.ones(2).to_dense(foo=1),
    "two positional": lambda m: m.ones(2).to_dense(m.float64, True),
    "meta": lambda m: m.empty(2, 3, device="meta").to_dense(m.float64),
    "dense_dim": lambda m: [m.ones(()).dense_dim(), m.ones(2, 3).dense_dim(),
                            m.empty(2, 3, 4, device="meta").dense_dim()],
    "sparse_dim": lambda m: [m.ones(()).sparse_dim(), m.ones(2, 3).sparse_dim()],
    "dense_dim with an argument": lambda m: m.ones(2).dense_dim(1),
    "sparse_dim with an argument": lambda m: m.ones(2).sparse_dim(1),
}


@pytest.mark.parametrize("case", list(TO_DENSE))
def test_to_dense_and_dims_as_torch(case):
    check(TO_DENSE[case])


def test_to_dense_gradients():
    for m in (torch, tp):
        x = m.ones(2, requires_grad=True)
        assert x.to_dense() is x
        y = x.to_dense(dtype=m.float64)
        assert y.requires_grad and y.dtype == m.float64
        (y * 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == m.float32


DEQUANTIZE = {
    "float32 is itself": lambda m: (lambda t: (m.dequantize(t) is t, t.dequantize() is t))(m.arange(3.0)),
    "float32 requiring grad is itself": lambda m: (lambda t: t.dequantize() is t)(m.ones(2, requires_grad=True)),
    **{f"{dtype} to float32": (lambda dtype: lambda m: m.dequantize(m.tensor([0, 1, 2]).to(getattr(m, dtype))))(dtype)
       for dtype in DTYPES},
    "the method": lambda m: m.tensor([1.5, -2.0], dtype=m.float64).dequantize(),
    "the input keyword": lambda m: m.dequantize(input=m.arange(3)),
    "a list of tensors": lambda m: m.dequantize([m.ones(1)]),
    "a tuple of tensors": lambda m: m.dequantize((m.ones(1), m.ones(2))),
    "an int": lambda m: m.dequantize(3),
    "two tensors": lambda m: m.dequantize(m.ones(1), m.ones(1)),
    "the method with an argument": lambda m: m.ones(1).dequantize(1),
    "meta": lambda m: m.dequantize(m.empty(2, device="meta", dtype=m.float64)),
    "no derivative": lambda m: m.ones(2, dtype=m.float64, requires_grad=True).dequantize().sum().backward(),
    "no record without grad mode": lambda m: without_grad(
        m, lambda: m.ones(2, dtype=m.float64, requires_grad=True).dequantize().requires_grad),
}


def without_grad(m, fn):
    with m.no_grad():
        return fn()


@pytest.mark.parametrize("case", list(DEQUANTIZE))
def test_dequantize_of_tensors_that_are_not_quantized(case):
    check(DEQUANTIZE[case])


def test_dequantize_without_a_derivative_says_so():
    x = tp.ones(2, dtype=tp.float64, requires_grad=True)
    y = x.dequantize()
    assert y.requires_grad and y.dtype == tp.float32
    with pytest.raises(RuntimeError, match="^derivative for dequantize is not implemented$"):
        y.sum().backward()
    with tp.no_grad():
        assert not x.dequantize().requires_grad


# ---------------------------------------------------------------------------------------------
# Functions PyTorch removed: they raise, with PyTorch's text on what replaces them.

REMOVED = {
    "Tensor.eig": lambda m: m.ones(2, 2).eig(),
    "Tensor.eig with eigenvectors": lambda m: m.ones(2, 2).eig(True),
    "Tensor.eig by keyword": lambda m: m.ones(2, 2).eig(eigenvectors=True),
    "Tensor.lstsq": lambda m: m.ones(2, 2).lstsq(m.ones(2, 2)),
    "Tensor.solve": lambda m: m.ones(2, 2).solve(m.ones(2, 2)),
    "Tensor.symeig": lambda m: m.ones(2, 2).symeig(),
    "Tensor.symeig with eigenvectors": lambda m: m.ones(2, 2).symeig(True),
    "Tensor.reinforce": lambda m: m.ones(2).reinforce(1.0),
    "torch.eig": lambda m: m.eig(m.ones(2, 2), True),
    "torch.lstsq": lambda m: m.lstsq(m.ones(2, 2), m.ones(2, 2)),
    "torch.solve": lambda m: m.solve(m.ones(2, 2), m.ones(2, 2), out=None),
    "torch.symeig": lambda m: m.symeig(m.ones(2, 2), True, False),
    "torch.matrix_rank": lambda m: m.matrix_rank(m.ones(2, 2)),
    "unbound Tensor.eig": lambda m: m.Tensor.eig(1),
}


def full_outcome(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", list(REMOVED))
def test_removed_functions_raise_torch_errors(case):
    theirs, ours = full_outcome(torch, REMOVED[case]), full_outcome(tp, REMOVED[case])
    assert theirs is not None and ours == theirs


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2).solve(), lambda m: m.ones(2).lstsq(), lambda m: m.ones(2).reinforce(),
    lambda m: m.ones(2).eig(foo=True), lambda m: m.ones(2).symeig(True, False), lambda m: m.eig(),
    lambda m: m.ones(2).eig(e=None),
])
def test_removed_functions_take_their_arguments_as_torch(call):
    theirs, ours = full_outcome(torch, call), full_outcome(tp, call)
    assert theirs[0] is TypeError and ours == theirs

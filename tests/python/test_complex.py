"""complex64 and complex128: creation, printing, promotion, arithmetic, matmul, reductions, the views
between complex and real tensors, and gradients in PyTorch's convention, each checked against PyTorch."""

import math

import numpy as np
import pytest
import torch

import tensorplay as tp

COMPLEX = ["complex64", "complex128"]


def ours(t):
    return tp.from_numpy(t.detach().numpy().copy())


def check(got, expected, rtol=None, atol=None):
    """got (a tensorplay tensor) equals expected (a torch tensor) in dtype, shape and value."""
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(expected.shape)
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), expected.detach(), rtol=rtol, atol=atol,
                               equal_nan=True)


def sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=getattr(torch, dtype), generator=g)


# ---- dtypes and creation ----

def test_dtype_objects():
    assert tp.cfloat is tp.complex64 and tp.cdouble is tp.complex128
    assert tp.complex64.is_complex and not tp.complex64.is_floating_point and tp.complex128.itemsize == 16
    assert not tp.float32.is_complex
    assert tp.complex64.to_real() == tp.float32 and tp.float64.to_complex() == tp.complex128
    with pytest.raises(RuntimeError, match="Complex ScalarType"):
        tp.int64.to_complex()


@pytest.mark.parametrize("data", [[1 + 2j, 3 - 1j], [[1j], [2]], 2.5j, [1, 2.5, 1j]])
def test_tensor_from_python_complex_numbers(data):
    check(tp.tensor(data), torch.tensor(data))
    check(tp.tensor(data, dtype=tp.complex128), torch.tensor(data, dtype=torch.complex128))


def test_default_complex_dtype_follows_the_default_float_dtype():
    tp.set_default_dtype(tp.float64)
    try:
        assert tp.tensor([1j]).dtype == tp.complex128
        assert (tp.ones(2) * 1j).dtype == tp.complex128
    finally:
        tp.set_default_dtype(tp.float32)
    assert tp.tensor([1j]).dtype == tp.complex64


@pytest.mark.parametrize("dtype", COMPLEX)
def test_factories(dtype):
    assert tp.zeros(2, 3, dtype=getattr(tp, dtype)).tolist() == [[0j] * 3] * 2
    check(tp.ones(3, dtype=getattr(tp, dtype)), torch.ones(3, dtype=getattr(torch, dtype)))
    check(tp.full((2,), 1 - 2j), torch.full((2,), 1 - 2j))
    check(tp.full((2,), 3, dtype=getattr(tp, dtype)), torch.full((2,), 3, dtype=getattr(torch, dtype)))
    check(tp.eye(2, dtype=getattr(tp, dtype)), torch.eye(2, dtype=getattr(torch, dtype)))


def test_randn_parts_have_half_the_variance():
    tp.manual_seed(0)
    z = tp.randn(200_000, dtype=tp.complex64)
    assert z.dtype == tp.complex64
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    assert abs((z.abs() ** 2).mean().item() - 1) < 0.02
    u = tp.rand(100_000, dtype=tp.complex128)
    assert 0 <= u.real.min().item() and u.imag.max().item() < 1 and abs(u.imag.mean().item() - 0.5) < 0.01


def test_numpy_round_trip_shares_memory():
    array = np.array([1 + 2j, -3j], dtype=np.complex64)
    t = tp.from_numpy(array)
    assert t.dtype == tp.complex64
    t[0] = 5j
    assert array[0] == 5j
    assert t.numpy().dtype == np.complex64 and t.numpy().tolist() == [5j, -3j]


def test_item_and_python_conversions():
    z = tp.tensor(1.5 - 2j)
    assert z.item() == 1.5 - 2j and complex(z) == 1.5 - 2j
    with pytest.raises(TypeError):
        int(z)


# ---- printing ----

@pytest.mark.parametrize("data", [[1 + 2j, 3 - 1j], [[0.5 + 1j, -2.25 - 0.125j], [1e-5 + 1j, 3 + 0j]], 1.5 - 1j,
                                  [[1e10 + 1j, 2j]]])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_repr_matches_pytorch(data, dtype):
    same_repr(tp.tensor(data, dtype=getattr(tp, dtype)), torch.tensor(data, dtype=getattr(torch, dtype)))


def same_repr(got, expected):
    # The values as PyTorch lays them out; then the dtype, where PyTorch names it ("tensorplay" is longer
    # than "torch", so the suffix may wrap differently).
    def parts(text):
        body, _, suffix = text.partition("dtype=")
        return body.rstrip(", \n"), suffix
    body, suffix = parts(repr(got))
    expected_body, expected_suffix = parts(repr(expected))
    assert body == expected_body and suffix == expected_suffix.replace("torch.", "tensorplay.")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_repr_of_a_long_complex_vector_matches_pytorch(dtype):
    values = torch.arange(40, dtype=getattr(torch, dtype).to_real()).reshape(20, 2)
    same_repr(tp.view_as_complex(ours(values)), torch.view_as_complex(values))
    values = torch.arange(4000, dtype=getattr(torch, dtype).to_real()).reshape(20, 100, 2) / 7
    same_repr(tp.view_as_complex(ours(values)), torch.view_as_complex(values))


# ---- promotion ----

@pytest.mark.parametrize("a,b", [("complex64", "float64"), ("complex64", "float16"), ("complex64", "int64"),
                                 ("complex128", "float32"), ("complex64", "complex128"), ("bool", "complex64")])
def test_promote_types(a, b):
    assert str(tp.promote_types(getattr(tp, a), getattr(tp, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch", "tensorplay")


@pytest.mark.parametrize("real", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("zero_dim", [False, True])
def test_result_type_across_tiers(real, zero_dim):
    x = torch.ones(3, dtype=getattr(torch, real))
    z = torch.tensor(1j) if zero_dim else torch.ones(3, dtype=torch.complex64)
    check(ours(x) + ours(z), x + z)
    check(ours(x) * 2j, x * 2j)


# ---- arithmetic ----

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "rdiv": lambda a, b: 1.5 / a,
    "alpha": lambda a, b: a.add(b, alpha=2),
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
}


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("other", ["complex", "float", "number", "complex_number"])
def test_binary_ops(op, dtype, other):
    a = sample((3, 4), dtype)
    b = {"complex": sample((4,), dtype, 1), "float": sample((3, 1), "float32", 2),
         "number": torch.tensor(2.5), "complex_number": torch.tensor(0.5 - 1.5j)}[other]
    b_ours = ours(b) if other in ("complex", "float") else b.item()
    b_theirs = b if other in ("complex", "float") else b.item()
    check(BINARY[op](ours(a), b_ours), BINARY[op](a, b_theirs))
    # A complex result is written in place into a complex tensor.
    if op in ("add", "sub", "mul", "div"):
        x = ours(a)
        getattr(x, op + "_")(b_ours)
        check(x, getattr(a.clone(), op + "_")(b_theirs))


@pytest.mark.parametrize("op", ["neg", "exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "sin",
                                "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "square", "abs", "angle", "conj",
                                "sgn", "isnan", "isfinite", "isinf"])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_unary_ops(op, dtype):
    z = sample((5, 3), dtype)
    z[0, 0] = complex(float("nan"), 1)
    z[1, 1] = complex(float("inf"), 0) if op.startswith("is") else 0j
    z[1, 2] = 0j
    check(getattr(tp, op)(ours(z)), getattr(torch, op)(z).resolve_conj())


def test_tanh_of_a_large_real_part_is_one():
    z = torch.tensor([40 + 1j, -40 - 3j, 400 + 0.5j], dtype=torch.complex128)
    check(tp.tanh(ours(z)), torch.tanh(z))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("exponent", [2, 3, 0.5, 0, 1, -1.5, 1 + 1j, "tensor", "real_base", "number_base"])
def test_pow(dtype, exponent):
    z = sample((3, 4), dtype)
    if exponent == "tensor":
        w = sample((4,), dtype, 1)
        check(ours(z) ** ours(w), z ** w)
    elif exponent == "real_base":
        x = sample((4,), "float32", 1).abs()
        check(ours(x) ** ours(z), x ** z)
    elif exponent == "number_base":
        check(2.5 ** ours(z), 2.5 ** z)
        check((1 - 1j) ** ours(z), (1 - 1j) ** z)
    else:
        check(ours(z) ** exponent, z ** exponent)
        check(ours(z).pow_(exponent), z.clone().pow_(exponent))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_imag_and_views(dtype):
    z = sample((2, 3), dtype)
    zt = ours(z)
    check(zt.real, z.real)
    check(zt.imag, z.imag)
    check(tp.real(zt), torch.real(z))
    check(tp.view_as_real(zt), torch.view_as_real(z))
    # The views share memory: writes reach the complex tensor.
    zt.real[0, 0] = 7
    zt.imag = tp.zeros(2, 3, dtype=zt.real.dtype)
    assert zt[0, 0].item() == 7 and zt.imag.abs().sum().item() == 0
    pairs = tp.arange(8.0, dtype=zt.real.dtype).reshape(2, 2, 2)
    c = tp.view_as_complex(pairs)
    assert c.dtype == getattr(tp, dtype) and c.tolist() == [[1j, 2 + 3j], [4 + 5j, 6 + 7j]]
    x = tp.ones(3)
    assert tp.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag


def test_view_as_complex_errors():
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        tp.view_as_complex(tp.ones(3, 3))
    with pytest.raises(RuntimeError, match="stride 1"):
        tp.view_as_complex(tp.ones(2, 3).t())
    with pytest.raises(RuntimeError, match="divisible by 2"):
        tp.view_as_complex(tp.ones(3, 3)[:, :2])
    with pytest.raises(RuntimeError, match="half, float and double"):
        tp.view_as_complex(tp.ones(3, 2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        tp.view_as_real(tp.ones(2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_and_polar(dtype):
    re, im = sample((3, 1), dtype), sample((4,), dtype, 1)
    check(tp.complex(ours(re), ours(im)), torch.complex(re, im))
    check(tp.polar(ours(re).abs(), ours(im)), torch.polar(re.abs(), im))
    out = tp.empty(0, dtype=getattr(tp, dtype).to_complex())
    tp.complex(ours(re), ours(im), out=out)
    check(out, torch.complex(re, im))


def test_complex_errors_name_the_dtypes():
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double tensors but got int64"):
        tp.complex(tp.ones(2, dtype=tp.int64), tp.ones(2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="scalar type float32 but got scalar type float64"):
        tp.complex(tp.ones(2), tp.ones(2, dtype=tp.float64))


def test_ops_without_a_complex_form_say_so():
    z = tp.ones(3, dtype=tp.complex64)
    for op in (lambda: z < z, lambda: z.sign(), lambda: z.relu(), lambda: z.floor(), lambda: z.asin(),
               lambda: z.amax()):
        with pytest.raises(NotImplementedError, match="complex64"):
            op()
    for op in (lambda: z.cummax(0), lambda: tp.cummin(z, 0)):  # (their messages name the dtype as PyTorch's do)
        with pytest.raises(NotImplementedError, match="ComplexFloat"):
            op()
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
        z.abs_()
    with pytest.raises(RuntimeError, match="can't be cast"):
        tp.ones(3).add_(z)


# ---- reductions and products ----

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("dims,keepdim", [((), False), ((0,), False), ((-1,), True), ((0, 2), False)])
def test_sum_and_mean(dtype, dims, keepdim):
    z = sample((3, 4, 5), dtype)
    if dims:
        check(ours(z).sum(dims, keepdim=keepdim), z.sum(dims, keepdim=keepdim))
        check(ours(z).mean(dims, keepdim=keepdim), z.mean(dims, keepdim=keepdim))
    else:
        check(ours(z).sum(), z.sum())
        check(ours(z).mean(), z.mean())
    check(ours(z.real).sum(dtype=tp.complex128), z.real.sum(dtype=torch.complex128))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_prod_cumsum_and_spreads(dtype, dim):
    z = sample((3, 5, 4), dtype) * 0.8
    if dim is None:
        check(ours(z).prod(), z.prod())
        check(ours(z).var(), z.var())
        check(ours(z).std(), z.std())
        check(ours(z).norm(), z.norm())
        check(tp.linalg.vector_norm(ours(z), 3), torch.linalg.vector_norm(z, 3))
    else:
        check(ours(z).prod(dim), z.prod(dim))
        check(ours(z).prod(dim, keepdim=True), z.prod(dim, keepdim=True))
        check(ours(z).cumsum(dim), z.cumsum(dim))
        check(ours(z).var(dim, correction=0), z.var(dim, correction=0))
        check(ours(z).std(dim, keepdim=True), z.std(dim, keepdim=True))
    check(tp.dist(ours(z), ours(z) * 1j), torch.dist(z, z * 1j))
    check(ours(z[:, :0]).prod(1), z[:, :0].prod(1))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (4,)), ((3, 4), (4,)),
                                    ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul(dtype, shapes):
    a, b = sample(shapes[0], dtype), sample(shapes[1], dtype, 1)
    check(ours(a) @ ours(b), a @ b)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_dot_vdot_and_conjugate_transposes(dtype):
    a, b = sample((4,), dtype), sample((4,), dtype, 1)
    check(tp.dot(ours(a), ours(b)), torch.dot(a, b))
    check(tp.vdot(ours(a), ours(b)), torch.vdot(a, b))
    m = sample((2, 3), dtype)
    check(ours(m).mH, m.mH.resolve_conj())
    check(ours(m).H, m.H.resolve_conj())
    check(ours(m).adjoint(), m.adjoint().resolve_conj())


def test_shape_ops_move_complex_elements():
    z = sample((3, 4), "complex64")
    check(ours(z).t().contiguous(), z.t().contiguous())
    check(ours(z)[1:, ::2].clone(), z[1:, ::2].clone())
    check(ours(z).reshape(2, 6), z.reshape(2, 6))
    check(tp.cat([ours(z), ours(z)]), torch.cat([z, z]))
    check(tp.stack([ours(z), ours(z)], 1), torch.stack([z, z], 1))
    check(ours(z).to(tp.complex128), z.to(torch.complex128))
    check(ours(z).real.to(tp.complex64), z.real.to(torch.complex64))


def test_cast_to_real_keeps_the_real_part():
    z = tp.tensor([1.5 + 2j, -3 - 1j])
    assert z.to(tp.float64).tolist() == [1.5, -3.0]
    assert z.to(tp.bool).tolist() == [True, True]
    assert tp.tensor([0j, 1j]).to(tp.bool).tolist() == [False, True]


# ---- autograd: PyTorch's convention, dL/dRe + i dL/dIm for a real loss L ----

LOSSES = {
    "abs_squared": lambda z, w: (z * z.conj()).real.sum(),
    "product": lambda z, w: (z * w).abs().sum(),
    "quotient": lambda z, w: (z / w).real.sum() + (z / w).imag.sum(),
    "matmul": lambda z, w: torch.view_as_real(z.reshape(2, 3) @ w.reshape(3, 2)).pow(2).sum()
    if isinstance(z, torch.Tensor) else tp.view_as_real(z.reshape(2, 3) @ w.reshape(3, 2)).pow(2).sum(),
    "exp_log": lambda z, w: (z.exp() + (w * w).log()).angle().sum(),
    "sum_mean": lambda z, w: (z.sum() * w.mean()).abs(),
    "rotary": lambda z, w: (z * torch.polar(torch.ones(6, dtype=torch.float64), w.real)).real.sum()
    if isinstance(z, torch.Tensor) else (z * tp.polar(tp.ones(6, dtype=tp.float64), w.real)).real.sum(),
}


@pytest.mark.parametrize("loss", LOSSES)
def test_gradients_match_pytorch(loss):
    z, w = sample((6,), "complex128"), sample((6,), "complex128", 1)
    zt, wt = z.clone().requires_grad_(), w.clone().requires_grad_()
    LOSSES[loss](zt, wt).backward()
    za, wa = ours(z).requires_grad_(), ours(w).requires_grad_()
    LOSSES[loss](za, wa).backward()
    check(za.grad, zt.grad)
    if wt.grad is None:
        assert wa.grad is None
    else:
        check(wa.grad, wt.grad)


def test_gradient_is_finite_differences_of_the_parts():
    z = sample((4,), "complex128")
    za = ours(z).requires_grad_()
    loss = lambda t: ((t * t).sin().abs() ** 2).sum()  # noqa: E731
    loss(za).backward()
    eps = 1e-6
    for i in range(4):
        for step, part in ((eps, "real"), (eps * 1j, "imag")):
            bumped = ours(z)
            up, down = bumped.clone(), bumped.clone()
            up[i] = up[i].item() + step
            down[i] = down[i].item() - step
            slope = (loss(up).item() - loss(down).item()) / (2 * eps)
            got = za.grad[i].item().real if part == "real" else za.grad[i].item().imag
            assert math.isclose(got, slope, rel_tol=1e-5, abs_tol=1e-6)


def test_real_input_gets_the_real_part_of_the_gradient():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1 + 2j, -1j, 3 + 0j], dtype=torch.complex128)
    (x * w).abs().sum().backward()
    xa = ours(x.detach()).requires_grad_()
    (xa * ours(w)).abs().sum().backward()
    check(xa.grad, x.grad)


def test_backward_of_a_complex_output_needs_a_gradient():
    z = tp.ones(1, dtype=tp.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * 2).sum().backward()
    (z * (1 + 1j)).backward(tp.tensor([1 - 1j]))
    expected = torch.ones(1, dtype=torch.complex64, requires_grad=True)
    (expected * (1 + 1j)).backward(torch.tensor([1 - 1j]))
    check(z.grad, expected.grad)


def test_in_place_write_to_a_real_view_under_autograd_is_refused():
    z = tp.ones(2, dtype=tp.complex64, requires_grad=True) * 1
    with pytest.raises(NotImplementedError, match="in-place operation on a float32 view of a complex64"):
        z.real.mul_(2)


def test_autocast_leaves_complex_tensors_alone():
    a, b = sample((3, 3), "complex64"), sample((3, 3), "complex64", 1)
    with tp.autocast("cpu"):
        out = ours(a) @ ours(b)
    check(out, a @ b)


def test_names_around_the_complex_dtypes():
    x = tp.tensor([1.0, -2.0])
    assert x.cfloat().dtype == tp.complex64 and x.cdouble().dtype == tp.complex128
    assert x.cfloat().type() == "tensorplay.ComplexFloatTensor"
    assert x.type("torch.ComplexDoubleTensor").dtype == tp.complex128
    assert tp.finfo(tp.complex64).eps == torch.finfo(torch.complex64).eps
    assert tp.finfo(tp.complex128).bits == 64
    z = tp.tensor([[1 + 2j]])
    pairs = tp.view_as_real_copy(z)
    assert pairs.tolist() == [[[1.0, 2.0]]] and pairs.data_ptr() != z.data_ptr()
    assert tp.view_as_complex_copy(pairs).tolist() == [[1 + 2j]]
    assert tp.is_complex(z) and z.is_complex() and not tp.is_complex(x) and not z.is_conj()
    check(tp.sgn(tp.tensor([3 + 4j, 0j])), torch.sgn(torch.tensor([3 + 4j, 0j])))


COMPLEX_FUNCTIONS = {
    "arithmetic": lambda z, w: (z * w - w / (z + 2)) * 1.5j,
    "exp_log_sqrt": lambda z, w: (z.exp() + w.log()).sqrt(),
    "trig": lambda z, w: z.sin() * w.cos(),
    "matmul": lambda z, w: z.reshape(2, 2) @ w.reshape(2, 2),
    "to_real": lambda z, w: (z.abs() + w.angle(), z.real * w.imag),
    "from_real": lambda z, w: tp.polar(z.abs(), w.real) if isinstance(z, tp.Tensor)
    else torch.polar(z.abs(), w.real),
    "reductions": lambda z, w: (z.sum(0), w.mean(), z.prod(), w.var()),
    "powers": lambda z, w: (z ** w, z ** 2.5, 1.5 ** w, z.tanh(), w.sigmoid()),
    "views": lambda z, w: tp.view_as_complex(tp.view_as_real(z).flip(-1).contiguous()) * w
    if isinstance(z, tp.Tensor) else torch.view_as_complex(torch.view_as_real(z).flip(-1).contiguous()) * w,
}


@pytest.mark.parametrize("fn", COMPLEX_FUNCTIONS)
def test_complex_gradcheck(fn):
    z, w = sample((4,), "complex128") + 3, sample((4,), "complex128", 1) + 3
    assert torch.autograd.gradcheck(COMPLEX_FUNCTIONS[fn], (z.requires_grad_(), w.requires_grad_()))
    assert tp.autograd.gradcheck(COMPLEX_FUNCTIONS[fn], (ours(z).requires_grad_(), ours(w).requires_grad_()))


def test_complex_gradgradcheck():
    z, w = sample((3,), "complex128"), sample((3,), "complex128", 1)
    assert tp.autograd.gradgradcheck(lambda a, b: a * b * a.exp(), (ours(z).requires_grad_(), ours(w).requires_grad_()))


def test_gradcheck_catches_a_wrong_complex_gradient():
    class Conjugated(tp.autograd.Function):  # claims d(z * 2)/dz without the conjugation convention
        @staticmethod
        def forward(ctx, z):
            return z * (1 + 1j)

        @staticmethod
        def backward(ctx, g):
            return g * (1 + 1j)

    z = ours(sample((3,), "complex128")).requires_grad_()
    assert not tp.autograd.gradcheck(Conjugated.apply, (z,), raise_exception=False)


def test_testing_helpers_know_complex():
    z = tp.tensor([1 + 2j, 3j])
    tp.testing.assert_close(z, z + 1e-7j)
    with pytest.raises(AssertionError, match="not close"):
        tp.testing.assert_close(z, z + 1e-3j)
    m = tp.testing.make_tensor((50,), dtype=tp.complex128, device="cpu", low=-1, high=1, requires_grad=True)
    assert m.dtype == tp.complex128 and m.requires_grad
    assert m.real.abs().max().item() <= 1 and m.imag.abs().max().item() <= 1 and m.imag.abs().sum().item() > 0


def test_masked_writes_and_selection():
    z = sample((4, 3), "complex64")
    mask = z.real > 0
    expected = z.clone()
    expected[mask] = 2j
    got = ours(z)
    got[ours(mask)] = 2j
    check(got, expected)
    check(tp.where(ours(mask), ours(z), 1.5), torch.where(mask, z, 1.5))
    check(ours(z).masked_fill(ours(mask), 1 - 1j), z.masked_fill(mask, 1 - 1j))
    for op in (lambda m, x: m.addcmul(x, x, x), lambda m, x: m.lerp(x, x, 0.5)):
        with pytest.raises(NotImplementedError, match="complex64"):
            op(tp, ours(z))


def test_casting_to_a_real_dtype_warns_that_the_imaginary_part_is_dropped():
    z = tp.tensor([1.5 + 2j])
    for cast in (lambda: z.float(), lambda: z.to(tp.float64), lambda: z.to("cpu", tp.int64), lambda: z.type_as(tp.ones(1))):
        with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
            cast()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z.to(tp.complex128)
        z.cfloat()
        tp.ones(1).to(tp.float64)

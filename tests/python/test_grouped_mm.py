"""nn.functional.grouped_mm (the matmul of mixture-of-experts layers) against torch: each of its four
operand forms, in each dtype torch takes, the errors torch gives, and gradients (torch's own backward
fails on the CPU, so they are checked against the same products written per group in torch)."""

import pytest
import torch

import tensorplay
from nn_testing import assert_same

K, N = 8, 16
OFFS = [2, 6]  # two groups: rows (or K, or columns) 0:2 and 2:6


def case(form, dtype):
    """(mat_a, mat_b, offs) in torch for one form of grouped_mm."""
    g = torch.Generator().manual_seed(0)
    offs = torch.tensor(OFFS, dtype=torch.int32)
    if form == "2d_3d":
        return torch.randn(7, K, generator=g).to(dtype), torch.randn(2, K, N, generator=g).to(dtype), offs
    if form == "3d_2d":
        return (torch.randn(2, 5, K, generator=g).to(dtype), torch.randn(N, K, generator=g).to(dtype).t(),
                torch.tensor([8, 12], dtype=torch.int32))
    if form == "2d_2d":
        return torch.randn(N, K, generator=g).to(dtype), torch.randn(K, N, generator=g).to(dtype), offs
    return torch.randn(2, 3, K, generator=g).to(dtype), torch.randn(2, K, N, generator=g).to(dtype), None


def to_tp(t):
    return None if t is None else tensorplay.tensor(t.float().numpy()).to(getattr(tensorplay, str(t.dtype)[6:]))


def per_group(a, b, offs):
    """The products grouped_mm stands for, written with torch's matmul group by group."""
    if offs is None:
        return torch.bmm(a, b)
    ends = offs.tolist()
    starts = [0] + ends[:-1]
    if a.dim() == 2 and b.dim() == 3:
        rows = [a[s:e] @ b[i] for i, (s, e) in enumerate(zip(starts, ends))]
        return torch.cat(rows + [torch.zeros(a.shape[0] - ends[-1], b.shape[2], dtype=a.dtype)])
    if a.dim() == 3:
        cols = [a[i] @ b[:, s:e] for i, (s, e) in enumerate(zip(starts, ends))]
        return torch.cat(cols + [torch.zeros(a.shape[1], b.shape[1] - ends[-1], dtype=a.dtype)], 1)
    return torch.stack([a[:, s:e] @ b[s:e] for s, e in zip(starts, ends)])


FORMS = ["2d_3d", "3d_2d", "2d_2d", "3d_3d"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_values_match_torch(form, dtype):
    a, b, offs = case(form, dtype)
    expected = torch.nn.functional.grouped_mm(a, b, offs=offs)
    got = tensorplay.nn.functional.grouped_mm(to_tp(a), to_tp(b), offs=to_tp(offs))
    assert str(got.dtype)[11:] == str(expected.dtype)[6:]
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    # torch leaves the rows (columns) past offs[-1] unset; tensorplay's are zeros
    covered = {"2d_3d": (slice(0, 6),), "3d_2d": (slice(None), slice(0, 12))}.get(form, ())
    assert_same(got[covered], expected[covered], rtol=tol, atol=tol)
    assert_same(got, per_group(a, b, offs), rtol=tol, atol=tol)


@pytest.mark.parametrize("form", FORMS)
def test_gradients_match_the_products_per_group(form):
    a, b, offs = case(form, torch.float32)  # torch's grouped_mm refuses float64
    a.requires_grad_()
    b.requires_grad_()
    upstream = torch.randn(per_group(a, b, offs).shape)
    (per_group(a, b, offs) * upstream).sum().backward()
    x, w = to_tp(a.detach()).requires_grad_(), to_tp(b.detach()).requires_grad_()
    (tensorplay.nn.functional.grouped_mm(x, w, offs=to_tp(offs)) * to_tp(upstream)).sum().backward()
    assert_same(x.grad, a.grad, rtol=1e-5, atol=1e-5)
    assert_same(w.grad, b.grad, rtol=1e-5, atol=1e-5)


ERRORS = [
    ("no offsets with a 2-D operand", lambda lib, a, b, o: dict(mat_a=a, mat_b=b), "2d_3d"),
    ("int64 offsets", lambda lib, a, b, o: dict(mat_a=a, mat_b=b, offs=o.long()), "2d_3d"),
    ("2-D offsets", lambda lib, a, b, o: dict(mat_a=a, mat_b=b, offs=o[None]), "2d_3d"),
    ("bias", lambda lib, a, b, o: dict(mat_a=a, mat_b=b, offs=o, bias=lib.ones(N)), "2d_3d"),
    ("out_dtype", lambda lib, a, b, o: dict(mat_a=a, mat_b=b, offs=o, out_dtype=lib.float16), "2d_3d"),
    ("float64", lambda lib, a, b, o: dict(mat_a=a.double(), mat_b=b.double(), offs=o), "2d_3d"),
    ("mixed dtypes", lambda lib, a, b, o: dict(mat_a=a, mat_b=b.half(), offs=o), "2d_3d"),
    ("1-D", lambda lib, a, b, o: dict(mat_a=a[0], mat_b=b, offs=o), "2d_3d"),
    ("contraction", lambda lib, a, b, o: dict(mat_a=a[:, :4], mat_b=b, offs=o), "2d_3d"),
    ("batch", lambda lib, a, b, o: dict(mat_a=a, mat_b=b[:1]), "3d_3d"),
    ("strides", lambda lib, a, b, o: dict(mat_a=a[:, :6].contiguous(), mat_b=b[:6], offs=o), "2d_2d"),
]


@pytest.mark.parametrize("label,kwargs,form", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(label, kwargs, form):
    a, b, offs = case(form, torch.bfloat16)
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.grouped_mm(**kwargs(torch, a, b, offs))
    with pytest.raises(RuntimeError) as got:
        tensorplay.nn.functional.grouped_mm(**kwargs(tensorplay, to_tp(a), to_tp(b), to_tp(offs)))
    assert str(expected.value).split(":")[0] in str(got.value)

"""Reductions over tensors that read elements more than once (expanded, stride 0), which
csrc/tensorplay/cpu/reduce.cpp reduces a bounded chunk at a time instead of materialising them: values
against PyTorch for every reduction, rows longer than a chunk, and the memory a huge one takes."""

import subprocess
import sys

import numpy as np
import pytest
import torch

import tensorplay as tp
from shared import FLOAT32_BFLOAT16_AND_FLOAT64

# (base shape, expanded shape): a broadcast row, a broadcast column, a broadcast middle dim.
EXPANSIONS = {
    "rows": ((1, 40000), (3, 40000)),
    "columns": ((5, 1), (5, 20000)),
    "middle": ((2, 1, 7), (2, 3000, 7)),
}
REDUCTIONS = {
    "sum": lambda t, dim: t.sum() if dim is None else t.sum(dim),
    "mean": lambda t, dim: t.mean() if dim is None else t.mean(dim),
    "prod": lambda t, dim: t.prod() if dim is None else t.prod(dim),
    "amax": lambda t, dim: t.amax() if dim is None else t.amax(dim),
    "amin": lambda t, dim: t.amin() if dim is None else t.amin(dim),
}


def expanded(m, kind, dtype):
    base, shape = EXPANSIONS[kind]
    x = np.random.default_rng(len(shape)).uniform(0.999, 1.001, base)
    return m.tensor(x, dtype=getattr(m, dtype)).expand(*shape)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("kind", list(EXPANSIONS))
@pytest.mark.parametrize("dtype", FLOAT32_BFLOAT16_AND_FLOAT64)
def test_reduction_of_an_expanded_tensor_matches_torch(dtype, kind, name, dim):
    """Values against float64 sums of the same numbers: torch's own float32 sum of the "middle"
    expansion is 2e-5 off (41990.99 for 41991.87)."""
    ours = REDUCTIONS[name](expanded(tp, kind, dtype), dim)
    theirs = REDUCTIONS[name](expanded(torch, kind, dtype), dim)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    theirs = REDUCTIONS[name](expanded(torch, kind, dtype).double(), dim)
    tol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 1e-2}[dtype]
    np.testing.assert_allclose(ours.double().numpy(), theirs.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["sum", "all", "any"])
@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_integer_and_bool_reductions_of_an_expanded_tensor(dtype, name):
    results = []
    for m in (torch, tp):
        t = m.tensor([[True, False, True]]).to(getattr(m, dtype)).expand(20000, 3)
        results.append([getattr(t, name)().tolist(), getattr(t, name)(0).tolist(), getattr(t, name)(1)[:4].tolist()])
    assert results[0] == results[1]


def test_summing_a_huge_expanded_tensor_takes_no_more_memory():
    """ones(1, n).expand(n, n) with n = 16384 spans 1 GiB when materialised."""
    code = ("import resource\nimport tensorplay as tp\n"
            "x = tp.ones(1, 16384).expand(16384, 16384)\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "total, rows, columns = x.sum().item(), x.sum(1), x.amax(0)\n"
            "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
            "print(total, rows[0].item(), columns[-1].item(), grown // 1024)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-500:]
    total, row, column, grown_mib = result.stdout.split()
    assert (float(total), float(row), float(column)) == (16384.0 ** 2, 16384.0, 1.0)
    assert int(grown_mib) < 64, f"the sums took {grown_mib} MiB"

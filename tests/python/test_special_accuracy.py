"""torch.special's kernels (csrc/tensorplay/cpu/special.cpp) across each function's domain, in float64,
against exact values (op_table_special.py's references: mpmath at 30 digits, or SciPy). The oscillating functions' errors are measured against their
envelope, the largest magnitude nearby: near a zero no library promises relative accuracy (the
argument's own rounding moves the value by more than its size there)."""

import numpy as np
import pytest

import tensorplay
import op_table  # noqa: F401  (loads the table, whose families import it)
from op_table_special import SPECIAL_REFERENCES

OSCILLATING = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0"}

# name: (grid, tolerance in units in the last place)
DOMAINS = {
    # (Ai's phase for x < 0 grows as |x|^(3/2): its rounding costs ulps in proportion)
    "airy_ai": (np.linspace(-30, 10, 401), 160),
    "bessel_j0": (np.linspace(-60, 60, 401), 32),
    "bessel_j1": (np.linspace(-60, 60, 401), 32),
    "bessel_y0": (np.linspace(0.01, 60, 401), 32),
    "bessel_y1": (np.linspace(0.01, 60, 401), 32),
    "modified_bessel_i0": (np.linspace(-700, 700, 401), 16),
    "modified_bessel_i1": (np.linspace(-700, 700, 401), 16),
    "modified_bessel_k0": (np.geomspace(1e-6, 700, 401), 16),
    "modified_bessel_k1": (np.geomspace(1e-6, 700, 401), 16),
    "scaled_modified_bessel_k0": (np.geomspace(1e-6, 1e6, 401), 16),
    "scaled_modified_bessel_k1": (np.geomspace(1e-6, 1e6, 401), 16),
    "spherical_bessel_j0": (np.linspace(-60, 60, 401), 8),
    "i0e": (np.linspace(-1e4, 1e4, 401), 16),
    "i1": (np.linspace(-700, 700, 401), 16),
    "i1e": (np.linspace(-1e4, 1e4, 401), 16),
    "erfcx": (np.linspace(-26, 1e4, 401), 8),
    "ndtri": (np.concatenate([np.geomspace(1e-300, 0.5, 200), 1 - np.geomspace(1e-16, 0.5, 200)]), 8),
    "log_ndtr": (np.linspace(-1e3, 35, 401), 16),
}


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_float64_values_are_within_a_few_ulp(name):
    grid, ulps = DOMAINS[name]
    ours = getattr(tensorplay.special, name)(tensorplay.from_numpy(grid)).numpy()
    with np.errstate(all="ignore"):
        exact = SPECIAL_REFERENCES[name](grid)
    size = np.abs(exact)
    if name in OSCILLATING:  # the envelope: the largest magnitude within a few grid steps
        size = np.maximum.reduce([np.abs(np.roll(exact, k)) for k in range(-8, 9)])
    error = np.abs(ours - exact) / np.spacing(size)
    worst = int(np.argmax(error))
    assert error[worst] <= ulps, f"{name}({grid[worst]!r}) = {ours[worst]!r}, exact {exact[worst]!r}"


def test_the_scaled_functions_do_not_overflow_where_the_unscaled_do():
    x = tensorplay.tensor([800.0, 1e5, -1e5], dtype=tensorplay.float64)
    assert tensorplay.special.i1(x)[0].item() == float("inf")
    scaled = tensorplay.special.i1e(x).numpy()
    np.testing.assert_allclose(scaled, SPECIAL_REFERENCES["i1e"](x.numpy()), rtol=1e-14)
    np.testing.assert_allclose(tensorplay.special.scaled_modified_bessel_k0(x[:2]).numpy(),
                               SPECIAL_REFERENCES["scaled_modified_bessel_k0"](x[:2].numpy()), rtol=1e-14)


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_complex_inputs_are_refused_as_pytorch_refuses_them(name):
    z = tensorplay.ones(3, dtype=tensorplay.complex64)
    with pytest.raises(NotImplementedError, match=rf'"{name}_cpu" not implemented for \'ComplexFloat\''):
        getattr(tensorplay.special, name)(z)

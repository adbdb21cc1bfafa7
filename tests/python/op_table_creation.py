"""Op-table rows of the torch namespace's creation composites (tensorplay/_composites/creation.py).

The factories take no tensor: each row calls one with the length (where it has one), dtype and device
of a sample tensor, so that the table's dtypes and its meta device reach them.

GRADIENT_LABELS lists the rows torch differentiates; NOT_DIFFERENTIABLE gives every other row's
label with the reason (test_gradients.py reads both)."""

import math

from op_table import ALL_DTYPES, Op, S


def like(factory):
    """fn for a factory of a length: called with the length, dtype and device of its first argument."""
    return lambda m, t, *args, **kwargs: getattr(m, factory)(*args, t.shape[0], dtype=t.dtype, device=t.device,
                                                             **kwargs)


def window_samples(*extra):
    def samples(mk):
        out = [S(f"length{n}", mk((n,))) for n in (0, 1, 2, 5, 16)]
        out += [S("length7_symmetric", mk((7,)), periodic=False), S("length7_periodic", mk((7,)), periodic=True)]
        return out + [S(label, mk((9,)), periodic=False, **kwargs) for label, kwargs in extra]
    return samples


def window(name, *extra):
    return Op(name, window_samples(*extra), ALL_DTYPES, fn=like(name))


def logspace_samples(mk):
    out = [
        S("decades", mk((3,)), 0, 2),
        S("base2", mk((7,)), 0, 6, base=2),
        S("one_step", mk((1,)), 1, 2),
        S("no_steps", mk((0,)), 0, 2),
    ]
    if mk.is_float:
        out += [S("fractional", mk((9,)), -1.5, 2.25), S("descending", mk((6,)), 2, -1, base=3.5)]
    return out


def logspace(m, t, start, end, **kwargs):
    return m.logspace(start, end, t.shape[0], dtype=t.dtype, device=t.device, **kwargs)


def range_samples(mk):
    # Integer dtypes truncate the bounds and the step; torch's integer range divides by the truncated
    # step, so a fractional step below 1 crashes it (SIGFPE): those run in the float dtypes only.
    out = [S("unit", mk(()), 1, 4), S("step3", mk(()), 1, 10, 3), S("single", mk(()), 5, 5),
           S("truncated_bounds", mk(()), 0.5, 3.7)]
    if mk.is_float:
        out += [S("tenths", mk(()), 0, 1, 0.1), S("fractional", mk(()), -2.5, 7.3, 0.7),
                S("descending", mk(()), 4, 1, -0.5)]
    return out


def inclusive_range(m, t, *args):
    return m.range(*args, dtype=t.dtype, device=t.device)


def fill_samples(mk):
    out = [S("int", mk((3, 4)), 3), S("float", mk((3, 4)), 2.5), S("bool", mk((3, 4)), True)]
    if mk.is_float:
        out += [S("nan", mk((4,)), math.nan), S("inf", mk((4,)), -math.inf)]
    if mk.layouts:
        out += [S("0dim", mk(()), -1), S("empty", mk((0, 3)), 1), S("transposed", mk.transposed((4, 3)), 7)]
    return out


def fill_tensor_samples(mk):
    """A 0-dim tensor value, which torch.fill differentiates (Tensor.fill_ is left out: tensorplay's reads
    the value with item(), which the meta device cannot)."""
    out = [S("same_dtype", mk((3, 4)), mk.other(()))]
    if mk.layouts:
        out += [S("float64_value", mk((3,)), mk.other((), dtype="float64")), S("1d_value", mk((3,)), mk.other((1,)))]
    return out


ROWS = [
    window("hann_window"),
    window("hamming_window", ("alpha_beta", {"alpha": 0.3, "beta": 0.6})),
    window("blackman_window"),
    window("bartlett_window"),
    window("kaiser_window", ("beta3", {"beta": 3.0}), ("beta20", {"beta": 20.0})),
    Op("logspace", logspace_samples, ALL_DTYPES, fn=logspace),
    Op("range", range_samples, ALL_DTYPES, fn=inclusive_range),
    Op("fill", fill_samples, ALL_DTYPES, inplace=True),
    Op("fill", fill_tensor_samples, ALL_DTYPES, label="fill_tensor_value"),
]

GRADIENT_LABELS = """
fill fill_tensor_value
""".split()

_FACTORY = "a factory: its values depend on no tensor (the sample tensor gives only length, dtype and device)"
NOT_DIFFERENTIABLE = {
    "hann_window": _FACTORY,
    "hamming_window": _FACTORY,
    "blackman_window": _FACTORY,
    "bartlett_window": _FACTORY,
    "kaiser_window": _FACTORY,
    "logspace": _FACTORY,
    "range": _FACTORY,
}

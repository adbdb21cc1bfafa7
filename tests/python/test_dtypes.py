"""dtypes, type promotion, the default dtype, finfo/iinfo, and bit-exact float16/bfloat16 conversion.

PyTorch is the oracle: every expectation is computed by torch from the same inputs.
"""

import copy
import pickle

import numpy as np
import pytest
import torch

import tensorplay as tp

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
           "short": "int16"}


def tp_name(dtype):
    return repr(dtype).replace("tensorplay.", "")


def torch_name(dtype):
    return repr(dtype).replace("torch.", "")


# ---- the dtype objects ----

@pytest.mark.parametrize("name", DTYPE_NAMES + list(ALIASES))
def test_dtype_exists_with_torch_repr(name):
    assert isinstance(getattr(tp, name), tp.dtype)
    assert repr(getattr(tp, name)) == repr(getattr(torch, name)).replace("torch.", "tensorplay.")
    assert str(getattr(tp, name)) == str(getattr(torch, name)).replace("torch.", "tensorplay.")


@pytest.mark.parametrize("alias", list(ALIASES))
def test_alias_is_the_same_object(alias):
    assert getattr(tp, alias) is getattr(tp, ALIASES[alias])
    assert getattr(tp, alias) == getattr(tp, ALIASES[alias])


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_properties(name):
    ours, theirs = getattr(tp, name), getattr(torch, name)
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.itemsize == theirs.itemsize
    assert ours.is_signed == theirs.is_signed


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_survives_pickle_and_copy(name):
    d = getattr(tp, name)
    assert pickle.loads(pickle.dumps(d)) is d
    assert copy.deepcopy(d) is d
    assert {d: 1}[getattr(tp, name)] == 1


def test_dtypes_are_distinct():
    objects = [getattr(tp, n) for n in DTYPE_NAMES]
    assert len(set(objects)) == len(DTYPE_NAMES)
    assert tp.float32 != tp.float64


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_is_floating_point_of_tensor(name):
    t = tp.zeros(2, dtype=getattr(tp, name))
    expected = torch.is_floating_point(torch.zeros(2, dtype=getattr(torch, name)))
    assert tp.is_floating_point(t) == expected
    assert t.is_floating_point() == expected


# ---- promotion ----

@pytest.mark.parametrize("b", DTYPE_NAMES)
@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_promote_types(a, b):
    expected = torch_name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert tp_name(tp.promote_types(getattr(tp, a), getattr(tp, b))) == expected


def _operand(kind, module):
    """An operand of result_type: 'int8[2]' a 1-D tensor, 'int8[]' a 0-dim tensor, or a Python number."""
    numbers = {"int": 2, "neg_int": -3, "float": 2.5, "bool": True}
    if kind in numbers:
        return numbers[kind]
    name, shape = kind.split("[")
    dtype = getattr(module, name)
    return module.ones(2, dtype=dtype) if shape == "2]" else module.ones((), dtype=dtype)


RESULT_TYPE_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
TENSOR_KINDS = [f"{d}[2]" for d in RESULT_TYPE_DTYPES]
ZERO_DIM_KINDS = [f"{d}[]" for d in RESULT_TYPE_DTYPES]
NUMBER_KINDS = ["int", "neg_int", "float", "bool"]
RESULT_TYPE_CASES = (
    [(a, b) for a in TENSOR_KINDS for b in TENSOR_KINDS + ZERO_DIM_KINDS + NUMBER_KINDS]
    + [(a, b) for a in ZERO_DIM_KINDS for b in ZERO_DIM_KINDS + NUMBER_KINDS]
    + [(n, t) for n in NUMBER_KINDS for t in ["uint8[2]", "int8[]", "float16[2]", "bool[2]", "bfloat16[]"]]
)


@pytest.mark.parametrize("a,b", RESULT_TYPE_CASES, ids=[f"{a}-{b}" for a, b in RESULT_TYPE_CASES])
def test_result_type(a, b):
    expected = torch_name(torch.result_type(_operand(a, torch), _operand(b, torch)))
    assert tp_name(tp.result_type(_operand(a, tp), _operand(b, tp))) == expected


# ---- the default dtype ----

@pytest.fixture
def restore_default_dtype():
    yield
    tp.set_default_dtype(tp.float32)
    torch.set_default_dtype(torch.float32)


def test_default_dtype_is_float32():
    assert tp.get_default_dtype() is tp.float32


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16"])
def test_set_default_dtype(name, restore_default_dtype):
    tp.set_default_dtype(getattr(tp, name))
    torch.set_default_dtype(getattr(torch, name))
    assert tp.get_default_dtype() is getattr(tp, name)
    made = {
        "tensor([1.5])": (tp.tensor([1.5]), torch.tensor([1.5])),
        "tensor(2.5)": (tp.tensor(2.5), torch.tensor(2.5)),
        "tensor([1])": (tp.tensor([1]), torch.tensor([1])),
        "arange(0.5, 3)": (tp.arange(0.5, 3), torch.arange(0.5, 3)),
        "arange(3)": (tp.arange(3), torch.arange(3)),
        "zeros(2)": (tp.zeros(2), torch.zeros(2)),
        "full((2,), 1.5)": (tp.full((2,), 1.5), torch.full((2,), 1.5)),
        "linspace(0, 1, 3)": (tp.linspace(0, 1, 3), torch.linspace(0, 1, 3)),
        "rand(2)": (tp.rand(2), torch.rand(2)),
        "int tensor * 2.5": (tp.tensor([1]) * 2.5, torch.tensor([1]) * 2.5),
    }
    for what, (ours, theirs) in made.items():
        assert tp_name(ours.dtype) == torch_name(theirs.dtype), what
    assert tp_name(tp.result_type(tp.tensor([1]), 2.5)) == torch_name(torch.result_type(torch.tensor([1]), 2.5))
    assert tp.finfo().dtype == torch.finfo().dtype


@pytest.mark.parametrize("name", ["int32", "int64", "bool", "uint8"])
def test_set_default_dtype_rejects_non_floating(name, restore_default_dtype):
    with pytest.raises(TypeError):
        torch.set_default_dtype(getattr(torch, name))
    with pytest.raises(TypeError):
        tp.set_default_dtype(getattr(tp, name))
    assert tp.get_default_dtype() is tp.float32


# ---- finfo / iinfo ----

FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]
INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("field", ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"])
@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_finfo_field(name, field):
    assert getattr(tp.finfo(getattr(tp, name)), field) == getattr(torch.finfo(getattr(torch, name)), field)


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_finfo_repr(name):
    assert repr(tp.finfo(getattr(tp, name))) == repr(torch.finfo(getattr(torch, name)))


def test_finfo_default_is_default_dtype():
    assert tp.finfo().dtype == torch.finfo().dtype
    assert tp.finfo().eps == torch.finfo().eps


@pytest.mark.parametrize("field", ["bits", "min", "max", "dtype"])
@pytest.mark.parametrize("name", INT_NAMES)
def test_iinfo_field(name, field):
    assert getattr(tp.iinfo(getattr(tp, name)), field) == getattr(torch.iinfo(getattr(torch, name)), field)


@pytest.mark.parametrize("name", INT_NAMES)
def test_iinfo_repr(name):
    assert repr(tp.iinfo(getattr(tp, name))) == repr(torch.iinfo(getattr(torch, name)))


@pytest.mark.parametrize("name", INT_NAMES + ["bool"])
def test_finfo_rejects_non_floating(name):
    with pytest.raises(TypeError):
        torch.finfo(getattr(torch, name))
    with pytest.raises(TypeError):
        tp.finfo(getattr(tp, name))


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_iinfo_rejects_floating(name):
    with pytest.raises(TypeError):
        torch.iinfo(getattr(torch, name))
    with pytest.raises(TypeError):
        tp.iinfo(getattr(tp, name))


# ---- float32 -> float16 / bfloat16, bit for bit ----

def _f32(value):
    return int(np.array(value, dtype=np.float32).view(np.uint32))


def _around(bit_patterns, reach=4):
    """Each positive float32 bit pattern, its `reach` neighbours either side, and the negatives of all."""
    centre = np.asarray(bit_patterns, dtype=np.int64)[:, None]
    near = (centre + np.arange(-reach, reach + 1)).ravel()
    near = near[(near >= 0) & (near < 0x7F800000)]
    return np.concatenate([near, near | 0x80000000]).astype(np.uint32)


def _ties(mantissa_shift, exponents):
    """Patterns whose dropped mantissa bits are exactly half an ulp of the target, and one float32 ulp either side,
    for every given float32 exponent and a spread of kept mantissas (both even and odd, so ties go both ways)."""
    half = 1 << (mantissa_shift - 1)
    kept_bits = 23 - mantissa_shift
    kept = np.unique(np.array([0, 1, 2, 3, 0x155, 0x2AA, 0x3FE, 0x3FF], dtype=np.int64) & ((1 << kept_bits) - 1))
    kept = kept << mantissa_shift
    exps = np.asarray(exponents, dtype=np.int64)[:, None, None] << 23
    base = (exps + kept[None, :, None] + half + np.array([-1, 0, 1])[None, None, :]).ravel()
    return np.concatenate([base, base | 0x80000000]).astype(np.uint32)


NAN_PATTERNS = np.array([
    0x7FC00000, 0xFFC00000,  # the default quiet NaNs
    0x7F800001, 0xFF800001,  # signalling, smallest payload (lost when the payload is truncated)
    0x7F801FFF, 0x7F802000, 0x7F80FFFF, 0x7F810000,  # payload only below / at the kept bits
    0x7FBFFFFF, 0xFFBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF,  # every payload bit set
    0x7FA00000, 0x7FC00001, 0x7FD55555, 0xFFAAAAAA, 0x7FE00000, 0xFF900000,
], dtype=np.uint32)

# Anchors are positive; _around adds the neighbours and the negatives.
FLOAT16_ANCHORS = {
    "zero_and_float32_subnormals": [0x00000000, 0x00000001, 0x00000002, 0x00400000, 0x007FFFFF],
    "float32_normal_extremes": [0x00800000, 0x7F7FFFFF],
    "overflow_65504_65520": [_f32(65504.0), _f32(65520.0), _f32(65536.0), _f32(65488.0), _f32(131008.0)],
    "smallest_normal_2^-14": [_f32(2.0 ** -14), _f32(2.0 ** -14 - 2.0 ** -25)],
    "largest_subnormal": [_f32(1023 * 2.0 ** -24), _f32(1023.5 * 2.0 ** -24), _f32(1022.5 * 2.0 ** -24)],
    "smallest_subnormal_2^-24": [_f32(2.0 ** -24), _f32(2.0 ** -25), _f32(1.5 * 2.0 ** -24), _f32(2.5 * 2.0 ** -24),
                                 _f32(2.0 ** -26), _f32(3 * 2.0 ** -26)],
    "subnormal_ties": [_f32((k + 0.5) * 2.0 ** -24) for k in range(0, 1024, 37)],
    "ones_and_simple_values": [_f32(v) for v in (1.0, 0.1, 1 / 3, 2.0, 3.14159265, 1000.0, 2048.0, 4096.0)],
    "normal_ties": [_f32(v) for v in (1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 2049.0, 2051.0, 4098.0, 4102.0,
                                      32784.0, 32848.0, 0.5 + 2.0 ** -12)],
}
BFLOAT16_ANCHORS = {
    "zero_and_float32_subnormals": [0x00000000, 0x00000001, 0x00008000, 0x00018000, 0x00010000, 0x007FFFFF,
                                    0x007F8000, 0x00400000],
    "smallest_normal": [0x00800000, 0x00808000, 0x0080FFFF],
    "largest_normal_and_overflow": [0x7F7F0000, 0x7F7F8000, 0x7F7FFFFF, 0x7F7E8000, 0x7F7EFFFF],
    "ones_and_simple_values": [_f32(v) for v in (1.0, 0.1, 1 / 3, 2.0, 3.14159265, 1000.0, 65504.0, 1e30)],
    "normal_ties": [0x3F808000, 0x3F818000, 0x3F7F8000, 0x40008000, 0x47FF8000],
}
TARGETS = {
    "float16": (FLOAT16_ANCHORS, 13, range(103, 143)),  # float32 exponents from below f16 subnormals to above max
    "bfloat16": (BFLOAT16_ANCHORS, 16, range(0, 255)),
}


def _convert_bits(bits, name, module):
    """float32 bit patterns -> `name` in `module`, returned as the raw uint16 bits."""
    src = module.from_numpy(bits.view(np.float32).copy())
    out = src.to(getattr(module, name)).view(module.int16)
    return np.array(out.numpy()).view(np.uint16)


def _assert_same_bits(inputs, ours, theirs, what):
    wrong = np.flatnonzero(ours != theirs)
    if wrong.size:
        examples = ", ".join(f"0x{inputs[i]:08X}->torch 0x{theirs[i]:04X} tensorplay 0x{ours[i]:04X}"
                             for i in wrong[:12])
        pytest.fail(f"{what}: {wrong.size} of {inputs.size} patterns differ, e.g. {examples}")


def _check_conversion(bits, name, what):
    bits = np.ascontiguousarray(bits, dtype=np.uint32)
    _assert_same_bits(bits, _convert_bits(bits, name, tp), _convert_bits(bits, name, torch), what)


@pytest.fixture(scope="module")
def random_float32_bits():
    # Uniform over all 2^32 patterns: about 1/256 of them are NaNs, the rest cover every exponent equally.
    return np.random.default_rng(20240611).integers(0, 2 ** 32, size=1 << 20, dtype=np.uint32)


def _is_nan_bits(bits):
    return (bits & 0x7FFFFFFF) > 0x7F800000


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_random_non_nan(name, random_float32_bits):
    bits = random_float32_bits[~_is_nan_bits(random_float32_bits)]
    assert bits.size > 1_000_000 - 10_000
    _check_conversion(bits, name, f"float32 -> {name}, random non-NaN")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_random_nan(name, random_float32_bits):
    bits = random_float32_bits[_is_nan_bits(random_float32_bits)]
    _check_conversion(bits, name, f"float32 -> {name}, random NaNs")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_nan_payloads(name):
    _check_conversion(NAN_PATTERNS, name, f"float32 -> {name}, NaN payloads")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_infinities(name):
    _check_conversion(np.array([0x7F800000, 0xFF800000], dtype=np.uint32), name, f"float32 -> {name}, +-inf")


EDGE_CASES = [(name, group) for name, (anchors, _, _) in TARGETS.items() for group in anchors]


@pytest.mark.parametrize("name,group", EDGE_CASES, ids=[f"{n}-{g}" for n, g in EDGE_CASES])
def test_float32_to_low_precision_edge_cases(name, group):
    _check_conversion(_around(TARGETS[name][0][group]), name, f"float32 -> {name}, {group}")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_rounding_ties(name):
    _, shift, exponents = TARGETS[name]
    _check_conversion(_ties(shift, exponents), name, f"float32 -> {name}, ties at every exponent")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_all_float32_subnormals_sampled(name):
    subnormals = np.arange(0, 1 << 23, 97, dtype=np.uint32)
    _check_conversion(np.concatenate([subnormals, subnormals | 0x80000000]), name,
                      f"float32 subnormals -> {name}")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float32_to_low_precision_strided_source(name, random_float32_bits):
    # Non-contiguous sources take a different copy path than the contiguous ones above.
    bits = random_float32_bits[:200_000].reshape(400, 500)
    ours = tp.from_numpy(bits.view(np.float32)).t().to(getattr(tp, name)).contiguous().view(tp.int16)
    theirs = torch.from_numpy(bits.view(np.float32)).t().to(getattr(torch, name)).contiguous().view(torch.int16)
    _assert_same_bits(np.ascontiguousarray(bits.T).ravel(), np.array(ours.numpy()).view(np.uint16).ravel(),
                      theirs.numpy().view(np.uint16).ravel(), f"strided float32 -> {name}")


@pytest.mark.parametrize("name", list(TARGETS))
def test_float64_to_low_precision_near_ties(name):
    # float64 values a hair above or below a tie of the target: PyTorch converts through float32, so a value just
    # above a tie can first round onto the tie and then round to even. Whatever torch gives is the expectation.
    _, shift, exponents = TARGETS[name]
    ties = _ties(shift, list(exponents)[::7]).view(np.float32).astype(np.float64)
    ties = ties[np.isfinite(ties)]
    values = np.concatenate([ties, ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40)])
    ours = np.array(tp.from_numpy(values).to(getattr(tp, name)).view(tp.int16).numpy()).view(np.uint16)
    theirs = torch.from_numpy(values).to(getattr(torch, name)).view(torch.int16).numpy().view(np.uint16)
    wrong = np.flatnonzero(ours != theirs)
    if wrong.size:
        examples = ", ".join(f"{values[i]!r}->torch 0x{theirs[i]:04X} tensorplay 0x{ours[i]:04X}" for i in wrong[:8])
        pytest.fail(f"float64 -> {name}: {wrong.size} of {values.size} differ, e.g. {examples}")


# ---- float16 / bfloat16 -> float32, all 65536 patterns ----

ALL_16_BIT = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def _widen_bits(name, module):
    src = module.from_numpy(ALL_16_BIT.view(np.int16).copy()).view(getattr(module, name))
    return np.array(src.to(module.float32).view(module.int32).numpy()).view(np.uint32)


def _is_nan_16(name):
    exponent_mask, mantissa_mask = (0x7C00, 0x03FF) if name == "float16" else (0x7F80, 0x007F)
    return ((ALL_16_BIT & exponent_mask) == exponent_mask) & ((ALL_16_BIT & mantissa_mask) != 0)


@pytest.mark.parametrize("nan", [False, True], ids=["non_nan", "nan"])
@pytest.mark.parametrize("name", list(TARGETS))
def test_low_precision_to_float32_all_patterns(name, nan):
    ours, theirs = _widen_bits(name, tp), _widen_bits(name, torch)
    keep = _is_nan_16(name) == nan
    wrong = np.flatnonzero((ours != theirs) & keep)
    if wrong.size:
        examples = ", ".join(f"0x{ALL_16_BIT[i]:04X}->torch 0x{theirs[i]:08X} tensorplay 0x{ours[i]:08X}"
                             for i in wrong[:12])
        pytest.fail(f"{name} -> float32: {wrong.size} of {keep.sum()} patterns differ, e.g. {examples}")


@pytest.mark.parametrize("name", list(TARGETS))
def test_low_precision_round_trip_is_identity_for_non_nan(name):
    # Every non-NaN float16/bfloat16 value is exact in float32, so going there and back must not change a bit.
    bits = ALL_16_BIT[~_is_nan_16(name)]
    src = tp.from_numpy(bits.view(np.int16).copy()).view(getattr(tp, name))
    back = np.array(src.to(tp.float32).to(getattr(tp, name)).view(tp.int16).numpy()).view(np.uint16)
    wrong = np.flatnonzero(back != bits)
    assert wrong.size == 0, [f"0x{bits[i]:04X}->0x{back[i]:04X}" for i in wrong[:12]]


@pytest.mark.parametrize("name", ["bfloat16"])
def test_low_precision_to_float32_every_pattern(name):
    """All 65536 patterns but 0 widen exactly, bit for bit as torch (an odd count: the SIMD body and a
    tail). (float16 is left out: torch turns a few of its NaN payloads into 0x7FFFFFFF.)"""
    bits = np.arange(1 << 16, dtype=np.uint16)[1:]
    results = []
    for m in (torch, tp):
        low = m.from_numpy(bits.view(np.int16).copy()).view(getattr(m, name))
        results.append(np.array(low.to(m.float32).numpy()).view(np.uint32))
    ours, theirs = results[1], results[0]
    _assert_same_bits(bits.astype(np.uint32), ours, theirs, f"{name} -> float32")


@pytest.mark.parametrize("name", list(TARGETS))
def test_low_precision_to_float32_of_a_large_tensor_matches_a_small_one(name, streamed_from_1_mib):
    """Outputs past the streaming bound are written past the cache: the bits must be those of a
    small widening (checked against torch above), into an aligned new tensor and into one that
    starts 4 bytes past a vector's boundary, head and tail included."""
    patterns = np.arange(1 << 16, dtype=np.uint16)
    small = tp.from_numpy(patterns.view(np.int16).copy()).view(getattr(tp, name))
    expected = np.array(small.to(tp.float32).numpy()).view(np.uint32)
    reps, extra = 9, 12345  # over 600K values: more than 1 MiB of float32 for each of two threads
    bits = np.concatenate([np.tile(patterns, reps), patterns[:extra]])
    want = np.concatenate([np.tile(expected, reps), expected[:extra]])
    low = tp.from_numpy(bits.view(np.int16)).view(getattr(tp, name))
    _assert_same_bits(bits.astype(np.uint32), np.array(low.to(tp.float32).numpy()).view(np.uint32), want,
                      f"{name} -> float32, large, aligned")
    out = tp.empty(bits.size + 1)[1:]
    out.copy_(low)
    _assert_same_bits(bits.astype(np.uint32), np.array(out.numpy()).view(np.uint32), want,
                      f"{name} -> float32, large, unaligned")

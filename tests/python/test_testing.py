"""tensorplay.testing against torch.testing: each case is built in both libraries from the same description and must
pass or fail alike, with the same exception type and (names of the library aside) the same message."""

import warnings

import numpy as np
import pytest
import torch

import tensorplay as tp
import tensorplay.testing

NAN, INF = float("nan"), float("inf")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")


def _normalized(message):
    """torch's message in tensorplay's words: the class and dtype names differ, nothing else may."""
    return message.replace("<class 'torch.Tensor'>", "<class 'tensorplay._C.Tensor'>").replace("torch.", "tensorplay.")


def _outcome(call):
    """None when call passes, else (exception type, message); warnings are silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as error:
            return type(error), _normalized(str(error))
    return None


def _both(build, function="assert_close"):
    """Runs build(lib) -> (args, kwargs) through lib.testing.<function> for torch and tensorplay."""
    def run(lib):
        args, kwargs = build(lib)
        return _outcome(lambda: getattr(lib.testing, function)(*args, **kwargs))
    return run(torch), run(tp)


def _t(lib, values, dtype="float32"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


# name -> build(lib) -> (args, kwargs)
CASES = {
    # numbers, bools, None
    "int equal": lambda lib: ((1, 1), {}),
    "int differ": lambda lib: ((1, 2), {}),
    "float close": lambda lib: ((1.0, 1.0 + 1e-8), {}),
    "float differ": lambda lib: ((1.0, 1.1), {}),
    "float vs zero": lambda lib: ((1.0, 0.0), {}),
    "float tolerances given": lambda lib: ((1.0, 1.1), {"rtol": 0.0, "atol": 0.2}),
    "float zero tolerances": lambda lib: ((1.0, 1.1), {"rtol": 0, "atol": 0}),
    "int vs float": lambda lib: ((1, 1.0), {}),
    "int vs float unchecked": lambda lib: ((1, 1.0), {"check_dtype": False}),
    "nan": lambda lib: ((NAN, NAN), {}),
    "nan equal_nan": lambda lib: ((NAN, NAN), {"equal_nan": True}),
    "inf": lambda lib: ((INF, INF), {}),
    "inf vs -inf": lambda lib: ((INF, -INF), {}),
    "complex": lambda lib: ((1 + 1j, 1 + 1.1j), {}),
    "numpy scalars": lambda lib: ((np.float32(1), np.float32(2)), {}),
    "numpy scalar vs float": lambda lib: ((np.float64(1), 2.0), {}),
    "numpy int": lambda lib: ((np.int64(3), 3), {}),
    "bools": lambda lib: ((True, False), {}),
    "numpy bool": lambda lib: ((np.bool_(True), False), {}),
    "bool tolerance ignored": lambda lib: ((True, True), {"rtol": 1.0}),
    "none": lambda lib: ((None, 1), {}),
    "none none": lambda lib: ((None, None), {}),
    "strings": lambda lib: (("a", "a"), {}),
    "sets": lambda lib: (({1, 2}, {1, 2}), {}),
    # tolerance arguments
    "rtol only": lambda lib: ((1.0, 1.0), {"rtol": 1.0}),
    "atol only": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.0])), {"atol": 1.0}),
    "atol only nested": lambda lib: (([_t(lib, [1.0])], [_t(lib, [1.0])]), {"atol": 1.0}),
    # containers
    "list vs tuple": lambda lib: (([1, 2.0], (1, 2.0)), {}),
    "lengths": lambda lib: (([1, 2], [1, 2, 3]), {}),
    "keys": lambda lib: (({"a": 1, "b": 2}, {"a": 1, "c": 2}), {}),
    "nested mapping": lambda lib: (({"a": [1, _t(lib, [1.0, 2.0])]}, {"a": [1, _t(lib, [1.0, 3.0])]}), {}),
    "second item": lambda lib: (([_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.0, 3.0, 4.0])],
                                 [_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.0, 3.1, 4.0])]), {}),
    "numbers and tensors": lambda lib: (([[1.0, _t(lib, [1.0, 2.0])]], [[1.0, _t(lib, [1.0, 2.5])]]), {}),
    "number item fails": lambda lib: (([_t(lib, [1.0]), 2], [_t(lib, [1.0]), 3]), {}),
    "keys in sorted order": lambda lib: (({"b": 1, "a": 2}, {"b": 2, "a": 3}), {}),
    "mixed key types": lambda lib: (({1: 1, "a": 2}, {1: 1, "a": 3}), {}),
    "list vs tensor": lambda lib: (([1.0], _t(lib, [1.0])), {}),
    "dict vs list": lambda lib: (({0: 1}, [1]), {}),
    "size vs tuple": lambda lib: ((lib.ones(2, 3).shape, (2, 4)), {}),
    "tuple in dict": lambda lib: (({"x": (_t(lib, [1.0]), None)}, {"x": (_t(lib, [1.0]), _t(lib, [1.0]))}), {}),
    "malformed after mismatch": lambda lib: (([_t(lib, [1.0]), "a"], [_t(lib, [2.0]), "a"]), {}),
    # tensors: values
    "equal": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.0])), {}),
    "one of four": lambda lib: ((_t(lib, [1.0, 2.0, 3.0, 4.0]), _t(lib, [1.0, 2.0, 3.1, 4.0])), {}),
    "2d": lambda lib: ((_t(lib, [[1.0, 2.0], [3.0, 4.0]]), _t(lib, [[1.0, 2.0], [3.0, 5.0]])), {}),
    "3d several": lambda lib: ((_t(lib, [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]),
                                _t(lib, [[[1.0, 2.5], [3.0, 4.0]], [[5.0, 6.0], [7.5, -8.0]]])), {}),
    "0-d": lambda lib: ((_t(lib, 1.0), _t(lib, 2.0)), {}),
    "0-d int": lambda lib: ((_t(lib, 1, "int64"), _t(lib, 3, "int64")), {}),
    "0-d bool": lambda lib: ((_t(lib, True, "bool"), _t(lib, False, "bool")), {}),
    "empty": lambda lib: ((_t(lib, []), _t(lib, [])), {}),
    "nan vs nan": lambda lib: ((_t(lib, [1.0, NAN]), _t(lib, [1.0, NAN])), {}),
    "nan vs nan equal_nan": lambda lib: ((_t(lib, [1.0, NAN]), _t(lib, [1.0, NAN])), {"equal_nan": True}),
    "nan actual": lambda lib: ((_t(lib, [1.0, NAN, 5.0]), _t(lib, [1.0, 2.0, 3.0])), {}),
    "nan expected": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.0, NAN])), {}),
    "inf tensors": lambda lib: ((_t(lib, [INF, -INF]), _t(lib, [INF, -INF])), {}),
    "inf vs finite": lambda lib: ((_t(lib, [INF, 1.0]), _t(lib, [1e30, 1.0])), {}),
    "zero expected": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [0.0, 2.0])), {}),
    "given tolerances pass": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.05, 2.0])), {"rtol": 0.0, "atol": 0.1}),
    "given tolerances fail": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.05, 2.3])), {"rtol": 0.1, "atol": 0.01}),
    "zero tolerances": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.000001])), {"rtol": 0, "atol": 0}),
    "ints": lambda lib: ((_t(lib, [1, 2, 3], "int64"), _t(lib, [1, 5, 4], "int64")), {}),
    "uint8 no wraparound": lambda lib: ((_t(lib, [1, 2, 0], "uint8"), _t(lib, [1, 5, 255], "uint8")), {}),
    "int8 extremes": lambda lib: ((_t(lib, [-128], "int8"), _t(lib, [127], "int8")), {}),
    "int tolerances": lambda lib: ((_t(lib, [10, 20], "int32"), _t(lib, [11, 30], "int32")), {"rtol": 0.01, "atol": 1}),
    "bools tensor": lambda lib: ((_t(lib, [True, False], "bool"), _t(lib, [True, True], "bool")), {}),
    "numpy arrays": lambda lib: ((np.array([1.0, 2.0]), np.array([1.0, 2.5])), {}),
    "numpy float32 arrays": lambda lib: ((np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0], np.float32)), {}),
    "numpy 0-d arrays": lambda lib: ((np.array(1.0), np.array(2.0)), {}),
    "numpy int arrays": lambda lib: ((np.array([1, 2]), np.array([1, 3])), {}),
    "numpy vs tensor": lambda lib: ((np.array([1.0, 2.0]), _t(lib, [1.0, 2.0])), {}),
    "tensor vs number": lambda lib: ((_t(lib, 1.0), 1.0), {}),
    "transposed": lambda lib: ((lib.arange(6.0).reshape(2, 3).t(), lib.arange(6.0).reshape(3, 2)), {}),
    "expanded": lambda lib: ((lib.ones(1).expand(4), _t(lib, [1.0, 1.0, 2.0, 1.0])), {}),
    "float16 difference overflows": lambda lib: ((_t(lib, [6e4], "float16"), _t(lib, [-6e4], "float16")), {}),
    "requires grad": lambda lib: ((_t(lib, [1.0, 2.0]).requires_grad_(), _t(lib, [1.0, 2.5])), {}),
    # tensors: attributes
    "shape": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [[1.0, 2.0]])), {}),
    "dtype": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.0], "float64")), {}),
    "dtype unchecked equal": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.0], "float64")),
                                          {"check_dtype": False}),
    "dtype unchecked differ": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.0, 2.1], "float64")),
                                           {"check_dtype": False}),
    "int vs float unchecked tensors": lambda lib: ((_t(lib, [1, 2], "int64"), _t(lib, [1.0, 2.5])),
                                                   {"check_dtype": False}),
    "int8 vs uint8 unchecked": lambda lib: ((_t(lib, [-1], "int8"), _t(lib, [255], "uint8")), {"check_dtype": False}),
    "half vs bfloat16 unchecked": lambda lib: ((_t(lib, [1.0, 2.0], "float16"), _t(lib, [1.0, 2.1], "bfloat16")),
                                               {"check_dtype": False}),
    "device": lambda lib: ((_t(lib, [1.0, 2.0]), lib.empty(2, device="meta")), {}),
    "device unchecked": lambda lib: ((_t(lib, [1.0, 2.0]), lib.empty(2, device="meta")), {"check_device": False}),
    "meta meta": lambda lib: ((lib.empty(2, device="meta"), lib.empty(2, device="meta")), {}),
    "meta shape": lambda lib: ((lib.empty(2, device="meta"), lib.empty(3, device="meta")), {}),
    "stride": lambda lib: ((lib.ones(2, 3).t(), lib.ones(3, 2)), {"check_stride": True}),
    "stride unchecked": lambda lib: ((lib.ones(2, 3).t(), lib.ones(3, 2)), {}),
    "layout unchecked": lambda lib: ((lib.ones(2), lib.ones(2)), {"check_layout": False}),
    "subclass": lambda lib: ((lib.nn.Parameter(_t(lib, [1.0])), _t(lib, [1.0])), {}),
    "subclass refused": lambda lib: ((lib.nn.Parameter(_t(lib, [1.0])), _t(lib, [1.0])), {"allow_subclasses": False}),
    # msg
    "msg": lambda lib: ((_t(lib, [1.0]), _t(lib, [2.0])), {"msg": "custom"}),
    "msg nested": lambda lib: (([_t(lib, [1.0])], [_t(lib, [2.0])]), {"msg": "custom"}),
    "msg callable": lambda lib: (([_t(lib, [1.0])], [_t(lib, [2.0])]), {"msg": lambda generated: "X:" + generated}),
    "msg attribute": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.0], "float64")), {"msg": "custom"}),
    "msg not for types": lambda lib: (("a", "b"), {"msg": "custom"}),
    "msg not for lengths": lambda lib: (([1], [1, 2]), {"msg": lambda generated: "X"}),
    "msg not for tolerances": lambda lib: ((1.0, 1.0), {"rtol": 1.0, "msg": "custom"}),
}

# Each dtype's default tolerances show in the message of a mismatch; a case just inside them must pass.
for _dtype in FLOAT_DTYPES + INT_DTYPES + ("bool",):
    _values = [True, False] if _dtype == "bool" else [1, 100]
    _other = [True, True] if _dtype == "bool" else [1, 103]
    CASES[f"default tolerances {_dtype}"] = (
        lambda lib, d=_dtype, a=_values, e=_other: ((_t(lib, a, d), _t(lib, e, d)), {}))
for _dtype, _inside in (("float16", 1.0e-3), ("bfloat16", 1.5e-2), ("float32", 1.2e-6), ("float64", 0.9e-7)):
    CASES[f"inside tolerances {_dtype}"] = (
        lambda lib, d=_dtype, r=_inside: ((_t(lib, [1000.0 * (1 + r), 0.0], d), _t(lib, [1000.0, 0.0], d)), {}))
    CASES[f"atol on zero {_dtype}"] = (
        lambda lib, d=_dtype: ((_t(lib, [0.0, 0.9e-7 if d == "float64" else 0.9e-5], d), _t(lib, [0.0, 0.0], d)), {}))


@pytest.mark.parametrize("name", CASES)
def test_assert_close_agrees_with_torch(name):
    expected, actual = _both(CASES[name])
    assert actual == expected


def test_assert_close_cases_fail_in_torch():
    # The table must exercise failures: most of its cases fail in torch.
    failing = sum(_both(build)[0] is not None for build in CASES.values())
    assert failing > len(CASES) // 2


def test_assert_close_random_tensors_agree_with_torch():
    # Perturbations around each dtype's tolerance, with the odd NaN, infinity and zero: the pass/fail verdict and
    # every number in the message (differences, their indices, counts) must equal torch's.
    rng = np.random.default_rng(0)
    verdicts = set()
    for trial in range(120):
        dtype = FLOAT_DTYPES[trial % 4]
        shape = tuple(rng.integers(1, 5, size=rng.integers(1, 4)))
        expected_values = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4)
        scale = {"float16": 1e-3, "bfloat16": 1.6e-2, "float32": 1.3e-6, "float64": 1e-7}[dtype]
        actual_values = expected_values * (1 + rng.normal(size=shape) * scale * rng.choice([0.1, 1, 10]))
        special = rng.integers(0, 6)
        if special < 3:
            flat = actual_values.reshape(-1)
            flat[rng.integers(0, flat.size)] = (NAN, INF, 0.0)[special]
        kwargs = {"equal_nan": bool(rng.integers(0, 2))}
        expected, actual = _both(lambda lib: ((_t(lib, actual_values.tolist(), dtype),
                                               _t(lib, expected_values.tolist(), dtype)), kwargs))
        assert actual == expected, (dtype, actual_values, expected_values)
        verdicts.add(expected is None)
    assert verdicts == {True, False}


def test_bool_against_number_is_refused_like_torch():
    # torch fails on this pair with a RuntimeError of its own internals; only the type is shared.
    with pytest.raises(RuntimeError):
        torch.testing.assert_close(True, 1)
    with pytest.raises(RuntimeError, match="bool"):
        tp.testing.assert_close(True, 1)


def test_msg_callable_receives_generated_message():
    seen = []
    with pytest.raises(AssertionError, match="^rewritten$"):
        tp.testing.assert_close({"w": tp.ones(2)}, {"w": tp.zeros(2)}, msg=lambda m: seen.append(m) or "rewritten")
    assert seen[0].startswith("Tensor-likes are not close!\n\nMismatched elements: 2 / 2 (100.0%)")
    assert seen[0].endswith("The failure occurred for item ['w']")


def test_assert_close_leaves_inputs_alone():
    actual = tp.tensor([1.0, 2.0], requires_grad=True)
    expected = tp.tensor([1.0, 3.0])
    with pytest.raises(AssertionError, match="Greatest absolute difference: 1.0 at index \\(1,\\)"):
        tp.testing.assert_close(actual, expected)
    assert actual.tolist() == [1.0, 2.0] and expected.tolist() == [1.0, 3.0] and actual.grad_fn is None


ALLCLOSE_CASES = {
    "float32 looser rtol": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.00005, 2.0])), {}),
    "float32 beyond": lambda lib: ((_t(lib, [1.0, 2.0]), _t(lib, [1.001, 2.0])), {}),
    "float16": lambda lib: ((_t(lib, [1.0], "float16"), _t(lib, [1.002], "float16")), {}),
    "float64": lambda lib: ((_t(lib, [1.0], "float64"), _t(lib, [1.000001], "float64")), {}),
    "float64 atol": lambda lib: ((_t(lib, [5e-8], "float64"), _t(lib, [0.0], "float64")), {}),
    "bfloat16 exact": lambda lib: ((_t(lib, [1.0], "bfloat16"), _t(lib, [1.0078125], "bfloat16")), {}),
    "nan equal by default": lambda lib: ((_t(lib, [NAN]), _t(lib, [NAN])), {}),
    "nan unequal": lambda lib: ((_t(lib, [NAN]), _t(lib, [NAN])), {"equal_nan": False}),
    "lists": lambda lib: (([1.0, 2.0], [1.0, 2.5]), {}),
    "tensor vs list": lambda lib: ((_t(lib, [1, 2], "int32"), [1, 2]), {}),
    "dtypes differ": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.0], "float64")), {}),
    "tolerances": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.5])), {"rtol": 0.0, "atol": 0.6}),
    "rtol only": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.5])), {"rtol": 0.6}),
    "msg": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.5])), {"msg": "custom"}),
    "empty msg": lambda lib: ((_t(lib, [1.0]), _t(lib, [1.5])), {"msg": ""}),
}


@pytest.mark.parametrize("name", ALLCLOSE_CASES)
def test_assert_allclose_agrees_with_torch(name):
    expected, actual = _both(ALLCLOSE_CASES[name], "assert_allclose")
    assert actual == expected


def test_assert_allclose_warns_like_torch():
    def warning(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.testing.assert_allclose(lib.ones(1), lib.ones(1))
        assert len(caught) == 1 and caught[0].filename == __file__
        return caught[0].category, _normalized(str(caught[0].message))
    assert warning(tp) == warning(torch)


# ---- make_tensor

def _sample(dtype, **kwargs):
    return tp.testing.make_tensor(4000, dtype=getattr(tp, dtype), device="cpu", **kwargs)


@pytest.mark.parametrize("dtype, values", [
    ("bool", {False, True}),
    ("uint8", set(range(0, 10))),
    *[(dtype, set(range(-9, 10))) for dtype in INT_DTYPES[1:]],
])
def test_make_tensor_default_ranges_of_integers(dtype, values):
    result = _sample(dtype)
    assert result.dtype == getattr(tp, dtype) and set(result.tolist()) == values


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_make_tensor_default_range_of_floats(dtype):
    values = _sample(dtype).float().numpy()
    # Rounding to a half-precision type may land on the excluded bound.
    assert values.min() >= -9 and values.max() <= 9 and (dtype in ("float16", "bfloat16") or values.max() < 9)
    assert values.min() < -8.5 and values.max() > 8.5 and len(np.unique(values)) > 100


@pytest.mark.parametrize("dtype, low, high, lowest, highest", [
    ("bool", -5, 5, 0, 1),
    ("uint8", -1000, 1000, 0, 255),
    ("int8", -1000, 1000, -128, 127),
    ("int16", 3.5, 6.2, 4, 6),
    ("int64", -2.0 ** 70, -2.0 ** 62, None, None),
])
def test_make_tensor_bounds_of_integers_are_clamped_and_rounded(dtype, low, high, lowest, highest):
    values = _sample(dtype, low=low, high=high).tolist()
    if lowest is None:  # only the range matters: the values lie in int64 below -2**62
        assert all(v < -2 ** 62 for v in values) and min(values) >= -2 ** 63
    else:
        assert min(values) == lowest and max(values) == highest


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_make_tensor_bounds_of_floats_are_clamped(dtype):
    info = tp.finfo(getattr(tp, dtype))
    values = _sample(dtype, low=-INF, high=INF).double().numpy()
    # The whole finite range: drawn at half scale and doubled, it must still be finite and span it.
    assert np.isfinite(values).all() and values.min() < -info.max / 4 and values.max() > info.max / 4
    values = _sample(dtype, low=0.5, high=0.75).double().numpy()
    assert values.min() >= 0.5 and values.max() <= 0.75


MAKE_TENSOR_ERRORS = {
    "nan low": {"dtype": "float32", "low": NAN},
    "nan high": {"dtype": "int32", "high": NAN},
    "low above high": {"dtype": "float32", "low": 5, "high": 1},
    "low equals high for integers": {"dtype": "int8", "low": 3, "high": 3},
    "default high below low": {"dtype": "int16", "low": 200},
    "interval below uint8": {"dtype": "uint8", "high": -1},
    "interval above bool": {"dtype": "bool", "low": 2, "high": 4},
    "interval above int64": {"dtype": "int64", "low": 2 ** 63 - 1, "high": 2 ** 64},
    "interval above float16": {"dtype": "float16", "low": 1e6, "high": 1e7},
    "requires_grad int64": {"dtype": "int64", "requires_grad": True},
    "requires_grad bool": {"dtype": "bool", "requires_grad": True},
    "noncontiguous with memory_format": {"dtype": "float32", "noncontiguous": True, "memory_format": "channels_last"},
}


@pytest.mark.parametrize("name", MAKE_TENSOR_ERRORS)
def test_make_tensor_errors_agree_with_torch(name):
    def run(lib):
        kwargs = dict(MAKE_TENSOR_ERRORS[name])
        kwargs["dtype"] = getattr(lib, kwargs["dtype"])
        if "memory_format" in kwargs:
            kwargs["memory_format"] = getattr(lib, kwargs["memory_format"])
        return _outcome(lambda: lib.testing.make_tensor(2, 3, 4, 5, device="cpu", **kwargs))
    expected, actual = run(torch), run(tp)
    assert expected is not None and actual == expected


def test_make_tensor_refuses_what_is_no_dtype():
    with pytest.raises(TypeError) as expected:
        torch.testing.make_tensor(3, dtype=None, device="cpu")
    with pytest.raises(TypeError) as actual:
        tp.testing.make_tensor(3, dtype=None, device="cpu")
    assert _normalized(str(expected.value)).startswith(str(actual.value))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_make_tensor_low_equal_high_for_floats_warns_and_fills(dtype):
    def run(lib):
        with pytest.warns(FutureWarning) as caught:
            result = lib.testing.make_tensor(5, dtype=getattr(lib, dtype), device="cpu", low=2.5, high=2.5)
        assert caught[0].filename == __file__
        return result.tolist(), _normalized(str(caught[0].message))
    assert run(tp) == run(torch)


@pytest.mark.parametrize("shape", [(), (1,), (2, 3), (4, 1, 3), (3, 0)])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "float32"])
def test_make_tensor_noncontiguous(shape, dtype):
    result = tp.testing.make_tensor(shape, dtype=getattr(tp, dtype), device="cpu", noncontiguous=True, low=0, high=2)
    reference = torch.testing.make_tensor(shape, dtype=getattr(torch, dtype), device="cpu", noncontiguous=True)
    assert tuple(result.shape) == shape
    assert result.stride() == reference.stride() and result.is_contiguous() == reference.is_contiguous()
    assert result.storage_offset() == reference.storage_offset()
    assert all(0 <= v < 2 for v in result.flatten().tolist())


def test_make_tensor_memory_format():
    for lib in (tp, torch):
        result = lib.testing.make_tensor(2, 3, 4, 5, dtype=lib.float32, device="cpu", memory_format=lib.channels_last)
        assert result.stride() == (60, 1, 15, 3) and result.is_contiguous(memory_format=lib.channels_last)


@pytest.mark.parametrize("dtype, replacement", [("bool", True), ("uint8", 1), ("int8", 1), ("int64", 1)])
def test_make_tensor_exclude_zero_integers(dtype, replacement):
    values = _sample(dtype, low=0, high=2, exclude_zero=True).tolist()
    assert set(values) == {replacement}
    values = _sample(dtype, low=0, high=2, exclude_zero=True, noncontiguous=True).tolist()
    assert set(values) == {replacement}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_make_tensor_exclude_zero_floats(dtype):
    # low == high == 0 gives all zeros, each to be replaced by the smallest positive normal number.
    with pytest.warns(FutureWarning):
        values = _sample(dtype, low=0, high=0, exclude_zero=True)
    with pytest.warns(FutureWarning):
        reference = torch.testing.make_tensor(4000, dtype=getattr(torch, dtype), device="cpu", low=0, high=0,
                                              exclude_zero=True)
    assert values.tolist() == reference.tolist() == [tp.finfo(getattr(tp, dtype)).tiny] * 4000


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_make_tensor_requires_grad(dtype):
    result = tp.testing.make_tensor(3, dtype=getattr(tp, dtype), device="cpu", requires_grad=True)
    assert result.requires_grad and result.is_leaf
    assert not tp.testing.make_tensor(3, dtype=getattr(tp, dtype), device="cpu").requires_grad
    assert not tp.testing.make_tensor(3, dtype=tp.int32, device="cpu").requires_grad


@pytest.mark.parametrize("shape", [(), (3,), ((2, 3),), ([2, 3],), (tp.Size([2, 3]),), (2, 3), (0, 4)])
def test_make_tensor_shapes(shape):
    result = tp.testing.make_tensor(*shape, dtype=tp.float64, device=tp.device("cpu"))
    reference = torch.testing.make_tensor(*[tuple(s) if isinstance(s, tp.Size) else s for s in shape],
                                          dtype=torch.float64, device="cpu")
    assert tuple(result.shape) == tuple(reference.shape) and result.dtype == tp.float64
    assert result.device == tp.device("cpu")


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "bfloat16"])
def test_make_tensor_is_reproducible_with_manual_seed(dtype):
    def draw(seed):
        tp.manual_seed(seed)
        return tp.testing.make_tensor(50, dtype=getattr(tp, dtype), device="cpu", noncontiguous=True).tolist()
    assert draw(7) == draw(7)
    assert draw(7) != draw(8)


def test_public_names():
    assert tp.testing.__all__ == ["assert_close", "make_tensor", "assert_allclose"]
    assert all(callable(getattr(tp.testing, name)) for name in tp.testing.__all__)

"""nn.RNN, nn.LSTM, nn.GRU against torch with torch's weights copied across.

Each layer is built in both libraries from one factory `make(nn)`; torch's state dict is copied
into tensorplay's, and the outputs, final states, the gradients of the input and of h0 (c0) and
every parameter's gradient must agree: over the modes (RNN tanh/relu, LSTM, GRU), num_layers,
bidirectional, batch_first and proj_size; for packed inputs (sorted and unsorted), unbatched
inputs, float64, bfloat16, dropout (eval, and p=1 in training, the one deterministic case); bfloat16
autocast's output dtypes; PyTorch's parameter names, repr and weight bookkeeping; and the errors on
bad arguments and bad input sizes.
"""

import numpy as np
import pytest
import torch

import tensorplay
from nn_testing import assert_same, copy_state, to_numpy, tp_tensor, upstream_grad

# torch says so on every LSTM with proj_size; it is about torch's own kernels.
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")

T, B, I, H = 4, 3, 5, 6

MODES = {
    "RNN_tanh": lambda nn, **kw: nn.RNN(I, H, **kw),
    "RNN_relu": lambda nn, **kw: nn.RNN(I, H, nonlinearity="relu", **kw),
    "LSTM": lambda nn, **kw: nn.LSTM(I, H, **kw),
    "GRU": lambda nn, **kw: nn.GRU(I, H, **kw),
}


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """On these tiny sizes torch's recurrent kernels spend their time waking threads (seconds per
    case on a busy machine); one thread keeps the file fast. Puts the count back afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def leaf(lib, array, dtype="float32"):
    make = torch.from_numpy if lib is torch else tp_tensor
    return make(np.array(array)).to(getattr(lib, dtype)).requires_grad_(True)


def initial_state(module, batch, seed, lib, dtype):
    """h0 (and c0 for an LSTM) of the module's shape; batch None for unbatched input."""
    directions = 2 if module.bidirectional else 1
    batch_shape = () if batch is None else (batch,)
    h_size = module.proj_size if getattr(module, "proj_size", 0) else module.hidden_size
    h0 = leaf(lib, randn(module.num_layers * directions, *batch_shape, h_size, seed=seed), dtype)
    if module.mode != "LSTM":
        return [h0]
    return [h0, leaf(lib, randn(module.num_layers * directions, *batch_shape, module.hidden_size, seed=seed + 1),
                     dtype)]


def flat(output):
    """The tensors of (output, h_n) or (output, (h_n, c_n)), a packed output as its data."""
    out, hidden = output
    out = out.data if hasattr(out, "batch_sizes") else out
    return [out] + (list(hidden) if isinstance(hidden, tuple) else [hidden])


def run_rnn(lib, module, x, with_h0, dtype, pack):
    """Runs module on x (and h0/c0), backpropagates fixed upstream gradients through the output and
    final states; returns (the packed output's index tensors or None, outputs, input leaves)."""
    inputs = [leaf(lib, x, dtype)]
    if with_h0:
        batch = (x.shape[0] if module.batch_first else x.shape[1]) if x.ndim == 3 else None
        inputs += initial_state(module, batch, seed=7, lib=lib, dtype=dtype)
    seq = inputs[0]
    if pack is not None:
        lengths, enforce_sorted = pack
        seq = lib.nn.utils.rnn.pack_padded_sequence(seq, lengths, batch_first=module.batch_first,
                                                    enforce_sorted=enforce_sorted)
    hx = None if not with_h0 else (inputs[1] if module.mode != "LSTM" else tuple(inputs[1:]))
    output = module(seq, hx)
    indices = None
    if pack is not None:
        assert type(output[0]).__name__ == "PackedSequence"
        indices = [output[0].batch_sizes, output[0].sorted_indices, output[0].unsorted_indices]
    outs = flat(output)
    as_tensor = torch.from_numpy if lib is torch else tp_tensor
    grads = [as_tensor(upstream_grad(tuple(o.shape), seed=k + 1)).to(o.dtype) for k, o in enumerate(outs)]
    lib.autograd.backward(outs, grads)
    return indices, outs, inputs


def compare_rnn(make, x, with_h0=True, train=False, dtype="float32", pack=None, rtol=1e-4, atol=1e-5):
    """Runs make(torch.nn) and make(tensorplay.nn) with the same weights on x (pack: (lengths,
    enforce_sorted) to pack x first) and compares outputs and every gradient."""
    torch.manual_seed(0)  # the weights, so that a case's rounding is the same on every run
    modules = {torch: make(torch.nn), tensorplay: make(tensorplay.nn)}
    copy_state(modules[torch], modules[tensorplay])
    results = {}
    for lib, module in modules.items():
        module.train(train)
        module.to(getattr(lib, dtype))
        results[lib] = run_rnn(lib, module, x, with_h0, dtype, pack)
    (their_indices, their_outs, their_inputs), (our_indices, our_outs, our_inputs) = results[torch], results[tensorplay]
    if pack is not None:
        for name, p, t in zip(("batch_sizes", "sorted_indices", "unsorted_indices"), our_indices, their_indices):
            assert (p is None) == (t is None), name
            if t is not None:
                assert_same(p, t, what=name)
    for name, p, t in zip(("output", "h_n", "c_n"), our_outs, their_outs):
        assert_same(p, t, rtol, atol, what=name)
    for name, p, t in zip(("input", "h0", "c0"), our_inputs, their_inputs):
        assert_same(p.grad, t.grad, rtol, atol, what=f"grad of {name}")
    tp_params = dict(modules[tensorplay].named_parameters())
    for name, t in modules[torch].named_parameters():
        assert_same(tp_params[name].grad, t.grad, rtol, atol, what=f"grad of {name}")


def config_id(mode, num_layers, bidirectional, batch_first):
    return f"{mode}-L{num_layers}{'-bi' if bidirectional else ''}{'-batch_first' if batch_first else ''}"


CONFIGS = [pytest.param(mode, layers, bi, bf, id=config_id(mode, layers, bi, bf))
           for mode in MODES for layers in (1, 2) for bi in (False, True) for bf in (False, True)]


@pytest.mark.parametrize("mode, num_layers, bidirectional, batch_first", CONFIGS)
def test_layer_matches_torch(mode, num_layers, bidirectional, batch_first):
    x = randn(B, T, I) if batch_first else randn(T, B, I)
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=num_layers, bidirectional=bidirectional,
                                       batch_first=batch_first), x)


@pytest.mark.parametrize("num_layers, bidirectional", [(1, False), (2, True)])
@pytest.mark.parametrize("with_h0", [True, False])
def test_lstm_with_projections_matches_torch(num_layers, bidirectional, with_h0):
    compare_rnn(lambda nn: nn.LSTM(I, H, num_layers, proj_size=3, bidirectional=bidirectional), randn(T, B, I),
                with_h0=with_h0)


@pytest.mark.parametrize("mode", MODES)
def test_without_h0_or_bias_matches_torch(mode):
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=2, bias=False, bidirectional=True), randn(T, B, I),
                with_h0=False)


@pytest.mark.parametrize("mode", MODES)
def test_float64_matches_torch(mode):
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True), randn(T, B, I), dtype="float64",
                rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_bfloat16_weights_match_torch(mode):
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True), randn(T, B, I), dtype="bfloat16",
                rtol=3e-2, atol=3e-2)


PACKINGS = [
    pytest.param(([4, 3, 1], True), False, id="sorted"),
    pytest.param(([2, 4, 3], False), False, id="unsorted"),
    pytest.param(([3, 3, 4], False), True, id="unsorted-batch_first"),
]


@pytest.mark.parametrize("pack, batch_first", PACKINGS)
@pytest.mark.parametrize("mode", MODES)
def test_packed_input_matches_torch(mode, pack, batch_first):
    x = randn(B, T, I) if batch_first else randn(T, B, I)
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True, batch_first=batch_first), x, pack=pack)


@pytest.mark.parametrize("mode", MODES)
def test_packed_input_without_h0_matches_torch(mode):
    compare_rnn(lambda nn: MODES[mode](nn, bidirectional=True), randn(T, B, I), with_h0=False, pack=([1, 4, 2], False))


def test_packed_lstm_with_projections_matches_torch():
    compare_rnn(lambda nn: nn.LSTM(I, H, 2, proj_size=2, bidirectional=True), randn(T, B, I), pack=([2, 4, 3], False))


@pytest.mark.parametrize("batch_first, with_h0", [(False, True), (True, False)])
@pytest.mark.parametrize("mode", MODES)
def test_unbatched_input_matches_torch(mode, batch_first, with_h0):
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True, batch_first=batch_first),
                randn(T, I), with_h0=with_h0)


@pytest.mark.parametrize("mode", MODES)
def test_dropout_is_off_in_eval_and_p1_zeroes_the_next_layers_input(mode):
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=2, dropout=0.5), randn(T, B, I))
    compare_rnn(lambda nn: MODES[mode](nn, num_layers=3, dropout=1.0), randn(T, B, I), train=True)


def test_dropout_changes_training_output_only():
    tensorplay.manual_seed(0)
    lstm = tensorplay.nn.LSTM(I, H, 2, dropout=0.5)
    x = tp_tensor(randn(T, B, I))
    lstm.eval()
    eval_out = to_numpy(lstm(x)[0])
    np.testing.assert_array_equal(to_numpy(lstm(x)[0]), eval_out)
    lstm.train()
    assert not np.allclose(to_numpy(lstm(x)[0]), eval_out)


def test_lstm_under_autocast_runs_in_bfloat16_as_torchs_onednn_layer():
    """PyTorch lowers an LSTM without projections as one layer (oneDNN's, which some CPUs cannot
    create in bfloat16): its output and final h and c are bfloat16, the gradients of the float32
    leaves float32. The values: within bfloat16's tolerance of torch's float32 LSTM, forward and
    backward, bidirectional over packed sequences of different lengths (so that some sequences end
    while the others go on)."""
    modules = {torch: torch.nn.LSTM(I, H, 2, bidirectional=True),
               tensorplay: tensorplay.nn.LSTM(I, H, 2, bidirectional=True)}
    copy_state(modules[torch], modules[tensorplay])
    lengths = [T, T - 1, 2]
    results = {}
    for lib, module in modules.items():
        x = leaf(lib, randn(T, B, I))
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths)
        with lib.autocast("cpu", enabled=lib is tensorplay):
            out, (h, c) = module(packed)
        if lib is tensorplay:
            assert (out.data.dtype, h.dtype, c.dtype) == (tensorplay.bfloat16,) * 3
        (out.data.float().sum() + (h.float() * 2).sum() + c.float().sum()).backward()
        results[lib] = [out.data, h, c, x.grad, module.weight_hh_l0.grad, module.weight_ih_l1_reverse.grad]
    for lib_grad in results[tensorplay][3:]:
        assert lib_grad.dtype == tensorplay.float32
    for ours, theirs in zip(results[tensorplay], results[torch]):
        np.testing.assert_allclose(to_numpy(ours.float()), to_numpy(theirs.detach()), rtol=5e-2, atol=5e-2)


# With proj_size the LSTM is its cells in both libraries (its c stays float32).
AUTOCAST = [
    pytest.param(lambda nn: nn.RNN(I, H, 2, bidirectional=True), id="RNN_tanh"),
    pytest.param(lambda nn: nn.RNN(I, H, nonlinearity="relu"), id="RNN_relu"),
    pytest.param(lambda nn: nn.GRU(I, H, 2, bidirectional=True), id="GRU"),
    pytest.param(lambda nn: nn.LSTM(I, H, 2, proj_size=3), id="LSTM-proj"),
]


@pytest.mark.parametrize("make", AUTOCAST)
def test_bfloat16_autocast_dtypes_and_values_match_torch(make):
    modules = {torch: make(torch.nn), tensorplay: make(tensorplay.nn)}
    copy_state(modules[torch], modules[tensorplay])
    outs = {}
    for lib, module in modules.items():
        x = torch.from_numpy(randn(T, B, I)) if lib is torch else tp_tensor(randn(T, B, I))
        with lib.autocast("cpu", dtype=lib.bfloat16):
            outs[lib] = flat(module(x))
    for p, t in zip(outs[tensorplay], outs[torch]):
        assert_same(p, t, rtol=5e-2, atol=5e-2)


def test_input_dtype_must_match_the_weights_outside_autocast():
    for lib in (torch, tensorplay):
        with pytest.raises(ValueError, match=r"RNN input dtype \(\w+\.float64\) does not match weight dtype"):
            lib.nn.GRU(I, H)(lib.zeros(T, B, I, dtype=lib.float64))


# ---- parameters and bookkeeping ----

SHAPE_CONFIGS = [
    ("RNN", dict(num_layers=2, bidirectional=True)),
    ("RNN", dict(nonlinearity="relu", bias=False)),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=4)),
    ("LSTM", dict(num_layers=2, bias=False, proj_size=2)),
    ("GRU", dict(num_layers=3, bidirectional=True, batch_first=True, dropout=0.25)),
]


@pytest.mark.parametrize("cls, kwargs", SHAPE_CONFIGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(SHAPE_CONFIGS)])
def test_parameters_repr_and_weight_lists_match_torch(cls, kwargs):
    theirs, ours = getattr(torch.nn, cls)(I, H, **kwargs), getattr(tensorplay.nn, cls)(I, H, **kwargs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert ours._all_weights == theirs._all_weights
    assert [w is getattr(ours, n) for w, n in zip(ours._flat_weights, ours._flat_weights_names)] == \
        [True] * len(ours._flat_weights_names)
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    assert ours.mode == theirs.mode and ours.dropout == theirs.dropout
    bound = 1 / np.sqrt(H)
    for name, p in ours.named_parameters():
        values = to_numpy(p)
        assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 4, name
    ours.flatten_parameters()
    ours.load_state_dict({k: tp_tensor(v) for k, v in theirs.state_dict().items()})
    for name, p in theirs.named_parameters():
        np.testing.assert_array_equal(to_numpy(getattr(ours, name)), to_numpy(p))


def test_flat_weights_follow_a_replaced_parameter_and_a_dtype_change():
    gru = tensorplay.nn.GRU(I, H)
    gru.weight_hh_l0 = tensorplay.nn.Parameter(tensorplay.zeros(3 * H, H))
    assert gru._flat_weights[1] is gru.weight_hh_l0
    gru.double()
    assert all(str(w.dtype) == "tensorplay.float64" for w in gru._flat_weights)
    out, h = gru(tensorplay.zeros(T, B, I, dtype=tensorplay.float64))
    assert str(out.dtype) == "tensorplay.float64"


def test_rnn_takes_nonlinearity_as_the_fourth_positional_argument():
    for lib in (torch, tensorplay):
        rnn = lib.nn.RNN(I, H, 2, "relu", False)
        assert rnn.nonlinearity == "relu" and rnn.mode == "RNN_RELU" and rnn.bias is False


@pytest.mark.parametrize("make, error, match", [
    (lambda nn: nn.RNN(I, H, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
    (lambda nn: nn.GRU(I, H, proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
    (lambda nn: nn.LSTM(I, H, proj_size=H), ValueError, "proj_size has to be smaller than hidden_size"),
    (lambda nn: nn.LSTM(I, H, proj_size=-1), ValueError, "proj_size should be a positive integer"),
    (lambda nn: nn.LSTM(I, H, dropout=1.5), ValueError, "dropout should be a number in range"),
    (lambda nn: nn.LSTM(I, 0), ValueError, "hidden_size must be greater than zero"),
    (lambda nn: nn.LSTM(0, H), ValueError, "input_size must be greater than zero"),
    (lambda nn: nn.GRU(I, H, 0), ValueError, "num_layers must be greater than zero"),
    (lambda nn: nn.GRU(I, H, bias=1), TypeError, "bias should be of type bool, got: int"),
    (lambda nn: nn.GRU(I, 2.0), TypeError, "hidden_size should be of type int, got: float"),
], ids=["nonlinearity", "gru_proj_size", "proj_size_too_big", "proj_size_negative", "dropout", "hidden_size",
        "input_size", "num_layers", "bias_type", "hidden_size_type"])
def test_constructor_errors_match_torch(make, error, match):
    for lib in (torch, tensorplay):
        with pytest.raises(error, match=match):
            make(lib.nn)


def test_dropout_with_one_layer_warns():
    for lib in (torch, tensorplay):
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
            lib.nn.GRU(I, H, dropout=0.5)


# Bad input sizes: (module factory, input shape, hidden shapes or None, error, message).
BAD_INPUTS = [
    pytest.param(MODES["RNN_tanh"], (2, T, B, I), None, ValueError, "RNN: Expected input to be 2D or 3D, got 4D tensor",
                 id="rnn_4d"),
    pytest.param(MODES["LSTM"], (I,), None, ValueError, "LSTM: Expected input to be 2D or 3D, got 1D instead",
                 id="lstm_1d"),
    pytest.param(MODES["GRU"], (T, B, I + 1), None, RuntimeError,
                 r"input.size\(-1\) must be equal to input_size. Expected 5, got 6", id="input_size"),
    pytest.param(MODES["GRU"], (T, B, I), [(1, B - 1, H)], RuntimeError,
                 r"Expected hidden size \(1, 3, 6\), got \[1, 2, 6\]", id="hidden_batch"),
    pytest.param(lambda nn: nn.RNN(I, H, 2), (T, B, I), [(1, B, H)], RuntimeError,
                 r"Expected hidden size \(2, 3, 6\), got \[1, 3, 6\]", id="hidden_layers"),
    pytest.param(MODES["RNN_tanh"], (T, B, I), [(B, H)], RuntimeError,
                 "For batched 3-D input, hx should also be 3-D but got 2-D tensor", id="batched_2d_hx"),
    pytest.param(MODES["GRU"], (T, I), [(1, B, H)], RuntimeError,
                 "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor", id="unbatched_3d_hx"),
    pytest.param(lambda nn: nn.LSTM(I, H, proj_size=2), (T, B, I), [(1, B, H), (1, B, H)], RuntimeError,
                 r"Expected hidden\[0\] size \(1, 3, 2\), got \[1, 3, 6\]", id="lstm_h0_proj"),
    pytest.param(MODES["LSTM"], (T, B, I), [(1, B, H), (1, B, H + 1)], RuntimeError,
                 r"Expected hidden\[1\] size \(1, 3, 6\), got \[1, 3, 7\]", id="lstm_c0"),
    pytest.param(MODES["LSTM"], (T, B, I), [(1, B, H), (B, H)], RuntimeError,
                 r"For batched 3-D input, hx and cx should also be 3-D but got \(3-D, 2-D\) tensors", id="lstm_c0_2d"),
    pytest.param(MODES["LSTM"], (T, I), [(1, B, H), (1, B, H)], RuntimeError,
                 r"For unbatched 2-D input, hx and cx should also be 2-D but got \(3-D, 3-D\) tensors",
                 id="lstm_unbatched_3d_hx"),
]


@pytest.mark.parametrize("make, shape, hidden_shapes, error, match", BAD_INPUTS)
def test_bad_input_sizes_raise_torchs_errors(make, shape, hidden_shapes, error, match):
    for lib in (torch, tensorplay):
        module = make(lib.nn)
        hx = None
        if hidden_shapes is not None:
            hidden = [lib.zeros(*s) for s in hidden_shapes]
            hx = hidden[0] if len(hidden) == 1 else tuple(hidden)
        with pytest.raises(error, match=match):
            module(lib.zeros(*shape), hx)


def test_empty_sequences_raise_and_an_empty_batch_runs():
    for lib in (torch, tensorplay):
        lstm = lib.nn.LSTM(I, H, bidirectional=True)
        with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
            lstm(lib.zeros(0, B, I))
        out, (h, c) = lstm(lib.zeros(T, 0, I))
        assert (tuple(out.shape), tuple(h.shape), tuple(c.shape)) == ((T, 0, 2 * H), (2, 0, H), (2, 0, H))


def test_packed_input_must_be_two_dimensional_data():
    for lib in (torch, tensorplay):
        packed = lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(T, B, 2, I), [4, 3, 1])
        with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 3"):
            lib.nn.GRU(I, H)(packed)


# ---- An LSTM layer without projections runs as one op, tensorplay._C._lstm_layer: fused steps,
# one backward node, and the composite rebuilt for higher-order gradients ----

@pytest.mark.parametrize("bidirectional", [False, True], ids=["forward", "bidirectional"])
def test_lstm_double_backward_matches_torch(bidirectional):
    """A gradient penalty: the parameters' gradient of |d(out^2)/dx|^2, in float64."""
    modules = {torch: torch.nn.LSTM(I, H, 2, bidirectional=bidirectional),
               tensorplay: tensorplay.nn.LSTM(I, H, 2, bidirectional=bidirectional)}
    copy_state(modules[torch], modules[tensorplay])
    leaves = {}
    for lib, module in modules.items():
        module.double()
        x = leaf(lib, randn(T, B, I), "float64")
        out, (h, c) = module(x)
        grad_x, = lib.autograd.grad((out * out).sum() + (c * h).sum(), x, create_graph=True)
        (grad_x * grad_x).sum().backward()
        leaves[lib] = x
    assert_same(leaves[tensorplay].grad, leaves[torch].grad, 1e-7, 1e-9, what="grad of input")
    tp_params = dict(modules[tensorplay].named_parameters())
    for name, t in modules[torch].named_parameters():
        assert_same(tp_params[name].grad, t.grad, 1e-7, 1e-9, what=f"grad of {name}")


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_lstm_layer_gradients_match_finite_differences(reverse):
    """Packed steps of 3, 3, 2 and 1 rows: the states of the sequences that end early (or, in
    reverse, start late) take their own path through the state buffer."""
    rng = np.random.default_rng(3)
    batch_sizes, hidden = [3, 3, 2, 1], 2
    gates, h0, c0, w_hh = (tp_tensor(rng.standard_normal(shape)).double().requires_grad_()
                           for shape in [(9, 4 * hidden), (3, hidden), (3, hidden), (4 * hidden, hidden)])
    layer = lambda *args: tensorplay._C._lstm_layer(args[0], batch_sizes, *args[1:], reverse)  # noqa: E731
    assert tensorplay.autograd.gradcheck(layer, (gates, h0, c0, w_hh))


@pytest.mark.parametrize("output", ["output", "h_n", "c_n"])
def test_lstm_gradient_through_one_output_matches_torch(output):
    modules = {torch: torch.nn.LSTM(I, H, bidirectional=True), tensorplay: tensorplay.nn.LSTM(I, H, bidirectional=True)}
    copy_state(modules[torch], modules[tensorplay])
    results = {}
    for lib, module in modules.items():
        x = leaf(lib, randn(T, B, I))
        out, (h, c) = module(x)
        {"output": out, "h_n": h, "c_n": c}[output].pow(2).sum().backward()
        results[lib] = [x.grad] + [p.grad for p in module.parameters()]
    for ours, theirs in zip(results[tensorplay], results[torch]):
        assert_same(ours, theirs, 1e-4, 1e-5)


def test_lstm_rows_split_across_threads_match_torch(restore_threads):
    tensorplay.set_num_threads(2)
    compare_rnn(lambda nn: nn.LSTM(4, 64, bidirectional=True), randn(3, 300, 4))


def test_lstm_empty_batch_gives_zero_weight_gradients():
    lstm = tensorplay.nn.LSTM(I, H)
    out, _ = lstm(tensorplay.zeros(T, 0, I))
    out.sum().backward()
    assert all(to_numpy(p.grad).shape == tuple(p.shape) and not to_numpy(p.grad).any() for p in lstm.parameters())


def test_lstm_backward_twice_without_retain_graph_raises():
    out, _ = tensorplay.nn.LSTM(I, H)(tp_tensor(randn(T, B, I)))
    loss = out.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


@pytest.mark.parametrize("shapes, batch_sizes, match", [
    ([(5, 24), (3, 6), (3, 6), (24, 5)], [3, 2], r"expected w_hh of shape \(4 \* hidden, hidden\), got \[24, 5\]"),
    ([(5, 20), (3, 6), (3, 6), (24, 6)], [3, 2], r"expected input gates of shape \(rows, 24\), got \[5, 20\]"),
    ([(5, 24), (3, 6), (3, 6), (24, 6)], [2, 3], r"batch sizes must be non-negative and non-increasing"),
    ([(5, 24), (3, 6), (3, 6), (24, 6)], [3, 1], r"batch sizes \[3, 1\] add up to 4 rows, but the input gates have 5"),
    ([(5, 24), (3, 6), (2, 6), (24, 6)], [3, 2], r"expected initial states of shape \(3, 6\), got \[2, 6\]"),
])
def test_lstm_layer_checks_its_arguments(shapes, batch_sizes, match):
    with pytest.raises(RuntimeError, match=r"\[lstm_layer\] " + match):
        tensorplay._C._lstm_layer(*(tensorplay.zeros(*s) for s in shapes[:1]), batch_sizes,
                                  *(tensorplay.zeros(*s) for s in shapes[1:]), False)

"""The recurrent layers RNN, LSTM, GRU (RNNBase) and their one-step cells RNNCell, LSTMCell, GRUCell
(RNNCellBase, over the C++ cells tensorplay.rnn_tanh_cell, ...).

For each layer and direction, one matmul projects the whole sequence's input up front, then each
time step adds the recurrent matmul and applies the cell's gates. An LSTM layer without projections
runs its steps in one op, tensorplay._lstm_layer (csrc/tensorplay/ops/rnn.cpp), whose fused kernels and
backward node stand for the same composite, and which autocast lowers as a whole (as PyTorch lowers its
oneDNN layer); the other layers are composites here, so autograd and autocast come from their ops.
Padded and packed inputs share one path: a padded batch is a packed one whose batch size is the same at
every step.
"""

import math
import numbers
import warnings

import tensorplay as tp
from tensorplay import _C
from tensorplay.nn import functional as F, init
from tensorplay.nn.modules.module import Module
from tensorplay.nn.parameter import Parameter
from tensorplay.nn.utils.rnn import PackedSequence


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _any_autocast_enabled():
    return _C.is_autocast_enabled("cpu") or _C.is_autocast_enabled("cuda")


# One time step of each mode: x is the step's input projection (bias b_ih included), state the
# tuple of hidden tensors; returns the new state, whose first tensor is the step's output.
# The operations follow PyTorch's CPU cells, so that autocast gives the same dtypes.

def _rnn_tanh_step(x, state, w_hh, b_hh, w_hr):
    return (tp.tanh(x + F.linear(state[0], w_hh, b_hh)),)


def _rnn_relu_step(x, state, w_hh, b_hh, w_hr):
    return (tp.relu(x + F.linear(state[0], w_hh, b_hh)),)


def _lstm_step(x, state, w_hh, b_hh, w_hr):
    h, c = state
    in_gate, forget_gate, cell_gate, out_gate = (x + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = tp.sigmoid(forget_gate) * c + tp.sigmoid(in_gate) * tp.tanh(cell_gate)
    h = tp.sigmoid(out_gate) * tp.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(x, state, w_hh, b_hh, w_hr):
    h = state[0]
    x_reset, x_update, x_new = x.chunk(3, 1)
    h_reset, h_update, h_new = F.linear(h, w_hh, b_hh).chunk(3, 1)
    reset_gate = tp.sigmoid(x_reset + h_reset)
    update_gate = tp.sigmoid(x_update + h_update)
    new_gate = tp.tanh(x_new + reset_gate * h_new)
    return ((h - new_gate) * update_gate + new_gate,)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k},
    bias_hh_l{k}, weight_hr_l{k}, with _reverse for the second direction), the checks on inputs
    and hidden states, and running the layers over a packed or padded sequence."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)

        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        factory = dict(device=device, dtype=dtype)
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_C.empty(*shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        # Looked up by name on every use, so that replacing or reloading a parameter is always seen.
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Kept for PyTorch's contract: packing the weights into one buffer is a cuDNN matter, and
        tensorplay's layers read each parameter where it is, so there is nothing to do."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype and not _any_autocast_enabled():
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                             f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. "
                               f"Expected {self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, real_hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _zero_state(self, input, batch_size, size):
        num_directions = 2 if self.bidirectional else 1
        return _C.zeros(self.num_layers * num_directions, batch_size, size, dtype=input.dtype, device=input.device)

    def _unpack_input(self, input):
        """(data, batch_sizes as a list, the tensor batch_sizes, sorted_indices, unsorted_indices, batched)
        for a PackedSequence; for a 2-D or 3-D tensor, data is the tensor made 3-D and the rest None."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, batch_sizes.tolist(), batch_sizes, sorted_indices, unsorted_indices, True
        kind = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            raise ValueError(f"{kind}: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"{'tensor ' if kind == 'RNN' else ''}instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, None, None, None, None, batched

    def _forward_one_state(self, input, hx):
        """RNN's and GRU's forward: their hidden state is one tensor."""
        packed = isinstance(input, PackedSequence)
        data, batch_size_list, batch_sizes, sorted_indices, unsorted_indices, batched = self._unpack_input(input)
        if not packed and hx is not None:
            if batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        if hx is None:
            batch = batch_size_list[0] if packed else data.size(0 if self.batch_first else 1)
            hx = self._zero_state(data, batch, self.hidden_size)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        output, (hidden,) = self._run(data, batch_size_list, (hx,))
        if packed:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), hidden.squeeze(1)
        return output, hidden

    def _run(self, input, batch_sizes, state):
        """Runs every layer over input: a [T, B, input_size] tensor (batch_first applied) when
        batch_sizes is None, else packed data. state is the tuple of initial hidden tensors, each
        [num_layers * num_directions, B, *]. Returns the output (shaped like input) and the tuple
        of final hidden tensors."""
        padded_shape = None
        if batch_sizes is None:
            if self.batch_first:
                input = input.transpose(0, 1)
            padded_shape = tuple(input.shape[:2])
            if padded_shape[0] == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            batch_sizes = [padded_shape[1]] * padded_shape[0]
            input = input.reshape(padded_shape[0] * padded_shape[1], input.size(2))
        num_directions = 2 if self.bidirectional else 1
        # The fused layer is what autocast lowers, as PyTorch lowers its oneDNN layer, which takes
        # float32 and bfloat16 LSTMs; a float16 one runs as its cells there, and so here.
        fused = self.mode == "LSTM" and self.proj_size == 0 and not (
            input.dtype == tp.float16 and _any_autocast_enabled())
        finals = []
        for layer in range(self.num_layers):
            if layer > 0 and self.training and self.dropout != 0:
                input = F.dropout(input, self.dropout, True)
            outputs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                out, final = self._run_direction(input, batch_sizes, tuple(s[k] for s in state), self.all_weights[k],
                                                 reverse=direction == 1, fused=fused)
                outputs.append(out)
                finals.append(final)
            input = outputs[0] if num_directions == 1 else tp.cat(outputs, 1)
        if padded_shape is not None:
            input = input.reshape(*padded_shape, input.size(-1))
            if self.batch_first:
                input = input.transpose(0, 1)
        return input, tuple(tp.stack([final[i] for final in finals]) for i in range(len(state)))

    def _run_direction(self, input, batch_sizes, state, weights, reverse, fused):
        """One layer in one direction over packed input (batch_sizes non-increasing): the output
        data and the final state. A sequence's final state is taken at its last step; the reverse
        direction starts each sequence from its initial state at its last step."""
        w_ih, w_hh, *rest = weights
        b_ih, b_hh = rest[:2] if self.bias else (None, None)
        w_hr = rest[-1] if self.proj_size > 0 else None
        if fused:
            # The whole layer in one op, its steps fused; both biases go into the input projection.
            bias = None if b_ih is None else b_ih + b_hh
            output, h, c = _C._lstm_layer(F.linear(input, w_ih, bias), batch_sizes, state[0], state[1], w_hh, reverse)
            return output, (h, c)
        step = _STEPS[self.mode]
        # All steps' input projections in one matmul; only the recurrent matmul is per step. One
        # split (not a slice per step) keeps backward to a single gradient buffer for them all.
        projected = F.linear(input, w_ih, b_ih).split(batch_sizes)
        outputs = [None] * len(batch_sizes)
        if not reverse:
            finished = []  # states of the sequences that ended, the last-numbered ones first
            for t, n in enumerate(batch_sizes):
                if n < state[0].size(0):
                    finished.append(tuple(s[n:] for s in state))
                    state = tuple(s[:n] for s in state)
                state = step(projected[t], state, w_hh, b_hh, w_hr)
                outputs[t] = state[0]
            finished.append(state)
            final = tuple(tp.cat([f[i] for f in reversed(finished)]) for i in range(len(state)))
        else:
            initial, state = state, tuple(s[:batch_sizes[-1]] for s in state)
            for t in reversed(range(len(batch_sizes))):
                n = batch_sizes[t]
                if n > state[0].size(0):
                    state = tuple(tp.cat([s, s0[s.size(0):n]]) for s, s0 in zip(state, initial))
                state = step(projected[t], state, w_hh, b_hh, w_hr)
                outputs[t] = state[0]
            final = state
        return tp.cat(outputs), final


class RNN(RNNBase):
    """RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None): an Elman RNN,
    h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        """(output, h_n) for a [T, B, input_size] input ([B, T, ...] when batch_first, [T, input_size]
        unbatched) or a PackedSequence (then output is one too)."""
        return self._forward_one_state(input, hx)


class LSTM(RNNBase):
    """LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None): a long short-term memory RNN, its
    hidden state projected to proj_size features when proj_size > 0."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        """(output, (h_n, c_n)) for a [T, B, input_size] input ([B, T, ...] when batch_first,
        [T, input_size] unbatched) or a PackedSequence (then output is one too)."""
        packed = isinstance(input, PackedSequence)
        data, batch_size_list, batch_sizes, sorted_indices, unsorted_indices, batched = self._unpack_input(input)
        if hx is None:
            batch = batch_size_list[0] if packed else data.size(0 if self.batch_first else 1)
            real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zero_state(data, batch, real_hidden_size), self._zero_state(data, batch, self.hidden_size))
        elif packed:
            hx = self.permute_hidden(hx, sorted_indices)
        else:
            if batched and (hx[0].dim() != 3 or hx[1].dim() != 3):
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not batched:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(data, hx, batch_sizes)
        output, hidden = self._run(data, batch_size_list, tuple(hx))
        if packed:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, hidden


class GRU(RNNBase):
    """GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None): a gated recurrent unit RNN."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        """(output, h_n) for a [T, B, input_size] input ([B, T, ...] when batch_first, [T, input_size]
        unbatched) or a PackedSequence (then output is one too)."""
        return self._forward_one_state(input, hx)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_C.empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(_C.empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, states):
        """input and the hidden states as 2-D (batch, features), zeros where no state is given, and
        whether input came batched; rejects other ranks with PyTorch's messages."""
        cls = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{cls}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        out = []
        for i, state in enumerate(states):
            if state is None:
                state = _C.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            else:
                name = "hidden" if len(states) == 1 else f"hx[{i}]"
                if state.dim() not in (1, 2):
                    raise ValueError(f"{cls}: Expected {name} to be 1D or 2D, got {state.dim()}D instead")
                if state.dim() != input.dim() and batched:
                    raise RuntimeError(f"{cls}: Expected input and {name} to both be batched or both be "
                                       f"unbatched, got {input.dim()}D input and {state.dim()}D {name}")
                if not batched:
                    state = state.unsqueeze(0)
            out.append(state)
        return input, out, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        input, (hx,), batched = self._batched(input, [hx])
        cells = {"tanh": _C.rnn_tanh_cell, "relu": _C.rnn_relu_cell}
        if self.nonlinearity not in cells:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        cell = cells[self.nonlinearity]
        h = cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._batched(input, [None, None] if hx is None else list(hx))
        h, c = _C.lstm_cell(input, [h, c], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (hx,), batched = self._batched(input, [hx])
        h = _C.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)

"""RNNCell, LSTMCell, GRUCell: one time step, over the C++ cells (tensorplay.rnn_tanh_cell, ...)."""

import math

from tensorplay import _C
from tensorplay.nn import init
from tensorplay.nn.modules.module import Module
from tensorplay.nn.parameter import Parameter


__all__ = ["GRUCell", "LSTMCell", "RNNCell"]


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

// One time step of the recurrent cells, as composites of linear and the activations:
// gates = input @ w_ih^T + b_ih + hx @ w_hh^T + b_hh, split into the cell's gates.

#include <algorithm>

#include "amp/autocast.h"
#include "ops/ops.h"

namespace tp {

namespace {

// PyTorch's checks, for 2-D (batch, features) inputs and `gates` gates of the hidden size.
void check_cell(const char* op, int64_t gates, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh) {
  TP_CHECK(input.dim() == 2, "[", op, "] expected input of shape (batch, input_size), got ", to_string(input.sizes()));
  TP_CHECK(hx.dim() == 2, "[", op, "] expected hidden state of shape (batch, hidden_size), got ",
           to_string(hx.sizes()));
  TP_CHECK(w_ih.dim() == 2 && w_hh.dim() == 2, "[", op, "] expected 2-D weights, got w_ih ", to_string(w_ih.sizes()),
           " and w_hh ", to_string(w_hh.sizes()));
  const int64_t hidden = w_hh.size(1);
  TP_CHECK(w_ih.size(0) == gates * hidden && w_hh.size(0) == gates * hidden, "[", op, "] expected weights with ",
           gates * hidden, " rows (", gates, " gates of hidden size ", hidden, "), got w_ih ", to_string(w_ih.sizes()),
           " and w_hh ", to_string(w_hh.sizes()));
  TP_CHECK(input.size(1) == w_ih.size(1), "[", op, "] input has inconsistent input_size: got ", input.size(1),
           " expected ", w_ih.size(1));
  TP_CHECK(hx.size(0) == input.size(0), "[", op, "] Input batch size ", input.size(0),
           " doesn't match hidden0 batch size ", hx.size(0));
  TP_CHECK(hx.size(1) == hidden, "[", op, "] hidden0 has inconsistent hidden_size: got ", hx.size(1), ", expected ",
           hidden);
}

Tensor gates(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
             const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return add(linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh));
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_AUTOCAST(rnn_tanh_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  check_cell("rnn_tanh_cell", 1, input, hx, w_ih, w_hh);
  return tanh(gates(input, hx, w_ih, w_hh, b_ih, b_hh));
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_AUTOCAST(rnn_relu_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  check_cell("rnn_relu_cell", 1, input, hx, w_ih, w_hh);
  return relu(gates(input, hx, w_ih, w_hh, b_ih, b_hh));
}

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const TensorList& hx, const Tensor& w_ih, const Tensor& w_hh,
                                    const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_AUTOCAST(lstm_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  TP_CHECK(hx.size() == 2, "[lstm_cell] expected hx to be a pair (h, c), got ", hx.size(), " tensors");
  const Tensor &h = hx[0], &c = hx[1];
  check_cell("lstm_cell", 4, input, h, w_ih, w_hh);
  TP_CHECK(std::ranges::equal(c.sizes(), h.sizes()), "[lstm_cell] expected the cell state c of shape ", to_string(h.sizes()), ", got ",
           to_string(c.sizes()));
  // input, forget, cell and output gates
  TensorList g = chunk(gates(input, h, w_ih, w_hh, b_ih, b_hh), 4, 1);
  Tensor c_next = add(mul(sigmoid(g[1]), c), mul(sigmoid(g[0]), tanh(g[2])));
  return {mul(sigmoid(g[3]), tanh(c_next)), c_next};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_AUTOCAST(gru_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  check_cell("gru_cell", 3, input, hx, w_ih, w_hh);
  // reset, update and new gates; the reset gate scales only the hidden part of the new gate
  TensorList gi = chunk(linear(input, w_ih, b_ih), 3, 1), gh = chunk(linear(hx, w_hh, b_hh), 3, 1);
  Tensor reset = sigmoid(add(gi[0], gh[0])), update = sigmoid(add(gi[1], gh[1]));
  Tensor fresh = tanh(add(gi[2], mul(reset, gh[2])));
  return add(fresh, mul(update, sub(hx, fresh)));
}

}  // namespace tp

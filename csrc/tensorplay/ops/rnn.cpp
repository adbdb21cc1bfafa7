// The recurrent cells, one time step each, as composites of linear and the activations:
// gates = input @ w_ih^T + b_ih + hx @ w_hh^T + b_hh, split into the cell's gates. And one LSTM
// layer over a whole sequence, whose steps run as fused kernels with a backward node of its own.

#include <algorithm>
#include <vector>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/autograd/engine.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/profiler/op_span.h"

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

// An LSTM step after its matmuls: the gate pre-activations [batch, 4 * hidden] (input, forget,
// cell and output gates, in that order) and the cell state c give (h', c').
std::pair<Tensor, Tensor> lstm_update(const Tensor& gates, const Tensor& c) {
  TensorList g = chunk(gates, 4, 1);
  Tensor c_next = add(mul(sigmoid(g[1]), c), mul(sigmoid(g[0]), tanh(g[2])));
  return {mul(sigmoid(g[3]), tanh(c_next)), c_next};
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_OP_ENTRY(rnn_tanh_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  check_cell("rnn_tanh_cell", 1, input, hx, w_ih, w_hh);
  return tanh(gates(input, hx, w_ih, w_hh, b_ih, b_hh));
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_OP_ENTRY(rnn_relu_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  check_cell("rnn_relu_cell", 1, input, hx, w_ih, w_hh);
  return relu(gates(input, hx, w_ih, w_hh, b_ih, b_hh));
}

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const TensorList& hx, const Tensor& w_ih, const Tensor& w_hh,
                                    const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_OP_ENTRY(lstm_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  TP_CHECK(hx.size() == 2, "[lstm_cell] expected hx to be a pair (h, c), got ", hx.size(), " tensors");
  const Tensor &h = hx[0], &c = hx[1];
  check_cell("lstm_cell", 4, input, h, w_ih, w_hh);
  TP_CHECK(std::ranges::equal(c.sizes(), h.sizes()), "[lstm_cell] expected the cell state c of shape ",
           to_string(h.sizes()), ", got ", to_string(c.sizes()));
  return lstm_update(gates(input, h, w_ih, w_hh, b_ih, b_hh), c);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TP_OP_ENTRY(gru_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  check_cell("gru_cell", 3, input, hx, w_ih, w_hh);
  // reset, update and new gates; the reset gate scales only the hidden part of the new gate
  TensorList gi = chunk(linear(input, w_ih, b_ih), 3, 1), gh = chunk(linear(hx, w_hh, b_hh), 3, 1);
  Tensor reset = sigmoid(add(gi[0], gh[0])), update = sigmoid(add(gi[1], gh[1]));
  Tensor fresh = tanh(add(gi[2], mul(reset, gh[2])));
  return add(fresh, mul(update, sub(hx, fresh)));
}

// ---- lstm_layer ----
//
// The packed layout: step t's rows are the first batch_sizes[t] sequences (batch sizes do not
// increase), stored one step after another. A state buffer of the whole batch holds each
// sequence's latest h and c; a step updates its first batch_sizes[t] rows, so a sequence that has
// ended keeps its final state there, and in the reverse direction a sequence that has not started
// yet keeps its initial one.

namespace {

void check_layer(const Tensor& input_gates, IntArrayRef batch_sizes, const Tensor& h0, const Tensor& c0,
                 const Tensor& w_hh) {
  TP_CHECK(w_hh.dim() == 2 && w_hh.size(0) == 4 * w_hh.size(1), "[lstm_layer] expected w_hh of shape (4 * hidden, ",
           "hidden), got ", to_string(w_hh.sizes()));
  const int64_t hidden = w_hh.size(1);
  TP_CHECK(input_gates.dim() == 2 && input_gates.size(1) == 4 * hidden, "[lstm_layer] expected input gates of shape ",
           "(rows, ", 4 * hidden, "), got ", to_string(input_gates.sizes()));
  TP_CHECK(!batch_sizes.empty(), "[lstm_layer] expected at least one time step");
  int64_t rows = 0;
  for (size_t t = 0; t < batch_sizes.size(); ++t) {
    TP_CHECK(batch_sizes[t] >= 0 && (t == 0 || batch_sizes[t] <= batch_sizes[t - 1]),
             "[lstm_layer] batch sizes must be non-negative and non-increasing, got ", to_string(batch_sizes));
    rows += batch_sizes[t];
  }
  TP_CHECK(rows == input_gates.size(0), "[lstm_layer] batch sizes ", to_string(batch_sizes), " add up to ", rows,
           " rows, but the input gates have ", input_gates.size(0));
  for (const Tensor* state : {&h0, &c0})
    TP_CHECK(state->dim() == 2 && state->size(0) == batch_sizes[0] && state->size(1) == hidden,
             "[lstm_layer] expected initial states of shape (", batch_sizes[0], ", ", hidden, "), got ",
             to_string(state->sizes()));
}

// Whether the fused kernels can run the layer: one floating dtype for all its tensors, on one device.
// (Under autocast the layer's policy has already cast them all to the autocast dtype.)
bool fusable(const Tensor& input_gates, const Tensor& h0, const Tensor& c0, const Tensor& w_hh) {
  const ScalarType dtype = w_hh.dtype();
  if (!is_floating_point(dtype)) return false;
  return std::ranges::all_of(std::initializer_list<const Tensor*>{&input_gates, &h0, &c0},
                             [&](const Tensor* t) { return t->dtype() == dtype && t->device() == w_hh.device(); });
}

// Calls f(offset, n) for each step in the order the layer runs them (backward: the opposite
// order), with the offset of the step's n rows in the packed data.
template <class F>
void for_each_step(IntArrayRef batch_sizes, bool reverse, const F& f) {
  std::vector<int64_t> offsets(batch_sizes.size());
  for (size_t t = 1; t < batch_sizes.size(); ++t) offsets[t] = offsets[t - 1] + batch_sizes[t - 1];
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k;
    if (batch_sizes[t] > 0) f(offsets[t], batch_sizes[t]);
  }
}

// The layer as a composite of recorded ops, step by step: what the fused kernels compute, and
// what their node differentiates when backward itself is recorded (create_graph).
std::tuple<Tensor, Tensor, Tensor> lstm_layer_composite(const Tensor& input_gates, IntArrayRef batch_sizes,
                                                        const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                                        bool reverse) {
  TensorList x = split_with_sizes(input_gates, batch_sizes, 0);
  TensorList outputs(x.size());
  // The state buffer, as the rows that the current step updates plus those it leaves.
  Tensor h = h0, c = c0;
  TensorList ended_h, ended_c;  // forward: the final states of sequences that ended, latest first
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  if (reverse) {
    h = narrow(h0, 0, 0, batch_sizes[steps - 1]);
    c = narrow(c0, 0, 0, batch_sizes[steps - 1]);
  }
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k, n = batch_sizes[t], have = h.size(0);
    if (n < have) {
      ended_h.push_back(narrow(h, 0, n, have - n));
      ended_c.push_back(narrow(c, 0, n, have - n));
      h = narrow(h, 0, 0, n);
      c = narrow(c, 0, 0, n);
    } else if (n > have) {  // reverse: sequences that start at this step join with their initial state
      h = cat({h, narrow(h0, 0, have, n - have)});
      c = cat({c, narrow(c0, 0, have, n - have)});
    }
    std::tie(h, c) = lstm_update(add(x[t], linear(h, w_hh)), c);
    outputs[t] = h;
  }
  ended_h.push_back(h);
  ended_c.push_back(c);
  std::ranges::reverse(ended_h);
  std::ranges::reverse(ended_c);
  return {cat(outputs), cat(ended_h), cat(ended_c)};
}

class LstmLayerBackward final : public autograd::Node {
 public:
  LstmLayerBackward(IntArrayRef batch_sizes, bool reverse)
      : batch_sizes_(batch_sizes.begin(), batch_sizes.end()), reverse_(reverse) {}
  std::string name() const override { return "LstmLayerBackward0"; }

  TensorList apply(TensorList&& grads) override {
    if (is_grad_enabled()) return differentiate_composite(grads);
    Tensor activations = gates.unpack(*this), c_new = c.unpack(*this), c_old = c_prev.unpack(*this);
    Tensor w = w_hh.unpack(*this);
    const autograd::GradMeta& state = output_meta(1);
    auto buffer = [&](const Tensor& g) {
      return g.defined() ? clone(g, MemoryFormat::Contiguous) : zeros(state.shape, state.dtype, state.device);
    };
    // The gradients reaching each sequence's h and c, carried from step to step.
    Tensor grad_h = buffer(grads[1]), grad_c = buffer(grads[2]);
    Tensor grad_output = grads[0].defined() ? grads[0].contiguous() : Tensor();
    Tensor grad_gates = empty(activations.sizes(), activations.dtype(), activations.device());
    Backend& be = backend(activations.device());
    Tensor w3 = unsqueeze(w, 0);
    for_each_step(batch_sizes_, !reverse_, [&](int64_t offset, int64_t n) {
      Tensor carried = narrow(grad_h, 0, 0, n);
      Tensor dh = grad_output.defined() ? add(carried, narrow(grad_output, 0, offset, n)) : carried;
      Tensor dgates = narrow(grad_gates, 0, offset, n);
      be.lstm_cell_backward(dgates, narrow(grad_c, 0, 0, n), dh, narrow(activations, 0, offset, n),
                            narrow(c_old, 0, offset, n), narrow(c_new, 0, offset, n));
      be.gemm(unsqueeze(carried, 0), unsqueeze(dgates, 0), w3, 0, 1, Tensor());  // h_prev's gradient
    });
    // Every step's recurrent weight gradient in one product: sum over t of dgates_t^T @ h_prev_t.
    Tensor grad_w = needs_input_grad(3) ? mm(transpose(grad_gates, 0, 1), h_prev.unpack(*this)) : Tensor();
    return {needs_input_grad(0) ? grad_gates : Tensor(), needs_input_grad(1) ? grad_h : Tensor(),
            needs_input_grad(2) ? grad_c : Tensor(), grad_w};
  }

  void release_saved() override {
    for (autograd::SavedTensor* t : {&input_gates, &h0, &c0, &w_hh, &gates, &c, &c_prev, &h_prev}) t->release();
  }

  autograd::SavedTensor input_gates, h0, c0, w_hh;  // the inputs, for create_graph
  autograd::SavedTensor gates, c, c_prev, h_prev;   // per step, packed: the activations and states

 private:
  // Backward recorded for higher-order gradients: the composite's graph, rebuilt from the inputs
  // and differentiated, so that the gradients are functions of the inputs' histories.
  TensorList differentiate_composite(const TensorList& grads) {
    const Tensor inputs[] = {input_gates.unpack(*this), h0.unpack(*this), c0.unpack(*this), w_hh.unpack(*this)};
    auto [output, h_n, c_n] = lstm_layer_composite(inputs[0], batch_sizes_, inputs[1], inputs[2], inputs[3], reverse_);
    const Tensor outputs[] = {output, h_n, c_n};
    TensorList roots, root_grads, wanted;
    for (size_t i = 0; i < 3; ++i)
      if (grads[i].defined()) {
        roots.push_back(outputs[i]);
        root_grads.push_back(grads[i]);
      }
    std::vector<size_t> slots;
    for (size_t i = 0; i < 4; ++i)
      if (needs_input_grad(i)) {
        wanted.push_back(inputs[i]);
        slots.push_back(i);
      }
    TensorList found =
        autograd::grad(roots, root_grads, wanted, {.retain_graph = true, .create_graph = true, .allow_unused = true});
    TensorList result(4);
    for (size_t k = 0; k < slots.size(); ++k) result[slots[k]] = found[k];
    return result;
  }

  std::vector<int64_t> batch_sizes_;
  bool reverse_;
};

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& input_gates, IntArrayRef batch_sizes, const Tensor& h0,
                                              const Tensor& c0, const Tensor& w_hh, bool reverse) {
  TP_OP_ENTRY(lstm_layer, input_gates, batch_sizes, h0, c0, w_hh, reverse);
  check_layer(input_gates, batch_sizes, h0, c0, w_hh);
  if (!fusable(input_gates, h0, c0, w_hh)) return lstm_layer_composite(input_gates, batch_sizes, h0, c0, w_hh, reverse);
  autograd::Record<LstmLayerBackward> record({&input_gates, &h0, &c0, &w_hh}, batch_sizes, reverse);
  const int64_t rows = input_gates.size(0), hidden = w_hh.size(1);
  const ScalarType dtype = w_hh.dtype();
  const Device device = w_hh.device();
  Tensor gates = clone(input_gates, MemoryFormat::Contiguous);  // made the activations, step by step
  Tensor output = empty({rows, hidden}, dtype, device), c_all = empty({rows, hidden}, dtype, device);
  Tensor h_prev_all = empty({rows, hidden}, dtype, device), c_prev_all = empty({rows, hidden}, dtype, device);
  Tensor h = clone(h0, MemoryFormat::Contiguous), c = clone(c0, MemoryFormat::Contiguous);  // the state buffers
  Tensor w_t = unsqueeze(transpose(w_hh, 0, 1), 0);
  Backend& be = backend(device);
  for_each_step(batch_sizes, reverse, [&](int64_t offset, int64_t n) {
    Tensor h_prev = narrow(h_prev_all, 0, offset, n), c_prev = narrow(c_prev_all, 0, offset, n);
    be.copy(h_prev, narrow(h, 0, 0, n));
    be.copy(c_prev, narrow(c, 0, 0, n));
    Tensor step_gates = narrow(gates, 0, offset, n);
    be.gemm(unsqueeze(step_gates, 0), unsqueeze(h_prev, 0), w_t, 1, 1, Tensor());
    Tensor c_next = narrow(c_all, 0, offset, n), h_next = narrow(output, 0, offset, n);
    be.lstm_cell(step_gates, c_prev, c_next, h_next);
    be.copy(narrow(c, 0, 0, n), c_next);
    be.copy(narrow(h, 0, 0, n), h_next);
  });
  if (record) {
    record->input_gates = autograd::SavedTensor(input_gates, false);
    record->h0 = autograd::SavedTensor(h0, false);
    record->c0 = autograd::SavedTensor(c0, false);
    record->w_hh = autograd::SavedTensor(w_hh, false);
    record->gates = autograd::SavedTensor(gates, false);
    record->c = autograd::SavedTensor(c_all, false);
    record->c_prev = autograd::SavedTensor(c_prev_all, false);
    record->h_prev = autograd::SavedTensor(h_prev_all, false);
  }
  record.finish(output, h, c);
  return {output, h, c};
}

}  // namespace tp

#include "tensorplay/autograd/engine.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "tensorplay/autograd/anomaly_mode.h"
#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/autograd/variable.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/profiler/profiler.h"

namespace tp::autograd {

namespace {

// Brings a gradient to the shape and dtype of the forward value it belongs to. This is the one
// place where broadcast gradients are summed back down and promoted gradients cast back.
Tensor match(Tensor grad, const GradMeta& meta, const Node& producer) {
  if (!std::ranges::equal(grad.sizes(), meta.shape)) {
    auto shape = try_broadcast_shapes(grad.sizes(), meta.shape);
    TP_CHECK(shape && std::ranges::equal(*shape, grad.sizes()), "[backward] Function ", producer.name(),
             " returned an invalid gradient - got ", to_string(grad.sizes()), " but expected shape compatible with ",
             to_string(meta.shape));
    grad = sum_to_size(grad, meta.shape);
  }
  if (grad.dtype() != meta.dtype) grad = to(grad, meta.dtype);
  return grad;
}

Tensor accumulate(const Tensor& sum_so_far, const Tensor& grad) {
  return sum_so_far.defined() ? add(sum_so_far, grad) : grad;
}

struct GraphTask {
  BackwardOptions options;
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, TensorList> buffers;
  // With explicit inputs (autograd.grad, backward(inputs=...)) only part of the graph runs:
  // autograd.grad picks gradients up where they arrive at `captures` (node -> (output, slot));
  // backward's `targets` must run (the inputs' nodes); `needed` is what leads to either.
  bool prune = false;
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  std::unordered_set<Node*> targets;
  std::unordered_set<Node*> needed;
  TensorList captured;
  // Keeps the inputs' nodes alive: a leaf's AccumulateGrad may be owned by nothing else.
  std::vector<std::shared_ptr<Node>> input_nodes;

  // Whether a node runs: every node of a full pass; with explicit inputs, the nodes leading to them.
  bool runs(Node* node) const { return !prune || needed.count(node); }
  // Whether gradients are sent to a node: it runs, or its gradient is picked up there.
  bool wanted(Node* node) const { return runs(node) || captures.count(node); }

  void add_gradient(const Edge& edge, Tensor grad, const Node& producer) {
    TensorList& buffer = buffers[edge.function.get()];
    buffer.resize(edge.function->num_outputs());
    grad = match(std::move(grad), edge.function->output_meta(edge.input_nr), producer);
    buffer[edge.input_nr] = accumulate(buffer[edge.input_nr], grad);
  }
};

// A node's backward under anomaly detection: a failure, or with check_nan a NaN among the
// gradients it returns, is reported with the node's forward stack before the error propagates.
TensorList apply_checked(Node& node, TensorList&& grads) {
  try {
    TensorList out = node.apply(std::move(grads));
    if (is_anomaly_check_nan_enabled())
      for (size_t i = 0; i < out.size(); ++i)
        TP_CHECK(!out[i].defined() || !is_differentiable(out[i].dtype()) || !any(isnan(out[i])).item<bool>(),
                 "Function '", node.name(), "' returned nan values in its ", i, "th output.");
    return out;
  } catch (...) {
    report_anomaly(node.name(), node.forward_stack());
    throw;
  }
}

struct ByRecency {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// Counts, for every node reachable from the roots, how many edges lead into it.
void count_dependencies(GraphTask& task, const std::vector<Node*>& roots) {
  std::vector<Node*> stack(roots.begin(), roots.end());
  std::unordered_set<Node*> seen(roots.begin(), roots.end());
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& e : node->next_edges()) {
      if (!e.valid()) continue;
      ++task.dependencies[e.function.get()];
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
}

// Marks the nodes that must run: targets, and nodes with a capture point or a needed node below.
// A depth-first walk with its own stack, since graphs may be millions of nodes deep.
void mark_needed(GraphTask& task, const std::vector<Node*>& roots) {
  std::unordered_map<Node*, bool> done;  // node -> needed, once all below it are known
  std::vector<std::pair<Node*, bool>> stack;  // (node, whether its edges were pushed)
  for (Node* r : roots) stack.emplace_back(r, false);
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    if (done.count(node)) {
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      for (const Edge& e : node->next_edges())
        if (e.valid() && !done.count(e.function.get())) stack.emplace_back(e.function.get(), false);
      continue;
    }
    stack.pop_back();
    bool needed = task.targets.count(node) > 0;
    for (const Edge& e : node->next_edges()) {
      if (!e.valid()) continue;
      auto below = done.find(e.function.get());
      needed = needed || (below != done.end() && below->second) || task.captures.count(e.function.get()) > 0;
    }
    done[node] = needed;
    if (needed) task.needed.insert(node);
  }
}

void execute(GraphTask& task, const TensorList& roots, const TensorList& grad_roots) {
  TP_CHECK(roots.size() == grad_roots.size(), "[backward] got ", roots.size(), " tensors and ", grad_roots.size(),
           " gradients");
  std::vector<Node*> root_nodes;
  std::vector<std::pair<Edge, Tensor>> seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = roots[i];
    Edge edge = gradient_edge(root);
    TP_CHECK(edge.valid(), "[backward] element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = grad_roots[i];
    if (!g.defined()) {
      TP_CHECK(root.numel() == 1, "[backward] grad can be implicitly created only for scalar outputs");
      TP_CHECK(!is_complex(root.dtype()), "[backward] grad can be implicitly created only for real scalar outputs");
      g = ones_like(root);
    } else {
      TP_CHECK(std::ranges::equal(g.sizes(), root.sizes()), "[backward] Mismatch in shape: grad_output[", i,
               "] has a shape of ", to_string(g.sizes()), " and output[", i, "] has a shape of ",
               to_string(root.sizes()), ".");
      TP_CHECK(g.dtype() == root.dtype() || (is_differentiable(g.dtype()) && is_differentiable(root.dtype())),
               "[backward] For grad_output[", i, "], expected a floating point dtype like the output's ",
               name(root.dtype()), ", got ", name(g.dtype()));
    }
    // Several roots may share a node (the pieces of a split); each node is counted once.
    if (std::ranges::find(root_nodes, edge.function.get()) == root_nodes.end()) root_nodes.push_back(edge.function.get());
    seeds.emplace_back(edge, g);
  }
  count_dependencies(task, root_nodes);
  if (task.prune) mark_needed(task, root_nodes);

  std::priority_queue<Node*, std::vector<Node*>, ByRecency> ready;
  std::unordered_set<Node*> queued;
  std::vector<std::shared_ptr<Node>> keep_alive;  // roots' nodes may be owned by nothing else
  for (auto& [edge, g] : seeds) {
    keep_alive.push_back(edge.function);
    task.add_gradient(edge, g, *edge.function);
  }
  for (Node* n : root_nodes)
    if (task.dependencies[n] == 0 && queued.insert(n).second) ready.push(n);

  GradModeGuard grad_mode(task.options.create_graph);
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList grads = std::move(task.buffers[node]);
    task.buffers.erase(node);
    grads.resize(node->num_outputs());
    // Hooks see every gradient that arrives; a node runs only when the pass needs it, and sends
    // gradients only where they are wanted. As in PyTorch's engine, a captured gradient is taken
    // before the hooks of a node that runs, and after those of one that does not.
    const bool runs = task.runs(node);
    if (!runs) node->run_pre_hooks(grads);
    if (auto capture = task.captures.find(node); capture != task.captures.end())
      for (auto [output_nr, slot] : capture->second) task.captured[slot] = accumulate(task.captured[slot], grads[output_nr]);

    TensorList out;
    if (runs) {
      // The profiler's two spans, as PyTorch names them: the node's evaluation, and its function.
      std::optional<profiler::Span> evaluation, function;
      const bool profiling = profiler::is_enabled();
      if (profiling) [[unlikely]]
        evaluation.emplace("autograd::engine::evaluate_function: " + node->name());
      node->run_pre_hooks(grads);
      bool any = false;
      for (const Tensor& g : grads) any = any || g.defined();
      if (profiling) [[unlikely]]
        function.emplace(node->name());
      if (any) out = is_anomaly_enabled() ? apply_checked(*node, std::move(grads)) : node->apply(std::move(grads));
      if (!task.options.retain_graph) node->release_saved();
    }
    const auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      if (i < out.size() && out[i].defined() && task.wanted(e.function.get()))
        task.add_gradient(e, std::move(out[i]), *node);
      if (--task.dependencies[e.function.get()] == 0 && queued.insert(e.function.get()).second) {
        keep_alive.push_back(e.function);
        ready.push(e.function.get());
      }
    }
  }
}

}  // namespace

void backward(const TensorList& roots, const TensorList& grad_roots, const BackwardOptions& options,
              const TensorList& inputs) {
  GraphTask task;
  task.options = options;
  // backward(inputs=...): accumulate only into these, running only what leads to them. A leaf's
  // AccumulateGrad runs; a non-leaf retains its grad from now on and its node runs (as in
  // PyTorch, which then fails there if the node's saved tensors were overwritten).
  task.prune = !inputs.empty();
  for (const Tensor& input : inputs) {
    Edge e = gradient_edge(input);
    TP_CHECK(e.valid(), "[backward] One of the differentiated Tensors does not require grad");
    if (!is_leaf(input)) retain_grad(input);
    task.input_nodes.push_back(e.function);
    task.targets.insert(e.function.get());
  }
  execute(task, roots, grad_roots);
}

TensorList grad(const TensorList& roots, const TensorList& grad_roots, const TensorList& inputs,
                const BackwardOptions& options) {
  GraphTask task;
  task.options = options;
  task.prune = true;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    TP_CHECK(e.valid(), "[grad] One of the differentiated Tensors does not require grad");
    task.input_nodes.push_back(e.function);
    task.captures[e.function.get()].emplace_back(e.input_nr, i);
  }
  // An input's gradient is picked up where it arrives; its AccumulateGrad must not run.
  execute(task, roots, grad_roots);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TP_CHECK(task.captured[i].defined() || options.allow_unused, "[grad] One of the differentiated Tensors appears to "
             "not have been used in the graph. Set allow_unused=True if this is the desired behavior.");
  }
  return task.captured;
}

}  // namespace tp::autograd

namespace tp {

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, {retain_graph || create_graph, create_graph, false});
}

}  // namespace tp

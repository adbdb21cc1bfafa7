// The autograd face of the bindings: Tensor's grad attributes, backward, hooks, grad modes, the
// graph's nodes as Python objects, and the C++ side of tensorplay.autograd.Function.

#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>

#include "tensorplay/autograd/anomaly_mode.h"
#include "tensorplay/autograd/engine.h"
#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/autograd/variable.h"
#include "bindings.h"

namespace tp::python {

namespace {

using autograd::Node;

// A Python object owned from C++ code that may run without the GIL (the engine releases it):
// the last reference is dropped with the GIL held.
class PyRef {
 public:
  explicit PyRef(nb::object o) : obj_(o.release().ptr()) {}
  ~PyRef() {
    nb::gil_scoped_acquire gil;
    Py_XDECREF(obj_);
  }
  nb::handle get() const { return obj_; }

 private:
  PyObject* obj_;
};

// A Python callable as a gradient hook: it may return a replacement gradient or None.
autograd::GradHook python_hook(nb::object fn) {
  nb::object name = nb::getattr(fn, "__name__", nb::none());
  auto ref = std::make_shared<PyRef>(std::move(fn));
  return {name.is_none() ? nb::repr(nb::borrow(ref->get())).c_str() : nb::str(name).c_str(),
          [ref](const Tensor& grad) -> Tensor {
            nb::gil_scoped_acquire gil;
            nb::object result = nb::borrow(ref->get())(wrap(grad));
            if (result.is_none()) return {};
            TP_CHECK_TYPE(is_tensor(result), "expected Variable, but hook returned '",
                          nb::type_name(result.type()).c_str(), "'");
            return unwrap(result);
          }};
}

// The object register_hook returns; remove() unregisters the hook.
struct RemovableHandle {
  std::function<void()> remove_fn;
  void remove() {
    if (remove_fn) std::exchange(remove_fn, nullptr)();
  }
};

RemovableHandle register_hook(const Tensor& t, nb::object fn) {
  TP_CHECK(autograd::requires_grad(t), "[register_hook] cannot register a hook on a tensor that doesn't require "
           "gradient");
  autograd::AutogradMeta& m = autograd::ensure_meta(t);
  if (m.grad_fn) {
    int id = m.grad_fn->add_pre_hook(m.output_nr, python_hook(std::move(fn)));
    std::weak_ptr<Node> node = m.grad_fn;
    return {[node, id] {
      if (auto n = node.lock()) n->remove_pre_hook(id);
    }};
  }
  int id = m.leaf_hooks.add(python_hook(std::move(fn)));
  Tensor keep = t;
  return {[keep, id] { autograd::ensure_meta(keep).leaf_hooks.remove(id); }};
}

RemovableHandle register_post_accumulate_grad_hook(const Tensor& t, nb::object fn) {
  TP_CHECK(autograd::is_leaf(t) && autograd::requires_grad(t), "[register_post_accumulate_grad_hook] post accumulate "
           "grad hooks can only be registered on leaf tensors that require grad");
  int id = autograd::ensure_meta(t).post_accumulate_hooks.add(python_hook(std::move(fn)));
  Tensor keep = t;
  return {[keep, id] { autograd::ensure_meta(keep).post_accumulate_hooks.remove(id); }};
}

// The node of a Python autograd.Function: calls the Function's backward with the GIL held.
class PythonFunctionNode final : public Node {
 public:
  PythonFunctionNode(std::string name, nb::object backward, bool materialize_grads, std::vector<int> input_positions,
                     int num_args)
      : name_(std::move(name)),
        backward_(std::make_shared<PyRef>(std::move(backward))),
        materialize_grads_(materialize_grads),
        positions_(std::move(input_positions)),
        num_args_(num_args) {}

  std::string name() const override { return name_; }

  TensorList apply(TensorList&& grads) override {
    nb::gil_scoped_acquire gil;
    nb::list args;
    for (size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].defined()) args.append(wrap(grads[i]));
      else if (materialize_grads_) args.append(wrap(zeros(output_meta(i).shape, output_meta(i).dtype, output_meta(i).device)));
      else args.append(nb::none());
    }
    nb::object result = nb::borrow(backward_->get())(*nb::tuple(args));
    nb::tuple results = nb::isinstance<nb::tuple>(result) ? nb::borrow<nb::tuple>(result) : nb::make_tuple(result);
    // One gradient per forward argument (None for non-tensors); extra trailing Nones are allowed.
    bool extras_none = true;
    for (size_t i = num_args_; i < results.size(); ++i) extras_none = extras_none && results[i].is_none();
    TP_CHECK(static_cast<int>(results.size()) >= num_args_ && extras_none, "[", name_, "] function backward returned "
             "an incorrect number of gradients (expected ", num_args_, ", got ", results.size(), ")");
    TensorList out;
    for (int position : positions_) {
      nb::handle g = results[position];
      TP_CHECK_TYPE(g.is_none() || is_tensor(g), "[", name_, "] backward must return Tensors or None, got ",
                    nb::type_name(g.type()).c_str());
      out.push_back(g.is_none() ? Tensor() : unwrap(g));
    }
    return out;
  }

  void release_saved() override {
    for (auto& s : saved) s.release();
  }

  std::vector<autograd::SavedTensor> saved;

 private:
  std::string name_;
  std::shared_ptr<PyRef> backward_;
  bool materialize_grads_;
  std::vector<int> positions_;  // the argument position of each tensor input (one per edge)
  int num_args_;
};

// The Function's ctx refers to its node weakly: the node holds the ctx (through backward), so a
// strong reference back would be a cycle Python's collector cannot see.
struct WeakNode {
  std::weak_ptr<Node> node;
};

// Records a Python Function's node: edges to its tensor inputs, history on its outputs.
WeakNode record_function(const std::string& name, nb::object backward, nb::list args,
                                      nb::list outputs, nb::list non_differentiable, nb::list dirty,
                                      nb::list to_save, bool materialize_grads) {
  std::vector<int> positions;
  std::vector<autograd::Edge> edges;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_tensor(args[i])) continue;
    positions.push_back(static_cast<int>(i));
    edges.push_back(autograd::gradient_edge(unwrap(args[i])));
  }
  auto node = std::make_shared<PythonFunctionNode>(name, std::move(backward), materialize_grads, positions,
                                                   static_cast<int>(args.size()));
  node->set_next_edges(std::move(edges));
  auto in = [](nb::list list, nb::handle h) {
    for (nb::handle x : list)
      if (x.is(h)) return true;
    return false;
  };
  for (nb::handle out : outputs) {
    if (!is_tensor(out)) continue;
    const Tensor& t = unwrap(out);
    if (in(non_differentiable, out) || !is_differentiable(t.dtype())) {
      node->add_output(t);  // keeps output numbering; gets no history
      continue;
    }
    autograd::AutogradMeta& m = autograd::ensure_meta(t);
    if (in(dirty, out)) {
      TP_CHECK(!(m.requires_grad && !m.grad_fn), "[", name, "] a leaf Variable that requires grad has been used in "
               "an in-place operation.");
      m.requires_grad = false;
      t.bump_version();  // forward wrote it in place
    }
    m.grad_fn = node;
    m.output_nr = node->add_output(t);
  }
  for (nb::handle h : to_save) {
    if (h.is_none()) {
      node->saved.emplace_back();
      continue;
    }
    bool is_output = false;
    for (nb::handle out : outputs) is_output = is_output || out.is(h);
    node->saved.emplace_back(unwrap(h), is_output);
  }
  return {node};
}

nb::list unpack_saved(const WeakNode& ref) {
  auto node = ref.node.lock();
  TP_CHECK(node, "[saved_tensors] the graph this Function belonged to has been freed");
  auto* fn = dynamic_cast<PythonFunctionNode*>(node.get());
  TP_CHECK(fn, "[saved_tensors] the node is not a Python Function's");
  nb::list out;
  for (const auto& s : fn->saved) {
    Tensor t = s.unpack(*fn);
    out.append(t.defined() ? wrap(t) : nb::none());
  }
  return out;
}

TensorList tensor_list(nb::handle h) {
  TensorList out;
  if (h.is_none()) return out;
  if (is_tensor(h)) return {unwrap(h)};
  for (nb::handle x : h) out.push_back(x.is_none() ? Tensor() : unwrap(x));
  return out;
}

// Anomaly detection's hooks: the Python stack of the forward call, and a UserWarning.
std::string python_stack() {
  nb::gil_scoped_acquire gil;
  nb::object frames = nb::module_::import_("traceback").attr("format_stack")();
  return nb::cast<std::string>(nb::str("").attr("join")(frames));
}

void warn(const std::string& message) {
  nb::gil_scoped_acquire gil;
  try {
    nb::module_::import_("warnings").attr("warn")(message, nb::handle(PyExc_UserWarning));
  } catch (nb::python_error& e) {  // warnings made errors: the node's own error goes on instead
    e.discard_as_unraisable("tensorplay.autograd.detect_anomaly");
  }
}

}  // namespace

void init_autograd(nb::module_& m) {
  nb::class_<RemovableHandle>(m, "RemovableHandle").def("remove", &RemovableHandle::remove);

  nb::class_<Node>(m, "_Node")
      .def("name", &Node::name)
      .def("_next_edges", [](const Node& n) {
        nb::list out;
        for (const auto& e : n.next_edges())
          out.append(nb::make_tuple(e.function ? nb::cast(e.function) : nb::none(), e.input_nr));
        return out;
      })
      .def("_variable", [](const Node& n) -> nb::object {
        auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&n);
        return acc ? wrap(acc->variable()) : nb::none();
      })
      .def("_id", [](const Node& n) { return reinterpret_cast<uintptr_t>(&n); });

  m.def("is_grad_enabled", &is_grad_enabled);
  m.def("_set_grad_enabled", &set_grad_enabled, "mode"_a);
  m.def("is_inference_mode_enabled", &is_inference_mode_enabled);
  m.def("_set_inference_mode", &set_inference_mode, "mode"_a);
  m.def("is_anomaly_enabled", &autograd::is_anomaly_enabled);
  m.def("is_anomaly_check_nan_enabled", &autograd::is_anomaly_check_nan_enabled);
  m.def("set_anomaly_enabled", &autograd::set_anomaly_enabled, "enabled"_a, "check_nan"_a = true);
  autograd::set_anomaly_hooks({&python_stack, &warn});
  m.def("_is_grad_layout_enforced", &autograd::is_grad_layout_enforced);
  m.def("_set_grad_layout_enforced", &autograd::set_grad_layout_enforced, "enforced"_a);

  nb::class_<WeakNode>(m, "_WeakNode");
  m.def("_record_function", &record_function, "name"_a, "backward"_a, "args"_a, "outputs"_a, "non_differentiable"_a,
        "dirty"_a, "to_save"_a, "materialize_grads"_a);
  m.def("_unpack_saved", &unpack_saved, "node"_a);

  m.def("_backward", [](nb::handle tensors, nb::handle grads, bool retain_graph, bool create_graph, nb::handle inputs) {
    TensorList roots = tensor_list(tensors), grad_roots = tensor_list(grads), in = tensor_list(inputs);
    if (grad_roots.empty()) grad_roots.resize(roots.size());
    nb::gil_scoped_release released;
    autograd::backward(roots, grad_roots, {retain_graph, create_graph, false}, in);
  }, "tensors"_a, "grad_tensors"_a.none(), "retain_graph"_a, "create_graph"_a, "inputs"_a.none());
  m.def("_grad", [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs, bool retain_graph,
                    bool create_graph, bool allow_unused) {
    TensorList roots = tensor_list(outputs), grad_roots = tensor_list(grad_outputs), in = tensor_list(inputs);
    if (grad_roots.empty()) grad_roots.resize(roots.size());
    TensorList result;
    {
      nb::gil_scoped_release released;
      result = autograd::grad(roots, grad_roots, in, {retain_graph, create_graph, allow_unused});
    }
    nb::list out;
    for (const Tensor& t : result) out.append(t.defined() ? wrap(t) : nb::none());
    return nb::tuple(out);
  }, "outputs"_a, "inputs"_a, "grad_outputs"_a.none(), "retain_graph"_a, "create_graph"_a, "allow_unused"_a);

  tensor_class()
      .def_prop_rw("requires_grad", [](const Tensor& t) { return autograd::requires_grad(t); },
                   [](const Tensor& t, bool value) { autograd::set_requires_grad(t, value); })
      .def_prop_rw("grad", [](const Tensor& t) {
        auto* meta = autograd::meta(t);
        if (meta && meta->grad_fn && !meta->retained && !autograd::grad(t).defined())
          PyErr_WarnEx(PyExc_UserWarning, "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                       "accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed "
                       "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                       "non-leaf Tensor.", 1);
        return autograd::grad(t);
      },
                   [](const Tensor& t, std::optional<Tensor> g) { autograd::set_grad(t, g.value_or(Tensor())); },
                   nb::arg("grad").none())
      .def_prop_ro("_grad_fn", [](const Tensor& t) { return autograd::grad_fn(t); })
      .def_prop_ro("is_leaf", [](const Tensor& t) { return autograd::is_leaf(t); })
      .def_prop_ro("retains_grad", [](const Tensor& t) {
        auto* meta = autograd::meta(t);
        return meta && meta->retained != nullptr;
      })
      .def_prop_ro("output_nr", [](const Tensor& t) { return autograd::meta(t) ? autograd::meta(t)->output_nr : 0; })
      .def_prop_ro("_base", [](const Tensor& t) -> std::optional<Tensor> {
        const auto& base = t.impl()->view_base();
        if (!base) return std::nullopt;
        return Tensor(base);
      })
      .def("_is_view", [](const Tensor& t) { return static_cast<bool>(t.impl()->view_base()); })
      .def_prop_rw("data", [](const Tensor& t) { return autograd::detach(t); },
                   [](const Tensor& t, const Tensor& other) { t.impl()->set_data(*other.impl()); })
      .def("is_inference", [](const Tensor& t) { return t.impl()->is_inference(); })
      .def("requires_grad_", [](nb::handle self, bool value) {
        autograd::set_requires_grad(unwrap(self), value);
        return nb::borrow(self);
      }, "requires_grad"_a = true)
      .def("retain_grad", [](const Tensor& t) { autograd::retain_grad(t); })
      .def("detach", [](const Tensor& t) { return autograd::detach(t); })
      .def("detach_", [](nb::handle self) {
        autograd::detach_(unwrap(self));
        return nb::borrow(self);
      })
      .def("register_hook", &register_hook, "hook"_a)
      .def("register_post_accumulate_grad_hook", &register_post_accumulate_grad_hook, "hook"_a);
  m.def("detach", [](const Tensor& t) { return autograd::detach(t); }, "input"_a);
}

}  // namespace tp::python

#include "tensorplay/autograd/variable.h"

#include <cctype>

#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/ops/ops.h"

namespace tp::autograd {

AutogradMeta::~AutogradMeta() {
  if (grad_fn) release_node(std::move(grad_fn));
}

AutogradMeta* meta(const Tensor& t) { return static_cast<AutogradMeta*>(t.impl()->autograd_meta()); }

AutogradMeta& ensure_meta(const Tensor& t) {
  if (AutogradMeta* m = meta(t)) return *m;
  auto fresh = std::make_unique<AutogradMeta>();
  AutogradMeta& ref = *fresh;
  t.impl()->set_autograd_meta(std::move(fresh));
  return ref;
}

namespace {
void refresh_view_history(const Tensor& t, AutogradMeta& m);
AutogradMeta* meta_with_view_history(const Tensor& t);
}  // namespace

bool requires_grad(const Tensor& t) {
  AutogradMeta* m = meta_with_view_history(t);
  return m && (m->requires_grad || m->grad_fn);
}

void set_requires_grad(const Tensor& t, bool value) {
  AutogradMeta* m = meta(t);
  TP_CHECK(!(m && m->grad_fn), "[requires_grad_] you can only change requires_grad flags of leaf variables.",
           value ? "" : " If you want to use a computed variable in a subgraph that doesn't require "
                        "differentiation use var_no_grad = var.detach().");
  TP_CHECK(!value || is_differentiable(t.dtype()), "[requires_grad_] only Tensors of floating point and complex dtype can "
           "require gradients, got ", name(t.dtype()));
  TP_CHECK(!value || !t.impl()->is_inference(), "[requires_grad_] setting requires_grad=True on an inference "
           "tensor created outside InferenceMode is not allowed.");
  if (value || m) ensure_meta(t).requires_grad = value;
}

bool is_leaf(const Tensor& t) {
  AutogradMeta* m = meta_with_view_history(t);
  return !m || !m->grad_fn;
}

std::shared_ptr<Node> grad_fn(const Tensor& t) {
  AutogradMeta* m = meta_with_view_history(t);
  return m ? m->grad_fn : nullptr;
}

Tensor grad(const Tensor& t) {
  AutogradMeta* m = meta(t);
  if (!m) return {};
  if (m->retained) {
    std::lock_guard lock(m->retained->mutex);
    return m->retained->grad;
  }
  std::lock_guard lock(m->mutex);
  return m->grad;
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    TP_CHECK(g.device() == t.device(), "[grad] assigned grad has data located on a different device");
    TP_CHECK(g.dtype() == t.dtype(), "[grad] assigned grad has data of a different type: expected ",
             name(t.dtype()), ", got ", name(g.dtype()));
    TP_CHECK(std::ranges::equal(g.sizes(), t.sizes()), "[grad] assigned grad has data of a different size: expected ",
             to_string(t.sizes()), ", got ", to_string(g.sizes()));
  }
  AutogradMeta& m = ensure_meta(t);
  if (m.retained) {
    std::lock_guard lock(m.retained->mutex);
    m.retained->grad = g;
    return;
  }
  std::lock_guard lock(m.mutex);
  m.grad = g;
}

void zero_grad(const Tensor& t, bool set_to_none) {
  Tensor g = grad(t);
  if (!g.defined()) return;
  if (set_to_none)
    set_grad(t, Tensor());
  else
    zero_(g.detach());
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta_with_view_history(t);
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  // The accumulator is shared by every graph that uses the leaf, and lives as long as one does.
  std::lock_guard lock(m->mutex);
  auto acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

const Tensor& set_history(const Tensor& output, const std::shared_ptr<Node>& node) {
  // Integer and bool results are not differentiable: they never require grad.
  if (!is_differentiable(output.dtype())) return output;
  AutogradMeta& m = ensure_meta(output);
  m.grad_fn = node;
  m.output_nr = node->add_output(output);
  m.history_version = output.version();
  return output;
}

Tensor detach(const Tensor& t) {
  if (t.is_sparse())
    return Tensor(TensorImpl::sparse_coo(t.impl()->sparse_indices(), t.impl()->sparse_values(),
                                         Shape(t.sizes().begin(), t.sizes().end()), t.impl()->is_coalesced()));
  Tensor out = make_view(t, Shape(t.sizes().begin(), t.sizes().end()), Shape(t.strides().begin(), t.strides().end()),
                         t.storage_offset());
  out.impl()->set_view_base({});  // shares t's data, but writes to it do not rewrite t's history
  return out;
}

void detach_(const Tensor& t) {
  AutogradMeta* m = meta(t);
  const auto& base = t.impl()->view_base();
  TP_CHECK(!(base && requires_grad(Tensor(base))), "[detach_] Can't detach views in-place. Use detach() instead.");
  if (!m) return;
  m->grad_fn.reset();
  m->output_nr = 0;
  m->requires_grad = false;
}

void retain_grad(const Tensor& t) {
  TP_CHECK(requires_grad(t), "[retain_grad] can't retain_grad on Tensor that has requires_grad=False");
  AutogradMeta& m = ensure_meta(t);
  if (!m.grad_fn || m.retained) return;  // a leaf keeps its grad anyway
  m.retained = std::make_shared<RetainedGrad>();
  attach_retained_grad(m);
}

// The hook shares a slot with the tensor rather than holding the tensor, which would make a cycle
// through the tensor's own grad_fn. It moves with the tensor to the history an in-place write
// gives it, as in PyTorch.
void attach_retained_grad(AutogradMeta& m) {
  RetainedGrad& slot = *m.retained;
  if (auto old = slot.node.lock()) old->remove_retain_grad_hook(slot.hook_id);
  slot.node = m.grad_fn;
  slot.hook_id = m.grad_fn->add_retain_grad_hook(m.output_nr, {"retain_grad", [slot = m.retained](const Tensor& g) {
    std::lock_guard lock(slot->mutex);
    slot->grad = !slot->grad.defined() ? (is_grad_enabled() ? g : clone(g)) : add(slot->grad, g);
    return Tensor();
  }});
}

// ---- In-place writes ----

namespace {

// Note [In-place on views]: writing in place into a view of a tensor changes the base too. The
// base's history becomes CopySlices: its gradient is the incoming one, except over the view's
// elements, where it is what the in-place op's backward gives for the view's old value.
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn, const Edge& view_old_edge)
      : base_sizes_(base.sizes().begin(), base.sizes().end()),
        base_strides_(base.strides().begin(), base.strides().end()),
        view_sizes_(view.sizes().begin(), view.sizes().end()),
        view_strides_(view.strides().begin(), view.strides().end()),
        view_offset_(view.storage_offset() - base.storage_offset()),
        fn_(std::move(fn)) {
    std::vector<Edge> edges{gradient_edge(base)};
    for (size_t i = 0; i < fn_->next_edges().size(); ++i) {
      const Edge& e = fn_->next_edges()[i];
      // The op's first input is the view's old value; another input may be the same tensor (v.add_(v)).
      bool is_old_view = i == 0 && e.valid() && e.function == view_old_edge.function &&
                         e.input_nr == view_old_edge.input_nr;
      slot_.push_back(is_old_view ? -1 : static_cast<int>(edges.size()));
      if (!is_old_view) edges.push_back(e);
    }
    set_next_edges(std::move(edges));
  }

  std::string name() const override { return "CopySlices"; }

  TensorList apply(TensorList&& grads) override {
    TensorList out(next_edges().size());
    if (!grads[0].defined()) return out;
    Tensor result = empty_strided(base_sizes_, base_strides_, grads[0].dtype(), grads[0].device());
    copy_(result, grads[0]);
    Tensor slice = as_strided(result, view_sizes_, view_strides_, view_offset_);
    TensorList fn_grads = fn_->apply({clone(slice)});
    Tensor view_grad;
    for (size_t i = 0; i < slot_.size() && i < fn_grads.size(); ++i) {
      if (slot_[i] >= 0) out[slot_[i]] = fn_grads[i];
      else if (fn_grads[i].defined()) view_grad = view_grad.defined() ? add(view_grad, fn_grads[i]) : fn_grads[i];
    }
    if (view_grad.defined()) copy_(slice, view_grad);
    else zero_(slice);
    out[0] = result;
    return out;
  }

  void release_saved() override { fn_->release_saved(); }

 private:
  Shape base_sizes_, base_strides_, view_sizes_, view_strides_;
  int64_t view_offset_;
  std::shared_ptr<Node> fn_;
  std::vector<int> slot_;  // for each edge of fn: its slot in ours, or -1 for the view's old value
};

// The history of a view after its base was rewritten: the view's elements of the base.
class AsStridedBackward final : public Node {
 public:
  AsStridedBackward(const Tensor& base, const Tensor& view)
      : base_sizes_(base.sizes().begin(), base.sizes().end()),
        base_strides_(base.strides().begin(), base.strides().end()),
        view_sizes_(view.sizes().begin(), view.sizes().end()),
        view_strides_(view.strides().begin(), view.strides().end()),
        view_offset_(view.storage_offset() - base.storage_offset()) {
    set_next_edges({gradient_edge(base)});
  }
  std::string name() const override { return "AsStridedBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor result = zeros(base_sizes_, grads[0].dtype(), grads[0].device());
    result = as_strided(result, base_sizes_, base_strides_, 0);
    // An expanded view reads one element of the base many times: its gradient there is the sum.
    Tensor g = grads[0];
    Shape sizes = view_sizes_, repeated;
    for (size_t d = 0; d < sizes.size(); ++d)
      if (view_strides_[d] == 0 && sizes[d] > 1) repeated.push_back(static_cast<int64_t>(d)), sizes[d] = 1;
    if (!repeated.empty()) g = sum(g, repeated, true);
    copy_(as_strided(result, sizes, view_strides_, view_offset_), g);
    return {result};
  }

 private:
  Shape base_sizes_, base_strides_, view_sizes_, view_strides_;
  int64_t view_offset_;
};

// Note [Views after in-place writes]: a view shares its base's memory, so an in-place write to
// the base (or to another view of it) changes the view's values too, and the history the view
// was made with is out of date. It is rebuilt, when next needed, as "these elements of the
// base" from the base's current history.
void set_view_history(const Tensor& t, AutogradMeta& m, const Tensor& base) {
  auto node = std::make_shared<AsStridedBackward>(base, t);
  m.grad_fn = node;
  m.output_nr = node->add_output(t);
  m.history_version = t.version();
  if (m.retained) attach_retained_grad(m);
}

void refresh_view_history(const Tensor& t, AutogradMeta& m) {
  const auto& base_impl = t.impl()->view_base();
  if (!base_impl || !m.grad_fn || t.version() == m.history_version) return;
  Tensor base(base_impl);
  if (requires_grad(base)) set_view_history(t, m, base);
}

// A view made while its base had no history (a view of a fresh buffer) takes one the same way
// once an in-place write, through another view, gives the base a history.
AutogradMeta* meta_with_view_history(const Tensor& t) {
  if (AutogradMeta* m = meta(t)) {
    refresh_view_history(t, *m);
    return m;
  }
  const auto& base = t.impl()->view_base();
  auto* base_meta = base ? static_cast<AutogradMeta*>(base->autograd_meta()) : nullptr;
  if (!base_meta || !base_meta->grad_fn || !is_differentiable(t.dtype())) return nullptr;
  AutogradMeta& m = ensure_meta(t);
  set_view_history(t, m, Tensor(base));
  return &m;
}

}  // namespace

bool records_inplace(const Tensor& self, std::initializer_list<const Tensor*> inputs) {
  TP_CHECK(!self.impl()->is_inference() || is_inference_mode_enabled(), "[inplace] Inplace update to inference "
           "tensor outside InferenceMode is not allowed. You can make a clone to get a normal tensor before doing "
           "inplace update.");
  if (!is_grad_enabled()) return false;
  if (requires_grad(self)) return true;
  for (const Tensor* t : inputs)
    if (t && t->defined() && requires_grad(*t)) return true;
  return false;
}

const Tensor& assign_inplace(const Tensor& self, const Tensor& result, std::string_view op) {
  AutogradMeta& m = ensure_meta(self);
  TP_CHECK(!(m.requires_grad && !m.grad_fn), "[", op, "] a leaf Variable that requires grad is being used in an "
           "in-place operation.");
  const Tensor base = self.impl()->view_base() ? Tensor(self.impl()->view_base()) : Tensor();
  if (base.defined()) {
    // CopySlices replays the view on the base's gradient, which a view of another dtype
    // (view_as_real, and the real and imag views of a complex tensor) cannot be.
    TP_CHECK_KIND(ErrorKind::NotImplemented, base.dtype() == self.dtype(), "[", op, "] an in-place operation on a ",
                  name(self.dtype()), " view of a ", name(base.dtype()), " tensor is not differentiable; write to a ",
                  "copy, or outside autograd");
    AutogradMeta* bm = meta(base);
    TP_CHECK(!(bm && bm->requires_grad && !bm->grad_fn), "[", op, "] a view of a leaf Variable that requires grad "
             "is being used in an in-place operation.");
  }
  Edge old_edge = gradient_edge(self);
  // A promoted result (float32 += float64) is cast back first, so gradients reach self in its dtype.
  const Tensor value = result.dtype() == self.dtype() ? result : to(result, self.dtype());
  {
    NoGradGuard no_grad;  // the values move; the history is rewritten below
    Tensor target = self;
    copy_(target, value);
  }
  std::shared_ptr<Node> fn = grad_fn(value);
  if (!fn) {
    // The new values do not depend on anything that requires grad: the old ones get zero.
    // "fill_" -> "FillBackward0"
    std::string name(op.substr(0, op.size() - (op.ends_with('_') ? 1 : 0)));
    name[0] = static_cast<char>(std::toupper(name[0]));
    fn = std::make_shared<OverwriteBackward>(name + "Backward0", old_edge);
    fn->add_output(self);
  }
  if (base.defined()) {
    auto slices = std::make_shared<CopySlices>(base, self, fn, old_edge);
    AutogradMeta& base_meta = ensure_meta(base);
    base_meta.grad_fn = slices;
    base_meta.output_nr = slices->add_output(base);
    base_meta.history_version = base.version();
    if (base_meta.retained) attach_retained_grad(base_meta);
    auto view_fn = std::make_shared<AsStridedBackward>(base, self);
    m.grad_fn = view_fn;
    m.output_nr = view_fn->add_output(self);
  } else {
    m.grad_fn = fn;
    m.output_nr = meta(value) && meta(value)->grad_fn ? meta(value)->output_nr : 0;
  }
  if (m.retained) attach_retained_grad(m);
  m.history_version = self.version();
  return self;
}

// ---- Leaves ----

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  add_output(variable_);
  run_first();
}

namespace {

thread_local bool grad_layout_enforced = true;

// Whether g is laid out as the contract asks of variable's .grad.
bool obeys_layout_contract(const Tensor& g, const Tensor& variable) {
  if (!is_dense_layout(variable.sizes(), variable.strides())) return g.is_contiguous();
  for (int64_t d = 0; d < g.dim(); ++d)
    if (g.size(d) != 1 && g.stride(d) != variable.stride(d)) return false;
  return true;
}

// Whether a fresh gradient can become .grad as it is: dense, filling its whole memory, laid out
// as the contract asks (unless relaxed), and seen by nothing else, except the base it was viewed
// from (a transpose, a squeeze) when only g keeps that base alive. (A gradient may be an expanded
// view, or shared by two leaves fed the same tensor, as in a + b; a .grad must be neither.)
bool can_keep(const Tensor& g, const Tensor& variable) {
  const TensorImpl& impl = *g.impl();
  if (!is_dense_layout(g.sizes(), g.strides()) || impl.use_count() != 1 ||
      impl.storage()->nbytes() != static_cast<size_t>(g.numel() * g.itemsize()) ||
      (grad_layout_enforced && !obeys_layout_contract(g, variable)))
    return false;
  const auto& base = impl.view_base();
  return base ? base->use_count() == 1 && impl.storage()->use_count() == 2 : impl.storage()->use_count() == 1;
}

}  // namespace

bool is_grad_layout_enforced() { return grad_layout_enforced; }
void set_grad_layout_enforced(bool enforced) { grad_layout_enforced = enforced; }

void AccumulateGrad::run_pre_hooks(TensorList& grads) const {
  if (!grads[0].defined()) return;
  if (auto hooks = ensure_meta(variable_).leaf_hooks.snapshot())
    for (const auto& [id, hook] : *hooks) grads[0] = run_hook(hook, grads[0]);
  Node::run_pre_hooks(grads);
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  if (g.is_sparse()) g = sparse_leaf_gradient(g, variable_);
  AutogradMeta& m = ensure_meta(variable_);
  {
    std::lock_guard lock(m.mutex);
    if (!m.grad.defined() && g.is_sparse()) {
      // A sparse gradient (an embedding's, say) is kept as it comes; the next ones add to it.
      m.grad = is_grad_enabled() ? g : detach(g);
    } else if (m.grad.defined() && m.grad.is_sparse()) {
      m.grad = g.is_sparse() ? add(m.grad, g) : add(g, m.grad);
    } else if (!m.grad.defined()) {
      // Keep the gradient itself where it can be kept (no longer a view: .grad never is);
      // otherwise a copy laid out like the leaf.
      if (can_keep(g, variable_)) {
        // A view's base would be part of .grad; with create_graph a clone keeps the history.
        m.grad = !g.impl()->view_base() ? g : is_grad_enabled() ? clone(g) : detach(g);
      } else {
        m.grad = empty_like(variable_);
        copy_(m.grad, g);
      }
    } else if (is_grad_enabled()) {
      m.grad = add(m.grad, g);
    } else {
      add_(m.grad, g);
    }
  }
  if (auto hooks = m.post_accumulate_hooks.snapshot()) {
    // As in PyTorch, a hook that returns a tensor hands it to the hooks after it, and the
    // refusal comes once they have all run.
    Tensor value = variable_;
    bool returned = false;
    for (const auto& [id, hook] : *hooks) {
      Tensor result = run_hook(hook, value);
      returned |= !result.is_same(value);
      value = std::move(result);
    }
    TP_CHECK(!returned, "Tensor post accumulate grad hooks should return None.");
  }
  return {};
}

TensorList OverwriteBackward::apply(TensorList&& grads) {
  if (next_edges().empty()) return {};
  return {zeros_like(grads[0])};
}

}  // namespace tp::autograd

namespace tp {

bool Tensor::requires_grad() const { return autograd::requires_grad(*this); }
Tensor& Tensor::set_requires_grad(bool value) {
  autograd::set_requires_grad(*this, value);
  return *this;
}
bool Tensor::is_leaf() const { return autograd::is_leaf(*this); }
Tensor Tensor::grad() const { return autograd::grad(*this); }
Tensor Tensor::detach() const { return autograd::detach(*this); }

}  // namespace tp

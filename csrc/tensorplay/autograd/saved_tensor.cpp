#include "tensorplay/autograd/saved_tensor.h"

#include "tensorplay/autograd/variable.h"

namespace tp::autograd {

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : is_output_(is_output), saved_(true) {
  if (!t.defined()) return;
  TP_CHECK(!t.impl()->is_inference(), "[backward] Inference tensors cannot be saved for backward. To work around "
           "you can make a clone to get a normal tensor and use it in autograd.");
  version_ = t.version();
  if (is_output) {
    data_ = detach(t);
    output_nr_ = meta(t) ? meta(t)->output_nr : 0;
  } else {
    data_ = t;
  }
}

Tensor SavedTensor::unpack(const Node& owner) const {
  TP_CHECK(!released_, "[backward] Trying to backward through the graph a second time (or directly access saved "
           "tensors after they have already been freed). Saved intermediate values of the graph are freed when you "
           "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
           "a second time or if you need to access saved tensors after calling backward.");
  if (!data_.defined()) return {};
  if (data_.version() != version_) {
    auto producer = is_output_ ? std::string(owner.name()) : (grad_fn(data_) ? grad_fn(data_)->name() : "");
    TP_FAIL("[backward] one of the variables needed for gradient computation has been modified by an inplace "
            "operation: [", name(data_.dtype()), " ", to_string(data_.sizes()), "]",
            producer.empty() ? std::string() : ", which is output " + std::to_string(output_nr_) + " of " + producer,
            ", is at version ", data_.version(), "; expected version ", version_, " instead.");
  }
  if (!is_output_) return data_;
  // Give the output its history back, for double backward through this node.
  Tensor t = detach(data_);
  AutogradMeta& m = ensure_meta(t);
  m.grad_fn = std::const_pointer_cast<Node>(owner.shared_from_this());
  m.output_nr = output_nr_;
  return t;
}

void SavedTensor::release() {
  data_ = Tensor();
  released_ = saved_;
}

}  // namespace tp::autograd

// Casts and copies.

#include <algorithm>

#include "tensorplay/autograd/record.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/elementwise.h"
#include "tensorplay/profiler/op_span.h"

namespace tp {

namespace {

// Casts are differentiable: the gradient goes back in the input's dtype. Autocast relies on this
// (its casts are ordinary ops, so fp32 weights get fp32 gradients).
class ToCopyBackward final : public autograd::Node {
 public:
  explicit ToCopyBackward(const Tensor& input) : dtype_(input.dtype()), device_(input.device()) {}
  std::string name() const override { return "ToCopyBackward0"; }
  TensorList apply(TensorList&& grads) override { return {to(grads[0], device_, dtype_)}; }

 private:
  ScalarType dtype_;
  Device device_;
};

class CloneBackward final : public autograd::Node {
 public:
  std::string name() const override { return "CloneBackward0"; }
  TensorList apply(TensorList&& grads) override { return {grads[0]}; }
};

// New tensors "like" t reuse a dense layout of t's, as PyTorch's preserve_format does, so
// x.t().float() stays transposed rather than being copied into row-major order, and a layout
// that is not dense becomes the dense one in the same order of dims; any other format lays them
// out as it says.
Tensor empty_in_format(const char* op, const Tensor& t, ScalarType dtype, Device device, MemoryFormat format) {
  if (format != MemoryFormat::Preserve)
    return empty_strided(t.sizes(), memory_format_strides(op, t.sizes(), format), dtype, device);
  if (t.is_contiguous() || is_dense_layout(t.sizes(), t.strides()))
    return empty_strided(t.sizes(), t.strides(), dtype, device);
  return empty_strided(t.sizes(), dense_strides_in_order(t.sizes(), t.strides()), dtype, device);
}

}  // namespace

bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating_point(from) && !is_differentiable(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

Tensor copy_(const Tensor& self, const Tensor& src) {
  TP_OP_SPAN(copy_, self, src);
  TP_CHECK(src.defined(), "[copy_] expected a tensor to copy from");
  check_no_internal_overlap("copy_", self);
  check_no_partial_overlap("copy_", self, src);
  auto shape = try_broadcast_shapes(self.sizes(), src.sizes());
  TP_CHECK(shape && std::ranges::equal(*shape, self.sizes()), "[copy_] the source of shape ", to_string(src.sizes()),
           " cannot be broadcast to the destination's shape ", to_string(self.sizes()));
  if (autograd::records_inplace(self, {&src}))
    return autograd::assign_inplace(self, to(expand(src, self.sizes()), self.device(), self.dtype(), true), "copy_");
  Tensor source = expand(src, self.sizes());
  // An input that overlaps the output in any other way than exactly would be read after it is
  // overwritten; copy it aside first.
  if (src.impl()->storage() == self.impl()->storage() &&
      !(src.storage_offset() == self.storage_offset() && src.strides().size() == self.strides().size() &&
        std::equal(src.strides().begin(), src.strides().end(), self.strides().begin()) && src.dtype() == self.dtype()))
    source = expand(clone(src), self.sizes());
  // Between devices, the backend of the one that is not the CPU copies (meta's where one side is
  // meta: it has no data to give or take).
  const bool source_copies = src.device().is_meta() || self.device().is_cpu();
  backend(source_copies ? src.device() : self.device()).copy(self, source);
  self.bump_version();
  return self;
}

Tensor fill_(const Tensor& self, const Scalar& value) {
  TP_OP_SPAN(fill_, self, value);
  check_fits("fill_", value, self.dtype());
  if (autograd::records_inplace(self, {})) return autograd::assign_inplace(self, full_like(self, value), "fill_");
  backend(self.device()).fill(self, value);
  self.bump_version();
  return self;
}

Tensor zero_(const Tensor& self) {
  TP_OP_SPAN(zero_, self);
  if (autograd::records_inplace(self, {})) return autograd::assign_inplace(self, zeros_like(self), "zero_");
  return fill_(self, 0);
}

Tensor to(const Tensor& t, ScalarType dtype, bool copy) { return to(t, t.device(), dtype, copy); }

Tensor to(const Tensor& t, Device device, OptionalDType dtype, bool copy) {
  TP_OP_SPAN(to, t);
  device = device.with_index();
  ScalarType target = dtype.value_or(t.dtype());
  if (!copy && target == t.dtype() && device == t.device()) return t;
  if (t.is_sparse()) [[unlikely]]
    return sparse_to(t, device, target, copy);
  autograd::Record<ToCopyBackward> record({&t}, t);
  Tensor out = empty_in_format("to", t, target, device, MemoryFormat::Preserve);
  copy_(out, t);
  return record.finish(out);
}

Tensor contiguous(const Tensor& t, MemoryFormat format) {
  TP_OP_SPAN(contiguous, t);
  if (format == MemoryFormat::Contiguous ? t.is_contiguous() : format == MemoryFormat::Preserve || t.is_contiguous(format))
    return t;
  autograd::Record<CloneBackward> record({&t});
  Tensor out = empty_in_format("contiguous", t, t.dtype(), t.device(), format);
  copy_(out, t);
  return record.finish(out);
}

Tensor clone(const Tensor& t, MemoryFormat format) {
  TP_OP_SPAN(clone, t);
  autograd::Record<CloneBackward> record({&t});
  Tensor out = empty_in_format("clone", t, t.dtype(), t.device(), format);
  copy_(out, t);
  return record.finish(out);
}

Tensor empty_like(const Tensor& t, OptionalDType dtype, std::optional<Device> device, MemoryFormat format) {
  TP_OP_SPAN(empty_like, t);
  if (t.is_sparse()) [[unlikely]]
    return sparse_zeros_like(t, dtype.value_or(t.dtype()), device.value_or(t.device()));
  return empty_in_format("empty_like", t, dtype.value_or(t.dtype()), device.value_or(t.device()), format);
}

}  // namespace tp

// Sorting and selection along a dim: sort, argsort, msort, topk and kthvalue. Each runs the
// backend's sort kernel (whole lines, or their first k elements); the gradient of the values goes
// back to the positions their indices name.

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

// The values' gradient scattered to the input positions they were taken from.
class SortedValuesBackward final : public autograd::Node {
 public:
  SortedValuesBackward(const char* name, Shape input_shape, int64_t dim, bool keepdim)
      : name_(name), input_shape_(std::move(input_shape)), dim_(dim), keepdim_(keepdim) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    if (input_shape_.empty()) return {grads[0]};  // a 0-dim input is its only element
    Tensor zero = zeros(input_shape_, grads[0].dtype(), grads[0].device());
    return {scatter(zero, dim_, indices, keepdim_ ? grads[0] : unsqueeze(grads[0], dim_))};
  }
  Tensor indices;  // with dim kept; not differentiable, so kept as is

 private:
  const char* name_;
  Shape input_shape_;
  int64_t dim_;
  bool keepdim_;
};

// A dim of t (a 0-dim tensor has dims 0 and -1, as in PyTorch) and the size of its lines.
std::pair<int64_t, int64_t> line_dim(const char* op, const Tensor& t, int64_t dim) {
  const int64_t d = wrap_dim(op, dim, std::max<int64_t>(t.dim(), 1));
  return {d, t.dim() ? t.size(d) : 1};
}

// Empty values and indices shaped like t with k elements along dim d.
std::pair<Tensor, Tensor> outputs(const Tensor& t, int64_t d, int64_t k) {
  Shape shape(t.sizes().begin(), t.sizes().end());
  if (!shape.empty()) shape[d] = k;
  return {empty(shape, t.dtype(), t.device()), empty(shape, ScalarType::Int64, t.device())};
}

// Each line along dim d sorted: values and indices.
std::pair<Tensor, Tensor> sorted_lines(const Tensor& t, int64_t d, bool descending) {
  auto [values, indices] = outputs(t, d, t.dim() ? t.size(d) : 1);
  if (values.numel() > 0) backend(t.device()).sort(values, indices, t, d, descending);
  return {values, indices};
}

// The k largest (or smallest) of each line along dim d, as PyTorch's topk picks and orders them.
std::pair<Tensor, Tensor> selected(const Tensor& t, int64_t d, int64_t k, bool largest, bool sorted) {
  auto [values, indices] = outputs(t, d, k);
  if (values.numel() > 0) backend(t.device()).topk(values, indices, t, d, largest, sorted);
  return {values, indices};
}

// values and indices from `compute`, recorded for autograd as `node` (dim d of t kept in both).
template <class Compute>
std::pair<Tensor, Tensor> recorded(const char* node, const Tensor& t, int64_t d, Compute compute) {
  autograd::Record<SortedValuesBackward> record({&t}, node, Shape(t.sizes().begin(), t.sizes().end()), d, true);
  auto [values, indices] = compute();
  if (record) record->indices = indices;
  record.finish(values);
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool /*stable*/) {
  TP_OP_ENTRY(sort, t, dim, descending);
  // The kernel sorts whole lines stably, which is one of the orders an unstable sort may give.
  const int64_t d = line_dim("sort", t, dim).first;
  return recorded("SortBackward0", t, d, [&] { return sorted_lines(t, d, descending); });
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool /*stable*/) {
  return sorted_lines(t, line_dim("argsort", t, dim).first, descending).second;
}

Tensor msort(const Tensor& t) { return sort(t, 0).first; }

std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  TP_OP_ENTRY(topk, t, k, dim, largest, sorted);
  TP_CHECK(t.dtype() != ScalarType::Bool, "[topk] topk does not support bool dtypes on CPU");
  auto [d, n] = line_dim("topk", t, dim);
  TP_CHECK(k >= 0 && k <= n, "[topk] selected index k out of range: k = ", k, " for a dim of size ", n);
  return recorded("TopkBackward0", t, d, [&] { return selected(t, d, k, largest, sorted); });
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  TP_OP_ENTRY(kthvalue, t, k, dim, keepdim);
  auto [d, n] = line_dim("kthvalue", t, dim);
  TP_CHECK_INDEX(n > 0, "[kthvalue] Expected reduction dim ", d, " to have non-zero size.");
  TP_CHECK(k >= 1 && k <= n, "[kthvalue] selected number k out of range for dimension ", d, ": k = ", k,
           ", size ", n);
  if (t.dtype() == ScalarType::Bool) fail_unsupported_dtype("kthvalue", t.dtype());
  autograd::Record<SortedValuesBackward> record({&t}, "KthvalueBackward0", Shape(t.sizes().begin(), t.sizes().end()),
                                                d, keepdim || t.dim() == 0);
  // The k-th of the line sorted stably: of equal elements, the k-th in order of position. The
  // results are written through views with dim d kept, so that they are no views themselves (an
  // in-place op on one must keep its history).
  auto [values, indices] = sorted_lines(t, d, false);
  if (t.dim()) {
    Shape kept(t.sizes().begin(), t.sizes().end());
    kept[d] = 1;
    Shape shape = kept;
    if (!keepdim) shape.erase(shape.begin() + d);
    Tensor kth_value = empty(shape, t.dtype(), t.device()), kth_index = empty(shape, ScalarType::Int64, t.device());
    copy_(view(kth_value, kept), narrow(values, d, k - 1, 1));
    copy_(view(kth_index, kept), narrow(indices, d, k - 1, 1));
    if (record) record->indices = view(kth_index, kept);
    values = kth_value, indices = kth_index;
  } else if (record) {
    record->indices = indices;
  }
  record.finish(values);
  return {values, indices};
}

}  // namespace tp

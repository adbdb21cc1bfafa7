// Indexing: advanced indexing (index / index_put_), index_select, gather, scatter, masked_fill,
// where, nonzero.
//
// Advanced indexing reduces every case to one kernel. The index tensors (bool masks become
// their nonzero() coordinates) broadcast to a shape B; they select positions along the indexed
// dims, whose element offsets into the tensor are sum_j index_j * stride_j. What remains of the
// tensor (its other dims) is one "row" view, copied for each offset.

#include <algorithm>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/elementwise.h"

namespace tp {

namespace {

// Checks that every index lies in [-size, size) and maps negatives to the end.
Tensor wrapped_index(const char* op, const Tensor& index, int64_t size, int64_t dim) {
  Tensor idx = to(index, ScalarType::Int64);
  if (idx.numel() == 0 || !idx.has_data()) return idx;
  int64_t lo = amin(idx).item<int64_t>(), hi = amax(idx).item<int64_t>();
  TP_CHECK_INDEX(lo >= -size && hi < size, "[", op, "] index ", lo < -size ? lo : hi,
                 " is out of bounds for dimension ", dim, " with size ", size);
  return lo < 0 ? add(idx, mul(lt(idx, 0), size)) : idx;
}

struct AdvancedIndex {
  Tensor rows;       // the tensor without its indexed dims, at element 0
  Tensor offsets;    // [n] element offsets of the indexed positions
  Shape result;      // the shape of t[indices]
  int64_t batch_at;  // where the broadcast index dims sit in the result
  Shape batch;       // the broadcast index shape B
};

AdvancedIndex plan_advanced_index(const char* op, const Tensor& t, const std::vector<std::optional<Tensor>>& indices) {
  // Expand bool masks into one int64 index per masked dim.
  std::vector<std::optional<Tensor>> expanded;
  for (const auto& index : indices) {
    if (index && (index->dtype() == ScalarType::Bool || index->dtype() == ScalarType::UInt8)) {
      const int64_t first = static_cast<int64_t>(expanded.size());
      TP_CHECK_INDEX(first + index->dim() <= t.dim(), "[", op, "] too many indices for tensor of dimension ", t.dim());
      for (int64_t k = 0; k < index->dim(); ++k)
        TP_CHECK_INDEX(index->size(k) == t.size(first + k), "[", op, "] The shape of the mask ",
                       to_string(index->sizes()), " at index ", k, " does not match the shape of the indexed tensor ",
                       to_string(t.sizes()), " at index ", first + k);
      Tensor coords = nonzero(*index);
      for (int64_t k = 0; k < index->dim(); ++k) expanded.push_back(select(coords, 1, k));
      if (index->dim() == 0) expanded.push_back(std::nullopt);  // a 0-dim mask adds a dim; handled by caller
      continue;
    }
    if (index) {
      TP_CHECK_INDEX(index->dtype() == ScalarType::Int64 || index->dtype() == ScalarType::Int32, "[", op,
                     "] tensors used as indices must be long, int, byte or bool tensors, got ", name(index->dtype()));
    }
    expanded.push_back(index);
  }
  TP_CHECK_INDEX(static_cast<int64_t>(expanded.size()) <= t.dim(), "[", op,
                 "] too many indices for tensor of dimension ", t.dim(), " (got ", expanded.size(), ")");

  std::vector<int64_t> dims;
  TensorList tensors;
  for (int64_t d = 0; d < static_cast<int64_t>(expanded.size()); ++d)
    if (expanded[d]) dims.push_back(d), tensors.push_back(*expanded[d]);
  TP_CHECK_INDEX(!dims.empty(), "[", op, "] expected at least one index tensor");
  Shape batch;
  for (const Tensor& x : tensors) {
    auto merged = try_broadcast_shapes(batch, x.sizes());
    TP_CHECK_INDEX(merged.has_value(), "[", op,
                   "] shape mismatch: indexing tensors could not be broadcast together "
                   "with shapes ",
                   to_string(batch), ", ", to_string(x.sizes()));
    batch = std::move(*merged);
  }

  AdvancedIndex plan;
  plan.batch = batch;
  Tensor offsets = zeros(batch, ScalarType::Int64, t.device());
  for (size_t j = 0; j < dims.size(); ++j) {
    Tensor idx = wrapped_index(op, tensors[j], t.size(dims[j]), dims[j]);
    offsets = add(offsets, mul(idx, t.stride(dims[j])));
  }
  plan.offsets = reshape(offsets, IntArrayRef{-1});

  Shape row_sizes, row_strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (std::ranges::find(dims, d) == dims.end()) row_sizes.push_back(t.size(d)), row_strides.push_back(t.stride(d));
  plan.rows = make_view(t, row_sizes, row_strides, t.storage_offset());

  // Adjacent indexed dims put B where they were; separated ones put it first (NumPy's rule).
  bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  plan.batch_at = adjacent ? dims.front() : 0;
  plan.result = row_sizes;
  plan.result.insert(plan.result.begin() + plan.batch_at, batch.begin(), batch.end());
  return plan;
}

// A view of x (which has plan.result's shape) as [n, rows...]: the batch dims flattened first.
Tensor batch_major(const Tensor& x, const AdvancedIndex& plan) {
  const int64_t nb = static_cast<int64_t>(plan.batch.size());
  Shape sizes{numel(plan.batch)}, strides;
  // The batch dims are contiguous among themselves in x only when x is dense; flatten through
  // the innermost batch stride, which holds for contiguous outputs and for expanded values.
  strides.push_back(nb ? x.stride(plan.batch_at + nb - 1) : 0);
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d >= plan.batch_at && d < plan.batch_at + nb) continue;
    sizes.push_back(x.size(d));
    strides.push_back(x.stride(d));
  }
  return make_view(x, sizes, strides, x.storage_offset());
}

}  // namespace

namespace {

using Indices = std::vector<std::optional<Tensor>>;

// Advanced indexing picks elements; its gradient puts the incoming one back where they came from
// (accumulating where an index repeats).
class IndexBackward final : public autograd::Node {
 public:
  IndexBackward(const Tensor& input, Indices indices)
      : sizes_(input.sizes().begin(), input.sizes().end()), indices_(std::move(indices)) {}
  std::string name() const override { return "IndexBackward0"; }
  TensorList apply(TensorList&& grads) override {
    return {index_put(zeros(sizes_, grads[0].dtype(), grads[0].device()), indices_, grads[0], true)};
  }

 private:
  Shape sizes_;
  Indices indices_;
};

class IndexPutBackward final : public autograd::Node {
 public:
  IndexPutBackward(Indices indices, const Tensor& values, bool accumulate)
      : indices_(std::move(indices)),
        value_sizes_(values.sizes().begin(), values.sizes().end()),
        accumulate_(accumulate) {}
  std::string name() const override { return "IndexPutBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    // Overwritten elements pass no gradient to the tensor; accumulated ones do.
    Tensor self = accumulate_ ? g : index_put(g, indices_, zeros({}, g.dtype(), g.device()), false);
    return {self, sum_to_size(tp::index(g, indices_), value_sizes_)};
  }

 private:
  Indices indices_;
  Shape value_sizes_;
  bool accumulate_;
};

// The raw write behind index_put_ and index_put: no autograd, no checks of self.
void write_index(const Tensor& t, const Indices& indices, const Tensor& values, bool accumulate) {
  TP_CHECK(values.dtype() == t.dtype(), "[index_put_] Index put requires the source and destination dtypes match, got ",
           name(t.dtype()), " for the destination and ", name(values.dtype()), " for the source.");
  AdvancedIndex plan = plan_advanced_index("index_put_", t, indices);
  Tensor source = values;
  if (!std::ranges::equal(source.sizes(), plan.result)) {
    auto shape = try_broadcast_shapes(source.sizes(), plan.result);
    TP_CHECK(shape && std::ranges::equal(*shape, plan.result), "[index_put_] shape mismatch: value tensor of shape ",
             to_string(values.sizes()), " cannot be broadcast to indexing result of shape ", to_string(plan.result));
    source = expand(source, plan.result);
  }
  // A batch flattened through expanded (stride 0) dims needs real storage to walk.
  Tensor rows_of_values = batch_major(contiguous(unaliased(source, t)), plan);
  backend(t.device()).index_put(plan.rows, plan.offsets, rows_of_values, accumulate);
  t.bump_version();
}

}  // namespace

Tensor index(const Tensor& t, const Indices& indices) {
  TP_OP_SPAN(index, t, indices);
  autograd::Record<IndexBackward> record({&t}, t, indices);
  AdvancedIndex plan = plan_advanced_index("index", t, indices);
  Tensor out = empty(plan.result, t.dtype(), t.device());
  backend(t.device()).index_gather(batch_major(out, plan), plan.rows, plan.offsets);
  return record.finish(out);
}

Tensor index_put(const Tensor& t, const Indices& indices, const Tensor& values, bool accumulate) {
  TP_OP_ENTRY(index_put, t, indices, values, accumulate);
  autograd::Record<IndexPutBackward> record({&t, &values}, indices, values, accumulate);
  Tensor out = clone(t);
  write_index(out, indices, values, accumulate);
  return record.finish(out);
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  TP_OP_ENTRY(index_copy, self, dim, index, source);
  TP_CHECK(self.dim() > 0, "[index_copy] expected a tensor with at least one dim, got a 0-dim tensor");
  const int64_t d = wrap_dim("index_copy", dim, self.dim());
  TP_CHECK(index.dim() <= 1, "[index_copy] Index should have dimension 1 or 0 (got ", index.dim(), ")");
  TP_CHECK(index.dtype() == ScalarType::Int64, "[index_copy] Expected a long tensor for index, but got ",
           name(index.dtype()));
  TP_CHECK(self.dtype() == source.dtype(), "[index_copy] self and source expected to have the same dtype, but got ",
           "(self) ", name(self.dtype()), " and (source) ", name(source.dtype()));
  TP_CHECK(source.dim() == self.dim(), "[index_copy] source has ", source.dim(), " dims but self has ", self.dim());
  for (int64_t k = 0; k < self.dim(); ++k)
    TP_CHECK(k == d || source.size(k) == self.size(k),
             "[index_copy] Source/destination tensor must have same slice "
             "shapes. Destination slice shape: ",
             self.size(k), " at dimension ", k, " and source slice shape: ", source.size(k), " at dimension ", k, ".");
  TP_CHECK(source.size(d) == index.numel(), "[index_copy] Number of indices (", index.numel(),
           ") should be equal to source.size(dim) (", source.size(d), ")");
  // Along dim 0, copying slices is what index_put does.
  Indices rows{reshape(index, {-1})};
  return movedim(index_put(movedim(self, d, 0), rows, movedim(source, d, 0), false), 0, d);
}

Tensor index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return copy_(self, index_copy(self, dim, index, source));
}

Tensor index_put_(const Tensor& t, const Indices& indices, const Tensor& values, bool accumulate) {
  if (autograd::records_inplace(t, {&values}))
    return autograd::assign_inplace(t, index_put(t, indices, values, accumulate), "index_put_");
  write_index(t, indices, values, accumulate);
  return t;
}

namespace {

class IndexSelectBackward final : public autograd::Node {
 public:
  IndexSelectBackward(const Tensor& input, int64_t dim, Tensor index)
      : sizes_(input.sizes().begin(), input.sizes().end()), dim_(dim), index_(std::move(index)) {}
  std::string name() const override { return "IndexSelectBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Indices indices(dim_);
    indices.push_back(index_);
    Tensor zero = zeros(sizes_, grads[0].dtype(), grads[0].device());
    if (sizes_.empty()) return {sum(grads[0])};
    return {index_put(zero, indices, grads[0], true)};
  }

 private:
  Shape sizes_;
  int64_t dim_;
  Tensor index_;
};

}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  TP_OP_SPAN(index_select, t, dim, index);
  // In PyTorch's order: the dim, the index's shape, its dtype, then its values (no negative ones).
  int64_t d = wrap_dim("index_select", dim, t.dim());
  TP_CHECK_INDEX(index.dim() <= 1, "[index_select] Index is supposed to be a vector, got a ", index.dim(), "-D tensor");
  TP_CHECK(t.dim() > 0 || index.numel() == 1, "[index_select] Index to scalar can have only 1 value, got ",
           index.numel(), " value(s)");
  TP_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32,
           "[index_select] Expected dtype int32/int64 for index, got ", name(index.dtype()));
  if (index.numel() && index.has_data()) {
    int64_t size = t.dim() ? t.size(d) : 1;
    int64_t lo = amin(index).item<int64_t>(), hi = amax(index).item<int64_t>();
    TP_CHECK_KIND(d == 0 ? ErrorKind::Index : ErrorKind::Runtime, lo >= 0 && hi < size, "[index_select] index ",
                  lo < 0 ? lo : hi, " is out of range for dimension ", d, " with size ", size);
  }
  Tensor flat = reshape(index, {-1});
  autograd::Record<IndexSelectBackward> record({&t}, t, d, flat);
  if (t.dim() == 0) return record.finish(tp::index(reshape(t, {1}), {flat}).reshape(index.sizes()));
  std::vector<std::optional<Tensor>> indices(d);
  indices.push_back(flat);
  return record.finish(tp::index(t, indices));
}

namespace {

// A 0-dim tensor counts as 1-D in gather and scatter, as in PyTorch; the kernels see it as such.
int64_t dims_1d(const Tensor& x) { return std::max<int64_t>(x.dim(), 1); }
int64_t size_1d(const Tensor& x, int64_t d) { return x.dim() ? x.size(d) : 1; }
Tensor as_1d(const Tensor& x) { return x.dim() ? x : make_view(x, {1}, {1}, x.storage_offset()); }

// gather/scatter, checked as PyTorch does: nothing when index is empty; otherwise index is int64
// or int32, has t's (and src's) number of dims and fits inside t except along dim (inside src
// along every dim).
void check_gather_shapes(const char* op, const Tensor& t, int64_t dim, const Tensor& index, const Tensor* src) {
  if (index.numel() == 0) return;
  TP_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, "[", op,
           "] Expected dtype int64 for index, got ", name(index.dtype()));
  TP_CHECK(dims_1d(index) == dims_1d(t), "[", op, "] Index tensor must have the same number of dimensions ",
           "as input tensor, got ", index.dim(), " and ", t.dim());
  TP_CHECK(!src || dims_1d(index) == dims_1d(*src), "[", op, "] Index tensor must have the same number of ",
           "dimensions as src tensor, got ", index.dim(), " and ", src->dim());
  for (int64_t d = 0; d < dims_1d(index); ++d) {
    TP_CHECK(d == dim || size_1d(index, d) <= size_1d(t, d), "[", op, "] Size does not match at dimension ", d,
             " expected index ", to_string(index.sizes()), " to be no larger than self ", to_string(t.sizes()),
             " apart from dimension ", dim);
    if (src)
      TP_CHECK(size_1d(index, d) <= size_1d(*src, d), "[", op, "] Expected index ", to_string(index.sizes()),
               " to be no larger than src ", to_string(src->sizes()), " at dimension ", d);
  }
  if (!index.has_data()) return;
  int64_t size = size_1d(t, dim);
  int64_t lo = amin(index).item<int64_t>(), hi = amax(index).item<int64_t>();
  TP_CHECK(lo >= 0 && hi < size, "[", op, "] index ", lo < 0 ? lo : hi, " is out of bounds for dimension ", dim,
           " with size ", size);
}

}  // namespace

namespace {

class GatherBackward final : public autograd::Node {
 public:
  GatherBackward(const Tensor& input, int64_t dim, Tensor index)
      : sizes_(input.sizes().begin(), input.sizes().end()), dim_(dim), index_(std::move(index)) {}
  std::string name() const override { return "GatherBackward0"; }
  TensorList apply(TensorList&& grads) override {
    return {scatter_add(zeros(sizes_, grads[0].dtype(), grads[0].device()), dim_, index_, grads[0])};
  }

 private:
  Shape sizes_;
  int64_t dim_;
  Tensor index_;
};

// scatter (overwrite): the overwritten elements pass nothing to self, src gets what lands on it.
// scatter_add: self passes the gradient through, src gets what lands on it.
class ScatterBackward final : public autograd::Node {
 public:
  ScatterBackward(const char* name, int64_t dim, Tensor index, bool add)
      : name_(name), dim_(dim), index_(std::move(index)), add_(add) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    Tensor self = add_ ? g : scatter(g, dim_, index_, 0);
    return {self, needs_input_grad(1) ? gather(g, dim_, index_) : Tensor()};
  }

 private:
  const char* name_;
  int64_t dim_;
  Tensor index_;
  bool add_;
};

void write_scatter(const char* op, const Tensor& t, int64_t d, const Tensor& index, const Tensor& src,
                   ScatterReduce reduce) {
  TP_CHECK(src.dtype() == t.dtype(), "[", op, "] Expected self.dtype to be equal to src.dtype, got ", name(t.dtype()),
           " and ", name(src.dtype()));
  check_gather_shapes(op, t, d, index, &src);
  check_no_internal_overlap(op, t);  // after the shapes, as in PyTorch (t is a fresh copy out of place)
  Tensor idx = to(index, ScalarType::Int64);
  if (index.numel() && reduce == ScatterReduce::Add && is_reduced_float(t.dtype())) {
    // Sum repeated indices in float32 and round once, as PyTorch's result is.
    Tensor wide = to(t, ScalarType::Float32);
    backend(t.device()).scatter(as_1d(wide), d, as_1d(idx), as_1d(to(src, ScalarType::Float32)), reduce);
    backend(t.device()).copy(t, wide);
  } else if (index.numel()) {
    backend(t.device()).scatter(as_1d(t), d, as_1d(idx), as_1d(unaliased(src, t)), reduce);
  }
  t.bump_version();
}

Tensor scatter_op(const char* op, const char* node, const Tensor& t, int64_t dim, const Tensor& index,
                  const Tensor& src, bool add) {
  int64_t d = wrap_dim(op, dim, t.dim());
  autograd::Record<ScatterBackward> record({&t, &src}, node, d, index, add);
  Tensor out = clone(t);
  write_scatter(op, out, d, index, src, add ? ScatterReduce::Add : ScatterReduce::None);
  return record.finish(out);
}

}  // namespace

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  TP_OP_SPAN(gather, t, dim, index);
  int64_t d = wrap_dim("gather", dim, t.dim());
  check_gather_shapes("gather", t, d, index, nullptr);
  Tensor idx = to(index, ScalarType::Int64);
  autograd::Record<GatherBackward> record({&t}, t, d, idx);
  Tensor out = empty(index.sizes(), t.dtype(), t.device());
  if (index.numel()) backend(t.device()).gather(as_1d(out), as_1d(t), d, as_1d(idx));
  return record.finish(out);
}

Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_op("scatter", "ScatterBackward0", t, dim, index, src, false);
}
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value) {
  wrap_dim("scatter", dim, t.dim());
  check_fits("scatter", value, t.dtype());
  Tensor src = expand(scalar_tensor(value, t.dtype(), t.device()), index.sizes());
  return scatter_op("scatter", "ScatterBackward1", t, dim, index, src, false);
}
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  TP_OP_ENTRY(scatter_add, t, dim, index, src);
  return scatter_op("scatter_add", "ScatterAddBackward0", t, dim, index, src, true);
}

Tensor scatter_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = wrap_dim("scatter_", dim, t.dim());
  if (autograd::records_inplace(t, {&src})) {
    check_no_internal_overlap("scatter_", t);
    return autograd::assign_inplace(t, scatter(t, dim, index, src), "scatter_");
  }
  write_scatter("scatter_", t, d, index, src, ScatterReduce::None);
  return t;
}
Tensor scatter_(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value) {
  wrap_dim("scatter_", dim, t.dim());
  check_fits("scatter_", value, t.dtype());
  return scatter_(t, dim, index, expand(scalar_tensor(value, t.dtype(), t.device()), index.sizes()));
}
Tensor scatter_add_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = wrap_dim("scatter_add_", dim, t.dim());
  if (autograd::records_inplace(t, {&src})) {
    check_no_internal_overlap("scatter_add_", t);
    return autograd::assign_inplace(t, scatter_add(t, dim, index, src), "scatter_add_");
  }
  write_scatter("scatter_add_", t, d, index, src, ScatterReduce::Add);
  return t;
}

namespace {

class WhereBackward final : public autograd::Node {
 public:
  explicit WhereBackward(Tensor cond) : cond_(std::move(cond)) {}
  std::string name() const override { return "WhereBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    return {Tensor(), needs_input_grad(1) ? where(cond_, g, 0.0) : Tensor(),
            needs_input_grad(2) ? where(cond_, 0.0, g) : Tensor()};
  }

 private:
  Tensor cond_;
};

}  // namespace

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(where, condition, a, b);
  TP_CHECK(condition.dtype() == ScalarType::Bool || condition.dtype() == ScalarType::UInt8,
           "[where] expected "
           "condition to be a boolean tensor, but got a tensor with dtype ",
           name(condition.dtype()));
  const Device device = common_device("where", {&condition, &a, &b});
  Tensor cond = to(condition, device, ScalarType::Bool);
  ScalarType dtype = result_type(a, b);
  Shape shape = broadcast_shapes("where", broadcast_shapes("where", cond.sizes(), a.sizes()), b.sizes());
  autograd::Record<WhereBackward> record({nullptr, &a, &b}, cond);
  Tensor out = a.device() == device ? elementwise_output(shape, dtype, a) : empty(shape, dtype, device);
  auto operand = [&](const Tensor& t) { return expand(to(t, device, dtype), shape); };
  backend(device).ternary(TernaryOp::Where, out, expand(cond, shape), operand(a), operand(b), 0);
  return record.finish(out);
}

Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  TP_OP_ENTRY(where, cond, a, b);
  return where(cond, a, scalar_tensor(b, result_type(a, b), a.device()));
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  TP_OP_ENTRY(where, cond, a, b);
  return where(cond, scalar_tensor(a, result_type(b, a), b.device()), b);
}
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b) {
  TP_OP_ENTRY(where, cond, a, b);
  ScalarType dtype = ResultType().add(a).add(b).get();
  return where(cond, scalar_tensor(a, dtype, cond.device()), scalar_tensor(b, dtype, cond.device()));
}

namespace {

void check_mask(const char* op, const Tensor& mask, const Tensor& value) {
  TP_CHECK(mask.dtype() == ScalarType::Bool, "[", op, "] only supports boolean masks, but got mask with dtype ",
           name(mask.dtype()));
  TP_CHECK(value.dim() == 0, "[", op, "] only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
           " dimension(s).");
}

}  // namespace

namespace {

// masked elements take the value: they pass no gradient to the tensor and all of theirs to it.
class MaskedFillBackward final : public autograd::Node {
 public:
  explicit MaskedFillBackward(Tensor mask) : mask_(std::move(mask)) {}
  std::string name() const override { return "MaskedFillBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    return {needs_input_grad(0) ? where(mask_, 0.0, g) : Tensor(),
            needs_input_grad(1) ? sum(where(mask_, g, 0.0)) : Tensor()};
  }

 private:
  Tensor mask_;
};

}  // namespace

// masked_fill is `where` with the value in the tensor's dtype.
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value) {
  check_mask("masked_fill", mask, value);
  TP_CHECK(try_broadcast_shapes(t.sizes(), mask.sizes()).has_value(), "[masked_fill] mask of shape ",
           to_string(mask.sizes()), " cannot be broadcast with the tensor's shape ", to_string(t.sizes()));
  autograd::Record<MaskedFillBackward> record({&t, &value}, mask);
  return record.finish(where(mask, to(value, t.dtype()), t));
}

Tensor masked_fill(const Tensor& t, const Tensor& mask, const Scalar& value) {
  check_fits("masked_fill", value, t.dtype());
  return masked_fill(t, mask, scalar_tensor(value, t.dtype(), t.device()));
}

Tensor masked_fill_(const Tensor& t, const Tensor& mask, const Tensor& value) {
  check_mask("masked_fill_", mask, value);
  auto shape = try_broadcast_shapes(t.sizes(), mask.sizes());
  TP_CHECK(shape && std::ranges::equal(*shape, t.sizes()), "[masked_fill_] mask of shape ", to_string(mask.sizes()),
           " cannot be broadcast to the tensor's shape ", to_string(t.sizes()));
  if (autograd::records_inplace(t, {&value}))
    return autograd::assign_inplace(t, masked_fill(t, mask, value), "masked_fill_");
  backend(t.device())
      .ternary(TernaryOp::Where, t, expand(mask, t.sizes()), expand(to(value, t.dtype()), t.sizes()), t, 0);
  t.bump_version();
  return t;
}

Tensor masked_fill_(const Tensor& t, const Tensor& mask, const Scalar& value) {
  check_fits("masked_fill_", value, t.dtype());
  return masked_fill_(t, mask, scalar_tensor(value, t.dtype(), t.device()));
}

Tensor nonzero(const Tensor& t) { return backend(t.device()).nonzero(t); }

}  // namespace tp

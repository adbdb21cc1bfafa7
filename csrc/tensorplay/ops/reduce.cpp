// Reductions, scans and softmax, with their backward nodes. var, std, norm, logsumexp and mean
// are composites: their gradients come from the primitives they are written with.

#include <cmath>
#include <limits>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/complex.h"

namespace tp {

namespace {

// The output shape of a reduction: the reduced dims become 1 (keepdim) or disappear.
Shape reduced_shape(const Tensor& t, const std::vector<bool>& mask, bool keepdim) {
  Shape shape;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!mask[d])
      shape.push_back(t.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

Shape kept_dims_shape(const Tensor& t, const std::vector<bool>& mask) { return reduced_shape(t, mask, true); }

// ---- Backward ----
// A reduction's gradient flows back to every element it reduced: the reduced dims are restored
// (with size 1) and expanded to the input's shape.
struct Reduction {
  Shape input_shape;
  std::vector<bool> mask;
  bool keepdim;

  Reduction(const Tensor& input, const std::vector<bool>& m, bool k)
      : input_shape(input.sizes().begin(), input.sizes().end()), mask(m), keepdim(k) {}
  Shape kept() const {
    Shape shape = input_shape;
    for (size_t d = 0; d < shape.size(); ++d)
      if (mask[d]) shape[d] = 1;
    return shape;
  }
  Tensor with_kept_dims(const Tensor& reduced) const { return keepdim ? reduced : reshape(reduced, kept()); }
  Tensor spread(const Tensor& g) const { return expand(with_kept_dims(g), input_shape); }
  Shape dims() const {
    Shape dims;
    for (size_t d = 0; d < mask.size(); ++d)
      if (mask[d]) dims.push_back(static_cast<int64_t>(d));
    return dims;
  }
};

// sum and mean: every reduced element gets the gradient (mean's divided by the count).
class SumBackward final : public autograd::Node {
 public:
  SumBackward(const char* name, Reduction r, int64_t count = 1) : name_(name), r_(std::move(r)), count_(count) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    Tensor g = r_.spread(grads[0]);
    return {count_ == 1 ? g : div(g, static_cast<double>(count_))};
  }

 private:
  const char* name_;
  Reduction r_;
  int64_t count_;
};

// The product of all other elements along `dim`, without dividing (so zeros are exact):
// exclusive products from the left times exclusive products from the right.
Tensor product_of_others(const Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  if (n <= 1) return ones_like(x);  // one element, or none (an empty product's gradient is empty)
  Tensor one = ones_like(narrow(x, dim, 0, 1));
  Tensor left = cat({one, narrow(cumprod(x, dim), dim, 0, n - 1)}, dim);
  Tensor right = flip(cat({one, narrow(cumprod(flip(x, {dim}), dim), dim, 0, n - 1)}, dim), {dim});
  return mul(left, right);
}

class ProdBackward final : public autograd::Node {
 public:
  ProdBackward(const char* name, Reduction r) : name_(name), r_(std::move(r)) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    Tensor x = input.unpack(*this);
    Shape dims = r_.dims();
    if (dims.size() == 1) return {mul(r_.spread(grads[0]), product_of_others(x, dims[0]))};
    Tensor flat = reshape(x, {-1});
    return {mul(r_.spread(grads[0]), reshape(product_of_others(flat, 0), x.sizes()))};
  }
  void release_saved() override { input.release(); }
  autograd::SavedTensor input;

 private:
  const char* name_;
  Reduction r_;
};

// amax/amin and the full max()/min(): the gradient is shared evenly by the elements that tie
// for the extreme.
class ExtremeBackward final : public autograd::Node {
 public:
  ExtremeBackward(const char* name, Reduction r) : name_(name), r_(std::move(r)) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    Tensor x = input.unpack(*this);
    Tensor hits = eq(x, expand(r_.with_kept_dims(output.unpack(*this)), x.sizes()));
    Tensor count = sum(hits, r_.dims(), true);
    return {div(mul(r_.spread(grads[0]), hits), count)};
  }
  void release_saved() override {
    input.release();
    output.release();
  }
  autograd::SavedTensor input, output;

 private:
  const char* name_;
  Reduction r_;
};

// max/min along a dim: the gradient goes to the element whose index was returned.
class SelectedBackward final : public autograd::Node {
 public:
  SelectedBackward(const char* name, Reduction r, int64_t dim) : name_(name), r_(std::move(r)), dim_(dim) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    Tensor zero = zeros(r_.input_shape, grads[0].dtype(), grads[0].device());
    return {scatter(zero, dim_, r_.with_kept_dims(indices), r_.with_kept_dims(grads[0]))};
  }
  Tensor indices;  // not differentiable, so kept as is

 private:
  const char* name_;
  Reduction r_;
  int64_t dim_;
};

// Runs a reduction kernel writing `out_dtype`. A 16-bit float input reduced into float32 is read
// as is; any other dtype change converts the input first.
Tensor run_reduce(const char* op, ReduceOp kind, const Tensor& t, const std::vector<bool>& mask, bool keepdim,
                  ScalarType out_dtype) {
  bool direct = out_dtype == t.dtype() || out_dtype == ScalarType::Bool ||
                (is_reduced_float(t.dtype()) && out_dtype == ScalarType::Float32);
  Tensor in = direct ? t : to(t, out_dtype);
  // The result is allocated in its own shape, and the kernel writes it through a view with the
  // reduced dims kept: the result itself is no view (an in-place op on it must keep its history).
  Tensor out = empty(reduced_shape(in, mask, keepdim), out_dtype, in.device());
  backend(in.device()).reduce(kind, keepdim ? out : view(out, kept_dims_shape(in, mask)), in, mask);
  return out;
}

// sum and prod accumulate integers (and bool) in int64 unless a dtype is given.
ScalarType accumulation_dtype(const Tensor& t, OptionalDType dtype) {
  if (dtype) return *dtype;
  return is_differentiable(t.dtype()) ? t.dtype() : ScalarType::Int64;
}

// The ops below take real floating tensors; those with a complex form hand complex ones on first.
void check_floating(const char* op, const Tensor& t, const char* what) {
  if (is_complex(t.dtype())) fail_unsupported_dtype(op, t.dtype());
  TP_CHECK(is_floating_point(t.dtype()), "[", op, "] ", what, " Got ", name(t.dtype()));
}

// The matrix norms take complex matrices too: theirs are norms of magnitudes or singular values.
void check_matrix_norm_dtype(const Tensor& t) {
  if (!is_complex(t.dtype()))
    check_floating("linalg.matrix_norm", t, "Expected a floating point or complex tensor as input.");
}

// amax, amin, max(), min().
Tensor extreme(const char* op, const char* node, ReduceOp kind, const Tensor& t, IntArrayRef dims, bool keepdim) {
  TP_CHECK(t.numel() > 0 || !dims.empty(), "[", op,
           "] Expected reduction dim to be specified for input.numel() "
           "== 0. Specify the reduction dim with the 'dim' argument.");
  std::vector<bool> mask = dim_mask(op, dims, t.dim());
  for (int64_t d = 0; d < t.dim(); ++d)
    TP_CHECK_INDEX(!mask[d] || t.size(d) > 0, "[", op, "] Expected reduction dim ", d, " to have non-zero size.");
  autograd::Record<ExtremeBackward> record({&t}, node, Reduction(t, mask, keepdim));
  Tensor out = record.finish(run_reduce(op, kind, t, mask, keepdim, t.dtype()));
  if (record) {
    record->input = autograd::SavedTensor(t, false);
    record->output = autograd::SavedTensor(out, true);
  }
  return out;
}

std::pair<Tensor, Tensor> arg_extreme(const char* op, const char* node, ArgReduceOp kind, const Tensor& t, int64_t dim,
                                      bool keepdim) {
  int64_t d = wrap_dim(op, dim, t.dim());
  TP_CHECK_INDEX(t.dim() == 0 || t.size(d) > 0, "[", op, "] Expected reduction dim ", d, " to have non-zero size.");
  std::vector<bool> mask(t.dim(), false);
  if (t.dim()) mask[d] = true;
  Shape shape = reduced_shape(t, mask, keepdim);
  Tensor values = empty(shape, t.dtype(), t.device());
  Tensor indices = empty(shape, ScalarType::Int64, t.device());
  {
    autograd::Record<SelectedBackward> record({node ? &t : nullptr}, node, Reduction(t, mask, keepdim), d);
    // Written through views with dim d kept, so that the results are no views (see run_reduce).
    Shape kept = kept_dims_shape(t, mask);
    backend(t.device()).arg_reduce(kind, view(values, kept), view(indices, kept), t, d);
    if (record) record->indices = indices;
    record.finish(values);
  }
  return {values, indices};
}

Tensor arg_only(const char* op, ArgReduceOp kind, const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  TP_CHECK(t.dtype() != ScalarType::Bool, "[", op, "] does not support bool input");
  if (dim) return arg_extreme(op, nullptr, kind, t, *dim, keepdim).second;
  TP_CHECK_INDEX(t.numel() > 0, "[", op, "] Expected reduction dim to be specified for input.numel() == 0.");
  Tensor index = arg_extreme(op, nullptr, kind, reshape(t, {-1}), 0, false).second;
  return keepdim ? reshape(index, Shape(t.dim(), 1)) : index;
}

}  // namespace

Tensor sum(const Tensor& t, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  TP_OP_ENTRY(sum, t, dims, keepdim, dtype);
  if (t.is_sparse()) [[unlikely]]
    return sparse_sum(t, dims, keepdim, dtype);
  if (is_complex(dtype.value_or(t.dtype()))) return complex_sum(dtype ? to(t, *dtype) : t, dims, keepdim, false);
  std::vector<bool> mask = dim_mask("sum", dims, t.dim());
  autograd::Record<SumBackward> record({&t}, dims.empty() ? "SumBackward0" : "SumBackward1",
                                       Reduction(t, mask, keepdim));
  return record.finish(run_reduce("sum", ReduceOp::Sum, t, mask, keepdim, accumulation_dtype(t, dtype)));
}

Tensor sum_to_size(const Tensor& t, IntArrayRef shape) {
  if (std::ranges::equal(t.sizes(), shape)) return t;
  auto target = try_broadcast_shapes(t.sizes(), shape);
  TP_CHECK(target && std::ranges::equal(*target, t.sizes()), "[sum_to_size] size ", to_string(shape),
           " is not expandable to size ", to_string(t.sizes()));
  // Sum over the leading dims that broadcasting added and the dims it stretched from 1.
  const int64_t lead = t.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && t.size(d) != 1)) dims.push_back(d);
  return reshape(sum(t, dims, true), shape);
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, OptionalDType dtype) {
  TP_OP_ENTRY(prod, t, dim, keepdim, dtype);
  if (is_complex(accumulation_dtype(t, dtype))) return complex_prod(to(t, accumulation_dtype(t, dtype)), dim, keepdim);
  Shape dims;
  if (dim) dims.push_back(*dim);
  std::vector<bool> mask = dim_mask("prod", dims, t.dim());
  // A full product keeps no dims (PyTorch ignores keepdim without a dim).
  bool keep = dim ? keepdim : false;
  autograd::Record<ProdBackward> record({&t}, dim ? "ProdBackward1" : "ProdBackward0", Reduction(t, mask, keep));
  Tensor out = record.finish(run_reduce("prod", ReduceOp::Prod, t, mask, keep, accumulation_dtype(t, dtype)));
  if (record) record->input = autograd::SavedTensor(t, false);
  return out;
}

Tensor mean(const Tensor& t, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  TP_OP_ENTRY(mean, t, dims, keepdim, dtype);
  ScalarType out = dtype.value_or(t.dtype());
  if (is_complex(out)) return complex_sum(to(t, out), dims, keepdim, true);
  TP_CHECK(is_floating_point(out),
           "[mean] could not infer output dtype. Input dtype must be either a floating point "
           "or complex dtype. Got: ",
           name(out));
  std::vector<bool> mask = dim_mask("mean", dims, t.dim());
  int64_t count = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (mask[d]) count *= t.size(d);
  autograd::Record<SumBackward> record({&t}, dims.empty() ? "MeanBackward0" : "MeanBackward1",
                                       Reduction(t, mask, keepdim), count);
  // 16-bit floats sum in float32, divide, and round once (as PyTorch does).
  ScalarType acc = is_reduced_float(out) ? ScalarType::Float32 : out;
  Tensor total = sum(to(t, is_reduced_float(out) ? out : acc), dims, keepdim, acc);
  return record.finish(to(div(total, static_cast<double>(count)), out));
}

Tensor amax(const Tensor& t, IntArrayRef dims, bool keepdim) {
  TP_OP_ENTRY(amax, t, dims, keepdim);
  return extreme("amax", "AmaxBackward0", ReduceOp::Max, t, dims, keepdim);
}
Tensor amin(const Tensor& t, IntArrayRef dims, bool keepdim) {
  TP_OP_ENTRY(amin, t, dims, keepdim);
  return extreme("amin", "AminBackward0", ReduceOp::Min, t, dims, keepdim);
}
Tensor max(const Tensor& t) {
  TP_OP_ENTRY(max, t);
  return extreme("max", "MaxBackward1", ReduceOp::Max, t, {}, false);
}
Tensor min(const Tensor& t) {
  TP_OP_ENTRY(min, t);
  return extreme("min", "MinBackward1", ReduceOp::Min, t, {}, false);
}

std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  TP_OP_ENTRY(max, t, dim, keepdim);
  return arg_extreme("max", "MaxBackward0", ArgReduceOp::Max, t, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  TP_OP_ENTRY(min, t, dim, keepdim);
  return arg_extreme("min", "MinBackward0", ArgReduceOp::Min, t, dim, keepdim);
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return arg_only("argmax", ArgReduceOp::Max, t, dim, keepdim);
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return arg_only("argmin", ArgReduceOp::Min, t, dim, keepdim);
}

Tensor var(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
  TP_OP_ENTRY(var, t, dims, correction, keepdim);
  // A complex tensor's variance is its parts' variances added: |z - mean|^2 = re^2 + im^2.
  if (is_complex(t.dtype())) return add(var(real(t), dims, correction, keepdim), var(imag(t), dims, correction, keepdim));
  check_floating("var", t, "std and var only support floating point and complex dtypes.");
  std::vector<bool> mask = dim_mask("var", dims, t.dim());
  int64_t count = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (mask[d]) count *= t.size(d);
  // Two passes in the accumulation precision: the mean, then the squared deviations.
  ScalarType acc = is_reduced_float(t.dtype()) ? ScalarType::Float32 : t.dtype();
  Tensor x = to(t, acc);
  Tensor deviation = sub(x, mean(x, dims, true));
  Tensor squares = sum(mul(deviation, deviation), dims, keepdim);
  double denominator = std::max(0.0, static_cast<double>(count) - correction);
  return to(div(squares, denominator), t.dtype());
}

Tensor std(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
  TP_OP_ENTRY(std, t, dims, correction, keepdim);
  if (is_complex(t.dtype())) return sqrt(var(t, dims, correction, keepdim));
  check_floating("std", t, "std and var only support floating point and complex dtypes.");
  dim_mask("std", dims, t.dim());  // so a bad dim is reported as std's
  return sqrt(var(t, dims, correction, keepdim));
}

namespace {

// The gradient of a p-norm: sign(x) |x|^(p-1) / norm^(p-1), shared evenly among ties for the
// infinity norms. A zero norm has a zero gradient, as in PyTorch; written as a composite
// (sqrt(sum(x * x)), ...) the gradient there would be NaN.
class VectorNormBackward final : public autograd::Node {
 public:
  VectorNormBackward(double p, Reduction r) : p_(p), r_(std::move(r)) {}
  std::string name() const override { return "LinalgVectorNormBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor x = input.unpack(*this);
    Tensor norm = r_.with_kept_dims(output.unpack(*this));
    Tensor scale;
    if (p_ == 0) return {zeros_like(x)};
    if (p_ == 1) {
      scale = sign(x);
    } else if (std::isinf(p_)) {
      Tensor hits = eq(abs(x), norm);
      scale = div(mul(sign(x), hits), sum(hits, r_.dims(), true));
    } else {
      scale = p_ == 2 ? div(x, norm) : div(mul(sign(x), pow(abs(x), p_ - 1)), pow(norm, p_ - 1));
      if (p_ < 1) scale = where(eq(x, 0), 0.0, scale);  // |x|^(p-1) is infinite at 0
      scale = where(eq(norm, 0), 0.0, scale);
    }
    return {mul(r_.spread(grads[0]), scale)};
  }
  void release_saved() override {
    input.release();
    output.release();
  }
  autograd::SavedTensor input, output;

 private:
  double p_;
  Reduction r_;
};

// The p-norm of x over the masked dims, in x's dtype (which accumulates exactly enough).
Tensor p_norm(const Tensor& x, double p, const std::vector<bool>& mask, bool keepdim) {
  Reduction r(x, mask, keepdim);
  Shape dims = r.dims();
  autograd::Record<VectorNormBackward> record({&x}, p, r);
  Tensor a = abs(x), out;
  int64_t count = 1;  // elements per result
  for (size_t d = 0; d < mask.size(); ++d) count *= mask[d] && x.dim() ? x.size(d) : 1;
  if (count == 1 && p != 0)  // the norm of one number is its magnitude, exactly (no (|x|^p)^(1/p)), as in PyTorch
    out = sum(a, dims, keepdim);
  else if (std::isinf(p))
    out = p > 0 ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
  else if (p == 0)
    out = sum(ne(a, 0), dims, keepdim, x.dtype());
  else if (p == 1)
    out = sum(a, dims, keepdim);
  else if (p == 2)
    out = sqrt(sum(mul(a, a), dims, keepdim));
  else
    out = pow(sum(pow(a, p), dims, keepdim), 1.0 / p);
  if (record) {
    record->input = autograd::SavedTensor(x, false);
    record->output = autograd::SavedTensor(out, true);
  }
  return record.finish(out);
}

// Reduced floats accumulate in float32 and round once at the end.
Tensor accumulated_norm(const char* op, const Tensor& t, double p, const std::vector<bool>& mask, bool keepdim,
                        ScalarType out) {
  // The inf and negative norms (a max, a min) have no identity: no reduced dim may be empty.
  if (p < 0 || std::isinf(p))
    for (size_t d = 0; d < mask.size(); ++d)
      TP_CHECK(!mask[d] || (t.dim() ? t.size(d) : 1) != 0, "[", op, "] cannot compute the ", p,
               " norm on an empty tensor because the operation does not have an identity");
  ScalarType acc = is_reduced_float(out) ? ScalarType::Float32 : out;
  return to(p_norm(to(t, acc), p, mask, keepdim), out);
}

// The norms of the matrices in dims (rows, cols) that their singular values give: the largest
// ("2"), the smallest ("-2") or their sum ("nuc").
Tensor singular_value_norm(const Tensor& t, std::string_view ord, int64_t rows, int64_t cols, bool keepdim,
                           OptionalDType dtype) {
  TP_CHECK(!is_reduced_float(dtype.value_or(t.dtype())), "[linalg.matrix_norm] Low precision dtypes not supported. Got ",
           name(dtype.value_or(t.dtype())));
  Tensor s = with_op_name("linalg.matrix_norm",
                          [&] { return linalg_svdvals(movedim(dtype ? to(t, *dtype) : t, {rows, cols}, {-2, -1})); });
  // The largest of no singular values is 0, as their sum is (the smallest is an error).
  Tensor out = ord == "nuc" || (ord == "2" && s.size(-1) == 0) ? sum(s, {-1})
               : ord == "2"                                   ? amax(s, {-1})
                                                              : with_op_name("linalg.matrix_norm", [&] { return amin(s, {-1}); });
  if (!keepdim) return out;
  return unsqueeze(unsqueeze(out, std::min(rows, cols)), std::max(rows, cols));
}

}  // namespace

Tensor norm(const Tensor& t, double p, IntArrayRef dims, bool keepdim) {
  TP_OP_ENTRY(norm, t, p, dims, keepdim);
  if (is_complex(t.dtype())) return norm(abs(t), p, dims, keepdim);  // the norm of the magnitudes
  check_floating("norm", t, "Expected a floating point or complex tensor as input.");
  return accumulated_norm("norm", t, p, dim_mask("norm", dims, t.dim()), keepdim, t.dtype());
}

Tensor linalg_vector_norm(const Tensor& t, double ord, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  TP_OP_ENTRY(linalg_vector_norm, t, ord, dims, keepdim, dtype);
  if (is_complex(t.dtype())) {  // the norm of the magnitudes; a dtype names the complex type to compute in
    TP_CHECK(!dtype || is_complex(*dtype), "[linalg.vector_norm] dtype should be complex for a complex input, got ",
             name(*dtype));
    Tensor magnitudes = abs(dtype ? to(t, *dtype) : t);
    return linalg_vector_norm(magnitudes, ord, dims, keepdim);
  }
  check_floating("linalg.vector_norm", t, "Expected a floating point or complex tensor as input.");
  if (dtype) {
    TP_CHECK(is_floating_point(*dtype), "[linalg.vector_norm] dtype should be floating point, got ", name(*dtype));
    TP_CHECK(promote_types(t.dtype(), *dtype) == *dtype, "[linalg.vector_norm] the dtype of the input (",
             name(t.dtype()), ") should be convertible without narrowing to the specified dtype (", name(*dtype), ")");
  }
  return accumulated_norm("linalg.vector_norm", t, ord, dim_mask("linalg.vector_norm", dims, t.dim()), keepdim,
                          dtype.value_or(t.dtype()));
}

Tensor linalg_matrix_norm(const Tensor& t, double ord, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  TP_OP_ENTRY(linalg_matrix_norm, t, ord, dims, keepdim, dtype);
  TP_CHECK(t.dim() >= 2, "[linalg.matrix_norm] The input tensor A must have at least 2 dimensions.");
  TP_CHECK(dims.size() == 2, "[linalg.matrix_norm] dim must be a 2-tuple. Got ", to_string(dims));
  TP_CHECK(std::isinf(ord) || ord == 1 || ord == -1 || ord == 2 || ord == -2, "[linalg.matrix_norm] Order ", ord,
           " not supported.");
  check_matrix_norm_dtype(t);
  int64_t rows = wrap_dim("linalg.matrix_norm", dims[0], t.dim()),
          cols = wrap_dim("linalg.matrix_norm", dims[1], t.dim());
  TP_CHECK(rows != cols, "[linalg.matrix_norm] dims must be different. Got (", dims[0], ", ", dims[1], ")");
  if (ord == 2 || ord == -2) return singular_value_norm(t, ord > 0 ? "2" : "-2", rows, cols, keepdim, dtype);
  // inf: the largest row sum of |a|; 1: the largest column sum; the negative orders the smallest.
  int64_t summed = std::isinf(ord) ? cols : rows, extreme = std::isinf(ord) ? rows : cols;
  Tensor sums = linalg_vector_norm(t, 1, {summed}, true, dtype);
  // The largest of no sums is 0 (as PyTorch gives; they are nonnegative); the smallest is an error.
  Tensor out;
  if (ord > 0 && sums.size(extreme) == 0)
    out = sum(sums, {extreme}, true);
  else
    out = with_op_name("linalg.matrix_norm",
                       [&] { return ord > 0 ? amax(sums, {extreme}, true) : amin(sums, {extreme}, true); });
  return keepdim ? out : squeeze(out, {std::max(rows, cols), std::min(rows, cols)});
}

Tensor linalg_matrix_norm(const Tensor& t, std::string_view ord, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  TP_CHECK(ord == "fro" || ord == "nuc", "[linalg.matrix_norm] Order ", ord, " not supported.");
  TP_CHECK(t.dim() >= 2, "[linalg.matrix_norm] The input tensor A must have at least 2 dimensions.");
  TP_CHECK(dims.size() == 2, "[linalg.matrix_norm] dim must be a 2-tuple. Got ", to_string(dims));
  // Checked here, so that the errors name this op rather than vector_norm.
  check_matrix_norm_dtype(t);
  const int64_t rows = wrap_dim("linalg.matrix_norm", dims[0], t.dim()),
                cols = wrap_dim("linalg.matrix_norm", dims[1], t.dim());
  TP_CHECK(rows != cols, "[linalg.matrix_norm] dims must be different. Got (", dims[0], ", ", dims[1], ")");
  if (ord == "nuc") return singular_value_norm(t, ord, rows, cols, keepdim, dtype);
  return linalg_vector_norm(t, 2, dims, keepdim, dtype);
}

Tensor renorm(const Tensor& t, double p, int64_t dim, double maxnorm) {
  TP_OP_ENTRY(renorm, t, p, dim, maxnorm);
  TP_CHECK(p > 0, "[renorm] non-positive norm not supported, got p=", p);
  TP_CHECK(maxnorm >= 0, "[renorm] expected maxnorm to be >= 0 but got ", maxnorm);
  TP_CHECK(t.dim() > 1, "[renorm] input needs at least 2 dimensions, got ", t.dim(), " dimensions");
  int64_t keep = wrap_dim("renorm", dim, t.dim());
  if (!is_complex(t.dtype())) check_floating("renorm", t, "expected a floating point input.");
  Shape others;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != keep) others.push_back(d);
  // Each slice along dim whose norm exceeds maxnorm is scaled down to it (PyTorch's 1e-7 guard).
  // (A complex slice's norm is its magnitudes', real.)
  ScalarType acc = is_reduced_float(t.dtype()) ? ScalarType::Float32 : real_value_type(t.dtype());
  Tensor norms = is_complex(t.dtype()) ? linalg_vector_norm(t, p, others, true)
                                       : linalg_vector_norm(t, p, others, true, acc);
  Tensor factor = where(gt(norms, maxnorm), div(scalar_tensor(maxnorm, acc), add(norms, 1e-7)), 1.0);
  return mul(t, to(factor, t.dtype()));
}

Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim) {
  TP_OP_ENTRY(logsumexp, t, dims, keepdim);
  dim_mask("logsumexp", dims, t.dim());  // checked here, by this op's name, not by amax or sum below
  Tensor x = is_floating_point(t.dtype()) ? t : to(t, get_default_dtype());
  if (x.numel() == 0) return log(sum(exp(x), dims, keepdim));
  // Shift by the max (where finite) so exp cannot overflow; the shift cancels in the gradient.
  Tensor m = amax(x, dims, true).detach();
  m = where(isinf(m), 0.0, m);
  Tensor out = add(log(sum(exp(sub(x, m)), dims, true)), m);
  return keepdim ? out : squeeze(out, dims);
}

Tensor all(const Tensor& t, IntArrayRef dims, bool keepdim) {
  Tensor out = run_reduce("all", ReduceOp::All, t, dim_mask("all", dims, t.dim()), keepdim, ScalarType::Bool);
  return t.dtype() == ScalarType::UInt8 ? to(out, ScalarType::UInt8) : out;
}

Tensor any(const Tensor& t, IntArrayRef dims, bool keepdim) {
  Tensor out = run_reduce("any", ReduceOp::Any, t, dim_mask("any", dims, t.dim()), keepdim, ScalarType::Bool);
  return t.dtype() == ScalarType::UInt8 ? to(out, ScalarType::UInt8) : out;
}

namespace {

class CumsumBackward final : public autograd::Node {
 public:
  explicit CumsumBackward(int64_t dim) : dim_(dim) {}
  std::string name() const override { return "CumsumBackward0"; }
  TensorList apply(TensorList&& grads) override {
    return {flip(cumsum(flip(grads[0], {dim_}), dim_), {dim_})};  // sums of the gradients from each position on
  }

 private:
  int64_t dim_;
};

// d y_k / d x_i = prod_{j <= k, j != i} x_j. Without zeros that is y_k / x_i; with zeros the sum
// over k >= i is built by the recurrence S_i = g_i + x_{i+1} S_{i+1}, and grad_i = S_i prod_{j<i} x_j.
class CumprodBackward final : public autograd::Node {
 public:
  explicit CumprodBackward(int64_t dim) : dim_(dim) {}
  std::string name() const override { return "CumprodBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor x = input.unpack(*this), y = output.unpack(*this), g = grads[0];
    if (x.numel() == 0 || x.dim() == 0) return {g};
    if (!x.has_data() || all(ne(x, 0)).item<bool>()) return {div(flip(cumsum(flip(mul(g, y), {dim_}), dim_), {dim_}), x)};
    const int64_t n = x.size(dim_);
    TensorList s(n), result(n);
    s[n - 1] = select(g, dim_, n - 1);
    for (int64_t i = n - 2; i >= 0; --i) s[i] = add(select(g, dim_, i), mul(select(x, dim_, i + 1), s[i + 1]));
    Tensor before = ones_like(select(x, dim_, 0));
    for (int64_t i = 0; i < n; ++i) {
      result[i] = mul(s[i], before);
      before = mul(before, select(x, dim_, i));
    }
    return {stack(result, dim_)};
  }
  void release_saved() override {
    input.release();
    output.release();
  }
  autograd::SavedTensor input, output;

 private:
  int64_t dim_;
};

class SoftmaxBackward final : public autograd::Node {
 public:
  SoftmaxBackward(int64_t dim, bool log) : dim_(dim), log_(log) {}
  std::string name() const override { return log_ ? "LogSoftmaxBackward0" : "SoftmaxBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    Tensor y = output.unpack(*this);
    if (log_) return {sub(g, mul(exp(y), sum(g, {dim_}, true)))};
    return {mul(y, sub(g, sum(mul(g, y), {dim_}, true)))};
  }
  void release_saved() override { output.release(); }
  autograd::SavedTensor output;

 private:
  int64_t dim_;
  bool log_;
};

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, OptionalDType dtype) {
  TP_OP_ENTRY(cumsum, t, dim, dtype);
  int64_t d = wrap_dim("cumsum", dim, t.dim());
  if (is_complex(accumulation_dtype(t, dtype))) {  // the pairs summed along d (a 0-dim tensor is its own sum)
    Tensor z = to(t, accumulation_dtype(t, dtype));
    return t.dim() == 0 ? clone(z) : view_as_complex(cumsum(view_as_real(z), d));
  }
  autograd::Record<CumsumBackward> record({&t}, d);
  Tensor in = to(t, accumulation_dtype(t, dtype));
  Tensor out = empty(t.sizes(), in.dtype(), t.device());
  backend(t.device()).scan(ScanOp::Sum, out, in, d);
  return record.finish(out);
}

Tensor cumprod(const Tensor& t, int64_t dim, OptionalDType dtype) {
  TP_OP_ENTRY(cumprod, t, dim, dtype);
  int64_t d = wrap_dim("cumprod", dim, t.dim());
  if (is_complex(accumulation_dtype(t, dtype))) return complex_cumprod(to(t, accumulation_dtype(t, dtype)), d);
  autograd::Record<CumprodBackward> record({&t}, d);
  Tensor in = to(t, accumulation_dtype(t, dtype));
  Tensor out = empty(t.sizes(), in.dtype(), t.device());
  backend(t.device()).scan(ScanOp::Prod, out, in, d);
  record.finish(out);
  if (record) {
    record->input = autograd::SavedTensor(t, false);
    record->output = autograd::SavedTensor(out, true);
  }
  return out;
}

namespace {

Tensor run_softmax(const char* op, const Tensor& t, int64_t dim, OptionalDType dtype, bool log) {
  int64_t d = wrap_dim(op, dim, t.dim());
  autograd::Record<SoftmaxBackward> record({&t}, d, log);
  Tensor in = dtype ? to(t, *dtype) : t;
  Tensor out;
  if (in.numel() == 0) {
    out = empty_like(in);  // PyTorch returns empty ones of any dtype
  } else {
    if (!is_floating_point(in.dtype())) fail_unsupported_dtype(op, in.dtype());
    out = empty(t.sizes(), in.dtype(), t.device());
    backend(t.device()).softmax(out, in, d, log);
  }
  record.finish(out);
  if (record) record->output = autograd::SavedTensor(out, true);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim, OptionalDType dtype) {
  TP_OP_ENTRY(softmax, t, dim, dtype);
  return run_softmax("softmax", t, dim, dtype, false);
}
Tensor log_softmax(const Tensor& t, int64_t dim, OptionalDType dtype) {
  TP_OP_ENTRY(log_softmax, t, dim, dtype);
  return run_softmax("log_softmax", t, dim, dtype, true);
}

}  // namespace tp

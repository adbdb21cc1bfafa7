// Reductions, scans and softmax.

#include <cmath>
#include <limits>

#include "dispatch/backend.h"
#include "ops/ops.h"

namespace tp {

namespace {

// The output shape of a reduction: the reduced dims become 1 (keepdim) or disappear.
Shape reduced_shape(const Tensor& t, const std::vector<bool>& mask, bool keepdim) {
  Shape shape;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!mask[d]) shape.push_back(t.size(d));
    else if (keepdim) shape.push_back(1);
  }
  return shape;
}

Shape kept_dims_shape(const Tensor& t, const std::vector<bool>& mask) { return reduced_shape(t, mask, true); }

// Runs a reduction kernel writing `out_dtype`, on `in` already in the right input dtype.
Tensor run_reduce(const char* op, ReduceOp kind, const Tensor& in, IntArrayRef dims, bool keepdim, ScalarType out_dtype) {
  std::vector<bool> mask = dim_mask(op, dims, in.dim());
  Tensor out = empty(kept_dims_shape(in, mask), out_dtype, in.device());
  if (in.numel() == 0 && (kind == ReduceOp::Max || kind == ReduceOp::Min)) {
    TP_CHECK(out.numel() == 0, "[", op, "] Expected reduction dim to be specified for input.numel() == 0. Specify "
             "the reduction dim with the 'dim' argument.");
  }
  backend(in.device()).reduce(kind, out, in, mask);
  return keepdim ? out : view(out, reduced_shape(in, mask, false));
}

// sum and prod accumulate integers (and bool) in int64 unless a dtype is given.
ScalarType accumulation_dtype(const Tensor& t, OptionalDType dtype) {
  if (dtype) return *dtype;
  return is_floating_point(t.dtype()) ? t.dtype() : ScalarType::Int64;
}

// A 16-bit float input reduced into float32 is read as is; any other change converts first.
Tensor sum_like(const char* op, ReduceOp kind, const Tensor& t, IntArrayRef dims, bool keepdim, ScalarType out) {
  bool direct = out == t.dtype() || (is_reduced_float(t.dtype()) && out == ScalarType::Float32);
  return run_reduce(op, kind, direct ? t : to(t, out), dims, keepdim, out);
}

void check_floating(const char* op, const Tensor& t, const char* what) {
  TP_CHECK(is_floating_point(t.dtype()), "[", op, "] ", what, " Got ", name(t.dtype()));
}

Tensor extreme(const char* op, ReduceOp kind, const Tensor& t, IntArrayRef dims, bool keepdim) {
  TP_CHECK_INDEX(t.numel() > 0 || !dims.empty(), "[", op, "] Expected reduction dim to be specified for input.numel() == 0.");
  for (int64_t d : dims)
    TP_CHECK_INDEX(t.dim() == 0 || t.size(wrap_dim(op, d, t.dim())) > 0, "[", op, "] Expected reduction dim ", d,
                   " to have non-zero size.");
  return run_reduce(op, kind, t, dims, keepdim, t.dtype());
}

std::pair<Tensor, Tensor> arg_extreme(const char* op, ArgReduceOp kind, const Tensor& t, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(op, dim, t.dim());
  TP_CHECK_INDEX(t.dim() == 0 || t.size(d) > 0, "[", op, "] Expected reduction dim ", d, " to have non-zero size.");
  Shape shape(t.sizes().begin(), t.sizes().end());
  if (t.dim()) shape[d] = 1;
  Tensor values = empty(shape, t.dtype(), t.device());
  Tensor indices = empty(shape, ScalarType::Int64, t.device());
  backend(t.device()).arg_reduce(kind, values, indices, t, d);
  if (!keepdim && t.dim()) {
    values = squeeze(values, IntArrayRef{d});
    indices = squeeze(indices, IntArrayRef{d});
  }
  return {values, indices};
}

Tensor arg_only(const char* op, ArgReduceOp kind, const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  TP_CHECK(t.dtype() != ScalarType::Bool, "[", op, "] does not support bool input");
  if (dim) return arg_extreme(op, kind, t, *dim, keepdim).second;
  TP_CHECK_INDEX(t.numel() > 0, "[", op, "] Expected reduction dim to be specified for input.numel() == 0.");
  Tensor index = arg_extreme(op, kind, reshape(t, IntArrayRef{-1}), 0, false).second;
  return keepdim ? reshape(index, Shape(t.dim(), 1)) : index;
}

}  // namespace

Tensor sum(const Tensor& t, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  return sum_like("sum", ReduceOp::Sum, t, dims, keepdim, accumulation_dtype(t, dtype));
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, OptionalDType dtype) {
  Shape dims;
  if (dim) dims.push_back(*dim);
  Tensor out = sum_like("prod", ReduceOp::Prod, t, dims, keepdim, accumulation_dtype(t, dtype));
  return dim || !keepdim ? out : reshape(out, Shape(t.dim(), 1));
}

Tensor mean(const Tensor& t, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  ScalarType out = dtype.value_or(t.dtype());
  TP_CHECK(is_floating_point(out), "[mean] could not infer output dtype. Input dtype must be either a floating point "
           "or complex dtype. Got: ", name(out));
  std::vector<bool> mask = dim_mask("mean", dims, t.dim());
  int64_t count = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (mask[d]) count *= t.size(d);
  // 16-bit floats sum in float32, divide, and round once (as PyTorch does).
  ScalarType acc = is_reduced_float(out) ? ScalarType::Float32 : out;
  Tensor total = sum(to(t, is_reduced_float(out) ? out : acc), dims, keepdim, acc);
  return to(div(total, static_cast<double>(count)), out);
}

Tensor amax(const Tensor& t, IntArrayRef dims, bool keepdim) { return extreme("amax", ReduceOp::Max, t, dims, keepdim); }
Tensor amin(const Tensor& t, IntArrayRef dims, bool keepdim) { return extreme("amin", ReduceOp::Min, t, dims, keepdim); }

Tensor max(const Tensor& t) {
  TP_CHECK(t.numel() > 0, "[max] max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
           "reduction dim with the 'dim' argument.");
  return extreme("max", ReduceOp::Max, t, {}, false);
}
Tensor min(const Tensor& t) {
  TP_CHECK(t.numel() > 0, "[min] min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
           "reduction dim with the 'dim' argument.");
  return extreme("min", ReduceOp::Min, t, {}, false);
}

std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  return arg_extreme("max", ArgReduceOp::Max, t, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  return arg_extreme("min", ArgReduceOp::Min, t, dim, keepdim);
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return arg_only("argmax", ArgReduceOp::Max, t, dim, keepdim);
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return arg_only("argmin", ArgReduceOp::Min, t, dim, keepdim);
}

Tensor var(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
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
  check_floating("std", t, "std and var only support floating point and complex dtypes.");
  dim_mask("std", dims, t.dim());  // so a bad dim is reported as std's
  return sqrt(var(t, dims, correction, keepdim));
}

Tensor norm(const Tensor& t, double p, IntArrayRef dims, bool keepdim) {
  check_floating("norm", t, "Expected a floating point or complex tensor as input.");
  ScalarType acc = is_reduced_float(t.dtype()) ? ScalarType::Float32 : t.dtype();
  Tensor a = abs(to(t, acc));
  Tensor out;
  if (std::isinf(p)) out = p > 0 ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
  else if (p == 0) out = sum(ne(a, 0), dims, keepdim, acc);
  else if (p == 1) out = sum(a, dims, keepdim);
  else if (p == 2) out = sqrt(sum(mul(a, a), dims, keepdim));
  else out = pow(sum(pow(a, p), dims, keepdim), 1.0 / p);
  return to(out, t.dtype());
}

Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim) {
  Tensor x = is_floating_point(t.dtype()) ? t : to(t, get_default_dtype());
  if (x.numel() == 0) return log(sum(exp(x), dims, keepdim));
  // Shift by the max (where finite) so exp cannot overflow.
  Tensor m = amax(x, dims, true);
  m = where(isinf(m), 0.0, m);
  Tensor out = add(log(sum(exp(sub(x, m)), dims, true)), m);
  return keepdim ? out : squeeze(out, dims);
}

Tensor all(const Tensor& t, IntArrayRef dims, bool keepdim) {
  Tensor out = run_reduce("all", ReduceOp::All, t, dims, keepdim, ScalarType::Bool);
  return t.dtype() == ScalarType::UInt8 ? to(out, ScalarType::UInt8) : out;
}

Tensor any(const Tensor& t, IntArrayRef dims, bool keepdim) {
  Tensor out = run_reduce("any", ReduceOp::Any, t, dims, keepdim, ScalarType::Bool);
  return t.dtype() == ScalarType::UInt8 ? to(out, ScalarType::UInt8) : out;
}

namespace {

Tensor run_scan(const char* op, ScanOp kind, const Tensor& t, int64_t dim, OptionalDType dtype) {
  int64_t d = wrap_dim(op, dim, t.dim());
  Tensor in = to(t, accumulation_dtype(t, dtype));
  Tensor out = empty(t.sizes(), in.dtype(), t.device());
  backend(t.device()).scan(kind, out, in, d);
  return out;
}

Tensor run_softmax(const char* op, const Tensor& t, int64_t dim, OptionalDType dtype, bool log) {
  int64_t d = wrap_dim(op, dim, t.dim());
  Tensor in = dtype ? to(t, *dtype) : t;
  if (!is_floating_point(in.dtype())) fail_unsupported_dtype(op, in.dtype());
  Tensor out = empty(t.sizes(), in.dtype(), t.device());
  backend(t.device()).softmax(out, in, d, log);
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, OptionalDType dtype) { return run_scan("cumsum", ScanOp::Sum, t, dim, dtype); }
Tensor cumprod(const Tensor& t, int64_t dim, OptionalDType dtype) { return run_scan("cumprod", ScanOp::Prod, t, dim, dtype); }
Tensor softmax(const Tensor& t, int64_t dim, OptionalDType dtype) { return run_softmax("softmax", t, dim, dtype, false); }
Tensor log_softmax(const Tensor& t, int64_t dim, OptionalDType dtype) {
  return run_softmax("log_softmax", t, dim, dtype, true);
}

}  // namespace tp

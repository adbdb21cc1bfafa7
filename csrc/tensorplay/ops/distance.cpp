// Similarities and distances between vectors: composites of the norms in reduce.cpp, whose
// gradient at a zero distance is zero (PyTorch's convention).

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

void check_floating(const char* op, const Tensor& t, const char* what) {
  TP_CHECK(is_floating_point(t.dtype()), "[", op, "] only supports floating-point dtypes, ", what,
           " got: ", name(t.dtype()));
}

// PyTorch's CPU kernels of cdist and pdist take float32 and float64 only; checked last, as there,
// and only where there is something to compute (an empty result is made without the kernel).
void check_kernel_dtype(const char* op, const Tensor& t, bool computes) {
  if (computes && is_reduced_float(t.dtype())) fail_unsupported_dtype(op, t.dtype());
}

void check_p(const char* op, double p) { TP_CHECK(p >= 0, "[", op, "] only supports non-negative p values, got ", p); }

}  // namespace

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  TP_OP_ENTRY(cosine_similarity, x1, x2, dim, eps);
  TP_CHECK(is_floating_point(result_type(x1, x2)), "[cosine_similarity] expected common dtype to be floating point, ",
           "yet common dtype is ", name(result_type(x1, x2)));
  Shape shape = broadcast_shapes("cosine_similarity", x1.sizes(), x2.sizes());
  const int64_t d = wrap_dim("cosine_similarity", dim, static_cast<int64_t>(shape.size()));
  // Each side is divided by its own norm first, in its own dtype (an integer one in the common
  // floating dtype), which keeps the result within [-1, 1]; the product then promotes. The norm is
  // clamped to eps as PyTorch clamps it, under no_grad: the gradient flows as if unclamped.
  ScalarType common = result_type(x1, x2);
  auto unit = [&](const Tensor& x) {
    Tensor v = expand(is_floating_point(x.dtype()) ? x : to(x, common), shape);
    Tensor norm = linalg_vector_norm(v, 2, {d}, true);
    Tensor clamped = where(lt(norm, eps), eps, norm);
    return div(v, add(norm, sub(clamped, norm).detach()));
  };
  return sum(mul(unit(x1), unit(x2)), {d});
}

Tensor dist(const Tensor& a, const Tensor& b, double p) {
  TP_OP_ENTRY(dist, a, b, p);
  broadcast_shapes("dist", a.sizes(), b.sizes());
  // a - b promotes (int64 with float16 is float16), as in PyTorch; the norm needs a floating dtype.
  return with_op_name("dist", [&] {
    Tensor difference = sub(a, b);
    TP_CHECK(is_differentiable(difference.dtype()), "[dist] input dtype should be either floating point or complex. ",
             "Got ", name(difference.dtype()), " instead.");
    return linalg_vector_norm(difference, p);
  });
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  TP_OP_ENTRY(cdist, x1, x2, p);
  TP_CHECK(x1.dim() >= 2, "[cdist] only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TP_CHECK(x2.dim() >= 2, "[cdist] only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TP_CHECK(x1.size(-1) == x2.size(-1), "[cdist] X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
           " X2: ", x2.size(-1));
  check_floating("cdist", x1, "X1");
  check_floating("cdist", x2, "X2");
  check_p("cdist", p);
  Shape batch = broadcast_shapes("cdist", x1.sizes().subspan(0, x1.dim() - 2), x2.sizes().subspan(0, x2.dim() - 2));
  check_kernel_dtype("cdist", x1, numel(batch) > 0 && x1.size(-2) > 0 && x2.size(-2) > 0 && x1.size(-1) > 0);
  TP_CHECK(x1.dtype() == x2.dtype(), "[cdist] X1 and X2 must have the same dtype, got ", name(x1.dtype()), " and ",
           name(x2.dtype()));
  // [..., P, 1, M] - [..., 1, R, M]: every pair of rows, reduced over M.
  return linalg_vector_norm(sub(unsqueeze(x1, -2), unsqueeze(x2, -3)), p, {-1});
}

Tensor pdist(const Tensor& x, double p) {
  TP_OP_ENTRY(pdist, x, p);
  TP_CHECK(x.dim() == 2, "[pdist] only supports 2D tensors, got: ", x.dim(), "D");
  check_floating("pdist", x, "input");
  check_p("pdist", p);
  check_kernel_dtype("pdist", x, x.size(0) > 1 && x.size(1) > 0);
  // The pairs i < j in row-major order: the nonzeros of the strict upper triangle. They depend on
  // the shape alone, so they are found on the CPU (a meta tensor has no values to look at).
  Tensor rows = arange(0, x.size(0), 1, ScalarType::Int64);
  Tensor pairs = to(nonzero(lt(unsqueeze(rows, 1), unsqueeze(rows, 0))), x.device());
  Tensor first = index_select(x, 0, select(pairs, 1, 0)), second = index_select(x, 0, select(pairs, 1, 1));
  return linalg_vector_norm(sub(first, second), p, {-1});
}

}  // namespace tp

// Matrix products. mm, bmm, addmm and baddbmm run on the backend's batched gemm (out[b] =
// beta * out[b] + alpha * a[b] @ b[b]) and have backward nodes; dot, mv, outer and matmul are
// composites that reshape their operands into those.

#include "amp/autocast.h"
#include "autograd/record.h"
#include "autograd/saved_tensor.h"
#include "dispatch/backend.h"
#include "ops/ops.h"

namespace tp {

namespace {

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  TP_CHECK(a.dtype() == b.dtype(), "[", op, "] expected both operands to have the same dtype, but got ",
           name(a.dtype()), " and ", name(b.dtype()));
  TP_CHECK(a.device() == b.device(), "[", op, "] expected both operands on the same device, but got ", a.device().str(),
           " and ", b.device().str());
}

void check_dims(const char* op, const Tensor& t, int64_t expected, const char* what) {
  TP_CHECK(t.dim() == expected, "[", op, "] ", what, " must be a ", expected, "-D tensor, got ", t.dim(), "-D");
}

[[noreturn]] void fail_shapes(const char* op, const Tensor& a, const Tensor& b) {
  TP_FAIL("[", op, "] shapes ", to_string(a.sizes()), " and ", to_string(b.sizes()), " cannot be multiplied");
}

// out (3-D, already holding beta's addend) += alpha * a @ b.
Tensor batched_gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  backend(out.device()).gemm(out, a, b, beta, alpha);
  out.bump_version();
  return out;
}

Tensor product(const Tensor& a3, const Tensor& b3) {
  Tensor out = empty({a3.size(0), a3.size(1), b3.size(2)}, a3.dtype(), a3.device());
  return batched_gemm(out, a3, b3, 0, 1);
}

// d(beta * self + alpha * a @ b): beta * g for self, alpha * g @ b^T for a, alpha * a^T @ g for b.
// `batched` says whether the operands are [batch, rows, cols] (bmm) or matrices (mm).
class MatmulBackward final : public autograd::Node {
 public:
  MatmulBackward(const char* name, bool batched, bool has_self, const Scalar& beta, const Scalar& alpha)
      : name_(name), batched_(batched), has_self_(has_self), beta_(beta), alpha_(alpha) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    auto multiply = [this](const Tensor& x, const Tensor& y) { return batched_ ? bmm(x, y) : mm(x, y); };
    auto transposed = [](const Tensor& x) { return transpose(x, -2, -1); };
    auto scaled = [](const Tensor& x, const Scalar& s) { return s.to_double() == 1 ? x : mul(x, s); };
    TensorList out;
    size_t i = 0;
    if (has_self_) out.push_back(needs_input_grad(i++) ? scaled(g, beta_) : Tensor());
    out.push_back(needs_input_grad(i++) ? scaled(multiply(g, transposed(b.unpack(*this))), alpha_) : Tensor());
    out.push_back(needs_input_grad(i++) ? scaled(multiply(transposed(a.unpack(*this)), g), alpha_) : Tensor());
    return out;
  }
  void release_saved() override {
    a.release();
    b.release();
  }
  autograd::SavedTensor a, b;

 private:
  const char* name_;
  bool batched_, has_self_;
  Scalar beta_, alpha_;
};

// Records a product node for (self,) a, b; saves each operand the other's gradient needs.
template <class Forward>
Tensor recorded_product(const char* name, bool batched, const Tensor* self, const Tensor& a, const Tensor& b,
                        const Scalar& beta, const Scalar& alpha, Forward forward) {
  std::vector<const Tensor*> inputs;
  if (self) inputs.push_back(self);
  inputs.insert(inputs.end(), {&a, &b});
  autograd::Record<MatmulBackward> record(inputs, name, batched, self != nullptr, beta, alpha);
  Tensor out = record.finish(forward());
  if (record) {
    if (autograd::requires_grad(b)) record->a = autograd::SavedTensor(a, false);
    if (autograd::requires_grad(a)) record->b = autograd::SavedTensor(b, false);
  }
  return out;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  TP_AUTOCAST(mm, a, b);
  check_dims("mm", a, 2, "self");
  check_dims("mm", b, 2, "mat2");
  check_same_dtype("mm", a, b);
  if (a.size(1) != b.size(0)) fail_shapes("mm", a, b);
  return recorded_product("MmBackward0", false, nullptr, a, b, 0, 1,
                          [&] { return squeeze(product(unsqueeze(a, 0), unsqueeze(b, 0)), {0}); });
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  TP_AUTOCAST(bmm, a, b);
  check_dims("bmm", a, 3, "batch1");
  check_dims("bmm", b, 3, "batch2");
  check_same_dtype("bmm", a, b);
  TP_CHECK(a.size(0) == b.size(0), "[bmm] batch1 and batch2 must have same number of batches, got ", a.size(0), " and ",
           b.size(0));
  if (a.size(2) != b.size(1)) fail_shapes("bmm", a, b);
  return recorded_product("BmmBackward0", true, nullptr, a, b, 0, 1, [&] { return product(a, b); });
}

Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  TP_AUTOCAST(addmm, self, a, b, beta, alpha);
  check_dims("addmm", a, 2, "mat1");
  check_dims("addmm", b, 2, "mat2");
  check_same_dtype("addmm", a, b);
  check_same_dtype("addmm", self, a);
  if (a.size(1) != b.size(0)) fail_shapes("addmm", a, b);
  return recorded_product("AddmmBackward0", false, &self, a, b, beta, alpha, [&] {
    Tensor out = empty({1, a.size(0), b.size(1)}, a.dtype(), a.device());
    if (beta.to_double() != 0) copy_(out, expand(self, out.sizes().subspan(1)));
    batched_gemm(out, unsqueeze(a, 0), unsqueeze(b, 0), beta, alpha);
    return squeeze(out, {0});
  });
}

Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  TP_AUTOCAST(baddbmm, self, a, b, beta, alpha);
  check_dims("baddbmm", a, 3, "batch1");
  check_dims("baddbmm", b, 3, "batch2");
  check_same_dtype("baddbmm", a, b);
  check_same_dtype("baddbmm", self, a);
  TP_CHECK(a.size(0) == b.size(0), "[baddbmm] batch1 and batch2 must have same number of batches, got ", a.size(0),
           " and ", b.size(0));
  if (a.size(2) != b.size(1)) fail_shapes("baddbmm", a, b);
  return recorded_product("BaddbmmBackward0", true, &self, a, b, beta, alpha, [&] {
    Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
    if (beta.to_double() != 0) copy_(out, expand(self, out.sizes()));
    return batched_gemm(out, a, b, beta, alpha);
  });
}

Tensor dot(const Tensor& a, const Tensor& b) {
  TP_AUTOCAST(dot, a, b);
  check_dims("dot", a, 1, "self");
  check_dims("dot", b, 1, "tensor");
  check_same_dtype("dot", a, b);
  TP_CHECK(a.size(0) == b.size(0), "[dot] inconsistent tensor size, expected tensor [", a.size(0), "] and src [",
           b.size(0), "] to have the same number of elements, but got ", a.size(0), " and ", b.size(0),
           " elements respectively");
  if (a.dtype() == ScalarType::Bool) fail_unsupported_dtype("dot", a.dtype());
  return reshape(mm(view(a, {1, -1}), view(b, {-1, 1})), {});
}

Tensor mv(const Tensor& a, const Tensor& b) {
  TP_AUTOCAST(mv, a, b);
  check_dims("mv", a, 2, "self");
  check_dims("mv", b, 1, "vec");
  check_same_dtype("mv", a, b);
  if (a.size(1) != b.size(0)) fail_shapes("mv", a, b);
  return reshape(mm(a, view(b, {-1, 1})), {a.size(0)});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  TP_AUTOCAST(outer, a, b);
  check_dims("outer", a, 1, "self");
  check_dims("outer", b, 1, "vec2");
  return mul(unsqueeze(a, 1), b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  TP_AUTOCAST(matmul, a, b);
  TP_CHECK(a.dim() > 0 && b.dim() > 0, "[matmul] both arguments to matmul need to be at least 1D, but they are ",
           a.dim(), "D and ", b.dim(), "D");
  check_same_dtype("matmul", a, b);
  if (a.dim() == 1 && b.dim() == 1) {
    if (a.size(0) != b.size(0)) fail_shapes("matmul", a, b);
    return dot(a, b);
  }
  if (a.dim() == 2 && b.dim() == 1) {
    if (a.size(1) != b.size(0)) fail_shapes("matmul", a, b);
    return mv(a, b);
  }
  if (a.dim() == 1 && b.dim() == 2) {
    if (a.size(0) != b.size(0)) fail_shapes("matmul", a, b);
    return squeeze(mm(unsqueeze(a, 0), b), IntArrayRef{0});
  }
  if (a.dim() == 2 && b.dim() == 2) {
    if (a.size(1) != b.size(0)) fail_shapes("matmul", a, b);
    return mm(a, b);
  }
  const int64_t k = a.size(-1);
  const int64_t kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  if (k != kb) fail_shapes("matmul", a, b);
  if (a.dim() >= 3 && b.dim() <= 2) {
    // Fold a's batch dims into its rows: one large product instead of many small ones.
    Shape out_shape(a.sizes().begin(), a.sizes().end() - 1);
    Tensor rows = reshape(a, IntArrayRef{-1, k});
    if (b.dim() == 1) return reshape(mv(rows, b), out_shape);
    out_shape.push_back(b.size(1));
    return reshape(mm(rows, b), out_shape);
  }
  // General case: broadcast the batch dims and run one batched product.
  Tensor x = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor y = b.dim() == 1 ? unsqueeze(b, -1) : b;
  const int64_t m = x.size(-2), n = y.size(-1);
  Shape batch = broadcast_shapes("matmul", x.sizes().subspan(0, x.dim() - 2), y.sizes().subspan(0, y.dim() - 2));
  Shape x_shape = batch, y_shape = batch;
  x_shape.insert(x_shape.end(), {m, k});
  y_shape.insert(y_shape.end(), {k, n});
  int64_t count = numel(batch);
  Tensor out = bmm(reshape(expand(x, x_shape), {count, m, k}), reshape(expand(y, y_shape), {count, k, n}));
  Shape out_shape = batch;
  if (a.dim() > 1) out_shape.push_back(m);
  if (b.dim() > 1) out_shape.push_back(n);
  return reshape(out, out_shape);
}

}  // namespace tp

// Matrix products. mm, bmm, addmm and baddbmm run on the backend's batched gemm (out[b] =
// beta * out[b] + alpha * a[b] @ b[b]) and have backward nodes; everything else here (dot, mv,
// matmul, addmv, tensordot, ...; einsum in einsum.cpp) is a composite that reshapes its operands
// into those.

#include <algorithm>
#include <limits>
#include <string>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/complex.h"

namespace tp {

namespace {

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  TP_CHECK(a.dtype() == b.dtype(), "[", op, "] expected both operands to have the same dtype, but got ",
           name(a.dtype()), " and ", name(b.dtype()));
  TP_CHECK(a.device() == b.device(), "[", op, "] expected both operands on the same device, but got ", a.device().str(),
           " and ", b.device().str());
}

// The products compute in every dtype but bool; checked after the shapes, as PyTorch's kernels are.
void check_not_bool(const char* op, const Tensor& t) {
  if (t.dtype() == ScalarType::Bool) fail_unsupported_dtype(op, t.dtype());
}

void check_dims(const char* op, const Tensor& t, int64_t expected, const char* what) {
  TP_CHECK(t.dim() == expected, "[", op, "] ", what, " must be a ", expected, "-D tensor, got ", t.dim(), "-D");
}

// Dim d of t, wrapped; an IndexError that names the op when t has no dim d (a 0-dim t has none).
int64_t dim_at(const char* op, const Tensor& t, int64_t d) {
  TP_CHECK_INDEX(t.dim() > 0, "[", op, "] dimension specified as ", d, " but tensor has no dimensions");
  return wrap_dim(op, d, t.dim());
}

int64_t size_at(const char* op, const Tensor& t, int64_t d) { return t.size(dim_at(op, t, d)); }

// The input of addmm, baddbmm and addbmm must broadcast to the product's shape, whatever beta is
// (beta = 0 ignores its values, not its shape), as in PyTorch.
void check_input_shape(const char* op, const Tensor& self, IntArrayRef shape) {
  auto broadcast = try_broadcast_shapes(self.sizes(), shape);
  TP_CHECK(broadcast && std::ranges::equal(*broadcast, shape), "[", op, "] the input of shape ",
           to_string(self.sizes()), " cannot be broadcast to the product's shape ", to_string(shape));
}

[[noreturn]] void fail_shapes(const char* op, const Tensor& a, const Tensor& b) {
  TP_FAIL("[", op, "] shapes ", to_string(a.sizes()), " and ", to_string(b.sizes()), " cannot be multiplied");
}

// out (3-D, already holding beta's addend) += alpha * a @ b, or out = a @ b + bias (a [1, 1, cols] row).
Tensor batched_gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha,
                    const Tensor& bias = {}) {
  backend(out.device()).gemm(out, a, b, beta, alpha, bias);
  out.bump_version();
  return out;
}

Tensor product(const Tensor& a3, const Tensor& b3) {
  Tensor out = empty({a3.size(0), a3.size(1), b3.size(2)}, a3.dtype(), a3.device());
  return batched_gemm(out, a3, b3, 0, 1);
}

// d(beta * self + alpha * a @ b): beta * g for self, alpha * g @ b^T for a, alpha * a^T @ g for b.
// `batched` says whether the operands are [batch, rows, cols] (bmm) or matrices (mm).
//
// A b given transposed (linear's weight.t()) gets its gradient in the same layout, as (g^T @ a)^T:
// the weight's gradient then arrives contiguous, and AccumulateGrad keeps it instead of copying it.
class MatmulBackward final : public autograd::Node {
 public:
  MatmulBackward(const char* name, bool batched, bool has_self, const Scalar& beta, const Scalar& alpha,
                 bool b_transposed)
      : name_(name), batched_(batched), has_self_(has_self), b_transposed_(b_transposed), beta_(beta), alpha_(alpha) {}
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
    if (needs_input_grad(i++)) {
      Tensor x = a.unpack(*this);
      out.push_back(scaled(b_transposed_ ? transposed(multiply(transposed(g), x)) : multiply(transposed(x), g), alpha_));
    } else {
      out.push_back(Tensor());
    }
    return out;
  }
  void release_saved() override {
    a.release();
    b.release();
  }
  autograd::SavedTensor a, b;

 private:
  const char* name_;
  bool batched_, has_self_, b_transposed_;
  Scalar beta_, alpha_;
};

// Records a product node for (self,) a, b; saves each operand the other's gradient needs.
template <class Forward>
Tensor recorded_product(const char* name, bool batched, const Tensor* self, const Tensor& a, const Tensor& b,
                        const Scalar& beta, const Scalar& alpha, Forward forward) {
  std::vector<const Tensor*> inputs;
  if (self) inputs.push_back(self);
  inputs.insert(inputs.end(), {&a, &b});
  const bool b_transposed = b.stride(-2) == 1 && b.stride(-1) != 1 && b.size(-2) > 1;
  autograd::Record<MatmulBackward> record(inputs, name, batched, self != nullptr, beta, alpha, b_transposed);
  Tensor out = record.finish(forward());
  if (record) {
    if (autograd::requires_grad(b)) record->a = autograd::SavedTensor(a, false);
    if (autograd::requires_grad(a)) record->b = autograd::SavedTensor(b, false);
  }
  return out;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(mm, a, b);
  if (a.is_sparse()) return sparse_mm(a, b);
  if (b.is_sparse()) return dense_sparse_mm(a, b);
  check_dims("mm", a, 2, "self");
  check_dims("mm", b, 2, "mat2");
  check_same_dtype("mm", a, b);
  if (a.size(1) != b.size(0)) fail_shapes("mm", a, b);
  check_not_bool("mm", a);
  if (is_complex(a.dtype())) return complex_product(a, b, mm);
  return recorded_product("MmBackward0", false, nullptr, a, b, 0, 1,
                          [&] { return squeeze(product(unsqueeze(a, 0), unsqueeze(b, 0)), {0}); });
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(bmm, a, b);
  check_dims("bmm", a, 3, "batch1");
  check_dims("bmm", b, 3, "batch2");
  TP_CHECK(a.size(0) == b.size(0), "[bmm] batch1 and batch2 must have same number of batches, got ", a.size(0), " and ",
           b.size(0));
  if (a.size(2) != b.size(1)) fail_shapes("bmm", a, b);
  check_not_bool("bmm", a);  // batch1's dtype first, then the pair's, as in PyTorch
  check_same_dtype("bmm", a, b);
  if (is_complex(a.dtype())) return complex_product(a, b, bmm);
  return recorded_product("BmmBackward0", true, nullptr, a, b, 0, 1, [&] { return product(a, b); });
}

Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  TP_OP_ENTRY(addmm, self, a, b, beta, alpha);
  if (a.is_sparse()) return add(mul(self, beta), sparse_mm(a, b), alpha);
  check_dims("addmm", a, 2, "mat1");
  check_dims("addmm", b, 2, "mat2");
  check_same_dtype("addmm", a, b);
  check_same_dtype("addmm", self, a);
  if (a.size(1) != b.size(0)) fail_shapes("addmm", a, b);
  check_input_shape("addmm", self, {a.size(0), b.size(1)});
  check_not_bool("addmm", a);
  return recorded_product("AddmmBackward0", false, &self, a, b, beta, alpha, [&] {
    Tensor out = empty({1, a.size(0), b.size(1)}, a.dtype(), a.device());
    // linear's case, a bias row added to the product: the kernel adds it as it writes the product.
    const bool bias_row = beta.to_double() == 1 && alpha.to_double() == 1 && self.numel() == b.size(1) &&
                          (self.dim() == 1 || (self.dim() == 2 && self.size(0) == 1));
    if (bias_row) {
      batched_gemm(out, unsqueeze(a, 0), unsqueeze(b, 0), 0, 1, reshape(self.contiguous(), {1, 1, b.size(1)}));
    } else {
      if (beta.to_double() != 0) copy_(out, expand(self, out.sizes().subspan(1)));
      batched_gemm(out, unsqueeze(a, 0), unsqueeze(b, 0), beta, alpha);
    }
    return squeeze(out, {0});
  });
}

Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  TP_OP_ENTRY(baddbmm, self, a, b, beta, alpha);
  // PyTorch first broadcasts self to (batch1.size(0), batch1.size(1), batch2.size(2)): too few
  // dims are an IndexError.
  check_input_shape("baddbmm", self, {size_at("baddbmm", a, 0), size_at("baddbmm", a, 1), size_at("baddbmm", b, 2)});
  check_dims("baddbmm", a, 3, "batch1");
  check_dims("baddbmm", b, 3, "batch2");
  TP_CHECK(a.size(0) == b.size(0), "[baddbmm] batch1 and batch2 must have same number of batches, got ", a.size(0),
           " and ", b.size(0));
  if (a.size(2) != b.size(1)) fail_shapes("baddbmm", a, b);
  check_input_shape("baddbmm", self, {a.size(0), a.size(1), b.size(2)});
  check_same_dtype("baddbmm", self, a);  // in PyTorch's order: input and batch1, batch1's support, the batches
  check_not_bool("baddbmm", a);
  check_same_dtype("baddbmm", a, b);
  return recorded_product("BaddbmmBackward0", true, &self, a, b, beta, alpha, [&] {
    Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
    if (beta.to_double() != 0) copy_(out, expand(self, out.sizes()));
    return batched_gemm(out, a, b, beta, alpha);
  });
}

namespace {

// dot and vdot (the same for real tensors; they differ only in their autocast rows).
Tensor inner_product(const char* op, const Tensor& a, const Tensor& b) {
  check_dims(op, a, 1, "self");
  check_dims(op, b, 1, "tensor");
  check_same_dtype(op, a, b);
  TP_CHECK(a.size(0) == b.size(0), "[", op, "] inconsistent tensor size, expected tensor [", a.size(0), "] and src [",
           b.size(0), "] to have the same number of elements, but got ", a.size(0), " and ", b.size(0),
           " elements respectively");
  if (a.dtype() == ScalarType::Bool) fail_unsupported_dtype(op, a.dtype());
  return reshape(mm(view(a, {1, -1}), view(b, {-1, 1})), {});
}

}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(dot, a, b);
  return inner_product("dot", a, b);
}

Tensor vdot(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(vdot, a, b);
  return inner_product("vdot", conj(a), b);  // the first vector conjugated
}

Tensor mv(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(mv, a, b);
  size_at("mv", a, 0);  // PyTorch sizes the result first: a 0-dim self is an IndexError
  check_dims("mv", a, 2, "self");
  check_dims("mv", b, 1, "vec");
  check_same_dtype("mv", a, b);
  if (a.size(1) != b.size(0)) fail_shapes("mv", a, b);
  check_not_bool("mv", a);
  return reshape(mm(a, view(b, {-1, 1})), {a.size(0)});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(outer, a, b);
  check_dims("outer", a, 1, "self");
  check_dims("outer", b, 1, "vec2");
  return mul(unsqueeze(a, 1), b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  TP_OP_ENTRY(matmul, a, b);
  if (a.is_sparse() && b.dim() == 1) return squeeze(sparse_mm(a, unsqueeze(b, 1)), {1});
  if (a.is_sparse()) return sparse_mm(a, b);
  if (b.is_sparse()) return dense_sparse_mm(a, b);
  TP_CHECK(a.dim() > 0 && b.dim() > 0, "[matmul] both arguments to matmul need to be at least 1D, but they are ",
           a.dim(), "D and ", b.dim(), "D");
  // The batched case below runs bmm, which checks dtypes after the shapes; the others, first.
  const bool batched = (a.dim() >= 3 || b.dim() >= 3) && !(a.dim() >= 3 && b.dim() <= 2);
  if (!batched) check_same_dtype("matmul", a, b);
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
  check_not_bool("matmul", a);
  check_same_dtype("matmul", a, b);
  Tensor out = bmm(reshape(expand(x, x_shape), {count, m, k}), reshape(expand(y, y_shape), {count, k, n}));
  Shape out_shape = batch;
  if (a.dim() > 1) out_shape.push_back(m);
  if (b.dim() > 1) out_shape.push_back(n);
  return reshape(out, out_shape);
}

// ---- composites: each reshapes its operands into one product above ----

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  TP_OP_ENTRY(addmv, self, mat, vec, beta, alpha);
  check_dims("addmv", mat, 2, "mat");
  check_dims("addmv", vec, 1, "vec");
  check_same_dtype("addmv", mat, vec);
  check_same_dtype("addmv", self, mat);
  if (mat.size(1) != vec.size(0)) fail_shapes("addmv", mat, vec);
  TP_CHECK(self.dim() <= 1 && (self.numel() == 1 || (self.dim() == 1 && self.size(0) == mat.size(0))),
           "[addmv] size mismatch, got input (", to_string(self.sizes()), "), mat ", to_string(mat.sizes()), ", vec ",
           to_string(vec.sizes()));
  Tensor column = self.dim() == 1 ? unsqueeze(self, 1) : self;
  return squeeze(addmm(column, mat, unsqueeze(vec, 1), beta, alpha), {1});
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  TP_OP_ENTRY(addr, self, vec1, vec2, beta, alpha);
  check_dims("addr", vec1, 1, "vec1");
  check_dims("addr", vec2, 1, "vec2");
  // Unlike the other products, addr is elementwise, beta * self + (alpha * vec1[i]) * vec2[j]: it
  // promotes mixed dtypes and rounds after each operation, as PyTorch's kernel does.
  const ScalarType dtype = promote_types(promote_types(self.dtype(), vec1.dtype()), vec2.dtype());
  for (auto [what, s] : {std::pair{"beta", beta}, std::pair{"alpha", alpha}})
    TP_CHECK(is_floating_point(dtype) || !s.is_floating_point(), "[addr] For integral input tensors, argument ", what,
             " must not be a floating point number.");
  Shape out_shape{vec1.size(0), vec2.size(0)};
  TP_CHECK(broadcast_shapes("addr", self.sizes(), out_shape) == out_shape, "[addr] the input of shape ",
           to_string(self.sizes()), " cannot be broadcast to the outer product's shape ", to_string(out_shape));
  if (dtype == ScalarType::Bool) {  // (beta and self) or (alpha and vec1[i] and vec2[j]), as PyTorch's kernel
    Tensor out = logical_and(unsqueeze(vec1, 1), unsqueeze(vec2, 0));
    if (!alpha.to_bool()) out = zeros_like(out);
    if (beta.to_bool()) out = logical_or(expand(self, out_shape), out);
    return out;
  }
  Tensor out = mul(mul(unsqueeze(to(vec1, dtype), 1), alpha), unsqueeze(to(vec2, dtype), 0));
  if (beta.to_double() != 0) out = add(mul(to(self, dtype), beta), out);  // beta = 0 ignores self, NaN included
  return out;
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  TP_OP_ENTRY(addbmm, self, batch1, batch2, beta, alpha);
  // PyTorch first broadcasts self to (batch1.size(1), batch2.size(2)): too few dims are an IndexError.
  check_input_shape("addbmm", self, {size_at("addbmm", batch1, 1), size_at("addbmm", batch2, 2)});
  check_dims("addbmm", batch1, 3, "batch1");
  check_dims("addbmm", batch2, 3, "batch2");
  check_same_dtype("addbmm", batch1, batch2);
  check_same_dtype("addbmm", self, batch1);
  TP_CHECK(batch1.size(0) == batch2.size(0), "[addbmm] batch1 and batch2 must have same number of batches, got ",
           batch1.size(0), " and ", batch2.size(0));
  if (batch1.size(2) != batch2.size(1)) fail_shapes("addbmm", batch1, batch2);
  check_not_bool("addbmm", batch1);
  // The sum over the batch of n x k products is one n x (batch k) product.
  const int64_t batch = batch1.size(0), n = batch1.size(1), k = batch1.size(2), p = batch2.size(2);
  return addmm(self, reshape(permute(batch1, {1, 0, 2}), {n, batch * k}), reshape(batch2, {batch * k, p}), beta, alpha);
}

Tensor tensordot(const Tensor& a_in, const Tensor& b_in, IntArrayRef dims_a, IntArrayRef dims_b) {
  TP_OP_ENTRY(tensordot, a_in, b_in, dims_a, dims_b);
  Tensor a = a_in, b = b_in;
  TP_CHECK(a.dtype() == b.dtype(), "[tensordot] expected both operands to have the same dtype, but got ",
           name(a.dtype()), " and ", name(b.dtype()));
  TP_CHECK(dims_a.size() == dims_b.size(), "[tensordot] both dimension lists should have same length, got ",
           to_string(dims_a), " and ", to_string(dims_b));
  // Each pair in turn, as PyTorch checks them. (dim_mask would read an empty list as every dim;
  // here it means none.)
  std::vector<bool> contracted_a(a.dim(), false), contracted_b(b.dim(), false);
  Shape pairs_a, pairs_b;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = dim_at("tensordot", a, dims_a[i]), db = dim_at("tensordot", b, dims_b[i]);
    const int64_t sa = a.size(da), sb = b.size(db);
    TP_CHECK(sa == sb || sa == 1 || sb == 1, "[tensordot] contracted dimensions need to match, but first has size ", sa,
             " in dim ", da, " and second has size ", sb, " in dim ", db);
    TP_CHECK(!contracted_a[da] && !contracted_b[db], "[tensordot] a dim appears more than once in dims ",
             to_string(dims_a), " and ", to_string(dims_b));
    contracted_a[da] = contracted_b[db] = true;
    pairs_a.push_back(da), pairs_b.push_back(db);
  }
  check_not_bool("tensordot", a);
  // A contracted dim of size 1 broadcasts, as in PyTorch: the other side is summed over it first.
  for (size_t i = 0; i < pairs_a.size(); ++i) {
    if (b.size(pairs_b[i]) == 1 && a.size(pairs_a[i]) != 1) a = sum(a, {pairs_a[i]}, true, a.dtype());
    if (a.size(pairs_a[i]) == 1 && b.size(pairs_b[i]) != 1) b = sum(b, {pairs_b[i]}, true, b.dtype());
  }
  // a -> [free_a, contracted] and b -> [contracted, free_b], contracted dims in the order given.
  Shape perm_a, perm_b, out_shape;
  int64_t free_a = 1, free_b = 1, inner = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!contracted_a[d]) perm_a.push_back(d), out_shape.push_back(a.size(d)), free_a *= a.size(d);
  for (size_t i = 0; i < pairs_a.size(); ++i)
    perm_a.push_back(pairs_a[i]), perm_b.push_back(pairs_b[i]), inner *= a.size(pairs_a[i]);
  for (int64_t d = 0; d < b.dim(); ++d)
    if (!contracted_b[d]) perm_b.push_back(d), out_shape.push_back(b.size(d)), free_b *= b.size(d);
  Tensor product = mm(reshape(permute(a, perm_a), {free_a, inner}), reshape(permute(b, perm_b), {inner, free_b}));
  return reshape(product, out_shape);
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  TP_OP_ENTRY(cross, a, b, dim);
  // In PyTorch's order: the dim (by default the input's first of size 3), the number of dims, the
  // dim's length, the broadcast, the dtypes.
  int64_t d = -1;
  if (dim) {
    d = *dim;
  } else {  // PyTorch's deprecated default
    for (int64_t i = 0; i < a.dim() && d < 0; ++i)
      if (a.size(i) == 3) d = i;
    TP_CHECK(d >= 0, "[cross] no dimension of size 3 in input");
  }
  TP_CHECK(a.dim() == b.dim(), "[cross] inputs must have the same number of dimensions, got ", a.dim(), " and ",
           b.dim());
  d = dim_at("cross", a, d);
  TP_CHECK(a.size(d) == 3 && b.size(d) == 3, "[cross] inputs dimension ", d, " must have length 3. Got ", a.size(d),
           " and ", b.size(d));
  broadcast_shapes("cross", a.sizes(), b.sizes());
  TP_CHECK(a.dtype() == b.dtype(), "[cross] expected input and other to have the same dtype, but got ", name(a.dtype()),
           " and ", name(b.dtype()));
  // out_i = a_(i+1) b_(i+2) - a_(i+2) b_(i+1): the components rotated by one and by two.
  auto rotated = [d](const Tensor& t, int64_t by) { return cat({narrow(t, d, by, 3 - by), narrow(t, d, 0, by)}, d); };
  return sub(mul(rotated(a, 1), rotated(b, 2)), mul(rotated(a, 2), rotated(b, 1)));
}

Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  TP_OP_ENTRY(linalg_vecdot, x, y, dim);
  TP_CHECK(x.dtype() == y.dtype(), "[linalg.vecdot] Expected x and y to have the same dtype, but found x of type ",
           name(x.dtype()), " and y of type ", name(y.dtype()), " instead");
  TP_CHECK(is_floating_point(x.dtype()) || is_complex(x.dtype()),
           "[linalg.vecdot] Expected a floating point or complex tensor as input. Got ", name(x.dtype()));
  Shape shape = broadcast_shapes("linalg.vecdot", x.sizes(), y.sizes());
  // sum(conj(x) * y): the inner product of complex vectors conjugates the first.
  return sum(mul(conj(x), y), {wrap_dim("linalg.vecdot", dim, static_cast<int64_t>(shape.size()))});
}

namespace {

// The product of a chain of matrices, in PyTorch's order (which decides the rounding): two
// directly; three by comparing the two costs, left first on a tie; more by the classic dynamic
// program over the multiply-add counts, the leftmost split on a tie.
Tensor chain_product(const TensorList& m) {
  const size_t n = m.size();
  if (n == 2) return mm(m[0], m[1]);
  if (n == 3) {
    const int64_t a = m[0].size(0), b = m[1].size(0), c = m[2].size(0), d = m[2].size(1);
    return a * c * (b + d) > b * d * (a + c) ? mm(m[0], mm(m[1], m[2])) : mm(mm(m[0], m[1]), m[2]);
  }
  std::vector<int64_t> p(n + 1);
  for (size_t i = 0; i < n; ++i) p[i] = m[i].size(0);
  p[n] = m[n - 1].size(1);
  std::vector<std::vector<int64_t>> cost(n, std::vector<int64_t>(n, 0));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  for (size_t len = 1; len < n; ++len) {
    for (size_t i = 0; i + len < n; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<int64_t>::max();
      for (size_t k = i; k < j; ++k) {
        const int64_t q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
        if (q < cost[i][j]) cost[i][j] = q, split[i][j] = k;
      }
    }
  }
  auto product = [&](auto& self, size_t i, size_t j) -> Tensor {
    if (i == j) return m[i];
    return mm(self(self, i, split[i][j]), self(self, split[i][j] + 1, j));
  };
  return product(product, 0, n - 1);
}

}  // namespace

Tensor linalg_multi_dot(const TensorList& tensors) {
  TP_OP_ENTRY(linalg_multi_dot, tensors);
  const size_t n = tensors.size();
  TP_CHECK(n >= 2, "[linalg.multi_dot] expected at least 2 tensors but got ", n);
  for (size_t i = 0; i < n; ++i) {
    const bool end = i == 0 || i == n - 1;
    TP_CHECK(tensors[i].dim() == 2 || (end && tensors[i].dim() == 1), "[linalg.multi_dot] tensor ", i,
             end ? " must be 1D or 2D" : " must be 2D", " but got ", tensors[i].dim(), "D");
    check_same_dtype("linalg.multi_dot", tensors[0], tensors[i]);
  }
  // A vector at either end becomes a row or column; the matching dim is dropped at the end.
  TensorList matrices(tensors.begin(), tensors.end());
  if (matrices[0].dim() == 1) matrices[0] = unsqueeze(matrices[0], 0);
  if (matrices[n - 1].dim() == 1) matrices[n - 1] = unsqueeze(matrices[n - 1], 1);
  for (size_t i = 1; i < n; ++i)
    if (matrices[i - 1].size(1) != matrices[i].size(0)) fail_shapes("linalg.multi_dot", matrices[i - 1], matrices[i]);
  check_not_bool("linalg.multi_dot", matrices[0]);
  Tensor out = chain_product(matrices);
  if (tensors[n - 1].dim() == 1) out = squeeze(out, {1});
  if (tensors[0].dim() == 1) out = squeeze(out, {0});
  return out;
}

Tensor trace(const Tensor& t) {
  TP_OP_ENTRY(trace, t);
  if (t.dtype() == ScalarType::Bool) fail_unsupported_dtype("trace", t.dtype());  // before the shape, as in PyTorch
  TP_CHECK(t.dim() == 2, "[trace] expected a matrix, but got tensor with dim ", t.dim());
  return sum(diagonal(t, 0, 0, 1));
}

}  // namespace tp

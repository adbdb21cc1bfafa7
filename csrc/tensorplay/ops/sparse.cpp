// Sparse COO tensors (TensorImpl::sparse_coo): the constructor, the parts, and the ops that take
// them. Two ops record nodes of their own, the constructor and values(), which carry gradients
// between a sparse tensor and its values; everything else is a composite of dense ops on the
// indices and the values, so the values' gradients follow.

#include <algorithm>

#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

Shape shape_of(IntArrayRef sizes) { return Shape(sizes.begin(), sizes.end()); }

Tensor sparse_from(const Tensor& indices, const Tensor& values, IntArrayRef sizes, bool coalesced) {
  return Tensor(TensorImpl::sparse_coo(indices.impl_ptr(), values.impl_ptr(), shape_of(sizes), coalesced));
}

// The indices' rows, as advanced indices of the sparse dims of a dense tensor.
std::vector<std::optional<Tensor>> index_rows(const Tensor& indices) {
  std::vector<std::optional<Tensor>> rows;
  for (int64_t d = 0; d < indices.size(0); ++d) rows.emplace_back(select(indices, 0, d));
  return rows;
}

// dense + the entries (each value added at its index), in place or not. Without sparse dims every
// entry covers the whole tensor.
Tensor add_entries(const Tensor& dense, const Tensor& indices, const Tensor& values, bool in_place) {
  if (indices.size(0) == 0) {
    const Tensor total = sum(values, {0}, false, values.dtype());
    return in_place ? add_(dense, total) : add(dense, total);
  }
  return in_place ? index_put_(dense, index_rows(indices), values, true)
                  : index_put(dense, index_rows(indices), values, true);
}

// Each entry's position in the row-major order of the sparse dims, as one int64.
Tensor linear_keys(const Tensor& indices, IntArrayRef sizes) {
  Tensor keys = zeros({indices.size(1)}, ScalarType::Int64, indices.device());
  int64_t stride = 1;
  for (int64_t d = indices.size(0); d-- > 0;) {
    keys = add(keys, select(indices, 0, d), stride);
    stride *= sizes[d];
  }
  return keys;
}

struct Coalesced {
  Tensor indices, values;
  Tensor inverse;  // entry i of the input went to entry inverse[i] of the output
};

// Sorts the entries by index and sums the values of equal indices.
Coalesced coalesce_entries(const Tensor& indices, const Tensor& values, IntArrayRef sizes) {
  const int64_t nnz = indices.size(1);
  if (nnz == 0) return {indices, values, zeros({0}, ScalarType::Int64, indices.device())};
  Tensor keys = linear_keys(indices, sizes);
  Tensor order = argsort(keys, 0, false, /*stable=*/true);
  Tensor sorted = index_select(keys, 0, order);
  Tensor is_first = cat({ones({1}, ScalarType::Bool, keys.device()),
                         ne(narrow(sorted, 0, 1, nnz - 1), narrow(sorted, 0, 0, nnz - 1))});
  Tensor group = sub(cumsum(is_first, 0), Scalar(1));
  Tensor firsts = select(nonzero(is_first), 1, 0);
  Shape summed_sizes = shape_of(values.sizes());
  summed_sizes[0] = firsts.size(0);
  Tensor summed = index_put(zeros(summed_sizes, values.dtype(), values.device()), {group},
                            index_select(values, 0, order), /*accumulate=*/true);
  Tensor inverse = index_put(empty({nnz}, ScalarType::Int64, keys.device()), {order}, group);
  return {index_select(indices, 1, index_select(order, 0, firsts)), summed, inverse};
}

// The values of a gradient at `indices` (the constructor's backward): gathered from a dense one,
// summed from a sparse one's entries there (through coalescing both sets of entries together).
Tensor values_at(const Tensor& grad, const Tensor& indices, IntArrayRef sizes) {
  if (!grad.is_sparse()) return elements_at(grad, indices);
  Tensor grad_indices(grad.impl()->sparse_indices()), grad_values = sparse_values(grad);
  if (grad_indices.is_same(indices)) return grad_values;  // values()'s own gradient
  Shape missing = shape_of(grad_values.sizes());
  missing[0] = indices.size(1);
  Coalesced both = coalesce_entries(cat({grad_indices, indices}, 1),
                                    cat({grad_values, zeros(missing, grad_values.dtype(), grad_values.device())}),
                                    sizes);
  return index_select(both.values, 0, narrow(both.inverse, 0, grad_indices.size(1), indices.size(1)));
}

class SparseCooTensorBackward final : public autograd::Node {
 public:
  SparseCooTensorBackward(Tensor indices, IntArrayRef sizes) : indices_(std::move(indices)), sizes_(shape_of(sizes)) {}
  std::string name() const override { return "SparseCooTensorWithDimsAndTensorsBackward0"; }
  TensorList apply(TensorList&& grads) override { return {values_at(grads[0], indices_, sizes_)}; }

 private:
  Tensor indices_;
  Shape sizes_;
};

class ValuesBackward final : public autograd::Node {
 public:
  ValuesBackward(Tensor indices, IntArrayRef sizes, bool coalesced)
      : indices_(std::move(indices)), sizes_(shape_of(sizes)), coalesced_(coalesced) {}
  std::string name() const override { return "ValuesBackward0"; }
  TensorList apply(TensorList&& grads) override {
    return {sparse_coo_tensor_unsafe(indices_, grads[0], sizes_, coalesced_)};
  }

 private:
  Tensor indices_;
  Shape sizes_;
  bool coalesced_;
};

// A sparse matrix in compressed rows (a coalesced one's entries are sorted by row).
struct CompressedRows {
  Tensor rows, row_offsets, cols;  // rows and cols [nnz], row_offsets [rows + 1]: int64, contiguous
};

CompressedRows compressed_rows(const Tensor& indices, int64_t n) {
  const Tensor rows = contiguous(select(indices, 0, 0));
  const Tensor counts = index_put(zeros({n + 1}, ScalarType::Int64, indices.device()), {add(rows, Scalar(1))},
                                  ones({indices.size(1)}, ScalarType::Int64, indices.device()), /*accumulate=*/true);
  return {rows, cumsum(counts, 0), contiguous(select(indices, 0, 1))};
}

// a @ b or a^T @ b on the kernel, for a's parts (values and b of one dtype).
Tensor rows_mm(const CompressedRows& a, const Tensor& values, const Tensor& b, int64_t out_rows, bool transpose) {
  Tensor out = empty({out_rows, b.size(1)}, b.dtype(), b.device());
  backend(b.device()).sparse_rows_mm(out, a.row_offsets, a.cols, contiguous(values), contiguous(b), transpose);
  return out;
}

// The gradients of a sparse a's values and of a dense b through a @ b, over a's entries (row, col):
// grad_values[e] = <grad[row], conj(b[col])>, and grad_b = a^H @ grad, on the kernel.
class SparseMmBackward final : public autograd::Node {
 public:
  SparseMmBackward(CompressedRows a, const Tensor& values, const Tensor& b)
      : a_(std::move(a)), values_(values, false), b_(b, false) {}
  std::string name() const override { return "MmBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& grad = grads[0];
    const Tensor b = b_.unpack(*this);
    Tensor grad_values, grad_b;
    if (needs_input_grad(0))
      grad_values = sum(mul(index_select(grad, 0, a_.rows), conj(index_select(b, 0, a_.cols))), {1});
    if (needs_input_grad(1)) grad_b = rows_mm(a_, conj(values_.unpack(*this)), grad, b.size(0), /*transpose=*/true);
    return {grad_values, grad_b};
  }

 private:
  CompressedRows a_;
  autograd::SavedTensor values_, b_;
};

void check_sparse(const char* op, const Tensor& t) {
  TP_CHECK(t.is_sparse(), "[", op, "] expected a sparse COO tensor, but got a strided one");
}

}  // namespace

Tensor sparse_coo_tensor_unsafe(const Tensor& indices, const Tensor& values, IntArrayRef sizes, bool coalesced) {
  // The node keeps the indices the tensor stores (integers, never differentiable, so not detached),
  // by which it knows values()'s gradient (values_at).
  autograd::Record<SparseCooTensorBackward> record({&values}, indices, sizes);
  // At most one entry is coalesced whatever the caller knew (PyTorch marks it so too).
  return record.finish(sparse_from(indices, autograd::detach(values), sizes, coalesced || indices.size(1) <= 1));
}

Tensor sparse_coo_tensor(const Tensor& indices, const Tensor& values, IntArrayRef sizes, bool coalesced) {
  TP_CHECK(indices.dtype() == ScalarType::Int64, "[sparse_coo_tensor] indices must be an int64 tensor, got ",
           name(indices.dtype()));
  TP_CHECK(indices.dim() == 2, "[sparse_coo_tensor] indices must be sparse_dim x nnz, but got: ",
           to_string(indices.sizes()));
  TP_CHECK(values.dim() >= 1, "[sparse_coo_tensor] values must have at least one dim (nnz first), but got a 0-dim "
           "tensor");
  TP_CHECK(indices.device() == values.device(), "[sparse_coo_tensor] expected indices and values on the same device, "
           "but got ", indices.device().str(), " and ", values.device().str());
  const int64_t sparse_dim = indices.size(0), dense_dim = values.dim() - 1;
  TP_CHECK(static_cast<int64_t>(sizes.size()) == sparse_dim + dense_dim,
           "[sparse_coo_tensor] 'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = ", sizes.size(),
           ", sparse_dim = ", sparse_dim, ", dense_dim = ", dense_dim);
  TP_CHECK(indices.size(1) == values.size(0), "[sparse_coo_tensor] indices and values must have the same number of "
           "entries (nnz), but got ", indices.size(1), " and ", values.size(0));
  for (int64_t d = 0; d < dense_dim; ++d)
    TP_CHECK(values.size(d + 1) == sizes[sparse_dim + d], "[sparse_coo_tensor] values has incorrect size, expected ",
             to_string(sizes.subspan(sparse_dim)), " after the nnz dim, got ", to_string(values.sizes()));
  for (int64_t s : sizes) TP_CHECK(s >= 0, "[sparse_coo_tensor] negative size in ", to_string(sizes));
  // Always checked (PyTorch checks only on request): an index out of range would be read later.
  if (indices.numel() > 0 && indices.device().is_cpu()) {
    const Tensor low = min(indices, 1).first, high = max(indices, 1).first;
    for (int64_t d = 0; d < sparse_dim; ++d) {
      const int64_t lo = select(low, 0, d).item().to<int64_t>(), hi = select(high, 0, d).item().to<int64_t>();
      TP_CHECK_INDEX(lo >= 0, "[sparse_coo_tensor] found negative index ", lo, " for dim ", d);
      TP_CHECK_INDEX(hi < sizes[d], "[sparse_coo_tensor] size is inconsistent with indices: for dim ", d,
                     ", size is ", sizes[d], " but found index ", hi);
    }
  }
  return sparse_coo_tensor_unsafe(indices, values, sizes, coalesced);
}

Tensor sparse_indices(const Tensor& t) {
  check_sparse("_indices", t);
  return Tensor(t.impl()->sparse_indices());  // the stored tensor, as PyTorch's alias shows it
}

Tensor sparse_values(const Tensor& t) {
  check_sparse("_values", t);
  Tensor indices(t.impl()->sparse_indices());
  autograd::Record<ValuesBackward> record({&t}, indices, t.sizes(), t.impl()->is_coalesced());
  return record.finish(autograd::detach(Tensor(t.impl()->sparse_values())));
}

Tensor coalesce(const Tensor& t) {
  check_sparse("coalesce", t);
  if (t.impl()->is_coalesced()) return t;
  Coalesced c = coalesce_entries(sparse_indices(t), sparse_values(t), t.sizes());
  return sparse_coo_tensor_unsafe(c.indices, c.values, t.sizes(), true);
}

Tensor to_dense(const Tensor& t, OptionalDType dtype) {
  if (!t.is_sparse()) return dtype ? to(t, *dtype) : t;
  Tensor values = sparse_values(t);
  if (dtype) values = to(values, *dtype);
  return add_entries(zeros(t.sizes(), values.dtype(), t.device()), sparse_indices(t), values, false);
}

Tensor sparse_add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  TP_CHECK(!a.is_sparse() || b.is_sparse(), "[add] add(sparse, dense) is not supported. Use add(dense, sparse) "
           "instead.");
  TP_CHECK(std::ranges::equal(a.sizes(), b.sizes()), "[add] a sparse tensor is added only to a tensor of its size, "
           "got ", to_string(a.sizes()), " and ", to_string(b.sizes()));
  const ScalarType dtype = result_type(a, b);
  Tensor values = to(sparse_values(b), dtype);
  if (!(alpha.is_integral() && alpha.to<int64_t>() == 1)) values = mul(values, alpha);
  if (!a.is_sparse()) return add_entries(to(a, dtype), sparse_indices(b), values, false);
  TP_CHECK(sparse_indices(a).size(0) == sparse_indices(b).size(0), "[add] the sparse tensors have ",
           sparse_indices(a).size(0), " and ", sparse_indices(b).size(0), " sparse dims");
  if (sparse_indices(a).is_same(sparse_indices(b)))  // one set of entries (two gradients of one tensor, say)
    return sparse_coo_tensor_unsafe(sparse_indices(a), add(to(sparse_values(a), dtype), values), a.sizes(),
                                    a.impl()->is_coalesced());
  Tensor sum = sparse_coo_tensor_unsafe(cat({sparse_indices(a), sparse_indices(b)}, 1),
                                        cat({to(sparse_values(a), dtype), values}), a.sizes(), false);
  // The sum of two coalesced tensors is coalesced, as in PyTorch.
  return a.impl()->is_coalesced() && b.impl()->is_coalesced() ? coalesce(sum) : sum;
}

Tensor sparse_add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TP_CHECK(!self.is_sparse(), "[add_] tensorplay adds in place only into a dense tensor; use a + b for two sparse "
           "ones");
  TP_CHECK(std::ranges::equal(self.sizes(), other.sizes()), "[add_] a sparse tensor is added only to a tensor of "
           "its size, got ", to_string(self.sizes()), " and ", to_string(other.sizes()));
  const ScalarType dtype = result_type(self, other);
  TP_CHECK(can_cast(dtype, self.dtype()), "[add_] result type ", name(dtype), " can't be cast to the desired output "
           "type ", name(self.dtype()));
  Tensor values = sparse_values(other);
  if (!(alpha.is_integral() && alpha.to<int64_t>() == 1)) values = mul(values, alpha);
  return add_entries(self, sparse_indices(other), to(values, self.dtype()), true);
}

Tensor sparse_leaf_gradient(const Tensor& grad, const Tensor& variable) {
  if (!variable.is_sparse() || variable.impl()->is_coalesced() || !grad.is_sparse() ||
      !sparse_indices(grad).is_same(sparse_indices(variable)))
    return grad;
  const Tensor indices = sparse_indices(grad), values = sparse_values(grad);
  Coalesced summed = coalesce_entries(indices, values, grad.sizes());
  Coalesced counts = coalesce_entries(indices, ones({indices.size(1)}, values.dtype(), values.device()), grad.sizes());
  Tensor count = counts.values;
  for (int64_t d = 1; d < values.dim(); ++d) count = unsqueeze(count, -1);
  return sparse_coo_tensor_unsafe(summed.indices, div(summed.values, count), grad.sizes(), true);
}

Tensor elements_at(const Tensor& dense, const Tensor& indices) { return index(dense, index_rows(indices)); }

Tensor sparse_to(const Tensor& t, Device device, ScalarType dtype, bool copy) {
  return sparse_coo_tensor_unsafe(to(sparse_indices(t), device, {}, copy), to(sparse_values(t), device, dtype, copy),
                                  t.sizes(), t.impl()->is_coalesced());
}

Tensor sparse_mm(const Tensor& a, const Tensor& b) {
  TP_CHECK(a.dim() == 2 && sparse_indices(a).size(0) == 2, "[mm] a sparse first operand must be a matrix with two "
           "sparse dims, got sizes ", to_string(a.sizes()));
  TP_CHECK(!b.is_sparse() && b.dim() == 2, "[mm] the second operand of a sparse mm must be a dense matrix, got a ",
           b.is_sparse() ? "sparse" : "dense", " ", b.dim(), "-D tensor");
  TP_CHECK(a.size(1) == b.size(0), "[mm] mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
           " and ", b.size(0), "x", b.size(1), ")");
  TP_CHECK(a.dtype() == b.dtype(), "[mm] expected both operands to have the same dtype, but got ", name(a.dtype()),
           " and ", name(b.dtype()));
  TP_CHECK(b.dtype() != ScalarType::Bool, "[mm] \"addmm_sparse_dense\" not implemented for 'Bool'");
  const Tensor coalesced = coalesce(a), values = sparse_values(coalesced);
  CompressedRows rows = compressed_rows(sparse_indices(coalesced), a.size(0));
  autograd::Record<SparseMmBackward> record({&values, &b}, rows, values, b);
  return record.finish(rows_mm(rows, values, b, a.size(0), /*transpose=*/false));
}

Tensor sparse_sum(const Tensor& t, IntArrayRef dims, bool keepdim, OptionalDType dtype) {
  Tensor values = sparse_values(t);
  if (dims.empty()) return sum(values, {}, false, dtype);
  const Tensor indices = sparse_indices(t);
  const int64_t sparse_dim = indices.size(0);
  std::vector<bool> summed(t.dim(), false);
  for (int64_t d : dims) summed[wrap_dim("sum", d, t.dim())] = true;
  std::vector<int64_t> dense_dims;  // of the values, whose dim 0 runs over the entries
  for (int64_t d = sparse_dim; d < t.dim(); ++d)
    if (summed[d]) dense_dims.push_back(d - sparse_dim + 1);
  values = dense_dims.empty() ? (dtype ? to(values, *dtype) : values) : sum(values, dense_dims, keepdim, dtype);
  TensorList rows;  // of the result's indices
  Shape sizes;
  bool every_sparse_dim = true;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < sparse_dim && !summed[d]) rows.push_back(select(indices, 0, d));
    if (d < sparse_dim && summed[d] && keepdim) rows.push_back(zeros_like(select(indices, 0, d)));
    if (!summed[d] || keepdim) sizes.push_back(summed[d] ? 1 : t.size(d));
    every_sparse_dim &= d >= sparse_dim || summed[d];
  }
  if (every_sparse_dim) return reshape(sum(values, {0}), sizes);
  return coalesce(sparse_coo_tensor_unsafe(stack(rows), values, sizes, false));
}

Tensor dense_sparse_mm(const Tensor& a, const Tensor& b) {
  TP_CHECK(a.dim() == 2 && !a.is_sparse(), "[mm] the first operand of a product with a sparse second one must be a "
           "dense matrix, got a ", a.is_sparse() ? "sparse" : "dense", " ", a.dim(), "-D tensor");
  return t(sparse_mm(t(b), t(a)));
}

Tensor sparse_transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  const Tensor indices = sparse_indices(t);
  const int64_t sparse_dim = indices.size(0);
  Shape sizes = shape_of(t.sizes());
  std::swap(sizes[dim0], sizes[dim1]);
  if (dim0 < sparse_dim && dim1 < sparse_dim) {
    TensorList rows;
    for (int64_t d = 0; d < sparse_dim; ++d) rows.push_back(select(indices, 0, d == dim0 ? dim1 : d == dim1 ? dim0 : d));
    return sparse_coo_tensor_unsafe(stack(rows), sparse_values(t), sizes, dim0 == dim1 && t.impl()->is_coalesced());
  }
  TP_CHECK(dim0 >= sparse_dim && dim1 >= sparse_dim, "[transpose] transpose(): a sparse dim (", std::min(dim0, dim1),
           ") and a dense dim (", std::max(dim0, dim1), ") cannot be swapped");
  return sparse_coo_tensor_unsafe(indices, transpose(sparse_values(t), dim0 - sparse_dim + 1, dim1 - sparse_dim + 1),
                                  sizes, t.impl()->is_coalesced());
}

Tensor sparse_zeros_like(const Tensor& t, ScalarType dtype, Device device) {
  const int64_t sparse_dim = sparse_indices(t).size(0);
  Shape value_sizes{0};
  for (int64_t d = sparse_dim; d < t.dim(); ++d) value_sizes.push_back(t.size(d));
  return sparse_coo_tensor_unsafe(empty({sparse_dim, 0}, ScalarType::Int64, device), empty(value_sizes, dtype, device),
                                  t.sizes(), true);
}

}  // namespace tp

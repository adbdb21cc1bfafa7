#include "tensorplay/ops/matrix_batches.h"

namespace tp::matrix_batches {

void check_matrices(const char* op, const Tensor& A, const char* label) {
  TP_CHECK(A.dim() >= 2, "[", op, "] The input tensor ", label, " must have at least 2 dimensions.");
}

void check_square(const char* op, const Tensor& A, const char* label) {
  check_matrices(op, A, label);
  TP_CHECK(A.size(-1) == A.size(-2), "[", op, "] ", label, " must be batches of square matrices, but they are ",
           A.size(-2), " by ", A.size(-1), " matrices");
}

Shape batch_shape(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end() - 2); }

int64_t count(IntArrayRef batch) {
  int64_t n = 1;
  for (int64_t s : batch) n *= s;
  return n;
}

Shape with_matrix(IntArrayRef batch, int64_t rows, int64_t cols) {
  Shape sizes(batch.begin(), batch.end());
  sizes.push_back(rows);
  sizes.push_back(cols);
  return sizes;
}

Shape with_vector(IntArrayRef batch, int64_t size) {
  Shape sizes(batch.begin(), batch.end());
  sizes.push_back(size);
  return sizes;
}

Tensor column_major(const Tensor& t, IntArrayRef batch) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  Tensor flat = reshape(expand(t, with_matrix(batch, rows, cols)), {count(batch), rows, cols});
  return transpose(clone(transpose(flat, 1, 2), MemoryFormat::Contiguous), 1, 2);  // never t's own memory
}

Tensor empty_column_major(int64_t count, int64_t rows, int64_t cols, const Tensor& like) {
  return transpose(empty({count, cols, rows}, like.dtype(), like.device()), 1, 2);
}

Tensor triangle(const Tensor& t, bool upper, int64_t k) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  Tensor r = unsqueeze(arange(0, rows, 1, ScalarType::Int64, t.device()), 1);
  Tensor c = unsqueeze(arange(0, cols, 1, ScalarType::Int64, t.device()), 0);
  Tensor offset = sub(c, r);
  Tensor keep = upper ? ge(offset, k) : le(offset, k);
  return where(keep, t, zeros({}, t.dtype(), t.device()));
}

}  // namespace tp::matrix_batches

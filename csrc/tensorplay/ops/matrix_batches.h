#pragma once
// What the linear algebra ops (factorization.cpp, spectral.cpp) share: PyTorch's checks of their
// matrices, and the batches of column-major matrices that the backend's LAPACK kernels read and
// write (dispatch/backend.h).

#include <string>

#include "tensorplay/ops/ops.h"

namespace tp::matrix_batches {

// (A dtype LAPACK lacks is refused by the kernel, after these checks, as in PyTorch.)
void check_matrices(const char* op, const Tensor& A, const char* label = "A");
void check_square(const char* op, const Tensor& A, const char* label = "A");

// The batch dims of t's matrices, their number of matrices, and a shape of that batch.
Shape batch_shape(const Tensor& t);
int64_t count(IntArrayRef batch);
Shape with_matrix(IntArrayRef batch, int64_t rows, int64_t cols);
Shape with_vector(IntArrayRef batch, int64_t size);

// t's matrices (broadcast to `batch`) as one fresh column-major batch [count, rows, cols], which a
// kernel may overwrite.
Tensor column_major(const Tensor& t, IntArrayRef batch);
// A fresh [count, rows, cols] column-major batch for a kernel to fill.
Tensor empty_column_major(int64_t count, int64_t rows, int64_t cols, const Tensor& like);

inline Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
// The conjugate transpose (the transpose of a real t).
inline Tensor mH(const Tensor& t) { return conj(mT(t)); }

// The lower (upper) triangle of the last two dims from diagonal k on, the rest zero.
Tensor triangle(const Tensor& t, bool upper, int64_t k = 0);

// Raises LinAlgError (or `kind`) for the first matrix whose info is positive, with PyTorch's batch
// prefix.
template <class Message>
void check_infos(const char* op, const Tensor& info, bool batched, const Message& message,
                 ErrorKind kind = ErrorKind::LinAlg) {
  if (!info.device().is_cpu()) return;
  const int* codes = static_cast<const int*>(info.data_ptr());
  for (int64_t i = 0; i < info.numel(); ++i)
    if (codes[i] > 0) {
      std::string where = batched ? "(Batch element " + std::to_string(i) + "): " : "";
      TP_CHECK_KIND(kind, false, "[", op, "] ", where, message(codes[i]));
    }
}

}  // namespace tp::matrix_batches

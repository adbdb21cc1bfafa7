#pragma once
// The public ops of tensorplay, with PyTorch's names, argument order and semantics. Python binds
// these directly. Families live in one file each: factory, cast, shape, indexing, unary,
// binary, reduce, linalg.

#include <array>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorplay/core/generator.h"
#include "tensorplay/core/tensor.h"
#include "tensorplay/core/type_promotion.h"
#include "tensorplay/dispatch/binary_ops.h"
#include "tensorplay/dispatch/unary_ops.h"

namespace tp {

using OptionalDType = std::optional<ScalarType>;

// ---- factory.cpp ----
Tensor empty(IntArrayRef sizes, OptionalDType dtype = {}, Device device = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, OptionalDType dtype = {}, Device device = {});
Tensor zeros(IntArrayRef sizes, OptionalDType dtype = {}, Device device = {});
Tensor ones(IntArrayRef sizes, OptionalDType dtype = {}, Device device = {});
// Without a dtype, the fill value decides it: bool, int64 or the default float dtype.
Tensor full(IntArrayRef sizes, const Scalar& value, OptionalDType dtype = {}, Device device = {});
// t's shape and layout (format Preserve) or format's, t's dtype and device unless given.
Tensor empty_like(const Tensor& t, OptionalDType dtype = {}, std::optional<Device> device = {},
                  MemoryFormat format = MemoryFormat::Preserve);
Tensor zeros_like(const Tensor& t, OptionalDType dtype = {}, std::optional<Device> device = {});
Tensor ones_like(const Tensor& t, OptionalDType dtype = {}, std::optional<Device> device = {});
Tensor full_like(const Tensor& t, const Scalar& value, OptionalDType dtype = {}, std::optional<Device> device = {});
// A 0-dim tensor holding a number.
Tensor scalar_tensor(const Scalar& value, OptionalDType dtype = {}, Device device = {});
// A 1-D tensor of the values, as torch.tensor([...]): floating-point values make the default dtype,
// integers int64 and bools bool, unless dtype is given. `tensor({1.5, 2.0})`, `tensor({0, 2, 1})`.
Tensor tensor(std::span<const Scalar> values, OptionalDType dtype = {}, Device device = {});
template <typename T>
  requires std::is_arithmetic_v<T>
Tensor tensor(std::initializer_list<T> values, OptionalDType dtype = {}, Device device = {}) {
  const std::vector<Scalar> scalars(values.begin(), values.end());
  return tensor(std::span<const Scalar>(scalars), dtype, device);
}
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, OptionalDType dtype = {},
              Device device = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, OptionalDType dtype = {}, Device device = {});
Tensor eye(int64_t n, std::optional<int64_t> m = {}, OptionalDType dtype = {}, Device device = {});
Tensor rand(IntArrayRef sizes, OptionalDType dtype = {}, Device device = {}, Generator* gen = nullptr);
Tensor randn(IntArrayRef sizes, OptionalDType dtype = {}, Device device = {}, Generator* gen = nullptr);
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, OptionalDType dtype = {}, Device device = {},
               Generator* gen = nullptr);
Tensor randperm(int64_t n, OptionalDType dtype = {}, Device device = {}, Generator* gen = nullptr);
Tensor uniform_(const Tensor& t, double from = 0, double to = 1, Generator* gen = nullptr);
Tensor normal_(const Tensor& t, double mean = 0, double std = 1, Generator* gen = nullptr);
void manual_seed(uint64_t seed);

// ---- complex.cpp ----
// real is a view (a real tensor's real part is itself); imag is a view of a complex tensor's.
Tensor real(const Tensor& t);
Tensor imag(const Tensor& t);
Tensor complex(const Tensor& re, const Tensor& im);
Tensor polar(const Tensor& abs, const Tensor& angle);
// Computed, not a lazy view: is_conj() is never true.
Tensor conj(const Tensor& t);
Tensor angle(const Tensor& t);

// ---- cast.cpp ----
// Returns t itself when nothing changes (unless copy).
Tensor to(const Tensor& t, ScalarType dtype, bool copy = false);
Tensor to(const Tensor& t, Device device, OptionalDType dtype = {}, bool copy = false);
// t itself when it is already laid out in format.
Tensor contiguous(const Tensor& t, MemoryFormat format = MemoryFormat::Contiguous);
Tensor clone(const Tensor& t, MemoryFormat format = MemoryFormat::Preserve);
// Copies src (broadcast to self's shape, converting its dtype) into self.
Tensor copy_(const Tensor& self, const Tensor& src);
Tensor fill_(const Tensor& self, const Scalar& value);
Tensor zero_(const Tensor& self);
// Whether a value of dtype `from` may be written into a tensor of dtype `to` by an in-place op.
bool can_cast(ScalarType from, ScalarType to);

// ---- shape.cpp: views share storage with their input ----
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset = {});
// Gives self new sizes, laid out in format, in place (x.resize_(2, 3)): the storage grows when it
// is too small and keeps its values; the values of new elements are undefined.
Tensor resize_(const Tensor& self, IntArrayRef sizes, MemoryFormat format = MemoryFormat::Contiguous);
// A uint8 tensor over every byte of t's storage (what untyped_storage() shows).
Tensor storage_bytes(const Tensor& t);
// Makes self a window onto source's storage: dtype self's own, geometry as given (Tensor.set_).
Tensor set_(const Tensor& self, const Tensor& source, int64_t storage_offset, IntArrayRef sizes, IntArrayRef strides);
Tensor view(const Tensor& t, IntArrayRef sizes);
// The same bytes read as another dtype of the same size (x.view(tensorplay.int16)).
Tensor view_dtype(const Tensor& t, ScalarType dtype);
// A complex tensor as pairs of floats along a new last dim, and back.
Tensor view_as_real(const Tensor& t);
Tensor view_as_complex(const Tensor& t);
Tensor reshape(const Tensor& t, IntArrayRef sizes);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& t);  // 2-D transpose (0-D and 1-D unchanged)
Tensor movedim(const Tensor& t, int64_t source, int64_t destination);
Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination);
Tensor expand(const Tensor& t, IntArrayRef sizes);
Tensor broadcast_to(const Tensor& t, IntArrayRef sizes);
TensorList broadcast_tensors(const TensorList& tensors);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, IntArrayRef dims);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
// The diagonal of the (dim1, dim2) planes, as a view whose last dim it becomes.
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1);
TensorList split(const Tensor& t, int64_t split_size, int64_t dim = 0);
TensorList split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim = 0);
TensorList chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
TensorList unbind(const Tensor& t, int64_t dim = 0);
// ---- copies ----
Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
Tensor repeat(const Tensor& t, IntArrayRef repeats);
Tensor flip(const Tensor& t, IntArrayRef dims);

// ---- indexing.cpp ----
// Advanced indexing: one optional index tensor per leading dim (int64 or bool); None keeps the dim.
Tensor index(const Tensor& t, const std::vector<std::optional<Tensor>>& indices);
Tensor index_put_(const Tensor& t, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                  bool accumulate = false);
Tensor index_put(const Tensor& t, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value);
Tensor masked_fill_(const Tensor& t, const Tensor& mask, const Scalar& value);
Tensor masked_fill_(const Tensor& t, const Tensor& mask, const Tensor& value);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b);
Tensor nonzero(const Tensor& t);
// self with the slices of source written at index along dim.
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);

// ---- unary.cpp ----
// The rows of dispatch/unary_ops.h.
#define TP_DECLARE_UNARY(name, ...) Tensor name(const Tensor& t);
TP_UNARY_OPS(TP_DECLARE_UNARY)
#undef TP_DECLARE_UNARY
#define TP_DECLARE_UNARY_(name, ...) Tensor name##_(const Tensor& t);
TP_UNARY_OPS(TP_DECLARE_UNARY_)
#undef TP_DECLARE_UNARY_
Tensor round(const Tensor& t, int64_t decimals = 0);
Tensor round_(const Tensor& t, int64_t decimals = 0);
// round(x, decimals=d), PyTorch's other overload: floating dtypes only, even for d = 0.
Tensor round_decimals(const Tensor& t, int64_t decimals);
Tensor round_decimals_(const Tensor& t, int64_t decimals);
Tensor gelu(const Tensor& t, std::string_view approximate = "none");
Tensor softplus(const Tensor& t, double beta = 1, double threshold = 20);
Tensor nan_to_num(const Tensor& t, std::optional<double> nan = {}, std::optional<double> posinf = {},
                  std::optional<double> neginf = {});
Tensor nan_to_num_(const Tensor& t, std::optional<double> nan = {}, std::optional<double> posinf = {},
                   std::optional<double> neginf = {});
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor clamp(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor clamp_(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor clamp_(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max);

// ---- binary.cpp ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);  // b - alpha * a
Tensor add_(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add_(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub_(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub_(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
// rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode = {});
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode = {});
Tensor div_(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode = {});
Tensor div_(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode = {});
Tensor pow(const Scalar& base, const Tensor& exponent);

#define TP_DECLARE_BINARY(op, ...)                \
  Tensor op(const Tensor& a, const Tensor& b);    \
  Tensor op(const Tensor& a, const Scalar& b);    \
  Tensor op##_(const Tensor& a, const Tensor& b); \
  Tensor op##_(const Tensor& a, const Scalar& b);
TP_BINARY_OPS(TP_DECLARE_BINARY)  // dispatch/binary_ops.h
#undef TP_DECLARE_BINARY
// The gradient through relu and threshold: 0 where self <= threshold, grad elsewhere, in one pass.
Tensor threshold_backward(const Tensor& grad, const Tensor& self, const Scalar& threshold);
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate = "none");

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcmul_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor lerp_(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp_(const Tensor& self, const Tensor& end, const Tensor& weight);

// ---- reduce.cpp: `dims` empty means every dim ----
Tensor sum(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false, OptionalDType dtype = {});
// Sums a broadcast tensor back down to `shape` (the gradient of expand).
Tensor sum_to_size(const Tensor& t, IntArrayRef shape);
Tensor mean(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false, OptionalDType dtype = {});
Tensor prod(const Tensor& t, std::optional<int64_t> dim = {}, bool keepdim = false, OptionalDType dtype = {});
Tensor amax(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor max(const Tensor& t);
Tensor min(const Tensor& t);
std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = {}, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = {}, bool keepdim = false);
Tensor var(const Tensor& t, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
Tensor norm(const Tensor& t, double p = 2, IntArrayRef dims = {}, bool keepdim = false);
// linalg.vector_norm / linalg.matrix_norm; ord is a number ("fro" for the Frobenius norm).
Tensor linalg_vector_norm(const Tensor& t, double ord = 2, IntArrayRef dims = {}, bool keepdim = false,
                          OptionalDType dtype = {});
Tensor linalg_matrix_norm(const Tensor& t, double ord, IntArrayRef dims = {-2, -1}, bool keepdim = false,
                          OptionalDType dtype = {});
Tensor linalg_matrix_norm(const Tensor& t, std::string_view ord = "fro", IntArrayRef dims = {-2, -1},
                          bool keepdim = false, OptionalDType dtype = {});
// Scales each slice along dim whose p-norm exceeds maxnorm down to maxnorm.
Tensor renorm(const Tensor& t, double p, int64_t dim, double maxnorm);
Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim = false);
Tensor all(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor any(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& t, int64_t dim, OptionalDType dtype = {});
Tensor cumprod(const Tensor& t, int64_t dim, OptionalDType dtype = {});
Tensor softmax(const Tensor& t, int64_t dim, OptionalDType dtype = {});
Tensor log_softmax(const Tensor& t, int64_t dim, OptionalDType dtype = {});

// ---- sort.cpp: values and int64 indices along a dim; NaN sorts above every number ----
std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor msort(const Tensor& t);  // sort along dim 0, values only
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);

// ---- linalg.cpp, einsum.cpp ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor vdot(const Tensor& a, const Tensor& b);
// beta * self + alpha * (mat @ vec), (vec1 outer vec2), (sum over the batch of batch1[i] @ batch2[i]).
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
            const Scalar& alpha = 1);
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
// Contracts dims_a of a with dims_b of b.
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
Tensor einsum(std::string_view equation, const TensorList& operands);
// The cross product along dim, which must have size 3; without dim, the first such dim.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = {});
// linalg.vecdot: the dot product of the vectors along dim, broadcasting the rest.
Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1);
// linalg.multi_dot: the product of a chain of matrices (the first and last may be vectors).
Tensor linalg_multi_dot(const TensorList& tensors);
Tensor trace(const Tensor& t);

// ---- distance.cpp ----
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// The p-norm of a - b over all elements.
Tensor dist(const Tensor& a, const Tensor& b, double p = 2);
// [..., P, M] and [..., R, M] -> the [..., P, R] p-norm distances between their rows.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2);
// [N, M] -> the N (N - 1) / 2 distances between distinct rows, row-major over i < j.
Tensor pdist(const Tensor& x, double p = 2);

// ---- rnn.cpp: one time step; biases are optional ----
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
// hx: (h, c); returns (h', c').
std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const TensorList& hx, const Tensor& w_ih, const Tensor& w_hh,
                                    const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
// ---- factorization.cpp: LU, Cholesky, QR and the solves on them (torch.linalg's names) ----
// Real or complex matrices (float32, float64, complex64, complex128). Results are column-major, as
// LAPACK leaves them and as PyTorch returns them.
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot = true, bool check_errors = false);
Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false);
// A = L D L^T of symmetric matrices (A = L D L^H of Hermitian ones where hermitian; their lower
// triangles read), Bunch-Kaufman pivoted: LD holds L below the diagonal and D's blocks, pivots
// LAPACK's; no derivative, as in PyTorch.
std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& A, bool hermitian = false,
                                                        bool check_errors = false);
Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian = false);
// B: [..., n, k], or a vector [..., n] (PyTorch's rule, for left = true). _ex returns LAPACK's
// info per matrix (> 0: singular) instead of raising for it.
std::pair<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                          bool check_errors = false);
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left = true);
std::pair<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper = false, bool check_errors = false);
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                               bool unitriangular = false);
// QR (A = Q R): LAPACK's geqrf (R above the diagonal, Householder reflectors below, and their
// scales), and linalg.qr's Q and R for mode "reduced", "complete" or "r" (Q empty).
std::pair<Tensor, Tensor> geqrf(const Tensor& A);
std::pair<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode = "reduced");

// ---- spectral.cpp: the SVD and the Hermitian and general eigendecompositions ----
// U, S (descending, real) and Vh with A = U diag(S) Vh; all singular vectors where full_matrices.
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices = true);
Tensor linalg_svdvals(const Tensor& A);
// The eigenvalues (ascending, real) and, where compute_v, the eigenvectors (columns) of the
// Hermitian A, of which the triangle named by `upper` is read.
std::pair<Tensor, Tensor> linalg_eigh(const Tensor& A, bool upper = false, bool compute_v = true);
// Eigenvalues and right eigenvectors (columns of norm 1) of any square A, complex; values alone
// without compute_v.
std::pair<Tensor, Tensor> linalg_eig(const Tensor& A, bool compute_v = true);
// The row order of the pivots of an LU factorization of `rows` rows: A's row i is row perm[i]
// of L U; [..., rows] int64.
Tensor lu_permutation(const Tensor& pivots, int64_t rows);

// ---- fft.cpp: the discrete Fourier transforms over dims (PyTorch's _fft_c2c, _fft_r2c, _fft_c2r) ----
// normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n, for n the product of the signal's sizes along dims.
// c2c: complex to complex, forward (e^-2 pi i jk/n) or backward. r2c: real to its forward
// transform, only the first n/2 + 1 entries along dims.back() where onesided. c2r: such a half
// spectrum to the real backward transform, last_dim_size long along dims.back().
Tensor fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward);
Tensor fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided);
Tensor fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size);

// ---- special.cpp: torch.special's functions with kernels (dispatch/special_functions.h) ----
// function(x) or function(x, n), by its torch.special name; x and n of one dtype, float32 or float64.
Tensor special_function(std::string_view function, const Tensor& x, const std::optional<Tensor>& n = {});

// One LSTM layer in one direction over a packed sequence (see rnn.cpp): input_gates is
// input @ w_ih^T plus both biases, [sum(batch_sizes), 4 * hidden]; h0 and c0 are
// [batch_sizes[0], hidden]. Returns (output [sum(batch_sizes), hidden], h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& input_gates, IntArrayRef batch_sizes, const Tensor& h0,
                                              const Tensor& c0, const Tensor& w_hh, bool reverse);

// ---- conv.cpp: NCHW activations, OIHW weights; 1 or 2 values per spatial dim ----
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
// stride empty means the kernel size.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                  IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                                                  bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true, std::optional<int64_t> divisor_override = {});
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

// ---- nn.cpp ----
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {});
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const std::optional<Tensor>& bias = {});
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);
// Updates running_mean/running_var in place when training and they are given.
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, bool training = false, double momentum = 0.1,
                  double eps = 1e-5);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-5);
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-5);
// With `sparse`, the weight's gradient is a sparse COO tensor with one entry per lookup.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx = {},
                 bool sparse = false);
Tensor one_hot(const Tensor& input, int64_t num_classes = -1);
// padding: (left, right) per dim from the last; mode "constant", "reflect" or "replicate".
Tensor pad(const Tensor& input, IntArrayRef padding, std::string_view mode = "constant", double value = 0);
// pad's three modes, each its own op because autocast treats them differently.
Tensor constant_pad_nd(const Tensor& input, IntArrayRef padding, double value = 0);
Tensor reflection_pad(const Tensor& input, IntArrayRef padding);
Tensor replication_pad(const Tensor& input, IntArrayRef padding);
// weight: one slope, or one per channel (dim 1 of input).
Tensor prelu(const Tensor& input, const Tensor& weight);
// 4-D input; size is the output (H, W); mode "nearest" or "bilinear".
Tensor interpolate(const Tensor& input, IntArrayRef size, std::optional<std::array<double, 2>> scale_factor = {},
                   std::string_view mode = "nearest", bool align_corners = false);
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0,
                                    bool is_causal = false, std::optional<double> scale = {}, Generator* gen = nullptr);

// ---- loss.cpp: reduction is "mean", "sum" or "none" ----
Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean", double beta = 1);
Tensor huber_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean", double delta = 1);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                std::string_view reduction = "mean", int64_t ignore_index = -100);
// target: class indices, or class probabilities of input's shape.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                     std::string_view reduction = "mean", int64_t ignore_index = -100, double label_smoothing = 0);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                            std::string_view reduction = "mean");
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = {},
                                        const std::optional<Tensor>& pos_weight = {},
                                        std::string_view reduction = "mean");
// reduction may also be "batchmean".
Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction = "mean", bool log_target = false);

// ---- sparse.cpp: sparse COO tensors (TensorImpl::sparse_coo) ----
// indices int64 [sparse_dim, nnz], values [nnz, dense sizes...]; checked (indices within sizes).
Tensor sparse_coo_tensor(const Tensor& indices, const Tensor& values, IntArrayRef sizes, bool coalesced = false);
// Unchecked, for parts known to agree: `coalesced` must hold if true.
Tensor sparse_coo_tensor_unsafe(const Tensor& indices, const Tensor& values, IntArrayRef sizes, bool coalesced);
// Tensor._indices() and Tensor._values(): the parts as stored (values() carries the gradient).
Tensor sparse_indices(const Tensor& t);
Tensor sparse_values(const Tensor& t);
// Sorted, unique indices; t itself when it is coalesced already.
Tensor coalesce(const Tensor& t);
// A dense tensor (t itself when it is dense, unless dtype asks for another).
Tensor to_dense(const Tensor& t, OptionalDType dtype = {});
// What add, add_, to and mm do when an operand is sparse: sparse + sparse is sparse (the entries of
// both), dense + sparse is dense; sparse @ dense is dense.
Tensor sparse_add(const Tensor& a, const Tensor& b, const Scalar& alpha);
Tensor sparse_add_(const Tensor& self, const Tensor& other, const Scalar& alpha);
Tensor sparse_to(const Tensor& t, Device device, ScalarType dtype, bool copy);
// The elements of a dense tensor at sparse indices (int64 [sparse_dim, nnz]): [nnz, its other sizes].
Tensor elements_at(const Tensor& dense, const Tensor& indices);
// The gradient of a sparse leaf as its .grad holds it. One that came back through values() holds an
// entry for each entry the leaf stores; where the leaf stores an index more than once, each of those
// holds the gradient at that index (an element is the sum of its entries), so .grad says it once.
Tensor sparse_leaf_gradient(const Tensor& grad, const Tensor& variable);
Tensor sparse_mm(const Tensor& a, const Tensor& b);
// The sum over dims (all: a dense 0-dim tensor): dense where every sparse dim is summed (unless
// keepdim), a coalesced sparse tensor of the rest otherwise.
Tensor sparse_sum(const Tensor& t, IntArrayRef dims, bool keepdim, OptionalDType dtype);
// a @ b with b sparse: (b^T @ a^T)^T.
Tensor dense_sparse_mm(const Tensor& a, const Tensor& b);
// Swaps two sparse dims (their index rows) or two dense ones (the values' dims).
Tensor sparse_transpose(const Tensor& t, int64_t dim0, int64_t dim1);
// A sparse tensor of t's sizes without entries: what empty_like and zeros_like give for one.
Tensor sparse_zeros_like(const Tensor& t, ScalarType dtype, Device device);

// ---- operators, for C++ readers ----
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace tp

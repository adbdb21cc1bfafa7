#pragma once
// Layer 3 of the dispatcher: the device kernels (see Note [Dispatcher layers] in ARCHITECTURE.md).
//
// Ops normalise their arguments (check shapes, promote dtypes, broadcast, allocate the output) and
// then call the kernel of their device through this interface. A kernel sees operands that already
// agree: the dtype it is told, inputs expanded to the output's shape, outputs allocated. Each
// device type implements the interface once (cpu/backend.h, meta/backend.h) and registers it.

#include <cstdint>
#include <array>
#include <optional>
#include <variant>

#include "tensorplay/core/allocator.h"
#include "tensorplay/core/tensor.h"
#include "tensorplay/dispatch/binary_ops.h"
#include "tensorplay/dispatch/special_functions.h"
#include "tensorplay/dispatch/unary_ops.h"

namespace tp {

class Generator;

#define TP_UNARY_KERNEL(op, kernel, ...) kernel,
// The rows of dispatch/unary_ops.h, then the kernels of the unary ops with arguments of their own.
enum class UnaryOp : uint8_t {
  TP_UNARY_OPS(TP_UNARY_KERNEL)
  Round, Gelu, GeluTanh,
  Softplus,       // UnaryParams: Softplus
  RoundDecimals,  // UnaryParams: Decimals
  NanToNum,       // UnaryParams: Replacements
  Clamp,          // UnaryParams: Bounds
  PowScalar,      // UnaryParams: Exponent; x ** exponent
  RPowScalar,     // UnaryParams: Base; base ** x
};
#undef TP_UNARY_KERNEL

// The arguments of the unary kernels that take some.
namespace unary {
struct Softplus { double beta, threshold; };
struct Decimals { int64_t decimals; };
struct Replacements { double nan, posinf, neginf; };  // what NaN, +inf and -inf become
struct Bounds { double min, max; };                   // a missing bound is infinite
struct Exponent { double exponent; };
struct Base { double base; };
}  // namespace unary
using UnaryParams = std::variant<std::monostate, unary::Softplus, unary::Decimals, unary::Replacements,
                                 unary::Bounds, unary::Exponent, unary::Base>;

#define TP_BINARY_KERNEL(op, kernel, ...) kernel,
// The rows of dispatch/binary_ops.h, then the kernels of the binary ops with signatures of their own.
enum class BinaryOp : uint8_t {
  TP_BINARY_OPS(TP_BINARY_KERNEL)
  Add,   // a + alpha * b, alpha in the scalar parameter
  Sub,   // a - alpha * b
  Lerp,  // a + alpha * (b - a), alpha the weight
  Div, DivTrunc,
  ThresholdBackward,  // b <= alpha ? 0 : a: a gradient through relu or threshold, b their input
  GeluBackward, GeluTanhBackward,  // a * gelu'(b): a gradient through gelu, b its input
};
#undef TP_BINARY_KERNEL

enum class TernaryOp : uint8_t {
  Where,    // cond ? a : b; cond is bool
  Lerp,     // a + w * (b - a), w a tensor
  AddCMul,  // self + value * a * b
  AddCDiv,  // self + value * a / b
};

enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, All, Any };
enum class ArgReduceOp : uint8_t { Max, Min };
enum class ScanOp : uint8_t { Sum, Prod };
enum class ScatterReduce : uint8_t { None, Add };

// The geometry of a 2-D convolution or pooling window: per spatial dim (height, width).
struct Window {
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Memory for a storage of nbytes on this backend's device.
  virtual DataPtr allocate(size_t nbytes) = 0;
  // dst = src, converting dtypes; src has dst's shape (possibly through zero strides). A copy
  // between this backend's device and the CPU comes here too, whichever side is the CPU.
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
  virtual void fill(const Tensor& dst, const Scalar& value) = 0;
  // out[i] = start + i * step over the flattened, contiguous out.
  virtual void arange(const Tensor& out, const Scalar& start, const Scalar& step) = 0;

  // Elementwise. `in`, `a`, `b` have out's shape and the compute dtype (out is bool for the
  // ops that write bool). The scalar of binary_scalar is applied in the op's compute precision.
  virtual void unary(UnaryOp op, const Tensor& out, const Tensor& in, const UnaryParams& params) = 0;
  virtual void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                      const Scalar& alpha) = 0;
  virtual void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& b) = 0;
  virtual void ternary(TernaryOp op, const Tensor& out, const Tensor& cond_or_self, const Tensor& a,
                       const Tensor& b, const Scalar& value) = 0;

  // Reductions of `in` over the dims where mask is true, into out (in's shape with those dims
  // of size 1). Accumulates in float32 for 16-bit floats and float64 for float64.
  virtual void reduce(ReduceOp op, const Tensor& out, const Tensor& in, const std::vector<bool>& mask) = 0;
  // Values and int64 indices of the max/min along one dim (out shapes have size 1 there).
  virtual void arg_reduce(ArgReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in,
                          int64_t dim) = 0;
  virtual void scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) = 0;
  // Each line of `in` along dim sorted into values and their int64 indices (both contiguous):
  // ascending or descending, NaN above every number, equal elements in their order (stable).
  virtual void sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool descending) = 0;
  // The values.size(dim) largest (or smallest) elements of each line, chosen and ordered as
  // PyTorch's CPU topk does (so that equal elements come out as there): in order when sorted.
  virtual void topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool largest,
                    bool sorted) = 0;
  virtual void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) = 0;
  // Each row of a contiguous [rows, cols] input normalised to mean 0 and variance 1 (biased),
  // then scaled by weight and shifted by bias (each [cols] in the compute dtype, or undefined).
  virtual void layer_norm(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                          double eps) = 0;

  // out[b] = beta * out[b] + alpha * a[b] @ b[b] over 3-D operands [batch, rows, cols]; plus
  // bias, where defined: a contiguous [1, 1, cols] row added to every row of the product (linear's
  // bias, fused into the product instead of copied into out first), with beta 0 and alpha 1.
  virtual void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha,
                    const Tensor& bias) = 0;

  // out = src.gather(dim, index) / self.scatter_(dim, index, src); indices checked by the op.
  virtual void gather(const Tensor& out, const Tensor& src, int64_t dim, const Tensor& index) = 0;
  virtual void scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                       ScatterReduce reduce) = 0;
  // nll_loss's targets (contiguous int64) as index (each item's class, 0 where it is ignore_index)
  // and wts (its weight: weight[class], or 1 where weight is undefined; 0 where ignored), both
  // contiguous; an IndexError names the first target outside [0, classes).
  virtual void nll_targets(const Tensor& index, const Tensor& wts, const Tensor& target, const Tensor& weight,
                           int64_t classes, int64_t ignore_index) = 0;
  // Advanced indexing. `rows` views the non-indexed dims of the indexed tensor at its element 0;
  // offsets[i] (int64, in elements, checked by the op) moves it to the i-th indexed position:
  //   index_gather: out[i, ...] = rows@offsets[i][...]
  //   index_put:    rows@offsets[i][...] = values[i, ...]   (+= when accumulating)
  virtual void index_gather(const Tensor& out, const Tensor& rows, const Tensor& offsets) = 0;
  virtual void index_put(const Tensor& rows, const Tensor& offsets, const Tensor& values, bool accumulate) = 0;
  // The indices of the true elements of a bool tensor, as an int64 [count, ndim] tensor.
  virtual Tensor nonzero(const Tensor& in) = 0;

  // 2-D convolution over NCHW tensors with OIHW weights (O = out channels, I = in / groups):
  // out = conv(in, weight) + bias (bias may be undefined); and its two backward halves, which
  // write the gradient of the input and of the weight from the output's gradient, the second with
  // the bias's gradient (grad_out summed over batch and space) where grad_bias is defined.
  virtual void conv2d(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                      const Window& w) = 0;
  virtual void conv2d_input_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& weight,
                                 const Window& w) = 0;
  virtual void conv2d_weight_grad(const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad_out,
                                  const Tensor& in, const Window& w) = 0;

  // 2-D pooling over NCHW tensors (padding counts as -inf for max, per count_include_pad for avg).
  // The max pool's indices are the maxima's positions in their planes, int64 or (planes of under
  // 2^31 elements) int32.
  virtual void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in, const Window& w) = 0;
  virtual void max_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Tensor& indices,
                               const Window& w) = 0;
  virtual void avg_pool2d(const Tensor& out, const Tensor& in, const Window& w, bool count_include_pad,
                          std::optional<int64_t> divisor) = 0;
  virtual void avg_pool2d_grad(const Tensor& grad_in, const Tensor& grad_out, const Window& w, bool count_include_pad,
                               std::optional<int64_t> divisor) = 0;

  // One parameter's SGD step with momentum, in one pass over param, grad and the momentum
  // buffer (contiguous, one float dtype), rounding as torch.optim.SGD's sequence of ops does:
  // d = grad (negated to maximise, plus weight_decay * param); buf = buf * momentum +
  // (1 - dampening) * d; d = nesterov ? d + momentum * buf : buf; param += -lr * d.
  virtual void sgd_momentum_step(const Tensor& param, const Tensor& grad, const Tensor& buf, double lr,
                                 double momentum, double dampening, double weight_decay, bool nesterov,
                                 bool maximize) = 0;

  // out = f(x) or f(x, n) elementwise (special_functions.h): x, n and out contiguous, of one shape
  // and one dtype, float32 or float64; n is undefined for the functions of one operand.
  virtual void special_function(SpecialFunction f, const Tensor& out, const Tensor& x, const Tensor& n) = 0;

  // Discrete Fourier transforms over `dims` (any strides; float32 or float64 and their complex
  // types), every output element multiplied by `scale`. The forward transform is
  // X[k] = sum_j x[j] e^(-2 pi i jk / n), the backward one has e^(+2 pi i jk / n); n-dimensional
  // ones transform each dim in turn.
  // fft_c2c: complex in, complex out of the same shape, forward or backward.
  virtual void fft_c2c(const Tensor& in, const Tensor& out, IntArrayRef dims, bool forward, double scale) = 0;
  // fft_r2c: real in; out holds the forward transform's first n / 2 + 1 entries along dims.back()
  // (the rest are their conjugates, at mirrored indices).
  virtual void fft_r2c(const Tensor& in, const Tensor& out, IntArrayRef dims, double scale) = 0;
  // fft_c2r: the backward transform of a spectrum given by those entries (in's size along
  // dims.back() is out's / 2 + 1), real out; the imaginary parts that symmetry makes zero are ignored.
  virtual void fft_c2r(const Tensor& in, const Tensor& out, IntArrayRef dims, double scale) = 0;

  // A sparse matrix A in compressed rows times a dense one: out = A @ b, out[i, :] = the sum over
  // entries e from row_offsets[i] to row_offsets[i + 1] of values[e] * b[cols[e], :]; or, with
  // `transpose`, out = A^T @ b: out[cols[e], :] = the sum of values[e] * b[i, :] over the entries
  // e of every row i. out and b contiguous matrices, in values' dtype (not bool); row_offsets
  // [rows + 1] and cols [nnz] contiguous int64, checked by the op. 16-bit floats accumulate in float32.
  virtual void sparse_rows_mm(const Tensor& out, const Tensor& row_offsets, const Tensor& cols, const Tensor& values,
                              const Tensor& b, bool transpose) = 0;

  // One LSTM time step's elementwise part over n rows (contiguous, one float dtype). `gates` holds
  // the pre-activations of the input, forget, cell and output gates, [n, 4 * hidden] in that
  // order, and is overwritten with their activations i, f, g, o; then c = f * c_prev + i * g and
  // h = o * tanh(c).
  virtual void lstm_cell(const Tensor& gates, const Tensor& c_prev, const Tensor& c, const Tensor& h) = 0;
  // Its backward, from the activations `gates` and the states c_prev and c that lstm_cell saw and
  // made: grad_gates (the pre-activations' gradient) from grad_h and grad_c, the gradients of h and
  // c; grad_c is overwritten with the gradient of c_prev.
  virtual void lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c, const Tensor& grad_h,
                                  const Tensor& gates, const Tensor& c_prev, const Tensor& c) = 0;

  // Dense linear algebra, float32, float64, complex64 and complex128, on batches of matrices
  // stored column-major as LAPACK reads them: [batch, rows, cols] with strides (rows * cols, 1,
  // rows). Failures are reported per matrix in `info` (int32, [batch]), LAPACK's code: the ops
  // raise or return it.
  //
  // lu_factor: a holds A and is overwritten with its LU factors (partial pivoting); pivots is
  // [batch, min(rows, cols)] int32, 1-based row swaps. info > 0: U's diagonal has a zero there.
  virtual void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) = 0;
  // b holds B [batch, n, k] and is overwritten with X, op(A) X = B, from lu_factor's factors of the
  // square A; op(A) is A's conjugate transpose when `adjoint`.
  virtual void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint) = 0;
  // ldl_factor: a holds a symmetric (or, where `hermitian`, Hermitian) A, of which the lower
  // triangle is read, and that triangle is overwritten with its L D L^T (L D L^H) factors in
  // LAPACK's sytrf (hetrf) form (Bunch-Kaufman pivoting, 1 x 1 and 2 x 2 blocks in D); pivots
  // [batch, n] int32, LAPACK's (1-based, negative for a 2 x 2 block). info > 0: D has a zero there
  // (the factors are complete, D singular).
  virtual void ldl_factor(const Tensor& a, const Tensor& pivots, const Tensor& info, bool hermitian) = 0;
  // b holds B [batch, n, k] and is overwritten with X, A X = B, from ldl_factor's factors.
  virtual void ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian) = 0;
  // a holds a Hermitian positive-definite A, of which only the triangle named by `upper` is read,
  // and that triangle is overwritten with its Cholesky factor. info > 0: not positive-definite.
  virtual void cholesky(const Tensor& a, const Tensor& info, bool upper) = 0;
  // b holds B [batch, n, k] and is overwritten with X, op(A) X = B, for the triangle of A named by
  // `upper` (its diagonal taken as ones when `unitriangular`), op(A) A's conjugate transpose when
  // `adjoint`. A zero on the diagonal gives inf or NaN, as in PyTorch, not an error.
  virtual void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool adjoint,
                                bool unitriangular) = 0;
  // qr_factor: a [batch, m, n] is overwritten with R (on and above the diagonal) and the Householder
  // reflectors of Q below it, whose scales go to tau [batch, min(m, n)] (LAPACK's geqrf).
  virtual void qr_factor(const Tensor& a, const Tensor& tau) = 0;
  // qr_q: a [batch, m, n], m >= n, holds qr_factor's reflectors in its first tau.size(1) <= n
  // columns and is overwritten with the first n columns of their product Q (LAPACK's orgqr, ungqr).
  virtual void qr_q(const Tensor& a, const Tensor& tau) = 0;
  // svd: a [batch, m, n] is destroyed; s [batch, min(m, n)] (real) gets the singular values, descending,
  // and, where u is defined, u [batch, m, m or min(m, n)] and vh [batch, n or min(m, n), n] the
  // left and right singular vectors (all of them or the first min(m, n), as their sizes say).
  // info > 0: the iteration did not converge.
  virtual void svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vh, const Tensor& info) = 0;
  // eigh: a Hermitian a [batch, n, n], of which the triangle named by `upper` is read; w [batch, n]
  // (real) gets its eigenvalues, ascending, and a is overwritten with the eigenvectors (as columns) where
  // `vectors`, or destroyed. info > 0: the iteration did not converge.
  virtual void eigh(const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors) = 0;

  // eig: a general a [batch, n, n], real or complex, is destroyed; w [batch, n] (complex) gets its
  // eigenvalues, and, where v is defined, v [batch, n, n] (complex) its right eigenvectors as
  // columns, each of norm 1 with its largest component real (LAPACK's geev). info > 0: the QR
  // iteration did not converge.
  virtual void eig(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) = 0;

  // Mixed precision (amp/grad_scaler.cpp): t *= inv_scale in place, and found_inf (one float32)
  // set to 1 when any element of t is inf or NaN.
  virtual void unscale_and_check_finite(const Tensor& t, const Tensor& found_inf, const Tensor& inv_scale) = 0;

  // Random numbers from a counter-based stream (see core/generator.h).
  virtual void uniform(const Tensor& out, double low, double high, Generator& gen) = 0;
  virtual void normal(const Tensor& out, double mean, double std, Generator& gen) = 0;
  virtual void random_int(const Tensor& out, int64_t low, int64_t high, Generator& gen) = 0;
};

// The backend for a device; a device type this build lacks raises a clear RuntimeError.
Backend& backend(Device device);
// Makes `kernels` the backend of a device type (none for null); returns the one it replaces.
Backend* register_backend(DeviceType type, Backend* kernels);
// Registers the backends built into the library (backends.cpp); backend() calls it once.
void register_builtin_backends();

}  // namespace tp

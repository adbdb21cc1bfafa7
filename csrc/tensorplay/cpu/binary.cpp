// Elementwise ops of two and three inputs.

#include <cmath>
#include <optional>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/simd/float_rows.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/math.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

namespace {

template <class T> const T& at(const char* p, int64_t i, int64_t stride) {
  return *reinterpret_cast<const T*>(p + i * stride);
}

// out[i] = f(a[i], b[i]) computed in M; Out is T or bool. A row where b (or a) is one repeated
// value (a broadcast scalar) loads it once. 16-bit floats go a block at a time through float32
// (run_float_rows), where the compiler vectorises f.
template <class Out, class T, class F>
void zip(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  using M = opmath_t<T>;
  if constexpr (std::is_same_v<Out, T> && is_reduced_float(scalar_type_of<T>())) {
    return run_float_rows<T>(strided_loop(out, a, b), [f](float* y, auto in, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(in[0][i], in[1][i]);
    });
  }
  strided_loop(out, a, b).run([f](auto p, auto s, int64_t n) {
    auto* o = reinterpret_cast<Out*>(p[0]);
    bool dense_out = s[0] == sizeof(Out), dense_a = s[1] == sizeof(T), dense_b = s[2] == sizeof(T);
    if (dense_out && dense_a && dense_b) {
      auto* x = reinterpret_cast<const T*>(p[1]);
      auto* y = reinterpret_cast<const T*>(p[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<M>(x[i]), static_cast<M>(y[i])));
    } else if (dense_out && dense_a && s[2] == 0) {
      auto* x = reinterpret_cast<const T*>(p[1]);
      const M y = static_cast<M>(*reinterpret_cast<const T*>(p[2]));
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<M>(x[i]), y));
    } else if (dense_out && s[1] == 0 && dense_b) {
      const M x = static_cast<M>(*reinterpret_cast<const T*>(p[1]));
      auto* y = reinterpret_cast<const T*>(p[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(x, static_cast<M>(y[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
            static_cast<Out>(f(static_cast<M>(at<T>(p[1], i, s[1])), static_cast<M>(at<T>(p[2], i, s[2]))));
    }
  });
}

// out[i] = f(a[i]) for ops whose second operand is a number held in the compute type.
template <class Out, class T, class F>
void zip_scalar(const Tensor& out, const Tensor& a, F f) {
  using M = opmath_t<T>;
  if constexpr (std::is_same_v<Out, T> && is_reduced_float(scalar_type_of<T>())) {
    return run_float_rows<T>(strided_loop(out, a), [f](float* y, auto x, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[0][i]);
    });
  }
  strided_loop(out, a).run([f](auto p, auto s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(T)) {
      auto* o = reinterpret_cast<Out*>(p[0]);
      auto* x = reinterpret_cast<const T*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<M>(x[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(f(static_cast<M>(at<T>(p[1], i, s[1]))));
    }
  });
}

// add's and sub's alpha as PyTorch's kernels apply it to a 16-bit float tensor: rounded to the
// tensor's dtype, then multiplied in float.
template <class T>
opmath_t<T> rounded_alpha(const Scalar& alpha) {
  using M = opmath_t<T>;
  if constexpr (is_reduced_float(scalar_type_of<T>())) return static_cast<M>(static_cast<T>(alpha.to<M>()));
  else return alpha.to<M>();
}

// Runs `apply(f)` with the scalar function of `op` over M, where apply knows the operands.
template <class T, class Apply, class ApplyBool>
void with_binary_fn(BinaryOp op, const Scalar& alpha, Apply apply, ApplyBool apply_bool) {
  using M = opmath_t<T>;
  constexpr bool floating = !std::is_integral_v<T>;
  constexpr bool numeric = !std::is_same_v<T, bool>;
  switch (op) {
    case BinaryOp::Add:
      if (alpha.to_double() == 1) return apply([](M a, M b) { return math::add(a, b); });
      return apply([al = rounded_alpha<T>(alpha)](M a, M b) { return math::add(a, math::mul(al, b)); });
    case BinaryOp::Sub:
      if (alpha.to_double() == 1) return apply([](M a, M b) { return math::sub(a, b); });
      return apply([al = rounded_alpha<T>(alpha)](M a, M b) { return math::sub(a, math::mul(al, b)); });
    case BinaryOp::Lerp:
      if constexpr (floating) return apply([w = alpha.to<M>()](M a, M b) { return math::lerp(a, b, w); });
      break;
    case BinaryOp::Mul:
      if constexpr (std::is_same_v<T, bool>) return apply([](M a, M b) { return M(a && b); });
      else return apply([](M a, M b) { return math::mul(a, b); });
    case BinaryOp::Div:
      if constexpr (numeric) return apply([](M a, M b) { return M(a / b); });
      break;
    case BinaryOp::DivTrunc:
      if constexpr (numeric) return apply([](M a, M b) { return math::div_trunc(a, b); });
      break;
    case BinaryOp::DivFloor:
      if constexpr (numeric) return apply([](M a, M b) { return math::div_floor(a, b); });
      break;
    case BinaryOp::Remainder:
      if constexpr (numeric) return apply([](M a, M b) { return math::remainder(a, b); });
      break;
    case BinaryOp::Pow:
      if constexpr (numeric) return apply([](M a, M b) { return math::pow(a, b); });
      break;
    case BinaryOp::Atan2:
      if constexpr (floating) return apply([](M a, M b) { return std::atan2(a, b); });
      break;
    case BinaryOp::Maximum: return apply([](M a, M b) { return math::maximum(a, b); });
    case BinaryOp::Minimum: return apply([](M a, M b) { return math::minimum(a, b); });
    case BinaryOp::BitwiseAnd:
      if constexpr (!floating) return apply([](M a, M b) { return M(a & b); });
      break;
    case BinaryOp::BitwiseOr:
      if constexpr (!floating) return apply([](M a, M b) { return M(a | b); });
      break;
    case BinaryOp::BitwiseXor:
      if constexpr (!floating) return apply([](M a, M b) { return M(a ^ b); });
      break;
    case BinaryOp::ThresholdBackward:
      if constexpr (numeric) return apply([t = alpha.to<M>()](M g, M x) { return x <= t ? M(0) : g; });
      break;
    case BinaryOp::GeluBackward:
      if constexpr (floating) return apply([](M g, M x) { return math::gelu_backward(g, x); });
      break;
    case BinaryOp::GeluTanhBackward:
      if constexpr (floating) return apply([](M g, M x) { return math::gelu_tanh_backward(g, x); });
      break;
    case BinaryOp::Eq: return apply_bool([](M a, M b) { return a == b; });
    case BinaryOp::Ne: return apply_bool([](M a, M b) { return a != b; });
    case BinaryOp::Lt: return apply_bool([](M a, M b) { return a < b; });
    case BinaryOp::Le: return apply_bool([](M a, M b) { return a <= b; });
    case BinaryOp::Gt: return apply_bool([](M a, M b) { return a > b; });
    case BinaryOp::Ge: return apply_bool([](M a, M b) { return a >= b; });
    case BinaryOp::LogicalAnd: return apply_bool([](M a, M b) { return a != M(0) && b != M(0); });
    case BinaryOp::LogicalOr: return apply_bool([](M a, M b) { return a != M(0) || b != M(0); });
    case BinaryOp::LogicalXor: return apply_bool([](M a, M b) { return (a != M(0)) != (b != M(0)); });
  }
  fail_unsupported_dtype("binary op", scalar_type_of<T>());
}

// The SIMD kernel for op on float32 and bfloat16 rows, if op is one of its four.
std::optional<simd::Arith> simd_arith(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return simd::Arith::Add;
    case BinaryOp::Sub: return simd::Arith::Sub;
    case BinaryOp::Mul: return simd::Arith::Mul;
    case BinaryOp::Div: return simd::Arith::Div;
    default: return std::nullopt;
  }
}

// float32 rows shorter than this stay with the generic loop, inlined there, where a dispatched call
// per row costs more than it saves (figures in BENCHMARKS.md); so do outputs this small, which
// would build their loop twice.
constexpr int64_t kMinFloatRow = 256;

template <class T>
bool may_run_simd_arith(const Tensor& out) {
  return !std::is_same_v<T, float> || out.numel() >= kMinFloatRow;
}

// Runs float32 or bfloat16 + - * / through simd::arith_row when the loop's rows are dense: b is the
// loop's third operand (a row, or one value repeated along it) or, in a loop of two, the number
// b_value. (float32's alpha stays with the generic loop.) False, running nothing, otherwise.
template <class T, size_t N>
bool run_simd_arith(simd::Arith op, const StridedLoop<N>& loop, float alpha, float b_value = 0) {
  constexpr int64_t kSize = sizeof(T);
  if (loop.shape.empty()) return false;
  if (std::is_same_v<T, float> && (alpha != 1.0f || loop.shape.back() < kMinFloatRow)) return false;
  const auto& s = loop.strides.back();
  if (s[0] != kSize || s[1] != kSize || (N == 3 && s[N - 1] != kSize && s[N - 1] != 0)) return false;
  const bool scaled = op == simd::Arith::Add || op == simd::Arith::Sub;
  loop.run([&](auto p, auto strides, int64_t n) {
    auto* o = reinterpret_cast<T*>(p[0]);
    const auto* x = reinterpret_cast<const T*>(p[1]);
    if constexpr (N == 2) {
      simd::arith_row(op, x, b_value, o, n);
    } else {
      const auto* y = reinterpret_cast<const T*>(p[2]);
      const float repeated = scaled ? alpha * static_cast<float>(*y) : static_cast<float>(*y);
      if (strides[2] != kSize) simd::arith_row(op, x, repeated, o, n);
      else if constexpr (std::is_same_v<T, float>) simd::arith_row(op, x, y, o, n);
      else simd::arith_row(op, x, y, o, n, alpha);
    }
  });
  return true;
}

// Complex + - * /, as PyTorch's complex type computes them: products by the textbook formula (not
// the C library's, which checks every result for NaN), quotients by Smith's, which scales by the
// larger part of the divisor so that neither overflows early. The other ops compute complex values
// on the parts (ops/complex.h).
template <class T>
void complex_arithmetic(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  using R = typename T::value_type;
  auto mul = [](T x, T y) {
    return T(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
  };
  auto div = [](T x, T y) {
    const R c = y.real(), d = y.imag();
    if (std::abs(c) >= std::abs(d)) {
      if (c == R(0) && d == R(0)) return T(x.real() / std::abs(c), x.imag() / std::abs(d));
      const R ratio = d / c, scale = R(1) / (c + d * ratio);
      return T((x.real() + x.imag() * ratio) * scale, (x.imag() - x.real() * ratio) * scale);
    }
    const R ratio = c / d, scale = R(1) / (d + c * ratio);
    return T((x.real() * ratio + x.imag()) * scale, (x.imag() * ratio - x.real()) * scale);
  };
  const T scale = alpha.to<T>();
  const bool plain = scale == T(1);
  switch (op) {
    case BinaryOp::Add:
      if (plain) return zip<T, T>(out, a, b, [](T x, T y) { return x + y; });
      return zip<T, T>(out, a, b, [mul, scale](T x, T y) { return x + mul(scale, y); });
    case BinaryOp::Sub:
      if (plain) return zip<T, T>(out, a, b, [](T x, T y) { return x - y; });
      return zip<T, T>(out, a, b, [mul, scale](T x, T y) { return x - mul(scale, y); });
    case BinaryOp::Mul:
      return zip<T, T>(out, a, b, mul);
    case BinaryOp::Div:
      return zip<T, T>(out, a, b, div);
    default:
      fail_unsupported_dtype("binary op", scalar_type_of<T>());
  }
}

}  // namespace

void CpuBackend::binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (a.dtype() == ScalarType::ComplexFloat) return complex_arithmetic<std::complex<float>>(op, out, a, b, alpha);
  if (a.dtype() == ScalarType::ComplexDouble) return complex_arithmetic<std::complex<double>>(op, out, a, b, alpha);
  visit_dtype("binary op", a.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
      if (op == BinaryOp::ThresholdBackward) {
        const T* g = static_cast<const T*>(a.data_ptr());
        const T* y = static_cast<const T*>(b.data_ptr());
        T* o = static_cast<T*>(out.data_ptr());
        const float threshold = alpha.to<float>();
        if (run_dense({&out, &a, &b},
                      [&](int64_t i, int64_t n) { simd::threshold_backward_row(g + i, y + i, o + i, threshold, n); }))
          return;
      }
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
      if (auto arith = simd_arith(op);
          arith && may_run_simd_arith<T>(out) && run_simd_arith<T>(*arith, strided_loop(out, a, b), rounded_alpha<T>(alpha)))
        return;
    }
    if constexpr (FloatRowType<T>) {
      if (op == BinaryOp::GeluBackward || op == BinaryOp::GeluTanhBackward) {
        const bool tanh = op == BinaryOp::GeluTanhBackward;
        return run_float_rows<T>(strided_loop(out, a, b), [tanh](float* y, auto in, int64_t n) {
          simd::gelu_backward_row(in[0], in[1], y, n, tanh);
        });
      }
    }
    with_binary_fn<T>(
        op, alpha, [&](auto f) { zip<T, T>(out, a, b, f); }, [&](auto f) { zip<bool, T>(out, a, b, f); });
  });
}

void CpuBackend::binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& b) {
  visit_dtype("binary op", a.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    const M y = b.to<M>();
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
      if (auto arith = simd_arith(op);
          arith && may_run_simd_arith<T>(out) && run_simd_arith<T>(*arith, strided_loop(out, a), 1.0f, y))
        return;
    }
    with_binary_fn<T>(
        op, Scalar(1), [&](auto f) { zip_scalar<T, T>(out, a, [f, y](M x) { return f(x, y); }); },
        [&](auto f) { zip_scalar<bool, T>(out, a, [f, y](M x) { return f(x, y); }); });
  });
}

void CpuBackend::ternary(TernaryOp op, const Tensor& out, const Tensor& first, const Tensor& a, const Tensor& b,
                         const Scalar& value) {
  visit_dtype<DTypes::AllAndComplex>("ternary op", out.dtype(), [&](auto t) {
    using T = decltype(t);
    using M = opmath_t<T>;
    auto loop = strided_loop(out, first, a, b);
    auto run = [&, first_size = first.itemsize()](auto f) {
      loop.run([f, first_size](auto p, auto s, int64_t n) {
        if (s[0] == sizeof(T) && s[1] == first_size && s[2] == sizeof(T) && s[3] == sizeof(T)) {  // dense rows
          auto* o = reinterpret_cast<T*>(p[0]);
          auto* x = reinterpret_cast<const T*>(p[2]);
          auto* y = reinterpret_cast<const T*>(p[3]);
          for (int64_t i = 0; i < n; ++i) o[i] = f(p[1] + i * first_size, x[i], y[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) = f(p[1] + i * s[1], at<T>(p[2], i, s[2]), at<T>(p[3], i, s[3]));
        }
      });
    };
    // Complex tensors only move through where: their arithmetic runs on their parts (ops/complex.h).
    if constexpr (is_complex_v<T>) {
      if (op == TernaryOp::Where)
        return run([](const char* c, T x, T y) { return *reinterpret_cast<const bool*>(c) ? x : y; });
      fail_unsupported_dtype(op == TernaryOp::Lerp ? "lerp" : op == TernaryOp::AddCMul ? "addcmul" : "addcdiv",
                             scalar_type_of<T>());
    } else {
      switch (op) {
        case TernaryOp::Where:
          return run([](const char* c, T x, T y) { return *reinterpret_cast<const bool*>(c) ? x : y; });
        case TernaryOp::Lerp:
          if constexpr (!std::is_integral_v<T>)
            return run([](const char* self, T end, T w) {
              return static_cast<T>(math::lerp<M>(M(*reinterpret_cast<const T*>(self)), M(end), M(w)));
            });
          break;
        case TernaryOp::AddCMul:
          return run([v = value.to<M>()](const char* self, T x, T y) {
            return static_cast<T>(M(*reinterpret_cast<const T*>(self)) + v * M(x) * M(y));
          });
        case TernaryOp::AddCDiv:
          return run([v = value.to<M>()](const char* self, T x, T y) {
            return static_cast<T>(M(*reinterpret_cast<const T*>(self)) + v * M(x) / M(y));
          });
      }
      fail_unsupported_dtype("ternary op", scalar_type_of<T>());
    }
  });
}

}  // namespace tp::cpu

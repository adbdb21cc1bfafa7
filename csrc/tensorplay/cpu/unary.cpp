// Elementwise ops of one input.

#include <cmath>

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/simd/float_rows.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/cpu/math.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

namespace {

// out[i] = f(in[i]) computed in M; Out is In or bool. 16-bit floats go a block at a time
// through float32 (run_float_rows), where the compiler vectorises f.
template <class Out, class In, class F>
void map(const Tensor& out, const Tensor& in, F f) {
  using M = opmath_t<In>;
  if constexpr (std::is_same_v<Out, In> && is_reduced_float(scalar_type_of<In>())) {
    return run_float_rows<In>(strided_loop(out, in), [f](float* y, auto x, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[0][i]);
    });
  }
  strided_loop(out, in).run([f](auto p, auto s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      auto* o = reinterpret_cast<Out*>(p[0]);
      auto* x = reinterpret_cast<const In*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<M>(x[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(f(static_cast<M>(*reinterpret_cast<const In*>(p[1] + i * s[1]))));
    }
  });
}

// The SIMD kernel of op on float32 rows, if it has one.
using SimdRow = void (*)(const float*, float*, int64_t);
SimdRow simd_row(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: return simd::exp_row;
    case UnaryOp::Log: return simd::log_row;
    case UnaryOp::Tanh: return simd::tanh_row;
    case UnaryOp::Sigmoid: return simd::sigmoid_row;
    case UnaryOp::Silu: return simd::silu_row;
    default: return nullptr;
  }
}

template <class T>
void unary_floating(UnaryOp op, const Tensor& out, const Tensor& in, const UnaryParams& params) {
  using M = opmath_t<T>;
  auto m = [&](auto f) { map<T, T>(out, in, f); };
  auto test = [&](auto f) { map<bool, T>(out, in, f); };
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
    if (op == UnaryOp::Relu) {
      const T* x = static_cast<const T*>(in.data_ptr());
      T* y = static_cast<T*>(out.data_ptr());
      if (run_dense({&out, &in}, [&](int64_t i, int64_t n) { simd::relu_row(x + i, y + i, n); })) return;
    }
  }
  if constexpr (FloatRowType<T>) {
    if (op == UnaryOp::Gelu || op == UnaryOp::GeluTanh) {
      const bool tanh = op == UnaryOp::GeluTanh;
      return run_float_rows<T>(strided_loop(out, in),
                               [tanh](float* y, auto x, int64_t n) { simd::gelu_row(x[0], y, n, tanh); });
    }
    if (auto row = simd_row(op)) {
      return run_float_rows<T>(strided_loop(out, in), [row](float* y, auto x, int64_t n) { row(x[0], y, n); });
    }
  }
  switch (op) {
    case UnaryOp::Neg: return m([](M x) { return -x; });
    case UnaryOp::Abs: return m([](M x) { return std::fabs(x); });
    case UnaryOp::Sign: return m([](M x) { return math::sign(x); });
    case UnaryOp::Exp: return m([](M x) { return std::exp(x); });
    case UnaryOp::Exp2: return m([](M x) { return std::exp2(x); });
    case UnaryOp::Expm1: return m([](M x) { return std::expm1(x); });
    case UnaryOp::Log: return m([](M x) { return std::log(x); });
    case UnaryOp::Log2: return m([](M x) { return std::log2(x); });
    case UnaryOp::Log10: return m([](M x) { return std::log10(x); });
    case UnaryOp::Log1p: return m([](M x) { return std::log1p(x); });
    case UnaryOp::Sqrt: return m([](M x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt: return m([](M x) { return M(1) / std::sqrt(x); });
    case UnaryOp::Reciprocal: return m([](M x) { return M(1) / x; });
    case UnaryOp::Sin: return m([](M x) { return std::sin(x); });
    case UnaryOp::Cos: return m([](M x) { return std::cos(x); });
    case UnaryOp::Tan: return m([](M x) { return std::tan(x); });
    case UnaryOp::Asin: return m([](M x) { return std::asin(x); });
    case UnaryOp::Acos: return m([](M x) { return std::acos(x); });
    case UnaryOp::Atan: return m([](M x) { return std::atan(x); });
    case UnaryOp::Sinh: return m([](M x) { return std::sinh(x); });
    case UnaryOp::Cosh: return m([](M x) { return std::cosh(x); });
    case UnaryOp::Tanh: return m([](M x) { return std::tanh(x); });
    case UnaryOp::Sigmoid: return m([](M x) { return math::sigmoid(x); });
    case UnaryOp::Erf: return m([](M x) { return std::erf(x); });
    case UnaryOp::Erfinv: return m([](M x) { return math::erfinv(x); });
    case UnaryOp::Floor: return m([](M x) { return std::floor(x); });
    case UnaryOp::Ceil: return m([](M x) { return std::ceil(x); });
    case UnaryOp::Round: return m([](M x) { return std::nearbyint(x); });
    case UnaryOp::Trunc: return m([](M x) { return std::trunc(x); });
    case UnaryOp::Relu: return m([](M x) { return x < M(0) ? M(0) : x; });  // -0 and NaN stay, as in PyTorch
    case UnaryOp::Gelu: return m([](M x) { return math::gelu(x); });  // float64 (the others: above)
    case UnaryOp::GeluTanh: return m([](M x) { return math::gelu_tanh(x); });
    case UnaryOp::Silu: return m([](M x) { return x / (M(1) + std::exp(-x)); });
    case UnaryOp::Softplus: {
      const auto [beta, threshold] = std::get<unary::Softplus>(params);
      return m([b = M(beta), t = M(threshold)](M x) { return math::softplus(x, b, t); });
    }
    case UnaryOp::RoundDecimals:
      return m([d = std::get<unary::Decimals>(params).decimals](M x) { return math::round_decimals(x, d); });
    case UnaryOp::NanToNum: {
      const auto [nan, posinf, neginf] = std::get<unary::Replacements>(params);
      return m([a = M(nan), b = M(posinf), c = M(neginf)](M x) { return math::nan_to_num(x, a, b, c); });
    }
    case UnaryOp::Clamp:
      return m([lo = M(std::get<unary::Bounds>(params).min), hi = M(std::get<unary::Bounds>(params).max)](M x) {
        if (std::isnan(x)) return x;
        if (std::isnan(lo) || std::isnan(hi)) return std::numeric_limits<M>::quiet_NaN();
        if (x < lo) x = lo;
        if (x > hi) x = hi;
        return x;
      });
    case UnaryOp::PowScalar: {
      const double exponent = std::get<unary::Exponent>(params).exponent;
      if (exponent == 2) return m([](M x) { return x * x; });
      if (exponent == 0.5) return m([](M x) { return std::sqrt(x); });
      return m([e = M(exponent)](M x) { return std::pow(x, e); });
    }
    case UnaryOp::RPowScalar: return m([b = M(std::get<unary::Base>(params).base)](M x) { return std::pow(b, x); });
    case UnaryOp::LogicalNot: return test([](M x) { return x == M(0); });
    case UnaryOp::IsNan: return test([](M x) { return std::isnan(x); });
    case UnaryOp::IsInf: return test([](M x) { return std::isinf(x); });
    case UnaryOp::IsFinite: return test([](M x) { return std::isfinite(x); });
    case UnaryOp::BitwiseNot: break;
  }
  fail_unsupported_dtype("bitwise_not", scalar_type_of<T>());
}

template <class T>
void unary_integral(UnaryOp op, const Tensor& out, const Tensor& in, const UnaryParams& params) {
  auto m = [&](auto f) { map<T, T>(out, in, f); };
  auto test = [&](auto f) { map<bool, T>(out, in, f); };
  switch (op) {
    case UnaryOp::Neg: return m([](T x) { return static_cast<T>(-x); });
    case UnaryOp::Abs: return m([](T x) { return math::abs(x); });
    case UnaryOp::Sign: return m([](T x) { return math::sign(x); });
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
    case UnaryOp::NanToNum: return m([](T x) { return x; });
    case UnaryOp::Relu: return m([](T x) { return x > 0 ? x : T(0); });
    case UnaryOp::Clamp:
      return m([bounds = std::get<unary::Bounds>(params)](T x) {  // a missing bound is infinite
        const auto [lo, hi] = bounds;
        if (x < lo) x = static_cast<T>(lo);
        if (x > hi) x = static_cast<T>(hi);
        return x;
      });
    case UnaryOp::PowScalar:
      return m([e = static_cast<T>(std::get<unary::Exponent>(params).exponent)](T x) { return math::pow(x, e); });
    case UnaryOp::RPowScalar:
      return m([b = static_cast<T>(std::get<unary::Base>(params).base)](T x) { return math::pow(b, x); });
    case UnaryOp::BitwiseNot:
      if constexpr (std::is_same_v<T, bool>) return m([](T x) { return !x; });
      else return m([](T x) { return static_cast<T>(~x); });
    case UnaryOp::LogicalNot: return test([](T x) { return x == 0; });
    case UnaryOp::IsNan:
    case UnaryOp::IsInf: return test([](T) { return false; });
    case UnaryOp::IsFinite: return test([](T) { return true; });
    default: break;
  }
  fail_unsupported_dtype("unary op", scalar_type_of<T>());
}

}  // namespace

void CpuBackend::unary(UnaryOp op, const Tensor& out, const Tensor& in, const UnaryParams& params) {
  visit_dtype("unary op", in.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_integral_v<T>) unary_integral<T>(op, out, in, params);
    else unary_floating<T>(op, out, in, params);
  });
}

}  // namespace tp::cpu

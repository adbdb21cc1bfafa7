#pragma once
// Scalar definitions of the elementwise ops, in the op's compute type M (float for 16-bit floats).
// Where PyTorch defines an edge case (NaN, division by zero, signed zeros), these follow it.

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tp::cpu::math {

template <class M> inline M sigmoid(M x) { return M(1) / (M(1) + std::exp(-x)); }

template <class M> inline M gelu(M x) {
  constexpr M kInvSqrt2 = M(0.70710678118654752440);
  return M(0.5) * x * (M(1) + std::erf(x * kInvSqrt2));
}

template <class M> inline M gelu_tanh(M x) {
  constexpr M kBeta = M(0.79788456080286535588);  // sqrt(2 / pi)
  constexpr M kKappa = M(0.044715);
  return M(0.5) * x * (M(1) + std::tanh(kBeta * (x + kKappa * x * x * x)));
}

// g * gelu'(x): gelu' = cdf(x) + x pdf(x) of the standard normal distribution.
template <class M> inline M gelu_backward(M g, M x) {
  constexpr M kInvSqrt2 = M(0.70710678118654752440), kInvSqrt2Pi = M(0.39894228040143267794);
  const M cdf = M(0.5) * (M(1) + std::erf(x * kInvSqrt2));
  return g * (cdf + x * kInvSqrt2Pi * std::exp(M(-0.5) * x * x));
}

// g * d/dx of gelu_tanh: 0.5 (1 + t) + 0.5 x (1 - t^2) u', with t = tanh(u), u = beta (x + kappa x^3).
template <class M> inline M gelu_tanh_backward(M g, M x) {
  constexpr M kBeta = M(0.79788456080286535588), kKappa = M(0.044715);
  const M t = std::tanh(kBeta * (x + kKappa * x * x * x));
  const M slope = kBeta * (M(1) + M(3) * kKappa * x * x);
  return g * (M(0.5) * (M(1) + t) + M(0.5) * x * (M(1) - t * t) * slope);
}

// The inverse error function: Giles' polynomial approximation ("Approximating the erfinv
// function", 2010), good to single precision, then Newton steps on erf(y) = x in M's precision.
template <class M> inline M erfinv(M x) {
  if (!(std::fabs(x) < M(1))) {
    if (std::fabs(x) == M(1)) return std::copysign(std::numeric_limits<M>::infinity(), x);
    return std::numeric_limits<M>::quiet_NaN();  // |x| > 1 or NaN
  }
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = c + p * w;
  }
  double y = p * x;
  constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
  for (int i = 0; i < 2; ++i) y -= (std::erf(y) - x) / (kTwoOverSqrtPi * std::exp(-y * y));
  return static_cast<M>(y);
}

template <class M> inline M softplus(M x, M beta, M threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}

template <class M> inline M round_decimals(M x, int64_t decimals) {
  M ten_pow = std::pow(M(10), M(std::abs(decimals)));
  return decimals >= 0 ? std::nearbyint(x * ten_pow) / ten_pow : std::nearbyint(x / ten_pow) * ten_pow;
}

template <class M> inline M sign(M x) {
  if constexpr (std::is_unsigned_v<M>) return x > 0;
  else return static_cast<M>((M(0) < x) - (x < M(0)));
}

template <class M> inline M abs(M x) {
  if constexpr (std::is_unsigned_v<M>) return x;
  else if constexpr (std::is_integral_v<M>) return x < 0 ? static_cast<M>(-x) : x;
  else return std::fabs(x);
}

template <class M> inline M nan_to_num(M x, M nan, M posinf, M neginf) {
  if (std::isnan(x)) return nan;
  if (std::isinf(x)) return x > 0 ? posinf : neginf;
  return x;
}

// Python's floor division and remainder (the result takes the divisor's sign).
template <class M> inline M div_floor(M a, M b) {
  if constexpr (std::is_integral_v<M>) {
    if constexpr (std::is_signed_v<M>) {
      if (b == -1) return static_cast<M>(-static_cast<std::make_unsigned_t<M>>(a));  // no trap on INT_MIN / -1
      if ((a < 0) != (b < 0)) {
        M q = a / b;
        return a % b ? q - 1 : q;
      }
    }
    return a / b;
  } else {
    if (b == 0) return a / b;
    M mod = std::fmod(a, b);
    M div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= M(1);
    if (div == 0) return std::copysign(M(0), a / b);
    M floordiv = std::floor(div);
    if (div - floordiv > M(0.5)) floordiv += M(1);
    return floordiv;
  }
}

template <class M> inline M div_trunc(M a, M b) {
  if constexpr (std::is_integral_v<M>) {
    if constexpr (std::is_signed_v<M>)
      if (b == -1) return static_cast<M>(-static_cast<std::make_unsigned_t<M>>(a));
    return a / b;
  } else {
    return std::trunc(a / b);
  }
}

template <class M> inline M remainder(M a, M b) {
  if constexpr (std::is_integral_v<M>) {
    if constexpr (std::is_signed_v<M>)
      if (b == -1) return 0;
    M r = a % b;
    if constexpr (std::is_signed_v<M>)
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    M mod = std::fmod(a, b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  }
}

// Integer power by squaring; negative exponents give 0 except for bases 1 and -1, as in PyTorch.
// Integer +, - and * wrap around on overflow, as PyTorch's do (two's complement), instead of
// being undefined behaviour for signed types: they compute in an unsigned type at least as wide as
// unsigned int (narrower ones would promote to int and overflow there).
template <class M>
using Wrapping = std::conditional_t<(sizeof(M) < sizeof(unsigned)), unsigned, std::make_unsigned_t<M>>;

template <class M> inline M add(M a, M b) {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>)
    return static_cast<M>(static_cast<Wrapping<M>>(a) + static_cast<Wrapping<M>>(b));
  else return M(a + b);
}
template <class M> inline M sub(M a, M b) {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>)
    return static_cast<M>(static_cast<Wrapping<M>>(a) - static_cast<Wrapping<M>>(b));
  else return M(a - b);
}
template <class M> inline M mul(M a, M b) {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>)
    return static_cast<M>(static_cast<Wrapping<M>>(a) * static_cast<Wrapping<M>>(b));
  else return M(a * b);
}

template <class M> inline M pow(M base, M exp) {
  if constexpr (std::is_same_v<M, bool>) {
    return base || !exp;
  } else if constexpr (std::is_integral_v<M>) {
    if constexpr (std::is_signed_v<M>) {
      if (exp < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exp & 1) ? -1 : 1;
        return 0;
      }
    }
    using U = std::make_unsigned_t<M>;  // wraps on overflow instead of undefined behaviour
    U result = 1, b = static_cast<U>(base);
    for (U e = static_cast<U>(exp); e; e >>= 1) {
      if (e & 1) result *= b;
      b *= b;
    }
    return static_cast<M>(result);
  } else {
    return std::pow(base, exp);
  }
}

// NaN-propagating maximum and minimum.
template <class M> inline M maximum(M a, M b) {
  if constexpr (!std::is_integral_v<M>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
  return a > b ? a : b;
}
template <class M> inline M minimum(M a, M b) {
  if constexpr (!std::is_integral_v<M>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
  return a < b ? a : b;
}

// a + w * (b - a), computed from the nearer end as PyTorch does for accuracy.
template <class M> inline M lerp(M a, M b, M w) {
  return std::abs(w) < M(0.5) ? a + w * (b - a) : b - (b - a) * (M(1) - w);
}

}  // namespace tp::cpu::math

// torch.special's functions with kernels of their own (dispatch/special_functions.h). The Bessel and
// Airy functions, erfc and its inverse come from Boost.Math, evaluated in double precision and
// rounded once to float32 where that is the dtype. What Boost lacks is written here from the
// functions' definitions: the exponentially scaled Bessel functions (Boost's unscaled ones overflow
// long before the scaled ones do), erfcx and log_ndtr (whose tails erfc alone underflows), and the
// orthogonal polynomials (their three-term recurrences, with PyTorch's values at n < 0 and x = +-1,
// in the tensor's own precision as PyTorch computes them).

#include <boost/math/special_functions/airy.hpp>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tensorplay/core/parallel.h"
#include "tensorplay/cpu/backend.h"

namespace tp::cpu {

namespace {

// Boost reports domain errors, poles and overflow through its policy: here, as IEEE values (NaN, inf),
// which is what PyTorch's kernels return.
using Quiet = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::promote_double<false>>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

// Past this argument the scaled Bessel functions use their asymptotic series, where exp(x) and the
// unscaled functions would overflow; the series has reached double precision well before it.
constexpr double kAsymptotic = 30;

// The Hankel expansions for large x, with a_k = prod_{j <= k} (4v^2 - (2j - 1)^2) / (k! 8^k):
// e^-x I_v(x) ~ sum_k (-1)^k a_k / x^k / sqrt(2 pi x) (sign -1), e^x K_v(x) ~ sqrt(pi / 2x) sum_k
// a_k / x^k (sign +1).
double scaled_bessel_asymptotic(int order, double x, double sign) {
  const double mu = 4.0 * order * order;
  double term = 1, sum = 1;
  for (int k = 1; k < 40; ++k) {
    term *= sign * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  return sign > 0 ? std::sqrt(kPi / (2 * x)) * sum : sum / std::sqrt(2 * kPi * x);
}

// e^-|x| I_v(x) for v = 0, 1 (odd in x for v = 1).
double scaled_bessel_i(int order, double x) {
  const double ax = std::fabs(x);
  const double value = ax > kAsymptotic ? scaled_bessel_asymptotic(order, ax, -1)
                                        : std::exp(-ax) * boost::math::cyl_bessel_i(order, ax, Quiet());
  return order == 1 && x < 0 ? -value : value;
}

// e^x K_v(x), x >= 0 (inf at 0, NaN below).
double scaled_bessel_k(int order, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x > kAsymptotic) return scaled_bessel_asymptotic(order, x, +1);
  return std::exp(x) * boost::math::cyl_bessel_k(order, x, Quiet());
}

double bessel_k(int order, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  return boost::math::cyl_bessel_k(order, x, Quiet());
}

double bessel_y(int order, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  return boost::math::cyl_neumann(order, x, Quiet());
}

// J_v(x) for v = 0, 1: even and odd in x. NaN at the infinities (PyTorch's value, where the limit is 0).
double bessel_j(int order, double x) {
  if (std::isinf(x)) return kNaN;
  const double value = boost::math::cyl_bessel_j(order, std::fabs(x), Quiet());
  return order == 1 && x < 0 ? -value : value;
}

double bessel_i(int order, double x) {
  const double value = boost::math::cyl_bessel_i(order, std::fabs(x), Quiet());
  return order == 1 && x < 0 ? -value : value;
}

double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0;
  if (std::fabs(x) < 0.5) {  // sin(x) / x's Taylor series: no cancellation near 0
    const double x2 = x * x;
    return 1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110 * (1 - x2 / 156)))));
  }
  return std::sin(x) / x;
}

// erfcx(x) = e^(x^2) erfc(x). For x >= 2, the continued fraction of erfc's tail, 1 / sqrt(pi) over
// x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))), evaluated from the back; below, the product (x^2 is
// exact enough there); for x < 0, 2 e^(x^2) - erfcx(-x).
double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2 * std::exp(x * x) - erfcx(-x);
  }
  if (x < 2) return std::exp(x * x) * boost::math::erfc(x, Quiet());
  if (std::isinf(x)) return 0;
  double fraction = x;
  for (int k = 60; k >= 1; --k) fraction = x + (k / 2.0) / fraction;
  return 1 / (std::sqrt(kPi) * fraction);
}

// The quantile of the standard normal: -sqrt(2) erfc^-1(2p), from the nearer tail so that p close
// to 1 keeps its precision (1 - p is exact there).
double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0.5) return 0.0;  // (+0, as PyTorch's: the lower branch would give -0)
  if (p > 0.5) return std::sqrt(2.0) * boost::math::erfc_inv(2 * (1 - p), Quiet());
  return -std::sqrt(2.0) * boost::math::erfc_inv(2 * p, Quiet());
}

// log Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: through erfcx in the lower tail, where Phi underflows,
// and log1p of the upper tail's complement, 1 - Phi(x) = e^(-x^2 / 2) erfcx(x / sqrt 2) / 2, where Phi
// rounds to 1. That complement is the result there, so e^(-x^2 / 2) is taken with x^2 split exactly
// into its rounded value and the rounding error (erfc(x / sqrt 2) would carry x / sqrt 2's rounding,
// amplified x^2 times).
double log_ndtr(double x) {
  const double t = x / std::sqrt(2.0);
  if (x < -1) return std::log(erfcx(-t) / 2) - t * t;
  if (x > 3) {
    if (std::isinf(x)) return -0.0;
    const double square = x * x, error = std::fma(x, x, -square);
    return std::log1p(-std::exp(-square / 2) * std::exp(-error / 2) * erfcx(t) / 2);
  }
  return std::log(boost::math::erfc(-t, Quiet()) / 2);
}

// ---- orthogonal polynomials of degree n (truncated to an integer; 0 for n < 0) ----
// Computed in the tensor's dtype, as PyTorch's kernels compute them: where a float32 recurrence
// overflows, the result is what float32 arithmetic gives (inf, or NaN from inf - inf).

// p_{k+1} = 2x p_k - p_{k-1}, the Chebyshev recurrence, from p_0 = 1 and p_1 = first.
template <class T>
T chebyshev_recurrence(T x, int64_t n, T first) {
  if (n == 0) return 1;
  T previous = 1, current = first;
  for (int64_t k = 1; k < n; ++k) {
    const T next = 2 * x * current - previous;
    previous = current;
    current = next;
  }
  return current;
}

// The four kinds, with their closed forms on (-1, 1) for large n (the recurrence accumulates
// rounding there), x = cos(theta): T = cos(n theta), U = sin((n + 1) theta) / sin(theta),
// V = cos((n + 1/2) theta) / cos(theta / 2), W = sin((n + 1/2) theta) / sin(theta / 2).
template <class T>
T chebyshev(char kind, T x, int64_t n) {
  if (n < 0) return 0;
  const bool even = n % 2 == 0;
  const T n1 = static_cast<T>(n) + 1, twice = 2 * static_cast<T>(n) + 1;
  if (std::fabs(x) == 1) {
    const bool positive = x > 0;
    switch (kind) {
      case 'T': return positive || even ? 1 : -1;
      case 'U': return positive || even ? n1 : -n1;
      case 'V': return positive ? 1 : (even ? twice : -twice);
      default: return positive ? twice : (even ? 1 : -1);
    }
  }
  if (std::isnan(x)) return x;
  if (n > 8 && std::fabs(x) < 1) {
    const T theta = std::acos(x), half = static_cast<T>(n) + T(0.5);
    switch (kind) {
      case 'T': return std::cos(static_cast<T>(n) * theta);
      case 'U': return std::sin(n1 * theta) / std::sin(theta);
      case 'V': return std::cos(half * theta) / std::cos(theta / 2);
      default: return std::sin(half * theta) / std::sin(theta / 2);
    }
  }
  switch (kind) {
    case 'T': return chebyshev_recurrence(x, n, x);
    case 'U': return chebyshev_recurrence(x, n, 2 * x);
    case 'V': return chebyshev_recurrence(x, n, 2 * x - 1);
    default: return chebyshev_recurrence(x, n, 2 * x + 1);
  }
}

// H (physicists'): H_{k+1} = 2x H_k - 2k H_{k-1}; He (probabilists'): He_{k+1} = x He_k - k He_{k-1}.
template <class T>
T hermite(T x, int64_t n, T scale) {
  if (n < 0) return 0;
  if (n == 0) return 1;
  T previous = 1, current = scale * x;
  for (int64_t k = 1; k < n; ++k) {
    const T next = scale * (x * current - static_cast<T>(k) * previous);
    previous = current;
    current = next;
  }
  return current;
}

// (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}.
template <class T>
T laguerre(T x, int64_t n) {
  if (n < 0) return 0;
  if (x == 0 || n == 0) return 1;
  T previous = 1, current = 1 - x;
  for (int64_t k = 1; k < n; ++k) {
    const T kk = static_cast<T>(k);
    const T next = ((2 * kk + 1 - x) * current - kk * previous) / (kk + 1);
    previous = current;
    current = next;
  }
  return current;
}

// (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}.
template <class T>
T legendre(T x, int64_t n) {
  if (n < 0) return 0;
  if (std::fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
  if (n == 0) return 1;
  T previous = 1, current = x;
  for (int64_t k = 1; k < n; ++k) {
    const T kk = static_cast<T>(k);
    const T next = ((2 * kk + 1) * x * current - kk * previous) / (kk + 1);
    previous = current;
    current = next;
  }
  return current;
}

// The functions of one operand, in double precision. NaN gives NaN before any of them sees it
// (Boost's continued fractions assert on their argument's range).
double evaluate(SpecialFunction f, double x) {
  if (std::isnan(x)) return x;
  switch (f) {
    case SpecialFunction::AiryAi: return boost::math::airy_ai(x, Quiet());
    case SpecialFunction::BesselJ0: return bessel_j(0, x);
    case SpecialFunction::BesselJ1: return bessel_j(1, x);
    case SpecialFunction::BesselY0: return bessel_y(0, x);
    case SpecialFunction::BesselY1: return bessel_y(1, x);
    case SpecialFunction::ModifiedBesselI0: return bessel_i(0, x);
    case SpecialFunction::ModifiedBesselI1: return bessel_i(1, x);
    case SpecialFunction::ModifiedBesselK0: return bessel_k(0, x);
    case SpecialFunction::ModifiedBesselK1: return bessel_k(1, x);
    case SpecialFunction::ScaledModifiedBesselK0: return scaled_bessel_k(0, x);
    case SpecialFunction::ScaledModifiedBesselK1: return scaled_bessel_k(1, x);
    case SpecialFunction::SphericalBesselJ0: return spherical_bessel_j0(x);
    case SpecialFunction::I0e: return scaled_bessel_i(0, x);
    case SpecialFunction::I1: return bessel_i(1, x);
    case SpecialFunction::I1e: return scaled_bessel_i(1, x);
    case SpecialFunction::Erfcx: return erfcx(x);
    case SpecialFunction::Ndtri: return ndtri(x);
    case SpecialFunction::LogNdtr: return log_ndtr(x);
    default: return kNaN;
  }
}

// The polynomials, in T. A degree that is no integer of int64's range (NaN, the infinities) gives
// 0, as PyTorch's conversion to a negative degree does.
template <class T>
T evaluate_polynomial(SpecialFunction f, T x, T degree) {
  if (!(std::fabs(degree) < T(9.2e18))) return 0;
  const auto n = static_cast<int64_t>(degree);
  switch (f) {
    case SpecialFunction::ChebyshevT: return chebyshev('T', x, n);
    case SpecialFunction::ChebyshevU: return chebyshev('U', x, n);
    case SpecialFunction::ChebyshevV: return chebyshev('V', x, n);
    case SpecialFunction::ChebyshevW: return chebyshev('W', x, n);
    case SpecialFunction::ShiftedChebyshevT: return chebyshev('T', 2 * x - 1, n);
    case SpecialFunction::ShiftedChebyshevU: return chebyshev('U', 2 * x - 1, n);
    case SpecialFunction::ShiftedChebyshevV: return chebyshev('V', 2 * x - 1, n);
    case SpecialFunction::ShiftedChebyshevW: return chebyshev('W', 2 * x - 1, n);
    case SpecialFunction::HermiteH: return hermite(x, n, T(2));
    case SpecialFunction::HermiteHe: return hermite(x, n, T(1));
    case SpecialFunction::LaguerreL: return laguerre(x, n);
    case SpecialFunction::LegendreP: return legendre(x, n);
    default: return std::numeric_limits<T>::quiet_NaN();
  }
}

// d x / d alpha for a draw x of Gamma(alpha, 1), holding its quantile P(alpha, x) fixed (implicit
// reparameterisation): -(dP/dalpha) / (dP/dx). dP/dx is the density; dP/dalpha, which has no
// closed form, is the central difference of Boost's regularised incomplete gamma function,
// extrapolated (Richardson) to an error of O(h^4).
double standard_gamma_grad(double alpha, double x) {
  if (!(alpha > 0) || !(x > 0) || std::isinf(x)) return x == 0 ? 0.0 : kNaN;
  const double density = boost::math::gamma_p_derivative(alpha, x, Quiet());
  if (!(density > 0)) return 0;  // so far in the tail that moving alpha does not move x
  const auto difference = [&](double h) {
    return (boost::math::gamma_p(alpha + h, x, Quiet()) - boost::math::gamma_p(alpha - h, x, Quiet())) / (2 * h);
  };
  const double h = 1e-3 * alpha;
  const double dp_dalpha = (4 * difference(h / 2) - difference(h)) / 3;
  return -dp_dalpha / density;
}

// Each element costs hundreds of cycles or more: small ranges are worth a thread.
constexpr int64_t kGrain = 256;

template <class T>
void evaluate_all(SpecialFunction f, const Tensor& out, const Tensor& x, const Tensor& n) {
  T* y = static_cast<T*>(out.data_ptr());
  const T* a = static_cast<const T*>(x.data_ptr());
  const T* degree = n.defined() ? static_cast<const T*>(n.data_ptr()) : nullptr;
  parallel_for(0, out.numel(), kGrain, [&](int64_t begin, int64_t end) {
    if (f == SpecialFunction::StandardGammaGrad) {
      for (int64_t i = begin; i < end; ++i)
        y[i] = static_cast<T>(standard_gamma_grad(static_cast<double>(a[i]), static_cast<double>(degree[i])));
    } else if (degree) {
      for (int64_t i = begin; i < end; ++i) y[i] = evaluate_polynomial(f, a[i], degree[i]);
    } else {
      for (int64_t i = begin; i < end; ++i) y[i] = static_cast<T>(evaluate(f, static_cast<double>(a[i])));
    }
  });
}

}  // namespace

void CpuBackend::special_function(SpecialFunction f, const Tensor& out, const Tensor& x, const Tensor& n) {
  switch (out.dtype()) {
    case ScalarType::Float32: return evaluate_all<float>(f, out, x, n);
    case ScalarType::Float64: return evaluate_all<double>(f, out, x, n);
    default: fail_unsupported_dtype("special_function", out.dtype());
  }
}

}  // namespace tp::cpu

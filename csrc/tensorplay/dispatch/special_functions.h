#pragma once
// torch.special's functions that have a kernel of their own (cpu/special.cpp, on Boost.Math), and
// the derivative of a gamma draw (what a Gamma distribution's rsample differentiates through): one
// row each, its name and whether it takes a second operand (the degree n of the orthogonal
// polynomials, the draw of the gamma derivative). The rows make the SpecialFunction enum and the name lookup of the op
// (ops/special.cpp); tensorplay/special.py gives each PyTorch's signature, dtypes and derivative.

#include <cstdint>

// clang-format off
#define TP_SPECIAL_FUNCTIONS(_)                                           \
  /* kernel                        name                          binary */ \
  _(AiryAi,                        "airy_ai",                        false) \
  _(BesselJ0,                      "bessel_j0",                      false) \
  _(BesselJ1,                      "bessel_j1",                      false) \
  _(BesselY0,                      "bessel_y0",                      false) \
  _(BesselY1,                      "bessel_y1",                      false) \
  _(ModifiedBesselI0,              "modified_bessel_i0",             false) \
  _(ModifiedBesselI1,              "modified_bessel_i1",             false) \
  _(ModifiedBesselK0,              "modified_bessel_k0",             false) \
  _(ModifiedBesselK1,              "modified_bessel_k1",             false) \
  _(ScaledModifiedBesselK0,        "scaled_modified_bessel_k0",      false) \
  _(ScaledModifiedBesselK1,        "scaled_modified_bessel_k1",      false) \
  _(SphericalBesselJ0,             "spherical_bessel_j0",            false) \
  _(I0e,                           "i0e",                            false) \
  _(I1,                            "i1",                             false) \
  _(I1e,                           "i1e",                            false) \
  _(Erfcx,                         "erfcx",                          false) \
  _(Ndtri,                         "ndtri",                          false) \
  _(LogNdtr,                       "log_ndtr",                       false) \
  _(ChebyshevT,                    "chebyshev_polynomial_t",         true)  \
  _(ChebyshevU,                    "chebyshev_polynomial_u",         true)  \
  _(ChebyshevV,                    "chebyshev_polynomial_v",         true)  \
  _(ChebyshevW,                    "chebyshev_polynomial_w",         true)  \
  _(ShiftedChebyshevT,             "shifted_chebyshev_polynomial_t", true)  \
  _(ShiftedChebyshevU,             "shifted_chebyshev_polynomial_u", true)  \
  _(ShiftedChebyshevV,             "shifted_chebyshev_polynomial_v", true)  \
  _(ShiftedChebyshevW,             "shifted_chebyshev_polynomial_w", true)  \
  _(HermiteH,                      "hermite_polynomial_h",           true)  \
  _(HermiteHe,                     "hermite_polynomial_he",          true)  \
  _(LaguerreL,                     "laguerre_polynomial_l",          true)  \
  _(LegendreP,                     "legendre_polynomial_p",          true)  \
  _(StandardGammaGrad,             "_standard_gamma_grad",           true)
// clang-format on

namespace tp {

enum class SpecialFunction : uint8_t {
#define TP_SPECIAL_ENUM(kernel, name, binary) kernel,
  TP_SPECIAL_FUNCTIONS(TP_SPECIAL_ENUM)
#undef TP_SPECIAL_ENUM
};

}  // namespace tp

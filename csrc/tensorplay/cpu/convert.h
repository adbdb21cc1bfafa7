#pragma once
// Element conversions between dtypes, as PyTorch's casts behave.

#include <concepts>
#include <cstdint>

#include "tensorplay/core/scalar_type.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::cpu {

template <class To, class From>
inline To convert(From v) {
  if constexpr (std::same_as<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To> && is_complex_v<From>) {
    return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
  } else if constexpr (is_complex_v<To>) {
    return To(convert<typename To::value_type>(v));
  } else if constexpr (is_complex_v<From> && std::same_as<To, bool>) {
    return v != From(0);
  } else if constexpr (is_complex_v<From>) {
    return convert<To>(v.real());  // a complex value cast to a real type keeps its real part
  } else if constexpr (std::same_as<To, bool>) {
    return static_cast<opmath_t<From>>(v) != 0;
  } else if constexpr (std::integral<To> && !std::integral<From>) {
    // Floats reach integers through int64, so -1.0 -> uint8 wraps to 255 as in PyTorch.
    return static_cast<To>(static_cast<int64_t>(static_cast<opmath_t<From>>(v)));
  } else if constexpr (std::same_as<To, Half> || std::same_as<To, BFloat16>) {
    return To(static_cast<float>(v));  // through float, as PyTorch does (so double rounds twice)
  } else {
    return static_cast<To>(static_cast<opmath_t<From>>(v));
  }
}

// n contiguous values converted; the 16-bit floats <-> float32 through the SIMD kernels of simd.h.
template <class To, class From>
inline void convert_n(const From* in, To* out, int64_t n) {
  if constexpr (is_reduced_float(scalar_type_of<From>()) && std::same_as<To, float>) {
    simd::widen(in, out, n);
  } else if constexpr (std::same_as<From, float> && is_reduced_float(scalar_type_of<To>())) {
    simd::round_to(in, out, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = convert<To>(in[i]);
  }
}

}  // namespace tp::cpu

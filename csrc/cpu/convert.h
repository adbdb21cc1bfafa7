#pragma once
// Element conversions between dtypes, as PyTorch's casts behave.

#include <concepts>
#include <cstdint>

#include "core/scalar_type.h"

namespace tp::cpu {

template <class To, class From>
inline To convert(From v) {
  if constexpr (std::same_as<To, From>) {
    return v;
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

}  // namespace tp::cpu

#pragma once
// The two 16-bit float storage types. Arithmetic happens in float: a Half or BFloat16 converts
// to float exactly, and float converts back rounding to nearest even, bit for bit as PyTorch's
// CPU kernels do (tested against PyTorch on millions of values in tests/python/test_dtypes.py).

#include <bit>
#include <cstdint>

namespace tp {

// float32 -> bfloat16 bits. NaN becomes 0xFFFF, as in PyTorch's vectorised CPU conversion.
constexpr uint16_t bfloat16_bits_from_float(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFF;
  uint32_t round_to_even = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + round_to_even) >> 16);
}

constexpr float float_from_bfloat16_bits(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// float32 -> float16 bits, as the F16C instruction vcvtps2ph rounds: overflow goes to infinity,
// tiny values to float16 subnormals or zero, NaN stays NaN with the quiet bit set and the top of
// its payload kept.
constexpr uint16_t half_bits_from_float(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  if (abs >= 0x38800000u) {                   // a normal float16 (or overflow)
    uint32_t r = abs - 0x38000000u;           // rebias the exponent from 127 to 15
    r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
    return static_cast<uint16_t>(sign | (r >= 0x7C00u ? 0x7C00u : r));
  }
  uint32_t exponent = abs >> 23;
  if (exponent < 102) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  // A subnormal float16 counts units of 2^-24.
  uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
  uint32_t shift = 126 - exponent;
  uint32_t q = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

constexpr float float_from_half_bits(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) {  // infinity, or NaN made quiet as the F16C instruction vcvtph2ps does
    uint32_t quiet = mantissa ? 0x400000u : 0;
    return std::bit_cast<float>(sign | 0x7F800000u | quiet | (mantissa << 13));
  }
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // A subnormal float16 is a normal float32: shift the mantissa up to its leading one.
  uint32_t shift = std::countl_zero(mantissa) - 21;  // moves the leading one to bit 10
  mantissa = (mantissa << shift) & 0x3FFu;
  return std::bit_cast<float>(sign | ((113u - shift) << 23) | (mantissa << 13));
}

struct Half {
  uint16_t bits = 0;
  Half() = default;
  constexpr Half(float f) : bits(half_bits_from_float(f)) {}
  static constexpr Half from_bits(uint16_t b) { Half h; h.bits = b; return h; }
  constexpr operator float() const { return float_from_half_bits(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  constexpr BFloat16(float f) : bits(bfloat16_bits_from_float(f)) {}
  static constexpr BFloat16 from_bits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
  constexpr operator float() const { return float_from_bfloat16_bits(bits); }
};

}  // namespace tp

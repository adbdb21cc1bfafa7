// The promotion table's properties and 16-bit float conversions.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tensorplay/core/half.h"
#include "tensorplay/core/scalar_type.h"

namespace tp {
namespace {

constexpr ScalarType kAll[] = {ScalarType::UInt8, ScalarType::Int8, ScalarType::Int16, ScalarType::Int32,
                               ScalarType::Int64, ScalarType::Float16, ScalarType::Float32, ScalarType::Float64,
                               ScalarType::Bool, ScalarType::BFloat16};

TEST(Promotion, IsSymmetricAndIdempotent) {
  for (ScalarType a : kAll) {
    EXPECT_EQ(promote_types(a, a), a);
    for (ScalarType b : kAll) EXPECT_EQ(promote_types(a, b), promote_types(b, a));
  }
}

TEST(Promotion, CategoryBeforeWidth) {
  EXPECT_EQ(promote_types(ScalarType::Int64, ScalarType::Float16), ScalarType::Float16);
  EXPECT_EQ(promote_types(ScalarType::Float16, ScalarType::BFloat16), ScalarType::Float32);
  EXPECT_EQ(promote_types(ScalarType::UInt8, ScalarType::Int8), ScalarType::Int16);
  EXPECT_EQ(promote_types(ScalarType::Bool, ScalarType::Int8), ScalarType::Int8);
}

TEST(HalfConversion, RoundTripsEveryHalf) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = float_from_half_bits(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    EXPECT_EQ(half_bits_from_float(f), bits) << "half bits " << bits;
  }
}

TEST(HalfConversion, EdgeCases) {
  EXPECT_EQ(half_bits_from_float(65504.0f), 0x7BFF);
  EXPECT_EQ(half_bits_from_float(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(half_bits_from_float(65519.0f), 0x7BFF);
  EXPECT_EQ(half_bits_from_float(-0.0f), 0x8000);
  EXPECT_EQ(half_bits_from_float(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_bits_from_float(std::ldexp(1.0f, -25)), 0x0000);  // a tie rounds to even (zero)
  EXPECT_EQ(half_bits_from_float(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(half_bits_from_float(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(half_bits_from_float(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
}

TEST(BFloat16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_bits_from_float(1.0f), 0x3F80);
  EXPECT_EQ(bfloat16_bits_from_float(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even below
  EXPECT_EQ(bfloat16_bits_from_float(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, even above
  EXPECT_EQ(bfloat16_bits_from_float(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(bfloat16_bits_from_float(std::numeric_limits<float>::max()), 0x7F80);  // overflows to infinity
  EXPECT_EQ(bfloat16_bits_from_float(std::numeric_limits<float>::quiet_NaN()), 0xFFFF);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = float_from_bfloat16_bits(static_cast<uint16_t>(bits));
    if (!std::isnan(f)) EXPECT_EQ(bfloat16_bits_from_float(f), bits);
  }
}

}  // namespace
}  // namespace tp

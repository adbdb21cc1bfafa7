#include "tensorplay/core/scalar_type.h"

namespace tp {

std::string_view name(ScalarType t) {
  constexpr std::array<std::string_view, kNumScalarTypes> names = {
      "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16", "complex64",
      "complex128"};
  return names[static_cast<int>(t)];
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  // A complex dtype's parts promote with the other dtype (or its parts), and pair up again.
  if (is_complex(a) || is_complex(b)) {
    return complex_type_of(promote_types(real_value_type(a), real_value_type(b)));
  }
  constexpr auto u1 = ScalarType::UInt8, i1 = ScalarType::Int8, i2 = ScalarType::Int16,
                 i4 = ScalarType::Int32, i8 = ScalarType::Int64, f2 = ScalarType::Float16,
                 f4 = ScalarType::Float32, f8 = ScalarType::Float64, b1 = ScalarType::Bool,
                 bf = ScalarType::BFloat16;
  // clang-format off
  constexpr ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /*        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf */
      /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf},
      /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf},
      /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf},
      /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf},
      /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
      /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf},
      /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf},
  };
  // clang-format on
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

void fail_unsupported_dtype(const char* op, ScalarType t) {
  detail::fail(ErrorKind::NotImplemented, "[", op, "] not implemented for '", name(t), "'");
}

}  // namespace tp

#pragma once
// Element types, PyTorch's type promotion, and the one dtype switch that every kernel uses.

#include <array>
#include <complex>
#include <cstdint>
#include <string_view>

#include "tensorplay/core/error.h"
#include "tensorplay/core/half.h"

namespace tp {

// The real dtypes come in PyTorch's order, so the promotion table reads like its; the complex ones
// (pairs of float32 or float64, real part first) follow.
enum class ScalarType : int8_t {
  UInt8, Int8, Int16, Int32, Int64, Float16, Float32, Float64, Bool, BFloat16, ComplexFloat, ComplexDouble
};
inline constexpr int kNumScalarTypes = 12;

constexpr bool is_floating_point(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::Float32 || t == ScalarType::Float64 ||
         t == ScalarType::BFloat16;
}
// 16-bit floats: stored narrow, computed in float32.
constexpr bool is_reduced_float(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16;
}
constexpr bool is_complex(ScalarType t) { return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble; }
// The dtypes gradients flow through.
constexpr bool is_differentiable(ScalarType t) { return is_floating_point(t) || is_complex(t); }
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return !is_floating_point(t) && !is_complex(t) && (include_bool || t != ScalarType::Bool);
}

// The dtype of a complex dtype's two parts, and the complex dtype a floating dtype pairs into
// (tensorplay has no complex32: the 16-bit floats pair into complex64).
constexpr ScalarType real_part_type(ScalarType t) {
  return t == ScalarType::ComplexDouble ? ScalarType::Float64 : ScalarType::Float32;
}
// The dtype of t's values' magnitudes: a complex dtype's parts, a real dtype itself.
constexpr ScalarType real_value_type(ScalarType t) { return is_complex(t) ? real_part_type(t) : t; }
constexpr ScalarType complex_type_of(ScalarType t) {
  return t == ScalarType::Float64 || t == ScalarType::ComplexDouble ? ScalarType::ComplexDouble
                                                                     : ScalarType::ComplexFloat;
}

constexpr int64_t itemsize(ScalarType t) {
  constexpr std::array<int8_t, kNumScalarTypes> sizes = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2, 8, 16};
  return sizes[static_cast<int>(t)];
}

// Python-facing names: "float32", "bfloat16", ...
std::string_view name(ScalarType t);

// PyTorch's promotion of two dtypes: category first (bool < integer < floating < complex), then
// width; float16 with bfloat16 gives float32, complex64 with float64 complex128.
ScalarType promote_types(ScalarType a, ScalarType b);

// ---- C++ element types ----
template <ScalarType T> struct CppTypeOf;
template <> struct CppTypeOf<ScalarType::UInt8> { using type = uint8_t; };
template <> struct CppTypeOf<ScalarType::Int8> { using type = int8_t; };
template <> struct CppTypeOf<ScalarType::Int16> { using type = int16_t; };
template <> struct CppTypeOf<ScalarType::Int32> { using type = int32_t; };
template <> struct CppTypeOf<ScalarType::Int64> { using type = int64_t; };
template <> struct CppTypeOf<ScalarType::Float16> { using type = Half; };
template <> struct CppTypeOf<ScalarType::Float32> { using type = float; };
template <> struct CppTypeOf<ScalarType::Float64> { using type = double; };
template <> struct CppTypeOf<ScalarType::Bool> { using type = bool; };
template <> struct CppTypeOf<ScalarType::BFloat16> { using type = BFloat16; };
template <> struct CppTypeOf<ScalarType::ComplexFloat> { using type = std::complex<float>; };
template <> struct CppTypeOf<ScalarType::ComplexDouble> { using type = std::complex<double>; };
template <ScalarType T> using cpp_type = typename CppTypeOf<T>::type;

template <class T> constexpr ScalarType scalar_type_of();
template <> constexpr ScalarType scalar_type_of<uint8_t>() { return ScalarType::UInt8; }
template <> constexpr ScalarType scalar_type_of<int8_t>() { return ScalarType::Int8; }
template <> constexpr ScalarType scalar_type_of<int16_t>() { return ScalarType::Int16; }
template <> constexpr ScalarType scalar_type_of<int32_t>() { return ScalarType::Int32; }
template <> constexpr ScalarType scalar_type_of<int64_t>() { return ScalarType::Int64; }
template <> constexpr ScalarType scalar_type_of<Half>() { return ScalarType::Float16; }
template <> constexpr ScalarType scalar_type_of<float>() { return ScalarType::Float32; }
template <> constexpr ScalarType scalar_type_of<double>() { return ScalarType::Float64; }
template <> constexpr ScalarType scalar_type_of<bool>() { return ScalarType::Bool; }
template <> constexpr ScalarType scalar_type_of<BFloat16>() { return ScalarType::BFloat16; }
template <> constexpr ScalarType scalar_type_of<std::complex<float>>() { return ScalarType::ComplexFloat; }
template <> constexpr ScalarType scalar_type_of<std::complex<double>>() { return ScalarType::ComplexDouble; }

template <class T> inline constexpr bool is_complex_v = false;
template <class T> inline constexpr bool is_complex_v<std::complex<T>> = true;

// The type arithmetic runs in: float for the 16-bit floats, the type itself otherwise.
template <class T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <class T> using opmath_t = typename OpMath<T>::type;

// ---- the dtype switch ----
// Sets of dtypes a kernel accepts. Complex tensors are computed on their real parts
// (ops/complex.h), so only the kernels that move and convert elements take them.
enum class DTypes {
  All,             // every real dtype
  Numeric,         // all real dtypes but bool
  Floating,        // the four float types
  Integral,        // integers and bool
  AllAndComplex,   // every dtype
};

constexpr bool contains(DTypes set, ScalarType t) {
  switch (set) {
    case DTypes::All: return !is_complex(t);
    case DTypes::Numeric: return t != ScalarType::Bool && !is_complex(t);
    case DTypes::Floating: return is_floating_point(t);
    case DTypes::Integral: return is_integral(t, true);
    case DTypes::AllAndComplex: return true;
  }
  return false;
}

[[noreturn]] void fail_unsupported_dtype(const char* op, ScalarType t);

// Calls fn(T{}) with the C++ element type of `t`; a dtype outside `set` raises
// "[op] not implemented for 'dtype'".
template <DTypes set = DTypes::All, class Fn>
decltype(auto) visit_dtype(const char* op, ScalarType t, Fn&& fn) {
  if (!contains(set, t)) fail_unsupported_dtype(op, t);
  switch (t) {
#define TP_VISIT_CASE(T)                                                 \
  case ScalarType::T:                                                    \
    if constexpr (contains(set, ScalarType::T)) return fn(cpp_type<ScalarType::T>{}); \
    break;
    TP_VISIT_CASE(UInt8)
    TP_VISIT_CASE(Int8)
    TP_VISIT_CASE(Int16)
    TP_VISIT_CASE(Int32)
    TP_VISIT_CASE(Int64)
    TP_VISIT_CASE(Float16)
    TP_VISIT_CASE(Float32)
    TP_VISIT_CASE(Float64)
    TP_VISIT_CASE(Bool)
    TP_VISIT_CASE(BFloat16)
    TP_VISIT_CASE(ComplexFloat)
    TP_VISIT_CASE(ComplexDouble)
#undef TP_VISIT_CASE
  }
  fail_unsupported_dtype(op, t);
}

}  // namespace tp

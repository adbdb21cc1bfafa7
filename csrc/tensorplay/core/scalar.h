#pragma once
// A Python number passed to an op: bool, int, float or complex, kept exactly as given.

#include <complex>
#include <concepts>
#include <cstdint>

#include "tensorplay/core/scalar_type.h"

namespace tp {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  Scalar(double v) : kind_(Kind::Float), d_(v) {}
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(Half v) : Scalar(static_cast<double>(float(v))) {}
  Scalar(BFloat16 v) : Scalar(static_cast<double>(float(v))) {}
  template <class T>
  Scalar(std::complex<T> v) : kind_(Kind::Complex), d_(static_cast<double>(v.real())), imag_(v.imag()) {}

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_complex() const { return kind_ == Kind::Complex; }

  // A complex number converts to a real type through its real part, as a cast does.
  double to_double() const { return has_double() ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return has_double() ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return has_double() ? d_ != 0 || imag_ != 0 : i_ != 0; }
  std::complex<double> to_complex() const { return {to_double(), imag_}; }

  // The value as a C++ element type (converting like a cast to that dtype).
  template <class T>
  T to() const {
    if constexpr (std::same_as<T, bool>) return to_bool();
    else if constexpr (std::integral<T>) return has_double() ? static_cast<T>(static_cast<int64_t>(d_)) : static_cast<T>(i_);
    else if constexpr (std::same_as<T, double>) return to_double();
    else if constexpr (is_complex_v<T>) return T(to_complex());
    else return T(static_cast<float>(to_double()));
  }

  // bool, int64, float64 or complex128: the dtype this number has before promotion.
  ScalarType dtype() const {
    switch (kind_) {
      case Kind::Bool: return ScalarType::Bool;
      case Kind::Int: return ScalarType::Int64;
      case Kind::Float: return ScalarType::Float64;
      case Kind::Complex: return ScalarType::ComplexDouble;
    }
    return ScalarType::Float64;
  }

 private:
  bool has_double() const { return kind_ == Kind::Float || kind_ == Kind::Complex; }

  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
  double imag_ = 0;
};

}  // namespace tp

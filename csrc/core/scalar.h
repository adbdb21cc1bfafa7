#pragma once
// A Python number passed to an op: bool, int or float, kept exactly as given.

#include <concepts>
#include <cstdint>

#include "core/scalar_type.h"

namespace tp {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  Scalar(double v) : kind_(Kind::Float), d_(v) {}
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(Half v) : Scalar(static_cast<double>(float(v))) {}
  Scalar(BFloat16 v) : Scalar(static_cast<double>(float(v))) {}

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0 : i_ != 0; }

  // The value as a C++ element type (converting like a cast to that dtype).
  template <class T>
  T to() const {
    if constexpr (std::same_as<T, bool>) return to_bool();
    else if constexpr (std::integral<T>) return kind_ == Kind::Float ? static_cast<T>(static_cast<int64_t>(d_)) : static_cast<T>(i_);
    else if constexpr (std::same_as<T, double>) return to_double();
    else return T(static_cast<float>(to_double()));
  }

  // bool, int64 or float64: the dtype this number has before promotion.
  ScalarType dtype() const {
    return kind_ == Kind::Bool ? ScalarType::Bool : kind_ == Kind::Int ? ScalarType::Int64 : ScalarType::Float64;
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace tp

#include "tensorplay/core/type_promotion.h"

#include <atomic>

namespace tp {

namespace {
std::atomic<ScalarType> default_dtype{ScalarType::Float32};

void accumulate(std::optional<ScalarType>& tier, ScalarType t) { tier = tier ? promote_types(*tier, t) : t; }

// Combines a higher tier with a lower one: the lower tier only contributes a higher category. A
// complex lower tier pairs up a floating higher one (float64 + 1j is complex128).
std::optional<ScalarType> combine(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (!lower || is_complex(*higher)) return higher;
  if (is_complex(*lower)) return is_floating_point(*higher) ? complex_type_of(*higher) : *lower;
  if (is_floating_point(*higher)) return higher;
  if (*higher == ScalarType::Bool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}
}  // namespace

ScalarType get_default_dtype() { return default_dtype.load(); }

void set_default_dtype(ScalarType dtype) {
  TP_CHECK_TYPE(is_floating_point(dtype), "[set_default_dtype] only floating-point types are supported as the ",
                "default type, got ", name(dtype));
  default_dtype.store(dtype);
}

ResultType& ResultType::add(const Tensor& t) {
  accumulate(t.dim() == 0 ? zero_dim_ : dimensioned_, t.dtype());
  return *this;
}

ResultType& ResultType::add(const Scalar& s) {
  // A Python float counts as the default dtype, a Python complex as the complex type it pairs into.
  accumulate(number_, s.is_floating_point() ? get_default_dtype()
                      : s.is_complex()      ? complex_type_of(get_default_dtype())
                                            : s.dtype());
  return *this;
}

ScalarType ResultType::get() const {
  auto result = combine(dimensioned_, combine(zero_dim_, number_));
  return result ? *result : get_default_dtype();
}

ScalarType result_type(const Tensor& a, const Tensor& b) { return ResultType().add(a).add(b).get(); }
ScalarType result_type(const Tensor& a, const Scalar& b) { return ResultType().add(a).add(b).get(); }

}  // namespace tp

// Elementwise ops of one tensor. Each op states its dtype rule in the table below.

#include <cmath>
#include <limits>

#include "dispatch/backend.h"
#include "ops/elementwise.h"

namespace tp {

namespace {

enum class DTypeRule {
  ToFloat,    // integers and bool compute in the default float dtype (exp, sin, ...)
  Numeric,    // the input's dtype; bool is rejected
  Any,        // the input's dtype, bool included
  Floating,   // floating dtypes only
  Integral,   // integers and bool only
  Predicate,  // any dtype in, bool out
};

struct UnarySpec {
  const char* name;
  UnaryOp op;
  DTypeRule rule;
};

// clang-format off
constexpr UnarySpec kNeg{"neg", UnaryOp::Neg, DTypeRule::Numeric};
constexpr UnarySpec kAbs{"abs", UnaryOp::Abs, DTypeRule::Numeric};
constexpr UnarySpec kSign{"sign", UnaryOp::Sign, DTypeRule::Any};
constexpr UnarySpec kExp{"exp", UnaryOp::Exp, DTypeRule::ToFloat};
constexpr UnarySpec kExp2{"exp2", UnaryOp::Exp2, DTypeRule::ToFloat};
constexpr UnarySpec kExpm1{"expm1", UnaryOp::Expm1, DTypeRule::ToFloat};
constexpr UnarySpec kLog{"log", UnaryOp::Log, DTypeRule::ToFloat};
constexpr UnarySpec kLog2{"log2", UnaryOp::Log2, DTypeRule::ToFloat};
constexpr UnarySpec kLog10{"log10", UnaryOp::Log10, DTypeRule::ToFloat};
constexpr UnarySpec kLog1p{"log1p", UnaryOp::Log1p, DTypeRule::ToFloat};
constexpr UnarySpec kSqrt{"sqrt", UnaryOp::Sqrt, DTypeRule::ToFloat};
constexpr UnarySpec kRsqrt{"rsqrt", UnaryOp::Rsqrt, DTypeRule::ToFloat};
constexpr UnarySpec kReciprocal{"reciprocal", UnaryOp::Reciprocal, DTypeRule::ToFloat};
constexpr UnarySpec kSin{"sin", UnaryOp::Sin, DTypeRule::ToFloat};
constexpr UnarySpec kCos{"cos", UnaryOp::Cos, DTypeRule::ToFloat};
constexpr UnarySpec kTan{"tan", UnaryOp::Tan, DTypeRule::ToFloat};
constexpr UnarySpec kTanh{"tanh", UnaryOp::Tanh, DTypeRule::ToFloat};
constexpr UnarySpec kSigmoid{"sigmoid", UnaryOp::Sigmoid, DTypeRule::ToFloat};
constexpr UnarySpec kErf{"erf", UnaryOp::Erf, DTypeRule::ToFloat};
constexpr UnarySpec kFloor{"floor", UnaryOp::Floor, DTypeRule::Numeric};
constexpr UnarySpec kCeil{"ceil", UnaryOp::Ceil, DTypeRule::Numeric};
constexpr UnarySpec kTrunc{"trunc", UnaryOp::Trunc, DTypeRule::Numeric};
constexpr UnarySpec kRelu{"relu", UnaryOp::Relu, DTypeRule::Numeric};
constexpr UnarySpec kSilu{"silu", UnaryOp::Silu, DTypeRule::Floating};
constexpr UnarySpec kBitwiseNot{"bitwise_not", UnaryOp::BitwiseNot, DTypeRule::Integral};
constexpr UnarySpec kLogicalNot{"logical_not", UnaryOp::LogicalNot, DTypeRule::Predicate};
constexpr UnarySpec kIsnan{"isnan", UnaryOp::IsNan, DTypeRule::Predicate};
constexpr UnarySpec kIsinf{"isinf", UnaryOp::IsInf, DTypeRule::Predicate};
constexpr UnarySpec kIsfinite{"isfinite", UnaryOp::IsFinite, DTypeRule::Predicate};
constexpr UnarySpec kRound{"round", UnaryOp::Round, DTypeRule::Numeric};
constexpr UnarySpec kRoundDecimals{"round", UnaryOp::RoundDecimals, DTypeRule::Floating};
constexpr UnarySpec kGelu{"gelu", UnaryOp::Gelu, DTypeRule::Floating};
constexpr UnarySpec kGeluTanh{"gelu", UnaryOp::GeluTanh, DTypeRule::Floating};
constexpr UnarySpec kSoftplus{"softplus", UnaryOp::Softplus, DTypeRule::Floating};
constexpr UnarySpec kNanToNum{"nan_to_num", UnaryOp::NanToNum, DTypeRule::Numeric};
// clang-format on

// The dtype the op computes and returns, given its input; rejects dtypes outside its rule.
ScalarType compute_dtype(const UnarySpec& spec, ScalarType in) {
  const bool is_bool = in == ScalarType::Bool;
  switch (spec.rule) {
    case DTypeRule::ToFloat: return is_floating_point(in) ? in : get_default_dtype();
    case DTypeRule::Numeric:
      if (spec.op == UnaryOp::Neg)
        TP_CHECK(!is_bool, "[neg] Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                 "to invert a mask, use the `~` or `logical_not()` operator instead.");
      if (is_bool) fail_unsupported_dtype(spec.name, in);
      return in;
    case DTypeRule::Any:
    case DTypeRule::Predicate: return in;
    case DTypeRule::Floating:
      if (!is_floating_point(in)) fail_unsupported_dtype(spec.name, in);
      return in;
    case DTypeRule::Integral:
      if (is_floating_point(in)) fail_unsupported_dtype(spec.name, in);
      return in;
  }
  return in;
}

Tensor run_unary(const UnarySpec& spec, const Tensor& x, double p0 = 0, double p1 = 0, double p2 = 0) {
  ScalarType dtype = compute_dtype(spec, x.dtype());
  Tensor in = to(x, dtype);
  ScalarType out_dtype = spec.rule == DTypeRule::Predicate ? ScalarType::Bool : dtype;
  Tensor out = elementwise_output(x.sizes(), out_dtype, x);
  backend(x.device()).unary(spec.op, out, in, p0, p1, p2);
  return out;
}

Tensor run_unary_(const UnarySpec& spec, const Tensor& self, double p0 = 0, double p1 = 0, double p2 = 0) {
  ScalarType dtype = compute_dtype(spec, self.dtype());
  ScalarType out_dtype = spec.rule == DTypeRule::Predicate ? ScalarType::Bool : dtype;
  check_inplace(spec.name, self, self.sizes(), out_dtype);
  if (out_dtype == self.dtype() && dtype == self.dtype()) {
    backend(self.device()).unary(spec.op, self, self, p0, p1, p2);
    self.bump_version();
    return self;
  }
  return copy_(self, run_unary(spec, self, p0, p1, p2));
}

}  // namespace

#define TP_DEFINE_UNARY(name, spec)                             \
  Tensor name(const Tensor& t) { return run_unary(spec, t); }   \
  Tensor name##_(const Tensor& t) { return run_unary_(spec, t); }
TP_DEFINE_UNARY(neg, kNeg)
TP_DEFINE_UNARY(abs, kAbs)
TP_DEFINE_UNARY(sign, kSign)
TP_DEFINE_UNARY(exp, kExp)
TP_DEFINE_UNARY(exp2, kExp2)
TP_DEFINE_UNARY(expm1, kExpm1)
TP_DEFINE_UNARY(log, kLog)
TP_DEFINE_UNARY(log2, kLog2)
TP_DEFINE_UNARY(log10, kLog10)
TP_DEFINE_UNARY(log1p, kLog1p)
TP_DEFINE_UNARY(sqrt, kSqrt)
TP_DEFINE_UNARY(rsqrt, kRsqrt)
TP_DEFINE_UNARY(reciprocal, kReciprocal)
TP_DEFINE_UNARY(sin, kSin)
TP_DEFINE_UNARY(cos, kCos)
TP_DEFINE_UNARY(tan, kTan)
TP_DEFINE_UNARY(tanh, kTanh)
TP_DEFINE_UNARY(sigmoid, kSigmoid)
TP_DEFINE_UNARY(erf, kErf)
TP_DEFINE_UNARY(floor, kFloor)
TP_DEFINE_UNARY(ceil, kCeil)
TP_DEFINE_UNARY(trunc, kTrunc)
TP_DEFINE_UNARY(relu, kRelu)
TP_DEFINE_UNARY(silu, kSilu)
TP_DEFINE_UNARY(bitwise_not, kBitwiseNot)
TP_DEFINE_UNARY(logical_not, kLogicalNot)
TP_DEFINE_UNARY(isnan, kIsnan)
TP_DEFINE_UNARY(isinf, kIsinf)
TP_DEFINE_UNARY(isfinite, kIsfinite)
#undef TP_DEFINE_UNARY

Tensor round(const Tensor& t, int64_t decimals) {
  return decimals == 0 ? run_unary(kRound, t) : run_unary(kRoundDecimals, t, static_cast<double>(decimals));
}

Tensor round_(const Tensor& t, int64_t decimals) {
  return decimals == 0 ? run_unary_(kRound, t) : run_unary_(kRoundDecimals, t, static_cast<double>(decimals));
}

Tensor gelu(const Tensor& t, std::string_view approximate) {
  TP_CHECK_VALUE(approximate == "none" || approximate == "tanh", "[gelu] approximate argument must be either none "
                 "or tanh, got '", approximate, "'");
  return run_unary(approximate == "tanh" ? kGeluTanh : kGelu, t);
}

Tensor softplus(const Tensor& t, double beta, double threshold) { return run_unary(kSoftplus, t, beta, threshold); }

Tensor nan_to_num(const Tensor& t, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!is_floating_point(t.dtype())) return run_unary(kNanToNum, t);
  // The defaults are the dtype's largest and lowest finite values.
  double largest = visit_dtype<DTypes::Floating>("nan_to_num", t.dtype(), [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, Half>) return 65504.0;
    else if constexpr (std::is_same_v<T, BFloat16>) return static_cast<double>(float(BFloat16::from_bits(0x7F7F)));
    else return static_cast<double>(std::numeric_limits<T>::max());
  });
  return run_unary(kNanToNum, t, nan.value_or(0.0), posinf.value_or(largest), neginf.value_or(-largest));
}

Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  TP_CHECK(min || max, "[clamp] At least one of 'min' or 'max' must not be None");
  ResultType promoted;
  promoted.add(t);
  if (min) promoted.add(*min);
  if (max) promoted.add(*max);
  ScalarType dtype = promoted.get();
  if (dtype == ScalarType::Bool) dtype = ScalarType::Int64;  // PyTorch computes a bool clamp in int64
  constexpr double none = std::numeric_limits<double>::quiet_NaN();
  Tensor in = to(t, dtype);
  Tensor out = elementwise_output(t.sizes(), dtype, t);
  backend(t.device()).unary(UnaryOp::Clamp, out, in, min ? min->to_double() : none, max ? max->to_double() : none);
  return out;
}

Tensor clamp_(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  Tensor result = clamp(t, min, max);
  check_inplace("clamp_", t, t.sizes(), result.dtype());
  return copy_(t, result);
}

Tensor clamp(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  TP_CHECK(min || max, "[clamp] At least one of 'min' or 'max' must not be None");
  Tensor out = t;
  if (min) out = maximum(out, *min);
  if (max) out = minimum(out, *max);
  return out;
}

}  // namespace tp

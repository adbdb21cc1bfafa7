// Elementwise ops of one tensor. Each op is a row of dispatch/unary_ops.h (or, for the ops with
// arguments of their own, of the table below): its dtype rule, the name of its backward node,
// and its derivative, written here with public ops so that it can itself be differentiated
// (double backward).

#include <cmath>
#include <limits>
#include <numbers>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/saved_tensor.h"
#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/complex.h"
#include "tensorplay/ops/elementwise.h"

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

// The gradient of the input, given the gradient g of the output y = op(x).
using Derivative = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y, const UnaryParams& p);

// What a derivative reads, so that only that is saved for backward.
enum Uses : uint8_t { kNothing = 0, kInput = 1, kOutput = 2 };

struct UnarySpec {
  const char* name;
  UnaryOp op;
  DTypeRule rule;
  const char* node = nullptr;  // PyTorch's name for the backward node; null: no gradient
  Derivative derivative = nullptr;
  uint8_t uses = kNothing;
};

namespace d {  // derivatives
using std::numbers::ln2, std::numbers::ln10, std::numbers::pi;
Tensor zero(const Tensor& g, const Tensor&, const Tensor&, const UnaryParams&) { return zeros_like(g); }
Tensor neg(const Tensor& g, const Tensor&, const Tensor&, const UnaryParams&) { return tp::neg(g); }
Tensor abs(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return mul(g, sign(x)); }
Tensor exp(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, y); }
Tensor exp2(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, mul(y, ln2)); }
Tensor expm1(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, add(y, 1)); }
Tensor log(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return div(g, x); }
Tensor log2(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return div(g, mul(x, ln2)); }
Tensor log10(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return div(g, mul(x, ln10)); }
Tensor log1p(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return div(g, add(x, 1)); }
Tensor sqrt(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return div(g, mul(y, 2)); }
Tensor rsqrt(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, mul(pow(y, 3), -0.5)); }
Tensor reciprocal(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, tp::neg(mul(y, y))); }
Tensor sin(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return mul(g, cos(x)); }
Tensor cos(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return mul(g, tp::neg(tp::sin(x))); }
Tensor tan(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, add(mul(y, y), 1)); }
// d/dx asin(x) = 1 / sqrt(1 - x^2), acos = -asin', atan = 1 / (1 + x^2).
Tensor asin(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) {
  return div(g, tp::sqrt(rsub(mul(x, x), 1)));
}
Tensor acos(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) {
  return tp::neg(div(g, tp::sqrt(rsub(mul(x, x), 1))));
}
Tensor atan(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return div(g, add(mul(x, x), 1)); }
Tensor sinh(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return mul(g, tp::cosh(x)); }
Tensor cosh(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return mul(g, tp::sinh(x)); }
// y = erfinv(x) means x = erf(y), so dy/dx = 1 / erf'(y) = sqrt(pi) / 2 * exp(y^2).
Tensor erfinv(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) {
  return mul(g, mul(tp::exp(mul(y, y)), std::sqrt(pi) / 2));
}
Tensor tanh(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, rsub(mul(y, y), 1)); }
Tensor sigmoid(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return mul(g, mul(y, rsub(y, 1))); }
Tensor erf(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) {
  return mul(g, mul(tp::exp(tp::neg(mul(x, x))), 2 / std::sqrt(pi)));
}
Tensor relu(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams&) { return threshold_backward(g, y, 0); }
Tensor silu(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) {
  Tensor s = tp::sigmoid(x);
  return mul(g, mul(s, add(mul(x, rsub(s, 1)), 1)));
}
Tensor gelu(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return gelu_backward(g, x, "none"); }
Tensor gelu_tanh(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return gelu_backward(g, x, "tanh"); }
Tensor softplus(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams& p) {
  const auto [beta, threshold] = std::get<unary::Softplus>(p);
  Tensor scaled = mul(x, beta);
  return where(gt(scaled, threshold), g, mul(g, tp::sigmoid(scaled)));
}
Tensor nan_to_num(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams&) { return mul(g, isfinite(x)); }
Tensor clamp(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams& p) {
  // Where lo <= x <= hi (a missing bound is infinite; a NaN bound or a NaN x passes nothing).
  const auto [lo, hi] = std::get<unary::Bounds>(p);
  return mul(g, logical_and(ge(x, lo), le(x, hi)));
}
Tensor pow(const Tensor& g, const Tensor& x, const Tensor&, const UnaryParams& p) {
  const double e = std::get<unary::Exponent>(p).exponent;
  if (e == 0) return zeros_like(g);
  return mul(g, mul(tp::pow(x, e - 1), e));
}
Tensor rpow(const Tensor& g, const Tensor&, const Tensor& y, const UnaryParams& p) {
  return mul(g, mul(y, std::log(std::get<unary::Base>(p).base)));
}
}  // namespace d

#define TP_UNARY_SPEC(op, kernel, rule, node, derivative, reads) \
  constexpr UnarySpec k##kernel{#op, UnaryOp::kernel, DTypeRule::rule, node, derivative, reads};
TP_UNARY_OPS(TP_UNARY_SPEC)
#undef TP_UNARY_SPEC
// The ops with arguments of their own.
// clang-format off
constexpr UnarySpec kRound{"round", UnaryOp::Round, DTypeRule::Numeric, "RoundBackward0", d::zero};
constexpr UnarySpec kRoundDecimals{"round", UnaryOp::RoundDecimals, DTypeRule::Floating, "RoundBackward1", d::zero};
constexpr UnarySpec kGelu{"gelu", UnaryOp::Gelu, DTypeRule::Floating, "GeluBackward0", d::gelu, kInput};
constexpr UnarySpec kGeluTanh{"gelu", UnaryOp::GeluTanh, DTypeRule::Floating, "GeluBackward0", d::gelu_tanh, kInput};
constexpr UnarySpec kSoftplus{"softplus", UnaryOp::Softplus, DTypeRule::Floating, "SoftplusBackward0", d::softplus, kInput};
constexpr UnarySpec kNanToNum{"nan_to_num", UnaryOp::NanToNum, DTypeRule::Numeric, "NanToNumBackward0", d::nan_to_num, kInput};
constexpr UnarySpec kClamp{"clamp", UnaryOp::Clamp, DTypeRule::Numeric, "ClampBackward1", d::clamp, kInput};
constexpr UnarySpec kPow{"pow", UnaryOp::PowScalar, DTypeRule::Numeric, "PowBackward0", d::pow, kInput};
constexpr UnarySpec kRPow{"pow", UnaryOp::RPowScalar, DTypeRule::Numeric, "PowBackward2", d::rpow, kOutput};
// clang-format on

class UnaryBackward final : public autograd::Node {
 public:
  UnaryBackward(const UnarySpec& spec, const UnaryParams& params) : spec_(spec), params_(params) {}
  std::string name() const override { return spec_.node; }
  TensorList apply(TensorList&& grads) override {
    return {spec_.derivative(grads[0], input.unpack(*this), output.unpack(*this), params_)};
  }
  void release_saved() override {
    input.release();
    output.release();
  }
  autograd::SavedTensor input, output;

 private:
  const UnarySpec& spec_;
  UnaryParams params_;
};

// The dtype the op computes and returns, given its input; rejects dtypes outside its rule.
ScalarType compute_dtype(const UnarySpec& spec, ScalarType in) {
  const bool is_bool = in == ScalarType::Bool;
  switch (spec.rule) {
    case DTypeRule::ToFloat:
      return is_differentiable(in) ? in : get_default_dtype();
    case DTypeRule::Numeric:
      if (spec.op == UnaryOp::Neg)
        TP_CHECK(!is_bool,
                 "[neg] Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                 "to invert a mask, use the `~` or `logical_not()` operator instead.");
      if (spec.op == UnaryOp::Relu) TP_CHECK(!is_bool, "[relu] Boolean inputs not supported for relu");
      if (is_bool) fail_unsupported_dtype(spec.name, in);
      return in;
    case DTypeRule::Any:
    case DTypeRule::Predicate:
      return in;
    case DTypeRule::Floating:
      if (!is_floating_point(in)) fail_unsupported_dtype(spec.name, in);
      return in;
    case DTypeRule::Integral:
      if (!is_integral(in, true)) fail_unsupported_dtype(spec.name, in);
      return in;
  }
  return in;
}

// Whether f(0) == 0: then f of a sparse tensor is f of its stored elements, and sparse.
bool preserves_zero(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Sign: case UnaryOp::Expm1: case UnaryOp::Log1p:
    case UnaryOp::Sqrt: case UnaryOp::Sin: case UnaryOp::Tan: case UnaryOp::Asin: case UnaryOp::Atan:
    case UnaryOp::Sinh: case UnaryOp::Tanh: case UnaryOp::Erf: case UnaryOp::Erfinv: case UnaryOp::Floor:
    case UnaryOp::Ceil: case UnaryOp::Trunc: case UnaryOp::Round: case UnaryOp::RoundDecimals: case UnaryOp::Relu:
    case UnaryOp::IsNan: case UnaryOp::IsInf: return true;
    default: return false;
  }
}

Tensor run_unary(const UnarySpec& spec, const Tensor& x, ScalarType dtype, const UnaryParams& p);

// f of a sparse tensor: of its coalesced elements (f(a) + f(b) is not f(a + b) where an index
// repeats), but for negation, which is linear.
Tensor sparse_unary(const UnarySpec& spec, const Tensor& x, ScalarType dtype, const UnaryParams& p) {
  TP_CHECK_KIND(ErrorKind::NotImplemented, preserves_zero(spec.op), "[", spec.name, "] ", spec.name,
                "(0) is not 0, so it has no sparse result: Tensor.to_dense() gives the dense tensor to apply it to");
  const Tensor c = spec.op == UnaryOp::Neg ? x : coalesce(x);
  return sparse_coo_tensor_unsafe(sparse_indices(c), run_unary(spec, sparse_values(c), dtype, p), c.sizes(),
                                  c.impl()->is_coalesced());
}

Tensor run_unary(const UnarySpec& spec, const Tensor& x, ScalarType dtype, const UnaryParams& p = {}) {
  if (x.is_sparse()) [[unlikely]]
    return sparse_unary(spec, x, dtype, p);
  if (is_complex(dtype)) return complex_unary(spec.op, spec.name, x);
  autograd::Record<UnaryBackward> record({spec.node ? &x : nullptr}, spec, p);
  Tensor in = to(x, dtype);
  ScalarType out_dtype = spec.rule == DTypeRule::Predicate ? ScalarType::Bool : dtype;
  Tensor out = elementwise_output(x.sizes(), out_dtype, x);
  backend(x.device()).unary(spec.op, out, in, p);
  record.finish(out);
  if (record) {
    if (spec.uses & kInput) record->input = autograd::SavedTensor(x, false);
    if (spec.uses & kOutput) record->output = autograd::SavedTensor(out, true);
  }
  return out;
}

Tensor run_unary(const UnarySpec& spec, const Tensor& x, const UnaryParams& p = {}) {
  return run_unary(spec, x, compute_dtype(spec, x.dtype()), p);
}

Tensor run_unary_(const UnarySpec& spec, const Tensor& self, const UnaryParams& p = {}) {
  check_no_internal_overlap(spec.name, self);  // before the dtype's support, as in PyTorch
  ScalarType dtype = compute_dtype(spec, self.dtype());
  ScalarType out_dtype = spec.rule == DTypeRule::Predicate ? ScalarType::Bool : dtype;
  check_inplace(spec.name, self, self.sizes(), out_dtype);
  TP_CHECK(!(is_complex(dtype) && spec.op == UnaryOp::Abs), "[abs_] In-place abs is not supported for complex tensors.");
  if (autograd::records_inplace(self, {})) {
    // Backward may save the input, which is about to be overwritten: then it reads a copy.
    Tensor input = (spec.uses & kInput) ? clone(self) : self;
    return autograd::assign_inplace(self, run_unary(spec, input, dtype, p), std::string(spec.name) + "_");
  }
  if (out_dtype != self.dtype() || dtype != self.dtype() || is_complex(dtype))
    return copy_(self, run_unary(spec, self, dtype, p));
  backend(self.device()).unary(spec.op, self, self, p);
  self.bump_version();
  return self;
}

}  // namespace

#define TP_DEFINE_UNARY(op, kernel, ...) \
  Tensor op(const Tensor& t) {           \
    TP_OP_ENTRY(op, t);                  \
    return run_unary(k##kernel, t);      \
  }                                      \
  Tensor op##_(const Tensor& t) { return run_unary_(k##kernel, t); }
TP_UNARY_OPS(TP_DEFINE_UNARY)
#undef TP_DEFINE_UNARY

Tensor round(const Tensor& t, int64_t decimals) {
  TP_OP_ENTRY(round, t, decimals);
  if (decimals == 0) return run_unary(kRound, t);
  return run_unary(kRoundDecimals, t, unary::Decimals{decimals});
}

Tensor round_decimals(const Tensor& t, int64_t decimals) {
  return decimals != 0 ? round(t, decimals) : run_unary(kRoundDecimals, t, unary::Decimals{0});
}

Tensor round_decimals_(const Tensor& t, int64_t decimals) {
  return run_unary_(kRoundDecimals, t, unary::Decimals{decimals});
}

Tensor round_(const Tensor& t, int64_t decimals) {
  if (decimals == 0) return run_unary_(kRound, t);
  return run_unary_(kRoundDecimals, t, unary::Decimals{decimals});
}

Tensor gelu(const Tensor& t, std::string_view approximate) {
  TP_OP_ENTRY(gelu, t, approximate);
  // A RuntimeError, as in PyTorch.
  TP_CHECK(approximate == "none" || approximate == "tanh",
           "[gelu] approximate argument must be either none or tanh, got '", approximate, "'");
  return run_unary(approximate == "tanh" ? kGeluTanh : kGelu, t);
}

Tensor softplus(const Tensor& t, double beta, double threshold) {
  TP_OP_ENTRY(softplus, t, beta, threshold);
  return run_unary(kSoftplus, t, unary::Softplus{beta, threshold});
}

Tensor nan_to_num(const Tensor& t, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  TP_OP_ENTRY(nan_to_num, t, nan, posinf, neginf);
  if (t.dtype() == ScalarType::Bool) return clone(t);
  if (!is_floating_point(t.dtype())) return run_unary(kNanToNum, t);
  // The defaults are the dtype's largest and lowest finite values.
  double largest = visit_dtype<DTypes::Floating>("nan_to_num", t.dtype(), [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, Half>)
      return 65504.0;
    else if constexpr (std::is_same_v<T, BFloat16>)
      return static_cast<double>(float(BFloat16::from_bits(0x7F7F)));
    else
      return static_cast<double>(std::numeric_limits<T>::max());
  });
  return run_unary(kNanToNum, t, unary::Replacements{nan.value_or(0.0), posinf.value_or(largest), neginf.value_or(-largest)});
}

Tensor nan_to_num_(const Tensor& t, std::optional<double> nan, std::optional<double> posinf,
                   std::optional<double> neginf) {
  if (is_integral(t.dtype(), true)) return t;  // nothing to replace: PyTorch returns before any check
  check_no_internal_overlap("nan_to_num_", t);
  return copy_(t, nan_to_num(t, nan, posinf, neginf));
}

Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  TP_OP_ENTRY(clamp, t, min, max);
  TP_CHECK(min || max, "[clamp] At least one of 'min' or 'max' must not be None");
  ResultType promoted;
  promoted.add(t);
  if (min) promoted.add(*min);
  if (max) promoted.add(*max);
  ScalarType dtype = promoted.get();
  if (dtype == ScalarType::Bool) dtype = ScalarType::Int64;  // PyTorch clamps bool in int64
  // Bounds convert to the dtype as a cast would (uint8 clamp(min=-1) means 255), as in PyTorch. A
  // missing bound is an infinite one; a NaN bound makes every element NaN.
  constexpr double inf = std::numeric_limits<double>::infinity();
  auto bound = [&](const std::optional<Scalar>& b, double missing) {
    if (!b) return missing;
    check_fits("clamp", *b, dtype);
    return is_floating_point(dtype) ? b->to_double() : scalar_tensor(*b, dtype).item().to_double();
  };
  return run_unary(kClamp, t, dtype, unary::Bounds{bound(min, -inf), bound(max, inf)});
}

Tensor clamp_(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  Shape shape(t.sizes().begin(), t.sizes().end());  // the result must fit t: checked first, by clamp_'s name
  if (min) shape = broadcast_shapes("clamp_", shape, min->sizes());
  if (max) shape = broadcast_shapes("clamp_", shape, max->sizes());
  check_inplace("clamp_", t, shape, t.dtype());
  bool records = autograd::records_inplace(t, {min ? &*min : nullptr, max ? &*max : nullptr});
  Tensor result = clamp(t, min, max);
  check_inplace("clamp_", t, t.sizes(), result.dtype());
  if (records) return autograd::assign_inplace(t, result, "clamp_");
  return copy_(t, result);
}

Tensor clamp_(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  check_no_internal_overlap("clamp_", t);
  bool records = autograd::records_inplace(t, {});
  Tensor result = clamp(records ? clone(t) : t, min, max);  // backward reads the input: keep a copy
  check_inplace("clamp_", t, t.sizes(), result.dtype());
  if (records) return autograd::assign_inplace(t, result, "clamp_");
  return copy_(t, result);
}

Tensor clamp(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  TP_OP_ENTRY(clamp, t, min, max);
  TP_CHECK(min || max, "[clamp] At least one of 'min' or 'max' must not be None");
  // The shapes are checked first, by clamp's name: maximum and minimum below would name themselves.
  Shape shape(t.sizes().begin(), t.sizes().end());
  if (min) shape = broadcast_shapes("clamp", shape, min->sizes());
  if (max) shape = broadcast_shapes("clamp", shape, max->sizes());
  ResultType promoted;
  promoted.add(t);
  if (min) promoted.add(*min);
  if (max) promoted.add(*max);
  const ScalarType dtype = promoted.get();
  if (min && max && dtype == ScalarType::Bool) fail_unsupported_dtype("clamp", ScalarType::Bool);
  // Each operand in the dtype of all three first: maximum(t, min) alone would promote without max
  // (and a 0-dim t would count as a full tensor in the second step). The casts round nothing that
  // maximum and minimum would not.
  Tensor out = to(t, dtype);
  if (min) out = maximum(out, to(*min, dtype));
  if (max) out = minimum(out, to(*max, dtype));
  return out;
}

// pow with a number exponent is unary (x * x for 2, sqrt for 0.5); so is a number base.
Tensor pow(const Tensor& a, const Scalar& exponent) {
  TP_OP_ENTRY(pow, a, exponent);
  ScalarType dtype = result_type(a, exponent);
  if (dtype == ScalarType::Bool) fail_unsupported_dtype("pow", dtype);
  if (is_complex(dtype)) return complex_pow(to(a, dtype), exponent);
  TP_CHECK(is_floating_point(dtype) || exponent.is_floating_point() || exponent.to_int() >= 0,
           "[pow] Integers to negative integer powers are not allowed.");
  return run_unary(kPow, a, dtype, unary::Exponent{exponent.to_double()});
}

Tensor pow_(const Tensor& a, const Scalar& exponent) {
  check_no_internal_overlap("pow_", a);
  bool records = autograd::records_inplace(a, {});
  Tensor result = pow(records ? clone(a) : a, exponent);  // backward reads the input: keep a copy
  check_inplace("pow_", a, a.sizes(), result.dtype());
  if (records) return autograd::assign_inplace(a, result, "pow_");
  return copy_(a, result);
}

Tensor pow(const Scalar& base, const Tensor& exponent) {
  TP_OP_ENTRY(pow, base, exponent);
  ScalarType dtype = result_type(exponent, base);
  if (dtype == ScalarType::Bool) fail_unsupported_dtype("pow", dtype);
  if (is_complex(dtype)) return complex_pow(base, to(exponent, dtype));
  return run_unary(kRPow, exponent, dtype, unary::Base{base.to_double()});
}

}  // namespace tp

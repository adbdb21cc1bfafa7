// Elementwise ops of two or three tensors (or a tensor and a number). Each op states its dtype
// rule in the table below; promotion follows core/type_promotion.h.
//
// A number, or a 0-dim tensor in second place, reaches the kernel as a scalar held in the op's
// compute precision: bfloat16 * 0.1 multiplies by the float 0.1, not by 0.1 rounded to
// bfloat16, exactly as PyTorch's CPU kernels do.

#include <algorithm>

#include "dispatch/backend.h"
#include "ops/elementwise.h"

namespace tp {

namespace {

enum class DTypeRule {
  Promote,    // the promoted dtype, bool included
  NoBool,     // the promoted dtype; bool is not implemented
  ToFloat,    // the promoted dtype, integers and bool computing in the default float dtype
  Integral,   // integers and bool only
  Compare,    // computes in the promoted dtype, writes bool
};

struct BinarySpec {
  const char* name;
  BinaryOp op;
  DTypeRule rule;
};

// clang-format off
constexpr BinarySpec kAdd{"add", BinaryOp::Add, DTypeRule::Promote};
constexpr BinarySpec kSub{"sub", BinaryOp::Sub, DTypeRule::NoBool};
constexpr BinarySpec kMul{"mul", BinaryOp::Mul, DTypeRule::Promote};
constexpr BinarySpec kDiv{"div", BinaryOp::Div, DTypeRule::ToFloat};
constexpr BinarySpec kDivTrunc{"div", BinaryOp::DivTrunc, DTypeRule::NoBool};
constexpr BinarySpec kDivFloor{"div", BinaryOp::DivFloor, DTypeRule::NoBool};
constexpr BinarySpec kFloorDivide{"floor_divide", BinaryOp::DivFloor, DTypeRule::NoBool};
constexpr BinarySpec kRemainder{"remainder", BinaryOp::Remainder, DTypeRule::NoBool};
constexpr BinarySpec kPow{"pow", BinaryOp::Pow, DTypeRule::NoBool};
constexpr BinarySpec kAtan2{"atan2", BinaryOp::Atan2, DTypeRule::ToFloat};
constexpr BinarySpec kMaximum{"maximum", BinaryOp::Maximum, DTypeRule::Promote};
constexpr BinarySpec kMinimum{"minimum", BinaryOp::Minimum, DTypeRule::Promote};
constexpr BinarySpec kBitwiseAnd{"bitwise_and", BinaryOp::BitwiseAnd, DTypeRule::Integral};
constexpr BinarySpec kBitwiseOr{"bitwise_or", BinaryOp::BitwiseOr, DTypeRule::Integral};
constexpr BinarySpec kBitwiseXor{"bitwise_xor", BinaryOp::BitwiseXor, DTypeRule::Integral};
constexpr BinarySpec kEq{"eq", BinaryOp::Eq, DTypeRule::Compare};
constexpr BinarySpec kNe{"ne", BinaryOp::Ne, DTypeRule::Compare};
constexpr BinarySpec kLt{"lt", BinaryOp::Lt, DTypeRule::Compare};
constexpr BinarySpec kLe{"le", BinaryOp::Le, DTypeRule::Compare};
constexpr BinarySpec kGt{"gt", BinaryOp::Gt, DTypeRule::Compare};
constexpr BinarySpec kGe{"ge", BinaryOp::Ge, DTypeRule::Compare};
constexpr BinarySpec kLogicalAnd{"logical_and", BinaryOp::LogicalAnd, DTypeRule::Compare};
constexpr BinarySpec kLogicalOr{"logical_or", BinaryOp::LogicalOr, DTypeRule::Compare};
constexpr BinarySpec kLogicalXor{"logical_xor", BinaryOp::LogicalXor, DTypeRule::Compare};
// clang-format on

ScalarType compute_dtype(const BinarySpec& spec, ScalarType promoted) {
  switch (spec.rule) {
    case DTypeRule::Promote:
    case DTypeRule::Compare: return promoted;
    case DTypeRule::NoBool:
      if (spec.op == BinaryOp::Sub)
        TP_CHECK(promoted != ScalarType::Bool, "[sub] Subtraction, the `-` operator, with two bool tensors is not "
                 "supported. Use the `^` or `logical_xor()` operator instead.");
      if (promoted == ScalarType::Bool) fail_unsupported_dtype(spec.name, promoted);
      return promoted;
    case DTypeRule::ToFloat: return is_floating_point(promoted) ? promoted : get_default_dtype();
    case DTypeRule::Integral:
      if (is_floating_point(promoted)) fail_unsupported_dtype(spec.name, promoted);
      return promoted;
  }
  return promoted;
}

ScalarType result_dtype(const BinarySpec& spec, ScalarType compute) {
  return spec.rule == DTypeRule::Compare ? ScalarType::Bool : compute;
}

bool integer_division(const BinarySpec& spec, ScalarType dtype) {
  return !is_floating_point(dtype) &&
         (spec.op == BinaryOp::DivTrunc || spec.op == BinaryOp::DivFloor || spec.op == BinaryOp::Remainder);
}

void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha) {
  TP_CHECK(!(alpha.is_floating_point() && !is_floating_point(dtype)), "[", op, "] For integral input tensors, "
           "argument alpha must not be a floating point number.");
  TP_CHECK(!(alpha.is_bool() && dtype != ScalarType::Bool), "[", op, "] Boolean alpha only supported for Boolean results.");
}

// out = a OP b, where b is a number applied in the compute precision.
Tensor binary_scalar_into(const BinarySpec& spec, const Tensor& out, const Tensor& a, const Scalar& b, ScalarType dtype) {
  TP_CHECK(!integer_division(spec, dtype) || b.to_int() != 0, "[", spec.name, "] ZeroDivisionError");
  backend(a.device()).binary_scalar(spec.op, out, to(a, dtype), b);
  return out;
}

// out = a OP alpha * b over the broadcast shape.
Tensor binary_into(const BinarySpec& spec, const Tensor& out, const Tensor& a, const Tensor& b, ScalarType dtype,
                    const Scalar& alpha) {
  if (b.dim() == 0 && b.device().is_cpu() && std::ranges::equal(a.sizes(), out.sizes())) {
    Scalar value = b.item();
    if (alpha.to_double() != 1) value = Scalar(value.to_double() * alpha.to_double());
    if (is_floating_point(dtype) || !value.is_floating_point()) return binary_scalar_into(spec, out, a, value, dtype);
  }
  if (integer_division(spec, dtype)) {
    TP_CHECK(!any(eq(b, 0)).item<bool>(), "[", spec.name, "] ZeroDivisionError");
  }
  Tensor x = unaliased(expand(to(a, dtype), out.sizes()), out);
  Tensor y = unaliased(expand(to(b, dtype), out.sizes()), out);
  backend(out.device()).binary(spec.op, out, x, y, alpha);
  return out;
}

Tensor binary(const BinarySpec& spec, const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
  TP_CHECK(a.device() == b.device(), "[", spec.name, "] Expected all tensors to be on the same device, but found at "
           "least two devices, ", a.device().str(), " and ", b.device().str(), "!");
  ScalarType dtype = compute_dtype(spec, result_type(a, b));
  Shape shape = broadcast_shapes(spec.name, a.sizes(), b.sizes());
  Tensor out = elementwise_output(shape, result_dtype(spec, dtype), std::ranges::equal(a.sizes(), shape) ? a : b);
  return binary_into(spec, out, a, b, dtype, alpha);
}

Tensor binary(const BinarySpec& spec, const Tensor& a, const Scalar& b) {
  ScalarType dtype = compute_dtype(spec, result_type(a, b));
  Tensor out = elementwise_output(a.sizes(), result_dtype(spec, dtype), a);
  return binary_scalar_into(spec, out, a, b, dtype);
}

Tensor binary_(const BinarySpec& spec, const Tensor& self, const Tensor& b, const Scalar& alpha = 1) {
  ScalarType dtype = compute_dtype(spec, result_type(self, b));
  check_inplace(spec.name, self, broadcast_shapes(spec.name, self.sizes(), b.sizes()), result_dtype(spec, dtype));
  if (result_dtype(spec, dtype) != self.dtype()) return copy_(self, binary(spec, self, b, alpha));
  binary_into(spec, self, self, b, dtype, alpha);
  self.bump_version();
  return self;
}

Tensor binary_(const BinarySpec& spec, const Tensor& self, const Scalar& b) {
  ScalarType dtype = compute_dtype(spec, result_type(self, b));
  check_inplace(spec.name, self, self.sizes(), result_dtype(spec, dtype));
  if (result_dtype(spec, dtype) != self.dtype()) return copy_(self, binary(spec, self, b));
  binary_scalar_into(spec, self, self, b, dtype);
  self.bump_version();
  return self;
}

// a + alpha * b with a number b folds alpha into it.
Scalar scaled(const Scalar& b, const Scalar& alpha) {
  if (alpha.to_double() == 1) return b;
  if (b.is_floating_point() || alpha.is_floating_point()) return Scalar(b.to_double() * alpha.to_double());
  return Scalar(b.to_int() * alpha.to_int());
}

const BinarySpec& division(std::optional<std::string_view> mode) {
  if (!mode) return kDiv;
  TP_CHECK_VALUE(*mode == "trunc" || *mode == "floor", "[div] expected rounding_mode to be one of None, 'trunc', "
                 "or 'floor' but found '", *mode, "'");
  return *mode == "trunc" ? kDivTrunc : kDivFloor;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_alpha("add", result_type(a, b), alpha);
  return binary(kAdd, a, b, alpha);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_alpha("add", result_type(a, b), alpha);
  return binary(kAdd, a, scaled(b, alpha));
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_alpha("sub", result_type(a, b), alpha);
  return binary(kSub, a, b, alpha);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_alpha("sub", result_type(a, b), alpha);
  return binary(kSub, a, scaled(b, alpha));
}
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return sub(scalar_tensor(b, result_type(a, b), a.device()), a, alpha);
}
Tensor add_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_alpha("add_", result_type(a, b), alpha);
  return binary_(kAdd, a, b, alpha);
}
Tensor add_(const Tensor& a, const Scalar& b, const Scalar& alpha) { return binary_(kAdd, a, scaled(b, alpha)); }
Tensor sub_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_alpha("sub_", result_type(a, b), alpha);
  return binary_(kSub, a, b, alpha);
}
Tensor sub_(const Tensor& a, const Scalar& b, const Scalar& alpha) { return binary_(kSub, a, scaled(b, alpha)); }

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) { return binary(division(mode), a, b); }
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) { return binary(division(mode), a, b); }
Tensor div_(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) { return binary_(division(mode), a, b); }
Tensor div_(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) { return binary_(division(mode), a, b); }

#define TP_DEFINE_BINARY(name, spec)                                                   \
  Tensor name(const Tensor& a, const Tensor& b) { return binary(spec, a, b); }        \
  Tensor name(const Tensor& a, const Scalar& b) { return binary(spec, a, b); }        \
  Tensor name##_(const Tensor& a, const Tensor& b) { return binary_(spec, a, b); }          \
  Tensor name##_(const Tensor& a, const Scalar& b) { return binary_(spec, a, b); }
TP_DEFINE_BINARY(mul, kMul)
TP_DEFINE_BINARY(floor_divide, kFloorDivide)
TP_DEFINE_BINARY(remainder, kRemainder)
TP_DEFINE_BINARY(atan2, kAtan2)
TP_DEFINE_BINARY(maximum, kMaximum)
TP_DEFINE_BINARY(minimum, kMinimum)
TP_DEFINE_BINARY(bitwise_and, kBitwiseAnd)
TP_DEFINE_BINARY(bitwise_or, kBitwiseOr)
TP_DEFINE_BINARY(bitwise_xor, kBitwiseXor)
TP_DEFINE_BINARY(eq, kEq)
TP_DEFINE_BINARY(ne, kNe)
TP_DEFINE_BINARY(lt, kLt)
TP_DEFINE_BINARY(le, kLe)
TP_DEFINE_BINARY(gt, kGt)
TP_DEFINE_BINARY(ge, kGe)
TP_DEFINE_BINARY(logical_and, kLogicalAnd)
TP_DEFINE_BINARY(logical_or, kLogicalOr)
TP_DEFINE_BINARY(logical_xor, kLogicalXor)
#undef TP_DEFINE_BINARY

// pow with a number exponent runs as a unary kernel (x * x for 2, sqrt for 0.5).
Tensor pow(const Tensor& a, const Tensor& b) { return binary(kPow, a, b); }
Tensor pow_(const Tensor& a, const Tensor& b) { return binary_(kPow, a, b); }

Tensor pow(const Tensor& a, const Scalar& exponent) {
  ScalarType dtype = compute_dtype(kPow, result_type(a, exponent));
  TP_CHECK(is_floating_point(dtype) || exponent.is_floating_point() || exponent.to_int() >= 0,
           "[pow] Integers to negative integer powers are not allowed.");
  Tensor out = elementwise_output(a.sizes(), dtype, a);
  backend(a.device()).unary(UnaryOp::PowScalar, out, to(a, dtype), exponent.to_double());
  return out;
}

Tensor pow_(const Tensor& a, const Scalar& exponent) {
  Tensor result = pow(a, exponent);
  check_inplace("pow_", a, a.sizes(), result.dtype());
  return copy_(a, result);
}

Tensor pow(const Scalar& base, const Tensor& exponent) {
  ScalarType dtype = compute_dtype(kPow, result_type(exponent, base));
  Tensor out = elementwise_output(exponent.sizes(), dtype, exponent);
  backend(exponent.device()).unary(UnaryOp::RPowScalar, out, to(exponent, dtype), base.to_double());
  return out;
}

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  TP_CHECK(self.dtype() == end.dtype() && self.dtype() == weight.dtype(), "[lerp] expected dtype ", name(self.dtype()),
           " for `end` and `weight` but got dtypes ", name(end.dtype()), " and ", name(weight.dtype()));
  if (!is_floating_point(self.dtype())) fail_unsupported_dtype("lerp", self.dtype());
  Shape shape = broadcast_shapes("lerp", broadcast_shapes("lerp", self.sizes(), end.sizes()), weight.sizes());
  Tensor out = elementwise_output(shape, self.dtype(), self);
  backend(self.device()).ternary(TernaryOp::Lerp, out, expand(self, shape), expand(end, shape), expand(weight, shape), 1);
  return out;
}

Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  return lerp(self, end, scalar_tensor(weight, self.dtype(), self.device()));
}

Tensor lerp_(const Tensor& self, const Tensor& end, const Scalar& weight) { return copy_(self, lerp(self, end, weight)); }

namespace {

Tensor pointwise_update(const char* op, TernaryOp kind, const Tensor& self, const Tensor& t1, const Tensor& t2,
                        const Scalar& value) {
  ScalarType dtype = ResultType().add(self).add(t1).add(t2).get();
  if (kind == TernaryOp::AddCDiv)
    TP_CHECK(is_floating_point(t1.dtype()) || is_floating_point(t2.dtype()), "[addcdiv] Integer division with "
             "addcdiv is no longer supported, and in a future release addcdiv will perform a true division of "
             "tensor1 and tensor2.");
  check_alpha(op, dtype, value);
  Shape shape = broadcast_shapes(op, broadcast_shapes(op, self.sizes(), t1.sizes()), t2.sizes());
  Tensor out = elementwise_output(shape, dtype, self);
  backend(self.device()).ternary(kind, out, expand(to(self, dtype), shape), expand(to(t1, dtype), shape),
                                 expand(to(t2, dtype), shape), value);
  return out;
}

}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return pointwise_update("addcmul", TernaryOp::AddCMul, self, t1, t2, value);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return pointwise_update("addcdiv", TernaryOp::AddCDiv, self, t1, t2, value);
}
Tensor addcmul_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  Tensor r = addcmul(self, t1, t2, value);
  check_inplace("addcmul_", self, r.sizes(), r.dtype());
  return copy_(self, r);
}
Tensor addcdiv_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  Tensor r = addcdiv(self, t1, t2, value);
  check_inplace("addcdiv_", self, r.sizes(), r.dtype());
  return copy_(self, r);
}

}  // namespace tp

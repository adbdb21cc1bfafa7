// Elementwise ops of two or three tensors (or a tensor and a number). Each op is one line of the
// table below: its dtype rule (promotion follows core/type_promotion.h), its backward node and its
// derivatives, written with public ops. Gradients come out in the broadcast shape and the compute
// dtype; the autograd engine sums and casts them back to each input (autograd/engine.cpp).
//
// A number, or a 0-dim tensor in second place, reaches the kernel as a scalar held in the op's
// compute precision: bfloat16 * 0.1 multiplies by the float 0.1, not by 0.1 rounded to
// bfloat16, exactly as PyTorch's CPU kernels do.

#include <algorithm>

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
  Promote,   // the promoted dtype, bool included
  NoBool,    // the promoted dtype; bool is not implemented
  ToFloat,   // the promoted dtype, integers and bool computing in the default float dtype
  Integral,  // integers and bool only
  Compare,   // computes in the promoted dtype, writes bool
};

// The gradient of one input, given the gradient g of y = a OP b (alpha: add's and sub's scale).
using Derivative = Tensor (*)(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar& alpha);

// What each derivative reads, so that only what a needed gradient reads is saved for backward.
enum Uses : uint8_t { kNothing = 0, kA = 1, kB = 2, kOutput = 4 };

// PyTorch's node names (with a tensor and with a number as b) and the derivatives of a binary op.
struct BinaryGradient {
  const char* node = nullptr;  // null: no gradient
  const char* scalar_node = nullptr;
  Derivative da = nullptr, db = nullptr;
  uint8_t da_uses = kNothing, db_uses = kNothing;
};

// How a number b meets a 16-bit tensor: PyTorch keeps it in float for most ops, and rounds it to
// the tensor's dtype first for some.
enum class SixteenBit : bool { Float, Dtype };

struct BinarySpec {
  const char* name;
  BinaryOp op;
  DTypeRule rule;
  BinaryGradient grad = {};
  SixteenBit number = SixteenBit::Float;
};

namespace d {  // derivatives
Tensor zero(const Tensor& g, const Tensor&, const Tensor&, const Tensor&, const Scalar&) { return zeros_like(g); }
Tensor same(const Tensor& g, const Tensor&, const Tensor&, const Tensor&, const Scalar&) { return g; }
// With complex operands the derivatives take conjugates (PyTorch's convention: the gradient of a real
// loss is dL/dRe + i dL/dIm); conj of a real tensor is the tensor itself.
Scalar conjugate(const Scalar& s) { return s.is_complex() ? Scalar(std::conj(s.to_complex())) : s; }
Tensor scaled(const Tensor& g, const Tensor&, const Tensor&, const Tensor&, const Scalar& alpha) {
  return alpha.to_double() == 1 && !alpha.is_complex() ? g : mul(g, conjugate(alpha));
}
Tensor negated(const Tensor& g, const Tensor&, const Tensor&, const Tensor&, const Scalar& alpha) {
  if (alpha.is_complex()) return mul(g, Scalar(-std::conj(alpha.to_complex())));
  return mul(g, alpha.is_floating_point() ? Scalar(-alpha.to_double()) : Scalar(-alpha.to_int()));
}
Tensor mul_a(const Tensor& g, const Tensor&, const Tensor& b, const Tensor&, const Scalar&) { return mul(g, conj(b)); }
Tensor mul_b(const Tensor& g, const Tensor& a, const Tensor&, const Tensor&, const Scalar&) { return mul(g, conj(a)); }
Tensor div_a(const Tensor& g, const Tensor&, const Tensor& b, const Tensor&, const Scalar&) { return div(g, conj(b)); }
Tensor div_b(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor&, const Scalar&) {
  return neg(div(mul(g, conj(a)), conj(mul(b, b))));
}
Tensor remainder_b(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor&, const Scalar&) {
  return neg(mul(g, div(a, b, "floor")));
}
// d(a^b)/da = b a^(b-1), taken as 0 where b == 0; d(a^b)/db = a^b log(a), taken as 0 where a == 0, b >= 0.
Tensor pow_a(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor&, const Scalar&) {
  return where(eq(b, 0), 0.0, mul(g, mul(b, pow(a, sub(b, 1)))));
}
Tensor pow_b(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar&) {
  return where(logical_and(eq(a, 0), ge(b, 0)), 0.0, mul(g, mul(y, log(a))));
}
Tensor atan2_a(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor&, const Scalar&) {
  return div(mul(g, b), add(mul(a, a), mul(b, b)));
}
Tensor atan2_b(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor&, const Scalar&) {
  return neg(div(mul(g, a), add(mul(a, a), mul(b, b))));
}
// maximum/minimum: the larger (smaller) input gets the gradient; a tie splits it.
Tensor select_a(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar&) {
  return where(eq(a, b), div(g, 2), where(eq(a, y), g, 0.0));
}
Tensor select_b(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y, const Scalar&) {
  return where(eq(a, b), div(g, 2), where(eq(b, y), g, 0.0));
}
// threshold_backward(g, x) is linear in g and flat in x.
Tensor threshold_a(const Tensor& g, const Tensor&, const Tensor& b, const Tensor&, const Scalar& threshold) {
  return threshold_backward(g, b, threshold);
}
// gelu_backward(g, x) = g * gelu'(x) is linear in g; its slope in x is g * gelu''(x), where
// gelu'' = pdf(x) (2 - x^2) exactly, and for the tanh form (1 - t^2) (u' + x (u'' - 2 t u'^2) / 2)
// with t = tanh(u), u = beta (x + kappa x^3).
Tensor gelu_backward_grad(const Tensor& g, const Tensor&, const Tensor& x, const Tensor&, const Scalar&) {
  return gelu_backward(g, x, "none");
}
Tensor gelu_tanh_backward_grad(const Tensor& g, const Tensor&, const Tensor& x, const Tensor&, const Scalar&) {
  return gelu_backward(g, x, "tanh");
}
Tensor gelu_backward_x(const Tensor& g, const Tensor& grad, const Tensor& x, const Tensor&, const Scalar&) {
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  Tensor x2 = mul(x, x);
  Tensor pdf = mul(exp(mul(x2, -0.5)), kInvSqrt2Pi);
  return mul(mul(g, grad), mul(pdf, rsub(x2, 2)));
}
Tensor gelu_tanh_backward_x(const Tensor& g, const Tensor& grad, const Tensor& x, const Tensor&, const Scalar&) {
  constexpr double kBeta = 0.79788456080286535588, kKappa = 0.044715;
  Tensor x2 = mul(x, x);
  Tensor t = tanh(mul(add(mul(mul(x2, x), kKappa), x), kBeta));
  Tensor slope = mul(add(mul(x2, 3 * kKappa), 1), kBeta);
  Tensor curvature = mul(x, 6 * kKappa * kBeta);
  Tensor inner = add(slope, mul(mul(x, sub(curvature, mul(mul(t, 2), mul(slope, slope)))), 0.5));
  return mul(mul(g, grad), mul(rsub(mul(t, t), 1), inner));
}
}  // namespace d

namespace grad {
// clang-format off
constexpr BinaryGradient none;
constexpr BinaryGradient add{"AddBackward0", "AddBackward0", d::same, d::scaled};
constexpr BinaryGradient sub{"SubBackward0", "SubBackward0", d::same, d::negated};
constexpr BinaryGradient mul{"MulBackward0", "MulBackward0", d::mul_a, d::mul_b, kB, kA};
constexpr BinaryGradient div{"DivBackward0", "DivBackward0", d::div_a, d::div_b, kB, kA | kB};
constexpr BinaryGradient div_rounding{"DivBackward2", "DivBackward3", d::zero, d::zero};
constexpr BinaryGradient remainder{"RemainderBackward1", "RemainderBackward0", d::same, d::remainder_b, kNothing,
                                   kA | kB};
constexpr BinaryGradient pow{"PowBackward1", "PowBackward0", d::pow_a, d::pow_b, kA | kB, kA | kB | kOutput};
constexpr BinaryGradient atan2{"Atan2Backward0", "Atan2Backward0", d::atan2_a, d::atan2_b, kA | kB, kA | kB};
constexpr BinaryGradient maximum{"MaximumBackward0", "MaximumBackward0", d::select_a, d::select_b,
                                 kA | kB | kOutput, kA | kB | kOutput};
constexpr BinaryGradient minimum{"MinimumBackward0", "MinimumBackward0", d::select_a, d::select_b,
                                 kA | kB | kOutput, kA | kB | kOutput};
constexpr BinaryGradient threshold_backward{"ThresholdBackwardBackward0", nullptr, d::threshold_a, d::zero, kB};
constexpr BinaryGradient gelu_backward{"GeluBackwardBackward0", nullptr, d::gelu_backward_grad, d::gelu_backward_x,
                                       kB, kA | kB};
constexpr BinaryGradient gelu_tanh_backward{"GeluBackwardBackward0", nullptr, d::gelu_tanh_backward_grad,
                                            d::gelu_tanh_backward_x, kB, kA | kB};
// clang-format on
}  // namespace grad

#define TP_BINARY_SPEC(name_, kernel, dtypes, gradient, numbers, sixteen_bit)                       \
  constexpr BinarySpec k##kernel{.name = #name_, .op = BinaryOp::kernel, .rule = DTypeRule::dtypes, \
                                 .grad = gradient, .number = SixteenBit::sixteen_bit};
TP_BINARY_OPS(TP_BINARY_SPEC)
#undef TP_BINARY_SPEC
// The ops with signatures of their own.
// clang-format off
constexpr BinarySpec kAdd{.name = "add", .op = BinaryOp::Add, .rule = DTypeRule::Promote, .grad = grad::add,
                          .number = SixteenBit::Dtype};
constexpr BinarySpec kSub{.name = "sub", .op = BinaryOp::Sub, .rule = DTypeRule::NoBool, .grad = grad::sub,
                          .number = SixteenBit::Dtype};
constexpr BinarySpec kDiv{.name = "div", .op = BinaryOp::Div, .rule = DTypeRule::ToFloat, .grad = grad::div};
// div with a rounding_mode.
constexpr BinarySpec kDivTruncMode{.name = "div", .op = BinaryOp::DivTrunc, .rule = DTypeRule::NoBool,
                               .grad = grad::div_rounding};
constexpr BinarySpec kDivFloorMode{.name = "div", .op = BinaryOp::DivFloor, .rule = DTypeRule::NoBool,
                                   .grad = grad::div_rounding};
constexpr BinarySpec kThresholdBackward{.name = "threshold_backward", .op = BinaryOp::ThresholdBackward,
                                        .rule = DTypeRule::NoBool, .grad = grad::threshold_backward};
constexpr BinarySpec kGeluBackward{.name = "gelu_backward", .op = BinaryOp::GeluBackward, .rule = DTypeRule::ToFloat,
                                   .grad = grad::gelu_backward};
constexpr BinarySpec kGeluTanhBackward{.name = "gelu_backward", .op = BinaryOp::GeluTanhBackward,
                                       .rule = DTypeRule::ToFloat, .grad = grad::gelu_tanh_backward};
// clang-format on

// The backward node of a binary op. With a number as b, b is kept as that number.
class BinaryBackward final : public autograd::Node {
 public:
  BinaryBackward(const BinarySpec& spec, const Scalar& alpha, std::optional<Scalar> number, ScalarType dtype)
      : spec_(spec), alpha_(alpha), number_(number), dtype_(dtype) {}
  std::string name() const override { return number_ ? spec_.grad.scalar_node : spec_.grad.node; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    Tensor x = a.unpack(*this), y = out.unpack(*this), other = b.unpack(*this);
    return {needs_input_grad(0) ? spec_.grad.da(g, x, other, y, alpha_) : Tensor(),
            needs_input_grad(1) ? spec_.grad.db(g, x, other, y, alpha_) : Tensor()};
  }
  void release_saved() override {
    a.release();
    b.release();
    out.release();
  }
  // A number the backward reads is saved as a tensor, as PyTorch saves it: freed like the others,
  // so a second backward through x * 2.0 without retain_graph fails as it does there.
  void save_number() { b = autograd::SavedTensor(scalar_tensor(*number_, dtype_), false); }
  autograd::SavedTensor a, b, out;

 private:
  const BinarySpec& spec_;
  Scalar alpha_;
  std::optional<Scalar> number_;
  ScalarType dtype_;
};

// What the backward of a OP b reads, given which inputs need a gradient (b may be a number).
uint8_t saved_uses(const BinarySpec& spec, const Tensor& a, const Tensor* b) {
  return (autograd::requires_grad(a) ? spec.grad.da_uses : uint8_t{kNothing}) |
         (b && autograd::requires_grad(*b) ? spec.grad.db_uses : uint8_t{kNothing});
}

void save_for_backward(BinaryBackward& node, const BinarySpec& spec, const Tensor& a, const Tensor* b,
                       const Tensor& out) {
  uint8_t uses = saved_uses(spec, a, b);
  if (uses & kA) node.a = autograd::SavedTensor(a, false);
  if ((uses & kB) && b) node.b = autograd::SavedTensor(*b, false);
  else if (uses & kB) node.save_number();
  if (uses & kOutput) node.out = autograd::SavedTensor(out, true);
}

// The value of self an in-place op reads under autograd: a copy when backward will save it (self
// is about to be overwritten), self itself otherwise.
Tensor inplace_input(const BinarySpec& spec, const Tensor& self, const Tensor* b) {
  return (saved_uses(spec, self, b) & kA) ? clone(self) : self;
}

ScalarType compute_dtype(const BinarySpec& spec, ScalarType promoted) {
  switch (spec.rule) {
    case DTypeRule::Promote:
    case DTypeRule::Compare:
      return promoted;
    case DTypeRule::NoBool:
      if (spec.op == BinaryOp::Sub)
        TP_CHECK(promoted != ScalarType::Bool,
                 "[sub] Subtraction, the `-` operator, with two bool tensors is not "
                 "supported. Use the `^` or `logical_xor()` operator instead.");
      if (promoted == ScalarType::Bool) fail_unsupported_dtype(spec.name, promoted);
      return promoted;
    case DTypeRule::ToFloat:
      return is_differentiable(promoted) ? promoted : get_default_dtype();
    case DTypeRule::Integral:
      if (!is_integral(promoted, true)) fail_unsupported_dtype(spec.name, promoted);
      return promoted;
  }
  return promoted;
}

// + - * / have complex kernels; the other binary ops compute complex values on the parts (ops/complex.h).
bool on_parts(const BinarySpec& spec, ScalarType dtype) {
  const bool kernel = spec.op == BinaryOp::Add || spec.op == BinaryOp::Sub || spec.op == BinaryOp::Mul ||
                      spec.op == BinaryOp::Div;
  return is_complex(dtype) && !kernel;
}

ScalarType result_dtype(const BinarySpec& spec, ScalarType compute) {
  return spec.rule == DTypeRule::Compare ? ScalarType::Bool : compute;
}

bool integer_division(const BinarySpec& spec, ScalarType dtype) {
  return !is_floating_point(dtype) &&
         (spec.op == BinaryOp::DivTrunc || spec.op == BinaryOp::DivFloor || spec.op == BinaryOp::Remainder);
}

void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha) {
  TP_CHECK(!(alpha.is_floating_point() && !is_differentiable(dtype)), "[", op,
           "] For integral input tensors, "
           "argument alpha must not be a floating point number.");
  TP_CHECK(!(alpha.is_bool() && dtype != ScalarType::Bool), "[", op,
           "] Boolean alpha only supported for Boolean results.");
  if (is_integral(dtype, false)) check_fits(op, alpha, dtype);  // int32 + 2**62 * b is an error, not a wrap
}

// A number as PyTorch applies it to a 16-bit float tensor in ops that round it to the dtype.
Scalar as_applied(const BinarySpec& spec, const Scalar& value, ScalarType dtype) {
  if (spec.number != SixteenBit::Dtype || !is_reduced_float(dtype) || value.is_bool()) return value;
  return visit_dtype<DTypes::Floating>(spec.name, dtype, [&](auto t) {
    return Scalar(static_cast<double>(static_cast<float>(decltype(t)(static_cast<float>(value.to_double())))));
  });
}

// out = a OP b, where b is a number applied in the compute precision.
Tensor binary_scalar_into(const BinarySpec& spec, const Tensor& out, const Tensor& a, const Scalar& b,
                          ScalarType dtype) {
  // The divisor as the dtype holds it: int16 // 65536 divides by 0 (as in PyTorch), and must not trap.
  TP_CHECK(!integer_division(spec, dtype) || scalar_tensor(b, dtype).item().to_int() != 0, "[", spec.name,
           "] ZeroDivisionError");
  backend(a.device()).binary_scalar(spec.op, out, to(a, dtype), as_applied(spec, b, dtype));
  return out;
}

// t as the kernel reads it: in dtype, expanded to out's shape, and not overlapping out unless it is
// out. Most operands are that already, and are passed on as they are: each handle copied would
// be two atomic updates of its count, which made up a tenth of a small op's time.
const Tensor& operand(const Tensor& t, ScalarType dtype, const Tensor& out, Tensor& holder) {
  const bool unaliased_already = t.impl() == out.impl() || t.impl()->storage() != out.impl()->storage();
  if (t.dtype() == dtype && std::ranges::equal(t.sizes(), out.sizes()) && unaliased_already &&
      t.device() == out.device())
    return t;
  holder = unaliased(expand(to(t, out.device(), dtype), out.sizes()), out);
  return holder;
}

// out = a OP alpha * b over the broadcast shape.
Tensor binary_into(const BinarySpec& spec, const Tensor& out, const Tensor& a, const Tensor& b, ScalarType dtype,
                   const Scalar& alpha) {
  if (b.dim() == 0 && b.device().is_cpu() && std::ranges::equal(a.sizes(), out.sizes()) && !is_complex(dtype)) {
    Scalar value = as_applied(spec, b.item(), dtype);
    if (alpha.to_double() != 1) value = Scalar(value.to_double() * as_applied(spec, alpha, dtype).to_double());
    if (is_floating_point(dtype) || !value.is_floating_point()) return binary_scalar_into(spec, out, a, value, dtype);
  }
  if (integer_division(spec, dtype) && b.has_data()) {
    TP_CHECK(!any(eq(b, 0)).item<bool>(), "[", spec.name, "] ZeroDivisionError");
  }
  Tensor x_holder, y_holder;
  backend(out.device()).binary(spec.op, out, operand(a, dtype, out, x_holder), operand(b, dtype, out, y_holder),
                               as_applied(spec, alpha, dtype));
  return out;
}

Tensor binary(const BinarySpec& spec, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);

// A sparse operand: a - b is a + (-1) b; a * b and a / b scale the stored elements (by a number, a
// 0-dim tensor, or, for a product, the dense operand's elements at the stored indices), which keeps
// the product sparse. The rest would fill every element and are refused.
Tensor sparse_binary(const BinarySpec& spec, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (spec.op == BinaryOp::Sub) return sparse_add(a, b, Scalar(-alpha.to_double()));
  const bool scales = spec.op == BinaryOp::Mul || (spec.op == BinaryOp::Div && a.is_sparse() && b.dim() == 0);
  TP_CHECK_KIND(ErrorKind::NotImplemented, scales && !(a.is_sparse() && b.is_sparse()), "[", spec.name,
                "] has no sparse result for these operands (it is defined for sparse * number or tensor, sparse / "
                "number, and sparse + or - sparse): Tensor.to_dense() gives the dense tensor to use instead");
  const Tensor& s = a.is_sparse() ? a : b;
  const Tensor& other = a.is_sparse() ? b : a;
  const Tensor values = sparse_values(s), indices = sparse_indices(s);
  TP_CHECK(other.dim() == 0 || std::ranges::equal(other.sizes(), s.sizes()), "[", spec.name, "] a sparse tensor "
           "is multiplied by a number, a 0-dim tensor or a dense tensor of its size, got ", to_string(other.sizes()),
           " and ", to_string(s.sizes()));
  const Tensor factor = other.dim() == 0 ? other : elements_at(other, indices);
  return sparse_coo_tensor_unsafe(indices, binary(spec, a.is_sparse() ? values : factor, a.is_sparse() ? factor : values),
                                  s.sizes(), s.impl()->is_coalesced());
}

Tensor binary(const BinarySpec& spec, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (a.is_sparse() || b.is_sparse()) [[unlikely]]
    return sparse_binary(spec, a, b, alpha);
  const Device device = common_device(spec.name, {&a, &b});
  Shape shape = broadcast_shapes(spec.name, a.sizes(), b.sizes());  // before the dtype's support, as in PyTorch
  ScalarType dtype = compute_dtype(spec, result_type(a, b));
  if (on_parts(spec, dtype)) return complex_binary(spec.op, spec.name, a, b, dtype);
  autograd::Record<BinaryBackward> record({spec.grad.node ? &a : nullptr, spec.grad.node ? &b : nullptr}, spec, alpha,
                                          std::nullopt, dtype);
  const bool like_a = std::ranges::equal(a.sizes(), shape) && a.device() == device;
  Tensor out = elementwise_output(shape, result_dtype(spec, dtype), like_a ? a : b);
  binary_into(spec, out, a, b, dtype, alpha);
  record.finish(out);
  if (record) save_for_backward(*record.node(), spec, a, &b, out);
  return out;
}

Tensor binary(const BinarySpec& spec, const Tensor& a, const Scalar& b) {
  if (a.is_sparse()) [[unlikely]]
    return sparse_binary(spec, a, scalar_tensor(b, result_type(a, b), a.device()), 1);
  ScalarType dtype = compute_dtype(spec, result_type(a, b));
  if (is_complex(dtype)) return binary(spec, a, scalar_tensor(b, dtype, a.device()));  // the kernels take tensors
  autograd::Record<BinaryBackward> record({spec.grad.node ? &a : nullptr}, spec, Scalar(1), b, dtype);
  Tensor out = elementwise_output(a.sizes(), result_dtype(spec, dtype), a);
  binary_scalar_into(spec, out, a, b, dtype);
  record.finish(out);
  if (record) save_for_backward(*record.node(), spec, a, nullptr, out);
  return out;
}

std::string inplace_name(const BinarySpec& spec) { return std::string(spec.name) + "_"; }

// In-place ops check that the result fits self (dtype, then shape) before the op's dtype support.
Tensor binary_(const BinarySpec& spec, const Tensor& self, const Tensor& b, const Scalar& alpha = 1) {
  check_no_partial_overlap(spec.name, self, b);
  ScalarType promoted = result_type(self, b);
  check_inplace(spec.name, self, broadcast_shapes(spec.name, self.sizes(), b.sizes()), result_dtype(spec, promoted));
  ScalarType dtype = compute_dtype(spec, promoted);
  check_inplace(spec.name, self, self.sizes(), result_dtype(spec, dtype));
  if (autograd::records_inplace(self, {&b}))
    return autograd::assign_inplace(self, binary(spec, inplace_input(spec, self, &b), b, alpha), inplace_name(spec));
  if (result_dtype(spec, dtype) != self.dtype() || on_parts(spec, dtype)) return copy_(self, binary(spec, self, b, alpha));
  binary_into(spec, self, self, b, dtype, alpha);
  self.bump_version();
  return self;
}

Tensor binary_(const BinarySpec& spec, const Tensor& self, const Scalar& b) {
  if (self.is_sparse() && (spec.op == BinaryOp::Mul || spec.op == BinaryOp::Div) && !self.requires_grad()) {
    binary_(spec, Tensor(self.impl()->sparse_values()), b);  // scales the stored elements
    return self;
  }
  check_inplace(spec.name, self, self.sizes(), result_dtype(spec, result_type(self, b)));
  ScalarType dtype = compute_dtype(spec, result_type(self, b));
  check_inplace(spec.name, self, self.sizes(), result_dtype(spec, dtype));
  if (autograd::records_inplace(self, {}))
    return autograd::assign_inplace(self, binary(spec, inplace_input(spec, self, nullptr), b), inplace_name(spec));
  if (result_dtype(spec, dtype) != self.dtype() || is_complex(dtype)) {
    return copy_(self, binary(spec, self, scalar_tensor(b, dtype, self.device())));
  }
  binary_scalar_into(spec, self, self, b, dtype);
  self.bump_version();
  return self;
}

// a + alpha * b with a number b folds alpha into it (each rounded as the op applies numbers).
Scalar scaled(const BinarySpec& spec, const Tensor& a, const Scalar& b, const Scalar& alpha) {
  if (alpha.to_double() == 1 && !alpha.is_complex()) return b;
  if (b.is_complex() || alpha.is_complex()) return Scalar(b.to_complex() * alpha.to_complex());
  ScalarType dtype = compute_dtype(spec, result_type(a, b));
  if (is_reduced_float(dtype))
    return Scalar(static_cast<double>(static_cast<float>(as_applied(spec, b, dtype).to_double()) *
                                      static_cast<float>(as_applied(spec, alpha, dtype).to_double())));
  if (b.is_floating_point() || alpha.is_floating_point()) return Scalar(b.to_double() * alpha.to_double());
  return Scalar(b.to_int() * alpha.to_int());
}

const BinarySpec& division(std::optional<std::string_view> mode) {
  if (!mode) return kDiv;
  // A RuntimeError, as in PyTorch.
  TP_CHECK(*mode == "trunc" || *mode == "floor",
           "[div] expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
  return *mode == "trunc" ? kDivTruncMode : kDivFloorMode;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  TP_OP_ENTRY(add, a, b, alpha);
  check_alpha("add", result_type(a, b), alpha);
  if (a.is_sparse() || b.is_sparse()) [[unlikely]]
    return sparse_add(a, b, alpha);
  return binary(kAdd, a, b, alpha);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  TP_OP_ENTRY(add, a, b, alpha);
  check_alpha("add", result_type(a, b), alpha);
  return binary(kAdd, a, scaled(kAdd, a, b, alpha));
}
void check_no_bool_sub(const Tensor& a, const Tensor* b) {
  TP_CHECK(a.dtype() != ScalarType::Bool && !(b && b->dtype() == ScalarType::Bool),
           "[sub] Subtraction, the `-` "
           "operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or "
           "`logical_not()` operator instead.");
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  TP_OP_ENTRY(sub, a, b, alpha);
  check_no_bool_sub(a, &b);
  check_alpha("sub", result_type(a, b), alpha);
  return binary(kSub, a, b, alpha);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  TP_OP_ENTRY(sub, a, b, alpha);
  check_no_bool_sub(a, nullptr);
  check_alpha("sub", result_type(a, b), alpha);
  return binary(kSub, a, scaled(kSub, a, b, alpha));
}
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  TP_OP_ENTRY(rsub, a, b, alpha);
  check_no_bool_sub(a, nullptr);
  return sub(scalar_tensor(b, result_type(a, b), a.device()), a, alpha);
}
Tensor add_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_alpha("add_", result_type(a, b), alpha);
  if (a.is_sparse() || b.is_sparse()) [[unlikely]]
    return sparse_add_(a, b, alpha);
  return binary_(kAdd, a, b, alpha);
}
Tensor add_(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return binary_(kAdd, a, scaled(kAdd, a, b, alpha));
}
Tensor sub_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_no_bool_sub(a, &b);
  check_alpha("sub_", result_type(a, b), alpha);
  return binary_(kSub, a, b, alpha);
}
Tensor sub_(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_no_bool_sub(a, nullptr);
  return binary_(kSub, a, scaled(kSub, a, b, alpha));
}

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  TP_OP_ENTRY(div, a, b, mode);
  return binary(division(mode), a, b);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) {
  TP_OP_ENTRY(div, a, b, mode);
  return binary(division(mode), a, b);
}
Tensor div_(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  return binary_(division(mode), a, b);
}
Tensor div_(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) {
  return binary_(division(mode), a, b);
}

Tensor threshold_backward(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  return binary(kThresholdBackward, grad, self, threshold);
}
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  TP_CHECK(approximate == "none" || approximate == "tanh",
           "[gelu_backward] approximate argument must be either none or tanh, got '", approximate, "'");
  return binary(approximate == "tanh" ? kGeluTanhBackward : kGeluBackward, grad, self);
}

// A number other is the kernel's scalar, but for pow's exponent (ops/unary.cpp).
#define TP_DEFINE_NUMBER_OTHER(op, kernel)                                       \
  Tensor op(const Tensor& a, const Scalar& b) {                                  \
    TP_OP_ENTRY(op, a, b);                                                       \
    return binary(k##kernel, a, b);                                              \
  }                                                                              \
  Tensor op##_(const Tensor& a, const Scalar& b) { return binary_(k##kernel, a, b); }
#define TP_DEFINE_NUMBER_OTHER_Any TP_DEFINE_NUMBER_OTHER
#define TP_DEFINE_NUMBER_OTHER_Either TP_DEFINE_NUMBER_OTHER
#define TP_DEFINE_NUMBER_OTHER_Other TP_DEFINE_NUMBER_OTHER
#define TP_DEFINE_NUMBER_OTHER_None TP_DEFINE_NUMBER_OTHER
#define TP_DEFINE_NUMBER_OTHER_Unary(op, kernel)
#define TP_DEFINE_BINARY(op, kernel, dtypes, gradient, numbers, ...)                \
  Tensor op(const Tensor& a, const Tensor& b) {                                     \
    TP_OP_ENTRY(op, a, b);                                                          \
    return binary(k##kernel, a, b);                                                 \
  }                                                                                 \
  Tensor op##_(const Tensor& a, const Tensor& b) { return binary_(k##kernel, a, b); } \
  TP_DEFINE_NUMBER_OTHER_##numbers(op, kernel)
TP_BINARY_OPS(TP_DEFINE_BINARY)
#undef TP_DEFINE_BINARY
#undef TP_DEFINE_NUMBER_OTHER_Any
#undef TP_DEFINE_NUMBER_OTHER_Either
#undef TP_DEFINE_NUMBER_OTHER_Other
#undef TP_DEFINE_NUMBER_OTHER_None
#undef TP_DEFINE_NUMBER_OTHER_Unary
#undef TP_DEFINE_NUMBER_OTHER

namespace {

// lerp, addcmul and addcdiv: out = f(self, a, b; value), gradients for the three tensors.
using TernaryDerivative = TensorList (*)(const Tensor& g, const Tensor& self, const Tensor& a, const Tensor& b,
                                         const Scalar& value);

class TernaryBackward final : public autograd::Node {
 public:
  TernaryBackward(const char* name, TernaryDerivative derivative, const Scalar& value)
      : name_(name), derivative_(derivative), value_(value) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    TensorList out = derivative_(grads[0], self.unpack(*this), a.unpack(*this), b.unpack(*this), value_);
    for (size_t i = 0; i < out.size(); ++i)
      if (!needs_input_grad(i)) out[i] = Tensor();
    return out;
  }
  void release_saved() override {
    self.release();
    a.release();
    b.release();
  }
  autograd::SavedTensor self, a, b;

 private:
  const char* name_;
  TernaryDerivative derivative_;
  Scalar value_;
};

TensorList lerp_derivative(const Tensor& g, const Tensor& self, const Tensor& end, const Tensor& w, const Scalar&) {
  return {mul(g, rsub(w, 1)), mul(g, w), mul(g, sub(end, self))};
}
TensorList addcmul_derivative(const Tensor& g, const Tensor&, const Tensor& a, const Tensor& b, const Scalar& v) {
  return {g, mul(mul(g, b), v), mul(mul(g, a), v)};
}
TensorList addcdiv_derivative(const Tensor& g, const Tensor&, const Tensor& a, const Tensor& b, const Scalar& v) {
  return {g, div(mul(g, v), b), neg(div(mul(mul(g, a), v), mul(b, b)))};
}

Tensor ternary(const char* op, const char* node, TernaryOp kind, TernaryDerivative derivative, bool reads_self,
               const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& value, ScalarType dtype) {
  const Device device = common_device(op, {&self, &a, &b});
  Shape shape = broadcast_shapes(op, broadcast_shapes(op, self.sizes(), a.sizes()), b.sizes());
  autograd::Record<TernaryBackward> record({&self, &a, &b}, node, derivative, value);
  Tensor out = self.device() == device ? elementwise_output(shape, dtype, self) : empty(shape, dtype, device);
  auto operand = [&](const Tensor& t) { return expand(to(t, device, dtype), shape); };
  backend(device).ternary(kind, out, operand(self), operand(a), operand(b), value);
  record.finish(out);
  if (record) {
    if (reads_self) record->self = autograd::SavedTensor(self, false);
    record->a = autograd::SavedTensor(a, false);
    record->b = autograd::SavedTensor(b, false);
  }
  return out;
}

// In-place through the out-of-place op f(self_value); under autograd f reads a copy of self when
// its backward saves self.
template <class F>
Tensor assign(const char* op, const Tensor& self, std::initializer_list<const Tensor*> inputs, bool reads_self, F f) {
  Shape shape(self.sizes().begin(), self.sizes().end());
  for (const Tensor* t : inputs) {
    check_no_partial_overlap(op, self, *t);
    shape = broadcast_shapes(op, shape, t->sizes());
  }
  check_inplace(op, self, shape, self.dtype());  // the output's shape is checked before dtype support
  bool records = autograd::records_inplace(self, inputs);
  Tensor result = f(records && reads_self ? clone(self) : self);
  check_inplace(op, self, result.sizes(), result.dtype());
  if (records) return autograd::assign_inplace(self, result, op);
  return copy_(self, result);
}

}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  TP_OP_ENTRY(lerp, self, end, weight);
  TP_CHECK(self.dtype() == end.dtype() && self.dtype() == weight.dtype(), "[lerp] expected dtype ", name(self.dtype()),
           " for `end` and `weight` but got dtypes ", name(end.dtype()), " and ", name(weight.dtype()));
  broadcast_shapes("lerp", broadcast_shapes("lerp", self.sizes(), end.sizes()), weight.sizes());  // shapes first
  if (!is_floating_point(self.dtype())) fail_unsupported_dtype("lerp", self.dtype());
  return ternary("lerp", "LerpBackward1", TernaryOp::Lerp, lerp_derivative, true, self, end, weight, 1, self.dtype());
}

namespace {

class LerpScalarBackward final : public autograd::Node {
 public:
  explicit LerpScalarBackward(const Scalar& weight) : weight_(weight.to_double()) {}
  std::string name() const override { return "LerpBackward0"; }
  TensorList apply(TensorList&& grads) override { return {mul(grads[0], 1 - weight_), mul(grads[0], weight_)}; }

 private:
  double weight_;
};

}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  TP_OP_ENTRY(lerp, self, end, weight);
  TP_CHECK(self.dtype() == end.dtype(), "[lerp] expected dtype ", name(self.dtype()), " for `end` but got dtype ",
           name(end.dtype()));
  Shape shape = broadcast_shapes("lerp", self.sizes(), end.sizes());
  if (!is_floating_point(self.dtype())) fail_unsupported_dtype("lerp", self.dtype());
  autograd::Record<LerpScalarBackward> record({&self, &end}, weight);
  Tensor out = elementwise_output(shape, self.dtype(), self);
  backend(self.device()).binary(BinaryOp::Lerp, out, expand(self, shape), expand(end, shape), weight);
  return record.finish(out);
}

Tensor lerp_(const Tensor& self, const Tensor& end, const Scalar& weight) {
  return assign("lerp_", self, {&end}, true, [&](const Tensor& x) { return lerp(x, end, weight); });
}

Tensor lerp_(const Tensor& self, const Tensor& end, const Tensor& weight) {
  return assign("lerp_", self, {&end, &weight}, true, [&](const Tensor& x) { return lerp(x, end, weight); });
}

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  TP_OP_ENTRY(addcmul, self, t1, t2, value);
  ScalarType dtype = ResultType().add(self).add(t1).add(t2).get();
  broadcast_shapes("addcmul", broadcast_shapes("addcmul", self.sizes(), t1.sizes()), t2.sizes());  // shapes first
  if (dtype == ScalarType::Bool) fail_unsupported_dtype("addcmul", dtype);
  check_fits("addcmul", value, is_reduced_float(dtype) ? ScalarType::Float32 : dtype);  // value in the compute type
  return ternary("addcmul", "AddcmulBackward0", TernaryOp::AddCMul, addcmul_derivative, false, self, t1, t2, value,
                 dtype);
}

Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  TP_OP_ENTRY(addcdiv, self, t1, t2, value);
  TP_CHECK(is_differentiable(t1.dtype()) || is_differentiable(t2.dtype()),
           "[addcdiv] Integer division with "
           "addcdiv is no longer supported, and in a future release addcdiv will perform a true division of "
           "tensor1 and tensor2.");
  ScalarType dtype = ResultType().add(self).add(t1).add(t2).get();
  check_alpha("addcdiv", dtype, value);
  check_fits("addcdiv", value, is_reduced_float(dtype) ? ScalarType::Float32 : dtype);  // value in the compute type
  return ternary("addcdiv", "AddcdivBackward0", TernaryOp::AddCDiv, addcdiv_derivative, false, self, t1, t2, value,
                 dtype);
}

Tensor addcmul_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return assign("addcmul_", self, {&t1, &t2}, false, [&](const Tensor& x) { return addcmul(x, t1, t2, value); });
}

Tensor addcdiv_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return assign("addcdiv_", self, {&t1, &t2}, false, [&](const Tensor& x) { return addcdiv(x, t1, t2, value); });
}

}  // namespace tp

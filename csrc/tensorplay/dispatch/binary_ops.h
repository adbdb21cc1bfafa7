#pragma once
// The binary ops of the form op(input, other), one row each: the op's name, its kernel (BinaryOp),
// its dtype rule, its gradient (a BinaryGradient of ops/binary.cpp), where Python takes a number
// for a tensor, and how a number other meets a 16-bit tensor. The rows make the kernel enum
// (dispatch/backend.h), the declarations (ops/ops.h), the definitions (ops/binary.cpp) and the
// Python bindings (python/bindings/ops.cpp). Adding a binary op is a row here, its gradient, its
// kernel's case in each backend and its autocast row (amp/autocast_policy.h).
//
// numbers, as PyTorch takes them:   16-bit, a number other is applied
//   Any    input, other or both       Float  in float, as PyTorch's kernels hold it
//   Either input or other             Dtype  rounded to the tensor's dtype first
//   Other  other only
//   None   neither
//   Unary  input or other, each a unary op of the other operand (ops/unary.cpp)
// The dtype rules are DTypeRule's, in ops/binary.cpp. In C++, every row takes a number other.

// clang-format off
#define TP_BINARY_OPS(_)                                                            \
  /* op            kernel      dtypes    gradient         numbers  16-bit */        \
  _(mul,           Mul,        Promote,  grad::mul,       Any,     Float)           \
  _(floor_divide,  DivFloor,   NoBool,   grad::none,      Any,     Float)           \
  _(remainder,     Remainder,  NoBool,   grad::remainder, Either,  Dtype)           \
  _(pow,           Pow,        NoBool,   grad::pow,       Unary,   Float)           \
  _(atan2,         Atan2,      ToFloat,  grad::atan2,     None,    Float)           \
  _(maximum,       Maximum,    Promote,  grad::maximum,   None,    Float)           \
  _(minimum,       Minimum,    Promote,  grad::minimum,   None,    Float)           \
  _(bitwise_and,   BitwiseAnd, Integral, grad::none,      Either,  Float)           \
  _(bitwise_or,    BitwiseOr,  Integral, grad::none,      Either,  Float)           \
  _(bitwise_xor,   BitwiseXor, Integral, grad::none,      Either,  Float)           \
  _(eq,            Eq,         Compare,  grad::none,      Other,   Dtype)           \
  _(ne,            Ne,         Compare,  grad::none,      Other,   Dtype)           \
  _(lt,            Lt,         Compare,  grad::none,      Other,   Dtype)           \
  _(le,            Le,         Compare,  grad::none,      Other,   Dtype)           \
  _(gt,            Gt,         Compare,  grad::none,      Other,   Dtype)           \
  _(ge,            Ge,         Compare,  grad::none,      Other,   Dtype)           \
  _(logical_and,   LogicalAnd, Compare,  grad::none,      None,    Float)           \
  _(logical_or,    LogicalOr,  Compare,  grad::none,      None,    Float)           \
  _(logical_xor,   LogicalXor, Compare,  grad::none,      None,    Float)
// clang-format on

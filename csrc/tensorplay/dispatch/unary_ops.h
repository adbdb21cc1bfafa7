#pragma once
// The unary ops, one row each: the op's name, its kernel (UnaryOp), its dtype rule, PyTorch's name
// for its backward node, its derivative (ops/unary.cpp) and what that derivative reads. The rows
// make the kernel enum (dispatch/backend.h), the declarations (ops/ops.h), the definitions
// (ops/unary.cpp) and the Python bindings (python/bindings/ops.cpp). Adding a unary op is a row
// here, its derivative, its kernel's case in each backend and its autocast row (amp/autocast_policy.h).
// The dtype rules are DTypeRule's, in ops/unary.cpp.

// clang-format off
#define TP_UNARY_OPS(_)                                                                      \
  /* op          kernel      dtypes     backward node          derivative     reads */       \
  _(neg,         Neg,        Numeric,   "NegBackward0",        d::neg,        kNothing)      \
  _(abs,         Abs,        Numeric,   "AbsBackward0",        d::abs,        kInput)        \
  _(sign,        Sign,       Any,       "SignBackward0",       d::zero,       kNothing)      \
  _(exp,         Exp,        ToFloat,   "ExpBackward0",        d::exp,        kOutput)       \
  _(exp2,        Exp2,       ToFloat,   "Exp2Backward0",       d::exp2,       kOutput)       \
  _(expm1,       Expm1,      ToFloat,   "Expm1Backward0",      d::expm1,      kOutput)       \
  _(log,         Log,        ToFloat,   "LogBackward0",        d::log,        kInput)        \
  _(log2,        Log2,       ToFloat,   "Log2Backward0",       d::log2,       kInput)        \
  _(log10,       Log10,      ToFloat,   "Log10Backward0",      d::log10,      kInput)        \
  _(log1p,       Log1p,      ToFloat,   "Log1PBackward0",      d::log1p,      kInput)        \
  _(sqrt,        Sqrt,       ToFloat,   "SqrtBackward0",       d::sqrt,       kOutput)       \
  _(rsqrt,       Rsqrt,      ToFloat,   "RsqrtBackward0",      d::rsqrt,      kOutput)       \
  _(reciprocal,  Reciprocal, ToFloat,   "ReciprocalBackward0", d::reciprocal, kOutput)       \
  _(sin,         Sin,        ToFloat,   "SinBackward0",        d::sin,        kInput)        \
  _(cos,         Cos,        ToFloat,   "CosBackward0",        d::cos,        kInput)        \
  _(tan,         Tan,        ToFloat,   "TanBackward0",        d::tan,        kOutput)       \
  _(asin,        Asin,       ToFloat,   "AsinBackward0",       d::asin,       kInput)        \
  _(acos,        Acos,       ToFloat,   "AcosBackward0",       d::acos,       kInput)        \
  _(atan,        Atan,       ToFloat,   "AtanBackward0",       d::atan,       kInput)        \
  _(sinh,        Sinh,       ToFloat,   "SinhBackward0",       d::sinh,       kInput)        \
  _(cosh,        Cosh,       ToFloat,   "CoshBackward0",       d::cosh,       kInput)        \
  _(tanh,        Tanh,       ToFloat,   "TanhBackward0",       d::tanh,       kOutput)       \
  _(sigmoid,     Sigmoid,    ToFloat,   "SigmoidBackward0",    d::sigmoid,    kOutput)       \
  _(erf,         Erf,        ToFloat,   "ErfBackward0",        d::erf,        kInput)        \
  _(erfinv,      Erfinv,     ToFloat,   "ErfinvBackward0",     d::erfinv,     kOutput)       \
  _(floor,       Floor,      Numeric,   "FloorBackward0",      d::zero,       kNothing)      \
  _(ceil,        Ceil,       Numeric,   "CeilBackward0",       d::zero,       kNothing)      \
  _(trunc,       Trunc,      Numeric,   "TruncBackward0",      d::zero,       kNothing)      \
  _(relu,        Relu,       Numeric,   "ReluBackward0",       d::relu,       kOutput)       \
  _(silu,        Silu,       Floating,  "SiluBackward0",       d::silu,       kInput)        \
  _(bitwise_not, BitwiseNot, Integral,  nullptr,               nullptr,       kNothing)      \
  _(logical_not, LogicalNot, Predicate, nullptr,               nullptr,       kNothing)      \
  _(isnan,       IsNan,      Predicate, nullptr,               nullptr,       kNothing)      \
  _(isinf,       IsInf,      Predicate, nullptr,               nullptr,       kNothing)      \
  _(isfinite,    IsFinite,   Predicate, nullptr,               nullptr,       kNothing)
// clang-format on

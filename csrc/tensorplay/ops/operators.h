#pragma once
// C++ operators on tensors, as LibTorch has them and with Python's semantics: each forwards to the
// public op Python's operator calls (so autograd and autocast see it), numbers promote as in
// PyTorch (an int tensor + 2.5 is float), and comparisons give bool tensors.
//
// Tensor op Tensor and Tensor op number for + - * /, and unary minus, are in ops.h; this header
// adds the rest. Because a Tensor is a handle, `a += b` writes into a's storage, which every copy
// of a (and every view of it) sees, as in LibTorch.

#include <utility>

#include "tensorplay/ops/ops.h"

namespace tp {

// ---- a number on the left: `2 - x` is rsub, `2 / x` is reciprocal(x) * 2, as in PyTorch ----
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return mul(reciprocal(b), a); }

// ---- % is remainder (Python's modulo: the result takes the sign of the divisor) ----
inline Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
inline Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }
inline Tensor operator%(const Scalar& a, const Tensor& b) {
  return remainder(scalar_tensor(a, result_type(b, a), b.device()), b);
}

// ---- bitwise, on integer and bool tensors ----
inline Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
inline Tensor operator&(const Tensor& a, const Scalar& b) { return bitwise_and(a, b); }
inline Tensor operator&(const Scalar& a, const Tensor& b) { return bitwise_and(b, a); }
inline Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
inline Tensor operator|(const Tensor& a, const Scalar& b) { return bitwise_or(a, b); }
inline Tensor operator|(const Scalar& a, const Tensor& b) { return bitwise_or(b, a); }
inline Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
inline Tensor operator^(const Tensor& a, const Scalar& b) { return bitwise_xor(a, b); }
inline Tensor operator^(const Scalar& a, const Tensor& b) { return bitwise_xor(b, a); }
// Bitwise not: logical not on bool tensors, as PyTorch's ~.
inline Tensor operator~(const Tensor& a) {
  TP_CHECK_TYPE(!is_floating_point(a.dtype()) && !is_complex(a.dtype()),
                "[bitwise_not] ~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return bitwise_not(a);
}

// ---- comparisons: bool tensors, elementwise (all(a == b) gives one answer) ----
// Each is declared for every order of operands, so that C++20 never picks a rewritten form
// (b == a, !(a == b)), which would need a bool result.
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
inline Tensor operator==(const Scalar& a, const Tensor& b) { return eq(b, a); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
inline Tensor operator!=(const Scalar& a, const Tensor& b) { return ne(b, a); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
inline Tensor operator<(const Scalar& a, const Tensor& b) { return gt(b, a); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
inline Tensor operator<=(const Scalar& a, const Tensor& b) { return ge(b, a); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
inline Tensor operator>(const Scalar& a, const Tensor& b) { return lt(b, a); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
inline Tensor operator>=(const Scalar& a, const Tensor& b) { return le(b, a); }

// ---- compound assignment: the in-place ops ----
// The rvalue forms let a view be written through, as LibTorch's members allow:
// x.index({0}) += 1 adds to x's first row.
#define TP_COMPOUND_ASSIGNMENT(op, fn)                     \
  inline Tensor& operator op(Tensor& a, const Tensor& b) { \
    fn(a, b);                                              \
    return a;                                              \
  }                                                        \
  inline Tensor& operator op(Tensor& a, const Scalar& b) { \
    fn(a, b);                                              \
    return a;                                              \
  }                                                        \
  inline Tensor operator op(Tensor&& a, const Tensor& b) { \
    fn(a, b);                                              \
    return std::move(a);                                   \
  }                                                        \
  inline Tensor operator op(Tensor&& a, const Scalar& b) { \
    fn(a, b);                                              \
    return std::move(a);                                   \
  }
TP_COMPOUND_ASSIGNMENT(+=, add_)
TP_COMPOUND_ASSIGNMENT(-=, sub_)
TP_COMPOUND_ASSIGNMENT(*=, mul_)
TP_COMPOUND_ASSIGNMENT(/=, div_)
TP_COMPOUND_ASSIGNMENT(%=, remainder_)
TP_COMPOUND_ASSIGNMENT(&=, bitwise_and_)
TP_COMPOUND_ASSIGNMENT(|=, bitwise_or_)
TP_COMPOUND_ASSIGNMENT(^=, bitwise_xor_)
#undef TP_COMPOUND_ASSIGNMENT

}  // namespace tp

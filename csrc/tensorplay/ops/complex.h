#pragma once
// Complex tensors computed on their parts. A complex element is a pair of floats, real part first,
// and view_as_real shows a complex tensor as those pairs; each complex op here is written with
// the real ops on the parts. Their broadcasting, dtype checks and gradients come with them: the
// gradient of a real loss reaching a complex input is dL/dRe + i dL/dIm, PyTorch's convention (the
// conjugate Wirtinger derivative, doubled).
//
// The real ops' entry points hand a complex computation here (binary.cpp, unary.cpp, reduce.cpp,
// linalg.cpp); an op without a complex form fails there as "not implemented for 'complex64'".

#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {

// a OP b in the complex dtype `dtype`, for the binary ops computed on the parts (+ - * / have
// kernels: cpu/binary.cpp).
Tensor complex_binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, ScalarType dtype);
// OP z for the unary ops that have a complex form (abs and the predicates return real or bool).
Tensor complex_unary(UnaryOp op, const char* name, const Tensor& z);
// The sum (or mean) of a complex tensor over dims (every dim when empty).
Tensor complex_sum(const Tensor& z, IntArrayRef dims, bool keepdim, bool mean);
// The product over dim (every element when none).
Tensor complex_prod(const Tensor& z, std::optional<int64_t> dim, bool keepdim);
// The running product of a complex tensor along dim (a wrapped dim).
Tensor complex_cumprod(const Tensor& z, int64_t dim);
// z ** exponent, base ** z.
Tensor complex_pow(const Tensor& z, const Scalar& exponent);
Tensor complex_pow(const Scalar& base, const Tensor& z);
// A matrix product (mm, bmm) of complex tensors: four real products.
Tensor complex_product(const Tensor& a, const Tensor& b, Tensor (*product)(const Tensor&, const Tensor&));

}  // namespace tp

// Complex tensors computed on their parts (see complex.h), and the ops that move between complex
// and real tensors: real, imag, complex, polar, conj, angle.

#include "tensorplay/ops/complex.h"

#include <numbers>

#include "tensorplay/core/shape.h"

namespace tp {

namespace {

// A complex tensor's real and imaginary parts, as views.
struct Parts {
  Tensor re, im;
};

Parts parts(const Tensor& z) {
  Tensor pairs = view_as_real(z);
  return {select(pairs, -1, 0), select(pairs, -1, 1)};
}

// Pairs of floats along the last dim, read as complex numbers (copied where they cannot be viewed).
Tensor from_pairs(const Tensor& pairs) {
  bool viewable = pairs.stride(-1) == 1 && pairs.storage_offset() % 2 == 0;
  for (int64_t d = 0; d + 1 < pairs.dim(); ++d) viewable = viewable && pairs.stride(d) % 2 == 0;
  return view_as_complex(viewable ? pairs : contiguous(pairs));
}

// The complex tensors' shared checks: PyTorch's for torch.complex and torch.polar.
void check_parts(const char* op, const Tensor& a, const Tensor& b) {
  auto pairs_up = [](ScalarType t) {
    return t == ScalarType::Float16 || t == ScalarType::Float32 || t == ScalarType::Float64;
  };
  TP_CHECK(pairs_up(a.dtype()) && pairs_up(b.dtype()), "[", op,
           "] Expected both inputs to be Half, Float or Double tensors but got ", name(a.dtype()), " and ",
           name(b.dtype()));
  TP_CHECK(a.dtype() == b.dtype(), "[", op, "] Expected object of scalar type ", name(a.dtype()),
           " but got scalar type ", name(b.dtype()), " for second argument");
  TP_CHECK_KIND(ErrorKind::NotImplemented, !is_reduced_float(a.dtype()), "[", op,
                "] tensorplay has no complex32: ", "the parts must be float32 or float64, got ", name(a.dtype()));
}

// re + i im, broadcast together.
Tensor join(const Tensor& re, const Tensor& im) {
  Shape shape = broadcast_shapes("complex", re.sizes(), im.sizes());
  return view_as_complex(stack({expand(re, shape), expand(im, shape)}, -1));
}

}  // namespace

Tensor complex_binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, ScalarType dtype) {
  const Tensor x = to(a, dtype), y = to(b, dtype);
  if (op == BinaryOp::Pow) return exp(mul(y, log(x)));  // x^y = e^(y log x)
  if (op != BinaryOp::Eq && op != BinaryOp::Ne) fail_unsupported_dtype(name, dtype);
  auto [xr, xi] = parts(x);
  auto [yr, yi] = parts(y);
  return op == BinaryOp::Eq ? logical_and(eq(xr, yr), eq(xi, yi)) : logical_or(ne(xr, yr), ne(xi, yi));
}

Tensor complex_unary(UnaryOp op, const char* name, const Tensor& z) {
  auto [re, im] = parts(z);
  switch (op) {
    case UnaryOp::Neg:
      return from_pairs(neg(view_as_real(z)));
    case UnaryOp::Abs:
      return linalg_vector_norm(view_as_real(z), 2, {-1});
    case UnaryOp::Exp: {  // e^re (cos im + i sin im)
      Tensor magnitude = exp(re);
      return join(mul(magnitude, cos(im)), mul(magnitude, sin(im)));
    }
    case UnaryOp::Log:
      return join(log(complex_unary(UnaryOp::Abs, "abs", z)), atan2(im, re));
    case UnaryOp::Sqrt: {  // sqrt|z| e^(i angle/2)
      Tensor magnitude = sqrt(complex_unary(UnaryOp::Abs, "abs", z)), half_angle = mul(atan2(im, re), 0.5);
      return join(mul(magnitude, cos(half_angle)), mul(magnitude, sin(half_angle)));
    }
    case UnaryOp::Reciprocal: {
      Tensor norm = add(mul(re, re), mul(im, im));
      return join(div(re, norm), neg(div(im, norm)));
    }
    case UnaryOp::Rsqrt:
      return reciprocal(sqrt(z));
    case UnaryOp::Exp2:
      return exp(mul(z, std::numbers::ln2));
    case UnaryOp::Log2:  // each part divided (a complex quotient would make log(0)'s 0 a NaN)
      return from_pairs(div(view_as_real(log(z)), std::numbers::ln2));
    case UnaryOp::Log10:
      return from_pairs(div(view_as_real(log(z)), std::numbers::ln10));
    case UnaryOp::Sin:
      return join(mul(sin(re), cosh(im)), mul(cos(re), sinh(im)));
    case UnaryOp::Cos:
      return join(mul(cos(re), cosh(im)), neg(mul(sin(re), sinh(im))));
    case UnaryOp::Tan:
      return div(sin(z), cos(z));
    case UnaryOp::Sinh:
      return join(mul(sinh(re), cos(im)), mul(cosh(re), sin(im)));
    case UnaryOp::Cosh:
      return join(mul(cosh(re), cos(im)), mul(sinh(re), sin(im)));
    case UnaryOp::Tanh: {
      // (sinh 2re + i sin 2im) / (cosh 2re + cos 2im), divided through by cosh 2re so that a large
      // real part gives +-1 rather than inf / inf.
      Tensor twice_re = mul(re, 2), twice_im = mul(im, 2), cosh_re = cosh(twice_re);
      Tensor scale = add(div(cos(twice_im), cosh_re), 1);
      return join(div(tanh(twice_re), scale), div(div(sin(twice_im), cosh_re), scale));
    }
    case UnaryOp::Sigmoid:
      return reciprocal(add(exp(neg(z)), 1));
    case UnaryOp::IsNan:
      return logical_or(isnan(re), isnan(im));
    case UnaryOp::IsInf:
      return logical_or(isinf(re), isinf(im));
    case UnaryOp::IsFinite:
      return logical_and(isfinite(re), isfinite(im));
    default:
      fail_unsupported_dtype(name, z.dtype());
  }
}

Tensor complex_sum(const Tensor& z, IntArrayRef dims, bool keepdim, bool mean) {
  // The pairs' last dim is not summed: every dim of z is named, counted from the front.
  if (z.dim() == 0) return clone(z);  // (the pairs' only dim is theirs)
  Shape named;
  if (dims.empty()) {
    for (int64_t d = 0; d < z.dim(); ++d) named.push_back(d);
  } else {
    for (int64_t d : dims) named.push_back(wrap_dim(mean ? "mean" : "sum", d, z.dim()));
  }
  Tensor pairs = view_as_real(z);
  return from_pairs(mean ? tp::mean(pairs, named, keepdim) : sum(pairs, named, keepdim));
}

Tensor complex_prod(const Tensor& z, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return complex_prod(reshape(z, {-1}), 0, false);
  const int64_t d = wrap_dim("prod", *dim, z.dim());
  // Neighbours multiplied pairwise, halving the dim each round (an odd one out waits a round).
  Tensor rest = z;
  while (rest.size(d) > 1) {
    const int64_t half = rest.size(d) / 2;
    Tensor paired = mul(narrow(rest, d, 0, half), narrow(rest, d, half, half));
    rest = rest.size(d) % 2 ? cat({paired, narrow(rest, d, 2 * half, 1)}, d) : paired;
  }
  if (rest.size(d) == 0) {  // the empty product
    Shape sizes(z.sizes().begin(), z.sizes().end());
    sizes[d] = 1;
    rest = ones(sizes, z.dtype(), z.device());
  }
  return keepdim ? rest : squeeze(rest, IntArrayRef{d});
}

Tensor complex_cumprod(const Tensor& z, int64_t dim) {
  // Hillis and Steele's scan: after the round of shift s, element k holds the product of the 2s
  // elements that end at k (all of them, nearer the start), so log2(n) rounds reach every prefix.
  if (z.dim() == 0 || z.size(dim) <= 1) return clone(z);
  const int64_t n = z.size(dim);
  Tensor running = z;
  for (int64_t shift = 1; shift < n; shift *= 2)
    running = cat({narrow(running, dim, 0, shift),
                   mul(narrow(running, dim, shift, n - shift), narrow(running, dim, 0, n - shift))},
                  dim);
  return running;
}

Tensor complex_pow(const Tensor& z, const Scalar& exponent) {
  if (!exponent.is_complex()) {  // exact forms of the common exponents, as PyTorch's kernel has
    const double p = exponent.to_double();
    if (p == 2) return mul(z, z);
    if (p == 1) return clone(z);
    if (p == 0) return ones_like(z);
    if (p == 0.5) return sqrt(z);
  }
  return exp(mul(log(z), exponent));
}

Tensor complex_pow(const Scalar& base, const Tensor& z) { return exp(mul(z, Scalar(std::log(base.to_complex())))); }

Tensor complex_product(const Tensor& a, const Tensor& b, Tensor (*product)(const Tensor&, const Tensor&)) {
  auto [ar, ai] = parts(a);
  auto [br, bi] = parts(b);
  return join(sub(product(ar, br), product(ai, bi)), add(product(ar, bi), product(ai, br)));
}

Tensor real(const Tensor& t) { return is_complex(t.dtype()) ? select(view_as_real(t), -1, 0) : t; }

Tensor imag(const Tensor& t) {
  TP_CHECK(is_complex(t.dtype()), "[imag] imag is not implemented for tensors with non-complex dtypes.");
  return select(view_as_real(t), -1, 1);
}

Tensor complex(const Tensor& re, const Tensor& im) {
  check_parts("complex", re, im);
  return join(re, im);
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  check_parts("polar", abs, angle);
  broadcast_shapes("polar", abs.sizes(), angle.sizes());  // before the parts are computed, so the error is polar's
  return join(mul(abs, cos(angle)), mul(abs, sin(angle)));
}

Tensor conj(const Tensor& t) {
  if (!is_complex(t.dtype())) return t;
  auto [re, im] = parts(t);
  return join(re, neg(im));
}

Tensor angle(const Tensor& t) {
  if (is_complex(t.dtype())) {
    auto [re, im] = parts(t);
    return atan2(im, re);
  }
  // A real number's angle is 0, or pi where it is negative (NaN stays NaN); it has no slope.
  Tensor x = is_floating_point(t.dtype()) ? t : to(t, get_default_dtype());
  return where(isnan(x), x, mul(to(lt(x, 0), x.dtype()), std::numbers::pi));
}

}  // namespace tp

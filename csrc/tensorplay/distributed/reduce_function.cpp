#include "tensorplay/distributed/reduce_function.h"

#include <algorithm>
#include <complex>
#include <cstdint>

#include "tensorplay/core/error.h"
#include "tensorplay/cpu/simd/simd.h"

namespace tp::distributed {
namespace {

template <class T, class Op>
void combine(void* out, const void* a, const void* b, size_t n) {
  auto* o = static_cast<T*>(out);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(Op{}(x[i], y[i]));
}

// float32 sums and products are the bulk of what DDP reduces: they take the vectorised kernel that
// tensor arithmetic runs (AVX2 or AVX-512, chosen at run time), where the loop above stays scalar.
template <cpu::simd::Arith op>
void combine_float32(void* out, const void* a, const void* b, size_t n) {
  cpu::simd::arith_row(op, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(out),
                       static_cast<int64_t>(n));
}

struct Sum {
  auto operator()(auto a, auto b) const { return a + b; }
};
struct Product {
  auto operator()(auto a, auto b) const { return a * b; }
};
struct Min {
  auto operator()(auto a, auto b) const { return std::min(a, b); }
};
struct Max {
  auto operator()(auto a, auto b) const { return std::max(a, b); }
};
struct BitAnd {
  auto operator()(auto a, auto b) const { return a & b; }
};
struct BitOr {
  auto operator()(auto a, auto b) const { return a | b; }
};
struct BitXor {
  auto operator()(auto a, auto b) const { return a ^ b; }
};
// NaN wins a MIN or a MAX, as torch.minimum and torch.maximum have it.
struct FloatMin {
  auto operator()(auto a, auto b) const { return a != a ? a : (b < a || b != b ? b : a); }
};
struct FloatMax {
  auto operator()(auto a, auto b) const { return a != a ? a : (b > a || b != b ? b : a); }
};

template <class T>
ReduceFunction arithmetic(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      if constexpr (std::is_same_v<T, float>) return combine_float32<cpu::simd::Arith::Add>;
      return combine<T, Sum>;
    case ReduceOp::PRODUCT:
      if constexpr (std::is_same_v<T, float>) return combine_float32<cpu::simd::Arith::Mul>;
      return combine<T, Product>;
    case ReduceOp::MIN:
      return std::is_floating_point_v<T> ? combine<T, FloatMin> : combine<T, Min>;
    case ReduceOp::MAX:
      return std::is_floating_point_v<T> ? combine<T, FloatMax> : combine<T, Max>;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::BAND) return combine<T, BitAnd>;
    if (op == ReduceOp::BOR) return combine<T, BitOr>;
    return combine<T, BitXor>;
  }
  return nullptr;
}

// Booleans reduce as logic: SUM and MAX are "any", PRODUCT and MIN are "all".
ReduceFunction logical(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::MAX:
    case ReduceOp::BOR:
      return combine<uint8_t, BitOr>;
    case ReduceOp::PRODUCT:
    case ReduceOp::MIN:
    case ReduceOp::BAND:
      return combine<uint8_t, BitAnd>;
    case ReduceOp::BXOR:
      return combine<uint8_t, BitXor>;
    default:
      return nullptr;
  }
}

// Complex numbers sum (and average) only, as PyTorch's supports_complex allows.
template <class T>
ReduceFunction complex(ReduceOp op) {
  return op == ReduceOp::SUM || op == ReduceOp::AVG ? combine<std::complex<T>, Sum> : nullptr;
}

ReduceFunction lookup(ScalarType dtype, ReduceOp op) {
  if (op == ReduceOp::AVG && !is_floating_point(dtype) && !is_complex(dtype)) return nullptr;
  switch (dtype) {
    case ScalarType::Bool:
      return logical(op);
    case ScalarType::UInt8:
      return arithmetic<uint8_t>(op);
    case ScalarType::Int8:
      return arithmetic<int8_t>(op);
    case ScalarType::Int16:
      return arithmetic<int16_t>(op);
    case ScalarType::Int32:
      return arithmetic<int32_t>(op);
    case ScalarType::Int64:
      return arithmetic<int64_t>(op);
    case ScalarType::Float32:
      return arithmetic<float>(op);
    case ScalarType::Float64:
      return arithmetic<double>(op);
    case ScalarType::ComplexFloat:
      return complex<float>(op);
    case ScalarType::ComplexDouble:
      return complex<double>(op);
    default:
      return nullptr;
  }
}

}  // namespace

ReduceFunction reduce_function(std::string_view collective, ScalarType dtype, ReduceOp op) {
  // 16-bit floats are reduced in float32, so they accept what float32 accepts.
  ReduceFunction f = lookup(is_reduced_float(dtype) ? ScalarType::Float32 : dtype, op);
  // PyTorch's error types: a ValueError for complex tensors, a RuntimeError otherwise.
  TP_CHECK_VALUE(f || !is_complex(dtype), "[", collective, "] ReduceOp.", name(op), " cannot reduce complex tensors");
  TP_CHECK(f, "[", collective, "] ReduceOp.", name(op), " cannot reduce ", name(dtype), " tensors");
  return f;
}

}  // namespace tp::distributed

#include "tensorplay/autograd/hooks.h"

#include <algorithm>

namespace tp::autograd {

namespace {

// PyTorch's legacy type names, which its hook errors print: "FloatTensor".
const char* legacy_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "BoolTensor";
    case ScalarType::UInt8: return "ByteTensor";
    case ScalarType::Int8: return "CharTensor";
    case ScalarType::Int16: return "ShortTensor";
    case ScalarType::Int32: return "IntTensor";
    case ScalarType::Int64: return "LongTensor";
    case ScalarType::Float16: return "HalfTensor";
    case ScalarType::BFloat16: return "BFloat16Tensor";
    case ScalarType::Float32: return "FloatTensor";
    case ScalarType::Float64: return "DoubleTensor";
    case ScalarType::ComplexFloat: return "ComplexFloatTensor";
    case ScalarType::ComplexDouble: return "ComplexDoubleTensor";
  }
  return "Tensor";
}

std::string type_string(const Tensor& t) {
  std::string prefix = t.device().is_cpu() ? "tensorplay." : "tensorplay." + t.device().str() + ".";
  return prefix + legacy_type_name(t.dtype());
}

}  // namespace

Tensor run_hook(const GradHook& hook, const Tensor& grad) {
  Tensor result = hook.fn(grad);
  if (!result.defined()) return grad;
  TP_CHECK(result.dtype() == grad.dtype() && result.device() == grad.device(), "hook '", hook.name,
           "' has changed the type of value (was ", type_string(grad), " got ", type_string(result), ")");
  TP_CHECK(std::ranges::equal(result.sizes(), grad.sizes()), "hook '", hook.name, "' has changed the size of value");
  return result;
}

}  // namespace tp::autograd

#pragma once
// PyTorch's result_type: the dtype an op computes in, given its operands.
//
// Operands fall into three tiers: tensors with dimensions, 0-dim tensors, and Python numbers.
// Within a tier dtypes promote normally; a lower tier changes the result only when it is of a
// higher category (bool < integer < floating). So `int_tensor + 2.5` is a float tensor but
// `float16_tensor + float64_scalar` stays float16. A Python float counts as the default dtype.

#include <optional>

#include "tensorplay/core/tensor.h"

namespace tp {

ScalarType get_default_dtype();
// Only floating dtypes can be the default.
void set_default_dtype(ScalarType dtype);

class ResultType {
 public:
  ResultType& add(const Tensor& t);
  ResultType& add(const Scalar& s);
  ScalarType get() const;

 private:
  std::optional<ScalarType> dimensioned_, zero_dim_, number_;
};

ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);

}  // namespace tp

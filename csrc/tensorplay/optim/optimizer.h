#pragma once
// tp::optim::Optimizer, as LibTorch's: built over a module's parameters() (tensor handles, so the
// optimizer updates the module's own tensors), with zero_grad() and step(). Each step runs the
// update rules of ops/optim.h, the same kernels tensorplay.optim uses, over the parameters that
// have a gradient; the others are skipped and their state left as it was, as in Python.

#include <cstddef>
#include <vector>

#include "tensorplay/core/arg.h"
#include "tensorplay/core/tensor.h"

namespace tp::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual void step() = 0;
  void zero_grad(bool set_to_none = true);
  const std::vector<Tensor>& parameters() const { return params_; }

 protected:
  // The indices of the parameters with a gradient now.
  std::vector<size_t> with_grads() const;

  std::vector<Tensor> params_;
};

}  // namespace tp::optim

// A backend registered from outside the library reaches every layer through the registry alone:
// here the CPU's kernels serve the cuda device type over host memory (a stand-in for a real
// device on machines without one), and ops, autograd, copies between devices and item() run on it.

#include <gtest/gtest.h>

#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"

namespace tp {
namespace {

const Device kCuda(DeviceType::CUDA, 0);
const Device kCpu(DeviceType::CPU);

// Registers the CPU's kernels for cuda while it lives.
class HostMemoryCuda {
 public:
  HostMemoryCuda() : replaced_(register_backend(DeviceType::CUDA, &backend(kCpu))) {}
  ~HostMemoryCuda() { register_backend(DeviceType::CUDA, replaced_); }

 private:
  Backend* replaced_;
};

TEST(BackendRegistry, AnUnregisteredDeviceTypeIsAClearError) {
  try {
    empty({2}, ScalarType::Float32, kCuda);
    FAIL() << "allocated on a device type without a backend";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without CUDA support"), std::string::npos) << e.what();
  }
}

TEST(BackendRegistry, OpsAndAutogradRunOnARegisteredBackend) {
  HostMemoryCuda cuda;
  Tensor w = full({2, 3}, 0.5, ScalarType::Float32, kCuda).set_requires_grad(true);
  Tensor x = to(arange(0, 6, 1, ScalarType::Float32).reshape(IntArrayRef{2, 3}), kCuda);
  Tensor loss = sum(mul(matmul(x, transpose(w, 0, 1)), 2));
  EXPECT_EQ(loss.device(), kCuda);
  EXPECT_DOUBLE_EQ(loss.item<double>(), 2 * 0.5 * (0 + 1 + 2 + 3 + 4 + 5) * 2);  // read through a copy to the host
  loss.backward();
  Tensor grad = to(w.grad(), kCpu);
  EXPECT_EQ(w.grad().device(), kCuda);
  for (int j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(grad.data_ptr<float>()[j], 2 * (j + (j + 3)));
}

TEST(BackendRegistry, CopiesGoBetweenDevicesBothWays) {
  HostMemoryCuda cuda;
  Tensor host = arange(0, 4, 1, ScalarType::Float64);
  Tensor there = to(host, kCuda, ScalarType::Float32);
  EXPECT_EQ(there.device(), kCuda);
  Tensor back = empty({4}, ScalarType::Int64);
  copy_(back, there);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back.data_ptr<int64_t>()[i], i);
  EXPECT_THROW(add(host, there), Error);  // operands on two devices are refused, as in PyTorch
}

}  // namespace
}  // namespace tp

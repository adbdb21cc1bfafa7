#include "tensorplay/dispatch/backend.h"

#include <array>
#include <utility>

namespace tp {

namespace {
std::array<Backend*, kNumDeviceTypes>& registry() {
  static std::array<Backend*, kNumDeviceTypes> backends{};
  return backends;
}
}  // namespace

Backend* register_backend(DeviceType type, Backend* kernels) {
  return std::exchange(registry()[static_cast<int>(type)], kernels);
}

Backend& backend(Device device) {
  static const bool registered = (register_builtin_backends(), true);
  (void)registered;
  Backend* kernels = registry()[static_cast<int>(device.type)];
  TP_CHECK(kernels, "[backend] no kernels for ", device.str(), ": tensorplay was built without CUDA support");
  return *kernels;
}

}  // namespace tp

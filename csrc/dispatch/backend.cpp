#include "dispatch/backend.h"

#include "cpu/backend.h"

namespace tp {

Backend& backend(Device device) {
  static cpu::CpuBackend cpu;
  if (device.is_cpu()) return cpu;
  TP_FAIL("no kernels for ", device.str(), ": tensorplay was built without CUDA support");
}

}  // namespace tp

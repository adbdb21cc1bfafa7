// The backends built into libtensorplay. They are registered from here, not by static objects in
// their own files, because a static library leaves out the object files that nothing refers to.

#include "tensorplay/cpu/backend.h"
#include "tensorplay/meta/backend.h"

namespace tp {

void register_builtin_backends() {
  static cpu::CpuBackend cpu;
  register_backend(DeviceType::CPU, &cpu);
  static meta::MetaBackend meta;
  register_backend(DeviceType::Meta, &meta);
}

}  // namespace tp

#pragma once
// Autocast's thread-local state. Per device type: whether autocast is on and which
// lower-precision dtype it uses. For the thread: whether casts of weights are cached, how deeply
// autocast regions nest, and whether an op body is running (the ops an autocast op calls
// internally are never cast again). A new thread starts with autocast off everywhere.

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "tensorplay/core/device.h"
#include "tensorplay/core/scalar_type.h"

namespace tp::amp {

struct AutocastState {
  uint8_t enabled_mask = 0;  // bit i: autocast on for DeviceType i
  // CPU, CUDA, meta (where autocast is never on)
  std::array<ScalarType, kNumDeviceTypes> dtype{ScalarType::BFloat16, ScalarType::Float16, ScalarType::Float32};
  bool cache_enabled = true;
  int nesting = 0;   // autocast regions entered and not yet left
  int excluded = 0;  // > 0 while an autocast op's body runs
  bool entering_composite = false;  // amp::run is calling a composite op's body (see is_active)
};

namespace detail {
extern thread_local AutocastState state;
}

// The check at the top of every op that autocast knows: one thread-local load when off. When
// amp::run calls a composite op's body, the op's own check lets it through once; the ops inside
// it then see autocast as usual.
inline bool is_active() {
  AutocastState& s = detail::state;
  if (s.enabled_mask == 0 || s.excluded != 0) return false;
  return !std::exchange(s.entering_composite, false);
}

bool is_enabled(DeviceType device);
void set_enabled(DeviceType device, bool enabled);
ScalarType get_dtype(DeviceType device);
void set_dtype(DeviceType device, ScalarType dtype);  // floating dtypes only
bool is_cache_enabled();
void set_cache_enabled(bool enabled);
int increment_nesting();
int decrement_nesting();  // returns the new depth

// While alive, ops run as if autocast were off (the body of an op autocast has dispatched).
class ExcludeGuard {
 public:
  ExcludeGuard() { ++detail::state.excluded; }
  ~ExcludeGuard() { --detail::state.excluded; }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;
};

// While alive, the next autocast check (the composite op's own, when amp::run calls its body)
// lets the op through; the flag is cleared however the body ends.
class CompositeEntry {
 public:
  CompositeEntry() { detail::state.entering_composite = true; }
  ~CompositeEntry() { detail::state.entering_composite = false; }
  CompositeEntry(const CompositeEntry&) = delete;
  CompositeEntry& operator=(const CompositeEntry&) = delete;
};

// One autocast region: entering sets the state for `device` and counts the region; leaving
// restores exactly what entering saw and, when the outermost region closes, empties the cast
// cache so that no cached weight outlives its region. Python's `tensorplay.autocast` and C++'s
// `AutocastGuard` are both this.
struct Region {
  DeviceType device;
  bool prev_enabled;
  ScalarType prev_dtype;
  bool prev_cache_enabled;
};
// dtype and cache_enabled default to the current values.
Region enter_region(DeviceType device, std::optional<ScalarType> dtype, bool enabled,
                    std::optional<bool> cache_enabled);
void exit_region(const Region& region);

// RAII for C++ callers: `tp::AutocastGuard guard(tp::DeviceType::CPU);` runs the rest of the
// scope under autocast with the device's default dtype (bfloat16 on CPU, float16 on CUDA).
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device, std::optional<ScalarType> dtype = {}, bool enabled = true,
                         std::optional<bool> cache_enabled = {})
      : region_(enter_region(device, dtype, enabled, cache_enabled)) {}
  ~AutocastGuard() { exit_region(region_); }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  Region region_;
};

}  // namespace tp::amp

namespace tp {
using amp::AutocastGuard;
}

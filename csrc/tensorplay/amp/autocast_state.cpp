#include "tensorplay/amp/autocast_state.h"

#include "tensorplay/amp/cast_cache.h"
#include "tensorplay/core/error.h"

namespace tp::amp {

namespace detail {
thread_local AutocastState state;
}
using detail::state;

namespace {
uint8_t bit(DeviceType device) { return uint8_t(1u << static_cast<int>(device)); }
int index(DeviceType device) { return static_cast<int>(device); }
}  // namespace

bool is_enabled(DeviceType device) { return state.enabled_mask & bit(device); }

void set_enabled(DeviceType device, bool enabled) {
  state.enabled_mask = enabled ? (state.enabled_mask | bit(device)) : (state.enabled_mask & ~bit(device));
}

ScalarType get_dtype(DeviceType device) { return state.dtype[index(device)]; }

void set_dtype(DeviceType device, ScalarType dtype) {
  TP_CHECK_TYPE(is_floating_point(dtype), "[set_autocast_dtype] expected a floating point dtype, got ", name(dtype));
  state.dtype[index(device)] = dtype;
}

bool is_cache_enabled() { return state.cache_enabled; }
void set_cache_enabled(bool enabled) { state.cache_enabled = enabled; }
int increment_nesting() { return ++state.nesting; }
int decrement_nesting() { return state.nesting = std::max(state.nesting - 1, 0); }

Region enter_region(DeviceType device, std::optional<ScalarType> dtype, bool enabled,
                    std::optional<bool> cache_enabled) {
  Region saved{device, is_enabled(device), get_dtype(device), state.cache_enabled};
  if (dtype) set_dtype(device, *dtype);
  set_enabled(device, enabled);
  state.cache_enabled = cache_enabled.value_or(state.cache_enabled);
  increment_nesting();
  return saved;
}

void exit_region(const Region& region) {
  if (decrement_nesting() == 0) clear_cache();
  set_enabled(region.device, region.prev_enabled);
  state.dtype[index(region.device)] = region.prev_dtype;
  state.cache_enabled = region.prev_cache_enabled;
}

}  // namespace tp::amp

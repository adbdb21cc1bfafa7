#pragma once
// A record of every op the autocast layer dispatches while a trace is open on this thread:
// `with tensorplay.amp.trace() as t:`. When no trace is open the layer checks one thread-local
// pointer and records nothing.

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "tensorplay/amp/autocast_policy.h"
#include "tensorplay/core/scalar_type.h"

namespace tp::amp {

struct TraceEntry {
  Op op;
  DeviceType device;
  std::vector<ScalarType> inputs;     // dtypes of the tensor arguments, as the caller passed them
  Policy policy;                      // the policy in force (overrides included)
  std::optional<ScalarType> compute;  // the dtype inputs were cast to; none: no casts
  std::vector<ScalarType> outputs;
  int casts = 0;       // tensors cast, cache hits included
  int cache_hits = 0;  // casts served by the weight cache
};

struct Trace {
  std::vector<TraceEntry> entries;
};

// The trace open on this thread, or null.
Trace* active_trace();

// Opens `trace` on this thread for the guard's lifetime; traces nest, the innermost records.
class TraceGuard {
 public:
  explicit TraceGuard(Trace* trace);
  ~TraceGuard();
  TraceGuard(const TraceGuard&) = delete;
  TraceGuard& operator=(const TraceGuard&) = delete;

 private:
  Trace* previous_;
};

}  // namespace tp::amp

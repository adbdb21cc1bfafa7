#include "tensorplay/amp/autocast_trace.h"

namespace tp::amp {

namespace {
thread_local Trace* current = nullptr;
}

Trace* active_trace() { return current; }

TraceGuard::TraceGuard(Trace* trace) : previous_(current) { current = trace; }
TraceGuard::~TraceGuard() { current = previous_; }

}  // namespace tp::amp

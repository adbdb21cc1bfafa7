#pragma once
// The autocast layer, the top of the dispatcher (Note [Dispatcher layers] in ARCHITECTURE.md).
//
// Note [Autocast above autograd]
// Autocast casts an op's inputs and then calls the op again with itself excluded, so the call
// below sees already-cast tensors. Because it sits above autograd, each cast is an ordinary
// recorded op (ToCopyBackward): the op below saves its inputs in the dtype it computes in,
// backward runs in that dtype too, and the cast's backward turns gradients back into the
// weights' float32. The autograd layer and the kernels never look at autocast.
//
// An op takes part by starting with one line, `TP_OP_ENTRY(op, arguments...);` (TP_AUTOCAST, then
// the profiler's span: profiler/op_span.h), and having a row in the policy table
// (autocast_policy.h). Ops without the line (views, factories, casts) are never cast; composites
// without it let each op they call decide for itself.

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorplay/amp/autocast_policy.h"
#include "tensorplay/amp/autocast_state.h"
#include "tensorplay/amp/autocast_trace.h"
#include "tensorplay/core/tensor.h"
#include "tensorplay/profiler/profiler.h"

namespace tp::amp {

// What autocast decided for one call.
struct Plan {
  DeviceType device;
  Policy policy;
  std::optional<ScalarType> target;  // what eligible inputs are cast to; none: no casts
  int casts = 0;
  int cache_hits = 0;
};

namespace detail {

// What the plan needs to know about an op's arguments, gathered without allocating.
struct Inputs {
  std::optional<DeviceType> device;  // the first tensor's; the op runs there
  uint16_t floating = 0;             // bit per ScalarType of the floating tensors on `device`
  bool has_dtype = false;            // the caller chose an output dtype
  bool tracing = false;
  std::vector<ScalarType> dtypes;  // filled only while tracing
};

void collect(Inputs& in, const Tensor& t);
inline void collect(Inputs& in, const std::optional<Tensor>& t) {
  if (t) collect(in, *t);
}
inline void collect(Inputs& in, const TensorList& ts) {
  for (const Tensor& t : ts) collect(in, t);
}
inline void collect(Inputs& in, const std::optional<ScalarType>& dtype) { in.has_dtype |= dtype.has_value(); }
template <class T>
void collect(Inputs&, const T&) {}

// None when autocast is off for the op's device (or the op has no tensor). Raises for a banned op.
std::optional<Plan> make_plan(Op op, const Inputs& in);

Tensor cast(const Tensor& t, Plan& plan);
inline std::optional<Tensor> cast(const std::optional<Tensor>& t, Plan& plan) {
  return t ? std::optional<Tensor>(cast(*t, plan)) : t;
}
TensorList cast(const TensorList& ts, Plan& plan);
template <class T>
const T& cast(const T& x, Plan&) {
  return x;
}

void output_dtypes(std::vector<ScalarType>& out, const Tensor& t);
void output_dtypes(std::vector<ScalarType>& out, const TensorList& ts);
template <class A, class B>
void output_dtypes(std::vector<ScalarType>& out, const std::pair<A, B>& p) {
  output_dtypes(out, p.first);
  output_dtypes(out, p.second);
}
template <class... Ts>
void output_dtypes(std::vector<ScalarType>& out, const std::tuple<Ts...>& t) {
  std::apply([&](const auto&... items) { (output_dtypes(out, items), ...); }, t);
}

void record(Trace& trace, Op op, const Plan& plan, Inputs&& in, std::vector<ScalarType>&& outputs);

}  // namespace detail

// Runs `f(args...)` under op's policy: floating inputs cast as the plan says, the body with
// autocast excluded, and an entry in the open trace.
template <class F, class... Args>
auto run(Op op, F&& f, const Args&... args) {
  detail::Inputs in;
  in.tracing = active_trace() != nullptr;
  (detail::collect(in, args), ...);
  std::optional<Plan> plan = detail::make_plan(op, in);
  // The body runs with autocast excluded, except a composite's: its pieces cast by their own policies.
  std::optional<ExcludeGuard> exclude;
  std::optional<CompositeEntry> composite;
  if (plan && plan->policy == Policy::Composite)
    composite.emplace();
  else
    exclude.emplace();
  if (!plan) return f(args...);
  auto result = plan->target ? f(detail::cast(args, *plan)...) : f(args...);
  // The call above recorded the op's span; it says what autocast ran it in.
  if (plan->target && profiler::is_enabled()) [[unlikely]] profiler::annotate_last(*plan->target, plan->casts);
  if (Trace* trace = active_trace(); trace) [[unlikely]] {
    std::vector<ScalarType> outputs;
    detail::output_dtypes(outputs, result);
    detail::record(*trace, op, *plan, std::move(in), std::move(outputs));
  }
  return result;
}

}  // namespace tp::amp

// The first line of every op in the policy table. When autocast is off this is one thread-local
// load; when on, the op is called again through amp::run with its inputs cast.
// clang-format off
#define TP_AUTOCAST(op, ...)                                                                 \
  do {                                                                                       \
    if (::tp::amp::is_active()) [[unlikely]]                                                 \
      return ::tp::amp::run(                                                                 \
          ::tp::amp::Op::op, [](const auto&... args_) { return ::tp::op(args_...); }, __VA_ARGS__); \
  } while (0)
// clang-format on

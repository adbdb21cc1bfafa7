#include "tensorplay/amp/autocast.h"

#include "tensorplay/amp/cast_cache.h"
#include "tensorplay/core/error.h"
#include "tensorplay/ops/ops.h"

namespace tp::amp::detail {

namespace {

uint16_t bit(ScalarType t) { return uint16_t(1u << static_cast<int>(t)); }

// Cast candidates: floating tensors on the op's device, float64 excepted (autocast never
// narrows a dtype the user chose for its precision).
bool eligible(const Tensor& t, DeviceType device) {
  return t.defined() && t.device().type == device && t.is_floating_point() && t.dtype() != ScalarType::Float64;
}

// The widest floating input: float32 if any, else the autocast dtype. Mixing the two 16-bit
// types leaves no widest one, and PyTorch refuses it too.
ScalarType promote(const Inputs& in, DeviceType device) {
  const uint16_t floats = in.floating & ~bit(ScalarType::Float64);
  if (floats & bit(ScalarType::Float32)) return ScalarType::Float32;
  const ScalarType lower = get_dtype(device);
  TP_CHECK((floats & ~bit(lower)) == 0, "[autocast] cannot promote: no input is float32 and some are ",
           name(lower == ScalarType::BFloat16 ? ScalarType::Float16 : ScalarType::BFloat16), " while ", name(device),
           " autocast uses ", name(lower), "; cast the inputs to one dtype first");
  return lower;
}

[[noreturn]] void fail_banned(Op op, DeviceType device) {
  if (op == Op::binary_cross_entropy)
    TP_FAIL("[binary_cross_entropy] is unsafe to autocast on ", name(device),
            ": in float16 a sigmoid followed by binary cross entropy loses the precision the loss needs. "
            "Use tensorplay.nn.functional.binary_cross_entropy_with_logits or tensorplay.nn.BCEWithLogitsLoss, "
            "which fuse the two and are safe to autocast.");
  TP_FAIL("[", name(op), "] is banned under ", name(device), " autocast by the policy in force");
}

}  // namespace

void collect(Inputs& in, const Tensor& t) {
  if (!t.defined()) return;
  if (!in.device) in.device = t.device().type;
  if (t.is_floating_point() && t.device().type == *in.device) in.floating |= bit(t.dtype());
  if (in.tracing) in.dtypes.push_back(t.dtype());
}

std::optional<Plan> make_plan(Op op, const Inputs& in) {
  if (!in.device || !is_enabled(*in.device)) return std::nullopt;
  const DeviceType device = *in.device;
  Plan plan{device, policy(op, device), std::nullopt};
  switch (plan.policy) {
    case Policy::InputDtype:
    case Policy::Composite:
      break;
    case Policy::LowerPrecision:
      plan.target = get_dtype(device);
      break;
    case Policy::Float32:
      plan.target = ScalarType::Float32;
      break;
    case Policy::Float32UnlessDtype:
      if (!in.has_dtype) plan.target = ScalarType::Float32;
      break;
    case Policy::Promote:
      if (in.floating) plan.target = promote(in, device);
      break;
    case Policy::Banned:
      fail_banned(op, device);
  }
  return plan;
}

Tensor cast(const Tensor& t, Plan& plan) {
  if (!eligible(t, plan.device) || t.dtype() == *plan.target) return t;
  ++plan.casts;
  if (!cacheable(t, *plan.target)) return to(t, *plan.target);
  bool hit = false;
  Tensor result = cached_cast(t, *plan.target, &hit);
  plan.cache_hits += hit;
  return result;
}

TensorList cast(const TensorList& ts, Plan& plan) {
  TensorList out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(cast(t, plan));
  return out;
}

void output_dtypes(std::vector<ScalarType>& out, const Tensor& t) {
  if (t.defined()) out.push_back(t.dtype());
}
void output_dtypes(std::vector<ScalarType>& out, const TensorList& ts) {
  for (const Tensor& t : ts) output_dtypes(out, t);
}

void record(Trace& trace, Op op, const Plan& plan, Inputs&& in, std::vector<ScalarType>&& outputs) {
  trace.entries.push_back({op, plan.device, std::move(in.dtypes), plan.policy, plan.target, std::move(outputs),
                           plan.casts, plan.cache_hits});
}

}  // namespace tp::amp::detail

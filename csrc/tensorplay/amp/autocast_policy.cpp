#include "tensorplay/amp/autocast_policy.h"

#include <array>
#include <string>

#include "tensorplay/core/error.h"

namespace tp::amp {

namespace {

struct Row {
  std::string_view name;
  std::array<Policy, kNumDeviceTypes> policy;  // indexed by DeviceType
};

constexpr std::array<Row, kNumOps> kTable = {{
// Meta tensors are never cast: autocast is not available for them, as in PyTorch.
#define TP_AUTOCAST_ROW(op, cpu, cuda) {#op, {Policy::cpu, Policy::cuda, Policy::InputDtype}},
    TP_AUTOCAST_OPS(TP_AUTOCAST_ROW)
#undef TP_AUTOCAST_ROW
}};

constexpr std::array<std::string_view, 7> kPolicyNames = {
    "input_dtype", "lower_precision", "float32", "float32_unless_dtype", "promote", "banned", "composite"};

// Scoped overrides for this thread; empty (no override) almost always.
thread_local std::array<std::array<std::optional<Policy>, kNumOps>, kNumDeviceTypes> overrides;

int index(Op op) { return static_cast<int>(op); }

}  // namespace

std::string_view name(Op op) { return kTable[index(op)].name; }
std::string_view name(Policy policy) { return kPolicyNames[static_cast<int>(policy)]; }

Op parse_op(std::string_view name, std::string_view caller) {
  for (int i = 0; i < kNumOps; ++i)
    if (kTable[i].name == name) return static_cast<Op>(i);
  detail::fail(ErrorKind::Value, "[", caller, "] autocast has no policy for op '", name,
               "'; policy_table() lists the ops it knows");
}

Policy parse_policy(std::string_view name, std::string_view caller) {
  for (size_t i = 0; i < kPolicyNames.size(); ++i)
    if (kPolicyNames[i] == name) return static_cast<Policy>(i);
  std::string known;
  for (std::string_view n : kPolicyNames) known += (known.empty() ? "'" : ", '") + std::string(n) + "'";
  detail::fail(ErrorKind::Value, "[", caller, "] unknown autocast policy '", name, "'; expected one of ", known);
}

Policy table_policy(Op op, DeviceType device) { return kTable[index(op)].policy[static_cast<int>(device)]; }

Policy policy(Op op, DeviceType device) {
  const std::optional<Policy>& o = overrides[static_cast<int>(device)][index(op)];
  return o ? *o : table_policy(op, device);
}

PolicyOverride::PolicyOverride(DeviceType device, const std::vector<std::pair<Op, Policy>>& policies)
    : device_(device) {
  auto& slots = overrides[static_cast<int>(device)];
  saved_.reserve(policies.size());
  for (auto [op, p] : policies) {
    saved_.emplace_back(op, slots[index(op)]);
    slots[index(op)] = p;
  }
}

PolicyOverride::~PolicyOverride() {
  auto& slots = overrides[static_cast<int>(device_)];
  // In reverse, so that an op named twice ends up as it was.
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) slots[index(it->first)] = it->second;
}

}  // namespace tp::amp

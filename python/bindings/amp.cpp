// Autocast and the grad scaler's ops: the state functions PyTorch has at the top level
// (tensorplay.get_autocast_dtype, ...), and tensorplay._C._amp for tensorplay.amp's pieces:
// regions, the policy table and its overrides, and traces.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/amp/cast_cache.h"
#include "tensorplay/amp/grad_scaler.h"
#include "bindings.h"

namespace tp::python {

namespace {

DeviceType device_type(std::string_view s) { return parse_device_type(s); }

// A scoped policy override or trace, opened by __enter__ and closed by __exit__ of the Python
// context manager; closing twice is harmless.
template <class Guard>
struct Scope {
  std::unique_ptr<Guard> guard;
  void close() { guard.reset(); }
};

struct PyTrace {
  amp::Trace trace;
  std::unique_ptr<amp::TraceGuard> guard;
};

nb::list entries(const amp::Trace& trace) {
  nb::list out;
  for (const amp::TraceEntry& e : trace.entries) {
    nb::dict d;
    d["op"] = std::string(amp::name(e.op));
    d["device_type"] = std::string(name(e.device));
    d["input_dtypes"] = nb::tuple(nb::cast(e.inputs));
    d["policy"] = std::string(amp::name(e.policy));
    d["compute_dtype"] = e.compute ? nb::cast(*e.compute) : nb::none();
    d["output_dtypes"] = nb::tuple(nb::cast(e.outputs));
    d["casts"] = e.casts;
    d["cache_hits"] = e.cache_hits;
    out.append(d);
  }
  return out;
}

}  // namespace

void init_amp(nb::module_& m) {
  // ---- the state functions, at tensorplay's top level as in PyTorch ----
  m.def("is_autocast_available", [](std::string_view d) { return d == "cpu" || d == "cuda"; }, "device_type"_a);
  m.def(
      "is_autocast_enabled", [](std::string_view d) { return amp::is_enabled(device_type(d)); },
      "device_type"_a = "cuda");
  m.def(
      "set_autocast_enabled", [](std::string_view d, bool on) { amp::set_enabled(device_type(d), on); },
      "device_type"_a, "enabled"_a);
  m.def("get_autocast_dtype", [](std::string_view d) { return amp::get_dtype(device_type(d)); }, "device_type"_a);
  m.def(
      "set_autocast_dtype", [](std::string_view d, ScalarType t) { amp::set_dtype(device_type(d), t); },
      "device_type"_a, "dtype"_a);
  m.def("is_autocast_cache_enabled", &amp::is_cache_enabled);
  m.def("set_autocast_cache_enabled", &amp::set_cache_enabled, "enabled"_a);
  m.def("clear_autocast_cache", &amp::clear_cache);
  m.def("autocast_increment_nesting", &amp::increment_nesting);
  m.def("autocast_decrement_nesting", &amp::decrement_nesting);
  m.def("_amp_foreach_non_finite_check_and_unscale_", &amp_foreach_non_finite_check_and_unscale_, "self"_a,
        "found_inf"_a, "inv_scale"_a, release_gil());
  m.def("_amp_update_scale_", &amp_update_scale_, "self"_a, "growth_tracker"_a, "found_inf"_a, "scale_growth_factor"_a,
        "scale_backoff_factor"_a, "growth_interval"_a, release_gil());

  nb::module_ a = m.def_submodule("_amp", "Autocast internals (see tensorplay.amp)");
  nb::class_<amp::Region>(a, "_Region");
  a.def(
      "_enter_region",
      [](std::string_view d, std::optional<ScalarType> dtype, bool enabled, std::optional<bool> cache) {
        return amp::enter_region(device_type(d), dtype, enabled, cache);
      },
      "device_type"_a, "dtype"_a.none(), "enabled"_a, "cache_enabled"_a.none());
  a.def("_exit_region", &amp::exit_region, "region"_a);
  a.def("_cache_size", &amp::cache_size);

  a.def(
      "get_policy",
      [](std::string_view op, std::string_view d) {
        return std::string(amp::name(amp::policy(amp::parse_op(op, "get_policy"), device_type(d))));
      },
      "op_name"_a, "device_type"_a);
  a.def(
      "policy_table",
      [](std::string_view d) {
        std::vector<std::pair<std::string, std::string>> rows;
        for (int i = 0; i < amp::kNumOps; ++i) {
          auto op = static_cast<amp::Op>(i);
          rows.emplace_back(amp::name(op), amp::name(amp::policy(op, device_type(d))));
        }
        return rows;
      },
      "device_type"_a);

  using Override = Scope<amp::PolicyOverride>;
  nb::class_<Override>(a, "_PolicyOverride")
      .def(
          "__init__",
          [](Override* self, const std::vector<std::pair<std::string, std::string>>& policies, std::string_view d) {
            std::vector<std::pair<amp::Op, amp::Policy>> parsed;
            for (const auto& [op, policy] : policies)
              parsed.emplace_back(amp::parse_op(op, "policy_override"), amp::parse_policy(policy, "policy_override"));
            new (self) Override{std::make_unique<amp::PolicyOverride>(device_type(d), parsed)};
          },
          "policies"_a, "device_type"_a)
      .def("close", &Override::close);

  nb::class_<PyTrace>(a, "_Trace")
      .def(nb::init<>())
      .def("open", [](PyTrace& t) { t.guard = std::make_unique<amp::TraceGuard>(&t.trace); })
      .def("close", [](PyTrace& t) { t.guard.reset(); })
      .def("clear", [](PyTrace& t) { t.trace.entries.clear(); })
      .def_prop_ro("entries", [](const PyTrace& t) { return entries(t.trace); });
}

}  // namespace tp::python

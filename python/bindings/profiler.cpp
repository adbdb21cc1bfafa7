// tensorplay._C._profiler, for tensorplay.profiler: starting and stopping a profile, the user's
// ranges (record_function), and the spans a profile recorded, as tuples.

#include "tensorplay/profiler/profiler.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bindings.h"

namespace tp::python {

void init_profiler(nb::module_& m) {
  nb::module_ p = m.def_submodule("_profiler", "The profiler's recorder (tensorplay.profiler).");
  p.def(
      "start",
      [](bool record_shapes, bool profile_memory) {
        profiler::start({.record_shapes = record_shapes, .profile_memory = profile_memory});
      },
      "record_shapes"_a, "profile_memory"_a);
  p.def("is_enabled", &profiler::is_enabled);
  // Each span as (name, start_ns, end_ns, thread, parent, input_shapes, input_dtypes, input_concrete,
  // self_memory, autocast_dtype or None, autocast_casts, user_range).
  p.def("stop", [] {
    std::vector<profiler::Event> events;
    {
      nb::gil_scoped_release released;
      events = profiler::stop();
    }
    nb::list out;
    for (const profiler::Event& e : events) {
      nb::object autocast = e.autocast_dtype ? nb::cast(std::string(name(*e.autocast_dtype))) : nb::none();
      out.append(nb::make_tuple(e.name, e.start_ns, e.end_ns, e.thread, e.parent, e.input_shapes, e.input_dtypes,
                                e.input_concrete, e.self_memory, autocast, e.autocast_casts, e.user_range));
    }
    return out;
  });
  p.def("push_range", &profiler::push_range, "name"_a, "user_range"_a = true);
  p.def("pop_range", &profiler::pop_range, "handle"_a);
}

}  // namespace tp::python

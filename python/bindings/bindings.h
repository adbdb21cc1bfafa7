#pragma once
// Shared by the binding files: each init_* adds one family to the module.

#include <algorithm>

#include "casters.h"
#include "tensorplay/ops/ops.h"

namespace tp::python {

using namespace nb::literals;

void init_tensor(nb::module_& m);
void init_factories(nb::module_& m);
void init_ops(nb::module_& m);
void init_indexing(nb::module_& m);
void init_numpy(nb::module_& m);
void init_autograd(nb::module_& m);
void init_nn(nb::module_& m);
void init_optim(nb::module_& m);
void init_amp(nb::module_& m);
void init_profiler(nb::module_& m);
void init_distributed(nb::module_& m);

// The Python class tensorplay.Tensor.
nb::class_<PyTensor>& tensor_class();

// Sizes given either as one sequence or as separate ints: x.view(2, 3) or x.view((2, 3)).
Shape sizes_arg(const nb::args& args, const char* op);

// Note [Python objects in globals]: a global nb::object would be released by a static destructor
// at exit, after the interpreter has finalized; freeing the object then aborts Python ("the GIL is
// released"). Globals that hold Python objects are leaked instead: `nb::object& g = persistent();`.
inline nb::object& persistent() { return *new nb::object(); }

// Ops take a device keyword that may be a string; this releases the GIL while an op runs.
using release_gil = nb::call_guard<nb::gil_scoped_release>;

// Python's operators release the GIL only for operands this large (elements): releasing and
// taking it back is a noticeable part of `a + b` on small tensors (figures in BENCHMARKS.md),
// while other threads gain from it only when the op runs long enough for them to get something
// done.
inline constexpr int64_t kReleaseGilFrom = 1 << 14;

inline int64_t elements(const Tensor& t) { return t.numel(); }
template <class T>
int64_t elements(const T&) { return 0; }

// f, to be bound so that it runs with the GIL released when its largest tensor argument has
// kReleaseGilFrom elements or more.
template <class R, class... Args>
auto releasing_gil_if_large(R (*f)(Args...)) {
  return [f](Args... args) -> R {
    if (std::max({int64_t{0}, elements(args)...}) < kReleaseGilFrom) return f(std::forward<Args>(args)...);
    nb::gil_scoped_release released;
    return f(std::forward<Args>(args)...);
  };
}

}  // namespace tp::python

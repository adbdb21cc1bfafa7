// Tensor factories, random numbers and generators.

#include <cstring>
#include <random>

#include "tensorplay/autograd/variable.h"
#include "bindings.h"

namespace tp::python {

namespace {

struct FactoryOptions {
  OptionalDType dtype;
  Device device;
};

FactoryOptions options(std::optional<ScalarType> dtype, nb::handle device) { return {dtype, device_arg(device)}; }

// Factories take requires_grad=: the result is a leaf that requires grad.
Tensor requiring_grad(Tensor t, bool requires_grad) {
  if (requires_grad) autograd::set_requires_grad(t, true);
  return t;
}

Generator* generator_arg(nb::handle h, const char* op) {
  if (h.is_none()) return nullptr;
  Generator* g = nullptr;
  TP_CHECK_TYPE(nb::try_cast(h, g) && g, "[", op, "] argument 'generator' must be Generator, not ",
                nb::inst_name(h).c_str());
  return g;
}

// A seed as PyTorch takes it: any int from -2^63 to 2^64 - 1, negative ones taken modulo 2^64.
uint64_t seed_arg(nb::handle seed) {
  TP_CHECK_TYPE(PyIndex_Check(seed.ptr()), "[manual_seed] seed must be an int, not ", nb::inst_name(seed).c_str());
  nb::object value = nb::steal(PyNumber_Index(seed.ptr()));
  if (!value.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long signed_value = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(signed_value);
  const unsigned long long unsigned_value = overflow > 0 ? PyLong_AsUnsignedLongLong(value.ptr()) : 0;
  if (overflow < 0 || PyErr_Occurred()) {
    PyErr_Clear();
    TP_CHECK_VALUE(false, "[manual_seed] Overflow when unpacking long long: the seed must be within [-2**63, 2**64 - 1], "
                   "got ", nb::str(seed).c_str());
  }
  return unsigned_value;
}

// The keyword arguments every factory takes.
#define TP_FACTORY_KWARGS                                                                            \
  nb::kw_only(), "dtype"_a.none() = nb::none(), "device"_a.none() = nb::none(), "requires_grad"_a = false,        \
      "layout"_a.none() = nb::none(), "pin_memory"_a = false

template <class Fill>
void def_sized_factory(nb::module_& m, const char* name, Fill fill) {
  m.def(name, [fill](nb::args size, std::optional<ScalarType> dtype, nb::handle device, bool requires_grad,
                     nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    Shape sizes = sizes_arg(size, "zeros");
    nb::gil_scoped_release released;
    return requiring_grad(fill(sizes, o), requires_grad);
  }, "size"_a, TP_FACTORY_KWARGS);
}

// fill(empty_like(input, ...)) with the dtype, device and memory format asked for.
template <class Fill>
void def_like_factory(nb::module_& m, const char* name, Fill fill) {
  m.def(name, [fill](const Tensor& input, std::optional<ScalarType> dtype, nb::handle device, bool requires_grad,
                     nb::handle, bool, MemoryFormat format) {
    FactoryOptions o = options(dtype, device);
    Tensor out = empty_like(input, o.dtype, device.is_none() ? input.device() : o.device, format);
    return requiring_grad(fill(out), requires_grad);
  }, "input"_a, TP_FACTORY_KWARGS, "memory_format"_a = MemoryFormat::Preserve);
}

}  // namespace

void init_factories(nb::module_& m) {
  nb::class_<Generator>(m, "Generator")
      .def("__init__", [](Generator* g, nb::handle device) {
        TP_CHECK(device_arg(device).is_cpu(), "[Generator] only CPU generators are supported");
        new (g) Generator(std::random_device{}() | (static_cast<uint64_t>(std::random_device{}()) << 32));
      }, "device"_a = "cpu")
      .def("manual_seed", [](nb::handle self, nb::handle seed) {
        nb::cast<Generator&>(self).manual_seed(seed_arg(seed));
        return nb::borrow(self);
      }, "seed"_a)
      .def("initial_seed", &Generator::initial_seed)
      .def("get_state", [](const Generator& g) {
        Tensor state = empty({16}, ScalarType::UInt8);
        uint64_t words[2] = {g.initial_seed(), g.offset()};
        std::memcpy(state.data_ptr(), words, sizeof(words));
        return state;
      })
      .def("set_state", [](Generator& g, const Tensor& state) {
        TP_CHECK(state.dtype() == ScalarType::UInt8 && state.numel() == 16,
                 "[set_state] expected a uint8 tensor of 16 elements from get_state()");
        uint64_t words[2];
        std::memcpy(words, state.contiguous().data_ptr(), sizeof(words));
        g.set_state(words[0], words[1]);
      }, "new_state"_a)
      .def_prop_ro("device", [](const Generator&) { return Device(); });
  m.attr("default_generator") = nb::cast(&default_generator(), nb::rv_policy::reference);
  m.def("manual_seed", [](nb::handle seed) {
    manual_seed(seed_arg(seed));
    return &default_generator();
  }, "seed"_a, nb::rv_policy::reference);
  m.def("initial_seed", [] { return default_generator().initial_seed(); });

  def_sized_factory(m, "zeros", [](const Shape& s, const FactoryOptions& o) { return zeros(s, o.dtype, o.device); });
  def_sized_factory(m, "ones", [](const Shape& s, const FactoryOptions& o) { return ones(s, o.dtype, o.device); });
  // empty alone takes a memory format.
  m.def("empty", [](nb::args size, std::optional<ScalarType> dtype, nb::handle device, bool requires_grad, nb::handle,
                    bool, MemoryFormat format) {
    FactoryOptions o = options(dtype, device);
    Shape sizes = sizes_arg(size, "empty");
    nb::gil_scoped_release released;
    Tensor out = format == MemoryFormat::Contiguous
                     ? empty(sizes, o.dtype, o.device)
                     : empty_strided(sizes, memory_format_strides("empty", sizes, format), o.dtype, o.device);
    return requiring_grad(out, requires_grad);
  }, "size"_a, TP_FACTORY_KWARGS, "memory_format"_a = MemoryFormat::Contiguous);
  // (empty_like of a sparse tensor is one without entries: zeros already.)
  def_like_factory(m, "zeros_like", [](const Tensor& t) { return t.is_sparse() ? t : zero_(t); });
  def_like_factory(m, "ones_like", [](const Tensor& t) { return fill_(t, 1); });
  def_like_factory(m, "empty_like", [](const Tensor& t) { return t; });
  def_like_factory(m, "rand_like", [](const Tensor& t) { return uniform_(t); });
  def_like_factory(m, "randn_like", [](const Tensor& t) { return normal_(t); });

  m.def("full", [](const Shape& size, const Scalar& value, std::optional<ScalarType> dtype, nb::handle device,
                   bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(full(size, value, o.dtype, o.device), requires_grad);
  }, "size"_a, "fill_value"_a, TP_FACTORY_KWARGS);
  m.def("full_like", [](const Tensor& input, const Scalar& value, std::optional<ScalarType> dtype, nb::handle device,
                        bool requires_grad, nb::handle, bool, MemoryFormat format) {
    FactoryOptions o = options(dtype, device);
    Tensor out = empty_like(input, dtype, device.is_none() ? input.device() : o.device, format);
    return requiring_grad(fill_(out, value), requires_grad);
  }, "input"_a, "fill_value"_a, TP_FACTORY_KWARGS, "memory_format"_a = MemoryFormat::Preserve);
  m.def("empty_strided", [](const Shape& size, const Shape& stride, std::optional<ScalarType> dtype,
                            nb::handle device, bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(empty_strided(size, stride, o.dtype, o.device), requires_grad);
  }, "size"_a, "stride"_a, TP_FACTORY_KWARGS);
  m.def("scalar_tensor", [](const Scalar& value, std::optional<ScalarType> dtype, nb::handle device,
                            bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(scalar_tensor(value, o.dtype.value_or(get_default_dtype()), o.device), requires_grad);
  }, "s"_a, TP_FACTORY_KWARGS);

  m.def("arange", [](const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                     std::optional<ScalarType> dtype, nb::handle device, bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    // arange(end) counts from 0.
    if (!end) return requiring_grad(arange(0, start, step, o.dtype, o.device), requires_grad);
    return requiring_grad(arange(start, *end, step, o.dtype, o.device), requires_grad);
  }, "start"_a, "end"_a.none() = nb::none(), "step"_a = 1, TP_FACTORY_KWARGS);
  m.def("linspace", [](const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype,
                       nb::handle device, bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(linspace(start, end, steps, o.dtype, o.device), requires_grad);
  }, "start"_a, "end"_a, "steps"_a, TP_FACTORY_KWARGS);
  m.def("eye", [](int64_t n, std::optional<int64_t> cols, std::optional<ScalarType> dtype, nb::handle device,
                  bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(eye(n, cols, o.dtype, o.device), requires_grad);
  }, "n"_a, "m"_a.none() = nb::none(), TP_FACTORY_KWARGS);

  m.def("rand", [](nb::args size, nb::handle generator, std::optional<ScalarType> dtype, nb::handle device,
                   bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(rand(sizes_arg(size, "rand"), o.dtype, o.device, generator_arg(generator, "rand")), requires_grad);
  }, "size"_a, nb::kw_only(), "generator"_a.none() = nb::none(), "dtype"_a.none() = nb::none(), "device"_a.none() = nb::none(),
     "requires_grad"_a = false, "layout"_a.none() = nb::none(), "pin_memory"_a = false);
  m.def("randn", [](nb::args size, nb::handle generator, std::optional<ScalarType> dtype, nb::handle device,
                    bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(randn(sizes_arg(size, "randn"), o.dtype, o.device, generator_arg(generator, "randn")), requires_grad);
  }, "size"_a, nb::kw_only(), "generator"_a.none() = nb::none(), "dtype"_a.none() = nb::none(), "device"_a.none() = nb::none(),
     "requires_grad"_a = false, "layout"_a.none() = nb::none(), "pin_memory"_a = false);
  // randint(high, size) or randint(low, high, size).
  m.def("randint", [](nb::args args, nb::handle generator, std::optional<ScalarType> dtype, nb::handle device,
                      bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    TP_CHECK_TYPE(args.size() == 2 || args.size() == 3, "[randint] expected (high, size) or (low, high, size)");
    int64_t low = args.size() == 3 ? nb::cast<int64_t>(args[0]) : 0;
    int64_t high = nb::cast<int64_t>(args[args.size() - 2]);
    Shape size = nb::cast<Shape>(args[args.size() - 1]);
    return requiring_grad(randint(low, high, size, o.dtype, o.device, generator_arg(generator, "randint")), requires_grad);
  }, "args"_a, nb::kw_only(), "generator"_a.none() = nb::none(), "dtype"_a.none() = nb::none(), "device"_a.none() = nb::none(),
     "requires_grad"_a = false, "layout"_a.none() = nb::none(), "pin_memory"_a = false);
  m.def("randperm", [](int64_t n, nb::handle generator, std::optional<ScalarType> dtype, nb::handle device,
                       bool requires_grad, nb::handle, bool) {
    FactoryOptions o = options(dtype, device);
    return requiring_grad(randperm(n, o.dtype, o.device, generator_arg(generator, "randperm")), requires_grad);
  }, "n"_a, nb::kw_only(), "generator"_a.none() = nb::none(), "dtype"_a.none() = nb::none(), "device"_a.none() = nb::none(),
     "requires_grad"_a = false, "layout"_a.none() = nb::none(), "pin_memory"_a = false);

  tensor_class()
      .def("uniform_", [](Tensor& t, double from, double to, nb::handle g) { return uniform_(t, from, to, generator_arg(g, "uniform_")); },
           "from_"_a = 0.0, "to"_a = 1.0, nb::kw_only(), "generator"_a.none() = nb::none())
      .def("normal_", [](Tensor& t, double mean, double std, nb::handle g) { return normal_(t, mean, std, generator_arg(g, "normal_")); },
           "mean"_a = 0.0, "std"_a = 1.0, nb::kw_only(), "generator"_a.none() = nb::none())
      .def("new_zeros", [](const Tensor& t, nb::args size, std::optional<ScalarType> dtype, nb::handle device, bool rg,
                           nb::handle, bool) {
        FactoryOptions o = options(dtype, device);
        return requiring_grad(zeros(sizes_arg(size, "new_zeros"), o.dtype.value_or(t.dtype()), device.is_none() ? t.device() : o.device), rg);
      }, "size"_a, TP_FACTORY_KWARGS)
      .def("new_ones", [](const Tensor& t, nb::args size, std::optional<ScalarType> dtype, nb::handle device, bool rg,
                          nb::handle, bool) {
        FactoryOptions o = options(dtype, device);
        return requiring_grad(ones(sizes_arg(size, "new_ones"), o.dtype.value_or(t.dtype()), device.is_none() ? t.device() : o.device), rg);
      }, "size"_a, TP_FACTORY_KWARGS)
      .def("new_empty", [](const Tensor& t, nb::args size, std::optional<ScalarType> dtype, nb::handle device, bool rg,
                           nb::handle, bool) {
        FactoryOptions o = options(dtype, device);
        return requiring_grad(empty(sizes_arg(size, "new_empty"), o.dtype.value_or(t.dtype()), device.is_none() ? t.device() : o.device), rg);
      }, "size"_a, TP_FACTORY_KWARGS)
      .def("new_full", [](const Tensor& t, const Shape& size, const Scalar& value, std::optional<ScalarType> dtype,
                          nb::handle device, bool rg, nb::handle, bool) {
        FactoryOptions o = options(dtype, device);
        return requiring_grad(full(size, value, o.dtype.value_or(t.dtype()), device.is_none() ? t.device() : o.device), rg);
      }, "size"_a, "fill_value"_a, TP_FACTORY_KWARGS);
}

}  // namespace tp::python

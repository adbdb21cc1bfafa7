// tensorplay._C: the bindings. Argument conversion only; every op goes straight to its tp::
// function, with the GIL released while it runs.

#include "bindings.h"

namespace tp::python {

namespace {

PyTypeObject* g_tensor_type = nullptr;
std::array<nb::object, kNumScalarTypes>& dtype_objects() {
  static auto* objects = new std::array<nb::object, kNumScalarTypes>();
  return *objects;
}
std::array<nb::object, 4>& memory_format_objects() {
  static auto* objects = new std::array<nb::object, 4>();
  return *objects;
}

// torch.linalg.LinAlgError: a RuntimeError, so that code catching that still catches it.
PyObject* linalg_error() {
  static PyObject* type = PyErr_NewException("tensorplay._C._LinAlgError", PyExc_RuntimeError, nullptr);
  return type;
}

// torch.distributed's errors, all DistErrors (RuntimeErrors): a store's timeouts are DistStoreErrors,
// a lost or refused connection a DistNetworkError. DistBackendError is there for code that catches it.
PyObject* dist_error() {
  static PyObject* type = PyErr_NewException("tensorplay.distributed.DistError", PyExc_RuntimeError, nullptr);
  return type;
}

PyObject* dist_store_error() {
  static PyObject* type = PyErr_NewException("tensorplay.distributed.DistStoreError", dist_error(), nullptr);
  return type;
}

PyObject* dist_network_error() {
  static PyObject* type = PyErr_NewException("tensorplay.distributed.DistNetworkError", dist_error(), nullptr);
  return type;
}

PyObject* dist_backend_error() {
  static PyObject* type = PyErr_NewException("tensorplay.distributed.DistBackendError", dist_error(), nullptr);
  return type;
}

void translate_errors(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.kind()) {
      case ErrorKind::Runtime: type = PyExc_RuntimeError; break;
      case ErrorKind::Type: type = PyExc_TypeError; break;
      case ErrorKind::Value: type = PyExc_ValueError; break;
      case ErrorKind::Index: type = PyExc_IndexError; break;
      case ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
      case ErrorKind::LinAlg: type = linalg_error(); break;
      case ErrorKind::DistStore: type = dist_store_error(); break;
      case ErrorKind::DistNetwork: type = dist_network_error(); break;
    }
    PyErr_SetString(type, e.what());
  }
}

void init_dtypes(nb::module_& m) {
  nb::class_<DTypeObject>(m, "dtype")
      .def_prop_ro("is_floating_point", [](const DTypeObject& d) { return is_floating_point(d.type); })
      .def_prop_ro("is_complex", [](const DTypeObject& d) { return is_complex(d.type); })
      .def("to_real", [](const DTypeObject& d) { return is_complex(d.type) ? real_part_type(d.type) : d.type; })
      .def("to_complex", [](const DTypeObject& d) {
        TP_CHECK(is_floating_point(d.type) || is_complex(d.type), "[to_complex] Unknown Complex ScalarType for ",
                 name(d.type));
        return complex_type_of(d.type);
      })
      .def_prop_ro("is_signed", [](const DTypeObject& d) {
        return d.type != ScalarType::UInt8 && d.type != ScalarType::Bool;
      })
      .def_prop_ro("itemsize", [](const DTypeObject& d) { return itemsize(d.type); })
      .def("__repr__", [](const DTypeObject& d) { return "tensorplay." + std::string(name(d.type)); })
      .def("__reduce__", [](const DTypeObject& d) { return std::string(name(d.type)); });
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto t = static_cast<ScalarType>(i);
    dtype_objects()[i] = nb::cast(DTypeObject{t}, nb::rv_policy::move);
    m.attr(std::string(name(t)).c_str()) = dtype_objects()[i];
  }

  nb::class_<MemoryFormatObject>(m, "memory_format")
      .def("__repr__", [](const MemoryFormatObject& f) { return "tensorplay." + std::string(name(f.format)); })
      .def("__reduce__", [](const MemoryFormatObject& f) { return std::string(name(f.format)); });
  for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::Preserve, MemoryFormat::ChannelsLast,
                         MemoryFormat::ChannelsLast3d}) {
    memory_format_objects()[static_cast<int>(f)] = nb::cast(MemoryFormatObject{f}, nb::rv_policy::move);
    m.attr(name(f)) = memory_format_objects()[static_cast<int>(f)];
  }

  m.def("promote_types", &promote_types, "type1"_a, "type2"_a);
  m.def("get_default_dtype", &get_default_dtype);
  m.def("set_default_dtype", &set_default_dtype, "d"_a);
  m.def("_result_type", [](nb::handle a, nb::handle b) {
    ResultType r;
    for (nb::handle h : {a, b}) {
      if (is_tensor(h)) r.add(unwrap(h));
      else r.add(nb::cast<Scalar>(h));
    }
    return r.get();
  });
}

// The device of factories called without one: set by set_default_device and, for a block, by
// `with tensorplay.device(...)`; per thread, as in PyTorch. `entered` holds the devices that
// those blocks replaced.
thread_local Device default_device;
thread_local std::vector<Device> entered;

void init_devices(nb::module_& m) {
  m.def("get_default_device", [] { return default_device; });
  m.def("_set_default_device", [](nb::handle device) { default_device = device.is_none() ? Device() : device_arg(device); },
        "device"_a.none());
  nb::class_<Device>(m, "device")
      .def("__init__", [](Device* d, nb::handle spec, std::optional<int> index) {
        Device parsed = device_arg(spec);
        if (index) {
          TP_CHECK(*index >= 0, "[device] Device index must not be negative, got ", *index);
          TP_CHECK(parsed.index < 0, "[device] type (string) must not include an index because index was passed "
                   "explicitly: ", parsed.str());
          parsed = Device(parsed.type, *index);
        }
        new (d) Device(parsed);
      }, "type"_a, "index"_a.none() = nb::none())
      .def_prop_ro("type", [](const Device& d) { return std::string(name(d.type)); })
      .def_prop_ro("index", [](const Device& d) -> std::optional<int> {
        return d.index < 0 ? std::nullopt : std::optional<int>(d.index);
      })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        std::string s = "device(type='" + std::string(name(d.type)) + "'";
        if (d.index >= 0) s += ", index=" + std::to_string(d.index);
        return s + ")";
      })
      .def("__eq__", [](const Device& a, nb::handle b) {
        if (!nb::isinstance<Device>(b)) return false;
        return a == nb::cast<Device>(b);
      })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      .def("__enter__", [](nb::handle self) {
        entered.push_back(default_device);
        default_device = nb::cast<Device>(self);
        return self;
      })
      .def("__exit__", [](const Device&, nb::args) {
        TP_CHECK(!entered.empty(), "[device] __exit__ without a matching __enter__");
        default_device = entered.back();
        entered.pop_back();
      });
}

}  // namespace

PyTypeObject* tensor_type() { return g_tensor_type; }
void set_tensor_type(PyTypeObject* type) { g_tensor_type = type; }
nb::handle dtype_object(ScalarType t) { return dtype_objects()[static_cast<int>(t)]; }
nb::handle memory_format_object(MemoryFormat f) { return memory_format_objects()[static_cast<int>(f)]; }

bool is_tensor(nb::handle h) { return PyObject_TypeCheck(h.ptr(), g_tensor_type); }

const Tensor& unwrap(nb::handle h) {
  TP_CHECK(nb::inst_ready(h), "[Tensor] the tensor object is not initialised");
  return nb::inst_ptr<PyTensor>(h)->value;
}

nb::object wrap(Tensor t, PyTypeObject* type) {
  if (void* existing = t.impl()->pyobj()) return nb::borrow(static_cast<PyObject*>(existing));
  // A view of a buffer nothing else can reach (a product reshaped by matmul, a reduction squeezed)
  // is a result of its own, as PyTorch's _unsafe_view makes it: an in-place op on it then keeps
  // its history and hooks instead of rewriting an invisible base's.
  if (const auto& base = t.impl()->view_base(); base && base->use_count() == 1) t.impl()->set_view_base({});
  nb::object obj = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(type ? type : g_tensor_type)));
  TensorImpl* impl = t.impl();
  new (nb::inst_ptr<PyTensor>(obj)) PyTensor(std::move(t));
  nb::inst_mark_ready(obj);
  impl->set_pyobj(obj.ptr());
  return obj;
}

Device device_arg(nb::handle h) {
  if (h.is_none()) return default_device;
  if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
  if (nb::isinstance<nb::str>(h)) return Device(nb::cast<std::string_view>(h));
  if (PyLong_Check(h.ptr())) return Device(DeviceType::CUDA, nb::cast<int>(h));
  throw Error(ErrorKind::Type, "expected a device (tensorplay.device, str or int), got " +
                                   std::string(nb::type_name(h.type()).c_str()));
}

}  // namespace tp::python

NB_MODULE(_C, m) {
  using namespace tp::python;
  // The dtype objects, the Tensor class and the bound functions live as long as the process.
  nb::set_leak_warnings(false);
  nb::register_exception_translator(&translate_errors);
  m.attr("_LinAlgError") = nb::handle(linalg_error());
  m.attr("_DistError") = nb::handle(dist_error());
  m.attr("_DistStoreError") = nb::handle(dist_store_error());
  m.attr("_DistNetworkError") = nb::handle(dist_network_error());
  m.attr("_DistBackendError") = nb::handle(dist_backend_error());
  init_dtypes(m);
  init_devices(m);
  init_tensor(m);
  init_factories(m);
  init_ops(m);
  init_indexing(m);
  init_numpy(m);
  init_autograd(m);
  init_nn(m);
  init_optim(m);
  init_amp(m);
  init_profiler(m);
  init_distributed(m);
}

// tensorplay.Tensor: the class, its attributes, and the methods that are not ops.

#include <nanobind/stl/complex.h>
#include <nanobind/stl/tuple.h>

#include "tensorplay/autograd/record.h"
#include "tensorplay/autograd/variable.h"
#include "bindings.h"
#include "tensorplay/core/allocator.h"
#include "tensorplay/core/parallel.h"
#include "tensorplay/cpu/build_info.h"
#include "tensorplay/cpu/float32_math.h"
#include "tensorplay/cpu/simd/capability.h"
#include "tensorplay/cpu/simd/simd.h"
#include "tensorplay/ops/print.h"

namespace tp::python {

namespace {

nb::class_<PyTensor>* g_tensor_class = nullptr;
nb::object& g_size_type = persistent();  // tensorplay.Size, a tuple subclass (python/tensorplay/_size.py)

nb::object as_size(IntArrayRef sizes) {
  nb::list items;
  for (int64_t s : sizes) items.append(s);
  return g_size_type.is_valid() ? g_size_type(nb::tuple(items)) : nb::object(nb::tuple(items));
}

// PyTorch's warning for a cast that drops imaginary parts (given with the GIL held).
void warn_on_discarded_imaginary(const Tensor& t, std::optional<ScalarType> dtype) {
  if (!is_complex(t.dtype()) || !dtype || is_complex(*dtype)) return;
  if (PyErr_WarnEx(PyExc_UserWarning, "Casting complex values to real discards the imaginary part", 1) < 0)
    throw nb::python_error();
}

Tensor cast_to(const Tensor& t, ScalarType dtype) {
  warn_on_discarded_imaginary(t, dtype);
  nb::gil_scoped_release released;
  return to(t, dtype);
}

// x.to(dtype), x.to(device, dtype=None), x.to(other), with non_blocking and copy keywords.
Tensor to_method(const Tensor& self, nb::args args, nb::kwargs kwargs) {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  MemoryFormat format = MemoryFormat::Preserve;
  bool copy = false;
  auto take = [&](nb::handle h) {
    if (nb::isinstance<DTypeObject>(h)) dtype = nb::cast<ScalarType>(h);
    else if (is_tensor(h)) dtype = unwrap(h).dtype(), device = unwrap(h).device();
    else if (!h.is_none()) device = device_arg(h);
  };
  TP_CHECK_TYPE(args.size() <= 2, "[to] received an invalid combination of arguments");
  for (nb::handle h : args) take(h);
  for (auto [key, value] : kwargs) {
    std::string k = nb::cast<std::string>(key);
    if (k == "dtype" || k == "device" || k == "other") take(value);
    else if (k == "copy") copy = nb::cast<bool>(value);
    else if (k == "memory_format") format = nb::cast<MemoryFormat>(value);
    else if (k == "non_blocking") continue;
    else TP_CHECK_TYPE(false, "[to] got an unexpected keyword argument '", k, "'");
  }
  warn_on_discarded_imaginary(self, dtype);
  nb::gil_scoped_release released;
  Tensor out = to(self, device.value_or(self.device()), dtype, copy);
  return format == MemoryFormat::Preserve ? out : contiguous(out, format);
}

}  // namespace

nb::class_<PyTensor>& tensor_class() { return *g_tensor_class; }

Shape sizes_arg(const nb::args& args, const char* op) {
  TP_CHECK_TYPE(args.size() > 0, op, "() missing 1 required positional argument: the sizes (or dims)");
  Shape sizes;
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && !is_tensor(args[0])) {
    TP_CHECK_TYPE(nb::try_cast(args[0], sizes), "[", op, "] expected a sequence of integers or ints, got ",
                  nb::type_name(args[0].type()).c_str());
    return sizes;
  }
  for (nb::handle h : args) {
    int64_t size;
    TP_CHECK_TYPE(index_value(h, size), "[", op, "] expected a sequence of integers or ints, got ",
                  nb::type_name(h.type()).c_str());
    sizes.push_back(size);
  }
  return sizes;
}

bool index_value(nb::handle h, int64_t& out) {
  if (is_tensor(h)) {
    const Tensor& t = unwrap(h);
    if (t.dim() != 0 || !is_integral(t.dtype(), false)) return false;
    out = t.item().to_int();
    return true;
  }
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) return false;
  long long v = PyLong_AsLongLong(h.ptr());
  if (v == -1 && PyErr_Occurred()) return PyErr_Clear(), false;
  out = v;
  return true;
}

void init_tensor(nb::module_& m) {
  // Leaked, see Note [Python objects in globals].
  static auto& cls = *new nb::class_<PyTensor>(m, "Tensor", nb::dynamic_attr(), nb::is_weak_referenceable());
  g_tensor_class = &cls;
  set_tensor_type(reinterpret_cast<PyTypeObject*>(cls.ptr()));

  m.def("_set_size_type", [](nb::object t) { g_size_type = t; });
  m.def("clone", [](const Tensor& t, MemoryFormat format) { return clone(t, format); }, "input"_a, nb::kw_only(),
        "memory_format"_a = MemoryFormat::Preserve, release_gil());
  m.def("is_tensor", [](nb::handle h) { return is_tensor(h); }, "obj"_a);
  m.def("set_num_threads", &set_num_threads, "num_threads"_a);
  m.def("get_num_threads", &get_num_threads);
  m.def("_cpu_memory_stats", [] {
    AllocatorStats s = cpu_allocator_stats();
    nb::dict stats;
    stats["allocated_bytes"] = s.allocated_bytes;
    stats["peak_allocated_bytes"] = s.peak_allocated_bytes;
    stats["cached_bytes"] = s.cached_bytes;
    stats["allocations"] = s.allocations;
    stats["cache_hits"] = s.cache_hits;
    return stats;
  });
  m.def("_cpu_reset_peak_memory_stats", &cpu_reset_peak_stats);
  m.def("_cpu_capability", &cpu::cpu_capability);
  m.def("_build_info", [] {
    const cpu::BuildInfo info = cpu::build_info();
    nb::dict d;
    d["compiler"] = info.compiler;
    d["cxx_standard"] = info.cxx_standard;
    d["openmp"] = info.openmp;
    d["blas"] = info.blas;
    d["blas_openmp"] = info.blas_openmp;
    d["onednn"] = info.onednn;
    d["highway"] = info.highway;
    d["gloo"] = info.gloo;
    return d;
  });
  m.def("_blas_num_threads", &cpu::blas_num_threads);
  m.def("_openmp_max_threads", &cpu::openmp_max_threads);
  // ops: "matmul" or "conv"; precision: "ieee" (exact) or "bf16" (cpu/float32_math.h).
  m.def("_set_float32_math", [](std::string_view ops, std::string_view precision) {
    TP_CHECK(ops == "matmul" || ops == "conv", "_set_float32_math: ops must be 'matmul' or 'conv', got '", ops, "'");
    TP_CHECK(precision == "ieee" || precision == "bf16",
             "_set_float32_math: precision must be 'ieee' or 'bf16', got '", precision, "'");
    cpu::set_float32_math(ops == "matmul" ? cpu::Float32Ops::Matmul : cpu::Float32Ops::Conv,
                          precision == "bf16" ? cpu::Float32Math::BFloat16 : cpu::Float32Math::Exact);
  }, "ops"_a, "precision"_a);
  m.def("_set_streamed_bytes", &cpu::simd::set_streamed_bytes, "bytes"_a);
  m.def("_cpu_empty_cache", &cpu_empty_cache);
  // repr(tensor) is the C++ printer's (ops/print.h), with the print options C++'s << uses too.
  m.def("_tensor_repr", [](const Tensor& t) { return to_string(t); }, release_gil());
  m.def("_set_printoptions",
        [](int64_t precision, double threshold, int64_t edgeitems, int64_t linewidth, std::optional<bool> sci_mode) {
          set_printoptions({precision, threshold, edgeitems, linewidth, sci_mode});
        },
        "precision"_a, "threshold"_a, "edgeitems"_a, "linewidth"_a, "sci_mode"_a.none());
  m.def("_get_printoptions", [] {
    const PrintOptions o = get_printoptions();
    return std::make_tuple(o.precision, o.threshold, o.edgeitems, o.linewidth, o.sci_mode);
  });

  // tensorplay.Tensor(2, 3) and Tensor([1, 2]), PyTorch's legacy constructor: __new__ hands its
  // arguments to the Python function that builds the tensor (tensorplay/_legacy_constructors.py).
  static auto& legacy_constructor = persistent();
  m.def("_set_legacy_constructor", [](nb::object f) { legacy_constructor = f; });
  cls.def_static("__new__", [](nb::handle type, nb::args args, nb::kwargs kwargs) {
    return legacy_constructor(type, *args, **kwargs);
  }, "cls"_a, "args"_a, "kwargs"_a);
  cls.def("__init__", [](nb::handle, nb::args, nb::kwargs) {});
  // A new tensor object of a subclass (Parameter) over data's memory, with no history and no view
  // base: it is a tensor of its own that happens to share data's storage.
  cls.def_static("_make_subclass", [](nb::handle type, const Tensor& data, bool requires_grad) {
    Tensor alias = autograd::detach(data);
    if (requires_grad) autograd::set_requires_grad(alias, true);
    return wrap(alias, reinterpret_cast<PyTypeObject*>(type.ptr()));
  }, "cls"_a, "data"_a, "requires_grad"_a = false);

  cls.def_prop_ro("shape", [](const Tensor& t) { return as_size(t.sizes()); })
      .def_prop_ro("dtype", [](const Tensor& t) { return t.dtype(); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device(); })
      .def_prop_ro("ndim", [](const Tensor& t) { return t.dim(); })
      .def_prop_ro("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_prop_ro("is_meta", [](const Tensor& t) { return t.device().is_meta(); })
      .def_prop_ro("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def_prop_ro("is_sparse", [](const Tensor& t) { return t.is_sparse(); })
      .def_prop_ro("itemsize", [](const Tensor& t) { return t.itemsize(); })
      .def_prop_ro("nbytes", [](const Tensor& t) { return t.nbytes(); })
      .def_prop_ro("T", [](const Tensor& t) {
        Shape order;
        for (int64_t d = t.dim() - 1; d >= 0; --d) order.push_back(d);
        return permute(t, order);
      })
      .def_prop_ro("mT", [](const Tensor& t) { return transpose(t, -2, -1); })
      .def_prop_ro("_version", [](const Tensor& t) { return t.version(); })
      .def("size", [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
        if (dim) return nb::int_(t.size(*dim));
        return as_size(t.sizes());
      }, "dim"_a.none() = nb::none())
      .def("stride", [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
        if (dim) return nb::int_(t.stride(*dim));
        return nb::tuple(nb::cast(Shape(t.strides().begin(), t.strides().end())));
      }, "dim"_a.none() = nb::none())
      .def("dim", [](const Tensor& t) { return t.dim(); })
      .def("ndimension", [](const Tensor& t) { return t.dim(); })
      .def("numel", [](const Tensor& t) { return t.numel(); })
      .def("nelement", [](const Tensor& t) { return t.numel(); })
      .def("element_size", [](const Tensor& t) { return t.itemsize(); })
      .def("storage_offset", [](const Tensor& t) { return t.storage_offset(); })
      .def("is_contiguous", [](const Tensor& t, MemoryFormat format) {
        return format == MemoryFormat::Contiguous ? t.is_contiguous() : t.is_contiguous(format);
      }, "memory_format"_a = MemoryFormat::Contiguous)
      .def("is_floating_point", [](const Tensor& t) { return t.is_floating_point(); })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("item", [](const Tensor& t) { return t.item(); })
      .def("__len__", [](const Tensor& t) {
        TP_CHECK_TYPE(t.dim() > 0, "len() of a 0-d tensor");
        return t.size(0);
      })
      .def("__bool__", [](const Tensor& t) {
        TP_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
        return t.item().to_bool();
      })
      .def("__float__", [](const Tensor& t) {
        TP_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
        return t.item().to_double();
      })
      .def("__int__", [](const Tensor& t) {
        TP_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
        // Through a Python number, so int(tensor(1e20)) is exact as in PyTorch.
        return nb::steal(PyNumber_Long(nb::cast(t.item()).ptr()));
      })
      .def("__complex__", [](const Tensor& t) {
        TP_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
        return t.item().to_complex();
      })
      .def("__index__", [](const Tensor& t) {
        TP_CHECK_TYPE(t.numel() == 1 && is_integral(t.dtype(), true),
                      "only integer tensors of a single element can be converted to an index");
        return t.item().to_int();
      })
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()) >> 4; });

  // Casts and copies.
  cls.def("to", &to_method)
      .def("contiguous", [](const Tensor& t, MemoryFormat format) { return contiguous(t, format); },
           "memory_format"_a = MemoryFormat::Contiguous, release_gil())
      .def("clone", [](const Tensor& t, MemoryFormat format) { return clone(t, format); }, nb::kw_only(),
           "memory_format"_a = MemoryFormat::Preserve, release_gil())
      .def("resize_", [](const Tensor& self, nb::args sizes, MemoryFormat format) {
        return resize_(self, sizes_arg(sizes, "resize_"), format);
      }, "sizes"_a, nb::kw_only(), "memory_format"_a = MemoryFormat::Contiguous)
      .def("resize_as_", [](const Tensor& self, const Tensor& other, std::optional<MemoryFormat> format) {
        return resize_(self, other.sizes(), format.value_or(MemoryFormat::Contiguous));
      }, "the_template"_a, nb::kw_only(), "memory_format"_a.none() = nb::none())
      .def("_storage_bytes", &storage_bytes)
      .def("_set", [](const Tensor& self, const Tensor& source, int64_t offset, std::vector<int64_t> sizes,
                      std::vector<int64_t> strides) { return set_(self, source, offset, sizes, strides); },
           "source"_a, "storage_offset"_a, "size"_a, "stride"_a)
      .def("copy_", [](Tensor& self, const Tensor& src, bool) { return copy_(self, src); }, "src"_a,
           "non_blocking"_a = false, release_gil())
      .def("fill_", [](Tensor& self, const Scalar& v) { return fill_(self, v); }, "value"_a, release_gil())
      .def("fill_", [](Tensor& self, const Tensor& v) {
        TP_CHECK(v.dim() == 0, "[fill_] only supports 0-dimension value tensor but got tensor with ", v.dim(),
                 " dimensions.");
        // A value that requires grad is copied in, so that its gradient is the sum of self's.
        if (autograd::must_record(std::array<const Tensor*, 1>{&v})) return copy_(self, expand(v, self.sizes()));
        return fill_(self, v.item());
      }, "value"_a)
      .def("zero_", &zero_, release_gil())
      .def("float", [](const Tensor& t) { return cast_to(t, ScalarType::Float32); })
      .def("double", [](const Tensor& t) { return cast_to(t, ScalarType::Float64); })
      .def("half", [](const Tensor& t) { return cast_to(t, ScalarType::Float16); })
      .def("bfloat16", [](const Tensor& t) { return cast_to(t, ScalarType::BFloat16); })
      .def("cfloat", [](const Tensor& t) { return cast_to(t, ScalarType::ComplexFloat); })
      .def("cdouble", [](const Tensor& t) { return cast_to(t, ScalarType::ComplexDouble); })
      .def("long", [](const Tensor& t) { return cast_to(t, ScalarType::Int64); })
      .def("int", [](const Tensor& t) { return cast_to(t, ScalarType::Int32); })
      .def("short", [](const Tensor& t) { return cast_to(t, ScalarType::Int16); })
      .def("char", [](const Tensor& t) { return cast_to(t, ScalarType::Int8); })
      .def("byte", [](const Tensor& t) { return cast_to(t, ScalarType::UInt8); })
      .def("bool", [](const Tensor& t) { return cast_to(t, ScalarType::Bool); })
      .def("type_as", [](const Tensor& t, const Tensor& other) { return cast_to(t, other.dtype()); }, "other"_a)
      .def("cpu", [](const Tensor& t) { return to(t, Device()); })
      .def("cuda", [](const Tensor& t, nb::handle device) {
        Device d = device.is_none() ? Device(DeviceType::CUDA, 0) : device_arg(device);
        return to(t, d.is_cpu() ? Device(DeviceType::CUDA, d.index) : d);
      }, "device"_a.none() = nb::none());
}

}  // namespace tp::python

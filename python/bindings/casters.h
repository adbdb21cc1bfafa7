#pragma once
// Conversions between Python objects and tensorplay's C++ types.
//
// Note [Python identity]: a TensorImpl points back at the Python object that wraps it while that
// object lives, so handing the same tensor to Python twice gives the same object: `p.grad is
// p.grad`, a Parameter stays a Parameter, attributes set on a tensor survive a trip through C++.
// The Python object owns a reference to the TensorImpl; the back-pointer is cleared when the
// Python object dies. Only code holding the GIL reads or writes the back-pointer.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "tensorplay/core/device.h"
#include "tensorplay/core/scalar.h"
#include "tensorplay/core/tensor.h"

namespace nb = nanobind;

namespace tp::python {

// What a Python tensor object holds.
struct PyTensor {
  Tensor value;
  explicit PyTensor(Tensor t) : value(std::move(t)) {}
  PyTensor(const PyTensor&) = delete;
  ~PyTensor() {
    if (value.defined()) value.impl()->set_pyobj(nullptr);
  }
};

// The Python type of tensorplay.Tensor, and the objects for each dtype (set at module init).
PyTypeObject* tensor_type();
void set_tensor_type(PyTypeObject* type);
nb::handle dtype_object(ScalarType t);
bool is_tensor(nb::handle h);
// Wraps t in its existing Python object, or a new one of `type` (tensorplay.Tensor by default).
nb::object wrap(Tensor t, PyTypeObject* type = nullptr);
const Tensor& unwrap(nb::handle h);
// A device argument: a tensorplay.device, a string such as "cuda:0", an int (a CUDA index), or None
// (the CPU). A malformed string raises RuntimeError naming it.
Device device_arg(nb::handle h);

struct DTypeObject {
  ScalarType type;
};

// tensorplay.channels_last and the other memory formats: one object each, made at module init.
struct MemoryFormatObject {
  MemoryFormat format;
};
nb::handle memory_format_object(MemoryFormat format);

// An int argument as PyTorch takes one: an int, an object with __index__ (a NumPy integer), or a
// 0-dim integer tensor. False for anything else, with no Python error set.
bool index_value(nb::handle h, int64_t& out);

// Several tensors returned as a Python tuple (split, chunk, unbind), as in PyTorch.
struct TensorTuple {
  TensorList items;
};

// A dim argument: None (every dim), an int, or a sequence of ints. Converted before an op runs
// (and so with the GIL held, unlike the op).
struct Dims {
  Shape dims;
  bool given = false;
};

}  // namespace tp::python

namespace nanobind::detail {

// A Tensor argument is a reference to the one its Python object holds (which the caller keeps
// alive for the call), and a returned Tensor moves into its new Python object: each handle copied
// would be two atomic updates of its count, a tenth of a small op's time. A parameter taken by
// value is copied from the reference (precise_cast_t), never moved out of the Python object.
template <>
struct type_caster<tp::Tensor> {
  using Value = tp::Tensor;
  static constexpr auto Name = const_name("Tensor");
  template <typename T_>
  using Cast = precise_cast_t<T_>;
  template <typename T_>
  static constexpr bool can_cast() {
    return true;
  }

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    if (!tp::python::is_tensor(src)) return false;
    value = &tp::python::unwrap(src);
    return true;
  }
  static handle from_cpp(const tp::Tensor& t, rv_policy, cleanup_list*) noexcept {
    if (!t.defined()) return none().release();
    return tp::python::wrap(t).release();
  }
  static handle from_cpp(tp::Tensor&& t, rv_policy, cleanup_list*) noexcept {
    if (!t.defined()) return none().release();
    return tp::python::wrap(std::move(t)).release();
  }
  static handle from_cpp(const tp::Tensor* t, rv_policy policy, cleanup_list* cleanup) noexcept {
    return t ? from_cpp(*t, policy, cleanup) : none().release();
  }
  explicit operator tp::Tensor*() { return const_cast<tp::Tensor*>(value); }
  explicit operator tp::Tensor&() { return const_cast<tp::Tensor&>(*value); }

 private:
  const tp::Tensor* value = nullptr;
};

template <>
struct type_caster<tp::ScalarType> {
  NB_TYPE_CASTER(tp::ScalarType, const_name("dtype"))

  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    tp::python::DTypeObject* obj = nullptr;
    if (!nb::try_cast<tp::python::DTypeObject*>(src, obj, false) || !obj) return false;
    value = obj->type;
    return true;
  }
  static handle from_cpp(tp::ScalarType t, rv_policy, cleanup_list*) noexcept {
    return tp::python::dtype_object(t).inc_ref();
  }
};

template <>
struct type_caster<tp::MemoryFormat> {
  NB_TYPE_CASTER(tp::MemoryFormat, const_name("memory_format"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    tp::python::MemoryFormatObject* obj = nullptr;
    if (!nb::try_cast<tp::python::MemoryFormatObject*>(src, obj, false) || !obj) return false;
    value = obj->format;
    return true;
  }
  static handle from_cpp(tp::MemoryFormat f, rv_policy, cleanup_list*) noexcept {
    return tp::python::memory_format_object(f).inc_ref();
  }
};

// Python bool, int, float and complex (and NumPy's numbers, through __index__ and __float__), and 0-dim
// tensors that need no gradient.
template <>
struct type_caster<tp::Scalar> {
  NB_TYPE_CASTER(tp::Scalar, const_name("Number"))

  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (PyBool_Check(o)) {
      value = tp::Scalar(o == Py_True);
      return true;
    }
    if (PyLong_Check(o)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow) return false;
      value = tp::Scalar(static_cast<int64_t>(v));
      return true;
    }
    if (PyFloat_Check(o)) {
      value = tp::Scalar(PyFloat_AS_DOUBLE(o));
      return true;
    }
    if (PyComplex_Check(o)) {
      value = tp::Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
      return true;
    }
    if (tp::python::is_tensor(src)) {
      // As in PyTorch, a 0-dim tensor that needs no gradient is a number too; only in the second,
      // converting pass, so that an overload taking a tensor there is chosen first.
      const tp::Tensor& t = tp::python::unwrap(src);
      if (!(flags & static_cast<uint8_t>(cast_flags::convert)) || t.dim() != 0 || t.requires_grad()) return false;
      try {
        value = t.item();
      } catch (...) {
        return false;
      }
      return true;
    }
    if (PyIndex_Check(o)) {
      long long v = PyLong_AsLongLong(o);
      if (v == -1 && PyErr_Occurred()) return PyErr_Clear(), false;
      value = tp::Scalar(static_cast<int64_t>(v));
      return true;
    }
    if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float && !PyUnicode_Check(o)) {
      double v = PyFloat_AsDouble(o);
      if (v == -1 && PyErr_Occurred()) return PyErr_Clear(), false;
      value = tp::Scalar(v);
      return true;
    }
    return false;
  }
  static handle from_cpp(const tp::Scalar& s, rv_policy, cleanup_list*) noexcept {
    switch (s.kind()) {
      case tp::Scalar::Kind::Bool: return PyBool_FromLong(s.to_bool());
      case tp::Scalar::Kind::Int: return PyLong_FromLongLong(s.to_int());
      case tp::Scalar::Kind::Float: return PyFloat_FromDouble(s.to_double());
      case tp::Scalar::Kind::Complex: return PyComplex_FromDoubles(s.to_complex().real(), s.to_complex().imag());
    }
    return none().release();
  }
};

// A sequence of ints as an IntArrayRef; the caster owns the ints for the duration of the call.
template <>
struct type_caster<tp::IntArrayRef> {
  NB_TYPE_CASTER(tp::IntArrayRef, const_name("Sequence[int]"))
  tp::Shape storage;

  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    make_caster<tp::Shape> list;
    if (!list.from_python(src, flags, cleanup)) return false;
    storage = std::move(list.value);
    value = tp::IntArrayRef(storage);
    return true;
  }
  static handle from_cpp(tp::IntArrayRef v, rv_policy, cleanup_list*) noexcept {
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(v[i]));
    return tuple;
  }
};

template <>
struct type_caster<tp::python::TensorTuple> {
  NB_TYPE_CASTER(tp::python::TensorTuple, const_name("tuple[Tensor, ...]"))
  bool from_python(handle, uint8_t, cleanup_list*) noexcept { return false; }
  static handle from_cpp(const tp::python::TensorTuple& t, rv_policy, cleanup_list*) noexcept {
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(t.items.size()));
    for (size_t i = 0; i < t.items.size(); ++i)
      PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), tp::python::wrap(t.items[i]).release().ptr());
    return tuple;
  }
};

// A list of tensors (cat, stack, einsum's operands): any sequence of tensors but a tensor itself,
// which PyTorch refuses too (a 1-D tensor would otherwise pass as the list of its elements).
template <>
struct type_caster<std::vector<tp::Tensor>> : list_caster<std::vector<tp::Tensor>, tp::Tensor> {
  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    if (tp::python::is_tensor(src)) return false;
    return list_caster<std::vector<tp::Tensor>, tp::Tensor>::from_python(src, flags, cleanup);
  }
};

template <>
struct type_caster<tp::python::Dims> {
  NB_TYPE_CASTER(tp::python::Dims, const_name("int | tuple[int, ...] | None"))

  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    value = {};
    if (src.is_none()) return true;
    value.given = true;
    int64_t v;
    if (tp::python::index_value(src, v)) {
      value.dims = {v};
      return true;
    }
    make_caster<tp::Shape> list;
    if (!list.from_python(src, flags, cleanup)) return false;
    value.dims = std::move(list.value);
    return true;
  }
  static handle from_cpp(const tp::python::Dims&, rv_policy, cleanup_list*) noexcept { return none().release(); }
};

}  // namespace nanobind::detail

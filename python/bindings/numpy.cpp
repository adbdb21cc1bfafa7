// Interop that shares memory both ways: with NumPy (tensorplay.from_numpy, Tensor.numpy()), where
// bfloat16 travels as uint16 and is viewed as ml_dtypes.bfloat16 on the Python side, and with any
// DLPack producer or consumer (tensorplay.from_dlpack, Tensor.__dlpack__), where it is bfloat16.

#include <nanobind/ndarray.h>

#include <cstring>

#include "bindings.h"

namespace tp::python {

namespace {

using DLType = nb::dlpack::dtype;

std::optional<ScalarType> from_dlpack(DLType t) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(t.code);
  if (t.lanes != 1) return std::nullopt;
  if (code == Code::Bool && t.bits == 8) return ScalarType::Bool;
  if (code == Code::UInt && t.bits == 8) return ScalarType::UInt8;
  if (code == Code::Int) {
    switch (t.bits) {
      case 8: return ScalarType::Int8;
      case 16: return ScalarType::Int16;
      case 32: return ScalarType::Int32;
      case 64: return ScalarType::Int64;
    }
  }
  if (code == Code::Float) {
    switch (t.bits) {
      case 16: return ScalarType::Float16;
      case 32: return ScalarType::Float32;
      case 64: return ScalarType::Float64;
    }
  }
  if (code == Code::Bfloat && t.bits == 16) return ScalarType::BFloat16;
  if (code == Code::Complex && t.bits == 64) return ScalarType::ComplexFloat;
  if (code == Code::Complex && t.bits == 128) return ScalarType::ComplexDouble;
  return std::nullopt;
}

// bfloat16_as_uint16: for NumPy, which has no bfloat16 of its own.
DLType to_dlpack(ScalarType t, bool bfloat16_as_uint16) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code c, int bits) { return DLType{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1}; };
  switch (t) {
    case ScalarType::Bool: return make(Code::Bool, 8);
    case ScalarType::UInt8: return make(Code::UInt, 8);
    case ScalarType::Int8: return make(Code::Int, 8);
    case ScalarType::Int16: return make(Code::Int, 16);
    case ScalarType::Int32: return make(Code::Int, 32);
    case ScalarType::Int64: return make(Code::Int, 64);
    case ScalarType::Float16: return make(Code::Float, 16);
    case ScalarType::Float32: return make(Code::Float, 32);
    case ScalarType::Float64: return make(Code::Float, 64);
    case ScalarType::BFloat16: return bfloat16_as_uint16 ? make(Code::UInt, 16) : make(Code::Bfloat, 16);
    case ScalarType::ComplexFloat: return make(Code::Complex, 64);
    case ScalarType::ComplexDouble: return make(Code::Complex, 128);
  }
  return make(Code::Float, 32);
}

using ImportedArray = nb::ndarray<nb::ro>;  // on the CPU: from_dlpack checks

// A tensor on an imported array's memory, which the tensor's storage keeps alive (its last
// reference may drop on any thread).
Tensor share(const ImportedArray& nd, ScalarType dtype, const char* op) {
  Shape sizes(nd.ndim()), strides(nd.ndim());
  for (size_t d = 0; d < nd.ndim(); ++d) {
    sizes[d] = static_cast<int64_t>(nd.shape(d));
    strides[d] = nd.stride(d);
    TP_CHECK_VALUE(strides[d] >= 0 || sizes[d] <= 1, "[", op, "] At least one stride in the given numpy array is "
                   "negative, and tensors with negative strides are not currently supported. (You can probably work "
                   "around this by making a copy of your array  with array.copy().)");
    if (strides[d] < 0) strides[d] = 0;
  }
  const int64_t extent = storage_extent(sizes, strides).value();  // the producer's own memory: it fits
  auto* owner = new ImportedArray(nd);
  DataPtr data(const_cast<void*>(nd.data()), owner, [](void*, void* ctx) {
    nb::gil_scoped_acquire gil;
    delete static_cast<ImportedArray*>(ctx);
  });
  size_t nbytes = static_cast<size_t>(extent) * itemsize(dtype);
  auto storage = Storage::make(std::move(data), nbytes, Device());
  return Tensor(intrusive_ptr<TensorImpl>::make(std::move(storage), dtype, sizes, strides, 0));
}

// Moves self's storage onto the array's memory (the same number of bytes), copying its bytes there:
// every view of the storage follows (Tensor.share_memory_).
void move_storage_to(const Tensor& self, const ImportedArray& nd) {
  StorageImpl& storage = *self.impl()->storage();
  TP_CHECK(nd.nbytes() == storage.nbytes(), "[share_memory_] the new memory holds ", nd.nbytes(),
           " bytes, the storage ", storage.nbytes());
  if (storage.nbytes()) std::memcpy(const_cast<void*>(nd.data()), storage.data(), storage.nbytes());
  auto* owner = new ImportedArray(nd);
  storage.replace_data(DataPtr(const_cast<void*>(nd.data()), owner, [](void*, void* ctx) {
    nb::gil_scoped_acquire gil;
    delete static_cast<ImportedArray*>(ctx);
  }));
}

// `reinterpret`: read the array's bytes as this dtype (bfloat16 arrives as uint16).
Tensor from_numpy(nb::object array, std::optional<ScalarType> reinterpret) {
  // Read-only arrays are shared too (from_numpy warns about them, as PyTorch does).
  ImportedArray nd;
  TP_CHECK_TYPE(nb::try_cast(array, nd), "[from_numpy] can't convert a NumPy array of dtype ",
                nb::str(array.attr("dtype")).c_str(), "; the supported types are float64, float32, float16, "
                "int64, int32, int16, int8, uint8, bool and ml_dtypes.bfloat16");
  auto dtype = from_dlpack(nd.dtype());
  if (reinterpret && nd.dtype() == nb::dtype<uint16_t>()) dtype = reinterpret;
  TP_CHECK_TYPE(dtype.has_value(), "[from_numpy] can't convert a NumPy array of this dtype; the supported types are "
                "float64, float32, float16, int64, int32, int16, int8, uint8, bool (and ml_dtypes.bfloat16)");
  return share(nd, *dtype, "from_numpy");
}

// Any object with __dlpack__, or a DLPack capsule, on the CPU.
Tensor import_dlpack(nb::object producer) {
  ImportedArray nd;
  TP_CHECK_TYPE(nb::try_cast(producer, nd), "[from_dlpack] expected a DLPack capsule or an object with __dlpack__ "
                "holding an array tensorplay can read, got ", nb::inst_name(producer).c_str());
  TP_CHECK(nd.device_type() == nb::device::cpu::value, "[from_dlpack] tensorplay takes tensors on the CPU only; "
           "this one is on DLPack device type ", nd.device_type());
  auto dtype = from_dlpack(nd.dtype());
  TP_CHECK_TYPE(dtype.has_value(), "[from_dlpack] unsupported DLPack dtype (code ", int(nd.dtype().code), ", ",
                int(nd.dtype().bits), " bits, ", int(nd.dtype().lanes), " lanes)");
  return share(nd, *dtype, "from_dlpack");
}

// nanobind's own array over the tensor's memory, which keeps the tensor alive.
nb::object exported(nb::handle self, bool bfloat16_as_uint16, bool numpy) {
  const Tensor& t = unwrap(self);
  std::vector<size_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  const DLType dtype = to_dlpack(t.dtype(), bfloat16_as_uint16);
  if (numpy) return nb::ndarray<nb::numpy>(t.data_ptr(), t.dim(), shape.data(), self, strides.data(), dtype).cast();
  return nb::ndarray<>(t.data_ptr(), t.dim(), shape.data(), self, strides.data(), dtype).cast();
}

nb::object to_numpy(nb::handle self) {
  const Tensor& t = unwrap(self);
  TP_CHECK_TYPE(t.device().is_cpu(), "[numpy] can't convert ", t.device().str(), " tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first.");
  return exported(self, true, true);
}

}  // namespace

void init_numpy(nb::module_& m) {
  m.def("_from_numpy", &from_numpy, "ndarray"_a, "reinterpret"_a.none() = nb::none());
  tensor_class().def("_numpy", &to_numpy);
  tensor_class().def("_move_storage_to", &move_storage_to, "ndarray"_a);
  m.def("_from_dlpack", &import_dlpack, "producer"_a);
  // nanobind returns an array without a framework as a DLPack capsule ("dltensor", which every
  // DLPack consumer reads).
  tensor_class().def("_dlpack", [](nb::handle self) {
    TP_CHECK(unwrap(self).device().is_cpu(), "[__dlpack__] tensorplay exports tensors on the CPU only");
    return exported(self, false, false);
  });
}

}  // namespace tp::python

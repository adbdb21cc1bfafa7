// Tensor.__getitem__ and __setitem__: Python's index turned into the items of a C++ index
// (ops/tensor_indexing.h), which Tensor::index and Tensor::index_put_ apply as LibTorch's do.

#include "tensorplay/ops/tensor_indexing.h"
#include "bindings.h"

namespace tp::python {

namespace {

using indexing::TensorIndex;

nb::object& g_tensor_factory = persistent();  // tensorplay.tensor, for lists used as indices

bool is_int(nb::handle h) { return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()); }

TensorIndex to_index_item(nb::handle item) {
  if (is_int(item)) return nb::cast<int64_t>(item);
  if (PySlice_Check(item.ptr())) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
    return indexing::Slice(start, stop, step);
  }
  if (item.is_none()) return indexing::None;
  if (item.ptr() == Py_Ellipsis) return indexing::Ellipsis;
  if (PyBool_Check(item.ptr())) return item.ptr() == Py_True;
  return is_tensor(item) ? unwrap(item) : nb::cast<Tensor>(g_tensor_factory(item));
}

std::vector<TensorIndex> to_index_items(nb::handle index) {
  std::vector<TensorIndex> items;
  if (nb::isinstance<nb::tuple>(index)) {
    for (nb::handle h : nb::borrow<nb::tuple>(index)) items.push_back(to_index_item(h));
  } else {
    items.push_back(to_index_item(index));
  }
  return items;
}

// Basic indexing only makes views, cheaper than releasing the GIL; advanced indexing copies.
bool has_advanced(const std::vector<TensorIndex>& items) {
  for (const TensorIndex& item : items)
    if (item.is_tensor() || item.is_boolean()) return true;
  return false;
}

Tensor getitem(const Tensor& self, nb::handle index) {
  if (is_int(index)) {  // the common case, without building the items
    int64_t i = nb::cast<int64_t>(index);
    TP_CHECK_INDEX(self.dim() > 0, "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor "
                   "to a number");
    TP_CHECK_INDEX(i >= -self.size(0) && i < self.size(0), "index ", i, " is out of bounds for dimension 0 with size ",
                   self.size(0));
    return select(self, 0, i);
  }
  std::vector<TensorIndex> items = to_index_items(index);
  if (!has_advanced(items)) return self.index(items);
  nb::gil_scoped_release released;
  return self.index(items);
}

void setitem(Tensor& self, nb::handle index, nb::handle value) {
  std::vector<TensorIndex> items = to_index_items(index);
  if (is_tensor(value)) {
    Tensor source = unwrap(value);
    nb::gil_scoped_release released;
    self.index_put_(items, source);
  } else {
    Scalar source = nb::cast<Scalar>(value);
    nb::gil_scoped_release released;
    self.index_put_(items, source);
  }
}

}  // namespace

void init_indexing(nb::module_& m) {
  m.def("_set_tensor_factory", [](nb::object f) { g_tensor_factory = f; });
  tensor_class().def("__getitem__", &getitem, "index"_a.none());
  tensor_class().def("__setitem__", &setitem, "index"_a.none(), "value"_a);
  tensor_class().def("index_put_", [](Tensor& t, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                                      bool accumulate) -> Tensor { return index_put_(t, indices, values, accumulate); },
                     "indices"_a, "values"_a, "accumulate"_a = false, release_gil());
  m.def("index_copy", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
    return index_copy(t, dim, index, source);
  }, "input"_a, "dim"_a, "index"_a, "source"_a, release_gil());
  tensor_class().def("index_copy", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
    return index_copy(t, dim, index, source);
  }, "dim"_a, "index"_a, "source"_a, release_gil());
  tensor_class().def("index_copy_", [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) -> Tensor {
    return index_copy_(t, dim, index, source);
  }, "dim"_a, "index"_a, "source"_a, release_gil());
  m.def("index_put", [](const Tensor& t, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                        bool accumulate) { return index_put(t, indices, values, accumulate); },
        "input"_a, "indices"_a, "values"_a, "accumulate"_a = false, release_gil());
}

}  // namespace tp::python

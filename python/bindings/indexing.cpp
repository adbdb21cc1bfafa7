// Tensor.__getitem__ and __setitem__: Python's indexing syntax turned into ops. Ints, slices,
// None and Ellipsis become views (select, slice, unsqueeze); tensors, lists and bools become
// advanced indexing (tp::index / tp::index_put_), as in PyTorch.

#include "bindings.h"

namespace tp::python {

namespace {

nb::object& g_tensor_factory = persistent();  // tensorplay.tensor, for lists used as indices

struct ParsedIndex {
  Tensor view;                                   // after the basic (view) indexing
  std::vector<std::optional<Tensor>> advanced;   // index tensors by dim of `view`
};

bool is_int(nb::handle h) { return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()); }

// A 0-dim integer tensor indexes like the int it holds (giving a view), as in PyTorch.
bool is_int_tensor_scalar(nb::handle h) {
  if (!is_tensor(h)) return false;
  const Tensor& t = unwrap(h);
  return t.dim() == 0 && is_integral(t.dtype(), false);
}

// How many dims of the tensor an index item consumes.
int64_t dims_consumed(nb::handle item) {
  if (item.is_none() || item.ptr() == Py_Ellipsis || PyBool_Check(item.ptr())) return 0;
  if (is_tensor(item)) {
    const Tensor& t = unwrap(item);
    if (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8) return t.dim();
  }
  return 1;
}

ParsedIndex parse_index(const Tensor& self, nb::handle index) {
  std::vector<nb::handle> items;
  if (nb::isinstance<nb::tuple>(index)) {
    for (nb::handle h : nb::borrow<nb::tuple>(index)) items.push_back(h);
  } else {
    items.push_back(index);
  }
  int64_t consumed = 0, ellipses = 0;
  for (nb::handle item : items) {
    consumed += dims_consumed(item);
    ellipses += item.ptr() == Py_Ellipsis;
  }
  TP_CHECK_INDEX(ellipses <= 1, "an index can only have a single ellipsis ('...')");
  TP_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim());

  ParsedIndex parsed{self, {}};
  Tensor& v = parsed.view;
  int64_t dim = 0;
  auto record = [&](int64_t at, Tensor t) {
    if (static_cast<int64_t>(parsed.advanced.size()) <= at) parsed.advanced.resize(at + 1);
    parsed.advanced[at] = std::move(t);
  };
  for (nb::handle item : items) {
    if (is_int(item) || is_int_tensor_scalar(item)) {
      int64_t i = is_int(item) ? nb::cast<int64_t>(item) : unwrap(item).item<int64_t>();
      int64_t size = v.size(dim);
      TP_CHECK_INDEX(i >= -size && i < size, "index ", i, " is out of bounds for dimension ", dim, " with size ", size);
      v = select(v, dim, i);
    } else if (PySlice_Check(item.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
      TP_CHECK_VALUE(step > 0, "step must be greater than zero");
      v = slice(v, dim, start, stop, step);
      ++dim;
    } else if (item.is_none()) {
      v = unsqueeze(v, dim++);
    } else if (item.ptr() == Py_Ellipsis) {
      dim += self.dim() - consumed;
    } else if (PyBool_Check(item.ptr())) {
      v = unsqueeze(v, dim);
      record(dim++, item.ptr() == Py_True ? zeros({1}, ScalarType::Int64) : empty({0}, ScalarType::Int64));
    } else {
      Tensor t = is_tensor(item) ? unwrap(item) : nb::cast<Tensor>(g_tensor_factory(item));
      if (t.dim() == 0 && t.dtype() == ScalarType::Bool) {
        v = unsqueeze(v, dim);
        record(dim++, t.item<bool>() ? zeros({1}, ScalarType::Int64) : empty({0}, ScalarType::Int64));
      } else if (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8) {
        record(dim, t);
        dim += t.dim();
      } else {
        record(dim++, t);
      }
    }
  }
  return parsed;
}

// The one index tensor of a parsed index, when it is a bool mask and the only advanced index.
const Tensor* single_mask(const ParsedIndex& parsed) {
  const Tensor* mask = nullptr;
  for (const auto& index : parsed.advanced) {
    if (!index) continue;
    if (mask || (index->dtype() != ScalarType::Bool && index->dtype() != ScalarType::UInt8)) return nullptr;
    mask = &*index;
  }
  return mask;
}

Tensor getitem(const Tensor& self, nb::handle index) {
  if (is_int(index)) {  // the common case, without building a parse
    int64_t i = nb::cast<int64_t>(index);
    TP_CHECK_INDEX(self.dim() > 0, "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor "
                   "to a number");
    TP_CHECK_INDEX(i >= -self.size(0) && i < self.size(0), "index ", i, " is out of bounds for dimension 0 with size ",
                   self.size(0));
    return select(self, 0, i);
  }
  ParsedIndex parsed = parse_index(self, index);
  if (parsed.advanced.empty()) return parsed.view;
  nb::gil_scoped_release released;
  return tp::index(parsed.view, parsed.advanced);
}

void setitem(Tensor& self, nb::handle index, nb::handle value) {
  ParsedIndex parsed = parse_index(self, index);
  Tensor& target = parsed.view;
  Tensor source = is_tensor(value) ? unwrap(value)
                                   : scalar_tensor(nb::cast<Scalar>(value), self.dtype(), self.device());
  // Leading size-1 dims of the value are dropped, so x[0] = ones(1, 3) fills a row.
  while (source.dim() > 0 && source.size(0) == 1 && source.dim() > target.dim()) source = squeeze(source, {0});
  nb::gil_scoped_release released;
  if (parsed.advanced.empty()) {
    copy_(target, source);
  } else if (const Tensor* mask = single_mask(parsed); mask && source.numel() == 1) {
    // x[mask] = v with one value fills, converting v's dtype as PyTorch does; index_put_ would not.
    int64_t at = static_cast<int64_t>(parsed.advanced.size()) - 1;
    for (int64_t k = 0; k < mask->dim(); ++k)
      TP_CHECK_INDEX(at + k < target.dim() && mask->size(k) == target.size(at + k), "The shape of the mask ",
                     to_string(mask->sizes()), " at index ", k, " does not match the shape of the indexed tensor ",
                     to_string(target.sizes()), " at index ", at + k);
    Shape aligned(at, 1);
    aligned.insert(aligned.end(), mask->sizes().begin(), mask->sizes().end());
    aligned.resize(target.dim(), 1);
    masked_fill_(target, to(reshape(*mask, aligned), ScalarType::Bool), to(reshape(source, {}), target.dtype()));
  } else {
    index_put_(target, parsed.advanced, source);
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

// Tensor::index and Tensor::index_put_: an index of Python's items turned into ops. Ints, slices,
// None and Ellipsis become views (select, slice, unsqueeze); tensors and bools become advanced
// indexing (tp::index / tp::index_put_), as in PyTorch. Python's t[...] and t[...] = v run this.

#include "tensorplay/ops/tensor_indexing.h"

#include <cstring>

#include "tensorplay/ops/ops.h"

namespace tp {

namespace indexing {

TensorIndex::TensorIndex(const char* ellipsis) : kind_(Kind::Ellipsis) {
  TP_CHECK_VALUE(ellipsis != nullptr && std::strcmp(ellipsis, "...") == 0,
                 "[index] the only string an index may hold is \"...\" (Ellipsis), got \"",
                 ellipsis ? ellipsis : "(null)", "\"");
}

}  // namespace indexing

namespace {

using indexing::TensorIndex;

struct ParsedIndex {
  Tensor view;                                  // after the basic (view) indexing
  std::vector<std::optional<Tensor>> advanced;  // index tensors by dim of `view`
};

bool is_mask(const Tensor& t) { return t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8; }

// A 0-dim integer tensor indexes like the int it holds (giving a view), as in PyTorch.
bool is_integer_item(const TensorIndex& item) {
  if (item.is_integer()) return true;
  return item.is_tensor() && item.tensor().dim() == 0 && is_integral(item.tensor().dtype(), false);
}

// How many dims of the tensor an index item consumes.
int64_t dims_consumed(const TensorIndex& item) {
  if (item.is_none() || item.is_ellipsis() || item.is_boolean()) return 0;
  if (item.is_tensor() && is_mask(item.tensor())) return item.tensor().dim();
  return 1;
}

// A bool indexes like a 0-dim mask: a new dim of size 1 (True) or 0 (False).
Tensor bool_index(bool value) { return value ? zeros({1}, ScalarType::Int64) : empty({0}, ScalarType::Int64); }

ParsedIndex parse_index(const Tensor& self, const std::vector<TensorIndex>& items) {
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& item : items) {
    consumed += dims_consumed(item);
    ellipses += item.is_ellipsis();
  }
  TP_CHECK_INDEX(ellipses <= 1, "an index can only have a single ellipsis ('...')");
  TP_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim());

  ParsedIndex parsed{self, {}};
  Tensor& v = parsed.view;
  // dim counts the dims of the view so far. An out-of-range integer is reported by the position of
  // its item in the index, as PyTorch reports it.
  int64_t dim = 0, position = -1;
  auto record = [&](int64_t at, Tensor t) {
    if (static_cast<int64_t>(parsed.advanced.size()) <= at) parsed.advanced.resize(at + 1);
    parsed.advanced[at] = std::move(t);
  };
  for (const TensorIndex& item : items) {
    ++position;
    if (is_integer_item(item)) {
      int64_t i = item.is_integer() ? item.integer() : item.tensor().item<int64_t>();
      int64_t size = v.size(dim);
      TP_CHECK_INDEX(i >= -size && i < size, "index ", i, " is out of bounds for dimension ", position, " with size ",
                     size);
      v = select(v, dim, i);
    } else if (item.is_slice()) {
      const indexing::Slice& s = item.slice();
      TP_CHECK_VALUE(s.step() > 0, "step must be greater than zero");
      v = slice(v, dim, s.start(), s.stop(), s.step());
      ++dim;
    } else if (item.is_none()) {
      v = unsqueeze(v, dim++);
    } else if (item.is_ellipsis()) {
      dim += self.dim() - consumed;
    } else if (item.is_boolean()) {
      v = unsqueeze(v, dim);
      record(dim++, bool_index(item.boolean()));
    } else {
      const Tensor& t = item.tensor();
      if (t.dim() == 0 && t.dtype() == ScalarType::Bool) {
        v = unsqueeze(v, dim);
        record(dim++, bool_index(t.item<bool>()));
      } else if (is_mask(t)) {
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
    if (mask || !is_mask(*index)) return nullptr;
    mask = &*index;
  }
  return mask;
}

Tensor get_item(const Tensor& self, const std::vector<TensorIndex>& indices) {
  ParsedIndex parsed = parse_index(self, indices);
  if (parsed.advanced.empty()) return parsed.view;
  return index(parsed.view, parsed.advanced);
}

void set_item(const Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value) {
  ParsedIndex parsed = parse_index(self, indices);
  Tensor& target = parsed.view;
  Tensor source = value;
  // Leading size-1 dims of the value are dropped, so x[0] = ones(1, 3) fills a row.
  while (source.dim() > 0 && source.size(0) == 1 && source.dim() > target.dim()) source = squeeze(source, {0});
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

Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const { return get_item(*this, indices); }

const Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value) const {
  set_item(*this, indices, value);
  return *this;
}

const Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Scalar& value) const {
  return index_put_(indices, scalar_tensor(value, dtype(), device()));
}

}  // namespace tp

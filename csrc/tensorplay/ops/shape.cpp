// Views (which share storage with their input) and the shape ops that copy: cat, stack, repeat,
// flip; with their backward nodes. split, chunk, unbind, stack, movedim and broadcast_to are
// composites.

#include <algorithm>
#include <functional>
#include <numeric>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/profiler/op_span.h"
#include "tensorplay/autograd/record.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

// The backward nodes several ops share; each other node is defined next to its op.

// view, reshape, flatten, unflatten, squeeze, unsqueeze: the gradient takes the input's shape.
class ReshapeBackward final : public autograd::Node {
 public:
  ReshapeBackward(const char* name, const Tensor& input)
      : name_(name), sizes_(input.sizes().begin(), input.sizes().end()) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override { return {reshape(grads[0], sizes_)}; }

 private:
  const char* name_;
  Shape sizes_;
};

// select, slice, narrow, as_strided: the gradient is zero except where the view looks, which
// `view` finds again in a tensor of the input's shape. With create_graph the copy below records
// through CopySlices, so the gradient stays differentiable.
class ViewScatterBackward final : public autograd::Node {
 public:
  using View = std::function<Tensor(const Tensor&)>;
  // same_layout: the view is read off the input's memory layout (as_strided), so the gradient
  // is laid out like the input; the other views are defined by the input's shape alone.
  // storage_extent: for a same_layout view whose elements may share memory, the elements of
  // storage the input and the view span from the input's start; 0 for any other view.
  ViewScatterBackward(const char* name, const Tensor& input, View view, bool same_layout = false,
                      int64_t storage_extent = 0)
      : name_(name),
        sizes_(input.sizes().begin(), input.sizes().end()),
        strides_(same_layout ? Shape(input.strides().begin(), input.strides().end()) : Shape()),
        view_(std::move(view)),
        storage_extent_(storage_extent) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    if (storage_extent_ > 0) {
      // Elements that share memory share a gradient: each view element's is added at its place in
      // storage, and the input reads its own places back.
      Tensor places = view_(arange(0, storage_extent_, 1, ScalarType::Int64, g.device()));
      Tensor summed = scatter_add(zeros({storage_extent_}, g.dtype(), g.device()), 0, reshape(places, {-1}),
                                  reshape(g, {-1}));
      return {as_strided(summed, sizes_, strides_, 0)};
    }
    Tensor result = strides_.empty() ? zeros(sizes_, g.dtype(), g.device())
                                     : zero_(empty_strided(sizes_, strides_, g.dtype(), g.device()));
    copy_(view_(result), g);
    return {result};
  }

 private:
  const char* name_;
  Shape sizes_, strides_;
  View view_;
  int64_t storage_extent_;
};

// The elements a window (sizes, strides, offset) onto a storage spans; it must lie inside the
// storage's bytes (as_strided, set_).
int64_t check_window(const char* op, IntArrayRef sizes, IntArrayRef strides, int64_t offset, int64_t itemsize,
                     const Storage& storage) {
  auto extent = storage_extent(sizes, strides);
  int64_t needed = 0;
  TP_CHECK(extent && (*extent == 0 || (!__builtin_add_overflow(offset, *extent, &needed) &&
                                       !__builtin_mul_overflow(needed, itemsize, &needed))),
           "[", op, "] Storage size calculation overflowed with sizes=", to_string(sizes), " and strides=",
           to_string(strides));
  const auto available = static_cast<int64_t>(storage->nbytes());
  TP_CHECK(needed <= available, "[", op, "] sizes ", to_string(sizes), ", strides ", to_string(strides),
           ", storage offset ", offset, " and itemsize ", itemsize, " requiring a storage size of ", needed,
           " are out of bounds for storage of size ", available);
  return *extent;
}

// Whether a view's elements may share memory: false only where, with the dims ordered by stride,
// each stride passes the span of the dims inside it (PyTorch's non-overlap test).
bool may_overlap(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims with more than one element
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return false;  // no elements: nothing to share
    if (sizes[d] > 1) dims.emplace_back(strides[d], sizes[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // the furthest element reached by the dims so far
  for (auto [stride, size] : dims) {
    if (stride <= span) return true;
    int64_t reach = 0;
    // (A span past int64 cannot be a storage's: as_strided's window check refused it.)
    if (__builtin_mul_overflow(stride, size - 1, &reach) || __builtin_add_overflow(span, reach, &span)) return true;
  }
  return false;
}

// split, chunk and unbind: one node for all the pieces; a piece without a gradient contributes
// zeros. unbind's pieces lost the dim, so their gradients are stacked rather than concatenated.
class SplitBackward final : public autograd::Node {
 public:
  SplitBackward(const char* name, const Tensor& input, int64_t dim, bool stacked)
      : name_(name), sizes_(input.sizes().begin(), input.sizes().end()), dim_(dim), stacked_(stacked) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override {
    TensorList pieces;
    for (size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].defined())
        pieces.push_back(grads[i]);
      else
        pieces.push_back(zeros(output_meta(i).shape, output_meta(i).dtype, output_meta(i).device));
    }
    return {stacked_ ? stack(pieces, dim_) : cat(pieces, dim_)};
  }

 private:
  const char* name_;
  Shape sizes_;
  int64_t dim_;
  bool stacked_;
};

// t's storage offset moved by index steps of stride: a view's offset, checked for overflow.
int64_t view_offset(const char* op, const Tensor& t, int64_t index, int64_t stride) {
  int64_t offset = 0;
  TP_CHECK(!__builtin_mul_overflow(index, stride, &offset) &&
               !__builtin_add_overflow(offset, t.storage_offset(), &offset),
           "[", op, "] invalid storage offset: ", t.storage_offset(), " + ", index, " * ", stride, " overflows int64");
  return offset;
}

// A view of t as dtype, recorded with node N (built from args) when t requires grad. A view made
// under no_grad of a tensor that requires grad still requires grad, as a leaf (as in PyTorch).
template <class N, class... Args>
Tensor recorded_view_as(const Tensor& t, ScalarType dtype, Shape sizes, Shape strides, int64_t offset,
                        Args&&... args) {
  TP_CHECK(offset >= 0, "[view] invalid storage offset ", offset);
  autograd::Record<N> record({&t}, std::forward<Args>(args)...);
  Tensor view = record.finish(make_view(t, dtype, std::move(sizes), std::move(strides), offset));
  if (!record && !is_grad_enabled() && autograd::requires_grad(t)) autograd::ensure_meta(view).requires_grad = true;
  return view;
}

template <class N, class... Args>
Tensor recorded_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset, Args&&... args) {
  return recorded_view_as<N>(t, t.dtype(), std::move(sizes), std::move(strides), offset, std::forward<Args>(args)...);
}

// The strides that let a tensor of oldshape/oldstride be viewed as newshape, if any. This is
// PyTorch's rule: each run of dims that is contiguous in memory may be split or merged freely.
std::optional<Shape> view_strides(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape) {
  Shape newstride(newshape.size());
  if (oldshape.empty()) {
    std::fill(newstride.begin(), newstride.end(), 1);
    return newstride;
  }
  if (numel(oldshape) == 0) {
    if (std::equal(oldshape.begin(), oldshape.end(), newshape.begin(), newshape.end()))
      return Shape(oldstride.begin(), oldstride.end());
    return contiguous_strides(newshape);
  }
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

}  // namespace

Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset) {
  TP_CHECK(sizes.size() == strides.size(), "[as_strided] mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(t.storage_offset());
  TP_CHECK(offset >= 0, "[as_strided] Tensor: invalid storage offset ", offset);
  for (size_t d = 0; d < sizes.size(); ++d) {
    TP_CHECK(sizes[d] >= 0, "[as_strided] Trying to create tensor with negative dimension ", sizes[d]);
    TP_CHECK(strides[d] >= 0,
             "[as_strided] Negative strides are not supported at the moment, got strides: ", to_string(strides));
  }
  const int64_t extent = check_window("as_strided", sizes, strides, offset, t.itemsize(), t.impl()->storage());
  Shape sz(sizes.begin(), sizes.end()), st(strides.begin(), strides.end());
  int64_t relative = offset - t.storage_offset();
  // An overlapping view (of an input that starts no later) sums its gradients (ViewScatterBackward).
  int64_t overlap_extent = 0;
  if (relative >= 0 && may_overlap(sizes, strides))
    overlap_extent = std::max(storage_extent(t.sizes(), t.strides()).value_or(0), relative + extent);
  return recorded_view<ViewScatterBackward>(
      t, sz, st, offset, "AsStridedBackward0", t,
      [sz, st, relative](const Tensor& x) { return as_strided(x, sz, st, x.storage_offset() + relative); }, true,
      overlap_extent);
}

Tensor resize_(const Tensor& self, IntArrayRef sizes, MemoryFormat format) {
  TP_CHECK_KIND(ErrorKind::NotImplemented, !self.is_sparse(), "[resize_] a sparse COO tensor is not resized in "
                "place: sparse_coo_tensor() builds one of another size from its parts");
  TP_CHECK(!self.requires_grad(), "[resize_] cannot resize variables that require grad");
  for (int64_t s : sizes)
    TP_CHECK(s >= 0, "[resize_] Trying to create tensor with negative dimension ", s, ": ", to_string(sizes));
  Shape strides = memory_format_strides("resize_", sizes, format);
  auto extent = storage_extent(sizes, strides);
  int64_t needed = 0;
  TP_CHECK(extent && !__builtin_add_overflow(self.storage_offset(), *extent, &needed) &&
               !__builtin_mul_overflow(needed, self.itemsize(), &needed),
           "[resize_] Storage size calculation overflowed with sizes=", to_string(sizes));
  const int64_t available = static_cast<int64_t>(self.impl()->storage()->nbytes());
  if (needed <= available) {
    self.impl()->set_sizes_and_strides(Shape(sizes.begin(), sizes.end()), std::move(strides), self.storage_offset());
    return self;
  }
  // A larger storage that starts with the old one's bytes, as PyTorch's storage resize keeps them.
  Tensor grown = empty({needed / self.itemsize()}, self.dtype(), self.device());
  const int64_t kept = available / self.itemsize();
  if (kept > 0) copy_(make_view(grown, {kept}, {1}, 0), make_view(self, {kept}, {1}, 0));
  self.impl()->set_data(*make_view(grown, Shape(sizes.begin(), sizes.end()), std::move(strides),
                                   self.storage_offset()).impl());
  return self;
}

Tensor storage_bytes(const Tensor& t) {
  const Storage& storage = t.impl()->storage();
  return Tensor(intrusive_ptr<TensorImpl>::make(storage, ScalarType::UInt8,
                                                Shape{static_cast<int64_t>(storage->nbytes())}, Shape{1}, 0));
}

Tensor set_(const Tensor& self, const Tensor& source, int64_t storage_offset, IntArrayRef sizes, IntArrayRef strides) {
  TP_CHECK_KIND(ErrorKind::NotImplemented, !self.is_sparse() && !source.is_sparse(), "[set_] a sparse COO tensor "
                "has no storage to show or to replace");
  TP_CHECK(sizes.size() == strides.size(), "[set_] size and stride must have the same length, got ",
           to_string(sizes), " and ", to_string(strides));
  TP_CHECK(storage_offset >= 0, "[set_] Tensor: invalid storage offset ", storage_offset);
  TP_CHECK(self.device() == source.device(), "[set_] Expected a storage on ", self.device().str(), ", but got one on ",
           source.device().str());
  for (int64_t s : sizes) TP_CHECK(s >= 0, "[set_] Trying to create tensor with negative dimension ", s);
  const Storage& storage = source.impl()->storage();
  check_window("set_", sizes, strides, storage_offset, self.itemsize(), storage);
  TensorImpl shown(storage, self.dtype(), Shape(sizes.begin(), sizes.end()), Shape(strides.begin(), strides.end()),
                   storage_offset);
  self.impl()->set_data(shown);
  storage->bump_version();
  return self;
}

Tensor view(const Tensor& t, IntArrayRef sizes) {
  TP_OP_SPAN(view, t, sizes);
  Shape shape = infer_size("view", sizes, t.numel());
  auto strides = view_strides(t.sizes(), t.strides(), shape);
  TP_CHECK(strides.has_value(),
           "[view] view size is not compatible with input tensor's size and stride (at least "
           "one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return recorded_view<ReshapeBackward>(t, std::move(shape), std::move(*strides), t.storage_offset(), "ViewBackward0",
                                        t);
}

Tensor view_dtype(const Tensor& t, ScalarType dtype) {
  TP_CHECK_KIND(ErrorKind::NotImplemented, !t.is_sparse(), "[view] a sparse COO tensor has no strided elements to "
                "view: Tensor.to_dense() gives a dense tensor");
  TP_CHECK(itemsize(dtype) == t.itemsize(), "[view] viewing a tensor of ", name(t.dtype()), " as ", name(dtype),
           " needs both dtypes to have the same size");
  return Tensor(intrusive_ptr<TensorImpl>::make(t.impl()->storage(), dtype, Shape(t.sizes().begin(), t.sizes().end()),
                                                Shape(t.strides().begin(), t.strides().end()), t.storage_offset()));
}

namespace {

class ViewAsRealBackward final : public autograd::Node {
 public:
  std::string name() const override { return "ViewAsRealBackward0"; }
  TensorList apply(TensorList&& grads) override { return {view_as_complex(contiguous(grads[0]))}; }
};

class ViewAsComplexBackward final : public autograd::Node {
 public:
  std::string name() const override { return "ViewAsComplexBackward0"; }
  TensorList apply(TensorList&& grads) override { return {view_as_real(grads[0])}; }
};

}  // namespace

Tensor view_as_real(const Tensor& t) {
  TP_CHECK(is_complex(t.dtype()), "[view_as_real] view_as_real is only supported for complex tensors, got ",
           name(t.dtype()));
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides;
  for (int64_t stride : t.strides()) strides.push_back(stride * 2);
  sizes.push_back(2);
  strides.push_back(1);
  return recorded_view_as<ViewAsRealBackward>(t, real_part_type(t.dtype()), std::move(sizes), std::move(strides),
                                              t.storage_offset() * 2);
}

Tensor view_as_complex(const Tensor& t) {
  TP_CHECK(t.dtype() == ScalarType::Float16 || t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64,
           "[view_as_complex] view_as_complex is only supported for half, float and double tensors, but got a tensor of "
           "scalar type: ", name(t.dtype()));
  TP_CHECK(t.dim() > 0 && t.size(-1) == 2, "[view_as_complex] Tensor must have a last dimension of size 2");
  TP_CHECK(t.stride(-1) == 1, "[view_as_complex] Tensor must have a last dimension with stride 1");
  Shape sizes(t.sizes().begin(), t.sizes().end() - 1), strides;
  for (int64_t d = 0; d + 1 < t.dim(); ++d) {
    TP_CHECK(t.stride(d) % 2 == 0, "[view_as_complex] Tensor must have a stride divisible by 2 for all but last "
             "dimension");
    strides.push_back(t.stride(d) / 2);
  }
  TP_CHECK(t.storage_offset() % 2 == 0, "[view_as_complex] Tensor must have a storage_offset divisible by 2");
  TP_CHECK_KIND(ErrorKind::NotImplemented, t.dtype() != ScalarType::Float16,
                "[view_as_complex] tensorplay has no complex32: the parts must be float32 or float64, got float16");
  return recorded_view_as<ViewAsComplexBackward>(t, complex_type_of(t.dtype()), std::move(sizes), std::move(strides),
                                                 t.storage_offset() / 2);
}

Tensor reshape(const Tensor& t, IntArrayRef sizes) {
  TP_OP_SPAN(reshape, t, sizes);
  Shape shape = infer_size("reshape", sizes, t.numel());
  if (auto strides = view_strides(t.sizes(), t.strides(), shape))
    return recorded_view<ReshapeBackward>(t, std::move(shape), std::move(*strides), t.storage_offset(), "ViewBackward0",
                                          t);
  return view(contiguous(t), shape);
}

namespace {

class PermuteBackward final : public autograd::Node {
 public:
  explicit PermuteBackward(Shape inverse) : inverse_(std::move(inverse)) {}
  std::string name() const override { return "PermuteBackward0"; }
  TensorList apply(TensorList&& grads) override { return {permute(grads[0], inverse_)}; }

 private:
  Shape inverse_;
};

}  // namespace

Tensor permute(const Tensor& t, IntArrayRef dims) {
  TP_OP_SPAN(permute, t, dims);
  TP_CHECK(static_cast<int64_t>(dims.size()) == t.dim(), "[permute] number of dims don't match in permute: got ",
           to_string(dims), " for a tensor of shape ", to_string(t.sizes()));
  dim_mask("permute", dims, t.dim());  // rejects repeated dims
  Shape sizes(t.dim()), strides(t.dim()), inverse(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) {
    int64_t d = wrap_dim("permute", dims[i], t.dim());
    sizes[i] = t.size(d);
    strides[i] = t.stride(d);
    inverse[d] = i;
  }
  return recorded_view<PermuteBackward>(t, std::move(sizes), std::move(strides), t.storage_offset(),
                                        std::move(inverse));
}

namespace {

class TransposeBackward final : public autograd::Node {
 public:
  TransposeBackward(const char* name, int64_t a, int64_t b) : name_(name), a_(a), b_(b) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override { return {transpose(grads[0], a_, b_)}; }

 private:
  const char* name_;
  int64_t a_, b_;
};

}  // namespace

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  TP_OP_SPAN(transpose, t, dim0, dim1);
  int64_t a = wrap_dim("transpose", dim0, t.dim()), b = wrap_dim("transpose", dim1, t.dim());
  if (t.is_sparse()) [[unlikely]]
    return sparse_transpose(t, a, b);
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  if (t.dim()) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return recorded_view<TransposeBackward>(t, std::move(sizes), std::move(strides), t.storage_offset(),
                                          "TransposeBackward0", a, b);
}

Tensor t(const Tensor& x) {
  TP_OP_SPAN(t, x);
  TP_CHECK(x.dim() <= 2, "[t] expects a tensor with <= 2 dimensions, but self is ", x.dim(), "D");
  if (x.is_sparse()) [[unlikely]]
    return x.dim() < 2 ? x : sparse_transpose(x, 0, 1);
  if (x.dim() < 2)
    return recorded_view<TransposeBackward>(x, Shape(x.sizes().begin(), x.sizes().end()),
                                            Shape(x.strides().begin(), x.strides().end()), x.storage_offset(),
                                            "TBackward0", 0, 0);
  return recorded_view<TransposeBackward>(x, {x.size(1), x.size(0)}, {x.stride(1), x.stride(0)}, x.storage_offset(),
                                          "TBackward0", 0, 1);
}

Tensor movedim(const Tensor& t, int64_t source, int64_t destination) {
  return movedim(t, IntArrayRef{source}, IntArrayRef{destination});
}

Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
  TP_CHECK(source.size() == destination.size(), "[movedim] Invalid source or destination dims: source (",
           to_string(source), " dims) should contain the same number of dims as destination (", to_string(destination),
           " dims)");
  if (t.dim() == 0) {
    dim_mask("movedim", source, 0);
    dim_mask("movedim", destination, 0);
    return t;
  }
  std::vector<bool> from = dim_mask("movedim", source, t.dim());
  dim_mask("movedim", destination, t.dim());  // rejects repeated destinations
  // Place each moved dim at its destination, and the others in order in the remaining slots.
  Shape order(t.dim(), -1);
  for (size_t i = 0; i < source.size(); ++i)
    order[wrap_dim("movedim", destination[i], t.dim())] = wrap_dim("movedim", source[i], t.dim());
  int64_t next = 0;
  for (int64_t& slot : order) {
    if (slot >= 0) continue;
    while (from[next]) ++next;
    slot = next++;
  }
  return permute(t, order);
}

namespace {

class ExpandBackward final : public autograd::Node {
 public:
  explicit ExpandBackward(const Tensor& input) : sizes_(input.sizes().begin(), input.sizes().end()) {}
  std::string name() const override { return "ExpandBackward0"; }
  TensorList apply(TensorList&& grads) override { return {sum_to_size(grads[0], sizes_)}; }

 private:
  Shape sizes_;
};

}  // namespace

Tensor expand(const Tensor& t, IntArrayRef sizes) {
  TP_OP_SPAN(expand, t, sizes);
  if (std::ranges::equal(sizes, t.sizes())) return t;
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  TP_CHECK(ndim >= t.dim(), "[expand] the number of sizes provided (", ndim,
           ") must be greater or equal to the number of dimensions in the tensor (", t.dim(), ")");
  Shape out_sizes(ndim), out_strides(ndim);
  for (int64_t i = ndim - 1; i >= 0; --i) {
    int64_t d = i - (ndim - t.dim());  // the matching dim of t, if any
    int64_t target = sizes[i];
    if (d < 0) {
      TP_CHECK(target >= 0, "[expand] the expanded size of the tensor (", target,
               ") isn't allowed in a leading, non-existing dimension ", i);
      out_sizes[i] = target;
      // A new dim of size 1 steps over the dims inside it, as unsqueeze's does (PyTorch's strides).
      int64_t over_inner = 0;  // an overflow here means an empty tensor, whose strides nothing reads
      if (i < ndim - 1 && __builtin_mul_overflow(out_sizes[i + 1], out_strides[i + 1], &over_inner)) over_inner = 0;
      out_strides[i] = target != 1 || i == ndim - 1 ? 0 : over_inner;  // a 0-dim tensor's new dims: 0, as PyTorch's
      continue;
    }
    int64_t size = t.size(d);
    if (target == -1) target = size;
    TP_CHECK(target >= 0, "[expand] the expanded size of the tensor (", target, ") must be -1 or non-negative");
    TP_CHECK(size == target || size == 1, "[expand] The expanded size of the tensor (", target,
             ") must match the existing size (", size, ") at non-singleton dimension ", i,
             ".  Target sizes: ", to_string(sizes), ".  Tensor sizes: ", to_string(t.sizes()));
    out_sizes[i] = target;
    out_strides[i] = size == target ? t.stride(d) : 0;
  }
  return recorded_view<ExpandBackward>(t, std::move(out_sizes), std::move(out_strides), t.storage_offset(), t);
}

Tensor broadcast_to(const Tensor& t, IntArrayRef sizes) { return expand(t, sizes); }

TensorList broadcast_tensors(const TensorList& tensors) {
  Shape shape;
  for (const Tensor& x : tensors) shape = broadcast_shapes("broadcast_tensors", shape, x.sizes());
  TensorList out;
  for (const Tensor& x : tensors) out.push_back(expand(x, shape));
  return out;
}

Tensor squeeze(const Tensor& t) {
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) sizes.push_back(t.size(d)), strides.push_back(t.stride(d));
  return recorded_view<ReshapeBackward>(t, std::move(sizes), std::move(strides), t.storage_offset(), "SqueezeBackward0",
                                        t);
}

Tensor squeeze(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> mask = dim_mask("squeeze", dims, t.dim());
  if (dims.empty()) return squeeze(t);
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (!(mask[d] && t.size(d) == 1)) sizes.push_back(t.size(d)), strides.push_back(t.stride(d));
  return recorded_view<ReshapeBackward>(t, std::move(sizes), std::move(strides), t.storage_offset(), "SqueezeBackward1",
                                        t);
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  int64_t d = wrap_dim("unsqueeze", dim, t.dim() + 1);
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  int64_t stride = d < t.dim() ? t.stride(d) * t.size(d) : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return recorded_view<ReshapeBackward>(t, std::move(sizes), std::move(strides), t.storage_offset(),
                                        "UnsqueezeBackward0", t);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  int64_t start = wrap_dim("flatten", start_dim, t.dim()), end = wrap_dim("flatten", end_dim, t.dim());
  if (t.dim() == 0) return reshape(t, IntArrayRef{1});
  TP_CHECK(start <= end, "[flatten] start_dim cannot come after end_dim");
  if (start == end) return t;
  Shape sizes(t.sizes().begin(), t.sizes().begin() + start);
  sizes.push_back(numel(t.sizes().subspan(start, end - start + 1)));
  sizes.insert(sizes.end(), t.sizes().begin() + end + 1, t.sizes().end());
  return reshape(t, sizes);
}

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes) {
  int64_t d = wrap_dim("unflatten", dim, t.dim());
  TP_CHECK(!sizes.empty(), "[unflatten] sizes must be non-empty");
  TP_CHECK(t.dim() > 0, "[unflatten] cannot unflatten a 0-dim tensor");
  Shape inner = infer_size("unflatten", sizes, t.size(d));
  Shape shape(t.sizes().begin(), t.sizes().begin() + d);
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), t.sizes().begin() + d + 1, t.sizes().end());
  return view(t, shape);
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  TP_CHECK(t.dim() > 0, "[slice] cannot be applied to a 0-dim tensor");
  TP_CHECK_VALUE(step > 0, "[slice] step must be greater than zero");
  int64_t d = wrap_dim("slice", dim, t.dim());
  const int64_t size = t.size(d);
  // Python's slice clamping.
  auto clamp_index = [size](int64_t i) { return std::clamp(i < 0 ? i + size : i, int64_t{0}, size); };
  int64_t lo = start ? clamp_index(*start) : 0;
  int64_t hi = end ? clamp_index(*end) : size;
  int64_t length = hi > lo ? (hi - lo - 1) / step + 1 : 0;
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  sizes[d] = length;
  // Wraps as PyTorch's does, and refuses a stride that wraps negative as it does. The product
  // overflows only where the view has at most one element along d, or none at all, so the
  // stride is never used to reach an element.
  strides[d] = static_cast<int64_t>(static_cast<uint64_t>(strides[d]) * static_cast<uint64_t>(step));
  TP_CHECK(strides[d] >= 0, "[slice] the stride ", t.stride(d), " times the step ", step, " overflows int64");
  return recorded_view<ViewScatterBackward>(t, std::move(sizes), std::move(strides),
                                            view_offset("slice", t, lo, t.stride(d)), "SliceBackward0", t,
                                            [d, lo, hi, step](const Tensor& x) { return slice(x, d, lo, hi, step); });
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  TP_CHECK(t.dim() > 0, "[narrow] cannot be applied to a 0-dim tensor");
  TP_CHECK(length >= 0, "[narrow] length must be non-negative.");  // before dim and start, as in PyTorch
  int64_t d = wrap_dim("narrow", dim, t.dim());
  const int64_t size = t.size(d);
  TP_CHECK_INDEX(start >= -size && start <= size, "[narrow] start out of range (expected to be in range of [", -size,
                 ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  TP_CHECK(length >= 0 && length <= size - start, "[narrow] start (", start, ") + length (", length,
           ") exceeds dimension size (", size, ")");
  return slice(t, d, start, start + length, 1);
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t d1 = wrap_dim("diagonal", dim1, t.dim()), d2 = wrap_dim("diagonal", dim2, t.dim());
  TP_CHECK(d1 != d2, "[diagonal] dimensions cannot be identical ", dim1, ", ", dim2);
  // Element i sits at [i, i + offset] (or [i - offset, i]): one stride that steps both dims.
  const int64_t length = std::max<int64_t>(
      0, offset >= 0 ? std::min(t.size(d1), t.size(d2) - offset) : std::min(t.size(d1) + offset, t.size(d2)));
  int64_t start = t.storage_offset();
  if (length > 0) start = offset >= 0 ? view_offset("diagonal", t, offset, t.stride(d2)) : view_offset("diagonal", t, -offset, t.stride(d1));
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != d1 && d != d2) sizes.push_back(t.size(d)), strides.push_back(t.stride(d));
  sizes.push_back(length), strides.push_back(t.stride(d1) + t.stride(d2));
  return recorded_view<ViewScatterBackward>(t, std::move(sizes), std::move(strides), start, "DiagonalBackward0", t,
                                            [=](const Tensor& x) { return diagonal(x, offset, d1, d2); });
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  TP_CHECK_INDEX(t.dim() > 0, "[select] cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim("select", dim, t.dim());
  const int64_t size = t.size(d);
  TP_CHECK_INDEX(index >= -size && index < size, "[select] index ", index, " is out of bounds for dimension ", d,
                 " with size ", size);
  if (index < 0) index += size;
  Shape sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  int64_t offset = view_offset("select", t, index, t.stride(d));
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return recorded_view<ViewScatterBackward>(t, std::move(sizes), std::move(strides), offset, "SelectBackward0", t,
                                            [d, index](const Tensor& x) { return select(x, d, index); });
}

TensorList split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim) {
  TP_CHECK(t.dim() > 0, "[split_with_sizes] expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim("split_with_sizes", dim, t.dim());
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    TP_CHECK(s >= 0, "[split_with_sizes] split sizes must be non-negative, got ", to_string(split_sizes));
    total += s;
  }
  TP_CHECK(total == t.size(d), "[split_with_sizes] expects split_sizes to sum exactly to ", t.size(d),
           " (input tensor's size at dimension ", d, "), but got split_sizes=", to_string(split_sizes));
  autograd::Record<SplitBackward> record({&t}, "SplitBackward0", t, d, false);
  TensorList out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(t, d, start, s));
    start += s;
  }
  return record.finish_all(out);
}

TensorList split(const Tensor& t, int64_t split_size, int64_t dim) {
  TP_CHECK(t.dim() > 0, "[split] expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim("split", dim, t.dim());
  const int64_t size = t.size(d);
  TP_CHECK(split_size > 0 || (split_size == 0 && size == 0),
           "[split] split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  Shape sizes;
  if (size == 0) sizes.push_back(0);  // one empty piece, as in PyTorch
  for (int64_t start = 0; start < size; start += sizes.back()) sizes.push_back(std::min(split_size, size - start));
  return split_with_sizes(t, sizes, d);
}

TensorList chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  TP_CHECK(t.dim() > 0, "[chunk] expects at least a 1-dimensional tensor");
  TP_CHECK(chunks > 0, "[chunk] expects `chunks` to be greater than 0, got: ", chunks);
  int64_t size = t.size(wrap_dim("chunk", dim, t.dim()));
  int64_t split_size = size == 0 ? 0 : (size - 1) / chunks + 1;
  if (size == 0) {
    TP_CHECK(chunks <= static_cast<int64_t>(Shape().max_size()), "[chunk] cannot split into ", chunks, " pieces");
    return split_with_sizes(t, Shape(chunks, 0), dim);
  }
  return split(t, split_size, dim);
}

TensorList unbind(const Tensor& t, int64_t dim) {
  TP_CHECK_INDEX(t.dim() > 0, "[unbind] dimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim("unbind", dim, t.dim());
  autograd::Record<SplitBackward> record({&t}, "UnbindBackward0", t, d, true);
  TensorList out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(select(t, d, i));
  return record.finish_all(out);
}

namespace {

class CatBackward final : public autograd::Node {
 public:
  CatBackward(int64_t dim, Shape sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  std::string name() const override { return "CatBackward0"; }
  TensorList apply(TensorList&& grads) override {
    TensorList out;
    int64_t offset = 0;
    for (int64_t size : sizes_) {
      // A skipped 1-D empty input gets an empty gradient.
      out.push_back(size < 0 ? zeros({0}, grads[0].dtype(), grads[0].device()) : narrow(grads[0], dim_, offset, size));
      offset += std::max<int64_t>(size, 0);
    }
    return out;
  }

 private:
  int64_t dim_;
  Shape sizes_;  // each input's size along dim; -1 for a skipped empty input
};

}  // namespace

Tensor cat(const TensorList& tensors, int64_t dim) {
  TP_OP_ENTRY(cat, tensors, dim);
  TP_CHECK_VALUE(!tensors.empty(), "[cat] expected a non-empty list of Tensors");
  // 1-D empty tensors are skipped, as PyTorch has always allowed.
  auto skipped = [](const Tensor& x) { return x.dim() == 1 && x.numel() == 0; };
  const Tensor* ref = &tensors[0];
  for (const Tensor& x : tensors)
    if (!skipped(x)) {
      ref = &x;
      break;
    }
  for (size_t i = 0; i < tensors.size(); ++i)  // any 0-dim tensor, before the dim is checked, as in PyTorch
    TP_CHECK(tensors[i].dim() > 0, "[cat] zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  int64_t d = wrap_dim("cat", dim, ref->dim());
  ResultType promoted;
  Shape shape(ref->sizes().begin(), ref->sizes().end());
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    promoted.add(x);
    TP_CHECK(x.device() == ref->device(), "[cat] expected all tensors to be on the same device, but found ",
             x.device().str(), " and ", ref->device().str());
    if (skipped(x)) continue;
    TP_CHECK(x.dim() == ref->dim(), "[cat] Tensors must have same number of dimensions: got ", ref->dim(), " and ",
             x.dim());
    for (int64_t k = 0; k < x.dim(); ++k)
      TP_CHECK(k == d || x.size(k) == ref->size(k), "[cat] Sizes of tensors must match except in dimension ", d,
               ". Expected size ", ref->size(k), " but got size ", x.size(k), " for tensor number ", i,
               " in the list.");
    shape[d] += x.size(d);
  }
  Shape sizes;
  std::vector<const Tensor*> inputs;
  for (const Tensor& x : tensors) {
    sizes.push_back(skipped(x) ? -1 : x.size(d));
    inputs.push_back(&x);
  }
  autograd::Record<CatBackward> record(inputs, d, sizes);
  Tensor out = empty(shape, promoted.get(), ref->device());
  int64_t offset = 0;
  for (const Tensor& x : tensors) {
    if (skipped(x)) continue;
    copy_(narrow(out, d, offset, x.size(d)), x);
    offset += x.size(d);
  }
  return record.finish(out);
}

namespace {

class StackBackward final : public autograd::Node {
 public:
  explicit StackBackward(int64_t dim) : dim_(dim) {}
  std::string name() const override { return "StackBackward0"; }
  TensorList apply(TensorList&& grads) override { return unbind(grads[0], dim_); }

 private:
  int64_t dim_;
};

}  // namespace

Tensor stack(const TensorList& tensors, int64_t dim) {
  TP_OP_ENTRY(stack, tensors, dim);
  TP_CHECK(!tensors.empty(), "[stack] expects a non-empty TensorList");
  int64_t d = wrap_dim("stack", dim, tensors[0].dim() + 1);
  TensorList parts;
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TP_CHECK(std::ranges::equal(tensors[i].sizes(), tensors[0].sizes()),
             "[stack] expects each tensor to be equal size, but got ", to_string(tensors[0].sizes()),
             " at entry 0 and ", to_string(tensors[i].sizes()), " at entry ", i);
    inputs.push_back(&tensors[i]);
  }
  autograd::Record<StackBackward> record(inputs, d);
  for (const Tensor& x : tensors) parts.push_back(unsqueeze(x, d));
  return record.finish(cat(parts, d));
}

namespace {

class RepeatBackward final : public autograd::Node {
 public:
  RepeatBackward(const Tensor& input, Shape repeats)
      : sizes_(input.sizes().begin(), input.sizes().end()), repeats_(std::move(repeats)) {}
  std::string name() const override { return "RepeatBackward0"; }
  TensorList apply(TensorList&& grads) override {
    // The output is [r0 * s0, r1 * s1, ...]: view it as [r0, s0, r1, s1, ...] and sum the r dims.
    const size_t n = repeats_.size();
    Shape padded(n - sizes_.size(), 1);
    padded.insert(padded.end(), sizes_.begin(), sizes_.end());
    Shape interleaved, repeat_dims;
    for (size_t i = 0; i < n; ++i) {
      interleaved.insert(interleaved.end(), {repeats_[i], padded[i]});
      repeat_dims.push_back(static_cast<int64_t>(2 * i));
    }
    return {reshape(sum(reshape(grads[0], interleaved), repeat_dims), sizes_)};
  }

 private:
  Shape sizes_, repeats_;
};

}  // namespace

Tensor repeat(const Tensor& t, IntArrayRef repeats) {
  const int64_t n = static_cast<int64_t>(repeats.size());
  TP_CHECK(n >= t.dim(),
           "[repeat] Number of dimensions of repeat dims can not be smaller than number of "
           "dimensions of tensor");
  for (int64_t r : repeats) TP_CHECK(r >= 0, "[repeat] Trying to create tensor with negative dimension ", r);
  // View t as [1, s0, 1, s1, ...], expand to [r0, s0, r1, s1, ...] and copy out.
  Shape padded(n - t.dim(), 1);
  padded.insert(padded.end(), t.sizes().begin(), t.sizes().end());
  Shape interleaved, expanded, result;
  for (int64_t i = 0; i < n; ++i) {
    interleaved.insert(interleaved.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    result.push_back(repeats[i] * padded[i]);
  }
  autograd::Record<RepeatBackward> record({&t}, t, Shape(repeats.begin(), repeats.end()));
  Tensor source = expand(reshape(t, interleaved), expanded);
  Tensor out = empty(expanded, t.dtype(), t.device());
  copy_(out, source);
  return record.finish(view(out, result));
}

namespace {

class FlipBackward final : public autograd::Node {
 public:
  explicit FlipBackward(Shape dims) : dims_(std::move(dims)) {}
  std::string name() const override { return "FlipBackward0"; }
  TensorList apply(TensorList&& grads) override { return {flip(grads[0], dims_)}; }

 private:
  Shape dims_;
};

}  // namespace

Tensor flip(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> mask = dims.empty() ? std::vector<bool>(t.dim(), false) : dim_mask("flip", dims, t.dim());
  autograd::Record<FlipBackward> record({&t}, Shape(dims.begin(), dims.end()));
  Shape strides(t.strides().begin(), t.strides().end());
  int64_t offset = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!mask[d] || t.size(d) == 0) continue;
    offset += (t.size(d) - 1) * strides[d];
    strides[d] = -strides[d];
  }
  // A view with negative strides never leaves this function: it only feeds the copy.
  Tensor reversed = make_view(t, Shape(t.sizes().begin(), t.sizes().end()), std::move(strides), offset);
  Tensor out = empty_like(t);  // in t's layout where it is dense, as PyTorch's flip
  copy_(out, reversed);
  return record.finish(out);
}

}  // namespace tp

// Gather, scatter and advanced indexing. Indices are checked by the ops before they get here.

#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/loop.h"
#include "tensorplay/dispatch/kernel_toolbox.h"

namespace tp::cpu {

namespace {

// A view of t that walks `sizes` with t's strides, except along `dim`, where it does not move:
// the index supplies the position along dim instead.
Tensor restride_along(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  Shape strides(t.strides().begin(), t.strides().end());
  if (t.dim()) strides[dim] = 0;
  return make_view(t, Shape(sizes.begin(), sizes.end()), std::move(strides), t.storage_offset());
}

template <class T>
T& element(char* base, int64_t offset) {
  return reinterpret_cast<T*>(base)[offset];
}

}  // namespace

void CpuBackend::gather(const Tensor& out, const Tensor& src, int64_t dim, const Tensor& index) {
  visit_dtype<DTypes::AllAndComplex>("gather", src.dtype(), [&](auto t) {
    using T = decltype(t);
    const int64_t step = src.dim() ? src.stride(dim) : 0;
    strided_loop(out, index, restride_along(src, index.sizes(), dim)).run([step](auto p, auto s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t idx = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = element<T>(p[2] + i * s[2], idx * step);
      }
    });
  });
}

void CpuBackend::nll_targets(const Tensor& index, const Tensor& wts, const Tensor& target, const Tensor& weight,
                             int64_t classes, int64_t ignore_index) {
  visit_dtype("nll_loss", wts.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto* y = static_cast<const int64_t*>(target.data_ptr());
    const T* w = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    auto* out_index = static_cast<int64_t*>(index.data_ptr());
    auto* out_weight = static_cast<T*>(wts.data_ptr());
    for (int64_t i = 0; i < target.numel(); ++i) {
      const int64_t c = y[i];
      const bool ignored = c == ignore_index;
      TP_CHECK_INDEX(ignored || (c >= 0 && c < classes), "[nll_loss] Target ", c, " is out of bounds.");
      out_index[i] = ignored ? 0 : c;
      out_weight[i] = ignored ? T(0) : w ? w[c] : T(1);
    }
  });
}

void CpuBackend::scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                         ScatterReduce reduce) {
  visit_dtype<DTypes::AllAndComplex>("scatter", self.dtype(), [&](auto t) {
    using T = decltype(t);
    const int64_t step = self.dim() ? self.stride(dim) : 0;
    const bool add = reduce == ScatterReduce::Add;
    // Serial: several indices may name the same element.
    strided_loop(restride_along(self, index.sizes(), dim), index, src).run_range(
        0, index.numel(), [step, add](auto p, auto s, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t idx = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
            T& dst = element<T>(p[0] + i * s[0], idx * step);
            const T value = *reinterpret_cast<const T*>(p[2] + i * s[2]);
            if constexpr (std::is_same_v<T, bool>) dst = add ? (dst || value) : value;
            else dst = add ? static_cast<T>(static_cast<opmath_t<T>>(dst) + static_cast<opmath_t<T>>(value)) : value;
          }
        });
  });
}

void CpuBackend::index_gather(const Tensor& out, const Tensor& rows, const Tensor& offsets) {
  const int64_t count = offsets.numel();
  if (count == 0 || out.numel() == 0) return;
  Tensor off_c = kernel::contiguous(offsets);
  const int64_t* off = static_cast<const int64_t*>(off_c.data_ptr());
  Tensor first_out = kernel::select(out, 0, 0);
  StridedLoop<2> row_loop = strided_loop(first_out, rows);
  const int64_t out_step = out.stride(0) * out.itemsize(), size = rows.itemsize();
  visit_dtype<DTypes::AllAndComplex>("index", rows.dtype(), [&](auto t) {
    using T = decltype(t);
    parallel_for(0, count, std::max<int64_t>(1, kGrain / std::max<int64_t>(rows.numel(), 1)), [&](int64_t b, int64_t e) {
      StridedLoop<2> loop = row_loop;
      for (int64_t i = b; i < e; ++i) {
        loop.base = {row_loop.base[0] + i * out_step, row_loop.base[1] + off[i] * size};
        loop.run_range(0, loop.numel(), [](auto p, auto s, int64_t n) {
          for (int64_t j = 0; j < n; ++j)
            *reinterpret_cast<T*>(p[0] + j * s[0]) = *reinterpret_cast<const T*>(p[1] + j * s[1]);
        });
      }
    });
  });
}

void CpuBackend::index_put(const Tensor& rows, const Tensor& offsets, const Tensor& values, bool accumulate) {
  const int64_t count = offsets.numel();
  if (count == 0 || rows.numel() == 0) return;
  Tensor off_c = kernel::contiguous(offsets);
  const int64_t* off = static_cast<const int64_t*>(off_c.data_ptr());
  StridedLoop<2> row_loop = strided_loop(rows, kernel::select(values, 0, 0));
  const int64_t value_step = values.stride(0) * values.itemsize(), size = rows.itemsize();
  visit_dtype<DTypes::AllAndComplex>("index_put_", rows.dtype(), [&](auto t) {
    using T = decltype(t);
    StridedLoop<2> loop = row_loop;
    for (int64_t i = 0; i < count; ++i) {  // in order, so repeated indices accumulate (or the last wins)
      loop.base = {row_loop.base[0] + off[i] * size, row_loop.base[1] + i * value_step};
      loop.run_range(0, loop.numel(), [accumulate](auto p, auto s, int64_t n) {
        for (int64_t j = 0; j < n; ++j) {
          T& dst = *reinterpret_cast<T*>(p[0] + j * s[0]);
          const T value = *reinterpret_cast<const T*>(p[1] + j * s[1]);
          if constexpr (std::is_same_v<T, bool>) dst = accumulate ? (dst || value) : value;
          else dst = accumulate ? static_cast<T>(static_cast<opmath_t<T>>(dst) + static_cast<opmath_t<T>>(value)) : value;
        }
      });
    }
  });
}

Tensor CpuBackend::nonzero(const Tensor& in) {
  Tensor x = kernel::contiguous(in);
  const int64_t ndim = x.dim(), n = x.numel();
  std::vector<bool> flags(n);
  int64_t count = 0;
  visit_dtype<DTypes::AllAndComplex>("nonzero", x.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* data = static_cast<const T*>(x.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      flags[i] = static_cast<opmath_t<T>>(data[i]) != opmath_t<T>(0);
      count += flags[i];
    }
  });
  Tensor out = kernel::empty({count, ndim}, ScalarType::Int64, in.device());
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  Shape index(ndim, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (flags[i]) o = std::copy(index.begin(), index.end(), o);
    for (int64_t d = ndim - 1; d >= 0 && ++index[d] == x.size(d); --d) index[d] = 0;
  }
  return out;
}

}  // namespace tp::cpu

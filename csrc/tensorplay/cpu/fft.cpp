// Discrete Fourier transforms through pocketfft (cmake/pocketfft.cmake), which reads and writes
// any strides, so the ops' tensors go to it as they are. Its own threads are compiled out: a batch
// of transforms is split across our OpenMP pool along the dim that is not transformed and has the
// most entries, and each thread's share is one pocketfft call (which vectorises across the
// transforms it is given).

#include <algorithm>
#include <complex>
#include <cstddef>
#include <type_traits>

#include "pocketfft_hdronly.h"
#include "tensorplay/core/parallel.h"
#include "tensorplay/cpu/backend.h"

namespace tp::cpu {

namespace {

// A tensor as pocketfft sees it: its sizes, and its strides in bytes.
pocketfft::shape_t shape_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

pocketfft::stride_t byte_strides(const Tensor& t) {
  pocketfft::stride_t strides(t.strides().begin(), t.strides().end());
  for (auto& s : strides) s *= static_cast<ptrdiff_t>(itemsize(t.dtype()));
  return strides;
}

// Work below this many elements per thread is not worth a thread.
constexpr int64_t kGrainElements = 1 << 15;

// Runs transform(shape, in, out) on the whole of `shape` (the transform's logical sizes), or on
// slices of it along its largest dim outside `dims`, one per thread. `in` and `out` are byte
// pointers with byte strides in_strides and out_strides.
template <class Transform>
void over_batch(pocketfft::shape_t shape, IntArrayRef dims, const char* in, const pocketfft::stride_t& in_strides,
                char* out, const pocketfft::stride_t& out_strides, const Transform& transform) {
  int64_t batch_dim = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::ranges::find(dims, static_cast<int64_t>(d)) == dims.end() &&
        (batch_dim < 0 || shape[d] > shape[static_cast<size_t>(batch_dim)]))
      batch_dim = static_cast<int64_t>(d);
  if (batch_dim < 0) {
    transform(shape, in, out);
    return;
  }
  const auto b = static_cast<size_t>(batch_dim);
  int64_t per_entry = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != b) per_entry *= static_cast<int64_t>(shape[d]);
  const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(per_entry, 1));
  parallel_for(0, static_cast<int64_t>(shape[b]), grain, [&](int64_t begin, int64_t end) {
    pocketfft::shape_t part = shape;
    part[b] = static_cast<size_t>(end - begin);
    transform(part, in + begin * in_strides[b], out + begin * out_strides[b]);
  });
}

pocketfft::shape_t axes_of(IntArrayRef dims) { return {dims.begin(), dims.end()}; }

// Runs f(T{}) for T float or double, the transforms' precisions (complex dtypes by their parts).
template <class F>
void with_fft_precision(const char* op, ScalarType dtype, const F& f) {
  switch (dtype) {
    case ScalarType::Float32:
    case ScalarType::ComplexFloat: return f(float{});
    case ScalarType::Float64:
    case ScalarType::ComplexDouble: return f(double{});
    default: fail_unsupported_dtype(op, dtype);
  }
}

}  // namespace

void CpuBackend::fft_c2c(const Tensor& in, const Tensor& out, IntArrayRef dims, bool forward, double scale) {
  with_fft_precision("fft_c2c", in.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto in_strides = byte_strides(in), out_strides = byte_strides(out);
    const auto axes = axes_of(dims);
    over_batch(shape_of(in), dims, static_cast<const char*>(in.data_ptr()), in_strides,
               static_cast<char*>(out.data_ptr()), out_strides,
               [&](const pocketfft::shape_t& shape, const char* src, char* dst) {
                 pocketfft::c2c(shape, in_strides, out_strides, axes, forward,
                                reinterpret_cast<const std::complex<T>*>(src), reinterpret_cast<std::complex<T>*>(dst),
                                static_cast<T>(scale));
               });
  });
}

void CpuBackend::fft_r2c(const Tensor& in, const Tensor& out, IntArrayRef dims, double scale) {
  with_fft_precision("fft_r2c", in.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto in_strides = byte_strides(in), out_strides = byte_strides(out);
    const auto axes = axes_of(dims);
    over_batch(shape_of(in), dims, static_cast<const char*>(in.data_ptr()), in_strides,
               static_cast<char*>(out.data_ptr()), out_strides,
               [&](const pocketfft::shape_t& shape, const char* src, char* dst) {
                 pocketfft::r2c(shape, in_strides, out_strides, axes, true, reinterpret_cast<const T*>(src),
                                reinterpret_cast<std::complex<T>*>(dst), static_cast<T>(scale));
               });
  });
}

void CpuBackend::fft_c2r(const Tensor& in, const Tensor& out, IntArrayRef dims, double scale) {
  with_fft_precision("fft_c2r", in.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto in_strides = byte_strides(in), out_strides = byte_strides(out);
    const auto axes = axes_of(dims);
    // The logical shape is the output's: pocketfft derives the input's last transformed size.
    over_batch(shape_of(out), dims, static_cast<const char*>(in.data_ptr()), in_strides,
               static_cast<char*>(out.data_ptr()), out_strides,
               [&](const pocketfft::shape_t& shape, const char* src, char* dst) {
                 pocketfft::c2r(shape, in_strides, out_strides, axes, false,
                                reinterpret_cast<const std::complex<T>*>(src), reinterpret_cast<T*>(dst),
                                static_cast<T>(scale));
               });
  });
}

}  // namespace tp::cpu

// Tensor factories and random fills.

#include <cmath>
#include <limits>
#include <numbers>

#include "tensorplay/dispatch/backend.h"
#include "tensorplay/dispatch/kernel_toolbox.h"
#include "tensorplay/ops/elementwise.h"
#include "tensorplay/profiler/op_span.h"

namespace tp {

namespace {

void check_sizes(const char* op, IntArrayRef sizes) {
  for (int64_t s : sizes)
    TP_CHECK(s >= 0, "[", op, "] Trying to create tensor with negative dimension ", s, ": ", to_string(sizes));
}

ScalarType float_dtype(const char* op, OptionalDType dtype) {
  ScalarType t = dtype.value_or(get_default_dtype());
  TP_CHECK(is_differentiable(t), "[", op, "] expected a floating point or complex dtype, got ", name(t));
  return t;
}

Generator& generator_or_default(Generator* gen) { return gen ? *gen : default_generator(); }

// The largest finite value of a floating dtype, and its C++ and ATen names, as PyTorch's bounds
// errors name it.
struct FloatRange {
  double largest;
  const char* cpp_name;
  const char* aten_name;
};

FloatRange float_range(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float16: return {65504.0, "c10::Half", "Half"};
    case ScalarType::BFloat16: return {3.3895313892515355e38, "c10::BFloat16", "BFloat16"};
    case ScalarType::Float32: return {std::numeric_limits<float>::max(), "float", "Float"};
    default: return {std::numeric_limits<double>::max(), "double", "Double"};
  }
}

// The values of an integral dtype, and its C++ name, as PyTorch's bounds errors name it.
struct IntegerRange {
  int64_t lowest, highest;
  const char* cpp_name;
};

IntegerRange integer_range(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Bool: return {0, 1, "bool"};
    case ScalarType::UInt8: return {0, 255, "unsigned char"};
    case ScalarType::Int8: return {-128, 127, "signed char"};
    case ScalarType::Int16: return {-32768, 32767, "short"};
    case ScalarType::Int32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int"};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "long"};
  }
}

}  // namespace

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, OptionalDType dtype, Device device) {
  check_sizes("empty_strided", sizes);
  TP_CHECK(sizes.size() == strides.size(), "[empty_strided] sizes ", to_string(sizes), " and strides ",
           to_string(strides), " have different lengths");
  ScalarType t = dtype.value_or(get_default_dtype());
  for (int64_t stride : strides)
    TP_CHECK(stride >= 0, "[empty_strided] negative strides are not supported: ", to_string(strides));
  auto extent = storage_extent(sizes, strides);
  int64_t nbytes = 0;
  TP_CHECK(extent && !__builtin_mul_overflow(*extent, itemsize(t), &nbytes), "[empty] Storage size calculation "
           "overflowed with sizes=", to_string(sizes), " and strides=", to_string(strides));
  return kernel::empty_strided(sizes, strides, t, device);
}

Tensor empty(IntArrayRef sizes, OptionalDType dtype, Device device) {
  TP_OP_SPAN(empty, sizes);
  check_sizes("empty", sizes);
  return empty_strided(sizes, contiguous_strides(sizes), dtype, device);
}

Tensor full(IntArrayRef sizes, const Scalar& value, OptionalDType dtype, Device device) {
  TP_OP_SPAN(full, sizes, value);
  check_sizes("full", sizes);
  ScalarType t = dtype.value_or(ResultType().add(value).get());
  check_fits("full", value, t);
  Tensor out = empty(sizes, t, device);
  backend(out.device()).fill(out, value);
  return out;
}

Tensor zeros(IntArrayRef sizes, OptionalDType dtype, Device device) {
  TP_OP_SPAN(zeros, sizes);
  check_sizes("zeros", sizes);
  return full(sizes, 0, dtype.value_or(get_default_dtype()), device);
}
Tensor ones(IntArrayRef sizes, OptionalDType dtype, Device device) {
  TP_OP_SPAN(ones, sizes);
  check_sizes("ones", sizes);
  return full(sizes, 1, dtype.value_or(get_default_dtype()), device);
}
Tensor zeros_like(const Tensor& t, OptionalDType dtype, std::optional<Device> device) {
  if (t.is_sparse()) [[unlikely]]
    return empty_like(t, dtype, device);  // a sparse tensor without entries
  return full_like(t, 0, dtype, device);
}
Tensor ones_like(const Tensor& t, OptionalDType dtype, std::optional<Device> device) {
  return full_like(t, 1, dtype, device);
}
Tensor full_like(const Tensor& t, const Scalar& value, OptionalDType dtype, std::optional<Device> device) {
  Tensor out = empty_like(t, dtype, device);
  return fill_(out, value);
}

// Converts like a cast, without full's range check: `uint8_tensor[0] = -3` stores 253, as in PyTorch.
Tensor scalar_tensor(const Scalar& value, OptionalDType dtype, Device device) {
  ScalarType t = dtype.value_or(ResultType().add(value).get());
  Tensor out = empty({}, t, device);
  backend(out.device()).fill(out, value);
  return out;
}

Tensor tensor(std::span<const Scalar> values, OptionalDType dtype, Device device) {
  ResultType type;
  for (const Scalar& v : values) type.add(v);
  const ScalarType target = dtype.value_or(values.empty() ? get_default_dtype() : type.get());
  // Integers are written as int64 and floats as float64, each exactly, then converted once.
  const bool floating = is_floating_point(target) || is_complex(target);
  Tensor out = empty({static_cast<int64_t>(values.size())}, floating ? ScalarType::Float64 : ScalarType::Int64);
  for (size_t i = 0; i < values.size(); ++i) {
    if (floating)
      out.data_ptr<double>()[i] = values[i].to_double();
    else
      out.data_ptr<int64_t>()[i] = values[i].to<int64_t>();
  }
  return to(out, device, target);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, OptionalDType dtype, Device device) {
  TP_OP_SPAN(arange, start, end, step);
  bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  ScalarType t = dtype.value_or(floating ? get_default_dtype() : ScalarType::Int64);
  double s = start.to_double(), e = end.to_double(), d = step.to_double();
  TP_CHECK(d != 0, "[arange] step must be nonzero");
  TP_CHECK(std::isfinite(s) && std::isfinite(e), "[arange] unsupported range: ", s, " -> ", e);
  TP_CHECK((d > 0 && e >= s) || (d < 0 && e <= s), "[arange] upper bound and larger bound inconsistent with step sign");
  int64_t n = floating ? static_cast<int64_t>(std::ceil((e - s) / d))
                       : (end.to_int() - start.to_int() + step.to_int() - (d > 0 ? 1 : -1)) / step.to_int();
  Tensor out = empty({n}, t, device);
  backend(out.device()).arange(out, start, step);
  return out;
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, OptionalDType dtype, Device device) {
  TP_CHECK(steps >= 0, "[linspace] number of steps must be non-negative");
  Tensor out = empty({steps}, dtype.value_or(get_default_dtype()), device);
  if (steps == 0) return out;
  if (steps == 1) return fill_(out, start);
  // The first half counts up from start and the second down from end, as PyTorch does, so both
  // ends are exact.
  double s = start.to_double(), e = end.to_double(), step = (e - s) / static_cast<double>(steps - 1);
  int64_t half = steps / 2;
  Backend& kernels = backend(out.device());
  kernels.arange(narrow(out, 0, 0, half), s, step);
  Tensor tail = narrow(out, 0, half, steps - half);
  Tensor reversed = make_view(tail, {tail.numel()}, {-1}, tail.storage_offset() + tail.numel() - 1);
  kernels.arange(reversed, e, -step);
  return out;
}

Tensor eye(int64_t n, std::optional<int64_t> m, OptionalDType dtype, Device device) {
  int64_t cols = m.value_or(n);
  TP_CHECK(n >= 0 && cols >= 0, "[eye] n and m must be non-negative, got ", n, " and ", cols);
  Tensor out = zeros({n, cols}, dtype, device);
  int64_t k = std::min(n, cols);
  if (k) fill_(as_strided(out, IntArrayRef{k}, IntArrayRef{cols + 1}, 0), 1);
  return out;
}

Tensor rand(IntArrayRef sizes, OptionalDType dtype, Device device, Generator* gen) {
  TP_OP_SPAN(rand, sizes);
  check_sizes("rand", sizes);
  Tensor out = empty(sizes, float_dtype("rand", dtype), device);
  return uniform_(out, 0, 1, gen);
}

Tensor randn(IntArrayRef sizes, OptionalDType dtype, Device device, Generator* gen) {
  TP_OP_SPAN(randn, sizes);
  check_sizes("randn", sizes);
  Tensor out = empty(sizes, float_dtype("randn", dtype), device);
  return normal_(out, 0, 1, gen);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, OptionalDType dtype, Device device, Generator* gen) {
  TP_OP_SPAN(randint, low, high, sizes);
  check_sizes("randint", sizes);
  TP_CHECK(low < high, "[randint] random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  const ScalarType type = dtype.value_or(ScalarType::Int64);
  if (!is_floating_point(type)) {  // PyTorch's bounds: from and to - 1 are values of the dtype
    const IntegerRange range = integer_range(type);
    TP_CHECK(low >= range.lowest && low <= range.highest, "[randint] from is out of bounds for ", range.cpp_name);
    TP_CHECK(high - 1 >= range.lowest && high - 1 <= range.highest, "[randint] to - 1 is out of bounds for ",
             range.cpp_name);
  }
  Tensor out = empty(sizes, type, device);
  backend(out.device()).random_int(out, low, high, generator_or_default(gen));
  return out;
}

Tensor randperm(int64_t n, OptionalDType dtype, Device device, Generator* gen) {
  TP_CHECK(n >= 0, "[randperm] n must be non-negative, got ", n);
  if (device.is_meta()) return empty({n}, dtype.value_or(ScalarType::Int64), device);
  // Sorting random keys would need a sort op; a Fisher-Yates shuffle driven by randint is exact.
  Tensor keys = randint(0, std::numeric_limits<int64_t>::max(), {n}, ScalarType::Int64, Device(), gen);
  const int64_t* k = static_cast<const int64_t*>(keys.data_ptr());
  Tensor perm = arange(0, n, 1, ScalarType::Int64);
  int64_t* p = static_cast<int64_t*>(perm.data_ptr());
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[k[i] % (i + 1)]);
  return to(perm, device, dtype.value_or(ScalarType::Int64));
}

Tensor uniform_(const Tensor& t, double from, double to, Generator* gen) {
  TP_OP_SPAN(uniform_, t, from, to);
  TP_CHECK(from <= to, "[uniform_] expects to return a [from, to) range, but found from=", from, " > to=", to);
  if (is_complex(t.dtype())) {  // each part uniform on [from, to)
    uniform_(view_as_real(t), from, to, gen);
    t.bump_version();
    return t;
  }
  if (is_floating_point(t.dtype())) {
    const FloatRange range = float_range(t.dtype());
    TP_CHECK(from >= -range.largest && from <= range.largest, "[uniform_] from is out of bounds for ", range.cpp_name);
    TP_CHECK(to >= -range.largest && to <= range.largest, "[uniform_] to is out of bounds for ", range.cpp_name);
    TP_CHECK(to - from <= range.largest, "[uniform_] uniform_ expects to-from <= std::numeric_limits<",
             range.aten_name, ">::max(), but found to=", to, " and from=", from,
             " which result in to-from to exceed the limit");
  }
  Tensor dense = t.is_contiguous() ? t : empty_like(t);
  backend(t.device()).uniform(dense, from, to, generator_or_default(gen));
  if (!dense.is_same(t)) copy_(t, dense);
  t.bump_version();
  return t;
}

Tensor normal_(const Tensor& t, double mean, double std, Generator* gen) {
  TP_OP_SPAN(normal_, t, mean, std);
  TP_CHECK(std >= 0, "[normal_] expects std >= 0.0, but found std ", std);
  if (is_complex(t.dtype())) {  // each part normal with half the variance, so |z - mean|^2 averages std^2
    normal_(view_as_real(t), mean, std / std::numbers::sqrt2, gen);
    t.bump_version();
    return t;
  }
  Tensor dense = t.is_contiguous() ? t : empty_like(t);
  backend(t.device()).normal(dense, mean, std, generator_or_default(gen));
  if (!dense.is_same(t)) copy_(t, dense);
  t.bump_version();
  return t;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace tp

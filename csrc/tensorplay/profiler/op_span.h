#pragma once
// TP_OP_ENTRY(op, args...): the first line of every op in the policy table, the op's entry into
// the dispatcher (Note [Dispatcher layers]); TP_OP_SPAN(op, args...), the profiler's part of it
// alone, for the views, factories, copies and indexing ops outside the table. Autocast first: when
// it is on, the op is called again through amp::run with its inputs cast, and that call is the one
// recorded. Then the profiler's span for the op's body, named as PyTorch's profiler names ops
// ("aten::mm"), with its inputs' shapes, dtypes and concrete values when the profile records them.

#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/core/tensor.h"
#include "tensorplay/profiler/profiler.h"

namespace tp::profiler {

namespace detail {

// Each input adds its shape (a tensor's sizes, else []), its dtype, and its concrete value: an
// int, a float, a bool or a list of ints as JSON, null for tensors and anything else, as PyTorch's
// FunctionEvent.concrete_inputs (with_flops reads a convolution's strides and padding there).
struct Inputs {
  std::ostringstream shapes, dtypes, concrete;
};

inline void describe(Inputs& in, const Tensor& t) {
  in.shapes << '[';
  for (int64_t d = 0; d < t.dim(); ++d) in.shapes << (d ? ", " : "") << t.size(d);
  in.shapes << ']';
  in.dtypes << name(t.dtype());
  in.concrete << "null";
}
inline void describe(Inputs& in, const std::optional<Tensor>& t) {
  if (t) return describe(in, *t);
  in.shapes << "[]";
  in.concrete << "null";
}
inline void describe(Inputs& in, const TensorList& ts) {
  in.shapes << '[';
  in.dtypes << "TensorList";
  for (size_t i = 0; i < ts.size(); ++i) {
    in.shapes << (i ? ", " : "") << '[';
    for (int64_t d = 0; d < ts[i].dim(); ++d) in.shapes << (d ? ", " : "") << ts[i].size(d);
    in.shapes << ']';
  }
  in.shapes << ']';
  in.concrete << "null";
}
inline void describe(Inputs& in, const Scalar&) {
  in.shapes << "[]";
  in.dtypes << "Scalar";
  in.concrete << "null";
}
// Any other argument (an int, a dim list, a mode): PyTorch's profiler shows its shape as [] too.
template <class T>
void describe(Inputs& in, const T& value) {
  in.shapes << "[]";
  if constexpr (std::is_same_v<T, bool>) {
    in.concrete << (value ? "true" : "false");
  } else if constexpr (std::is_integral_v<T>) {
    in.concrete << static_cast<int64_t>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isfinite(value))
      in.concrete << std::setprecision(17) << static_cast<double>(value);
    else
      in.concrete << "null";  // JSON has no inf or nan
  } else if constexpr (std::is_convertible_v<const T&, IntArrayRef>) {
    const IntArrayRef values = value;
    in.concrete << '[';
    for (size_t i = 0; i < values.size(); ++i) in.concrete << (i ? ", " : "") << values[i];
    in.concrete << ']';
  } else {
    in.concrete << "null";
  }
}

}  // namespace detail

template <class... Args>
void describe_inputs(Span& span, const Args&... args) {
  detail::Inputs in;
  in.shapes << '[';
  in.dtypes << '[';
  in.concrete << '[';
  int i = 0;
  ((in.shapes << (i ? ", " : ""), in.concrete << (i ? ", " : ""), in.dtypes << (i++ ? ", " : ""),
    detail::describe(in, args)),
   ...);
  in.shapes << ']';
  in.dtypes << ']';
  in.concrete << ']';
  span.set_inputs(in.shapes.str(), in.dtypes.str(), in.concrete.str());
}

}  // namespace tp::profiler

// clang-format off
// An op outside the policy table (a view, a factory, a copy, an index) records its span alone.
#define TP_OP_SPAN(op, ...)                                                       \
  ::tp::profiler::Span tp_op_span_("aten::" #op);                                 \
  if (tp_op_span_.wants_inputs()) [[unlikely]]                                    \
    ::tp::profiler::describe_inputs(tp_op_span_, __VA_ARGS__)

#define TP_OP_ENTRY(op, ...)                                                      \
  TP_AUTOCAST(op, __VA_ARGS__);                                                   \
  ::tp::profiler::Span tp_op_span_("aten::" #op);                                 \
  if (tp_op_span_.wants_inputs()) [[unlikely]]                                    \
    ::tp::profiler::describe_inputs(tp_op_span_, __VA_ARGS__)
// clang-format on

#pragma once
// TP_OP_ENTRY(op, args...): the first line of every op in the policy table, the op's entry into
// the dispatcher (Note [Dispatcher layers]); TP_OP_SPAN(op, args...), the profiler's part of it alone,
// for the views, factories, copies and indexing ops outside the table. Autocast first: when it is on, the op is called again
// through amp::run with its inputs cast, and that call is the one recorded. Then the profiler's span
// for the op's body, named as PyTorch's profiler names ops ("aten::mm"), with its inputs' shapes and
// dtypes when the profile records shapes.

#include <optional>
#include <sstream>
#include <string>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/core/tensor.h"
#include "tensorplay/profiler/profiler.h"

namespace tp::profiler {

namespace detail {

inline void describe(std::ostringstream& shapes, std::ostringstream& dtypes, const Tensor& t) {
  shapes << '[';
  for (int64_t d = 0; d < t.dim(); ++d) shapes << (d ? ", " : "") << t.size(d);
  shapes << ']';
  dtypes << name(t.dtype());
}
inline void describe(std::ostringstream& shapes, std::ostringstream& dtypes, const std::optional<Tensor>& t) {
  if (t) return describe(shapes, dtypes, *t);
  shapes << "[]";
}
inline void describe(std::ostringstream& shapes, std::ostringstream& dtypes, const TensorList& ts) {
  shapes << '[';
  dtypes << "TensorList";
  for (size_t i = 0; i < ts.size(); ++i) {
    if (i) shapes << ", ";
    std::ostringstream ignored;
    describe(shapes, ignored, ts[i]);
  }
  shapes << ']';
}
inline void describe(std::ostringstream& shapes, std::ostringstream& dtypes, const Scalar&) {
  shapes << "[]";
  dtypes << "Scalar";
}
// Any other argument (an int, a dim list, a mode): PyTorch's profiler shows it as [] too.
template <class T>
void describe(std::ostringstream& shapes, std::ostringstream&, const T&) {
  shapes << "[]";
}

}  // namespace detail

template <class... Args>
void describe_inputs(Span& span, const Args&... args) {
  std::ostringstream shapes, dtypes;
  shapes << '[';
  dtypes << '[';
  int i = 0;
  ((shapes << (i ? ", " : ""), dtypes << (i++ ? ", " : ""), detail::describe(shapes, dtypes, args)), ...);
  shapes << ']';
  dtypes << ']';
  span.set_inputs(shapes.str(), dtypes.str());
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

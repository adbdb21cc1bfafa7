// torch.special's functions that have kernels of their own (dispatch/special_functions.h): the
// arguments broadcast and made contiguous in the dtype tensorplay/special.py chose, and the kernel
// run. Derivatives, where PyTorch defines them, are written in tensorplay/special.py with public
// ops; the others, as in PyTorch, have none (their results do not require grad).

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "tensorplay/dispatch/backend.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/profiler/op_span.h"

namespace tp {

namespace {

struct SpecialRow {
  SpecialFunction function;
  std::string_view name;
  bool binary;
};

constexpr std::array kSpecialRows = {
#define TP_SPECIAL_ROW(kernel, name, binary) SpecialRow{SpecialFunction::kernel, name, binary},
    TP_SPECIAL_FUNCTIONS(TP_SPECIAL_ROW)
#undef TP_SPECIAL_ROW
};

}  // namespace

Tensor special_function(std::string_view function, const Tensor& x, const std::optional<Tensor>& n) {
  TP_OP_SPAN(special_function, x);
  const auto row = std::ranges::find(kSpecialRows, function, &SpecialRow::name);
  TP_CHECK(row != kSpecialRows.end(), "[special_function] no special function named '", function, "'");
  const std::string op = "special." + std::string(function);
  TP_CHECK(row->binary == n.has_value(), "[", op, "] takes ", row->binary ? "two operands" : "one operand");
  TP_CHECK(x.dtype() == ScalarType::Float32 || x.dtype() == ScalarType::Float64, "[", op,
           "] computes in float32 or float64, got ", name(x.dtype()));
  Tensor a = x, b;
  if (n) {
    TP_CHECK(n->dtype() == x.dtype(), "[", op, "] expects both operands in ", name(x.dtype()), ", got ",
             name(n->dtype()));
    TP_CHECK(n->device() == x.device(), "[", op, "] expects both operands on one device, got ", x.device().str(),
             " and ", n->device().str());
    const Shape shape = broadcast_shapes(op.c_str(), x.sizes(), n->sizes());
    a = contiguous(expand(x, shape));
    b = contiguous(expand(*n, shape));
  } else {
    a = contiguous(x);
  }
  Tensor out = empty(a.sizes(), a.dtype(), a.device());
  backend(a.device()).special_function(row->function, out, a, b);
  return out;
}

}  // namespace tp

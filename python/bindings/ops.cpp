// The ops: each is bound as a function of the module (tensorplay.add(input, other)) and, where
// PyTorch has one, as a Tensor method (x.add(other)), straight to its tp:: function.

#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>

#include "tensorplay/autograd/grad_mode.h"
#include "bindings.h"

namespace tp::python {

namespace {

// Writes an op's result into the tensor passed as out=, as PyTorch does: out keeps its dtype if the
// result can be cast to it, takes the result's shape (warning when a nonempty out had another), and
// is returned. Holds the GIL (for the warning) except while copying.
Tensor write_out(const char* op, const Tensor& out, const Tensor& result) {
  TP_CHECK(!(result.requires_grad() && is_grad_enabled()), "[", op, "] functions with out=... arguments don't "
           "support automatic differentiation, but one of the arguments requires grad.");
  TP_CHECK(can_cast(result.dtype(), out.dtype()), "[", op, "] result type ", name(result.dtype()),
           " can't be cast to the desired output type ", name(out.dtype()));
  if (!std::ranges::equal(out.sizes(), result.sizes())) {
    if (out.numel() != 0) {
      std::string message = "An output with one or more elements was resized since it had shape " +
                            to_string(out.sizes()) + ", which does not match the required output shape " +
                            to_string(result.sizes()) + ". This behavior is deprecated, and in a future PyTorch "
                            "release outputs will not be resized unless they have zero elements. You can explicitly "
                            "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).";
      if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw nb::python_error();
    }
    resize_(out, result.sizes());
  }
  nb::gil_scoped_release released;
  return copy_(out, result);
}

// The parameter types of a lambda, for the out= form of the op it binds.
template <class F>
struct Signature : Signature<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class C, class R, class... Args>
struct Signature<R (C::*)(Args...) const> {
  using Result = R;
  template <class G>
  static auto with_out(const char* name, G f) {
    return [name, f](Args... args, std::optional<Tensor> out) -> Tensor {
      Tensor result;
      {
        nb::gil_scoped_release released;
        result = f(args...);
      }
      return out ? write_out(name, *out, result) : result;
    };
  }
};

// The functions of torch's namespace that take no out=: the views, and a few others.
constexpr std::string_view kWithoutOut[] = {
    "transpose", "swapaxes", "swapdims", "t", "movedim", "broadcast_to", "squeeze", "unsqueeze", "flatten",
    "unflatten", "narrow", "select", "as_strided", "diagonal", "relu", "isnan", "isinf", "isfinite", "rsub",
    "masked_fill", "trace", "dist", "argsort"};

// Binds f as tensorplay.<name>(input, ...) and Tensor.<name>(...), with PyTorch's out= where it has
// one. The out= form is an overload of its own, tried only when the plain one does not match, so
// calls without out= pay nothing for it.
template <class F, class... Extra>
void def_op(nb::module_& m, const char* name, F&& f, const Extra&... extra) {
  m.def(name, f, "input"_a, extra..., release_gil());
  tensor_class().def(name, f, extra..., release_gil());
  if constexpr (std::is_same_v<typename Signature<F>::Result, Tensor>) {
    if (std::ranges::find(kWithoutOut, std::string_view(name)) != std::end(kWithoutOut)) return;
    auto with_out = Signature<F>::with_out(name, f);
    if constexpr ((std::is_same_v<Extra, nb::kw_only> || ...))
      m.def(name, with_out, "input"_a, extra..., "out"_a.none());
    else
      m.def(name, with_out, "input"_a, extra..., nb::kw_only(), "out"_a.none());
  }
}

// The out= form of a function that is not a Tensor method (cat, stack, where, ...).
template <class F, class... Extra>
void def_out_form(nb::module_& m, const char* name, F&& f, const Extra&... extra) {
  m.def(name, Signature<F>::with_out(name, f), extra..., nb::kw_only(), "out"_a.none());
}

// Binds an in-place method.
template <class F, class... Extra>
void def_method(const char* name, F&& f, const Extra&... extra) {
  tensor_class().def(name, f, extra..., release_gil());
}

nb::object& g_return_type_max = persistent();  // torch.return_types.max's stand-in
nb::object& g_return_type_min = persistent();
nb::object& g_return_type_sort = persistent();
nb::object& g_return_type_topk = persistent();
nb::object& g_return_type_kthvalue = persistent();

TensorTuple as_tuple(TensorList list) { return {std::move(list)}; }

nb::object values_indices(const nb::object& type, std::pair<Tensor, Tensor> r) {
  return type(wrap(r.first), wrap(r.second));
}

// The (values, indices) of op(), run without the GIL, as a namedtuple of `type` (built with it).
template <class Op>
nb::object values_indices_of(const nb::object& type, Op&& op) {
  std::pair<Tensor, Tensor> r;
  {
    nb::gil_scoped_release released;
    r = op();
  }
  return values_indices(type, std::move(r));
}

// nonzero(t, as_tuple=True) and where(t): one index tensor per dim (a 0-dim t counts as 1-D).
nb::object nonzero_tuple(const Tensor& t) {
  Tensor coords = nonzero(t);
  if (t.dim() == 0) return nb::make_tuple(wrap(zeros({coords.size(0)}, ScalarType::Int64)));
  return nb::tuple(nb::cast(unbind(transpose(coords, 0, 1), 0)));
}

// PyTorch takes a number for the input of the arithmetic ops too (torch.add(2, x), torch.mul(2, 3),
// torch.remainder(2, x)): it becomes a 0-dim tensor in the dtype the pair promotes to, which is
// what PyTorch's wrapped numbers promote to.
Tensor number_tensor(const Scalar& s, const Tensor& other) { return scalar_tensor(s, result_type(other, s), other.device()); }
Tensor number_tensor(const Scalar& s) {
  return scalar_tensor(s, ResultType().add(s).get());
}

// Binds tensorplay.<name>(number, tensor) and, where `both`, tensorplay.<name>(number, number).
template <class F>
void def_number_input(nb::module_& m, const char* name, F f, bool both) {
  m.def(name, [f](const Scalar& a, const Tensor& b) { return f(number_tensor(a, b), b); }, "input"_a, "other"_a,
        release_gil());
  if (!both) return;
  m.def(name, [f](const Scalar& a, const Scalar& b) {
    Tensor x = number_tensor(a);
    return f(x, number_tensor(b, x));
  }, "input"_a, "other"_a, release_gil());
}

void init_elementwise(nb::module_& m) {
#define TP_BIND_UNARY(name, ...)                                              \
  def_op(m, #name, [](const Tensor& t) { return tp::name(t); });             \
  def_method(#name "_", [](Tensor& t) -> Tensor { return tp::name##_(t); });
  TP_UNARY_OPS(TP_BIND_UNARY)
#undef TP_BIND_UNARY
  def_op(m, "negative", [](const Tensor& t) { return neg(t); });
  def_op(m, "absolute", [](const Tensor& t) { return abs(t); });
  def_op(m, "arctan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); }, "other"_a);
  def_op(m, "square", [](const Tensor& t) { return pow(t, 2); });
  // round(x, decimals=...) is PyTorch's other overload, for floating dtypes only, even with decimals=0.
  def_op(m, "round", [](const Tensor& t, std::optional<int64_t> decimals) {
    return decimals ? round_decimals(t, *decimals) : round(t);
  }, nb::kw_only(), "decimals"_a.none() = nb::none());
  def_method("round_", [](Tensor& t, std::optional<int64_t> decimals) -> Tensor {
    return decimals ? round_decimals_(t, *decimals) : round_(t);
  }, nb::kw_only(), "decimals"_a.none() = nb::none());
  def_op(m, "nan_to_num", [](const Tensor& t, std::optional<double> nan, std::optional<double> posinf,
                             std::optional<double> neginf) { return nan_to_num(t, nan, posinf, neginf); },
         "nan"_a = 0.0, "posinf"_a.none() = nb::none(), "neginf"_a.none() = nb::none());
  def_op(m, "clamp", [](const Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) { return clamp(t, lo, hi); },
         "min"_a.none() = nb::none(), "max"_a.none() = nb::none());
  def_op(m, "clamp", [](const Tensor& t, std::optional<Tensor> lo, std::optional<Tensor> hi) { return clamp(t, lo, hi); },
         "min"_a.none() = nb::none(), "max"_a.none() = nb::none());
  def_op(m, "clip", [](const Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) { return clamp(t, lo, hi); },
         "min"_a.none() = nb::none(), "max"_a.none() = nb::none());
  def_op(m, "clip", [](const Tensor& t, std::optional<Tensor> lo, std::optional<Tensor> hi) { return clamp(t, lo, hi); },
         "min"_a.none() = nb::none(), "max"_a.none() = nb::none());
  for (const char* name : {"clamp_", "clip_"})
    def_method(name, [](Tensor& t, std::optional<Tensor> lo, std::optional<Tensor> hi) -> Tensor { return clamp_(t, lo, hi); },
               "min"_a.none() = nb::none(), "max"_a.none() = nb::none());
  def_op(m, "gelu", [](const Tensor& t, std::string_view approximate) { return gelu(t, approximate); }, nb::kw_only(),
         "approximate"_a = "none");
  def_op(m, "softplus", [](const Tensor& t, double beta, double threshold) { return softplus(t, beta, threshold); },
         "beta"_a = 1.0, "threshold"_a = 20.0);
  def_method("square_", [](Tensor& t) -> Tensor { return pow_(t, 2); });
  def_method("nan_to_num_", [](Tensor& t, std::optional<double> nan, std::optional<double> posinf,
                               std::optional<double> neginf) -> Tensor { return nan_to_num_(t, nan, posinf, neginf); },
             "nan"_a = 0.0, "posinf"_a.none() = nb::none(), "neginf"_a.none() = nb::none());
  def_method("clamp_", [](Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) -> Tensor { return clamp_(t, lo, hi); },
             "min"_a.none() = nb::none(), "max"_a.none() = nb::none());
  def_method("clip_", [](Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) -> Tensor { return clamp_(t, lo, hi); },
             "min"_a.none() = nb::none(), "max"_a.none() = nb::none());

  // add and sub take alpha.
  def_op(m, "add", [](const Tensor& a, const Tensor& b, const Scalar& alpha) { return add(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_op(m, "add", [](const Tensor& a, const Scalar& b, const Scalar& alpha) { return add(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_op(m, "sub", [](const Tensor& a, const Tensor& b, const Scalar& alpha) { return sub(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_op(m, "sub", [](const Tensor& a, const Scalar& b, const Scalar& alpha) { return sub(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_op(m, "subtract", [](const Tensor& a, const Tensor& b, const Scalar& alpha) { return sub(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_op(m, "rsub", [](const Tensor& a, const Tensor& b, const Scalar& alpha) { return sub(b, a, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_op(m, "rsub", [](const Tensor& a, const Scalar& b, const Scalar& alpha) { return rsub(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_method("add_", [](Tensor& a, const Tensor& b, const Scalar& alpha) -> Tensor { return add_(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_method("add_", [](Tensor& a, const Scalar& b, const Scalar& alpha) -> Tensor { return add_(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_method("sub_", [](Tensor& a, const Tensor& b, const Scalar& alpha) -> Tensor { return sub_(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  def_method("sub_", [](Tensor& a, const Scalar& b, const Scalar& alpha) -> Tensor { return sub_(a, b, alpha); }, "other"_a, nb::kw_only(), "alpha"_a = 1);
  for (const char* name : {"div", "divide"}) {
    def_op(m, name, [](const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) { return div(a, b, mode); },
           "other"_a, nb::kw_only(), "rounding_mode"_a.none() = nb::none());
    def_op(m, name, [](const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) { return div(a, b, mode); },
           "other"_a, nb::kw_only(), "rounding_mode"_a.none() = nb::none());
  }
  def_op(m, "true_divide", [](const Tensor& a, const Tensor& b) { return div(a, b); }, "other"_a);
  def_op(m, "true_divide", [](const Tensor& a, const Scalar& b) { return div(a, b); }, "other"_a);
  def_method("div_", [](Tensor& a, const Tensor& b, std::optional<std::string_view> mode) -> Tensor { return div_(a, b, mode); },
             "other"_a, nb::kw_only(), "rounding_mode"_a.none() = nb::none());
  def_method("div_", [](Tensor& a, const Scalar& b, std::optional<std::string_view> mode) -> Tensor { return div_(a, b, mode); },
             "other"_a, nb::kw_only(), "rounding_mode"_a.none() = nb::none());

  using WithAlpha = Tensor (*)(const Tensor&, const Tensor&, const Scalar&);
  for (auto [name, f] : {std::pair<const char*, WithAlpha>{"add", &tp::add}, {"sub", &tp::sub}}) {
    m.def(name, [f](const Scalar& a, const Tensor& b, const Scalar& alpha) { return f(number_tensor(a, b), b, alpha); },
          "input"_a, "other"_a, nb::kw_only(), "alpha"_a = 1, release_gil());
    m.def(name, [f](const Scalar& a, const Scalar& b, const Scalar& alpha) {
      Tensor x = number_tensor(a);
      return f(x, number_tensor(b, x), alpha);
    }, "input"_a, "other"_a, nb::kw_only(), "alpha"_a = 1, release_gil());
  }
  for (const char* name : {"div", "divide"}) {
    m.def(name, [](const Scalar& a, const Tensor& b, std::optional<std::string_view> mode) {
      return div(number_tensor(a, b), b, mode);
    }, "input"_a, "other"_a, nb::kw_only(), "rounding_mode"_a.none() = nb::none(), release_gil());
    m.def(name, [](const Scalar& a, const Scalar& b, std::optional<std::string_view> mode) {
      Tensor x = number_tensor(a);
      return div(x, number_tensor(b, x), mode);
    }, "input"_a, "other"_a, nb::kw_only(), "rounding_mode"_a.none() = nb::none(), release_gil());
  }
  def_number_input(m, "true_divide", [](const Tensor& a, const Tensor& b) { return div(a, b); }, true);

  // The rows of dispatch/binary_ops.h; `numbers` says where a number may stand for a tensor.
#define TP_BIND_TENSORS(op, other)                                                                       \
  def_op(m, #op, [](const Tensor& a, const Tensor& b) { return tp::op(a, b); }, other);                  \
  def_method(#op "_", [](Tensor& a, const Tensor& b) -> Tensor { return tp::op##_(a, b); }, other);
#define TP_BIND_NUMBER_OTHER(op, other)                                                                  \
  def_op(m, #op, [](const Tensor& a, const Scalar& b) { return tp::op(a, b); }, other);                  \
  def_method(#op "_", [](Tensor& a, const Scalar& b) -> Tensor { return tp::op##_(a, b); }, other);
#define TP_BIND_NUMBER_INPUT(op, number_other) \
  def_number_input(m, #op, [](const Tensor& a, const Tensor& b) { return tp::op(a, b); }, number_other);
#define TP_BIND_NUMBERS_Any(op) TP_BIND_TENSORS(op, "other"_a) TP_BIND_NUMBER_OTHER(op, "other"_a) \
  TP_BIND_NUMBER_INPUT(op, true)
#define TP_BIND_NUMBERS_Either(op) TP_BIND_TENSORS(op, "other"_a) TP_BIND_NUMBER_OTHER(op, "other"_a) \
  TP_BIND_NUMBER_INPUT(op, false)
#define TP_BIND_NUMBERS_Other(op) TP_BIND_TENSORS(op, "other"_a) TP_BIND_NUMBER_OTHER(op, "other"_a)
#define TP_BIND_NUMBERS_None(op) TP_BIND_TENSORS(op, "other"_a)
#define TP_BIND_NUMBERS_Unary(op) TP_BIND_TENSORS(op, "exponent"_a) TP_BIND_NUMBER_OTHER(op, "exponent"_a) \
  m.def(#op, [](const Scalar& base, const Tensor& e) { return tp::op(base, e); }, "self"_a, "exponent"_a,     \
        release_gil());
#define TP_BIND_BINARY(op, kernel, dtypes, gradient, numbers, ...) TP_BIND_NUMBERS_##numbers(op)
  TP_BINARY_OPS(TP_BIND_BINARY)
#undef TP_BIND_BINARY
#undef TP_BIND_NUMBERS_Any
#undef TP_BIND_NUMBERS_Either
#undef TP_BIND_NUMBERS_Other
#undef TP_BIND_NUMBERS_None
#undef TP_BIND_NUMBERS_Unary
#undef TP_BIND_NUMBER_INPUT
#undef TP_BIND_NUMBER_OTHER
#undef TP_BIND_TENSORS
  for (auto [alias, op] : {std::pair{"multiply", "mul"}, {"greater", "gt"}, {"greater_equal", "ge"}, {"less", "lt"},
                           {"less_equal", "le"}, {"not_equal", "ne"}}) {
    m.attr(alias) = m.attr(op);
    tensor_class().attr(alias) = tensor_class().attr(op);
  }

  // PyTorch tries lerp's number-weight overload first, and a 0-dim weight that needs no gradient
  // is a number to it: lerp(bfloat16, bfloat16, tensor(0.5, dtype=float64)) works.
  auto number_weight = [](const Tensor& w) { return w.dim() == 0 && !w.requires_grad(); };
  def_op(m, "lerp", [=](const Tensor& s, const Tensor& e, const Tensor& w) {
    return number_weight(w) ? lerp(s, e, w.item()) : lerp(s, e, w);
  }, "end"_a, "weight"_a);
  def_op(m, "lerp", [](const Tensor& s, const Tensor& e, const Scalar& w) { return lerp(s, e, w); }, "end"_a, "weight"_a);
  def_method("lerp_", [](Tensor& s, const Tensor& e, const Scalar& w) -> Tensor { return lerp_(s, e, w); }, "end"_a, "weight"_a);
  def_method("lerp_", [=](Tensor& s, const Tensor& e, const Tensor& w) -> Tensor {
    return number_weight(w) ? lerp_(s, e, w.item()) : lerp_(s, e, w);
  }, "end"_a, "weight"_a);
  def_op(m, "addcmul", [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v) { return addcmul(s, a, b, v); },
         "tensor1"_a, "tensor2"_a, nb::kw_only(), "value"_a = 1);
  def_op(m, "addcdiv", [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v) { return addcdiv(s, a, b, v); },
         "tensor1"_a, "tensor2"_a, nb::kw_only(), "value"_a = 1);
  def_method("addcmul_", [](Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v) -> Tensor { return addcmul_(s, a, b, v); },
             "tensor1"_a, "tensor2"_a, nb::kw_only(), "value"_a = 1);
  def_method("addcdiv_", [](Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v) -> Tensor { return addcdiv_(s, a, b, v); },
             "tensor1"_a, "tensor2"_a, nb::kw_only(), "value"_a = 1);
}

// Python's operators. A failed match returns NotImplemented (nb::is_operator), so `t + "a"`
// raises TypeError and `t == None` is False, as in PyTorch.
void init_operators() {
  auto& c = tensor_class();
  // (+f: the lambda as a function pointer, which releasing_gil_if_large takes apart.)
  auto op = [&c](const char* name, auto f) { c.def(name, releasing_gil_if_large(+f), nb::is_operator()); };
#define TP_OPERATOR(dunder, fn)                                                        \
  op(dunder, [](const Tensor& a, const Tensor& b) { return fn(a, b); });              \
  op(dunder, [](const Tensor& a, const Scalar& b) { return fn(a, b); });
#define TP_INPLACE_OPERATOR(dunder, fn)                                                  \
  op(dunder, [](Tensor& a, const Tensor& b) -> Tensor { return fn(a, b); });            \
  op(dunder, [](Tensor& a, const Scalar& b) -> Tensor { return fn(a, b); });
  TP_OPERATOR("__add__", add)
  TP_OPERATOR("__radd__", add)
  TP_INPLACE_OPERATOR("__iadd__", add_)
  TP_OPERATOR("__sub__", sub)
  TP_INPLACE_OPERATOR("__isub__", sub_)
  TP_OPERATOR("__mul__", mul)
  TP_OPERATOR("__rmul__", mul)
  TP_INPLACE_OPERATOR("__imul__", mul_)
  TP_OPERATOR("__truediv__", div)
  TP_INPLACE_OPERATOR("__itruediv__", div_)
  TP_OPERATOR("__floordiv__", floor_divide)
  TP_INPLACE_OPERATOR("__ifloordiv__", floor_divide_)
  TP_OPERATOR("__mod__", remainder)
  TP_INPLACE_OPERATOR("__imod__", remainder_)
  TP_OPERATOR("__pow__", pow)
  TP_INPLACE_OPERATOR("__ipow__", pow_)
  TP_OPERATOR("__and__", bitwise_and)
  TP_OPERATOR("__rand__", bitwise_and)
  TP_INPLACE_OPERATOR("__iand__", bitwise_and_)
  TP_OPERATOR("__or__", bitwise_or)
  TP_OPERATOR("__ror__", bitwise_or)
  TP_INPLACE_OPERATOR("__ior__", bitwise_or_)
  TP_OPERATOR("__xor__", bitwise_xor)
  TP_OPERATOR("__rxor__", bitwise_xor)
  TP_INPLACE_OPERATOR("__ixor__", bitwise_xor_)
  TP_OPERATOR("__eq__", eq)
  TP_OPERATOR("__ne__", ne)
  TP_OPERATOR("__lt__", lt)
  TP_OPERATOR("__le__", le)
  TP_OPERATOR("__gt__", gt)
  TP_OPERATOR("__ge__", ge)
#undef TP_OPERATOR
#undef TP_INPLACE_OPERATOR
  // Reflected forms with a number on the left. `2 / x` is reciprocal(x) * 2, as in PyTorch.
  op("__rsub__", [](const Tensor& a, const Scalar& b) { return rsub(a, b); });
  op("__rtruediv__", [](const Tensor& a, const Scalar& b) { return mul(reciprocal(a), b); });
  op("__rfloordiv__", [](const Tensor& a, const Scalar& b) {
    return floor_divide(scalar_tensor(b, result_type(a, b), a.device()), a);
  });
  op("__rmod__", [](const Tensor& a, const Scalar& b) {
    return remainder(scalar_tensor(b, result_type(a, b), a.device()), a);
  });
  op("__rpow__", [](const Tensor& a, const Scalar& b) { return pow(b, a); });
  op("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  c.def("__neg__", [](const Tensor& a) { return neg(a); }, release_gil());
  c.def("__pos__", [](const Tensor& a) { return a; });
  c.def("__abs__", [](const Tensor& a) { return abs(a); }, release_gil());
  c.def("__invert__", [](const Tensor& a) {
    TP_CHECK_TYPE(!is_floating_point(a.dtype()), "[bitwise_not] ~ (operator.invert) is only implemented on integer "
                  "and Boolean-type tensors");
    return bitwise_not(a);
  });
}

void init_reductions(nb::module_& m) {
  nb::object namedtuple = nb::module_::import_("collections").attr("namedtuple");
  g_return_type_max = namedtuple("max", "values indices");
  g_return_type_min = namedtuple("min", "values indices");

  def_op(m, "sum", [](const Tensor& t, const Dims& dim, bool keepdim, OptionalDType dtype) {
    return sum(t, dim.dims, keepdim, dtype);
  }, "dim"_a.none() = nb::none(), "keepdim"_a = false, nb::kw_only(), "dtype"_a.none() = nb::none());
  def_op(m, "mean", [](const Tensor& t, const Dims& dim, bool keepdim, OptionalDType dtype) {
    return mean(t, dim.dims, keepdim, dtype);
  }, "dim"_a.none() = nb::none(), "keepdim"_a = false, nb::kw_only(), "dtype"_a.none() = nb::none());
  def_op(m, "prod", [](const Tensor& t, std::optional<int64_t> dim, bool keepdim, OptionalDType dtype) {
    return prod(t, dim, keepdim, dtype);
  }, "dim"_a.none() = nb::none(), "keepdim"_a = false, nb::kw_only(), "dtype"_a.none() = nb::none());
  def_op(m, "amax", [](const Tensor& t, const Dims& dim, bool keepdim) { return amax(t, dim.dims, keepdim); },
         "dim"_a.none() = nb::tuple(), "keepdim"_a = false);
  def_op(m, "amin", [](const Tensor& t, const Dims& dim, bool keepdim) { return amin(t, dim.dims, keepdim); },
         "dim"_a.none() = nb::tuple(), "keepdim"_a = false);
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "max" : "min";
    // max(input), max(input, dim, keepdim=False) -> (values, indices), max(input, other).
    auto whole = [is_max](const Tensor& t) { return is_max ? max(t) : min(t); };
    m.def(name, whole, "input"_a, release_gil());
    def_out_form(m, name, whole, "input"_a);
    tensor_class().def(name, [is_max](const Tensor& t) { return is_max ? max(t) : min(t); }, release_gil());
    auto by_dim = [is_max](const Tensor& t, int64_t dim, bool keepdim) {
      return values_indices_of(is_max ? g_return_type_max : g_return_type_min,
                               [&] { return is_max ? max(t, dim, keepdim) : min(t, dim, keepdim); });
    };
    m.def(name, by_dim, "input"_a, "dim"_a, "keepdim"_a = false);
    tensor_class().def(name, by_dim, "dim"_a, "keepdim"_a = false);
    auto elementwise = [is_max](const Tensor& a, const Tensor& b) { return is_max ? maximum(a, b) : minimum(a, b); };
    m.def(name, elementwise, "input"_a, "other"_a, release_gil());
    def_out_form(m, name, elementwise, "input"_a, "other"_a);
    tensor_class().def(name, elementwise, "other"_a, release_gil());
  }
  // sort(input, dim=-1, descending=False, *, stable=False) and the selections built on it, which
  // return (values, indices) namedtuples (built holding the GIL, after the op ran without it).
  g_return_type_sort = namedtuple("sort", "values indices");
  g_return_type_topk = namedtuple("topk", "values indices");
  g_return_type_kthvalue = namedtuple("kthvalue", "values indices");
  auto def_pair = [&m](const char* name, auto f, const auto&... args) {
    m.def(name, f, "input"_a, args...);
    tensor_class().def(name, f, args...);
  };
  def_pair("sort", [](const Tensor& t, int64_t dim, bool descending, bool stable) {
    return values_indices_of(g_return_type_sort, [&] { return tp::sort(t, dim, descending, stable); });
  }, "dim"_a = -1, "descending"_a = false, nb::kw_only(), "stable"_a = false);
  def_pair("topk", [](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
    return values_indices_of(g_return_type_topk, [&] { return tp::topk(t, k, dim, largest, sorted); });
  }, "k"_a, "dim"_a = -1, "largest"_a = true, "sorted"_a = true);
  def_pair("kthvalue", [](const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
    return values_indices_of(g_return_type_kthvalue, [&] { return tp::kthvalue(t, k, dim, keepdim); });
  }, "k"_a, "dim"_a = -1, "keepdim"_a = false);
  def_op(m, "argsort", [](const Tensor& t, int64_t dim, bool descending, bool stable) {
    return argsort(t, dim, descending, stable);
  }, "dim"_a = -1, "descending"_a = false, nb::kw_only(), "stable"_a = false);
  def_op(m, "msort", [](const Tensor& t) { return msort(t); });
  def_op(m, "argmax", [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return argmax(t, dim, keepdim); },
         "dim"_a.none() = nb::none(), "keepdim"_a = false);
  def_op(m, "argmin", [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return argmin(t, dim, keepdim); },
         "dim"_a.none() = nb::none(), "keepdim"_a = false);
  // var/std(input, dim=None, unbiased=None, keepdim=False, *, correction=None).
  for (bool is_var : {true, false}) {
    def_op(m, is_var ? "var" : "std", [is_var](const Tensor& t, const Dims& dim, std::optional<bool> unbiased, bool keepdim,
                                                std::optional<double> correction) {
      TP_CHECK(!(unbiased && correction), "[var] cannot specify both unbiased and correction");
      double c = correction ? *correction : (unbiased.value_or(true) ? 1.0 : 0.0);
      return is_var ? var(t, dim.dims, c, keepdim) : tp::std(t, dim.dims, c, keepdim);
    }, "dim"_a.none() = nb::none(), "unbiased"_a.none() = nb::none(), "keepdim"_a = false, nb::kw_only(), "correction"_a.none() = nb::none());
  }
  def_op(m, "norm", [](const Tensor& t, const std::optional<std::variant<double, std::string>>& p, const Dims& dim,
                       bool keepdim, OptionalDType dtype) {
    double order = 2;  // None and "fro" are the 2-norm of the flattened values
    if (p && std::holds_alternative<double>(*p)) {
      order = std::get<double>(*p);
    } else if (p && std::get<std::string>(*p) == "nuc") {
      // The nuclear norm of a matrix, or of the matrices in a 2-tuple dim.
      return with_op_name("norm", [&] {
        return linalg_matrix_norm(t, "nuc", dim.dims.empty() ? Shape{-2, -1} : dim.dims, keepdim, dtype);
      });
    } else if (p) {
      TP_CHECK(std::get<std::string>(*p) == "fro", "[norm] only p='fro', 'nuc' and numeric p are supported");
    }
    TP_CHECK(!dtype || is_floating_point(t.dtype()), "[norm] linalg.vector_norm: Expected a floating point or complex "
             "tensor as input. Got ", name(t.dtype()));
    Tensor x = dtype ? to(t, *dtype) : t;
    return norm(x, order, dim.dims, keepdim);
  }, "p"_a.none() = "fro", "dim"_a.none() = nb::none(), "keepdim"_a = false, "dtype"_a.none() = nb::none());
  def_op(m, "logsumexp", [](const Tensor& t, const Dims& dim, bool keepdim) { return logsumexp(t, dim.dims, keepdim); },
         "dim"_a, "keepdim"_a = false);
  def_op(m, "all", [](const Tensor& t, const Dims& dim, bool keepdim) { return all(t, dim.dims, keepdim); },
         "dim"_a.none() = nb::none(), "keepdim"_a = false);
  def_op(m, "any", [](const Tensor& t, const Dims& dim, bool keepdim) { return any(t, dim.dims, keepdim); },
         "dim"_a.none() = nb::none(), "keepdim"_a = false);
  def_op(m, "cumsum", [](const Tensor& t, int64_t dim, OptionalDType dtype) { return cumsum(t, dim, dtype); },
         "dim"_a, nb::kw_only(), "dtype"_a.none() = nb::none());
  def_op(m, "cumprod", [](const Tensor& t, int64_t dim, OptionalDType dtype) { return cumprod(t, dim, dtype); },
         "dim"_a, nb::kw_only(), "dtype"_a.none() = nb::none());
  def_op(m, "softmax", [](const Tensor& t, int64_t dim, OptionalDType dtype) { return softmax(t, dim, dtype); },
         "dim"_a, "dtype"_a.none() = nb::none());
  def_op(m, "log_softmax", [](const Tensor& t, int64_t dim, OptionalDType dtype) { return log_softmax(t, dim, dtype); },
         "dim"_a, "dtype"_a.none() = nb::none());
}

void init_linalg(nb::module_& m) {
  def_op(m, "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, "other"_a);
  def_op(m, "mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, "mat2"_a);
  def_op(m, "bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, "mat2"_a);
  def_op(m, "dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, "other"_a);
  def_op(m, "mv", [](const Tensor& a, const Tensor& b) { return mv(a, b); }, "vec"_a);
  def_op(m, "outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, "vec2"_a);
  def_op(m, "addmm", [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
    return addmm(s, a, b, beta, alpha);
  }, "mat1"_a, "mat2"_a, nb::kw_only(), "beta"_a = 1, "alpha"_a = 1);
  def_op(m, "baddbmm", [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
    return baddbmm(s, a, b, beta, alpha);
  }, "batch1"_a, "batch2"_a, nb::kw_only(), "beta"_a = 1, "alpha"_a = 1);
  def_op(m, "addbmm", [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
    return addbmm(s, a, b, beta, alpha);
  }, "batch1"_a, "batch2"_a, nb::kw_only(), "beta"_a = 1, "alpha"_a = 1);
  def_op(m, "addmv", [](const Tensor& s, const Tensor& a, const Tensor& v, const Scalar& beta, const Scalar& alpha) {
    return addmv(s, a, v, beta, alpha);
  }, "mat"_a, "vec"_a, nb::kw_only(), "beta"_a = 1, "alpha"_a = 1);
  def_op(m, "addr", [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
    return addr(s, a, b, beta, alpha);
  }, "vec1"_a, "vec2"_a, nb::kw_only(), "beta"_a = 1, "alpha"_a = 1);
  def_op(m, "vdot", [](const Tensor& a, const Tensor& b) { return vdot(a, b); }, "other"_a);
  def_op(m, "cross", [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim) { return cross(a, b, dim); },
         "other"_a, "dim"_a.none() = nb::none());
  def_op(m, "diagonal", [](const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
    return diagonal(t, offset, dim1, dim2);
  }, "offset"_a = 0, "dim1"_a = 0, "dim2"_a = 1);
  def_op(m, "trace", [](const Tensor& t) { return trace(t); });
  def_op(m, "renorm", [](const Tensor& t, double p, int64_t dim, double maxnorm) { return renorm(t, p, dim, maxnorm); },
         "p"_a, "dim"_a, "maxnorm"_a);
  def_op(m, "dist", [](const Tensor& a, const Tensor& b, double p) { return dist(a, b, p); }, "other"_a, "p"_a = 2);
  // tensorplay/functional.py wraps these with PyTorch's argument forms.
  m.def("_tensordot", &tensordot, "a"_a, "b"_a, "dims_a"_a, "dims_b"_a, release_gil());
  m.def("_einsum", &einsum, "equation"_a, "operands"_a, release_gil());
  m.def("cdist", [](const Tensor& a, const Tensor& b, double p) { return cdist(a, b, p); }, "x1"_a, "x2"_a,
        "p"_a = 2.0, release_gil());
  m.def("pdist", [](const Tensor& x, double p) { return pdist(x, p); }, "input"_a, "p"_a = 2.0, release_gil());
  m.def("cosine_similarity", &cosine_similarity, "x1"_a, "x2"_a, "dim"_a = 1, "eps"_a = 1e-8, release_gil());
  using OT = std::optional<Tensor>;
  for (auto [name, cell] : {std::pair{"rnn_tanh_cell", &rnn_tanh_cell}, std::pair{"rnn_relu_cell", &rnn_relu_cell},
                            std::pair{"gru_cell", &gru_cell}})
    m.def(name, cell, "input"_a, "hx"_a, "w_ih"_a, "w_hh"_a, "b_ih"_a.none() = OT(), "b_hh"_a.none() = OT(),
          release_gil());
  m.def("lstm_cell", [](const Tensor& x, const TensorList& hx, const Tensor& w_ih, const Tensor& w_hh, const OT& b_ih,
                        const OT& b_hh) {
    auto [h, c] = lstm_cell(x, hx, w_ih, w_hh, b_ih, b_hh);
    return std::make_tuple(h, c);
  }, "input"_a, "hx"_a, "w_ih"_a, "w_hh"_a, "b_ih"_a.none() = OT(), "b_hh"_a.none() = OT(), release_gil());
  // nn.LSTM's layer loop (nn/modules/rnn.py).
  m.def("_lstm_layer", [](const Tensor& input_gates, const std::vector<int64_t>& batch_sizes, const Tensor& h0,
                          const Tensor& c0, const Tensor& w_hh, bool reverse) {
    return lstm_layer(input_gates, batch_sizes, h0, c0, w_hh, reverse);
  }, "input_gates"_a, "batch_sizes"_a, "h0"_a, "c0"_a, "w_hh"_a, "reverse"_a, release_gil());

  // tensorplay/special.py gives each function PyTorch's signature, dtypes and derivative.
  m.def("_special_function", &special_function, "function"_a, "input"_a, "n"_a.none() = nb::none(), release_gil());
  // tensorplay/fft.py builds torch.fft on these, PyTorch's private primitives.
  m.def("_fft_c2c", &fft_c2c, "input"_a, "dim"_a, "normalization"_a, "forward"_a, release_gil());
  m.def("_fft_r2c", &fft_r2c, "input"_a, "dim"_a, "normalization"_a, "onesided"_a, release_gil());
  m.def("_fft_c2r", &fft_c2r, "input"_a, "dim"_a, "normalization"_a, "last_dim_size"_a, release_gil());

  // tensorplay/_composites/sparse_coo.py builds sparse COO tensors on these (ops/sparse.cpp).
  m.def("_sparse_coo_tensor", &sparse_coo_tensor, "indices"_a, "values"_a, "size"_a, "is_coalesced"_a, release_gil());
  m.def("_sparse_coo_tensor_unsafe", &sparse_coo_tensor_unsafe, "indices"_a, "values"_a, "size"_a, "is_coalesced"_a,
        release_gil());
  m.def("_sparse_indices", &sparse_indices, "input"_a);
  m.def("_sparse_values", &sparse_values, "input"_a);
  m.def("_sparse_is_coalesced", [](const Tensor& t) { return t.is_sparse() && t.impl()->is_coalesced(); }, "input"_a);
  m.def("_coalesce", &coalesce, "input"_a, release_gil());
  m.def("_to_dense", &to_dense, "input"_a, "dtype"_a.none() = nb::none(), release_gil());

  nb::module_ linalg = m.def_submodule("_linalg", "Linear algebra (see tensorplay.linalg)");
  linalg.def("vector_norm", &linalg_vector_norm, "x"_a, "ord"_a, "dim"_a, "keepdim"_a, "dtype"_a.none(), release_gil());
  linalg.def("matrix_norm", nb::overload_cast<const Tensor&, double, IntArrayRef, bool, OptionalDType>(&linalg_matrix_norm),
             "A"_a, "ord"_a, "dim"_a, "keepdim"_a, "dtype"_a.none(), release_gil());
  linalg.def("matrix_norm",
             nb::overload_cast<const Tensor&, std::string_view, IntArrayRef, bool, OptionalDType>(&linalg_matrix_norm), "A"_a,
             "ord"_a, "dim"_a, "keepdim"_a, "dtype"_a.none(), release_gil());
  linalg.def("vecdot", &linalg_vecdot, "x"_a, "y"_a, nb::kw_only(), "dim"_a = -1, release_gil());
  linalg.def("multi_dot", &linalg_multi_dot, "tensors"_a, release_gil());
  linalg.def("cross", [](const Tensor& a, const Tensor& b, int64_t dim) { return cross(a, b, dim); }, "input"_a,
             "other"_a, nb::kw_only(), "dim"_a = -1, release_gil());
  // tensorplay/_composites/linalg.py gives these PyTorch's forms (named tuples, defaults, aliases).
  linalg.def("lu_factor_ex", &linalg_lu_factor_ex, "A"_a, "pivot"_a, "check_errors"_a, release_gil());
  linalg.def("lu_solve", &linalg_lu_solve, "LU"_a, "pivots"_a, "B"_a, "left"_a, "adjoint"_a, release_gil());
  linalg.def("ldl_factor_ex", &linalg_ldl_factor_ex, "A"_a, "hermitian"_a, "check_errors"_a, release_gil());
  linalg.def("ldl_solve", &linalg_ldl_solve, "LD"_a, "pivots"_a, "B"_a, "hermitian"_a, release_gil());
  linalg.def("solve_ex", [](const Tensor& A, const Tensor& B, bool left, bool check_errors) {
    auto [x, info] = linalg_solve_ex(A, B, left, check_errors);
    return std::make_tuple(x, info);
  }, "A"_a, "B"_a, "left"_a, "check_errors"_a, release_gil());
  linalg.def("cholesky_ex", [](const Tensor& A, bool upper, bool check_errors) {
    auto [factor, info] = linalg_cholesky_ex(A, upper, check_errors);
    return std::make_tuple(factor, info);
  }, "A"_a, "upper"_a, "check_errors"_a, release_gil());
  linalg.def("solve_triangular", &linalg_solve_triangular, "A"_a, "B"_a, "upper"_a, "left"_a, "unitriangular"_a,
             release_gil());
  linalg.def("lu_permutation", &lu_permutation, "pivots"_a, "rows"_a, release_gil());
  linalg.def("geqrf", [](const Tensor& A) {
    auto [a, tau] = geqrf(A);
    return std::make_tuple(a, tau);
  }, "A"_a, release_gil());
  linalg.def("qr", [](const Tensor& A, std::string_view mode) {
    auto [Q, R] = linalg_qr(A, mode);
    return std::make_tuple(Q, R);
  }, "A"_a, "mode"_a, release_gil());
  linalg.def("svd", &linalg_svd, "A"_a, "full_matrices"_a, release_gil());
  linalg.def("svdvals", &linalg_svdvals, "A"_a, release_gil());
  linalg.def("eigh", [](const Tensor& A, bool upper) {
    auto [L, V] = linalg_eigh(A, upper, true);
    return std::make_tuple(L, V);
  }, "A"_a, "upper"_a, release_gil());
  linalg.def("eigvalsh", [](const Tensor& A, bool upper) { return linalg_eigh(A, upper, false).first; }, "A"_a,
             "upper"_a, release_gil());
  linalg.def("eig", [](const Tensor& A) {
    auto [L, V] = linalg_eig(A, true);
    return std::make_tuple(L, V);
  }, "A"_a, release_gil());
  linalg.def("eigvals", [](const Tensor& A) { return linalg_eig(A, false).first; }, "A"_a, release_gil());
}

void init_shape(nb::module_& m) {
  auto& c = tensor_class();
  c.def("view", [](const Tensor& t, nb::args shape) -> Tensor {
    if (shape.size() == 1 && nb::isinstance<DTypeObject>(shape[0])) return view_dtype(t, nb::cast<ScalarType>(shape[0]));
    return view(t, sizes_arg(shape, "view"));
  });
  c.def("view_as", [](const Tensor& t, const Tensor& other) { return view(t, other.sizes()); }, "other"_a);
  c.def("reshape", [](const Tensor& t, nb::args shape) { return reshape(t, sizes_arg(shape, "reshape")); });
  m.def("reshape", [](const Tensor& t, const Shape& shape) { return reshape(t, shape); }, "input"_a, "shape"_a);
  c.def("reshape_as", [](const Tensor& t, const Tensor& other) { return reshape(t, other.sizes()); }, "other"_a);
  c.def("permute", [](const Tensor& t, nb::args dims) { return permute(t, sizes_arg(dims, "permute")); });
  m.def("permute", [](const Tensor& t, const Shape& dims) { return permute(t, dims); }, "input"_a, "dims"_a);
  for (const char* name : {"transpose", "swapaxes", "swapdims"})
    def_op(m, name, [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, "dim0"_a, "dim1"_a);
  def_op(m, "t", [](const Tensor& x) { return tp::t(x); });
  def_op(m, "movedim", [](const Tensor& t, int64_t s, int64_t d) { return movedim(t, s, d); }, "source"_a, "destination"_a);
  def_op(m, "movedim", [](const Tensor& t, const Shape& s, const Shape& d) { return movedim(t, s, d); }, "source"_a,
         "destination"_a);
  c.def("expand", [](const Tensor& t, nb::args sizes) { return expand(t, sizes_arg(sizes, "expand")); });
  c.def("expand_as", [](const Tensor& t, const Tensor& other) { return expand(t, other.sizes()); }, "other"_a);
  def_op(m, "broadcast_to", [](const Tensor& t, const Shape& size) { return broadcast_to(t, size); }, "size"_a);
  m.def("broadcast_tensors", [](nb::args tensors) {
    TensorList list;
    for (nb::handle h : tensors) list.push_back(nb::cast<Tensor>(h));
    return broadcast_tensors(list);
  });
  m.def("broadcast_shapes", [](nb::args shapes) {
    Shape out;
    for (nb::handle h : shapes) out = broadcast_shapes("broadcast_shapes", out, PyLong_Check(h.ptr()) ? Shape{nb::cast<int64_t>(h)} : nb::cast<Shape>(h));
    return nb::tuple(nb::cast(out));
  });
  def_op(m, "squeeze", [](const Tensor& t, const Dims& dim) { return dim.given ? squeeze(t, dim.dims) : squeeze(t); },
         "dim"_a.none() = nb::none());
  def_op(m, "unsqueeze", [](const Tensor& t, int64_t dim) { return unsqueeze(t, dim); }, "dim"_a);
  // Complex tensors (Tensor.real, .imag and .conj() are written in Python, over these).
  m.def("view_as_real", [](const Tensor& t) { return view_as_real(t); }, "input"_a, release_gil());
  m.def("view_as_complex", [](const Tensor& t) { return view_as_complex(t); }, "input"_a, release_gil());
  m.def("real", [](const Tensor& t) { return real(t); }, "input"_a, release_gil());
  m.def("imag", [](const Tensor& t) { return imag(t); }, "input"_a, release_gil());
  m.def("_conj", [](const Tensor& t) { return conj(t); }, "input"_a, release_gil());
  def_op(m, "angle", [](const Tensor& t) { return angle(t); });
  auto complex_fn = [](const Tensor& re, const Tensor& im) { return complex(re, im); };
  m.def("complex", complex_fn, "real"_a, "imag"_a, release_gil());
  def_out_form(m, "complex", complex_fn, "real"_a, "imag"_a);
  auto polar_fn = [](const Tensor& abs, const Tensor& angle) { return polar(abs, angle); };
  m.def("polar", polar_fn, "abs"_a, "angle"_a, release_gil());
  def_out_form(m, "polar", polar_fn, "abs"_a, "angle"_a);
  def_op(m, "flatten", [](const Tensor& t, int64_t s, int64_t e) { return flatten(t, s, e); }, "start_dim"_a = 0, "end_dim"_a = -1);
  def_op(m, "unflatten", [](const Tensor& t, int64_t dim, const Shape& sizes) { return unflatten(t, dim, sizes); }, "dim"_a, "sizes"_a);
  def_op(m, "narrow", [](const Tensor& t, int64_t dim, int64_t start, int64_t length) { return narrow(t, dim, start, length); },
         "dim"_a, "start"_a, "length"_a);
  def_op(m, "select", [](const Tensor& t, int64_t dim, int64_t index) { return select(t, dim, index); }, "dim"_a, "index"_a);
  def_op(m, "split", [](const Tensor& t, const std::variant<int64_t, Shape>& split, int64_t dim) {
    if (std::holds_alternative<int64_t>(split)) return as_tuple(tp::split(t, std::get<int64_t>(split), dim));
    return as_tuple(split_with_sizes(t, std::get<Shape>(split), dim));
  }, "split_size_or_sections"_a, "dim"_a = 0);
  def_op(m, "chunk", [](const Tensor& t, int64_t chunks, int64_t dim) { return as_tuple(chunk(t, chunks, dim)); },
         "chunks"_a, "dim"_a = 0);
  def_op(m, "unbind", [](const Tensor& t, int64_t dim) { return as_tuple(unbind(t, dim)); }, "dim"_a = 0);
  c.def("repeat", [](const Tensor& t, nb::args sizes) { return repeat(t, sizes_arg(sizes, "repeat")); });
  c.def("flip", [](const Tensor& t, nb::args dims) { return flip(t, sizes_arg(dims, "flip")); });
  m.def("flip", [](const Tensor& t, const Shape& dims) { return flip(t, dims); }, "input"_a, "dims"_a);
  def_op(m, "as_strided", [](const Tensor& t, const Shape& size, const Shape& stride, std::optional<int64_t> offset) {
    return as_strided(t, size, stride, offset);
  }, "size"_a, "stride"_a, "storage_offset"_a.none() = nb::none());
  auto cat_fn = [](const TensorList& tensors, int64_t dim) { return cat(tensors, dim); };
  for (const char* name : {"cat", "concat", "concatenate"}) {
    m.def(name, cat_fn, "tensors"_a, "dim"_a = 0, release_gil());
    def_out_form(m, name, cat_fn, "tensors"_a, "dim"_a = 0);
  }
  auto stack_fn = [](const TensorList& tensors, int64_t dim) { return stack(tensors, dim); };
  m.def("stack", stack_fn, "tensors"_a, "dim"_a = 0, release_gil());
  def_out_form(m, "stack", stack_fn, "tensors"_a, "dim"_a = 0);
}

void init_index_ops(nb::module_& m) {
  def_op(m, "index_select", [](const Tensor& t, int64_t dim, const Tensor& index) { return index_select(t, dim, index); },
         "dim"_a, "index"_a);
  def_op(m, "gather", [](const Tensor& t, int64_t dim, const Tensor& index) { return gather(t, dim, index); }, "dim"_a, "index"_a);
  def_op(m, "scatter", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) { return scatter(t, dim, index, src); },
         "dim"_a, "index"_a, "src"_a);
  def_op(m, "scatter", [](const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value) { return scatter(t, dim, index, value); },
         "dim"_a, "index"_a, "value"_a);
  def_op(m, "scatter_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
    return scatter_add(t, dim, index, src);
  }, "dim"_a, "index"_a, "src"_a);
  def_method("scatter_", [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) -> Tensor {
    return scatter_(t, dim, index, src);
  }, "dim"_a, "index"_a, "src"_a);
  def_method("scatter_", [](Tensor& t, int64_t dim, const Tensor& index, const Scalar& value) -> Tensor {
    return scatter_(t, dim, index, value);
  }, "dim"_a, "index"_a, "value"_a);
  def_method("scatter_add_", [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) -> Tensor {
    return scatter_add_(t, dim, index, src);
  }, "dim"_a, "index"_a, "src"_a);
  def_op(m, "masked_fill", [](const Tensor& t, const Tensor& mask, const Scalar& v) { return masked_fill(t, mask, v); }, "mask"_a, "value"_a);
  def_op(m, "masked_fill", [](const Tensor& t, const Tensor& mask, const Tensor& v) { return masked_fill(t, mask, v); }, "mask"_a, "value"_a);
  def_method("masked_fill_", [](Tensor& t, const Tensor& mask, const Scalar& v) -> Tensor { return masked_fill_(t, mask, v); }, "mask"_a, "value"_a);
  def_method("masked_fill_", [](Tensor& t, const Tensor& mask, const Tensor& v) -> Tensor { return masked_fill_(t, mask, v); }, "mask"_a, "value"_a);
  auto def_where = [&m](auto f) {
    m.def("where", f, "condition"_a, "input"_a, "other"_a, release_gil());
    def_out_form(m, "where", f, "condition"_a, "input"_a, "other"_a);
  };
  def_where([](const Tensor& c, const Tensor& a, const Tensor& b) { return where(c, a, b); });
  def_where([](const Tensor& c, const Tensor& a, const Scalar& b) { return where(c, a, b); });
  def_where([](const Tensor& c, const Scalar& a, const Tensor& b) { return where(c, a, b); });
  def_where([](const Tensor& c, const Scalar& a, const Scalar& b) { return where(c, a, b); });
  m.def("where", [](const Tensor& c) { return nonzero_tuple(c); }, "condition"_a);
  tensor_class().def("where", [](const Tensor& self, const Tensor& c, const Tensor& b) { return where(c, self, b); }, "condition"_a, "other"_a);
  tensor_class().def("where", [](const Tensor& self, const Tensor& c, const Scalar& b) { return where(c, self, b); }, "condition"_a, "other"_a);
  auto nonzero_fn = [](const Tensor& t, bool as_tuple) -> nb::object {
    return as_tuple ? nonzero_tuple(t) : wrap(nonzero(t));
  };
  m.def("nonzero", nonzero_fn, "input"_a, nb::kw_only(), "as_tuple"_a = false);
  def_out_form(m, "nonzero", [](const Tensor& t) { return nonzero(t); }, "input"_a);
  tensor_class().def("nonzero", nonzero_fn, nb::kw_only(), "as_tuple"_a = false);
}

}  // namespace

void init_ops(nb::module_& m) {
  // The same out= writing for the ops written in Python (tensorplay/_composites/_forms.py).
  m.def("_write_out", [](const std::string& op, const Tensor& out, const Tensor& result) {
    return write_out(op.c_str(), out, result);
  }, "op"_a, "out"_a, "result"_a);
  m.def("can_cast", [](ScalarType from, ScalarType to) { return can_cast(from, to); }, "from_"_a, "to"_a);
  init_elementwise(m);
  init_operators();
  init_reductions(m);
  init_linalg(m);
  init_shape(m);
  init_index_ops(m);
}

}  // namespace tp::python

// operator<< prints a tensor as Python's repr does. The expected strings are PyTorch 2.13's
// repr of the same tensor, with "torch." spelt "tensorplay." as tensorplay's Python prints dtypes.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "tensorplay/tensorplay.h"

namespace tp {
namespace {

// A 1-D tensor holding values, as torch.tensor(values, dtype=dtype).
Tensor values(std::vector<double> v, ScalarType dtype = ScalarType::Float32) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return to(t, dtype);
}

std::string printed(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// Sets print options for one test and puts the defaults back after it.
struct PrintOptionsGuard {
  explicit PrintOptionsGuard(const PrintOptions& options) { set_printoptions(options); }
  ~PrintOptionsGuard() { set_printoptions(PrintOptions{}); }
};

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  const char* python;  // the PyTorch expression printed
  std::function<Tensor()> make;
  const char* expected;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> table = {
      // float notation: integer-valued, fixed, scientific (small, large, wide range)
      {"tensor([1., 2.])", [] { return values({1, 2}); }, "tensor([1., 2.])"},
      {"tensor([1.5, 2.25, -3.125])", [] { return values({1.5, 2.25, -3.125}); },
       "tensor([ 1.5000,  2.2500, -3.1250])"},
      {"tensor([1e-5, 1.0])", [] { return values({1e-5, 1.0}); }, "tensor([1.0000e-05, 1.0000e+00])"},
      {"tensor([1e9, 1.0])", [] { return values({1e9, 1.0}); }, "tensor([1.0000e+09, 1.0000e+00])"},
      {"tensor([0.001, 10.0])", [] { return values({0.001, 10.0}); }, "tensor([1.0000e-03, 1.0000e+01])"},
      {"tensor([123456.0, 1.0])", [] { return values({123456.0, 1.0}); }, "tensor([1.2346e+05, 1.0000e+00])"},
      {"tensor([-0.0, 1.0])", [] { return values({-0.0, 1.0}); }, "tensor([-0., 1.])"},
      {"tensor([nan, inf, -inf, 1.5])", [] { return values({kNan, kInf, -kInf, 1.5}); },
       "tensor([   nan,    inf,   -inf, 1.5000])"},
      {"tensor([1.0, inf])", [] { return values({1.0, kInf}); }, "tensor([1., inf])"},
      {"tensor([0.0, 0.0])", [] { return values({0, 0}); }, "tensor([0., 0.])"},
      // integers and bools, and which dtypes are said
      {"tensor([1, -20, 300])", [] { return values({1, -20, 300}, ScalarType::Int64); }, "tensor([  1, -20, 300])"},
      {"tensor([1, 2], dtype=int32)", [] { return values({1, 2}, ScalarType::Int32); },
       "tensor([1, 2], dtype=tensorplay.int32)"},
      {"tensor([1, 2], dtype=uint8)", [] { return values({1, 2}, ScalarType::UInt8); },
       "tensor([1, 2], dtype=tensorplay.uint8)"},
      {"tensor([True, False])", [] { return values({1, 0}, ScalarType::Bool); }, "tensor([ True, False])"},
      {"tensor([1.5, 2.0], dtype=bfloat16)", [] { return values({1.5, 2}, ScalarType::BFloat16); },
       "tensor([1.5000, 2.0000], dtype=tensorplay.bfloat16)"},
      {"tensor([1.5, 2.0], dtype=float16)", [] { return values({1.5, 2}, ScalarType::Float16); },
       "tensor([1.5000, 2.0000], dtype=tensorplay.float16)"},
      {"tensor([1.5, 2.0], dtype=float64)", [] { return values({1.5, 2}, ScalarType::Float64); },
       "tensor([1.5000, 2.0000], dtype=tensorplay.float64)"},
      {"tensor([1+2j, -3.5-1j])", [] { return complex(values({1, -3.5}), values({2, -1})); },
       "tensor([ 1.0000+2.j, -3.5000-1.j])"},
      // autograd suffixes
      {"tensor([1., 2.], requires_grad=True)", [] { return values({1, 2}).set_requires_grad(true); },
       "tensor([1., 2.], requires_grad=True)"},
      {"tensor([1., 2.], requires_grad=True) * 2", [] { return values({1, 2}).set_requires_grad(true) * 2; },
       "tensor([2., 4.], grad_fn=<MulBackward0>)"},
      {"tensor([1., 2.], requires_grad=True) + 1", [] { return values({1, 2}).set_requires_grad(true) + 1; },
       "tensor([2., 3.], grad_fn=<AddBackward0>)"},
      {"tensor([1., 2.], requires_grad=True).sum()", [] { return sum(values({1, 2}).set_requires_grad(true)); },
       "tensor(3., grad_fn=<SumBackward0>)"},
      // 0-d
      {"tensor(3.5)", [] { return scalar_tensor(3.5); }, "tensor(3.5000)"},
      {"tensor(7)", [] { return scalar_tensor(7); }, "tensor(7)"},
      {"tensor(True)", [] { return scalar_tensor(true); }, "tensor(True)"},
      {"tensor(1e-7)", [] { return scalar_tensor(1e-7); }, "tensor(1.0000e-07)"},
      // empty: only the default dtype goes unsaid, and the size unless 1-D
      {"tensor([])", [] { return empty({0}); }, "tensor([])"},
      {"zeros(0, 3)", [] { return zeros({0, 3}); }, "tensor([], size=(0, 3))"},
      {"tensor([], dtype=int64)", [] { return empty({0}, ScalarType::Int64); }, "tensor([], dtype=tensorplay.int64)"},
      {"zeros(2, 0, dtype=int32)", [] { return zeros({2, 0}, ScalarType::Int32); },
       "tensor([], size=(2, 0), dtype=tensorplay.int32)"},
      {"empty(2, 3, device='meta')", [] { return empty({2, 3}, {}, Device(DeviceType::Meta)); },
       "tensor(..., device='meta', size=(2, 3))"},
      {"empty(2, 3, device='meta', dtype=int64)",
       [] { return empty({2, 3}, ScalarType::Int64, Device(DeviceType::Meta)); },
       "tensor(..., device='meta', size=(2, 3), dtype=tensorplay.int64)"},
      // summarised (more than 1000 elements), with the formatter fitted to the values shown
      {"arange(2000.)", [] { return arange(0, 2000, 1, ScalarType::Float32); },
       "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])"},
      {"arange(1001)", [] { return arange(0, 1001); }, "tensor([   0,    1,    2,  ...,  998,  999, 1000])"},
      {"arange(3000.).reshape(100, 30)", [] { return arange(0, 3000, 1, ScalarType::Float32).reshape({100, 30}); },
       "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 2.7000e+01, 2.8000e+01,\n"
       "         2.9000e+01],\n"
       "        [3.0000e+01, 3.1000e+01, 3.2000e+01,  ..., 5.7000e+01, 5.8000e+01,\n"
       "         5.9000e+01],\n"
       "        [6.0000e+01, 6.1000e+01, 6.2000e+01,  ..., 8.7000e+01, 8.8000e+01,\n"
       "         8.9000e+01],\n"
       "        ...,\n"
       "        [2.9100e+03, 2.9110e+03, 2.9120e+03,  ..., 2.9370e+03, 2.9380e+03,\n"
       "         2.9390e+03],\n"
       "        [2.9400e+03, 2.9410e+03, 2.9420e+03,  ..., 2.9670e+03, 2.9680e+03,\n"
       "         2.9690e+03],\n"
       "        [2.9700e+03, 2.9710e+03, 2.9720e+03,  ..., 2.9970e+03, 2.9980e+03,\n"
       "         2.9990e+03]])"},
      // line wrapping at 80 columns, blank lines between the blocks of a 3-D tensor
      {"arange(40.).reshape(2, 20)", [] { return arange(0, 40, 1, ScalarType::Float32).reshape({2, 20}); },
       "tensor([[ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
       "         14., 15., 16., 17., 18., 19.],\n"
       "        [20., 21., 22., 23., 24., 25., 26., 27., 28., 29., 30., 31., 32., 33.,\n"
       "         34., 35., 36., 37., 38., 39.]])"},
      {"arange(30.) / 7", [] { return arange(0, 30, 1, ScalarType::Float32) / 7; },
       "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
       "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
       "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
       "        3.8571, 4.0000, 4.1429])"},
      {"arange(24).reshape(2, 3, 4)", [] { return arange(0, 24).reshape({2, 3, 4}); },
       "tensor([[[ 0,  1,  2,  3],\n"
       "         [ 4,  5,  6,  7],\n"
       "         [ 8,  9, 10, 11]],\n"
       "\n"
       "        [[12, 13, 14, 15],\n"
       "         [16, 17, 18, 19],\n"
       "         [20, 21, 22, 23]]])"},
      // a suffix that would pass column 80 goes on a line of its own
      {"ones(2, 8, dtype=float64, requires_grad=True)",
       [] { return ones({2, 8}, ScalarType::Float64).set_requires_grad(true); },
       "tensor([[1., 1., 1., 1., 1., 1., 1., 1.],\n"
       "        [1., 1., 1., 1., 1., 1., 1., 1.]], dtype=tensorplay.float64,\n"
       "       requires_grad=True)"},
  };
  return table;
}

TEST(Printing, MatchesPyTorchsRepr) {
  for (const Case& c : cases()) EXPECT_EQ(printed(c.make()), c.expected) << c.python;
}

TEST(Printing, ToStringIsWhatOperatorPrints) {
  Tensor t = values({1.5, 2});
  EXPECT_EQ(to_string(t), printed(t));
}

TEST(Printing, SciModeCanBeForcedEitherWay) {
  {
    PrintOptionsGuard guard({.sci_mode = false});
    EXPECT_EQ(printed(values({1e-5, 1.0})), "tensor([0.0000, 1.0000])");
  }
  PrintOptionsGuard guard({.sci_mode = true});
  EXPECT_EQ(printed(values({1.5, 2.0})), "tensor([1.5000e+00, 2.0000e+00])");
}

TEST(Printing, FollowsPrecisionLinewidthThresholdAndEdgeitems) {
  {
    PrintOptionsGuard guard({.precision = 2});
    EXPECT_EQ(printed(values({1.23456, 2.0})), "tensor([1.23, 2.00])");
  }
  {
    PrintOptionsGuard guard({.linewidth = 30});
    EXPECT_EQ(printed(arange(0, 10, 1, ScalarType::Float32)),
              "tensor([0., 1., 2., 3., 4.,\n        5., 6., 7., 8., 9.])");
  }
  {
    PrintOptionsGuard guard({.threshold = 5, .edgeitems = 1});
    EXPECT_EQ(printed(arange(0, 10, 1, ScalarType::Float32)), "tensor([0.,  ..., 9.])");
    EXPECT_EQ(printed(arange(0, 12, 1, ScalarType::Float32).reshape({3, 4})),
              "tensor([[ 0.,  ...,  3.],\n        ...,\n        [ 8.,  ..., 11.]])");
  }
  PrintOptionsGuard guard({.threshold = 5, .edgeitems = 0});
  EXPECT_EQ(printed(arange(0, 24, 1, ScalarType::Float32).reshape({4, 6})), "tensor([...], size=(4, 6))");
}

TEST(Printing, UndefinedTensorIsAnError) { EXPECT_THROW(printed(Tensor()), Error); }

}  // namespace
}  // namespace tp

// The C++ operators: values and dtypes as PyTorch gives them (expected values are torch 2.13's),
// gradients through them, and in-place forms writing through the shared handle.

#include <gtest/gtest.h>

#include "tensorplay/tensorplay.h"

namespace tp {
namespace {

Tensor values(std::vector<double> v, ScalarType dtype = ScalarType::Float32) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return to(t, dtype);
}

std::vector<double> as_doubles(const Tensor& t) {
  Tensor d = contiguous(to(t.detach(), ScalarType::Float64));
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

void expect_tensor(const Tensor& t, ScalarType dtype, const std::vector<double>& expected) {
  EXPECT_EQ(name(t.dtype()), name(dtype));
  std::vector<double> got = as_doubles(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << "element " << i;
}

constexpr auto F32 = ScalarType::Float32;
constexpr auto I64 = ScalarType::Int64;
constexpr auto I32 = ScalarType::Int32;
constexpr auto Bool = ScalarType::Bool;

TEST(Operators, ArithmeticOnTensorsAndNumbers) {
  Tensor a = values({1, 2, 3}), b = values({4, 5, 6});
  expect_tensor(a + b, F32, {5, 7, 9});
  expect_tensor(a - b, F32, {-3, -3, -3});
  expect_tensor(a * b, F32, {4, 10, 18});
  expect_tensor(a / b, F32, {0.25, 0.4, 0.5});
  expect_tensor(a + 1, F32, {2, 3, 4});
  expect_tensor(a - 1, F32, {0, 1, 2});
  expect_tensor(a * 2, F32, {2, 4, 6});
  expect_tensor(a / 2, F32, {0.5, 1, 1.5});
  expect_tensor(1 + a, F32, {2, 3, 4});
  expect_tensor(2.0 - a, F32, {1, 0, -1});
  expect_tensor(3 * a, F32, {3, 6, 9});
  expect_tensor(6 / a, F32, {6, 3, 2});
  expect_tensor(-a, F32, {-1, -2, -3});
}

TEST(Operators, RemainderTakesTheDivisorsSign) {
  Tensor a = values({-3, -1, 4, 7}, I64);
  expect_tensor(a % 3, I64, {0, 2, 1, 1});
  expect_tensor(a % -3, I64, {0, -1, -2, -2});
  expect_tensor(a % values({2, 2, -3, 5}, I64), I64, {1, 1, -2, 2});
  expect_tensor(10 % values({3, -4, 7}, I64), I64, {1, -2, 3});
  expect_tensor(values({-3.5, 5.5}) % 2, F32, {0.5, 1.5});
  expect_tensor(7.5 % values({2, -2}, I64), F32, {1.5, -0.5});
}

TEST(Operators, NumbersPromoteAsInPyTorch) {
  Tensor i = values({1, 2, 3}, I64);
  expect_tensor(i + 2.5, F32, {3.5, 4.5, 5.5});
  expect_tensor(2.5 - i, F32, {1.5, 0.5, -0.5});
  expect_tensor(i * 2, I64, {2, 4, 6});
  expect_tensor(i / 2, F32, {0.5, 1, 1.5});  // true division
  expect_tensor(2 / i, F32, {2, 1, 2.0 / 3});
  expect_tensor(values({1, 2}, I32) + values({1, 2}, I64), I64, {2, 4});
  expect_tensor(values({1, 2}, I32) * 3, I32, {3, 6});  // a number does not widen an int tensor
  expect_tensor(values({1.5, 2}, ScalarType::Float16) + 1.5, ScalarType::Float16, {3, 3.5});
  expect_tensor(values({1, 2}, I64) + values({0.5, 0.5}, ScalarType::Float64), ScalarType::Float64, {1.5, 2.5});
  expect_tensor(values({1, 0}, Bool) + 1, I64, {2, 1});
}

TEST(Operators, ComparisonsGiveBoolTensors) {
  Tensor a = values({1, 2, 3}), b = values({3, 2, 1});
  expect_tensor(a == b, Bool, {0, 1, 0});
  expect_tensor(a != b, Bool, {1, 0, 1});
  expect_tensor(a < b, Bool, {1, 0, 0});
  expect_tensor(a <= b, Bool, {1, 1, 0});
  expect_tensor(a > b, Bool, {0, 0, 1});
  expect_tensor(a >= b, Bool, {0, 1, 1});
  expect_tensor(a == 2, Bool, {0, 1, 0});
  expect_tensor(a != 2, Bool, {1, 0, 1});
  expect_tensor(a < 2, Bool, {1, 0, 0});
  expect_tensor(a <= 2, Bool, {1, 1, 0});
  expect_tensor(a > 2, Bool, {0, 0, 1});
  expect_tensor(a >= 2.5, Bool, {0, 0, 1});
  // A number on the left compares the same way round: 2 < a is a > 2.
  expect_tensor(2 == a, Bool, {0, 1, 0});
  expect_tensor(2 != a, Bool, {1, 0, 1});
  expect_tensor(2 < a, Bool, {0, 0, 1});
  expect_tensor(2 <= a, Bool, {0, 1, 1});
  expect_tensor(2 > a, Bool, {1, 0, 0});
  expect_tensor(2 >= a, Bool, {1, 1, 0});
  expect_tensor(values({1, 2}, I64) < values({1.5, 1.5}), Bool, {1, 0});
}

TEST(Operators, BitwiseOnIntegersAndBools) {
  Tensor a = values({12, 10, -1}, I64), b = values({10, 6, 5}, I64);
  expect_tensor(a & b, I64, {8, 2, 5});
  expect_tensor(a | b, I64, {14, 14, -1});
  expect_tensor(a ^ b, I64, {6, 12, -6});
  expect_tensor(a & 6, I64, {4, 2, 6});
  expect_tensor(6 | a, I64, {14, 14, -1});
  expect_tensor(3 ^ a, I64, {15, 9, -4});
  expect_tensor(~a, I64, {-13, -11, 0});
  Tensor p = values({1, 1, 0, 0}, Bool), q = values({1, 0, 1, 0}, Bool);
  expect_tensor(p & q, Bool, {1, 0, 0, 0});
  expect_tensor(p | q, Bool, {1, 1, 1, 0});
  expect_tensor(p ^ q, Bool, {0, 1, 1, 0});
  expect_tensor(~p, Bool, {0, 0, 1, 1});  // logical not, not two's complement
  expect_tensor(p & true, Bool, {1, 1, 0, 0});
}

TEST(Operators, BitwiseRefusesFloats) {
  Tensor f = values({1.5});
  try {
    (void)~f;
    FAIL() << "~ on a float tensor did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Type);
    EXPECT_STREQ(e.what(), "[bitwise_not] ~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  }
  EXPECT_THROW((void)(f & f), Error);
  EXPECT_THROW((void)(f | 1), Error);
}

TEST(Operators, GradientsFlowThroughThem) {
  Tensor x = values({1, 2, 4}).set_requires_grad(true);
  // d/dx of x*x + 3x - x/2 + (2 - x) + 8/x + (-x) is 2x + 3 - 1/2 - 1 - 8/x^2 - 1.
  Tensor y = x * x + 3 * x - x / 2 + (2 - x) + 8 / x + (-x);
  sum(y).backward();
  expect_tensor(x.grad(), F32, {-5.5, 2.5, 8});
}

TEST(Operators, GradientsFlowThroughCompoundAssignment) {
  Tensor x = values({1, 2}).set_requires_grad(true);
  Tensor y = x * 1;
  y += x;
  y *= x;  // y = 2x * x
  y -= 1;
  y /= 2;  // x^2 - 1/2
  sum(y).backward();
  expect_tensor(x.grad(), F32, {2, 4});
}

TEST(Operators, CompoundAssignmentWritesTheSharedStorage) {
  Tensor a = values({1, 2, 3});
  Tensor alias = a;  // another handle on the same tensor
  uint32_t version = a.version();
  Tensor& result = (a += values({10, 10, 10}));
  EXPECT_EQ(&result, &a);
  EXPECT_TRUE(alias.is_same(a));
  expect_tensor(alias, F32, {11, 12, 13});
  EXPECT_GT(a.version(), version);
  a -= 1;
  a *= 2;
  a /= 4;
  expect_tensor(alias, F32, {5, 5.5, 6});

  Tensor i = values({7, 12, 5}, I64);
  i %= 4;
  expect_tensor(i, I64, {3, 0, 1});
  i |= 8;
  expect_tensor(i, I64, {11, 8, 9});
  i &= 9;
  expect_tensor(i, I64, {9, 8, 9});
  i ^= 1;
  expect_tensor(i, I64, {8, 9, 8});
}

TEST(Operators, CompoundAssignmentOnAViewWritesItsBase) {
  Tensor m = zeros({2, 3});
  Tensor row = select(m, 0, 1);
  row += 5;
  expect_tensor(m, F32, {0, 0, 0, 5, 5, 5});
  // On a temporary view, as LibTorch writes it.
  select(m, 1, 0) *= 3;
  m.index({0}) -= 1;
  expect_tensor(m, F32, {-1, -1, -1, 15, 5, 5});
}

TEST(Operators, InPlaceKeepsTheTensorsDtype) {
  Tensor i = values({1, 2}, I64);
  EXPECT_THROW(i += 1.5, Error);  // float result cannot be written into an int tensor
  EXPECT_THROW(i /= 2, Error);
  Tensor f = values({1, 2});
  f += values({1, 1}, I64);
  expect_tensor(f, F32, {2, 3});
}

TEST(Operators, BroadcastLikePyTorch) {
  Tensor col = values({1, 2}).reshape({2, 1}), row = values({10, 20, 30});
  Tensor s = col + row;
  EXPECT_EQ(Shape(s.sizes().begin(), s.sizes().end()), (Shape{2, 3}));
  expect_tensor(s, F32, {11, 21, 31, 12, 22, 32});
  EXPECT_THROW(values({1, 2}) + values({1, 2, 3}), Error);
}

}  // namespace
}  // namespace tp

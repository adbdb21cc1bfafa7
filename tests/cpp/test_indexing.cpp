// Tensor::index and index_put_ as LibTorch writes them. Each expectation is what the Python index
// in its comment gives in torch 2.13 (x = torch.arange(24).reshape(2, 3, 4)).

#include <gtest/gtest.h>

#include "tensorplay/tensorplay.h"

namespace tp {
namespace {

using namespace tp::indexing;

Tensor values(std::vector<double> v, ScalarType dtype = ScalarType::Int64) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return to(t, dtype);
}

Shape shape(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

std::vector<double> as_doubles(const Tensor& t) {
  Tensor d = contiguous(to(t.detach(), ScalarType::Float64));
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

Tensor x24() { return arange(0, 24).reshape({2, 3, 4}); }

std::vector<double> range(double start, double stop, double step = 1) {
  std::vector<double> out;
  for (double v = start; v < stop; v += step) out.push_back(v);
  return out;
}

struct Case {
  const char* python;
  std::vector<TensorIndex> index;
  Shape shape;
  std::vector<double> values;
};

TEST(Indexing, MatchesPythonIndexing) {
  const std::vector<Case> cases = {
      {"x[:, 0]", {Slice(), 0}, {2, 4}, {0, 1, 2, 3, 12, 13, 14, 15}},
      {"x[..., 1::2]", {"...", Slice(1, None, 2)}, {2, 3, 2}, range(1, 24, 2)},
      {"x[-1, ::2, ...]", {-1, Slice(None, None, 2), Ellipsis}, {2, 4}, {12, 13, 14, 15, 20, 21, 22, 23}},
      {"x[None, 0]", {None, 0}, {1, 3, 4}, range(0, 12)},
      {"x[..., None]", {Ellipsis, None}, {2, 3, 4, 1}, range(0, 24)},
      {"x[0, 1, 2]", {0, 1, 2}, {}, {6}},
      {"x[-1:]", {Slice(-1)}, {1, 3, 4}, range(12, 24)},
      {"x[0, :-1]", {0, Slice(None, -1)}, {2, 4}, range(0, 8)},
      {"x[0, 1:100]", {0, Slice(1, 100)}, {2, 4}, range(4, 12)},
      {"x[True]", {true}, {1, 2, 3, 4}, range(0, 24)},
      {"x[False]", {false}, {0, 2, 3, 4}, {}},
      {"x[torch.tensor(1)]", {scalar_tensor(1)}, {3, 4}, range(12, 24)},
      {"x[torch.tensor([True, False])]", {values({1, 0}, ScalarType::Bool)}, {1, 3, 4}, range(0, 12)},
      {"x[:, :, torch.tensor([True, False, True, False])]",
       {Slice(), Slice(), values({1, 0, 1, 0}, ScalarType::Bool)},
       {2, 3, 2},
       range(0, 24, 2)},
      {"x[1, 2-D mask]",
       {1, values({1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}, ScalarType::Bool).reshape({3, 4})},
       {3},
       {12, 19, 21}},
      {"x[:, torch.tensor([2, 0])]",
       {Slice(), values({2, 0})},
       {2, 2, 4},
       {8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15}},
      {"x[torch.tensor([0, 1]), :, torch.tensor([1, 2])]",
       {values({0, 1}), Slice(), values({1, 2})},
       {2, 3},
       {1, 5, 9, 14, 18, 22}},
      {"x[torch.tensor([[0], [1]]), torch.tensor([0, 2])]",
       {values({0, 1}).reshape({2, 1}), values({0, 2})},
       {2, 2, 4},
       {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}},
  };
  Tensor x = x24();
  for (const Case& c : cases) {
    Tensor r = x.index(c.index);
    EXPECT_EQ(shape(r), c.shape) << c.python;
    EXPECT_EQ(as_doubles(r), c.values) << c.python;
  }
}

TEST(Indexing, BoolMaskOfTheWholeTensor) {
  Tensor x = x24();
  Tensor r = x.index({x > 10});  // x[x > 10]
  EXPECT_EQ(shape(r), (Shape{13}));
  EXPECT_EQ(as_doubles(r), range(11, 24));
  EXPECT_EQ(shape(x.index({values({1, 0, 1})})), (Shape{3, 3, 4}));  // x[torch.tensor([1, 0, 1])]
}

TEST(Indexing, BasicIndicesGiveViews) {
  Tensor x = x24();
  Tensor v = x.index({Slice(), 0, Slice(1, None, 2)});
  EXPECT_EQ(v.impl()->storage(), x.impl()->storage());
  Tensor s = x.index({scalar_tensor(1)});  // a 0-dim integer tensor selects, as an int does
  EXPECT_EQ(s.impl()->storage(), x.impl()->storage());
  Tensor copied = x.index({values({1})});  // an integer tensor gathers into a new tensor
  EXPECT_NE(copied.impl()->storage(), x.impl()->storage());
}

// The error kind and message of running f, which must throw.
template <class F>
std::pair<ErrorKind, std::string> error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "no error";
  return {ErrorKind::Runtime, ""};
}

TEST(Indexing, BadIndicesRaiseAsPythonDoes) {
  Tensor x = x24();
  using Expected = std::pair<ErrorKind, std::string>;
  EXPECT_EQ(error_of([&] { x.index({2}); }),
            Expected(ErrorKind::Index, "index 2 is out of bounds for dimension 0 with size 2"));
  EXPECT_EQ(error_of([&] { x.index({0, -4}); }),
            Expected(ErrorKind::Index, "index -4 is out of bounds for dimension 1 with size 3"));
  EXPECT_EQ(error_of([&] { x.index({Slice(), Slice(), 4}); }),
            Expected(ErrorKind::Index, "index 4 is out of bounds for dimension 2 with size 4"));
  EXPECT_EQ(error_of([&] { x.index({0, 0, 0, 0}); }),
            Expected(ErrorKind::Index, "too many indices for tensor of dimension 3"));
  EXPECT_EQ(error_of([&] { x.index({"...", 0, "..."}); }),
            Expected(ErrorKind::Index, "an index can only have a single ellipsis ('...')"));
  EXPECT_EQ(error_of([&] { x.index({Slice(None, None, -1)}); }),
            Expected(ErrorKind::Value, "step must be greater than zero"));
  EXPECT_EQ(error_of([&] { x.index({Slice(), values({1, 0}, ScalarType::Bool)}).numel(); }).first, ErrorKind::Index);
  EXPECT_EQ(error_of([&] { x.index({values({5})}); }).first, ErrorKind::Index);
  EXPECT_EQ(error_of([&] { x.index({values({-3})}); }).first, ErrorKind::Index);
  EXPECT_EQ(error_of([&] { TensorIndex("::"); }).first, ErrorKind::Value);
  EXPECT_EQ(error_of([&] { x.index_put_({3}, 0); }).first, ErrorKind::Index);
}

TEST(Indexing, IndexPutWritesInPlace) {
  Tensor x = x24();
  Tensor alias = x;
  const Tensor& r = x.index_put_({Slice(), 0}, 0);  // x[:, 0] = 0
  EXPECT_TRUE(r.is_same(x));
  EXPECT_EQ(as_doubles(alias.index({Slice(), 0})), std::vector<double>(8, 0));
  EXPECT_EQ(as_doubles(alias.index({0, 1})), (std::vector<double>{4, 5, 6, 7}));

  Tensor z = arange(0, 6).reshape({2, 3});
  z.index_put_({0}, 2.7);  // z[0] = 2.7 on an int tensor truncates, as a cast
  EXPECT_EQ(as_doubles(z), (std::vector<double>{2, 2, 2, 3, 4, 5}));
}

TEST(Indexing, IndexPutTakesTensorsAndBroadcasts) {
  Tensor z = arange(0, 6, 1, ScalarType::Float32).reshape({2, 3});
  z.index_put_({"...", 1}, values({10, 20}, ScalarType::Float32));  // z[..., 1] = tensor([10., 20.])
  EXPECT_EQ(as_doubles(z), (std::vector<double>{0, 10, 2, 3, 20, 5}));

  z = zeros({2, 3});
  z.index_put_({0}, ones({1, 3}));  // leading size-1 dims of the value are dropped
  EXPECT_EQ(as_doubles(z), (std::vector<double>{1, 1, 1, 0, 0, 0}));

  z = zeros({2, 3});
  z.index_put_({values({0, 1}), values({2, 0})}, values({5, 6}, ScalarType::Float32));
  EXPECT_EQ(as_doubles(z), (std::vector<double>{0, 0, 5, 6, 0, 0}));

  z = arange(0, 6, 1, ScalarType::Float32).reshape({2, 3});
  z.index_put_({Slice(), values({0, 2})}, values({7, 8, 9, 10}, ScalarType::Float32).reshape({2, 2}));
  EXPECT_EQ(as_doubles(z), (std::vector<double>{7, 1, 8, 9, 4, 10}));
}

TEST(Indexing, IndexPutThroughAMask) {
  Tensor z = arange(0, 6, 1, ScalarType::Float32).reshape({2, 3});
  z.index_put_({z > 2}, -1);  // z[z > 2] = -1
  EXPECT_EQ(as_doubles(z), (std::vector<double>{0, 1, 2, -1, -1, -1}));
  z = arange(0, 6, 1, ScalarType::Float32).reshape({2, 3});
  z.index_put_({z > 2}, scalar_tensor(-1));  // a one-value int64 tensor converts to z's dtype
  EXPECT_EQ(as_doubles(z), (std::vector<double>{0, 1, 2, -1, -1, -1}));
  EXPECT_EQ(z.dtype(), ScalarType::Float32);
}

TEST(Indexing, GradientsFlowThroughIndexAndIndexPut) {
  Tensor x = arange(0, 6, 1, ScalarType::Float32).reshape({2, 3}).set_requires_grad(true);
  sum(x.index({Slice(), 0}) * 2 + x.index({values({1, 1}), 2})).backward();
  EXPECT_EQ(as_doubles(x.grad()), (std::vector<double>{2, 0, 0, 2, 0, 2}));

  Tensor w = ones({3}).set_requires_grad(true);
  Tensor y = w * 3;
  y.index_put_({1}, 0);  // the overwritten element takes no gradient
  sum(y).backward();
  EXPECT_EQ(as_doubles(w.grad()), (std::vector<double>{3, 0, 3}));
}

}  // namespace
}  // namespace tp

// Sparse COO tensors from C++: building one, its parts, the product with a dense matrix and its
// gradients, and the refusal of an op without a sparse path before it reads anything.

#include <gtest/gtest.h>

#include "tensorplay/tensorplay.h"

namespace tp {
namespace {

std::vector<double> as_doubles(const Tensor& t) {
  Tensor d = contiguous(to(t.detach(), ScalarType::Float64));
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

// [[0, 0, 3], [4, 0, 5]], with (0, 2) stored twice (1 + 2) and out of order.
Tensor example(const Tensor& values = tensor({1.0, 4.0, 2.0, 5.0}, ScalarType::Float64)) {
  Tensor indices = stack({tensor({0, 1, 0, 1}, ScalarType::Int64), tensor({2, 0, 2, 2}, ScalarType::Int64)});
  return sparse_coo_tensor(indices, values, {2, 3});
}

TEST(Sparse, PartsAndDenseForm) {
  Tensor s = example();
  EXPECT_TRUE(s.is_sparse());
  EXPECT_EQ(s.layout(), Layout::SparseCoo);
  EXPECT_EQ(sparse_indices(s).size(1), 4);
  EXPECT_EQ(as_doubles(to_dense(s)), (std::vector<double>{0, 0, 3, 4, 0, 5}));
  Tensor c = coalesce(s);
  EXPECT_TRUE(c.impl()->is_coalesced());
  EXPECT_EQ(as_doubles(sparse_indices(c)), (std::vector<double>{0, 1, 1, 2, 0, 2}));
  EXPECT_EQ(as_doubles(sparse_values(c)), (std::vector<double>{3, 4, 5}));
}

TEST(Sparse, ProductAndGradients) {
  Tensor values = tensor({1.0, 4.0, 2.0, 5.0}, ScalarType::Float64);
  values.set_requires_grad(true);
  Tensor b = reshape(arange(0, 6, 1, ScalarType::Float64), {3, 2});
  b.set_requires_grad(true);
  Tensor out = mm(example(values), b);
  EXPECT_EQ(as_doubles(out), as_doubles(mm(to_dense(example()), b)));
  sum(out).backward();
  // d(sum(A @ B))/dB[k, :] is the sum of column k of A; an entry at (i, k) gets the sum of B's row k.
  EXPECT_EQ(as_doubles(b.grad()), (std::vector<double>{4, 4, 0, 0, 8, 8}));
  EXPECT_EQ(as_doubles(values.grad()), (std::vector<double>{9, 1, 9, 9}));
}

TEST(Sparse, OpsWithoutASparsePathRefuseBeforeReading) {
  Tensor s = example();
  try {
    exp(s);
    FAIL() << "exp of a sparse tensor returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
  }
  EXPECT_THROW(s.view({6}), Error);
  EXPECT_THROW(s.data_ptr(), Error);
  EXPECT_THROW(sparse_coo_tensor(tensor({3}, ScalarType::Int64).reshape({1, 1}), tensor({1.0}), {3}), Error);
}

}  // namespace
}  // namespace tp

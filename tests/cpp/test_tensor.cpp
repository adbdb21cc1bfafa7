// Views and strides, the allocator's reuse, and a few ops through the C++ API.

#include <gtest/gtest.h>

#include "tensorplay/core/allocator.h"
#include "tensorplay/ops/ops.h"

namespace tp {
namespace {

TEST(Views, ShareStorageAndVersion) {
  Tensor x = arange(0, 12).reshape(IntArrayRef{3, 4});
  Tensor v = transpose(x, 0, 1);
  EXPECT_EQ(v.impl()->storage(), x.impl()->storage());
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(v.stride(0), 1);
  EXPECT_EQ(v.stride(1), 4);
  uint32_t before = x.version();
  Tensor row = select(x, 0, 1);
  fill_(row, 7);
  EXPECT_EQ(x.version(), before + 1);
  EXPECT_EQ(x.data_ptr<int64_t>()[4], 7);
  EXPECT_EQ(x.data_ptr<int64_t>()[3], 3);
}

TEST(Views, ViewNeedsCompatibleStrides) {
  Tensor x = zeros({2, 3});
  EXPECT_THROW(view(transpose(x, 0, 1), IntArrayRef{6}), Error);
  EXPECT_EQ(reshape(transpose(x, 0, 1), IntArrayRef{6}).numel(), 6);
}

TEST(MemoryFormats, ChannelsLastKeepsValuesAndLaysOutChannelsInnermost) {
  Tensor x = arange(0, 24, 1, ScalarType::Float32).reshape(IntArrayRef{1, 2, 3, 4});
  Tensor cl = contiguous(x, MemoryFormat::ChannelsLast);
  EXPECT_EQ(Shape(cl.strides().begin(), cl.strides().end()), (Shape{24, 1, 8, 2}));
  EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_FALSE(cl.is_contiguous());
  EXPECT_TRUE(all(eq(cl, x)).item<bool>());
  EXPECT_TRUE(contiguous(cl, MemoryFormat::ChannelsLast).is_same(cl));
  EXPECT_THROW(contiguous(zeros({2, 3}), MemoryFormat::ChannelsLast), Error);
}

TEST(MemoryFormats, ResizeGrowsTheStorageAndKeepsItsValues) {
  Tensor x = arange(0, 6, 1, ScalarType::Float32);
  resize_(x, {3, 4});
  EXPECT_EQ(x.numel(), 12);
  EXPECT_EQ(x.data_ptr<float>()[5], 5.0f);
  resize_(x, {2});
  EXPECT_EQ(x.data_ptr<float>()[1], 1.0f);
}

TEST(Allocator, ReusesFreedBlocks) {
  void* first = nullptr;
  {
    Tensor big = empty({1 << 20});
    first = big.data_ptr();
  }
  AllocatorStats before = cpu_allocator_stats();
  Tensor again = empty({1 << 20});
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_EQ(cpu_allocator_stats().cache_hits, before.cache_hits + 1);
}

TEST(Ops, MatmulAgainstLoop) {
  Tensor a = arange(0, 6, 1, ScalarType::Float32).reshape(IntArrayRef{2, 3});
  Tensor b = arange(0, 12, 1, ScalarType::Float32).reshape(IntArrayRef{3, 4});
  Tensor c = matmul(a, b);
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      float expected = 0;
      for (int k = 0; k < 3; ++k) expected += pa[i * 3 + k] * pb[k * 4 + j];
      EXPECT_FLOAT_EQ(c.data_ptr<float>()[i * 4 + j], expected);
    }
}

TEST(Ops, ErrorsNameTheOp) {
  try {
    mm(zeros({2, 3}), zeros({4, 5}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[mm] shapes [2, 3] and [4, 5] cannot be multiplied");
  }
}

}  // namespace
}  // namespace tp

namespace tp {

TEST(Factory, TensorFromValuesTakesPythonsDtypes) {
  Tensor f = tensor({1.5, -2.0});
  EXPECT_EQ(f.dtype(), ScalarType::Float32);  // the default dtype, as torch.tensor([1.5, -2.0])
  EXPECT_EQ(f.numel(), 2);
  EXPECT_FLOAT_EQ(f.data_ptr<float>()[1], -2.0f);
  Tensor i = tensor({3, 1, 2});
  EXPECT_EQ(i.dtype(), ScalarType::Int64);
  EXPECT_EQ(i.data_ptr<int64_t>()[2], 2);
  EXPECT_EQ(tensor({true, false}).dtype(), ScalarType::Bool);
  Tensor exact = tensor({int64_t{1} << 62}, ScalarType::Int64);  // integers are not rounded through doubles
  EXPECT_EQ(exact.data_ptr<int64_t>()[0], int64_t{1} << 62);
  EXPECT_EQ(tensor({1, 2}, ScalarType::Float64).dtype(), ScalarType::Float64);
  Tensor empty_list = tensor(std::span<const Scalar>());
  EXPECT_EQ(empty_list.dtype(), ScalarType::Float32);
  EXPECT_EQ(empty_list.numel(), 0);
}

}  // namespace tp

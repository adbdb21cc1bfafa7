// Autocast through the C++ API: tp::AutocastGuard, the policy table, the weight cache, traces
// and the grad scaler's fused ops. Python's tests cover the same rules in depth; these show
// that C++ callers get the same behaviour without Python.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "tensorplay/amp/autocast.h"
#include "tensorplay/amp/cast_cache.h"
#include "tensorplay/amp/grad_scaler.h"
#include "tensorplay/ops/ops.h"

namespace tp {
namespace {

constexpr auto kF32 = ScalarType::Float32;
constexpr auto kBF16 = ScalarType::BFloat16;
constexpr auto kF16 = ScalarType::Float16;

Tensor weight(IntArrayRef shape) {
  Tensor w = randn(shape);
  w.set_requires_grad(true);
  return w;
}

TEST(AutocastGuard, CastsByPolicyAndRestores) {
  Tensor x = randn({4, 3}), w = weight({5, 3});
  {
    AutocastGuard guard(DeviceType::CPU);
    EXPECT_TRUE(amp::is_enabled(DeviceType::CPU));
    Tensor h = linear(x, w);
    EXPECT_EQ(h.dtype(), kBF16);                          // lower precision
    EXPECT_EQ(softmax(h, 1).dtype(), kBF16);              // input dtype
    EXPECT_EQ(mse_loss(h, zeros_like(h)).dtype(), kF32);  // float32
    EXPECT_EQ(cat({h, randn({4, 5})}).dtype(), kF32);     // promote
    EXPECT_EQ(linear(x.to(ScalarType::Float64), w.detach().to(ScalarType::Float64)).dtype(), ScalarType::Float64);
  }
  EXPECT_FALSE(amp::is_enabled(DeviceType::CPU));
  EXPECT_EQ(linear(x, w).dtype(), kF32);
}

TEST(AutocastGuard, NestsWithDtypesAndDisabledRegions) {
  Tensor x = randn({2, 3}), w = weight({4, 3});
  AutocastGuard outer(DeviceType::CPU, kF16);
  EXPECT_EQ(linear(x, w).dtype(), kF16);
  {
    AutocastGuard off(DeviceType::CPU, std::nullopt, /*enabled=*/false);
    EXPECT_EQ(linear(x, w).dtype(), kF32);
    {
      AutocastGuard inner(DeviceType::CPU, kBF16);
      EXPECT_EQ(linear(x, w).dtype(), kBF16);
    }
    EXPECT_EQ(amp::get_dtype(DeviceType::CPU), kF16);
  }
  EXPECT_EQ(linear(x, w).dtype(), kF16);
}

TEST(AutocastGuard, RestoresWhenAnOpThrows) {
  try {
    AutocastGuard guard(DeviceType::CPU);
    mm(randn({2, 3}), randn({4, 5}));
    FAIL() << "mm of mismatched shapes must throw";
  } catch (const Error&) {
  }
  EXPECT_FALSE(amp::is_enabled(DeviceType::CPU));
}

TEST(AutocastGuard, GradientsReachFloat32Weights) {
  Tensor x = randn({4, 3}), w = weight({2, 3});
  Tensor loss;
  {
    AutocastGuard guard(DeviceType::CPU);
    loss = mse_loss(linear(x, w), zeros({4, 2}));
  }
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kF32);
}

TEST(AutocastGuard, StateIsPerThread) {
  AutocastGuard guard(DeviceType::CPU);
  bool seen_enabled = true;
  std::thread([&] { seen_enabled = amp::is_enabled(DeviceType::CPU); }).join();
  EXPECT_FALSE(seen_enabled);
}

TEST(CastCache, CachesWeightsUntilTheOutermostRegionExits) {
  Tensor x = randn({2, 3}), w = weight({4, 3});
  amp::Trace trace;
  {
    amp::TraceGuard tracing(&trace);
    AutocastGuard outer(DeviceType::CPU);
    {
      AutocastGuard inner(DeviceType::CPU);
      linear(x, w);
    }
    linear(x, w);
    EXPECT_EQ(amp::cache_size(), 1u);
  }
  EXPECT_EQ(amp::cache_size(), 0u);
  ASSERT_EQ(trace.entries.size(), 2u);
  EXPECT_EQ(trace.entries[0].cache_hits, 0);
  EXPECT_EQ(trace.entries[1].cache_hits, 1);
  EXPECT_EQ(trace.entries[1].compute, kBF16);
}

TEST(PolicyTable, NamesRoundTripAndOverridesAreScoped) {
  for (int i = 0; i < amp::kNumOps; ++i) {
    auto op = static_cast<amp::Op>(i);
    EXPECT_EQ(amp::parse_op(amp::name(op), "test"), op);
  }
  EXPECT_EQ(amp::policy(amp::Op::linear, DeviceType::CPU), amp::Policy::LowerPrecision);
  EXPECT_EQ(amp::policy(amp::Op::binary_cross_entropy, DeviceType::CUDA), amp::Policy::Banned);
  EXPECT_THROW(amp::parse_op("no_such_op", "test"), Error);
  {
    amp::PolicyOverride o(DeviceType::CPU, {{amp::Op::softmax, amp::Policy::Float32}});
    AutocastGuard guard(DeviceType::CPU);
    EXPECT_EQ(softmax(randn({2, 2}).to(kBF16), 1).dtype(), kF32);
  }
  EXPECT_EQ(amp::policy(amp::Op::softmax, DeviceType::CPU), amp::Policy::InputDtype);
}

TEST(GradScalerOps, UnscaleFindsInfAndUpdateBacksOff) {
  Tensor g1 = full({1000}, 4.0), g2 = full({3}, 2.0, ScalarType::BFloat16);
  Tensor found_inf = zeros({1}), inv_scale = full({1}, 0.5);
  amp_foreach_non_finite_check_and_unscale_({g1, g2}, found_inf, inv_scale);
  EXPECT_EQ(found_inf.item<float>(), 0.0f);
  EXPECT_EQ(g1.data_ptr<float>()[999], 2.0f);
  EXPECT_EQ(static_cast<float>(g2.data_ptr<BFloat16>()[0]), 1.0f);

  g1.data_ptr<float>()[500] = std::numeric_limits<float>::quiet_NaN();
  amp_foreach_non_finite_check_and_unscale_({g1}, found_inf, inv_scale);
  EXPECT_EQ(found_inf.item<float>(), 1.0f);

  Tensor scale = full({1}, 1024.0), tracker = zeros({1}, ScalarType::Int32);
  amp_update_scale_(scale, tracker, found_inf, 2.0, 0.5, 2);
  EXPECT_EQ(scale.item<float>(), 512.0f);
  Tensor clean = zeros({1});
  amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2);
  EXPECT_EQ(scale.item<float>(), 512.0f);
  EXPECT_EQ(tracker.item<int32_t>(), 1);
  amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2);
  EXPECT_EQ(scale.item<float>(), 1024.0f);
  EXPECT_EQ(tracker.item<int32_t>(), 0);
}

}  // namespace
}  // namespace tp

// Random fills from the counter-based generator: element i draws from counter (offset + i / k),
// so the result does not depend on the number of threads.

#include <cmath>
#include <numbers>

#include "tensorplay/core/generator.h"
#include "tensorplay/cpu/backend.h"
#include "tensorplay/cpu/convert.h"
#include "tensorplay/cpu/loop.h"

namespace tp::cpu {

namespace {

// Calls fill(i, words) for each element, where words are the four Philox words of its counter
// and `per_counter` elements share one counter.
template <class Fill>
void for_each_draw(const Tensor& out, int64_t per_counter, Generator& gen, const Fill& fill) {
  const int64_t n = out.numel();
  const uint64_t seed = gen.initial_seed();
  const uint64_t offset = gen.reserve((n + per_counter - 1) / per_counter);
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    std::array<uint32_t, 4> words{};
    for (int64_t i = b; i < e; ++i) {
      if (i == b || i % per_counter == 0) words = philox(seed, offset + i / per_counter);
      fill(i, words);
    }
  });
}

}  // namespace

void CpuBackend::uniform(const Tensor& out, double low, double high, Generator& gen) {
  visit_dtype<DTypes::Floating>("uniform_", out.dtype(), [&](auto t) {
    using T = decltype(t);
    T* data = static_cast<T*>(out.data_ptr());
    const double range = high - low;
    if constexpr (std::is_same_v<T, double>) {
      for_each_draw(out, 2, gen, [&](int64_t i, const auto& w) {
        data[i] = low + range * uniform_double(w[(i % 2) * 2], w[(i % 2) * 2 + 1]);
      });
    } else {
      // As many random bits as the dtype has mantissa digits, so a 16-bit float never rounds up to 1.
      constexpr int digits = std::is_same_v<T, float> ? 24 : std::is_same_v<T, Half> ? 11 : 8;
      for_each_draw(out, 4, gen, [&](int64_t i, const auto& w) {
        const float u = static_cast<float>(w[i % 4] >> (32 - digits)) * (1.0f / (1 << digits));
        data[i] = convert<T>(static_cast<float>(low + range * u));
      });
    }
  });
}

void CpuBackend::normal(const Tensor& out, double mean, double std, Generator& gen) {
  visit_dtype<DTypes::Floating>("normal_", out.dtype(), [&](auto t) {
    using T = decltype(t);
    T* data = static_cast<T*>(out.data_ptr());
    // Box-Muller: one counter gives two uniforms and so two normals.
    for_each_draw(out, 2, gen, [&](int64_t i, const auto& w) {
      const double u1 = 1.0 - uniform_double(w[0], w[1]);  // in (0, 1]
      const double u2 = uniform_double(w[2], w[3]);
      const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * std::numbers::pi * u2;
      const double z = i % 2 ? r * std::sin(theta) : r * std::cos(theta);
      data[i] = convert<T>(mean + std * z);
    });
  });
}

void CpuBackend::random_int(const Tensor& out, int64_t low, int64_t high, Generator& gen) {
  visit_dtype("randint", out.dtype(), [&](auto t) {
    using T = decltype(t);
    T* data = static_cast<T*>(out.data_ptr());
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
    for_each_draw(out, 2, gen, [&](int64_t i, const auto& w) {
      const uint64_t bits = static_cast<uint64_t>(w[(i % 2) * 2]) << 32 | w[(i % 2) * 2 + 1];
      data[i] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range));
    });
  });
}

}  // namespace tp::cpu

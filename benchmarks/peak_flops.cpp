// One core's measured peak for GEMM-like work: float32 FMAs and bfloat16 dot products (vdpbf16ps)
// issued back to back with no memory traffic, in GFLOP/s. The figure that benchmarks/machine.py
// divides by: a computed peak needs the clock, and a core that boosts runs above its nominal one.
//
//   peak_flops            prints {"float32": GFLOP/s, "bfloat16": GFLOP/s or null}
//
// Each loop keeps 12 independent accumulators, more than an FMA's latency times its pipes on
// the cores we know, so the pipes never wait; the best of several timed runs is reported.

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

constexpr int kAccumulators = 12;
constexpr long kIterations = 20'000'000;

// The best of five timed runs of loop, in seconds.
double best_seconds(void (*loop)()) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    auto t0 = std::chrono::steady_clock::now();
    loop();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// 8 lanes x 2 flops per FMA (AVX2, on every x86 core that has FMA).
__attribute__((target("avx2,fma"))) void float32_avx2_loop() {
  __m256 acc[kAccumulators];
  for (auto& a : acc) a = _mm256_set1_ps(0.f);
  const __m256 x = _mm256_set1_ps(1e-7f), y = _mm256_set1_ps(0.999f);
  for (long i = 0; i < kIterations; ++i)
#pragma GCC unroll 16  // the accumulators stay in registers
    for (auto& a : acc) a = _mm256_fmadd_ps(x, y, a);
  float sink[8];
  for (auto& a : acc) _mm256_storeu_ps(sink, a);
  asm volatile("" : : "r"(sink) : "memory");
}

// 16 lanes: twice the AVX2 figure on cores with two 512-bit FMA pipes, the same on Zen 4.
__attribute__((target("avx512f"))) void float32_avx512_loop() {
  __m512 acc[kAccumulators];
  for (auto& a : acc) a = _mm512_set1_ps(0.f);
  const __m512 x = _mm512_set1_ps(1e-7f), y = _mm512_set1_ps(0.999f);
  for (long i = 0; i < kIterations; ++i)
#pragma GCC unroll 16  // the accumulators stay in registers
    for (auto& a : acc) a = _mm512_fmadd_ps(x, y, a);
  float sink[16];
  for (auto& a : acc) _mm512_storeu_ps(sink, a);
  asm volatile("" : : "r"(sink) : "memory");
}

// One vdpbf16ps on 512 bits: 16 float32 lanes, each adding two bfloat16 products (4 flops).
__attribute__((target("avx512f,avx512bf16"))) void bfloat16_avx512_loop() {
  __m512 acc[kAccumulators];
  for (auto& a : acc) a = _mm512_set1_ps(0.f);
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3380), y = (__m512bh)_mm512_set1_epi16(0x3F7F);
  for (long i = 0; i < kIterations; ++i)
#pragma GCC unroll 16  // the accumulators stay in registers
    for (auto& a : acc) a = _mm512_dpbf16_ps(a, x, y);
  float sink[16];
  for (auto& a : acc) _mm512_storeu_ps(sink, a);
  asm volatile("" : : "r"(sink) : "memory");
}

// GFLOP/s of a loop of kIterations x kAccumulators instructions of flops each.
double gflops(void (*loop)(), int flops) {
  return double(flops) * kAccumulators * kIterations / best_seconds(loop) / 1e9;
}

}  // namespace

int main() {
  __builtin_cpu_init();
  double f32 = 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f32 = gflops(float32_avx2_loop, 2 * 8);
  if (__builtin_cpu_supports("avx512f")) f32 = std::max(f32, gflops(float32_avx512_loop, 2 * 16));
  if (__builtin_cpu_supports("avx512bf16"))
    std::printf("{\"float32\": %.1f, \"bfloat16\": %.1f}\n", f32, gflops(bfloat16_avx512_loop, 4 * 16));
  else
    std::printf("{\"float32\": %.1f, \"bfloat16\": null}\n", f32);
}

// One core's measured peak for GEMM-like work: float32 FMAs and bfloat16 dot products (vdpbf16ps,
// and AMX's tile products where the CPU has them) issued back to back with no memory traffic, in
// GFLOP/s. The figure that benchmarks/machine.py divides by: a computed peak needs the clock, and a
// core that boosts runs above its nominal one.
//
//   peak_flops            prints {"float32": GFLOP/s, "bfloat16": GFLOP/s or null}
//
// Each loop keeps 12 independent accumulators, more than an FMA's latency times its pipes on
// the cores we know, so the pipes never wait; the AMX loop keeps four tiles accumulating. The best
// of several timed runs is reported.

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

// AMX: tdpbf16ps multiplies a 16x32 bfloat16 tile by a 32x16 one into a 16x16 float32 tile,
// 16 x 16 x 32 multiply-adds. Four accumulating tiles (0-3) from two tiles of each operand (4-7).
constexpr long kTileIterations = 2'000'000;
constexpr int kTileProducts = 4;

struct TileConfig {  // the 64-byte operand of ldtilecfg, palette 1
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

// Linux gives a process AMX's tile registers only once it asks (arch_prctl ARCH_REQ_XCOMP_PERM for
// XFEATURE_XTILEDATA); without that, the first tile instruction kills it.
bool amx_usable() {
  constexpr int kRequestPermission = 0x1023, kTileData = 18;
  return __builtin_cpu_supports("amx-bf16") && syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
}

__attribute__((target("amx-tile,amx-bf16"))) void bfloat16_amx_loop() {
  alignas(64) TileConfig config;
  for (int t = 0; t < 8; ++t) config.bytes_per_row[t] = 64, config.rows[t] = 16;
  _tile_loadconfig(&config);
  alignas(64) uint16_t operand[16 * 32];
  for (auto& v : operand) v = 0x3380;  // small enough that the sums stay finite
  alignas(64) float sink[16 * 16];
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long i = 0; i < kTileIterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, sink, 64);
  _tile_stored(1, sink, 64);
  _tile_stored(2, sink, 64);
  _tile_stored(3, sink, 64);
  _tile_release();
  asm volatile("" : : "r"(sink) : "memory");
}

// GFLOP/s of a loop of `instructions` instructions of flops each.
double gflops(void (*loop)(), double flops, double instructions = double(kAccumulators) * kIterations) {
  return flops * instructions / best_seconds(loop) / 1e9;
}

}  // namespace

int main() {
  __builtin_cpu_init();
  double f32 = 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f32 = gflops(float32_avx2_loop, 2 * 8);
  if (__builtin_cpu_supports("avx512f")) f32 = std::max(f32, gflops(float32_avx512_loop, 2 * 16));
  double bf16 = 0;
  if (__builtin_cpu_supports("avx512bf16")) bf16 = gflops(bfloat16_avx512_loop, 4 * 16);
  if (amx_usable())
    bf16 = std::max(bf16, gflops(bfloat16_amx_loop, 2 * 16 * 16 * 32, double(kTileProducts) * kTileIterations));
  if (bf16 > 0)
    std::printf("{\"float32\": %.1f, \"bfloat16\": %.1f}\n", f32, bf16);
  else
    std::printf("{\"float32\": %.1f, \"bfloat16\": null}\n", f32);
}
